//! Plain data of the runtime API: process ids, messages, exit reasons, error kinds.
//!
//! Everything here is `Send + Sync` data with no behaviour beyond printing and mapping to
//! bt values, so the interpreter can turn each into the exception kind or value of the spec.

use std::fmt;
use std::sync::Arc;

use crate::value::{Sym, Value};

/// A process id. Prints as `<node.number.0>`, or `<node.number.1>` for a runtime service
/// process (services are numbered by a counter of their own). Ordered by
/// node, then number, then service flag (the term order of pids).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Pid {
    /// Node connection index (0 = this node).
    pub node: u32,
    /// Process number from the per-runtime counter (the main program is 1).
    pub number: u64,
    /// True for the runtime's own service processes.
    pub service: bool,
}

impl Pid {
    /// Parses the printed form `<0.7.0>` (or `0.7.0`): node, number and service flag (0 or
    /// 1); None for anything else.
    pub fn parse(s: &str) -> Option<Pid> {
        let s = s.trim();
        let s = s.strip_prefix('<').unwrap_or(s);
        let s = s.strip_suffix('>').unwrap_or(s);
        let mut it = s.split('.');
        let node = it.next()?.parse().ok()?;
        let number = it.next()?.parse().ok()?;
        let service = match it.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        it.next().is_none().then_some(Pid {
            node,
            number,
            service,
        })
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<{}.{}.{}>",
            self.node,
            self.number,
            u8::from(self.service)
        )
    }
}

/// What a process is sent: a user message (a selector and its arguments — what a bt send
/// carries to an actor) or a [`Request`] on the runtime's control path.
///
/// A request is tagged with a reserved selector ([`Sym::reserved`], which no interned name
/// can equal) and its payload laid out in `args`; [`Message::request`] builds one from the
/// typed [`Request`] and [`Message::as_request`] reads it back, so behaviours match on the
/// enum, never on a selector, and a user message stays 32 bytes (one inline in every idle
/// mailbox).
#[derive(Clone, Debug)]
pub struct Message {
    /// The user selector, or a reserved tag for a control request.
    pub selector: Sym,
    pub args: Vec<Value>,
}

const TAG_INITIALIZE: Sym = Sym::reserved(1);
const TAG_JOB: Sym = Sym::reserved(2);
const TAG_SUP_INIT: Sym = Sym::reserved(3);
const TAG_SUP_PING: Sym = Sym::reserved(4);
const TAG_SUP_TERMINATE: Sym = Sym::reserved(5);
const TAG_SUP_TERMINATE_PID: Sym = Sym::reserved(6);
const TAG_SUP_START_CHILD: Sym = Sym::reserved(7);
const TAG_SUP_RETRY: Sym = Sym::reserved(8);

impl Message {
    pub fn new(selector: Sym, args: Vec<Value>) -> Message {
        Message { selector, args }
    }
    /// A message named by a string (convenient in tests).
    pub fn named(selector: &str, args: Vec<Value>) -> Message {
        Message::new(Sym::new(selector), args)
    }
    /// `Message::request(Request::Job, Vec::new())` without the general encoder (a script
    /// call from an embedding host makes one per call).
    #[inline]
    pub fn job() -> Message {
        Message {
            selector: TAG_JOB,
            args: Vec::new(),
        }
    }
    /// Whether this is a [`Request::Job`] (without decoding the request).
    #[inline]
    pub fn is_job(&self) -> bool {
        self.selector == TAG_JOB
    }
    /// A control-path request. A [`Request::Job`] carries its job as the one argument in
    /// `args`; the other requests ignore `args`.
    pub fn request(request: Request, args: Vec<Value>) -> Message {
        let (selector, args) = match request {
            Request::Initialize => (TAG_INITIALIZE, Vec::new()),
            Request::Job => (TAG_JOB, args),
            Request::Supervisor(r) => match r {
                SupervisorRequest::Init => (TAG_SUP_INIT, Vec::new()),
                SupervisorRequest::Ping => (TAG_SUP_PING, Vec::new()),
                SupervisorRequest::Terminate(id) => (TAG_SUP_TERMINATE, vec![Value::Symbol(id)]),
                SupervisorRequest::TerminatePid(p) => (
                    TAG_SUP_TERMINATE_PID,
                    vec![
                        Value::Int(p.node as i64),
                        Value::Int(p.number as i64),
                        Value::bool(p.service),
                    ],
                ),
                SupervisorRequest::StartChild { args, req } => {
                    (TAG_SUP_START_CHILD, vec![args, Value::Int(req)])
                }
                SupervisorRequest::Retry(indexes) => (
                    TAG_SUP_RETRY,
                    indexes.into_iter().map(|i| Value::Int(i as i64)).collect(),
                ),
            },
        };
        Message { selector, args }
    }
    /// The control request this message carries; None for a user message.
    #[inline]
    pub fn as_request(&self) -> Option<Request> {
        // User selectors all lie below the reserved tags (the lowest tag is TAG_SUP_RETRY).
        if self.selector.index() < TAG_SUP_RETRY.index() {
            return None;
        }
        self.decode_request()
    }

    #[inline(never)]
    fn decode_request(&self) -> Option<Request> {
        let int = |i: usize| self.args.get(i).and_then(Value::as_int).unwrap_or(0);
        let sup = Request::Supervisor;
        Some(match self.selector {
            s if s == TAG_INITIALIZE => Request::Initialize,
            s if s == TAG_JOB => Request::Job,
            s if s == TAG_SUP_INIT => sup(SupervisorRequest::Init),
            s if s == TAG_SUP_PING => sup(SupervisorRequest::Ping),
            s if s == TAG_SUP_TERMINATE => {
                sup(SupervisorRequest::Terminate(self.args.first()?.as_sym()?))
            }
            s if s == TAG_SUP_TERMINATE_PID => sup(SupervisorRequest::TerminatePid(Pid {
                node: int(0) as u32,
                number: int(1) as u64,
                service: matches!(self.args.get(2), Some(Value::True)),
            })),
            s if s == TAG_SUP_START_CHILD => sup(SupervisorRequest::StartChild {
                args: self.args.first().cloned().unwrap_or(Value::Nil),
                req: int(1),
            }),
            s if s == TAG_SUP_RETRY => sup(SupervisorRequest::Retry(
                self.args
                    .iter()
                    .filter_map(Value::as_int)
                    .map(|i| i as usize)
                    .collect(),
            )),
            _ => return None,
        })
    }
}

/// A request on the runtime's control path: lifecycle steps and runtime services, told apart
/// by type, never by a selector a user message could also carry.
#[derive(Clone, Debug)]
pub enum Request {
    /// Lifecycle: run a new actor's `initialize` chain (its first message, when it has one).
    Initialize,
    /// Service: run a job of the main program (the job is the message's one argument).
    Job,
    /// A request to a supervisor process.
    Supervisor(SupervisorRequest),
}

/// What a supervisor's handle asks its process for (the supervisor is a process
/// and its handle talks to it only through these).
#[derive(Clone, Debug)]
pub enum SupervisorRequest {
    /// Start the static children (answers when all started, or raises a start failure).
    Init,
    /// A barrier: answers once earlier signals are handled.
    Ping,
    /// `terminate:` — stop the child with this id and do not restart it.
    Terminate(Sym),
    /// `terminateChild:` — stop this child process; idempotent.
    TerminatePid(Pid),
    /// `startChild`/`startChild:` of a dynamic supervisor; the new process is left in the
    /// shared results under `req`.
    StartChild { args: Value, req: i64 },
    /// Try again to start these children (roster indexes, in order) after a failed restart:
    /// sent by the supervisor to itself, so a stop or exit signal that arrived meanwhile is
    /// handled first.
    Retry(Vec<usize>),
}

/// Why a process exited. Travels over links and monitors as data.
#[derive(Clone, Debug)]
pub enum ExitReason {
    /// Finished its work, or `stop`.
    Normal,
    /// `kill` (or an untrappable exit signal).
    Killed,
    /// Stopped by its supervisor or by runtime shutdown.
    Shutdown,
    /// Reported to a monitor registered on a process that was already dead.
    NoProc,
    /// A handler panicked (a bug in native code, turned into an actor crash).
    Panic(Arc<str>),
    /// Any other reason given as a bt value (`aPid exit: reason`, an uncaught exception).
    Custom(Value),
}

impl ExitReason {
    pub fn is_normal(&self) -> bool {
        matches!(self, ExitReason::Normal)
    }
    /// The reason as a bt value: `#normal`, `#killed`, `#shutdown`, `#noproc`,
    /// `{#panic, "message"}`, or the custom value itself.
    pub fn to_value(&self) -> Value {
        match self {
            ExitReason::Normal => Value::sym("normal"),
            ExitReason::Killed => Value::sym("killed"),
            ExitReason::Shutdown => Value::sym("shutdown"),
            ExitReason::NoProc => Value::sym("noproc"),
            ExitReason::Panic(m) => Value::tuple(vec![Value::sym("panic"), Value::str(&**m)]),
            ExitReason::Custom(v) => v.clone(),
        }
    }
    /// Reads a bt value back: the well-known symbols map to their variants.
    pub fn from_value(v: Value) -> ExitReason {
        match v.as_sym().map(Sym::as_str) {
            Some("normal") => ExitReason::Normal,
            Some("killed") | Some("kill") => ExitReason::Killed,
            Some("shutdown") => ExitReason::Shutdown,
            Some("noproc") => ExitReason::NoProc,
            _ => ExitReason::Custom(v),
        }
    }
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitReason::Normal => f.write_str("normal"),
            ExitReason::Killed => f.write_str("killed"),
            ExitReason::Shutdown => f.write_str("shutdown"),
            ExitReason::NoProc => f.write_str("noproc"),
            ExitReason::Panic(m) => write!(f, "panic: {m}"),
            ExitReason::Custom(v) => write!(f, "{v:?}"),
        }
    }
}

/// How long a sync call waits for its reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timeout {
    Ms(u64),
    Infinity,
}

impl Timeout {
    /// The default: 5000 ms.
    pub const DEFAULT: Timeout = Timeout::Ms(5000);
}

impl Default for Timeout {
    fn default() -> Self {
        Timeout::DEFAULT
    }
}

/// Why a sync call (or a stop) did not produce a value.
#[derive(Clone, Debug)]
pub enum CallError {
    /// No reply within the timeout (the message may still be processed later).
    Timeout,
    /// The target was dead, stopped or died before answering.
    ActorDead,
    /// The target is already waiting (directly or transitively) on the caller.
    Deadlock,
    /// The handler raised this exception; the caller re-raises it.
    Raised(Value),
    /// The calling process itself is exiting (killed, or the runtime shuts down): unwind.
    Exiting(ExitReason),
}

impl CallError {
    /// The bt exception kind (without `#`), or `None` for `Raised` (the exception's own kind
    /// applies) and `Exiting` (not an exception: the process terminates).
    pub fn kind(&self) -> Option<&'static str> {
        match self {
            CallError::Timeout => Some("timeout"),
            CallError::ActorDead => Some("actor_dead"),
            CallError::Deadlock => Some("deadlock_detected"),
            CallError::Raised(_) | CallError::Exiting(_) => None,
        }
    }
}

/// The current process is exiting; a handler that gets this should unwind promptly.
#[derive(Clone, Debug)]
pub struct Exiting(pub ExitReason);

impl From<Exiting> for CallError {
    fn from(e: Exiting) -> CallError {
        CallError::Exiting(e.0)
    }
}

/// A control signal, delivered to [`crate::runtime::Behaviour::signal`] before any queued
/// user message.
#[derive(Clone, Debug)]
pub enum Signal {
    /// A linked process exited and this process traps exits.
    Exit { from: Pid, reason: ExitReason },
    /// A process monitored with [`crate::runtime::RtHandle::monitor_signal`] exited.
    Down {
        reference: u64,
        pid: Pid,
        reason: ExitReason,
    },
}

/// Errors of the name registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// `name_registered`: the name is taken by a live process.
    Registered,
    /// `reserved_name`: names starting with `bt_` belong to runtime services.
    Reserved,
    /// `no_such_process`: the process to register is not alive.
    NoProc,
}

impl NameError {
    pub fn kind(&self) -> &'static str {
        match self {
            NameError::Registered => "name_registered",
            NameError::Reserved => "reserved_name",
            NameError::NoProc => "no_such_process",
        }
    }
}

/// Why waiting for a task process's result failed.
#[derive(Clone, Debug)]
pub enum JoinError {
    /// The task exited without producing a result (killed, panicked, shutdown).
    Exited(ExitReason),
    /// A blocking join was attempted on a runtime worker thread; it would stall the worker,
    /// so it is refused (join from a process with `join_in` instead).
    OnWorkerThread,
    /// The runtime is shutting down and accepts no new processes.
    ShuttingDown,
    /// The waiting process itself is exiting.
    Exiting(ExitReason),
}

/// What state a process is in, for introspection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcStatus {
    /// Alive with nothing to do (holds no stack).
    Idle,
    /// Queued to run (or running, or preempted).
    Runnable,
    /// Suspended in a sync call, a join or a sleep.
    Waiting,
    /// Exited.
    Dead,
}
