//! A context's process: how an evaluation context ([`Ctx`]) runs inside a runtime process,
//! and the actor system of one `Interpreter` with its pool of contexts.
//!
//! * Every process that evaluates bt code (the main program, each actor while it handles a
//!   message, timer and monitor callbacks) runs with a `Ctx` whose [`ProcSlot`] points at
//!   the process's runtime context ([`Cx`]) for exactly the duration of that run
//!   ([`in_process`]). Nothing is thread-local; the pointer is cleared before the run
//!   returns, so it never outlives the `&mut Cx` it was made from.
//! * Actors do not keep a `Ctx` while idle: a handler takes one from the system's pool and
//!   gives it back when the message is done ([`ActorSys::take_ctx`]).
//! * The reduction counter of the `Ctx` drives preemption ([`preempt`], via `Ctx::tick`),
//!   and the native stack limit is taken from the coroutine ([`Cx::stack_remaining`]).
//!
//! Layer: part of the evaluator's core (a field of `Ctx`). It names the evaluator, the
//! program and the runtime, never the actor glue above it (`interp::actor`: handles, sends,
//! behaviours), which re-exports what is here for its callers.

// unsafe: a process's Cx is reached through a pointer valid for one run (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Closure, Ctx, Unwind};
use crate::interp::program::Program;
use crate::runtime::{Cx, ProcLock, ProcLockGuard, ProcRef, RtHandle};
use crate::value::{ClassRef, Sym, Value};

/// The evaluator's reductions between preemptions (`Ctx::new`).
pub(crate) const DEFAULT_BUDGET: u32 = 4000;
/// Pooled contexts kept for reuse.
const POOL_MAX: usize = 256;
/// Method-cache entries of a pooled (actor) context: small, so 10,000 suspended handlers
/// stay cheap. Must be a power of two.
const POOLED_CACHE: usize = 128;

/// A lifetime-erased pointer to the running process's [`Cx`].
struct CxPtr(NonNull<Cx<'static>>);

// SAFETY: the pointer is set by `in_process` for the duration of one run on one coroutine
// and cleared before that run returns; while it is set, the `Ctx` holding it is used only
// by that coroutine (a suspended coroutine never migrates between threads), so the pointer
// is never dereferenced on another thread or after the `Cx` is gone.
unsafe impl Send for CxPtr {}

/// Per-context process data (a field of [`Ctx`]).
#[derive(Default)]
pub struct ProcSlot {
    cx: Option<CxPtr>,
    /// The actor system of the Interpreter this context belongs to.
    pub sys: Option<Arc<ActorSys>>,
    /// The actor whose handler is running (its handle value), if any: lent for one run
    /// ([`ProcSlot::actor`]).
    actor: Option<Lent>,
    /// Relay homes live in this run: those of the blocks that came with the message being
    /// handled ([`relay`]).
    pub relays: Relays,
    /// The last [`send::goes_remote`] decision for an actor handle: (class, selector,
    /// program epoch, answer). A loop of calls to one actor decides once. The class is held
    /// so its address cannot be reused by another class while remembered.
    pub(crate) remote_memo: Option<(ClassRef, Sym, u64, bool)>,
    /// The method the last actor message handled with this context ran: (the actor's
    /// class, selector, program epoch, method). Messages of one selector to actors of one
    /// class look the method up once (`behaviour::dispatch`); kept here, not per actor, so an
    /// idle actor does not grow. The class is held so its address cannot be reused.
    pub(crate) last_method: Option<(ClassRef, Sym, u64, crate::interp::eval::Hit)>,
}

impl ProcSlot {
    /// True while the context runs inside a runtime process.
    #[inline]
    pub fn in_runtime(&self) -> bool {
        self.cx.is_some()
    }

    /// The handle of the actor whose handler is running, if any.
    #[inline]
    pub fn actor(&self) -> Option<&Value> {
        self.actor.as_ref().map(|l| &*l.0)
    }
}

/// An actor's own handle lent to a context for one run: a bitwise copy that is never
/// dropped, so lending it costs no reference-count traffic (a clone and an out-of-line drop
/// per message before). Made only by [`run_lending`], which takes it back before it returns
/// (also when the run unwinds), while the lender's reference keeps the handle alive.
struct Lent(std::mem::ManuallyDrop<Value>);

/// Runs `f` with `me` lent to `ctx` as the running actor ([`ProcSlot::actor`]).
#[inline]
pub(crate) fn run_lending<R>(ctx: &mut Ctx, me: &Value, f: impl FnOnce(&mut Ctx) -> R) -> R {
    /// Takes the lent copy back out of the context, also when `f` unwinds.
    struct Back<'c>(&'c mut Ctx);
    impl Drop for Back<'_> {
        #[inline]
        fn drop(&mut self) {
            // A `Lent` owns nothing: dropping it (ManuallyDrop) never touches the handle.
            self.0.proc.actor = None;
        }
    }
    // SAFETY: the copy shares `me`'s reference without counting it. That is sound while
    // `me` stays alive, which the borrow guarantees for this call, and while the copy is
    // never dropped as a Value: it sits in `ManuallyDrop`, is reachable only as `&Value`
    // (`ProcSlot::actor`), so whoever needs it longer clones it (a counted reference), and
    // `Back` removes it from the context before this call returns or unwinds.
    let lent = Lent(std::mem::ManuallyDrop::new(unsafe { std::ptr::read(me) }));
    let back = Back(ctx);
    back.0.proc.actor = Some(lent);
    f(&mut *back.0)
}

/// The running process's runtime context, if the context runs in a process.
pub fn cx_of(ctx: &mut Ctx) -> Option<&mut Cx<'_>> {
    let p = ctx.proc.cx.as_ref()?.0;
    // SAFETY: `p` was made from a live `&mut Cx` by `in_process`, which is still running
    // (the pointer is cleared before it returns), and the `Cx` is used only through this
    // reborrow of `ctx` (exclusive for its lifetime). The erased lifetime is narrowed back to
    // the borrow of `ctx`.
    Some(unsafe { &mut *p.as_ptr().cast::<Cx<'_>>() })
}

/// Receives the outcome of an external operation exactly once, on any thread.
pub type Done<T> = Box<dyn FnOnce(T) + Send>;

/// Starts an operation that answers on another thread (network I/O, a blocking read) and
/// waits for its answer: the calling process is suspended (other processes keep the worker);
/// without a process context the thread blocks. `op` must call its `Done` exactly once.
pub fn await_external<T: Send + 'static>(
    ctx: &mut Ctx,
    what: &str,
    op: impl FnOnce(Done<T>),
) -> Result<T, crate::interp::eval::Unwind> {
    use crate::runtime::{CallError, Timeout};
    let slot: Arc<parking_lot::Mutex<Option<T>>> = Arc::new(parking_lot::Mutex::new(None));
    if let Some(cx) = cx_of(ctx) {
        let s = slot.clone();
        // The operation bounds its own time; `Done` is always called.
        let r = cx.wait_external(Timeout::Infinity, move |c| {
            op(Box::new(move |v| {
                *s.lock() = Some(v);
                c.complete(Value::Nil);
            }))
        });
        if let Err(CallError::Exiting(reason)) = r {
            return Err(crate::interp::eval::Unwind::Exit(reason.to_value()));
        }
    } else {
        let (tx, rx) = std::sync::mpsc::channel();
        op(Box::new(move |v| {
            let _ = tx.send(v);
        }));
        if let Ok(v) = rx.recv() {
            *slot.lock() = Some(v);
        }
    }
    let v = slot.lock().take();
    v.ok_or_else(|| ctx.err(ErrorKind::RuntimeError, format!("{what} did not answer")))
}

/// The token of the process of `cx` for the captured variables it owns (`Ctx::owner`,
/// `VarCell`): its record's address, unique among live processes, never 0.
#[inline]
pub(crate) fn owner_token(cx: &Cx<'_>) -> u64 {
    cx.me().addr() as u64
}

/// Runs `f` with `ctx` attached to the process of `cx` (pid, native stack, preemption).
pub fn in_process<R>(ctx: &mut Ctx, cx: &mut Cx<'_>, f: impl FnOnce(&mut Ctx) -> R) -> R {
    let prev_cx = ctx.proc.cx.take();
    let prev_pid = ctx.pid;
    let prev_owner = ctx.owner;
    let prev_limit = ctx.stack_limit;
    ctx.pid = cx.pid().number;
    ctx.owner = owner_token(cx);
    ctx.set_native_stack_here(cx.stack_remaining());
    let ptr = NonNull::from(&mut *cx).cast::<Cx<'static>>();
    ctx.proc.cx = Some(CxPtr(ptr));
    let r = f(ctx);
    ctx.proc.cx = prev_cx;
    ctx.pid = prev_pid;
    ctx.owner = prev_owner;
    ctx.stack_limit = prev_limit;
    r
}

/// The preemption hook: lets other processes run; a process told to exit unwinds.
pub(crate) fn preempt(ctx: &mut Ctx) -> Result<(), Unwind> {
    match cx_of(ctx) {
        Some(cx) => cx.yield_now().map_err(|e| Unwind::Exit(e.0.to_value())),
        None => Ok(()),
    }
}

/// The actor system of one `Interpreter`: the runtime handle, the context pool, class locks and the
/// node-wide registries of the concurrency utilities.
pub struct ActorSys {
    pub rt: RtHandle,
    pub prog: Arc<Program>,
    /// Boxed: a context is a few hundred bytes, moved in and out of the pool per message.
    #[allow(clippy::vec_box)] // the Box is the point: contexts move in and out by pointer
    pool: Mutex<Vec<Box<Ctx>>>,
    class_locks: Mutex<HashMap<usize, (ClassRef, Arc<ProcLock>)>>,
    /// The current transcript (`TranscriptStream current`).
    pub transcript: Mutex<Option<ProcRef>>,
    /// The standard-output transcript.
    pub stdout_transcript: Mutex<Option<ProcRef>>,
    /// AtomicCounter values by name.
    pub counters: Mutex<HashMap<Sym, Arc<AtomicI64>>>,
    /// The supervisors of this runtime.
    pub supervision: crate::runtime::supervisor::Supervision,
    /// Whether the host granted `ProcessNavigation system`; the `bt` CLI does.
    pub privileged: std::sync::atomic::AtomicBool,
    /// This node's name: `nonode@nohost` until distribution exists.
    pub node_name: Sym,
    /// The built-in Node class (a program may declare its own class of that name).
    pub node_class: Option<ClassRef>,
    /// `SystemAnnouncer current` (made on first use; `prims::announce`).
    pub system_announcer: Mutex<Option<Value>>,
    /// This node's process-group memberships (`actor::prims::process_group`).
    pub groups: crate::interp::actor::groups::Groups,
}

impl ActorSys {
    pub fn new(rt: RtHandle, prog: Arc<Program>) -> Arc<ActorSys> {
        let node_class = prog.class_named("Node");
        Arc::new(ActorSys {
            prog,
            pool: Mutex::new(Vec::new()),
            class_locks: Mutex::new(HashMap::new()),
            transcript: Mutex::new(None),
            stdout_transcript: Mutex::new(None),
            counters: Mutex::new(HashMap::new()),
            supervision: crate::runtime::supervisor::Supervision::new(rt.clone()),
            privileged: std::sync::atomic::AtomicBool::new(true),
            node_name: Sym::new(crate::interp::distribution::NO_NODE),
            node_class,
            system_announcer: Mutex::new(None),
            groups: Default::default(),
            rt,
        })
    }

    /// A context for a process run (from the pool, or a new small one).
    pub fn take_ctx(self: &Arc<Self>) -> Box<Ctx> {
        // The one kept by this worker thread first (no lock), then the shared pool.
        let mine = |c: &Ctx| c.proc.sys.as_ref().is_some_and(|s| Arc::ptr_eq(s, self));
        let kept = self.rt.worker_local_take::<Ctx>(mine);
        let mut c = kept.or_else(|| self.pool.lock().pop()).unwrap_or_else(|| {
            let mut c = Box::new(Ctx::with_sizes(self.prog.clone(), POOLED_CACHE, 64, 16));
            c.proc.sys = Some(self.clone());
            c
        });
        // An embedder's limits (`Program::ctx_hook`) bind each run of a pooled context.
        if let Some(make) = self.prog.ctx_hook.get() {
            let step = make(None, &mut c.preempt);
            c.restart_budget(step);
        }
        c
    }

    /// Gives a context back after a run.
    pub fn put_ctx(&self, mut c: Box<Ctx>) {
        c.stack.clear();
        c.cells.clear();
        c.acts.clear();
        c.depth = 0;
        c.actor_fields.clear();
        c.proc.relays.clear();
        if c.preempt.take().is_some() {
            c.restart_budget(DEFAULT_BUDGET);
        }
        let Some(c) = self.rt.worker_local_put(c) else {
            return;
        };
        let mut p = self.pool.lock();
        if p.len() < POOL_MAX {
            p.push(c);
        }
    }

    /// Breaks the reference cycles (pooled contexts hold the system) before the runtime
    /// shuts down.
    pub fn shutdown(&self) {
        self.pool.lock().clear();
        *self.transcript.lock() = None;
        *self.stdout_transcript.lock() = None;
        self.class_locks.lock().clear();
        *self.system_announcer.lock() = None;
    }
}

/// The actor system of the context's Interpreter, or a `runtime_error` outside one.
pub fn sys_of(ctx: &Ctx) -> Result<Arc<ActorSys>, Unwind> {
    ctx.proc
        .sys
        .clone()
        .ok_or_else(|| ctx.err(ErrorKind::RuntimeError, "no actor runtime in this context"))
}

/// The running process's context, or a `runtime_error` outside a process.
pub fn need_cx<'a>(ctx: &'a mut Ctx) -> Result<&'a mut Cx<'a>, Unwind> {
    if ctx.proc.cx.is_none() {
        return Err(ctx.err(ErrorKind::RuntimeError, "not running in an actor process"));
    }
    match cx_of(ctx) {
        Some(cx) => Ok(cx),
        None => unreachable!("checked above"),
    }
}

/// The class-state lock of class `c` (one per class, created on first use).
pub(crate) fn class_lock(ctx: &Ctx, c: &ClassRef) -> Arc<ProcLock> {
    let Some(sys) = ctx.proc.sys.as_ref() else {
        return Arc::new(ProcLock::new());
    };
    let key = Arc::as_ptr(c) as usize;
    sys.class_locks
        .lock()
        .entry(key)
        .or_insert_with(|| (c.clone(), Arc::new(ProcLock::new())))
        .1
        .clone()
}

/// Takes `lock` for the running process (suspending while another process holds it).
pub(crate) fn lock_proc<'l>(
    ctx: &mut Ctx,
    lock: &'l ProcLock,
) -> Result<ProcLockGuard<'l>, Unwind> {
    match cx_of(ctx) {
        Some(cx) => lock.lock(cx).map_err(|e| Unwind::Exit(e.0.to_value())),
        None => Err(ctx.err(ErrorKind::RuntimeError, "not running in an actor process")),
    }
}

/// Runs `f` in a fresh context attached to `cx` (callbacks, timers, monitors); the context
/// goes back to the pool afterwards.
pub fn with_fresh_ctx<R>(sys: &Arc<ActorSys>, cx: &mut Cx<'_>, f: impl FnOnce(&mut Ctx) -> R) -> R {
    let mut ctx = sys.take_ctx();
    let r = in_process(&mut ctx, cx, f);
    sys.put_ctx(ctx);
    r
}

/// Writes a line to the runtime log (rate-limited per call site; `base::log`).
#[track_caller]
pub fn cx_log(ctx: &mut Ctx, line: &str) {
    match cx_of(ctx) {
        Some(cx) => cx.log(line),
        None => bt_base::base::log::warn(line),
    }
}

// Relay homes: the part of non-local return through actor sends (`actor::relay`) that a
// context holds while it handles a message.

/// How deep inside collection arguments blocks get relay homes (as deep as
/// `actor::transfer::transfer_in` copies).
pub(crate) const RELAY_DEPTH: usize = 24;

/// The relay homes live while a message is handled: those of the blocks that arrived as
/// direct arguments, found when the message starts, and those of blocks inside its
/// collection arguments (Lists, Arrays, Queues, Tuples, Dictionary values, Value fields),
/// looked for only when a relay home is asked about (a `^` to one, or passing such a block
/// on) — so a message with a large collection argument is not walked for them.
#[derive(Default)]
pub struct Relays(pub(crate) Vec<Held>);

/// One entry of [`Relays`] (one vector: a message without blocks or collections costs what
/// a list of homes did).
pub(crate) enum Held {
    Home(u64),
    Nested(Value),
}

impl Relays {
    /// Is relay home `home` live in this message?
    pub fn contains(&self, home: &u64) -> bool {
        self.0.iter().any(|h| match h {
            Held::Home(x) => x == home,
            Held::Nested(v) => holds_relay(v, *home),
        })
    }

    /// Adds a relay home live for the whole message (a remote call's, `crate::dist::peer`).
    pub fn push(&mut self, home: u64) {
        self.0.push(Held::Home(home));
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Does `v` hold (up to [`RELAY_DEPTH`] levels down) a block for which `p` holds?
pub(crate) fn holds_block(v: &Value, d: usize, p: &dyn Fn(&Closure) -> bool) -> bool {
    if d > RELAY_DEPTH {
        return false;
    }
    let each = |x: &Value| holds_block(x, d + 1, p);
    match v {
        Value::Block(c) => p(c),
        Value::List(l) | Value::Queue(l) => l.iter().any(each),
        Value::Array(l) => l.iter().any(each),
        Value::Tuple(t) => t.iter().any(each),
        Value::Dict(m) => m.values().any(each),
        Value::Object(i) => i.fields.iter().any(each),
        _ => false,
    }
}

/// Does `v` hold a block whose home is relay home `home`?
fn holds_relay(v: &Value, home: u64) -> bool {
    holds_block(v, 0, &|c| c.home == home)
}
