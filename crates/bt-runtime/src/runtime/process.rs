//! Processes: the record of one actor or task, its light mailbox, and what happens when it
//! runs and when it exits.
//!
//! An idle process is just a [`Proc`] (176 bytes): its behaviour (the actor's state), a
//! locked [`Mailbox`] (one envelope inline, no buffer while idle) and a scheduling flag;
//! control signals, a name, monitors and links live in a boxed [`Extras`] made on first use.
//! It holds no stack. When a message arrives for an idle process it is scheduled; a worker
//! then runs [`run_body`] on a pooled coroutine stack, which handles control signals first
//! and then messages until the mailbox is empty, and returns the stack. A sync call from a
//! pool worker to an idle actor with nothing queued claims it instead ([`enqueue_call`]):
//! the call takes the behaviour in the lock that would have queued the message, and the run
//! starts with that message without taking the lock again.
//!
//! The [`Cx`] struct is defined here too, with the record its handlers run for (its
//! operations are `cx.rs`'s); the run itself is `process/run.rs`, a process lent to a
//! guest's runner `process/lent.rs`. This file and `sched.rs` (`Shared`, which holds
//! processes) name each other; the rest of the runtime names them.

use std::any::TypeId;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use corosensei::Yielder;

use crate::runtime::mailbox::Mailbox;
use crate::runtime::sched::{Handoff, RtHandle, Shared, Suspend};
use crate::runtime::spin::ProcMutex;
use crate::runtime::types::{CallError, ExitReason, Message, Pid, ProcStatus, Signal};
use crate::runtime::waiter::{Waiter, Waiting, Wake};
use crate::value::{Sym, Value};

mod handed;
mod lent;
mod run;
#[cfg(test)]
mod stress;
pub(crate) use handed::RunRef;
pub(crate) use lent::{claim_idle, resume_kept, run_kept_job, run_lent, unlend};
pub(crate) use run::run_body;

/// What an actor does with its messages. The runtime calls these on the actor's own
/// coroutine, one message at a time; `self` is the actor's state.
pub trait Behaviour: Send + 'static {
    /// Handles one user message. `Ok` is the reply; `Err` is an exception the caller
    /// re-raises (the actor survives: rolling its state back is the implementor's job).
    /// For casts the reply is dropped and an `Err` goes to [`Behaviour::cast_failed`].
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value>;

    /// Runs on `stop` (and `Cx::stop_self`/`exit_self`) before the process exits; not on
    /// `kill`.
    fn terminate(&mut self, _cx: &mut Cx<'_>, _reason: &ExitReason) {}

    /// A control signal (exit signal while trapping exits, or a `Down` notice); handled
    /// before any queued user message.
    fn signal(&mut self, _cx: &mut Cx<'_>, _sig: Signal) {}

    /// A cast's handler raised: errors of casts are logged, never raised.
    fn cast_failed(&mut self, cx: &mut Cx<'_>, selector: Sym, error: Value) {
        cx.log(&format!(
            "error in cast {} to {}: {:?}",
            selector,
            cx.pid(),
            error
        ));
    }

    /// Runs a job lent by the guest thread that claimed this process
    /// (`RtHandle::drive_job`): what a message carrying the job would do, without the
    /// message. Only behaviours whose owners lend jobs implement it (the main program's);
    /// the default does nothing.
    fn run_job(&mut self, _cx: &mut Cx<'_>, _job: LentJob) {}

    /// `run_job(cx, job)` panicked (`payload`): true when the behaviour answered the panic
    /// itself (the job's caller got it, the behaviour's state is sound) and the process
    /// goes on as after a job; false (the default) crashes the process, as a panicking
    /// cast does. The one handler of a lent job's panic on the guest's kept path.
    fn job_panicked(
        &mut self,
        _cx: &mut Cx<'_>,
        _job: LentJob,
        _payload: &(dyn std::any::Any + Send),
    ) -> bool {
        false
    }
}

/// A job the guest thread lends a process it claimed (`RtHandle::drive_job`): an opaque
/// pointer into the waiting caller's stack that the process's behaviour knows how to run
/// ([`Behaviour::run_job`]). The caller does not return before the job ran or can no
/// longer run.
#[derive(Clone, Copy, Debug)]
pub struct LentJob(pub *mut ());

/// A behaviour from a closure: `handler(|cx, msg| Ok(...))`.
pub struct FnBehaviour<F>(pub F);

impl<F> Behaviour for FnBehaviour<F>
where
    F: FnMut(&mut Cx<'_>, Message) -> Result<Value, Value> + Send + 'static,
{
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        (self.0)(cx, msg)
    }
}

/// Wraps a closure as a [`Behaviour`].
pub fn handler<F>(f: F) -> FnBehaviour<F>
where
    F: FnMut(&mut Cx<'_>, Message) -> Result<Value, Value> + Send + 'static,
{
    FnBehaviour(f)
}

/// The context of the running process: what its code uses to talk to the runtime. Defined
/// here with the process record it runs for (its handlers take it); its operations — calls,
/// casts, stops, sleeps, preemption, the stack check — are in `cx.rs` (see the docs there).
pub struct Cx<'y> {
    pub(super) y: &'y Yielder<(), Suspend>,
    /// A pool worker runner's hand-offs with its worker (`None` elsewhere: a guest's
    /// coroutines hand over nothing).
    pub(super) handoff: Option<&'y Handoff>,
    pub(super) rt: &'y RtHandle,
    pub(super) me: &'y ProcRef,
    pub(super) wake: Wake,
    pub(super) reductions: u32,
    pub(super) budget: u32,
    /// Lowest address handlers may use (usable stack bottom + red zone).
    pub(super) floor: usize,
    pub(super) top: usize,
    pub(super) deepest: Cell<usize>,
    pub(super) exit: Option<ExitReason>,
    /// `me` is lent by the sync caller that claimed this run (`RunRef::lent`): a count of
    /// its own is taken before the first suspension (`Cx::hold`), and `held` says so (the
    /// runner's handle then owns that count: `RunRef::adopt`).
    pub(super) lent: bool,
    pub(super) held: bool,
}

impl<'y> Cx<'y> {
    /// The pid of the running process.
    pub fn pid(&self) -> Pid {
        self.me.pid()
    }

    /// A handle to the running process.
    pub fn me(&self) -> &'y ProcRef {
        self.me
    }

    /// The runtime this process belongs to (spawn, names, timers, monitors …).
    pub fn rt(&self) -> &'y RtHandle {
        self.rt
    }

    pub(crate) fn shared(&self) -> &'y Arc<Shared> {
        &self.rt.0
    }

    /// Takes the object this process's pool worker keeps for its runs ([`Cx::keep_local`])
    /// if it is a `T` for which `fits` holds; `None` off a pool worker (a guest's runner).
    /// What [`RtHandle::worker_local_take`] does for the thread, without a thread-local.
    #[inline]
    #[allow(unsafe_code)]
    pub fn take_local<T: 'static>(&self, fits: impl FnOnce(&T) -> bool) -> Option<Box<T>> {
        let h = self.handoff?;
        let (ty, obj) = h.local.take()?;
        if ty != TypeId::of::<T>() {
            h.local.set(Some((ty, obj)));
            return None;
        }
        // SAFETY: `ty` is the id of the object's own type: `keep_local` stores each object
        // with `TypeId::of` its type, and this function puts back only the pair it took,
        // so the box holds a `T`. The cast is what `Box::<dyn Any>::downcast` does after
        // the same comparison, without asking the vtable for the id.
        let t = unsafe { Box::from_raw(Box::into_raw(obj).cast::<T>()) };
        if fits(&t) {
            return Some(t);
        }
        h.local.set(Some((ty, t)));
        None
    }

    /// The emptied argument vector a message handled on this pool worker left
    /// ([`Cx::keep_args`]; empty and unallocated when there is none), for a sync call's
    /// arguments. `None` off a pool worker.
    #[inline]
    pub fn spare_args(&self) -> Option<Vec<Value>> {
        self.handoff.map(|h| h.args.take())
    }

    /// Keeps a handled message's emptied argument vector on this pool worker for the next
    /// sync call made there ([`Cx::spare_args`]); gives it back off a pool worker.
    #[inline]
    pub fn keep_args(&self, v: Vec<Value>) -> Result<(), Vec<Value>> {
        match self.handoff {
            Some(h) => {
                drop(h.args.replace(v));
                Ok(())
            }
            None => Err(v),
        }
    }

    /// Keeps `v` on this process's pool worker until the next [`Cx::take_local`] there;
    /// gives it back off a pool worker or when the worker keeps one already.
    #[inline]
    pub fn keep_local<T: 'static>(&self, v: Box<T>) -> Option<Box<T>> {
        let Some(h) = self.handoff else {
            return Some(v);
        };
        match h.local.take() {
            Some(old) => {
                h.local.set(Some(old));
                Some(v)
            }
            None => {
                h.local.set(Some((TypeId::of::<T>(), v)));
                None
            }
        }
    }

    /// Writes a line to the runtime's log sink, rate-limited per call site.
    #[track_caller]
    pub fn log(&self, line: &str) {
        self.rt.0.log(line)
    }
}

pub(crate) type TaskFn = Box<dyn FnOnce(&mut Cx<'_>) + Send>;

/// The action of a periodic timer (`RtHandle::every`), run once per period.
pub(crate) type EveryFn = Arc<dyn Fn(&mut Cx<'_>) + Send + Sync>;
pub(crate) type DownFn = Box<dyn FnOnce(&mut Cx<'_>, ExitReason) + Send>;
pub(crate) type ExitHook = Box<dyn FnOnce(&Shared, &ExitReason) + Send>;

pub(crate) enum Body {
    Actor(Box<dyn Behaviour>),
    Task(TaskFn),
}

pub(crate) enum Envelope {
    User {
        msg: Message,
        reply: Option<Arc<Waiter>>,
    },
    /// A graceful stop, ordered after the messages queued before it, with the exit reason
    /// (`normal` for `stop`, `shutdown` when a supervisor stops its child).
    Stop(ExitReason),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sched {
    Idle,
    Scheduled,
    Running,
    /// Claimed by a guest runner that keeps it between its owner's calls (the main process of
    /// an embedded engine: `sched::guest`, [`claim_idle`]): the runner holds the behaviour and
    /// runs each call's job without taking this lock. Senders treat it as running (what they
    /// queue waits; they set `Proc::lent_mail`, so the next call or the end of the running job
    /// releases it the ordinary way); its status reads Idle between calls (`Proc::lent_busy`).
    Lent,
}

pub(crate) enum MonitorAction {
    /// Run the closure in a fresh process with the exit reason.
    Callback(DownFn),
    /// Deliver `Signal::Down` to the watcher's control queue.
    Signal(ProcRef),
}

pub(crate) struct Monitor {
    pub reference: u64,
    pub action: MonitorAction,
}

/// Rarely used per-process data, boxed so an idle actor stays small.
#[derive(Default)]
pub(crate) struct Extras {
    /// The registered name.
    pub name: Option<Sym>,
    /// Control signals: handled before user messages.
    pub control: VecDeque<Signal>,
    /// A task process's closure until its run takes it.
    pub task: Option<TaskFn>,
    pub monitors: Vec<Monitor>,
    pub links: Vec<ProcRef>,
    pub stop_waiters: Vec<Arc<Waiter>>,
    pub exit_hooks: Vec<ExitHook>,
    pub trap_exits: bool,
    /// Most casts the mailbox holds (0: unlimited); see [`enqueue`] for the policy.
    pub max_mailbox: usize,
    /// Casts dropped because the mailbox was full.
    pub dropped: u64,
}

/// A process's state under its lock. An idle actor is this, inline in [`Proc`], and its
/// behaviour: what is rare (exit reason, name, control signals, monitors, links, a task's
/// closure) is boxed or in [`Extras`].
pub(crate) struct Inner {
    pub sched: Sched,
    /// False once stopping/exited (and always for task processes): new messages are refused.
    pub accepting: bool,
    /// Some once the process has exited.
    pub reason: Option<Box<ExitReason>>,
    pub mailbox: Mailbox<Envelope>,
    /// The actor's behaviour while not running (taken by the running coroutine; a task's
    /// closure is in `Extras::task`).
    pub body: Option<Box<dyn Behaviour>>,
    /// Reply waiter of the message being handled (failed with actor_dead on a kill).
    pub current: Option<Arc<Waiter>>,
    /// What the process's coroutine is suspended on, or was last (completed on a kill, to
    /// wake it). Replaced only by the process itself, when it waits again: while it is
    /// suspended its timeout refers to this waiter by address (`WaitRef`). Holds the count
    /// a sync call's answer hands back (`Waiter::answer`), which the next call reuses.
    pub waiting: Waiting,
    pub extra: Option<Box<Extras>>,
}

impl Inner {
    /// Whether control signals are queued.
    pub(crate) fn has_control(&self) -> bool {
        self.extra.as_ref().is_some_and(|x| !x.control.is_empty())
    }

    #[inline]
    fn pop_control(&mut self) -> Option<Signal> {
        self.extra.as_mut()?.control.pop_front()
    }

    /// The registered name.
    pub(crate) fn name(&self) -> Option<Sym> {
        self.extra.as_ref().and_then(|x| x.name)
    }

    /// The exit reason once exited.
    pub(crate) fn exit_reason(&self) -> Option<ExitReason> {
        self.reason.as_deref().cloned()
    }

    pub(crate) fn extra(&mut self) -> &mut Extras {
        self.extra.get_or_insert_with(Default::default)
    }
}

/// One process. Shared through [`ProcRef`].
pub(crate) struct Proc {
    pub pid: Pid,
    /// Wall-clock spawn time, ms since the Unix epoch.
    pub started_ms: u64,
    /// What kind of process (`actor`, `main`, `timer`, `callback`, …), for snapshots.
    pub label: &'static str,
    /// Free data the embedder attaches at spawn (e.g. the actor's class), for snapshots.
    pub info: Value,
    /// Set when the process exits; read without the lock on hot paths.
    pub exited: AtomicBool,
    /// For a process its guest keeps claimed (`Sched::Lent`): set, under the lock, by
    /// whoever queues a message, a control signal or a stop for it ([`note_queued`]); the
    /// guest reads it without the lock at each call's start and job's end, and clears it
    /// under the lock when it releases the process.
    pub lent_mail: AtomicBool,
    /// A kept (`Sched::Lent`) process is running a job now: its status reads Runnable, else
    /// Idle. Written by the guest only (plain stores).
    pub lent_busy: AtomicBool,
    /// A spin lock (`spin::ProcMutex`): every critical section on it is short and never
    /// blocks, and its release is a plain store.
    pub inner: ProcMutex<Inner>,
}

/// A handle to a process: cheap to clone, compares by pid. Sending through a handle to an
/// exited process fails with `actor_dead`; the handle itself stays valid.
#[derive(Clone)]
pub struct ProcRef(pub(crate) Arc<Proc>);

impl ProcRef {
    /// The address of the process record: unique among live processes, never 0.
    #[inline]
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }
}

impl PartialEq for ProcRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.pid == other.0.pid
    }
}
impl Eq for ProcRef {}
impl std::hash::Hash for ProcRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.pid.hash(h)
    }
}
impl std::fmt::Debug for ProcRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProcRef({})", self.0.pid)
    }
}

impl ProcRef {
    pub fn pid(&self) -> Pid {
        self.0.pid
    }
    pub fn is_alive(&self) -> bool {
        !self.0.exited.load(Ordering::Acquire)
    }
    /// Queued user messages (not counting the one being handled).
    pub fn mailbox_len(&self) -> usize {
        self.0.inner.lock().mailbox.len()
    }
    /// Limits the casts this process's mailbox holds (0: unlimited, the default; see
    /// [`enqueue`] for the overflow policy).
    pub fn set_max_mailbox(&self, n: usize) {
        self.0.inner.lock().extra().max_mailbox = n;
    }
    /// The mailbox limit (0: unlimited).
    pub fn max_mailbox(&self) -> usize {
        self.0
            .inner
            .lock()
            .extra
            .as_ref()
            .map_or(0, |x| x.max_mailbox)
    }
    /// Casts dropped because the mailbox was full.
    pub fn dropped_casts(&self) -> u64 {
        self.0.inner.lock().extra.as_ref().map_or(0, |x| x.dropped)
    }
    /// Bytes this process holds in the runtime: its record, its rarely used data, and its
    /// queued messages (envelope, message and argument slots; values the arguments share with
    /// other processes are not counted). The coroutine stack it runs on belongs to a worker
    /// and is lent only while it runs, so it is not counted either.
    pub fn memory_bytes(&self) -> usize {
        let g = self.0.inner.lock();
        let per_msg = |e: &Envelope| match e {
            Envelope::User { msg, .. } => {
                std::mem::size_of::<Envelope>()
                    + msg.args.len() * std::mem::size_of::<Value>()
                    + msg.args.iter().map(arg_bytes).sum::<usize>()
            }
            Envelope::Stop(_) => std::mem::size_of::<Envelope>(),
        };
        std::mem::size_of::<Proc>()
            + g.extra
                .as_ref()
                .map_or(0, |_| std::mem::size_of::<Extras>())
            + g.mailbox.iter().map(per_msg).sum::<usize>()
    }
    /// Wall-clock start time in ms since the Unix epoch.
    pub fn started_at_ms(&self) -> u64 {
        self.0.started_ms
    }
    pub fn label(&self) -> &'static str {
        self.0.label
    }
    /// The data attached at spawn ([`crate::runtime::SpawnOpts::info`]).
    pub fn info(&self) -> &Value {
        &self.0.info
    }
    /// The registered name, if any.
    pub fn name(&self) -> Option<Sym> {
        self.0.inner.lock().name()
    }
    /// The exit reason once exited.
    pub fn exit_reason(&self) -> Option<ExitReason> {
        self.0.inner.lock().exit_reason()
    }
    pub fn status(&self) -> ProcStatus {
        let g = self.0.inner.lock();
        if g.reason.is_some() {
            ProcStatus::Dead
        } else if g.waiting.get().is_some_and(|w| !w.is_done()) {
            ProcStatus::Waiting
        } else if g.sched == Sched::Idle
            || (g.sched == Sched::Lent
                && !self.0.lent_busy.load(Ordering::Relaxed)
                && g.mailbox.len() == 0
                && !g.has_control())
        {
            // A kept process (`Sched::Lent`) between its guest's calls reads as what it is:
            // idle, unless something waits for it.
            ProcStatus::Idle
        } else {
            ProcStatus::Runnable
        }
    }
}

/// Heap bytes directly behind a message argument (one level: the text of a String, the
/// element slots of a collection), an estimate for [`ProcRef::memory_bytes`].
fn arg_bytes(v: &Value) -> usize {
    let slot = std::mem::size_of::<Value>();
    match v {
        Value::Str(s) => s.len(),
        Value::Binary(b) => b.len(),
        Value::BigInt(b) => (b.bits() / 8) as usize,
        Value::List(l) | Value::Queue(l) => l.len() * slot,
        Value::Array(a) => a.len() * slot,
        Value::Tuple(t) => t.len() * slot,
        Value::Dict(d) => d.len() * 2 * slot,
        Value::Set(s) => s.len() * slot,
        Value::Object(o) => o.fields.len() * slot,
        _ => 0,
    }
}

/// Puts an envelope in the mailbox and schedules the process if it was idle. Gives the
/// envelope back if the process no longer accepts messages.
pub(crate) fn enqueue(shared: &Shared, p: &ProcRef, env: Envelope) -> Result<(), Envelope> {
    if let Some(p) = enqueue_as(p, env, false)? {
        shared.schedule(p);
    }
    Ok(())
}

/// A process's behaviour claimed with the first message of its run (a sync call to an idle
/// actor, [`enqueue_call`]; the reply waiter is `Inner::current` already).
pub(crate) type Claimed = (Box<dyn Behaviour>, Message);

/// A process run handed to a pool worker with a sync caller's suspension
/// (`sched::Handoff::next`): the worker runs it at once on the same thread.
pub(crate) struct Handed {
    /// Lent by the caller (uncounted: it is suspended until the run suspends) for a claimed
    /// call, counted otherwise.
    pub p: RunRef,
    /// Set when the call claimed the idle callee: its run starts with this message, no lock.
    pub first: Option<Claimed>,
}

/// [`enqueue`] for a sync call (`msg`, answered through `reply`) whose caller suspends
/// next. On a pool worker an idle target with nothing queued is **claimed** in the same
/// lock (marked running, its behaviour taken, `reply` made its current message's waiter)
/// and comes back with the message, so its run needs no lock to start; an idle target with
/// mail comes back without one. The caller hands it to its worker with its suspension
/// (`sched::Handoff::next`), which runs it at once on the same thread, with no queue traffic.
/// Elsewhere it is scheduled as by [`enqueue`]. `Err` (nothing queued) when the target no
/// longer accepts messages. `pool`: the caller is a runner of a pool worker of `shared` (it
/// has the worker's hand-off record: no thread-local lookup).
pub(crate) fn enqueue_call(
    shared: &Shared,
    p: &ProcRef,
    msg: Message,
    reply: Arc<Waiter>,
    pool: bool,
) -> Result<Option<Handed>, ()> {
    if pool && shared.sim.is_none() {
        let mut g = p.0.inner.lock();
        if !g.accepting {
            return Err(());
        }
        if g.sched == Sched::Idle {
            g.sched = Sched::Running;
            if g.mailbox.len() == 0 && !g.has_control() {
                if let Some(b) = g.body.take() {
                    g.current = Some(reply);
                    drop(g);
                    #[allow(unsafe_code)]
                    return Ok(Some(Handed {
                        // SAFETY: the caller suspends next and its worker runs this at once
                        // (`Cx::call`, `Worker::run_handed_over`), before it can resume the
                        // caller, which holds `p`; the run takes a counted handle before it
                        // suspends (`Cx::hold`).
                        p: unsafe { RunRef::lent(p) },
                        first: Some((b, msg)),
                    }));
                }
            }
            g.sched = Sched::Scheduled;
            g.mailbox.push_back(Envelope::User {
                msg,
                reply: Some(reply),
            });
            drop(g);
            return Ok(Some(Handed {
                p: RunRef::counted(p.clone()),
                first: None,
            }));
        }
        g.mailbox.push_back(Envelope::User {
            msg,
            reply: Some(reply),
        });
        note_queued(p, &g);
        return Ok(None);
    }
    let env = Envelope::User {
        msg,
        reply: Some(reply),
    };
    match enqueue_as(p, env, true) {
        Err(_) => Err(()),
        Ok(Some(p)) => {
            shared.schedule_next(p);
            Ok(None)
        }
        Ok(None) => Ok(None),
    }
}

/// Undoes a claim ([`enqueue_call`]) whose run cannot start now (no stack): the message
/// goes back to the front of the mailbox with its reply waiter, the behaviour to the record,
/// and the process is marked scheduled (the caller queues it). Of an exited process it
/// drops both (the exit answered the caller).
pub(crate) fn unclaim(p: &ProcRef, (b, msg): Claimed) {
    let mut g = p.0.inner.lock();
    if g.reason.is_some() {
        drop(g);
        drop((b, msg));
        return;
    }
    let reply = g.current.take();
    g.mailbox.push_front(Envelope::User { msg, reply });
    g.body = Some(b);
    g.sched = Sched::Scheduled;
}

/// Queues `env`; `Some(handle)` when that made an idle process runnable (the caller
/// schedules it).
#[inline]
fn enqueue_as(p: &ProcRef, env: Envelope, call: bool) -> Result<Option<ProcRef>, Envelope> {
    let mut g = p.0.inner.lock();
    if !g.accepting {
        return Err(env);
    }
    // Overflow policy: with a limit (`maxMailbox`), a *cast* that finds the
    // mailbox holding that many messages is dropped and counted (`dropped_casts`); the
    // sender is not told (a cast never is). Synchronous sends always queue: each caller
    // has at most one outstanding, so they cannot grow the mailbox without bound.
    if !call {
        let full = matches!(env, Envelope::User { reply: None, .. })
            && g.extra.as_ref().is_some_and(|x| x.max_mailbox > 0)
            && g.mailbox.len() >= g.extra.as_ref().map_or(usize::MAX, |x| x.max_mailbox);
        if full {
            g.extra().dropped += 1;
            return Ok(None);
        }
    }
    g.mailbox.push_back(env);
    if g.sched == Sched::Idle {
        g.sched = Sched::Scheduled;
        drop(g);
        Ok(Some(p.clone()))
    } else {
        note_queued(p, &g);
        Ok(None)
    }
}

/// Tells the guest that keeps `p` claimed (`Sched::Lent`) that something was queued for it:
/// called, with `p`'s lock held, by whoever queues a message, a signal or a stop for a
/// process that is not idle.
#[inline(always)]
pub(crate) fn note_queued(p: &ProcRef, g: &Inner) {
    if g.sched == Sched::Lent {
        p.0.lent_mail.store(true, Ordering::Release);
    }
}

/// Pushes a control signal and schedules the process if idle. False if it has exited.
pub(crate) fn push_signal(shared: &Shared, p: &ProcRef, sig: Signal) -> bool {
    let schedule = {
        let mut g = p.0.inner.lock();
        if g.reason.is_some() {
            return false;
        }
        g.extra().control.push_back(sig);
        if g.sched == Sched::Idle {
            g.sched = Sched::Scheduled;
            true
        } else {
            note_queued(p, &g);
            false
        }
    };
    if schedule {
        shared.schedule(p.clone());
    }
    true
}

/// Ends a process with `reason`: marks it exited, unregisters it, fails queued and
/// in-flight callers with `actor_dead`, wakes its own suspended coroutine (which then sees
/// `Exiting`), and notifies stop waiters, monitors, links and exit hooks. Answers false if
/// it had already exited. Callable from any thread.
pub(crate) fn finish(shared: &Shared, p: &ProcRef, reason: ExitReason) -> bool {
    let (mailbox, current, waiting, name, extra, body) = {
        let mut g = p.0.inner.lock();
        if g.reason.is_some() {
            return false;
        }
        g.reason = Some(Box::new(reason.clone()));
        g.accepting = false;
        p.0.exited.store(true, Ordering::Release);
        let mut extra = g.extra.take();
        let name = extra.as_mut().and_then(|x| {
            x.control.clear();
            x.name.take()
        });
        (
            std::mem::take(&mut g.mailbox),
            g.current.take(),
            // Completed in place, not taken: a suspended wait's timeout refers to it by
            // address until the wait is resumed (`WaitRef`).
            g.waiting.get().cloned(),
            name,
            extra,
            g.body.take(),
        )
    };
    shared.forget_process(p, name);
    for env in mailbox {
        if let Envelope::User { reply: Some(w), .. } = env {
            w.complete(shared, Err(CallError::ActorDead));
        }
    }
    if let Some(w) = current {
        w.complete(shared, Err(CallError::ActorDead));
    }
    if let Some(w) = waiting {
        w.complete(shared, Err(CallError::Exiting(reason.clone())));
    }
    drop(body);
    if let Some(extra) = extra {
        let Extras {
            monitors,
            links,
            stop_waiters,
            exit_hooks,
            ..
        } = *extra;
        for w in stop_waiters {
            w.complete(shared, Ok(Value::sym("ok")));
        }
        for hook in exit_hooks {
            hook(shared, &reason);
        }
        for m in monitors {
            fire_monitor(shared, p.pid(), m, reason.clone());
        }
        for other in links {
            other.0.inner.lock().extra().links.retain(|x| x != p);
            deliver_exit(shared, &other, p.pid(), reason.clone());
        }
    }
    true
}

pub(crate) fn fire_monitor(shared: &Shared, pid: Pid, m: Monitor, reason: ExitReason) {
    match m.action {
        MonitorAction::Callback(f) => {
            shared.spawn_callback("callback", Box::new(move |cx: &mut Cx<'_>| f(cx, reason)));
        }
        MonitorAction::Signal(watcher) => {
            push_signal(
                shared,
                &watcher,
                Signal::Down {
                    reference: m.reference,
                    pid,
                    reason,
                },
            );
        }
    }
}

/// An exit signal from `from` reaches `to` (Erlang semantics): a trapping process gets it as
/// a control signal; otherwise a non-normal reason makes it exit with the same reason.
pub(crate) fn deliver_exit(shared: &Shared, to: &ProcRef, from: Pid, reason: ExitReason) {
    let traps = {
        let g = to.0.inner.lock();
        g.extra.as_ref().is_some_and(|e| e.trap_exits)
    };
    if traps {
        push_signal(shared, to, Signal::Exit { from, reason });
    } else if !reason.is_normal() {
        finish(shared, to, reason);
    }
}

pub(crate) fn fail_envelopes(shared: &Shared, envs: impl IntoIterator<Item = Envelope>) {
    for env in envs {
        if let Envelope::User { reply: Some(w), .. } = env {
            w.complete(shared, Err(CallError::ActorDead));
        }
    }
}

pub(crate) fn panic_message(e: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claimed sync call whose run cannot start (no stack) is put back: the message first
    /// in the mailbox with its reply waiter, the behaviour in the record, the process
    /// scheduled; its run then answers the caller as an ordinary delivery would.
    #[test]
    fn an_unclaimed_call_is_delivered_first() {
        let rt = crate::runtime::Runtime::new(crate::runtime::Config::default()).unwrap();
        let h = rt.handle();
        let p = h.spawn(handler(|_, m: Message| Ok(Value::Int(m.args.len() as i64))));
        let w = Waiter::new(None, None);
        let claimed = {
            let mut g = p.0.inner.lock();
            assert_eq!(g.sched, Sched::Idle);
            g.sched = Sched::Running;
            g.current = Some(w.clone());
            g.body.take().unwrap()
        };
        // A cast that arrives while the call is claimed queues behind it.
        assert!(h.cast(&p, Message::named("later", Vec::new())));
        unclaim(&p, (claimed, Message::named("first", vec![Value::Nil; 3])));
        {
            let g = p.0.inner.lock();
            assert_eq!(g.sched, Sched::Scheduled);
            assert!(g.body.is_some() && g.current.is_none());
            let sels: Vec<_> = g
                .mailbox
                .iter()
                .map(|e| match e {
                    Envelope::User { msg, reply } => (msg.selector.as_str(), reply.is_some()),
                    Envelope::Stop(_) => ("stop", false),
                })
                .collect();
            assert_eq!(sels, vec![("first", true), ("later", false)]);
        }
        h.0.schedule(p.clone());
        assert!(matches!(w.wait_thread(), Ok(Value::Int(3))));
        rt.shutdown();
    }

    /// An idle actor is this record plus its state and a process-table entry (target: under
    /// 1 KiB in all). Think before growing it: rarely used data goes in `Extras`.
    #[test]
    fn idle_process_record_stays_small() {
        let size = std::mem::size_of::<Proc>();
        // 176 + the Arc counts = 192 bytes (an allocator size class); the mailbox keeps one
        // envelope inline.
        assert!(size <= 176, "Proc is {size} bytes");
    }
}
