//! Parallel: `all:`, `all:timeout:` and `any:` run each block of a List in
//! its own process while the caller is suspended (`Cx::wait_external`, no worker thread
//! blocks), and answer Results.
//!
//! Also [`spawn_job`], the "run this in a fresh process and tell me how it ended" helper the
//! announcements (`prims::announce`) use for `announceAndWait:`.
//!
//! Decisions where the spec is silent:
//! * `all: #()` answers `#()`; `any: #()` answers `Result error:` with an `empty_collection`
//!   exception ("List is empty"): there is no first success and no last failure.
//! * Blocks still running when the answer is decided are killed: the unfinished ones after
//!   `all:timeout:` expires, the losers of `any:`, and every one when the caller itself is
//!   killed while it waits (like an Erlang task group linked to its owner).
//! * A block that takes arguments, or an element that is not a Block, raises (`arity_mismatch`,
//!   `type_error`) before anything is spawned. A List, Array or Tuple of blocks is accepted.
//! * A block whose process is killed answers `Result error:` with an `actor_dead` exception.

use crate::interp::block_code::ClosureExt;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::actor::send::{transfer, transfer_in};
use crate::interp::actor::{need_cx, sys_of, with_fresh_ctx, ActorSys};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::duration::timeout_arg;
use crate::runtime::{CallError, Cx, ProcRef, SpawnOpts, Timeout};
use crate::value::Value;

pub fn register(p: &mut Prims) {
    let c = "Parallel";
    p.add_class(c, "all:", |ctx, _, a| {
        let blocks = blocks_arg(ctx, &a[0])?;
        all(ctx, blocks, Timeout::Infinity)
    });
    p.add_class(c, "all:timeout:", |ctx, _, a| {
        let blocks = blocks_arg(ctx, &a[0])?;
        let t = timeout_arg(ctx, &a[1])?;
        all(ctx, blocks, t)
    });
    p.add_class(c, "any:", |ctx, _, a| {
        let blocks = blocks_arg(ctx, &a[0])?;
        any(ctx, blocks)
    });
}

/// How a job run by [`spawn_job`] ended.
pub enum Outcome {
    /// Its value (already [`transfer`]red out of the job's process).
    Ok(Value),
    /// The exception it raised.
    Err(Value),
    /// Its process exited (killed, or `Program exit:` in an embedding) with this reason.
    Exited(Value),
}

type DoneFn = Box<dyn FnOnce(Outcome) + Send>;

/// Calls the done callback exactly once: with the job's outcome, or — if the process is
/// dropped before it could report (killed before it ran) — with `Exited(#killed)`.
struct Done(Option<DoneFn>);

impl Done {
    fn finish(&mut self, o: Outcome) {
        if let Some(f) = self.0.take() {
            f(o);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        self.finish(Outcome::Exited(Value::sym("killed")));
    }
}

/// The job of [`spawn_job`]: runs in a fresh context inside the new process.
pub(crate) type Job = Box<dyn FnOnce(&mut Ctx) -> EvalResult + Send>;

/// Runs `job` in a fresh process (label `label`) and calls `done` once with its outcome, from
/// that process. Errors are not logged here: the caller decides. `Program exit:` inside the job
/// ends the program as it does in any callback (unless embedded).
pub fn spawn_job(
    sys: &Arc<ActorSys>,
    label: &'static str,
    job: Job,
    done: impl FnOnce(Outcome) + Send + 'static,
) -> ProcRef {
    let s2 = sys.clone();
    let mut guard = Done(Some(Box::new(done)));
    let opts = SpawnOpts {
        label,
        ..SpawnOpts::default()
    };
    let h = sys.rt.spawn_task_opts(opts, move |cx: &mut Cx<'_>| {
        let out = with_fresh_ctx(&s2, cx, |ctx| run_job(ctx, job));
        guard.finish(out);
    });
    h.proc().clone()
}

/// A job whose process has `by`'s process waiting on it (its waiting chain starts there).
pub(crate) fn waited_job(
    by: crate::runtime::WaitedBy,
    f: impl FnOnce(&mut Ctx) -> EvalResult + Send + 'static,
) -> Job {
    Box::new(move |ctx: &mut Ctx| {
        if let Some(cx) = crate::interp::actor::cx_of(ctx) {
            cx.set_waited_by(by);
        }
        f(ctx)
    })
}

fn run_job(ctx: &mut Ctx, job: Job) -> Outcome {
    match job(ctx) {
        Ok(v) => Outcome::Ok(transfer(&v)),
        Err(Unwind::Error(e)) => Outcome::Err(transfer(&e)),
        Err(Unwind::Return { .. }) => {
            let u = ctx.err(
                ErrorKind::RuntimeError,
                "non-local return (^) from a block running in another process",
            );
            match u {
                Unwind::Error(e) => Outcome::Err(e),
                _ => Outcome::Exited(Value::sym("error")),
            }
        }
        Err(u) => {
            if let Some(code) = u.exit_code() {
                if !ctx.prog.embedded.load(std::sync::atomic::Ordering::Relaxed) {
                    std::process::exit(code);
                }
            }
            match u {
                Unwind::Exit(reason) => Outcome::Exited(reason),
                _ => Outcome::Exited(Value::sym("error")),
            }
        }
    }
}

/// The blocks of a `Parallel` argument, each ready to cross to its own process.
fn blocks_arg(ctx: &Ctx, v: &Value) -> Result<Vec<Value>, Unwind> {
    let items: Vec<Value> = match v {
        Value::List(l) => l.iter().cloned().collect(),
        Value::Array(a) => a.iter().cloned().collect(),
        Value::Tuple(t) => t.iter().cloned().collect(),
        other => {
            let n = ctx.class_name_of(other);
            return Err(ctx.type_err(format!("Parallel expects a List of Blocks, not {n}")));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for b in items {
        match &b {
            Value::Block(c) if c.arity() == 0 => out.push(transfer_in(ctx, &b)),
            Value::Block(c) => {
                return Err(ctx.err(
                    ErrorKind::ArityMismatch,
                    format!(
                        "Parallel blocks take no arguments, got a Block/{}",
                        c.arity()
                    ),
                ))
            }
            other => {
                let n = ctx.class_name_of(other);
                return Err(ctx.type_err(format!("Parallel expects a List of Blocks, not {n}")));
            }
        }
    }
    Ok(out)
}

/// The shared record of one `Parallel` run.
struct Run {
    outs: Vec<Option<Outcome>>,
    procs: Vec<Option<ProcRef>>,
    remaining: usize,
    /// `any:`: the index of the first success.
    winner: Option<usize>,
    /// `any:`: the index of the latest failure.
    last_fail: Option<usize>,
    /// Set by the caller once it stops waiting: later outcomes (of the blocks it is about to
    /// kill) are ignored, so an unfinished block stays unfinished.
    closed: bool,
}

/// Spawns every block and suspends the caller until the run is decided (every block done;
/// for `any`, the first success or the last failure) or `t` passes. Unfinished blocks are
/// killed before this returns.
fn run(
    ctx: &mut Ctx,
    blocks: Vec<Value>,
    t: Timeout,
    any: bool,
) -> Result<Arc<Mutex<Run>>, Unwind> {
    let sys = sys_of(ctx)?;
    let n = blocks.len();
    let st = Arc::new(Mutex::new(Run {
        outs: (0..n).map(|_| None).collect(),
        procs: vec![None; n],
        remaining: n,
        winner: None,
        last_fail: None,
        closed: false,
    }));
    let cx = need_cx(ctx)?;
    let st2 = st.clone();
    let s2 = sys.clone();
    // The blocks' processes carry the caller as waiting on them: a sync send back to it is
    // a cycle (`deadlock_detected`).
    let by = cx.waited_by_me();
    let waited = cx.wait_external(t, move |c| {
        for (i, block) in blocks.into_iter().enumerate() {
            let (st3, c2) = (st2.clone(), c.clone());
            let job = waited_job(by.clone(), move |ctx| ctx.call_block(&block, &[]));
            let p = spawn_job(&s2, "worker", job, move |o| {
                let ok = matches!(o, Outcome::Ok(_));
                let decided = {
                    let mut g = st3.lock();
                    if g.closed {
                        return;
                    }
                    g.outs[i] = Some(o);
                    g.remaining -= 1;
                    if !any {
                        g.remaining == 0
                    } else if ok && g.winner.is_none() {
                        g.winner = Some(i);
                        true
                    } else {
                        if !ok {
                            g.last_fail = Some(i);
                        }
                        g.remaining == 0 && g.winner.is_none()
                    }
                };
                if decided {
                    c2.complete(Value::Nil);
                }
            });
            st2.lock().procs[i] = Some(p);
        }
    });
    let unfinished = {
        let mut g = st.lock();
        g.closed = true;
        unfinished(&g.procs, &g.outs)
    };
    kill_after_wait(&sys, &unfinished, waited)?;
    Ok(st)
}

/// The processes of `procs` whose outcome in `outs` has not come in.
pub(crate) fn unfinished(procs: &[Option<ProcRef>], outs: &[Option<Outcome>]) -> Vec<ProcRef> {
    procs
        .iter()
        .zip(outs)
        .filter(|(_, o)| o.is_none())
        .filter_map(|(p, _)| p.clone())
        .collect()
}

/// After the caller's wait: kills the `unfinished` blocks (never while holding a lock:
/// killing may run hooks), and turns the caller's own exit during the wait into an unwind.
pub(crate) fn kill_after_wait(
    sys: &ActorSys,
    unfinished: &[ProcRef],
    waited: Result<Value, CallError>,
) -> Result<(), Unwind> {
    for p in unfinished {
        sys.rt.kill(p);
    }
    match waited {
        Err(CallError::Exiting(reason)) => Err(Unwind::Exit(reason.to_value())),
        _ => Ok(()),
    }
}

/// The Result of one finished (or unfinished) block.
fn result_of(ctx: &Ctx, o: Option<&Outcome>, i: usize, t: Timeout) -> Value {
    let exc = |u: Unwind| match u {
        Unwind::Error(e) => e,
        _ => Value::Nil,
    };
    match o {
        Some(Outcome::Ok(v)) => ctx.make_ok(v.clone()),
        Some(Outcome::Err(e)) => ctx.make_error(e.clone()),
        Some(Outcome::Exited(r)) => {
            let r = r
                .as_sym()
                .map_or("abnormal".to_string(), |s| s.as_str().to_string());
            ctx.make_error(exc(ctx.err(
                ErrorKind::ActorDead,
                format!("Parallel block {} exited: {r}", i + 1),
            )))
        }
        None => {
            let within = match t {
                Timeout::Ms(ms) => format!(" within {ms} ms"),
                Timeout::Infinity => String::new(),
            };
            ctx.make_error(exc(ctx.err(
                ErrorKind::Timeout,
                format!("Parallel block {} did not finish{within}", i + 1),
            )))
        }
    }
}

fn all(ctx: &mut Ctx, blocks: Vec<Value>, t: Timeout) -> EvalResult {
    if blocks.is_empty() {
        return Ok(Value::list([]));
    }
    let st = run(ctx, blocks, t, false)?;
    let g = st.lock();
    let out: Vec<Value> = g
        .outs
        .iter()
        .enumerate()
        .map(|(i, o)| result_of(ctx, o.as_ref(), i, t))
        .collect();
    Ok(Value::list(out))
}

fn any(ctx: &mut Ctx, blocks: Vec<Value>) -> EvalResult {
    if blocks.is_empty() {
        let e = match ctx.err(ErrorKind::EmptyCollection, "List is empty") {
            Unwind::Error(e) => e,
            u => return Err(u),
        };
        return Ok(ctx.make_error(e));
    }
    let st = run(ctx, blocks, Timeout::Infinity, true)?;
    let g = st.lock();
    let i = g.winner.or(g.last_fail).unwrap_or(0);
    Ok(result_of(ctx, g.outs[i].as_ref(), i, Timeout::Infinity))
}
