//! One send path for every kind of process reference: a local actor handle
//! ([`ActorRef`](super::handle::ActorRef), also as a `withTimeout:` proxy), a name proxy
//! ([`NameRef`](super::handle::NameRef)), and the references to processes of other nodes
//! (a remote actor, pid, monitor reference, name proxy). Each implements [`SendTarget`]
//! where it is defined and registers it with the primitive registry
//! ([`Prims::send_target`](crate::interp::registry::Prims::send_target)); the
//! evaluator's send of a native value asks the registered kinds in order (local actor
//! handles first: the common case pays one type test) and the first that recognises the
//! value decides. The trait and the kind finder [`TargetOf`] are declared with the registry
//! that lists the kinds (`interp::registry`); this file holds the send path that asks them.

use crate::interp::eval::{Ctx, EvalResult, Unwind};
pub use crate::interp::registry::{target_of, SendTarget, TargetOf};
use crate::value::{Native, Sym, Value};

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

/// [`intercept`] for a send whose arguments are on the context's slot stack from `base`
/// (`Ctx::send_at`): `Some(result)` when the reference handled the send and took the
/// arguments; `None` leaves them there.
#[inline]
pub fn intercept_at(
    ctx: &mut Ctx,
    n: &Native,
    recv: &Value,
    sel: Sym,
    base: usize,
) -> Option<EvalResult> {
    find(ctx, n)?.send_at(ctx, recv, sel, base)
}

/// The cast hook of `Ctx::cast`: `Some` when the receiver is a process reference that
/// queued (or sent) the message.
pub fn cast(ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<Result<(), Unwind>> {
    let Value::Native(n) = recv else {
        return None;
    };
    find(ctx, n)?.cast(ctx, recv, sel, args)
}
