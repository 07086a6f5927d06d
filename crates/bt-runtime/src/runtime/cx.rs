//! The process context: what code running inside a process uses to talk to the runtime.
//!
//! A `&mut Cx` is lent to every handler, task closure and callback for the duration of the
//! call; it carries the coroutine's yielder, so sync calls, sleeps, joins and preemption
//! suspend the coroutine (never the OS thread). It is not `Send` and cannot outlive the
//! call, so no reference to it survives a suspension on another thread.
//!
//! The struct and its accessors are defined in `process.rs`, next to the `Behaviour` whose
//! handlers take it (re-exported here); this file has its operations.
//!
//! `unsafe`: a wait refers to its own reply slot by address (`WaitRef`), which the process
//! record keeps alive (no reference count changes per call).
#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use corosensei::Yielder;

use crate::runtime::process::{enqueue_call, ProcRef};
use crate::runtime::sched::RtHandle;
use crate::runtime::sched::{Handoff, Suspend};
use crate::runtime::stack::{approx_sp, RED_ZONE};
use crate::runtime::types::{CallError, ExitReason, Exiting, Message, Pid, Timeout};
use crate::runtime::waiter::{
    chain_contains, chain_of, RemoteChain, WaitRef, WaitedBy, Waiter, Wake,
};
use crate::value::Value;

pub use crate::runtime::process::Cx;

impl<'y> Cx<'y> {
    pub(crate) fn new(
        y: &'y Yielder<(), Suspend>,
        handoff: Option<&'y Handoff>,
        rt: &'y RtHandle,
        me: &'y ProcRef,
        wake: Wake,
        stack_low: usize,
        stack_top: usize,
    ) -> Cx<'y> {
        // 0 only under the deterministic scheduler: a budget drawn from its PRNG.
        let budget = match rt.0.cfg.reductions {
            0 => rt.0.sim_budget(),
            r => r,
        };
        Cx {
            y,
            handoff,
            rt,
            me,
            wake,
            reductions: 0,
            budget,
            floor: stack_low + RED_ZONE,
            top: stack_top,
            deepest: Cell::new(stack_top),
            exit: None,
            lent: false,
            held: false,
        }
    }

    /// Before every suspension of the run: a run on a handle its claiming caller lent
    /// (`RunRef::lent`) takes a counted one, since the caller may resume and drop its own
    /// once this run is suspended. Nothing on the usual round trip, whose run ends without
    /// suspending in between.
    #[inline(always)]
    fn hold(&mut self) {
        if self.lent {
            self.hold_now();
        }
    }

    #[cold]
    #[inline(never)]
    fn hold_now(&mut self) {
        self.lent = false;
        self.held = true;
        // The count the runner's handle adopts when the run is over (`RunRef::adopt`).
        std::mem::forget(self.me.clone());
    }

    /// Whether this run took a count of its own on a lent handle (`Cx::hold`).
    pub(crate) fn held(&self) -> bool {
        self.held
    }

    /// The reply waiter of the message being handled (the head of this process's waiting
    /// chain), kept in the process record (`Inner::current`) only: read under its lock by
    /// the calls that need it.
    fn current(&self) -> Option<Arc<Waiter>> {
        self.me.0.inner.lock().current.clone()
    }

    /// Lowest stack pointer observed (for trimming the stack when it returns to the pool).
    pub(crate) fn deepest(&self) -> usize {
        self.deepest.get()
    }

    /// Whether the process has been told to exit (killed, exit signal, runtime shutdown).
    pub fn exiting(&self) -> Option<ExitReason> {
        if self.me.0.exited.load(Ordering::Acquire) {
            self.me.exit_reason()
        } else {
            None
        }
    }

    fn check_alive(&self) -> Result<(), Exiting> {
        match self.exiting() {
            Some(r) => Err(Exiting(r)),
            None => Ok(()),
        }
    }

    /// The reduction hook: counts one reduction and, every `Config::reductions`, lets other
    /// processes run (the coroutine yields; its thread does not block). Errs when the
    /// process must exit: the caller unwinds.
    #[inline]
    pub fn tick(&mut self) -> Result<(), Exiting> {
        self.reductions += 1;
        if self.reductions >= self.budget {
            self.yield_now()
        } else {
            Ok(())
        }
    }

    /// Whether the next [`Cx::tick`] yields.
    #[inline]
    pub(crate) fn tick_due(&self) -> bool {
        self.reductions + 1 >= self.budget
    }

    /// Whether `exit_self` asked this process to exit (not taken: see `requested_exit`).
    #[inline]
    pub(crate) fn exit_requested(&self) -> bool {
        self.exit.is_some()
    }

    /// Yields to other runnable processes now.
    pub fn yield_now(&mut self) -> Result<(), Exiting> {
        self.reductions = 0;
        self.check_alive()?;
        self.note_sp();
        self.hold();
        self.y.suspend(Suspend::Yield);
        self.check_alive()
    }

    /// Native stack left before the red zone above the guard page. The interpreter checks it
    /// (with its depth limit) and raises `stack_overflow` when it gets low, so the guard page
    /// is never reached.
    #[inline]
    pub fn stack_remaining(&self) -> usize {
        let sp = approx_sp();
        if sp < self.deepest.get() {
            self.deepest.set(sp);
        }
        sp.saturating_sub(self.floor)
    }

    /// The lowest address the run's stack may be used down to (its red zone's top): the
    /// same for every run on one stack.
    #[inline]
    pub fn stack_floor(&self) -> usize {
        self.floor
    }

    /// Before a suspension: notes the stack pointer, and how deep the coroutine's stack is
    /// in use for the worker to charge (`Worker::charge_stack`).
    fn note_sp(&self) {
        let _ = self.stack_remaining();
        let used = self.top.saturating_sub(self.deepest.get());
        crate::runtime::sched::SUSPEND_DEPTH.with(|c| c.set(used));
    }

    fn deadline(&self, t: Timeout) -> Option<u64> {
        match t {
            Timeout::Ms(ms) => {
                let clock = &self.rt.0.clock;
                Some(
                    clock
                        .now_ms()
                        .saturating_add(ms)
                        .saturating_add(clock.slack_ms()),
                )
            }
            Timeout::Infinity => None,
        }
    }

    /// Suspends until `w` completes (or the deadline passes: `Timeout`).
    pub(crate) fn wait(
        &mut self,
        w: &Arc<Waiter>,
        deadline: Option<u64>,
    ) -> Result<Value, CallError> {
        {
            let mut g = self.me.0.inner.lock();
            if let Some(r) = &g.reason {
                return Err(CallError::Exiting((**r).clone()));
            }
            g.waiting.set(w.clone());
        }
        self.suspend_on(w, deadline)
    }

    /// [`Cx::wait`] for a waiter already registered as this process's `waiting`.
    fn suspend_on(&mut self, w: &Arc<Waiter>, deadline: Option<u64>) -> Result<Value, CallError> {
        if w.set_target(self.wake) {
            self.note_sp();
            // SAFETY: `w` is this process's `waiting` (registered by `Cx::wait`), which only
            // this process replaces, after the suspension; the borrow keeps it alive too.
            let w = unsafe { WaitRef::new(w) };
            self.hold();
            self.y.suspend(Suspend::Wait {
                timeout: deadline.map(|d| (d, w)),
            });
        }
        self.reductions = 0;
        w.take()
    }

    /// Whether a sync call to `target` from here would deadlock: the target is this process
    /// or is waiting (directly or transitively) on it.
    pub fn would_deadlock(&self, target: Pid) -> bool {
        target == self.pid() || chain_contains(self.current().as_ref(), target)
    }

    /// A link saying "this process waits on the holder" (its waiting chain behind it), for
    /// a task it starts and then waits for without a call (`Parallel`, `announceAndWait:`).
    pub fn waited_by_me(&self) -> WaitedBy {
        WaitedBy(Waiter::new(Some(self.pid()), self.current()))
    }

    /// Makes `w` the head of this task's waiting chain (a task started by a process that
    /// waits on it, [`Cx::waited_by_me`]): a sync call back to that process is then a cycle.
    /// Only for task processes (an actor's chain is its current message's).
    pub fn set_waited_by(&mut self, w: WaitedBy) {
        self.me.0.inner.lock().current = Some(w.0);
    }

    /// The processes waiting (directly or transitively) on the message this process is
    /// handling, nearest first, and the part of that chain on other nodes: what a remote call
    /// carries so that the callee's node can detect a cycle through nodes.
    pub fn waiting_chain(&self) -> (Vec<Pid>, Option<Arc<RemoteChain>>) {
        chain_of(self.current().as_ref())
    }

    /// A synchronous call: queues `msg` for `to` and suspends until the reply, the timeout,
    /// or the target's death. A target already in this process's waiting chain fails at once
    /// with `Deadlock` without sending (so does a call to self: run self-sends directly).
    pub fn call(&mut self, to: &ProcRef, msg: Message, t: Timeout) -> Result<Value, CallError> {
        self.check_alive()?;
        if to.pid() == self.pid() {
            return Err(CallError::Deadlock);
        }
        // The reply slot: the one this process waited on last time when nobody else holds
        // it any more (the usual case: the callee dropped it when it answered), else a new
        // one. Registered as `waiting` (what a kill completes) in the same lock, which also
        // holds the waiting chain's head (`current`). The record's reference is the only
        // one this process uses: the call refers to the slot by address (`WaitRef`), and
        // the callee gets the one counted reference it keeps.
        let (w, reply) = {
            let mut g = self.me.0.inner.lock();
            if let Some(r) = &g.reason {
                return Err(CallError::Exiting((**r).clone()));
            }
            if chain_contains(g.current.as_ref(), to.pid()) {
                return Err(CallError::Deadlock);
            }
            let g = &mut *g;
            // The last call's slot when nobody else holds it, with the count its answer
            // handed back as the callee's reference (`Waiting::reuse`: no count taken);
            // the chain's head is usually the one of the last call (the same message still
            // being handled): then nothing to re-count either.
            let reply = match g.waiting.reuse(self.me.0.pid, &g.current, self.wake) {
                Some(reply) => reply,
                None => {
                    let w = Waiter::new_call(Some(self.me.0.pid), g.current.clone(), self.wake);
                    let reply = w.clone();
                    g.waiting.set(w);
                    reply
                }
            };
            // SAFETY: `reply`'s waiter is this process's `waiting` (above), which only this
            // process replaces (at its next wait, after this call has returned); an exit
            // completes it in place. The record outlives this call (`self.me`).
            let r = unsafe { WaitRef::new(&reply) };
            (r, reply)
        };
        // `Some`: the target was idle and this pool worker runs it next (the suspension
        // below hands it over: no queue traffic).
        let next = match enqueue_call(self.shared(), to, msg, reply, self.handoff.is_some()) {
            Ok(next) => next,
            Err(()) => return Err(CallError::ActorDead),
        };
        if let (Some(n), Some(h)) = (next, self.handoff) {
            // Switch to the callee's run directly (`Handoff::run_callee`), else hand it
            // to the worker with the suspension below.
            match h.run_callee(self.shared(), n, self.wake) {
                // The reply is in and this coroutine was next: no suspension. The call
                // counts no reductions (the preemption budget runs on).
                Ok(true) => return w.get().take(),
                Ok(false) => {}
                Err(n) => {
                    // The worker took the last one (`drive`): no drop call for the `None`
                    // replaced.
                    if let Some(old) = h.next.replace(Some(n)) {
                        drop(old);
                    }
                }
            }
        }
        // The timeout starts when this process starts to wait: after the first stretch of
        // a callee run directly above (on this thread, during which no timeout could fire
        // anyway), so a round trip that needs no wait reads no clock (docs/decisions.md).
        let d = self.deadline(t);
        // The waker is registered already (above): suspend unconditionally; a reply that
        // came first has queued this coroutine's resumption on this worker.
        self.note_sp();
        self.hold();
        self.y.suspend(Suspend::Wait {
            timeout: d.map(|d| (d, w)),
        });
        self.reductions = 0;
        w.get().take()
    }

    /// An asynchronous send. FIFO with every other send from this process to `to`. Answers
    /// false if the target no longer accepts messages (the message is dropped).
    pub fn cast(&mut self, to: &ProcRef, msg: Message) -> bool {
        self.rt.cast(to, msg)
    }

    /// Graceful stop of another process; answers once it has exited (`Ok` at once if it
    /// already has). On self it takes effect after the current message (`stop_self`).
    pub fn stop(&mut self, to: &ProcRef, t: Timeout) -> Result<(), CallError> {
        self.stop_with(to, ExitReason::Normal, t)
    }

    /// [`Cx::stop`] with another exit reason (a supervisor stops its children with
    /// `shutdown`; `terminate` sees that reason).
    pub fn stop_with(
        &mut self,
        to: &ProcRef,
        reason: ExitReason,
        t: Timeout,
    ) -> Result<(), CallError> {
        self.check_alive()?;
        if to.pid() == self.pid() {
            self.exit_self(reason);
            return Ok(());
        }
        let w = Waiter::new(Some(self.pid()), self.current());
        if !self.rt.request_stop(to, Some(w.clone()), reason) {
            return Ok(());
        }
        let d = self.deadline(t);
        self.wait(&w, d).map(|_| ())
    }

    /// Stop this process after the current message: `terminate` runs, the exit reason is
    /// `normal`, and messages still queued are treated as arriving after the stop.
    pub fn stop_self(&mut self) {
        self.exit_self(ExitReason::Normal);
    }

    /// Like [`Cx::stop_self`] with another exit reason. In a task process the reason applies
    /// when the closure returns.
    pub fn exit_self(&mut self, reason: ExitReason) {
        if self.exit.is_none() {
            self.exit = Some(reason);
        }
    }

    pub(crate) fn requested_exit(&mut self) -> Option<ExitReason> {
        self.exit.take()
    }

    /// Suspends this process until the [`Completion`] handed to `start` fires (from any
    /// thread: network I/O, another runtime) or the timeout passes (`CallError::Timeout`).
    /// Other processes keep running on this worker meanwhile.
    pub fn wait_external(
        &mut self,
        t: Timeout,
        start: impl FnOnce(Completion),
    ) -> Result<Value, CallError> {
        self.check_alive()?;
        let w = Waiter::new(None, None);
        start(Completion {
            w: w.clone(),
            rt: self.rt.clone(),
        });
        let d = self.deadline(t);
        self.wait(&w, d)
    }

    /// Suspends this process for `ms` milliseconds of the runtime clock.
    pub fn sleep(&mut self, ms: u64) -> Result<(), Exiting> {
        self.check_alive()?;
        if ms == 0 {
            return self.yield_now();
        }
        let w = Waiter::new(None, None);
        let d = self.deadline(Timeout::Ms(ms));
        match self.wait(&w, d) {
            Err(CallError::Exiting(r)) => Err(Exiting(r)),
            _ => Ok(()),
        }
    }
}

/// Resumes a process suspended in [`Cx::wait_external`]. Only the first completion counts
/// (a later one, or one after the timeout, is ignored).
#[derive(Clone)]
pub struct Completion {
    w: Arc<Waiter>,
    rt: RtHandle,
}

impl Completion {
    pub fn complete(&self, v: Value) {
        self.w.complete(&self.rt.0, Ok(v));
    }

    /// Whether it has fired (or the wait has timed out): a later completion does nothing.
    pub fn is_done(&self) -> bool {
        self.w.is_done()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::runtime::{handler, Config, Cx, Message, Runtime, Timeout};
    use crate::value::Value;

    /// What one process run keeps on its pool worker (`Cx::keep_local`) the next run there
    /// takes (`Cx::take_local`) when it is of the type asked for and fits; a second object
    /// is given back, not kept.
    #[test]
    fn a_pool_worker_keeps_one_object_between_runs() {
        let rt = Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap();
        let h = rt.handle();
        let put = h.spawn_task(|cx| {
            let first = cx.keep_local(Box::new(7u32)).is_none();
            let second = cx.keep_local(Box::new(8u32)).map(|b| *b);
            (first, second)
        });
        assert_eq!(put.join().unwrap(), (true, Some(8)));
        let take = h.spawn_task(|cx| {
            let wrong_type = cx.take_local::<u64>(|_| true).is_none();
            let not_fitting = cx.take_local::<u32>(|v| *v == 8).is_none();
            let kept = cx.take_local::<u32>(|v| *v == 7).map(|b| *b);
            let gone = cx.take_local::<u32>(|_| true).is_none();
            (wrong_type, not_fitting, kept, gone)
        });
        assert_eq!(take.join().unwrap(), (true, true, Some(7), true));
        rt.shutdown();
    }

    /// A handled message's argument vector kept on the pool worker (`Cx::keep_args`) is
    /// the next sync call's there (`Cx::spare_args`), once.
    #[test]
    fn a_pool_worker_keeps_a_spare_argument_vector() {
        let rt = Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap();
        let h = rt.handle();
        let t = h.spawn_task(|cx| {
            let kept = cx.keep_args(Vec::with_capacity(3)).is_ok();
            let first = cx.spare_args().map(|v| v.capacity());
            let second = cx.spare_args().map(|v| v.capacity());
            (kept, first, second)
        });
        let (kept, first, second) = t.join().unwrap();
        assert!(kept);
        assert!(first.is_some_and(|c| c >= 3));
        assert_eq!(second, Some(0));
        rt.shutdown();
    }

    /// A sync call that claims an idle callee lends it its own handle for the run: the run
    /// adds no reference to the process record while it does not suspend (the process
    /// table's and the caller's are all), and takes one of its own before it suspends, so
    /// its record outlives a caller that resumes meanwhile and drops its handle.
    #[test]
    fn a_claimed_run_holds_its_process_only_once_it_suspends() {
        let rt = Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap();
        let h = rt.handle();
        let callee = h.spawn(handler(|cx: &mut Cx<'_>, m: Message| {
            if m.selector.as_str() == "sleep" {
                cx.sleep(1).unwrap();
            }
            Ok(Value::Int(Arc::strong_count(&cx.me().0) as i64))
        }));
        let t = h.spawn_task(move |cx| {
            let mut counts = Vec::new();
            for sel in ["count", "sleep", "count"] {
                match cx.call(&callee, Message::named(sel, Vec::new()), Timeout::Infinity) {
                    Ok(Value::Int(n)) => counts.push(n),
                    other => panic!("{other:?}"),
                }
            }
            counts
        });
        assert_eq!(t.join().unwrap(), vec![2, 3, 2]);
        rt.shutdown();
    }

    /// The references to a sync call's reply slot while the callee handles the message:
    /// the caller's record (`waiting`) and the callee (`current`). The caller itself and
    /// its timeout refer to it by address (`WaitRef`), with a deadline or without. The
    /// same slot serves every call (the answer hands the callee's count back).
    #[test]
    fn a_call_counts_its_reply_slot_twice() {
        let rt = Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap();
        let h = rt.handle();
        // The reply slot's count as the callee sees it (less the callee's own look-up), and
        // its address.
        let callee = h.spawn(handler(|cx: &mut Cx<'_>, _| {
            let w = cx.current().expect("a sync call's reply slot");
            Ok(Value::Tuple(
                vec![
                    Value::Int(Arc::strong_count(&w) as i64 - 1),
                    Value::Int(Arc::as_ptr(&w) as i64),
                ]
                .into(),
            ))
        }));
        let t = h.spawn_task(move |cx| {
            let mut counts = Vec::new();
            let mut slots = std::collections::HashSet::new();
            for t in [Timeout::Ms(60_000), Timeout::Infinity, Timeout::Ms(60_000)] {
                for _ in 0..3 {
                    match cx.call(&callee, Message::named("count", Vec::new()), t) {
                        Ok(Value::Tuple(ref x)) => {
                            counts.push(x[0].as_int().unwrap());
                            slots.insert(x[1].as_int().unwrap());
                        }
                        other => panic!("{other:?}"),
                    }
                }
            }
            (counts, slots.len())
        });
        // One slot serves every call: each answer hands its count back for the next.
        assert_eq!(t.join().unwrap(), (vec![2; 9], 1));
        rt.shutdown();
    }
}
