//! Queue and Tuple. A Queue is a persistent FIFO (`enqueue:` answers a new
//! Queue, `dequeue` a Tuple `{element, restQueue}`); a Tuple is a fixed sequence with the
//! `{#ok, v}` / `{#error, r}` result conventions (`isOk`, `unwrap`, …).

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::{Ref, Sym, Value};

use super::common::{arg, block_arity, elems_arg, expected, index_arg, on_copy};
use super::seq::random_below;

pub(crate) fn register(p: &mut Prims) {
    let c = "Queue";
    p.add_class(c, "new", queue_new);
    p.add_class(c, "withAll:", queue_with_all);
    p.add(c, "enqueue:", enqueue);
    p.add(c, "dequeue", dequeue);
    p.add(c, "peek", peek);
    let c = "Tuple";
    p.add_class(c, "new", tuple_new);
    p.add_class(c, "new:", tuple_with_all);
    p.add_class(c, "withAll:", tuple_with_all);
    p.add(c, "at:", tuple_at);
    p.add(c, "atRandom", tuple_at_random);
    p.add(c, "isOk", is_ok);
    p.add(c, "isError", is_error);
    p.add(c, "unwrap", unwrap);
    p.add(c, "unwrapOr:", unwrap_or);
    p.add(c, "unwrapOrElse:", unwrap_or_else);
    p.add(c, "first", tuple_first);
    p.add(c, "second", tuple_second);
    p.add(c, "third", tuple_third);
}

fn queue_new(_: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::Queue(Ref::new(imbl::Vector::new())))
}

fn queue_with_all(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    let items = elems_arg(ctx, "withAll:", arg(args, 0))?;
    Ok(Value::Queue(Ref::new(items.into_iter().collect())))
}

/// Queue `enqueue:` in place (see [`super::InPlaceFn`]).
pub(crate) fn enqueue_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Queue(q) => crate::value::make_mut(q).push_back(arg(args, 0).clone()),
        other => return Err(expected(ctx, "enqueue:", "a Queue receiver", other)),
    }
    Ok(recv.clone())
}

fn enqueue(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(enqueue_in_place, ctx, recv, args)
}

fn queue_of<'a>(
    ctx: &Ctx,
    sel: &str,
    v: &'a Value,
) -> Result<&'a Ref<imbl::Vector<Value>>, Unwind> {
    match v {
        Value::Queue(q) => Ok(q),
        _ => Err(expected(ctx, sel, "a Queue", v)),
    }
}

fn empty_queue(ctx: &Ctx) -> Unwind {
    ctx.err(ErrorKind::EmptyQueue, "Queue is empty")
}

fn dequeue(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let q = queue_of(ctx, "dequeue", recv)?;
    let mut rest = (**q).clone();
    match rest.pop_front() {
        Some(x) => Ok(Value::tuple(vec![x, Value::Queue(Ref::new(rest))])),
        None => Err(empty_queue(ctx)),
    }
}

fn peek(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let q = queue_of(ctx, "peek", recv)?;
    q.front().cloned().ok_or_else(|| empty_queue(ctx))
}

fn tuple_new(_: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::tuple(Vec::new()))
}

fn tuple_with_all(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    Ok(Value::tuple(elems_arg(ctx, "withAll:", arg(args, 0))?))
}

fn tuple_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<&'a [Value], Unwind> {
    match v {
        Value::Tuple(t) => Ok(t.as_slice()),
        _ => Err(expected(ctx, sel, "a Tuple", v)),
    }
}

fn tuple_at(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let t = tuple_of(ctx, "at:", recv)?;
    let i = index_arg(ctx, "at:", "Tuple", arg(args, 0), t.len(), false)?;
    Ok(t[i].clone())
}

fn tuple_nth(ctx: &mut Ctx, recv: &Value, sel: &str, k: usize) -> EvalResult {
    let t = tuple_of(ctx, sel, recv)?;
    match t.get(k) {
        Some(x) => Ok(x.clone()),
        None if t.is_empty() => Err(super::common::empty_err(ctx, "Tuple")),
        None => Err(super::common::oob_err(ctx, k + 1, t.len())),
    }
}

fn tuple_first(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    tuple_nth(ctx, recv, "first", 0)
}

fn tuple_second(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    tuple_nth(ctx, recv, "second", 1)
}

fn tuple_third(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    tuple_nth(ctx, recv, "third", 2)
}

fn tuple_at_random(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let t = tuple_of(ctx, "atRandom", recv)?;
    if t.is_empty() {
        return Err(super::common::empty_err(ctx, "Tuple"));
    }
    Ok(t[random_below(t.len())].clone())
}

/// The tag of a result tuple: `Some(true)` for `{#ok, …}`, `Some(false)` for `{#error, …}`.
fn tag(t: &[Value]) -> Option<bool> {
    match t.first() {
        Some(Value::Symbol(s)) if *s == Sym::new("ok") => Some(true),
        Some(Value::Symbol(s)) if *s == Sym::new("error") => Some(false),
        _ => None,
    }
}

fn is_ok(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::bool(tag(tuple_of(ctx, "isOk", recv)?) == Some(true)))
}

fn is_error(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::bool(
        tag(tuple_of(ctx, "isError", recv)?) == Some(false),
    ))
}

fn payload(t: &[Value]) -> Value {
    t.get(1).cloned().unwrap_or(Value::Nil)
}

fn unwrap(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let t = tuple_of(ctx, "unwrap", recv)?;
    match tag(t) {
        Some(true) if t.len() == 2 => Ok(payload(t)),
        Some(false) if t.len() == 2 => {
            let p = ctx.print_string(recv)?;
            Err(ctx.err(
                ErrorKind::UserError,
                format!("Called unwrap on error tuple: {p}"),
            ))
        }
        _ => Err(ctx.err(
            ErrorKind::UserError,
            "unwrap requires an ok or error result tuple",
        )),
    }
}

fn unwrap_or(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let t = tuple_of(ctx, "unwrapOr:", recv)?;
    match tag(t) {
        Some(true) if t.len() == 2 => Ok(payload(t)),
        _ => Ok(arg(args, 0).clone()),
    }
}

/// `unwrapOrElse: aBlock`: the ok payload, else the block's value (given the error reason
/// when it takes one argument).
fn unwrap_or_else(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let t = tuple_of(ctx, "unwrapOrElse:", recv)?;
    match tag(t) {
        Some(true) if t.len() == 2 => Ok(payload(t)),
        _ => {
            let reason = payload(t);
            let block = arg(args, 0);
            if block_arity(ctx, "unwrapOrElse:", block)? == 1 {
                ctx.call_block(block, &[reason])
            } else {
                ctx.call_block(block, &[])
            }
        }
    }
}
