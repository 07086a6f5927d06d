//! Non-local return through actor sends: a `^` in a block that a
//! caller passed to an actor in a sync send returns from the block's home method in the
//! caller, through the actor's method.
//!
//! A block crossing processes is a copy (`send::transfer_in`). When it is a direct argument
//! of a sync call and its home method is live in the caller, the copy gets a fresh **relay
//! home** (`REMOTE_HOME | n`, unique in this OS process) instead of "no home". The actor
//! handling the call lists the relay homes of its message in its context
//! ([`super::ProcSlot::relays`]), so `Ctx::home_live` knows them as live exactly while that
//! message is handled. A `^` to one of them unwinds the actor's method (its `ensure:`
//! blocks run, its state changes stay) up to the handler, which answers the caller with a
//! [`Relayed`] value; the caller maps the relay home back to the block's real home and
//! continues the `^` there. Through a chain of actors the `^` is relayed call by call; the
//! node-to-node relay of `crate::dist::peer` uses the same homes.
//!
//! A relayed block stored by the actor and run later (in another message) finds its relay
//! home dead and raises `runtime_error` at the `^`, as for any returned home.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Closure, Ctx, EvalResult, Unwind, REMOTE_HOME};
use crate::value::{ClassRef, Value};

/// A fresh relay home (`REMOTE_HOME | n`), never handed out twice by this OS process.
pub fn next_relay_home() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    REMOTE_HOME | (NEXT.fetch_add(1, Ordering::Relaxed) & (REMOTE_HOME - 1))
}

/// Is `home` a relay home (as opposed to a method activation of this context)?
#[inline]
pub fn is_relay(home: u64) -> bool {
    home >> 62 == 1
}

/// The relay homes of the blocks that arrived as direct arguments of a message.
pub fn message_relays(args: &[Value]) -> Vec<u64> {
    args.iter()
        .filter_map(|a| match a {
            Value::Block(c) if is_relay(c.home) => Some(c.home),
            _ => None,
        })
        .collect()
}

/// The arguments of a sync call as they cross (see [`super::send::transfer_in`]), with a
/// relay home for each block whose home is live here; answers the (relay, home) pairs.
pub fn prepare_args(ctx: &Ctx, args: &[Value]) -> (Vec<Value>, Vec<(u64, u64)>) {
    let mut map = Vec::new();
    let out = args
        .iter()
        .map(|a| {
            let v = super::send::transfer_in(ctx, a);
            match (a, &v) {
                (Value::Block(orig), Value::Block(c))
                    if orig.home != u64::MAX && ctx.home_live(orig.home) =>
                {
                    let relay = next_relay_home();
                    map.push((relay, orig.home));
                    Value::Block(Arc::new(Closure {
                        code: c.code.clone(),
                        recv: c.recv.clone(),
                        upvals: c.upvals.clone(),
                        home: relay,
                        mclass: c.mclass.clone(),
                        mside: c.mside,
                        serial: c.serial,
                    }))
                }
                _ => v,
            }
        })
        .collect();
    (out, map)
}

/// The answer of an actor whose method was left by a relayed `^`: the value, and the relay
/// home it returns to. Made only by the handler and taken apart by the caller's send; it
/// never reaches bt code.
pub struct Relayed {
    pub value: Value,
    pub home: u64,
    pub class: ClassRef,
}

crate::interp::actor::handle::native_carrier!(Relayed, "a non-local return");

/// The handler's answer for a `^` to `home`, one of its message's relay homes.
pub fn relayed(ctx: &Ctx, value: Value, home: u64) -> Value {
    super::handle::native(Relayed {
        value,
        home,
        class: ctx.prog.core.object.clone(),
    })
}

/// The caller's side: a [`Relayed`] answer continues the `^` to the block's real home.
pub fn unwrap_reply(ctx: &Ctx, v: Value, map: &[(u64, u64)]) -> EvalResult {
    if map.is_empty() {
        return Ok(v);
    }
    let Some(r) = super::handle::downcast::<Relayed>(&v) else {
        return Ok(v);
    };
    match map.iter().find(|(relay, _)| *relay == r.home) {
        Some(&(_, home)) if ctx.home_live(home) => Err(Unwind::Return {
            value: r.value.clone(),
            home,
        }),
        _ => Err(ctx.err(
            ErrorKind::RuntimeError,
            "non-local return from a method that has already returned",
        )),
    }
}
