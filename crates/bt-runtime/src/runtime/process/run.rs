//! A process run: the coroutine body a worker starts for a process with work. It handles
//! control signals first, then messages until the mailbox is empty (answering each sync
//! caller), or runs a task's closure once; a stop, an exit the handler asked for or a panic
//! ends the process here (`process::finish`). A preempted run yields inside it (`Cx::tick`)
//! and continues where it was.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::runtime::spin::ProcGuard;

use super::{
    fail_envelopes, finish, panic_message, Behaviour, Claimed, Envelope, Inner, ProcRef, Sched,
};
use crate::runtime::cx::Cx;
use crate::runtime::sched::Shared;
use crate::runtime::types::{CallError, ExitReason, Message, Signal};
use crate::runtime::waiter::Waiter;
use crate::value::Value;

enum Next {
    Signal(Signal),
    /// A message, and whether its caller waits for a reply (the reply waiter is `current`).
    Msg(Message, bool),
    Stop(ExitReason),
    Done,
}

/// The coroutine body of a process run: handle control signals and messages until the
/// mailbox is empty, or run the task closure once. Never unwinds (panics become crashes).
/// `first`: the behaviour and first message a sync call claimed ([`enqueue_call`]).
pub(crate) fn run_body(cx: &mut Cx<'_>, first: Option<Claimed>) {
    let p = cx.me();
    let shared = cx.shared();
    if let Some((b, msg)) = first {
        // Killed since the claim: the exit answered the caller already.
        if !p.is_alive() {
            return;
        }
        return actor_loop(cx, shared, p, b, None, Some(msg));
    }
    // An actor's first message is taken in the same lock that takes its behaviour.
    let mut g = p.0.inner.lock();
    if g.reason.is_some() {
        return;
    }
    g.sched = Sched::Running;
    if let Some(b) = g.body.take() {
        return actor_loop(cx, shared, p, b, Some(g), None);
    }
    let task = g.extra.as_mut().and_then(|x| x.task.take());
    drop(g);
    match task {
        None => {}
        Some(f) => {
            let reason = match catch_unwind(AssertUnwindSafe(|| f(cx))) {
                Ok(()) => cx.requested_exit().unwrap_or(ExitReason::Normal),
                Err(e) => ExitReason::Panic(panic_message(&e).into()),
            };
            finish(shared, p, reason);
        }
    }
}

/// What an actor does next (under its lock): control signals first, then the mailbox.
/// `None` when there is nothing to do (the caller makes the process idle).
#[inline(always)]
fn next_of(g: &mut Inner) -> Option<Next> {
    Some(if g.reason.is_some() {
        Next::Done
    } else if let Some(s) = g.pop_control() {
        g.current = None;
        Next::Signal(s)
    } else {
        match g.mailbox.pop_front()? {
            Envelope::User { msg, reply } => {
                let sync = reply.is_some();
                g.current = reply;
                Next::Msg(msg, sync)
            }
            Envelope::Stop(r) => {
                g.current = None;
                Next::Stop(r)
            }
        }
    })
}

pub(super) fn actor_loop(
    cx: &mut Cx<'_>,
    shared: &Arc<Shared>,
    p: &ProcRef,
    mut b: Box<dyn Behaviour>,
    mut locked: Option<ProcGuard<'_, Inner>>,
    mut first: Option<Message>,
) {
    // The reply to the message just handled: its waiter is still `current` (the only
    // reference), taken and completed with the lock the next step takes anyway.
    let mut answer: Option<Result<Value, Value>> = None;
    loop {
        let (next, replied) = if let Some(msg) = first.take() {
            // A claimed sync call (`run_body`): its waiter is `current` already.
            (Next::Msg(msg, true), None)
        } else {
            let mut g = match locked.take() {
                Some(g) => g,
                None => p.0.inner.lock(),
            };
            let replied = if answer.is_some() {
                g.current.take()
            } else {
                None
            };
            match next_of(&mut g) {
                Some(n) => (n, replied),
                None => {
                    g.current = None;
                    g.mailbox.release();
                    g.sched = Sched::Idle;
                    g.body = Some(b);
                    drop(g);
                    if let Some(a) = answer {
                        answer_with(shared, replied, a);
                    }
                    return;
                }
            }
        };
        if let Some(a) = answer.take() {
            answer_with(shared, replied, a);
        }
        match next {
            Next::Done => return,
            Next::Signal(s) => {
                if let Err(e) = catch_unwind(AssertUnwindSafe(|| b.signal(cx, s))) {
                    finish(shared, p, ExitReason::Panic(panic_message(&e).into()));
                    return;
                }
                if let Some(reason) = cx.requested_exit() {
                    // `exit_self` from a signal handler (a supervisor giving up).
                    stop_after_message(cx, shared, p, &mut b, reason);
                    return;
                }
            }
            Next::Stop(reason) => {
                stop_now(cx, shared, p, &mut b, reason);
                return;
            }
            Next::Msg(msg, sync) => {
                let selector = msg.selector;
                let r = catch_unwind(AssertUnwindSafe(|| b.handle(cx, msg)));
                match r {
                    Err(e) => {
                        finish(shared, p, ExitReason::Panic(panic_message(&e).into()));
                        return;
                    }
                    Ok(Ok(v)) => {
                        if sync {
                            answer = Some(Ok(v));
                        }
                    }
                    Ok(Err(e)) => match sync {
                        true => {
                            // A message that fails and ends this process (an embedder's
                            // limit crashing the actor): the process stops before its caller
                            // sees the error, as an Erlang caller sees a crashed server dead
                            // when its monitor fires.
                            if let Some(reason) = cx.requested_exit() {
                                // This caller gets the error, not the `ActorDead` the stop
                                // gives the message being handled.
                                let w = p.0.inner.lock().current.take();
                                stop_after_message(cx, shared, p, &mut b, reason);
                                answer_with(shared, w, Err(e));
                                return;
                            }
                            answer = Some(Err(e));
                        }
                        false => {
                            if catch_unwind(AssertUnwindSafe(|| b.cast_failed(cx, selector, e)))
                                .is_err()
                            {
                                cx.log("cast_failed hook panicked");
                            }
                        }
                    },
                }
                // The reply goes out now (not with the next lock) before a stop, which fails
                // whatever is `current`, and before a preemption.
                if answer.is_some() && (cx.exit_requested() || cx.tick_due()) {
                    let w = p.0.inner.lock().current.take();
                    if let Some(a) = answer.take() {
                        answer_with(shared, w, a);
                    }
                }
                if let Some(reason) = cx.requested_exit() {
                    stop_after_message(cx, shared, p, &mut b, reason);
                    return;
                }
                if cx.tick().is_err() {
                    return; // killed while preempted: finish already ran
                }
            }
        }
    }
}

/// Completes the reply waiter `w` (taken from `current`; none after a kill) with a
/// message's result (`Err`: the exception the caller re-raises).
#[inline(always)]
fn answer_with(shared: &Shared, w: Option<Arc<Waiter>>, answer: Result<Value, Value>) {
    if let Some(w) = w {
        w.answer(shared, answer.map_err(CallError::Raised));
    }
}

/// Ends the process after a message or signal that asked to exit: messages still queued
/// count as arriving after the stop (their callers get `ActorDead`).
pub(super) fn stop_after_message(
    cx: &mut Cx<'_>,
    shared: &Shared,
    p: &ProcRef,
    b: &mut Box<dyn Behaviour>,
    reason: ExitReason,
) {
    let rest = {
        let mut g = p.0.inner.lock();
        g.accepting = false;
        std::mem::take(&mut g.mailbox)
    };
    fail_envelopes(shared, rest);
    stop_now(cx, shared, p, b, reason);
}

fn stop_now(
    cx: &mut Cx<'_>,
    shared: &Shared,
    p: &ProcRef,
    b: &mut Box<dyn Behaviour>,
    reason: ExitReason,
) {
    let reason = match catch_unwind(AssertUnwindSafe(|| b.terminate(cx, &reason))) {
        Ok(()) => reason,
        Err(e) => ExitReason::Panic(panic_message(&e).into()),
    };
    finish(shared, p, reason);
}
