//! One send path for every kind of process reference: a local actor handle
//! ([`ActorRef`](super::handle::ActorRef), also as a `withTimeout:` proxy), a name proxy
//! ([`NameRef`](super::handle::NameRef)), and the references to processes of other nodes
//! (a remote actor, pid, monitor reference, name proxy). Each implements [`SendTarget`]
//! where it is defined and registers it with the primitive registry
//! ([`Prims::send_target`](crate::interp::registry::Prims::send_target)); the
//! evaluator's send of a native value asks the registered kinds in order (local actor
//! handles first: the common case pays one type test) and the first that recognises the
//! value decides.

use std::any::Any;

use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::{Native, Sym, Value};

/// A process reference as the send path sees it.
pub trait SendTarget: Send + Sync + 'static {
    /// A sync send of `sel` with `args` to `recv` (the value holding `self`): `Some` with the
    /// result when the reference handles it (through the runtime, another node, a name
    /// lookup); `None` for ordinary dispatch on the reference itself (its printing, identity,
    /// the handle's own protocol).
    fn send(&self, ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult>;

    /// A cast (`!`): `Some` when the message was queued for (or sent to) a process; `None`
    /// runs it as a sync send.
    fn cast(
        &self,
        _ctx: &mut Ctx,
        _recv: &Value,
        _sel: Sym,
        _args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        None
    }
}

/// Finds the [`SendTarget`] of a native value's object, if it is of one registered kind.
pub type TargetOf = fn(&dyn Any) -> Option<&dyn SendTarget>;

/// The [`TargetOf`] of the reference kind `T`.
pub fn target_of<T: SendTarget>(obj: &dyn Any) -> Option<&dyn SendTarget> {
    obj.downcast_ref::<T>().map(|t| t as &dyn SendTarget)
}

/// The reference `n` is, among the registered kinds.
#[inline]
fn find<'a>(ctx: &Ctx, n: &'a Native) -> Option<&'a dyn SendTarget> {
    let kinds: &'static [TargetOf] = &ctx.prog.prims.prims.send_targets;
    let obj = n.0.as_any();
    kinds.iter().find_map(|of| of(obj))
}

/// The send hook of `Ctx::send_impl`: `Some(result)` when the receiver is a process
/// reference that handles the send.
#[inline]
pub fn intercept(
    ctx: &mut Ctx,
    n: &Native,
    recv: &Value,
    sel: Sym,
    args: &[Value],
) -> Option<EvalResult> {
    find(ctx, n)?.send(ctx, recv, sel, args)
}

/// The cast hook of `Ctx::cast`: `Some` when the receiver is a process reference that
/// queued (or sent) the message.
pub fn cast(ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<Result<(), Unwind>> {
    let Value::Native(n) = recv else {
        return None;
    };
    find(ctx, n)?.cast(ctx, recv, sel, args)
}
