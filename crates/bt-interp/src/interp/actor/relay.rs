//! Non-local return through actor sends: a `^` in a block that a
//! caller passed to an actor in a sync send returns from the block's home method in the
//! caller, through the actor's method.
//!
//! A block crossing processes is a copy (`transfer::transfer_in`). When it is a direct argument
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
use crate::interp::process::{holds_block, Held, Relays, RELAY_DEPTH};
use crate::value::{ClassRef, Instance, Value};

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

/// The relay homes of the blocks that arrived in a message (see [`Relays`]).
#[inline]
pub fn message_relays(args: &[Value]) -> Relays {
    let mut r = Vec::new();
    for a in args {
        match a {
            Value::Block(c) if is_relay(c.home) => r.push(Held::Home(c.home)),
            Value::List(_)
            | Value::Queue(_)
            | Value::Array(_)
            | Value::Tuple(_)
            | Value::Dict(_)
            | Value::Object(_) => r.push(Held::Nested(a.clone())),
            _ => {}
        }
    }
    Relays(r)
}

/// Are `a` and `b` the same collection (not copied)?
fn shared(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::List(x), Value::List(y)) | (Value::Queue(x), Value::Queue(y)) => Arc::ptr_eq(x, y),
        (Value::Array(x), Value::Array(y)) => Arc::ptr_eq(x, y),
        (Value::Tuple(x), Value::Tuple(y)) => Arc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Arc::ptr_eq(x, y),
        (Value::Object(x), Value::Object(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// Does collection `v` hold a block whose home is live in `ctx`?
fn holds_live_block(ctx: &Ctx, v: &Value) -> bool {
    holds_block(v, 0, &|c| c.home != u64::MAX && ctx.home_live(c.home))
}

/// Copy `c` of a block whose home `home` is live in the caller, with a fresh relay home.
fn relay_block(c: &Closure, home: u64, map: &mut Vec<(u64, u64)>) -> Value {
    let relay = next_relay_home();
    map.push((relay, home));
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

/// `copy` (the crossing copy of `orig`, same shape) with relay homes for the blocks that
/// have a live home in `orig`.
fn relay_nested(
    ctx: &Ctx,
    orig: &Value,
    copy: &Value,
    d: usize,
    map: &mut Vec<(u64, u64)>,
) -> Value {
    if d > RELAY_DEPTH {
        return copy.clone();
    }
    let mut each = |o: &Value, c: &Value| relay_nested(ctx, o, c, d + 1, map);
    match (orig, copy) {
        (Value::Block(o), Value::Block(c)) if o.home != u64::MAX && ctx.home_live(o.home) => {
            relay_block(c, o.home, map)
        }
        (Value::List(o), Value::List(c)) => Value::List(Arc::new(
            o.iter().zip(c.iter()).map(|(o, c)| each(o, c)).collect(),
        )),
        (Value::Queue(o), Value::Queue(c)) => Value::Queue(Arc::new(
            o.iter().zip(c.iter()).map(|(o, c)| each(o, c)).collect(),
        )),
        (Value::Array(o), Value::Array(c)) => Value::Array(Arc::new(
            o.iter().zip(c.iter()).map(|(o, c)| each(o, c)).collect(),
        )),
        (Value::Tuple(o), Value::Tuple(c)) => {
            Value::tuple(o.iter().zip(c.iter()).map(|(o, c)| each(o, c)).collect())
        }
        (Value::Dict(o), Value::Dict(c)) => Value::Dict(Arc::new(
            c.iter()
                .map(|(k, cv)| {
                    let v = match o.get(&k) {
                        Some(ov) => each(ov, cv),
                        None => cv.clone(),
                    };
                    (k.clone(), v)
                })
                .collect::<crate::value::dict::Dict>(),
        )),
        (Value::Object(o), Value::Object(c)) => Value::Object(Arc::new(Instance {
            class: c.class.clone(),
            fields: o
                .fields
                .iter()
                .zip(c.fields.iter())
                .map(|(o, c)| each(o, c))
                .collect(),
        })),
        _ => copy.clone(),
    }
}

/// The arguments of a sync call as they cross (see [`super::transfer::transfer_in`]), with a
/// relay home for each block whose home is live here, directly an argument or inside a
/// collection argument; answers the (relay, home) pairs.
pub fn prepare_args(ctx: &Ctx, args: &[Value]) -> (Vec<Value>, Vec<(u64, u64)>) {
    let mut map = Vec::new();
    // The thread's spare argument vector (`transfer::spare_args`): no allocation per call.
    let mut out = super::send::spare_args();
    out.extend(args.iter().map(|a| match a {
        Value::Block(orig) => {
            let v = super::send::transfer_in(ctx, a);
            match &v {
                Value::Block(c) if orig.home != u64::MAX && ctx.home_live(orig.home) => {
                    relay_block(c, orig.home, &mut map)
                }
                _ => v,
            }
        }
        Value::List(_)
        | Value::Queue(_)
        | Value::Array(_)
        | Value::Tuple(_)
        | Value::Dict(_)
        | Value::Object(_) => {
            let v = super::send::transfer_in(ctx, a);
            // Only a copied collection can hold a block (`transfer_in` shares others).
            if !shared(&v, a) && holds_live_block(ctx, a) {
                relay_nested(ctx, a, &v, 0, &mut map)
            } else {
                v
            }
        }
        _ => super::send::transfer_in(ctx, a),
    }));
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
