//! Values crossing processes: a block (also inside collections and Value instances) gets
//! fresh cells holding copies of what it captured, and a block of an actor takes a copy of
//! the actor's state slots along ([`transfer_in`]); and the argument vectors of sync calls,
//! recycled per thread. Used by sends ([`super::send`]), relays ([`super::relay`]),
//! behaviours and the primitives that hand values to other processes.

use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, ActorRef};
use crate::interp::eval::{Closure, Ctx, VarCell};
use crate::value::{fast_clone, Instance, Value};

thread_local! {
    /// An emptied argument vector of a message this thread handled, reused by the next sync
    /// call made here (`remote_call`): no allocation per call in a ping-pong.
    static SPARE_ARGS: std::cell::Cell<Vec<Value>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Most argument slots a kept vector may have (more would only pin memory).
const SPARE_ARGS_MAX: usize = 4;

/// A vector for a call's arguments: the thread's spare one, else a new (empty) one.
pub(crate) fn spare_args() -> Vec<Value> {
    SPARE_ARGS.with(|c| c.take())
}

/// A vector for the arguments of a sync call made in the run of `cx`: the one its pool
/// worker keeps (`Cx::spare_args`: no thread-local look-up), else the thread's spare one.
#[inline]
pub(crate) fn spare_args_in(cx: Option<&mut crate::runtime::Cx<'_>>) -> Vec<Value> {
    match cx.and_then(|cx| cx.spare_args()) {
        Some(v) => v,
        None => spare_args(),
    }
}

/// Keeps a handled message's argument vector for the next call from this thread (its
/// values are dropped now). Not with per-actor memory accounts, where a vector allocated by
/// one actor must be freed where it was counted.
pub fn recycle_args(v: Vec<Value>) {
    if let Some(v) = emptied(v) {
        keep_here(v);
    }
}

/// [`recycle_args`] in the run of `cx`: kept by its pool worker (`Cx::keep_args`).
#[inline]
pub fn recycle_args_in(cx: &crate::runtime::Cx<'_>, v: Vec<Value>) {
    if let Some(v) = emptied(v) {
        if let Err(v) = cx.keep_args(v) {
            keep_here(v);
        }
    }
}

/// `v` emptied, when it is worth keeping.
#[inline(always)]
fn emptied(mut v: Vec<Value>) -> Option<Vec<Value>> {
    if v.capacity() == 0 || v.capacity() > SPARE_ARGS_MAX || crate::memory::coroutine_accounts() {
        return None;
    }
    v.clear();
    Some(v)
}

fn keep_here(v: Vec<Value>) {
    SPARE_ARGS.with(|c| {
        let old = c.replace(v);
        drop(old);
    });
}

/// A value as it crosses to another process: blocks (also inside collections and Value
/// instances) get fresh cells holding copies of what they captured; a block that
/// already carries a copy of its actor's state (below) gets a copy of that copy.
#[inline]
pub fn transfer(v: &Value) -> Value {
    if may_hold_block(v) && has_block(v, 0) {
        copy(v, 0, None, 0)
    } else {
        v.clone()
    }
}

/// [`transfer`] of a value leaving the process of `ctx`: a block created by the actor
/// running there also takes a copy of that actor's state slots, which its `self.x` reads
/// and writes wherever it runs.
#[inline]
pub fn transfer_in(ctx: &Ctx, v: &Value) -> Value {
    if may_hold_block(v) && has_block(v, 0) {
        copy(v, 0, Some(ctx), ctx.owner)
    } else {
        fast_clone(v)
    }
}

/// [`transfer_in`] of a value the caller gives up: moved, not cloned, when it holds no
/// block (a reply, usually).
#[inline]
pub fn transfer_in_owned(ctx: &Ctx, v: Value) -> Value {
    if may_hold_block(&v) && has_block(&v, 0) {
        copy(&v, 0, Some(ctx), ctx.owner)
    } else {
        v
    }
}

const COPY_DEPTH: usize = 24;

/// Whether `v` is of a kind [`has_block`] must look into (checked inline: most arguments
/// are numbers, strings or symbols and need no walk); also whether a message argument can
/// bring relay homes (`relay::message_relays`).
#[inline(always)]
pub(crate) fn may_hold_block(v: &Value) -> bool {
    matches!(
        v,
        Value::Block(_)
            | Value::List(_)
            | Value::Queue(_)
            | Value::Array(_)
            | Value::Tuple(_)
            | Value::Dict(_)
            | Value::Object(_)
    )
}

fn has_block(v: &Value, d: usize) -> bool {
    if d > COPY_DEPTH {
        return false;
    }
    match v {
        Value::Block(_) => true,
        Value::List(l) | Value::Queue(l) => l.iter().any(|e| has_block(e, d + 1)),
        Value::Array(l) => l.iter().any(|e| has_block(e, d + 1)),
        Value::Tuple(t) => t.iter().any(|e| has_block(e, d + 1)),
        Value::Dict(m) => m.values().any(|e| has_block(e, d + 1)),
        Value::Object(i) => i.fields.iter().any(|e| has_block(e, d + 1)),
        _ => false,
    }
}

/// `from`: the context the value leaves (for the state copy of its actor's blocks, see
/// `detach`); `me`: the copying process's token (`Ctx::owner`, 0 for none), whose own
/// cells are read without taking them over (`VarCell`).
fn copy(v: &Value, d: usize, from: Option<&Ctx>, me: u64) -> Value {
    if d > COPY_DEPTH {
        return v.clone();
    }
    match v {
        Value::Block(c) => {
            let upvals: Vec<Arc<VarCell>> = c
                .upvals
                .iter()
                .map(|cell| {
                    let inner = cell.read(me);
                    Arc::new(VarCell::new(copy(&inner, d + 1, from, me)))
                })
                .collect();
            Value::Block(Arc::new(Closure {
                code: c.code.clone(),
                recv: detach(&c.recv, d, from, me),
                upvals: upvals.into_boxed_slice(),
                // A `^` in a block that crossed processes has no live home there.
                home: u64::MAX,
                mclass: c.mclass.clone(),
                mside: c.mside,
                serial: c.serial,
            }))
        }
        Value::List(l) => Value::List(Arc::new(
            l.iter().map(|e| copy(e, d + 1, from, me)).collect(),
        )),
        Value::Array(l) => Value::Array(Arc::new(
            l.iter().map(|e| copy(e, d + 1, from, me)).collect(),
        )),
        Value::Queue(l) => Value::Queue(Arc::new(
            l.iter().map(|e| copy(e, d + 1, from, me)).collect(),
        )),
        Value::Tuple(t) => Value::tuple(t.iter().map(|e| copy(e, d + 1, from, me)).collect()),
        Value::Dict(m) => Value::Dict(Arc::new(
            m.iter()
                .map(|(k, e)| (k.clone(), copy(e, d + 1, from, me)))
                .collect::<crate::value::dict::Dict>(),
        )),
        Value::Object(i) => Value::Object(Arc::new(Instance {
            class: i.class.clone(),
            fields: i.fields.iter().map(|e| copy(e, d + 1, from, me)).collect(),
        })),
        other => other.clone(),
    }
}

/// The `self` of a block crossing processes: an actor handle that carries a copy of the
/// actor's state (taken from the running actor, or from the copy the block already had).
fn detach(recv: &Value, d: usize, from: Option<&Ctx>, me: u64) -> Value {
    let Some(a) = downcast::<ActorRef>(recv) else {
        return recv.clone();
    };
    let copy_all = |fields: &[Value]| -> Vec<Value> {
        fields.iter().map(|e| copy(e, d + 1, None, me)).collect()
    };
    let state = if let Some(st) = &a.state {
        copy_all(&st.lock())
    } else {
        match from {
            Some(ctx) if ctx.pid == a.proc.pid().number && !ctx.actor_fields.is_empty() => {
                copy_all(&ctx.actor_fields)
            }
            _ => return recv.clone(),
        }
    };
    native(ActorRef {
        proc: a.proc.clone(),
        class: a.class.clone(),
        timeout: a.timeout,
        proxy: a.proxy,
        own: a.own.clone(),
        state: Some(Arc::new(parking_lot::Mutex::new(state))),
    })
}
