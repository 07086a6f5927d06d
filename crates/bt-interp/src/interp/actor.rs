//! The actor glue: actor handles, sends and casts to processes, non-local return through
//! them, behaviours and typed state slots. How a `Ctx` runs inside a runtime process (its
//! process slot, preemption, the actor system and its context pool) is the layer below,
//! [`crate::interp::process`], re-exported here for the callers that name this module.
//!
//! Layer: above the evaluator (it may name `eval`, `program`, `error`, `print`, `process`);
//! the evaluator reaches it only through the send hook (`target::SendTarget`, registered with
//! the primitive registry) and through the methods it adds to `Ctx`
//! ([`Ctx::detached_state`]).
//!
//! Submodules: [`handle`] (actor handles, pids, references and other runtime values),
//! [`send`] (sends and casts to actors, error mapping),
//! [`transfer`] (values crossing processes: block copies, recycled argument vectors),
//! [`relay`] (non-local return through actor sends),
//! [`behaviour`] (the behaviours: user actors, the main program, transcripts), [`slots`]
//! (typed state slots checked after `initialize`).

pub mod behaviour;
pub mod groups;
pub mod handle;
pub mod memlimit;
pub mod prims;
pub mod relay;
pub mod send;
pub mod slots;
pub mod target;
pub mod transfer;

use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::eval::{Ctx, Unwind};
use crate::runtime::Cx;
use crate::value::Value;

pub use crate::interp::actor::send::top_display;
pub use crate::interp::actor::target::{cast, intercept, intercept_at};
pub use crate::interp::process::{
    await_external, cx_log, cx_of, in_process, need_cx, sys_of, with_fresh_ctx, ActorSys, Done,
    ProcSlot,
};
pub(crate) use crate::interp::process::{in_pooled_process, run_lending};

impl Ctx {
    /// The send hook of `Ctx::send_at` ([`intercept_at`]), with the usual receiver of a
    /// send to a process first: a local actor handle (`ActorRef`, the first registered
    /// kind), recognised by one type test of the object seen as `dyn Any` through its own
    /// vtable (no `as_any` call), whose `send_at` is then called directly (no kind look-up
    /// through function pointers, no virtual send). The answer is the one the registry's
    /// look-up gives: the kinds are distinct types, so at most one recognises `n`. (A method
    /// the actor glue adds to the evaluator, as `detached_state` below.)
    #[inline(always)]
    pub(crate) fn intercept_send_at(
        &mut self,
        n: &crate::value::Native,
        recv: &Value,
        sel: crate::value::Sym,
        base: usize,
    ) -> Option<crate::interp::eval::EvalResult> {
        let obj: &dyn std::any::Any = &*n.0;
        if let Some(a) = obj.downcast_ref::<crate::interp::actor::handle::ActorRef>() {
            return crate::interp::actor::target::SendTarget::send_at(a, self, recv, sel, base);
        }
        intercept_at(self, n, recv, sel, base)
    }

    /// The state copy of a block's `self` when the block crossed from its actor to another
    /// process and runs there; None in the actor's own process (the common case, decided
    /// by a pointer comparison first) and for every other receiver. (A method the actor
    /// glue adds to the evaluator: field access on `self` asks it.)
    #[inline]
    pub fn detached_state<'v>(&self, recv: &'v Value) -> Option<&'v Arc<Mutex<Vec<Value>>>> {
        let Value::Native(n) = recv else {
            return None;
        };
        if let Some(Value::Native(me)) = self.proc.actor() {
            if Arc::ptr_eq(me, n) {
                return None;
            }
        }
        let a =
            n.0.as_any()
                .downcast_ref::<crate::interp::actor::handle::ActorRef>()?;
        // Back in the actor's own process, `self.x` is the live state again.
        if a.proc.pid().number == self.pid {
            return None;
        }
        a.state.as_ref()
    }
}

/// Runs a block in a fresh process context (Timer, whenDown:, onExit:): errors are logged to
/// standard error, never raised.
pub fn run_block_logged(sys: &Arc<ActorSys>, cx: &mut Cx<'_>, block: &Value, args: &[Value]) {
    run_logged(sys, cx, |ctx| ctx.call_block(block, args));
}

/// Runs `f` in a fresh process context (callbacks, announcement handlers): errors are logged
/// to standard error, never raised; `Program exit:` ends the program (unless embedded).
pub fn run_logged(
    sys: &Arc<ActorSys>,
    cx: &mut Cx<'_>,
    f: impl FnOnce(&mut Ctx) -> crate::interp::eval::EvalResult,
) {
    with_fresh_ctx(sys, cx, |ctx| {
        if let Err(u) = f(ctx) {
            match u {
                Unwind::Error(e) => {
                    let line = crate::interp::actor::send::describe_exception(&e);
                    cx_log(ctx, &format!("error in callback: {line}"));
                }
                u => {
                    if let Some(code) = u.exit_code() {
                        if !ctx.prog.embedded.load(std::sync::atomic::Ordering::Relaxed) {
                            std::process::exit(code);
                        }
                        let m =
                            format!("error in callback: Program exit: {code} ignored (embedded)");
                        cx_log(ctx, &m);
                    }
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        let prog = crate::interp::program::Program::bootstrap(
            Default::default(),
            crate::interp::prims::shared(),
        );
        Ctx::new(Arc::new(prog))
    }

    /// A lent handle is visible for the run only and costs the handle no reference: after
    /// the run, also one that unwinds, the count is what it was and the context holds none.
    #[test]
    fn a_lent_handle_is_taken_back_also_when_the_run_unwinds() {
        let mut c = ctx();
        let me = Value::str("me");
        let Value::Str(r) = &me else { unreachable!() };
        let count = Arc::strong_count(r);
        let kept = run_lending(&mut c, &me, |c| {
            assert!(matches!(c.proc.actor(), Some(Value::Str(s)) if s.as_str() == "me"));
            assert_eq!(Arc::strong_count(r), count, "lending counts no reference");
            // A longer-lived copy is a counted clone.
            c.proc.actor().cloned()
        });
        assert!(c.proc.actor().is_none());
        assert_eq!(Arc::strong_count(r), count + 1);
        drop(kept);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_lending(&mut c, &me, |_| panic!("handler panics"))
        }));
        assert!(unwound.is_err());
        assert!(c.proc.actor().is_none());
        assert_eq!(Arc::strong_count(r), count);
    }
}
