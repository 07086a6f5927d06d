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
//! * The reduction counter of the `Ctx` drives preemption (`Ctx::tick` yields the process
//!   it reaches through [`ProcSlot::cx`]), and the native stack limit is taken from the
//!   coroutine ([`Cx::stack_remaining`]).
//!
//! The data — [`ProcSlot`], [`ActorSys`], the relay homes — is `process/slot.rs` (a field of
//! `Ctx`, below the evaluator); this file is what runs a context in a process.
//!
//! Layer: the evaluator's core types, above `eval.rs` (it names `Ctx`). It names the
//! evaluator, the program and the runtime, never the actor glue above it (`interp::actor`:
//! handles, sends, behaviours), which re-exports what is here for its callers.

// unsafe: an actor's handle is lent to its context for one run, uncounted (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, Unwind};
use crate::interp::program::Program;
use crate::runtime::{Cx, ProcLock, ProcLockGuard, RtHandle};
use crate::value::{ClassRef, Sym, Value};

mod slot;

pub use crate::interp::distribution::Done;
pub(crate) use slot::{holds_block, Held, SpawnFacts, RELAY_DEPTH};
pub use slot::{ActorSys, ProcSlot, Relays};
use slot::{CxPtr, Lent};

/// The evaluator's reductions between preemptions (`Ctx::new`).
pub(crate) const DEFAULT_BUDGET: u32 = 4000;
/// Pooled contexts kept for reuse.
const POOL_MAX: usize = 256;
/// Method-cache entries of a pooled (actor) context: small, so 10,000 suspended handlers
/// stay cheap. Must be a power of two.
const POOLED_CACHE: usize = 128;

/// The running process's runtime context, if the context runs in a process.
#[inline]
pub fn cx_of(ctx: &mut Ctx) -> Option<&mut Cx<'_>> {
    ctx.proc.cx()
}

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
    attach(ctx, cx);
    let r = f(ctx);
    ctx.proc.cx = prev_cx;
    ctx.pid = prev_pid;
    ctx.owner = prev_owner;
    ctx.stack_limit = prev_limit;
    r
}

/// [`in_process`] for a context whose every run is in a process attached here: the main
/// program's context (each job of `MainActor`) and a pooled context (an actor's message, a
/// callback). The pid, owner and stack limit are set for the run and left set after it
/// (the next run sets them again; a pooled context taken outside a process gets them reset:
/// [`ActorSys::take_ctx`]), only the pointer to the run's `Cx` is cleared. The stack limit
/// is only computed again when the run starts from another place or on another stack than
/// the last one (`Ctx::stack_for`): the guest's kept runner enters every job from the same
/// frame.
#[inline(always)]
pub fn in_main_process<R>(ctx: &mut Ctx, cx: &mut Cx<'_>, f: impl FnOnce(&mut Ctx) -> R) -> R {
    ctx.pid = cx.pid().number;
    ctx.owner = owner_token(cx);
    let marker = 0u8;
    let here = (&marker as *const u8 as usize, cx.stack_floor());
    if ctx.stack_for != here {
        ctx.set_native_stack_here(cx.stack_remaining());
        ctx.stack_for = here;
    }
    let ptr = NonNull::from(&mut *cx).cast::<Cx<'static>>();
    ctx.proc.cx = Some(CxPtr(ptr));
    let r = f(ctx);
    ctx.proc.cx = None;
    r
}

/// A pooled context's run in the process of `cx` (see [`in_main_process`]).
#[inline(always)]
pub(crate) fn in_pooled_process<R>(
    ctx: &mut Ctx,
    cx: &mut Cx<'_>,
    f: impl FnOnce(&mut Ctx) -> R,
) -> R {
    in_main_process(ctx, cx, f)
}

/// Sets `ctx` to run in the process of `cx`: its pid, owner token, native stack and the
/// pointer to the run's `Cx`.
#[inline(always)]
fn attach(ctx: &mut Ctx, cx: &mut Cx<'_>) {
    ctx.pid = cx.pid().number;
    ctx.owner = owner_token(cx);
    ctx.set_native_stack_here(cx.stack_remaining());
    let ptr = NonNull::from(&mut *cx).cast::<Cx<'static>>();
    ctx.proc.cx = Some(CxPtr(ptr));
}

/// [`in_process`] left by a panic (the run's `Cx` is gone): the context no longer points
/// at it.
pub fn left_by_panic(ctx: &mut Ctx) {
    ctx.proc.cx = None;
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

    /// A context for a run outside any process (from the pool, or a new small one): the
    /// pid, owner and stack limit a pooled context's last run left (`in_pooled_process`)
    /// are reset to those of a context of no process.
    pub fn take_ctx(self: &Arc<Self>) -> Box<Ctx> {
        // The one kept by this worker thread first (no lock), then the shared pool.
        let kept = self.rt.worker_local_take::<Ctx>(|c| self.owns(c));
        let mut c = self.ctx_or_pooled(kept);
        c.pid = 0;
        c.owner = 0;
        c.stack_limit = 0;
        // The next run in a process computes its stack limit again.
        c.stack_for = (0, 0);
        c
    }

    /// [`ActorSys::take_ctx`] in the run of `cx`: the context its pool worker keeps
    /// (`Cx::take_local`: no thread-local look-up), else one from the pool.
    #[inline]
    pub fn take_ctx_in(self: &Arc<Self>, cx: &Cx<'_>) -> Box<Ctx> {
        let kept = cx.take_local::<Ctx>(|c| self.owns(c));
        self.ctx_or_pooled(kept)
    }

    /// Whether `c` is one of this system's contexts.
    #[inline(always)]
    fn owns(self: &Arc<Self>, c: &Ctx) -> bool {
        c.proc.sys.as_ref().is_some_and(|s| Arc::ptr_eq(s, self))
    }

    #[inline(always)]
    fn ctx_or_pooled(self: &Arc<Self>, kept: Option<Box<Ctx>>) -> Box<Ctx> {
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
    pub fn put_ctx(&self, c: Box<Ctx>) {
        let c = Self::cleared(c);
        if let Some(c) = self.rt.worker_local_put(c) {
            self.pool_ctx(c);
        }
    }

    /// [`ActorSys::put_ctx`] in the run of `cx` (kept by its pool worker: `Cx::keep_local`).
    #[inline]
    pub fn put_ctx_in(&self, cx: &Cx<'_>, c: Box<Ctx>) {
        let c = Self::cleared(c);
        if let Some(c) = cx.keep_local(c) {
            self.pool_ctx(c);
        }
    }

    #[inline(always)]
    fn cleared(mut c: Box<Ctx>) -> Box<Ctx> {
        c.stack.clear();
        c.cells.clear();
        c.acts.clear();
        c.depth = 0;
        c.actor_fields.clear();
        c.proc.relays.clear();
        c.state_scopes.clear();
        if c.preempt.take().is_some() {
            c.restart_budget(DEFAULT_BUDGET);
        }
        c
    }

    #[cold]
    fn pool_ctx(&self, c: Box<Ctx>) {
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
    let mut ctx = sys.take_ctx_in(cx);
    let r = in_pooled_process(&mut ctx, cx, f);
    sys.put_ctx_in(cx, ctx);
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
