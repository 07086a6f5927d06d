//! Interval `a to: b [by: s]`: an inclusive arithmetic progression with
//! Integer or Float bounds, never materialised. Integer from/step give Integer elements (`1 to:
//! 2.5` is 1, 2); a Float from or step gives Floats. `at:` outside `1..size` raises
//! `index_out_of_bounds`, also when the Interval is empty. (`to:`/`to:by:` themselves are
//! Number primitives.) The size and elements are computed in `progression.rs`.

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::value::order::strict_eq;
use crate::value::{Interval, Ref, Value};

use super::common::{arg, empty_err, expected, index_arg};
use super::progression::{prog, Prog};
use super::stream;

pub fn register(p: &mut Prims) {
    let c = "Interval";
    p.add(c, "at:", at);
    p.add(c, "first", first);
    p.add(c, "last", last);
    p.add(c, "includes:", includes);
    p.add(c, "reversed", reversed);
    p.add(c, "stream", stream_p);
}

fn interval_of<'a>(
    ctx: &Ctx,
    sel: &str,
    v: &'a Value,
) -> Result<&'a Ref<Interval>, crate::interp::eval::Unwind> {
    match v {
        Value::Interval(iv) => Ok(iv),
        _ => Err(expected(ctx, sel, "an Interval", v)),
    }
}

fn at(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let iv = interval_of(ctx, "at:", recv)?;
    let p = prog(iv);
    let i = index_arg(ctx, "at:", "Interval", arg(args, 0), p.len(), false)?;
    Ok(p.nth(i))
}

fn first(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let p = prog(interval_of(ctx, "first", recv)?);
    if p.len() == 0 {
        return Err(empty_err(ctx, "Interval"));
    }
    Ok(p.nth(0))
}

fn last(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let p = prog(interval_of(ctx, "last", recv)?);
    if p.len() == 0 {
        return Err(empty_err(ctx, "Interval"));
    }
    Ok(p.last())
}

fn includes(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let p = prog(interval_of(ctx, "includes:", recv)?);
    let x = arg(args, 0);
    if let (Prog::Int { from, step, n }, Value::Int(x)) = (&p, x) {
        let d = *x as i128 - *from as i128;
        let s = *step as i128;
        let ok = s != 0 && d % s == 0 && d / s >= 0 && ((d / s) as u128) < *n as u128;
        return Ok(Value::bool(ok));
    }
    for k in 0..p.len() {
        ctx.tick()?;
        if strict_eq(&p.nth(k), x) {
            return Ok(Value::True);
        }
    }
    Ok(Value::False)
}

fn reversed(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let p = prog(interval_of(ctx, "reversed", recv)?);
    let it = (0..p.len()).rev().map(|k| p.nth(k));
    let l = ctx.collect_charged(it, crate::interp::eval::charge::ELEM)?;
    Ok(Value::List(Ref::new(l)))
}

fn stream_p(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    stream::stream_on(ctx, recv)
}
