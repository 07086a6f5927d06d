//! `parallelCollect:` and `parallelCollect:maxConcurrency:`: the block runs
//! for each element in a process of its own (at most `maxConcurrency` at a time) while the
//! caller is suspended (`Cx::wait_external`); the answer is the List of results in element
//! order, or — when some blocks raised — the first failure in element order, raised once
//! every block has finished.
//!
//! Built on [`parallel::spawn_job`](super::parallel::spawn_job), like `Parallel all:`; the
//! collection primitive (`collections::generic`) gathers the elements and calls [`collect`].
//!
//! Decisions where the spec is silent:
//! * Without `maxConcurrency:` every element gets its process at once; the limit must be a
//!   positive Integer (`type_error` otherwise).
//! * A block whose process is killed counts as a failure with kind `actor_dead`; a `^` inside
//!   the block is a `runtime_error` (its home method is in another process).
//! * When the caller itself is killed while it waits, the running blocks are killed and the
//!   ones not yet started never start.
//! * Each block's process carries the caller's waiting chain (as `Parallel all:` does): a
//!   block that sync-sends back to the caller, or to an actor waiting on it, raises
//!   `deadlock_detected` at once instead of a timeout.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use super::collections::common::expected;
use super::parallel::{kill_after_wait, spawn_job, unfinished, waited_job, Job, Outcome};
use crate::interp::actor::send::transfer_in;
use crate::interp::actor::{need_cx, sys_of, ActorSys};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::runtime::{Completion, ProcRef, Timeout};
use crate::value::Value;

/// The `maxConcurrency:` argument: a positive Integer (a huge one means no limit).
pub(crate) fn limit_arg(ctx: &Ctx, v: &Value) -> Result<usize, Unwind> {
    match v {
        Value::Int(n) if *n > 0 => Ok(usize::try_from(*n).unwrap_or(usize::MAX)),
        Value::BigInt(b) if num_traits::Signed::is_positive(&**b) => Ok(usize::MAX),
        other => Err(expected(
            ctx,
            "parallelCollect:maxConcurrency:",
            "a positive Integer",
            other,
        )),
    }
}

/// The shared record of one `parallelCollect:` run.
struct Batch {
    /// The block, ready to cross to another process.
    block: Value,
    /// The caller, waiting on every block's process (a block's sync send back to it,
    /// or to anything waiting on it, closes a cycle and raises `deadlock_detected`).
    by: crate::runtime::WaitedBy,
    /// Elements not started yet, with their index.
    pending: VecDeque<(usize, Value)>,
    outs: Vec<Option<Outcome>>,
    procs: Vec<Option<ProcRef>>,
    remaining: usize,
    /// Set by the caller once it stops waiting: nothing more starts, later outcomes are
    /// ignored.
    closed: bool,
}

/// Runs `block` on each of `elems` in processes of their own, at most `limit` at a time, and
/// answers the results in order or raises the first failure in element order.
pub(crate) fn collect(ctx: &mut Ctx, elems: Vec<Value>, block: &Value, limit: usize) -> EvalResult {
    let n = elems.len();
    if n == 0 {
        return Ok(Value::list([]));
    }
    let sys = sys_of(ctx)?;
    let by = need_cx(ctx)?.waited_by_me();
    let st = Arc::new(Mutex::new(Batch {
        block: transfer_in(ctx, block),
        by,
        pending: elems
            .iter()
            .map(|e| transfer_in(ctx, e))
            .enumerate()
            .collect(),
        outs: (0..n).map(|_| None).collect(),
        procs: vec![None; n],
        remaining: n,
        closed: false,
    }));
    let cx = need_cx(ctx)?;
    let (st2, s2) = (st.clone(), sys.clone());
    let waited = cx.wait_external(Timeout::Infinity, move |c| {
        for _ in 0..limit.min(n) {
            start_next(&s2, &st2, &c);
        }
    });
    let unfinished = {
        let mut g = st.lock();
        g.closed = true;
        g.pending.clear();
        unfinished(&g.procs, &g.outs)
    };
    kill_after_wait(&sys, &unfinished, waited)?;
    let outs = std::mem::take(&mut st.lock().outs);
    let mut results = Vec::with_capacity(n);
    for (i, o) in outs.into_iter().enumerate() {
        match o {
            Some(Outcome::Ok(v)) => results.push(v),
            Some(Outcome::Err(e)) => return Err(Unwind::Error(e)),
            Some(Outcome::Exited(r)) => {
                let r = r.as_sym().map_or("abnormal", |s| s.as_str());
                return Err(ctx.err(
                    ErrorKind::ActorDead,
                    format!(
                        "parallelCollect: the block for element {} exited: {r}",
                        i + 1
                    ),
                ));
            }
            None => {
                return Err(ctx.err(
                    ErrorKind::RuntimeError,
                    format!("parallelCollect: element {} did not finish", i + 1),
                ))
            }
        }
    }
    Ok(Value::list(results))
}

/// Starts the next pending element, if any, in a fresh process; its completion records the
/// outcome and starts the next one, and the last completion resumes the caller.
fn start_next(sys: &Arc<ActorSys>, st: &Arc<Mutex<Batch>>, c: &Completion) {
    let (i, elem, block, by) = {
        let mut g = st.lock();
        if g.closed {
            return;
        }
        match g.pending.pop_front() {
            Some((i, e)) => (i, e, g.block.clone(), g.by.clone()),
            None => return,
        }
    };
    let job: Job = waited_job(by, move |ctx: &mut Ctx| ctx.call_block(&block, &[elem]));
    let (st2, s2, c2) = (st.clone(), sys.clone(), c.clone());
    let p = spawn_job(sys, "worker", job, move |o| {
        let done = {
            let mut g = st2.lock();
            if g.closed {
                return;
            }
            g.outs[i] = Some(o);
            g.remaining -= 1;
            g.remaining == 0
        };
        if done {
            c2.complete(Value::Nil);
        } else {
            start_next(&s2, &st2, &c2);
        }
    });
    // The caller may have stopped waiting (it was killed) between the pop and the spawn.
    let orphan = {
        let mut g = st.lock();
        g.procs[i] = Some(p.clone());
        g.closed && g.outs[i].is_none()
    };
    if orphan {
        sys.rt.kill(&p);
    }
}
