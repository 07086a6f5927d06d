//! Block: evaluation, loops, `on:do:`, `ensure:`, `ifCurtailed:`, and
//! the Integer loop selectors for non-literal blocks (literal ones are inlined).

use crate::interp::block_code::ClosureExt;
use crate::interp::error::is_exception;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::seq_arg;
use crate::value::{Sym, Value};

pub fn register(p: &mut Prims) {
    let b = "Block";
    p.add(b, "value", |ctx, r, _| ctx.call_block(r, &[]));
    p.add(b, "value:", |ctx, r, a| ctx.call_block(r, a));
    p.add(b, "value:value:", |ctx, r, a| ctx.call_block(r, a));
    p.add(b, "value:value:value:", |ctx, r, a| ctx.call_block(r, a));
    p.add(b, "value:value:value:value:", |ctx, r, a| {
        ctx.call_block(r, a)
    });
    p.add(b, "valueWithArguments:", |ctx, r, a| {
        let args = seq_arg(ctx, &a[0], "valueWithArguments: argument")?;
        ctx.call_block(r, &args)
    });
    p.add(b, "arity", arity);
    p.add(b, "numArgs", arity);
    p.add(b, "whileTrue:", |ctx, r, a| {
        while_loop(ctx, r, Some(&a[0]), true)
    });
    p.add(b, "whileFalse:", |ctx, r, a| {
        while_loop(ctx, r, Some(&a[0]), false)
    });
    p.add(b, "whileTrue", |ctx, r, _| while_loop(ctx, r, None, true));
    p.add(b, "whileFalse", |ctx, r, _| while_loop(ctx, r, None, false));
    p.add(b, "repeat", |ctx, r, _| loop {
        ctx.call_block(r, &[])?;
        ctx.tick()?;
    });
    p.add(b, "on:do:", on_do);
    // An exit (an embedder's limit, a kill) survives whatever the block does:
    // `Ctx::run_cleanup`.
    p.add(b, "ensure:", |ctx, r, a| match ctx.call_block(r, &[]) {
        Ok(v) => {
            ctx.call_block(&a[0], &[])?;
            Ok(v)
        }
        Err(u) => Err(ctx.run_cleanup(&a[0], u)),
    });
    p.add(b, "ifCurtailed:", |ctx, r, a| {
        match ctx.call_block(r, &[]) {
            Ok(v) => Ok(v),
            Err(u) => Err(ctx.run_cleanup(&a[0], u)),
        }
    });
    let i = "Integer";
    p.add(i, "to:do:", |ctx, r, a| {
        to_by_do(ctx, r, &a[0], &Value::Int(1), &a[1])
    });
    p.add(i, "to:by:do:", |ctx, r, a| {
        to_by_do(ctx, r, &a[0], &a[1], &a[2])
    });
}

fn arity(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    match r {
        Value::Block(b) => Ok(Value::Int(b.arity() as i64)),
        other => Err(ctx.dnu_error(other, Sym::new("arity"))),
    }
}

fn while_loop(ctx: &mut Ctx, cond: &Value, body: Option<&Value>, want: bool) -> EvalResult {
    loop {
        let c = ctx.call_block(cond, &[])?;
        let go = match c {
            Value::True => want,
            Value::False => !want,
            other => {
                return Err(
                    ctx.dnu_error(&other, Sym::new(if want { "ifTrue:" } else { "ifFalse:" }))
                )
            }
        };
        if !go {
            return Ok(Value::Nil);
        }
        if let Some(b) = body {
            ctx.call_block(b, &[])?;
        }
        ctx.tick()?;
    }
}

fn to_by_do(ctx: &mut Ctx, from: &Value, to: &Value, by: &Value, body: &Value) -> EvalResult {
    if let (Value::Int(a), Value::Int(b), Value::Int(s)) = (from, to, by) {
        let (a, b, s) = (*a, *b, *s);
        if s == 0 {
            return Ok(Value::Nil);
        }
        let mut i = a;
        while (s > 0 && i <= b) || (s < 0 && i >= b) {
            ctx.call_block(body, &[Value::Int(i)])?;
            ctx.tick()?;
            match i.checked_add(s) {
                Some(n) => i = n,
                None => break,
            }
        }
        return Ok(Value::Nil);
    }
    let zero = ctx.send(by, Sym::new("isZero"), &[])?;
    if matches!(zero, Value::True) {
        return Ok(Value::Nil);
    }
    let neg = matches!(ctx.send(by, Sym::new("isNegative"), &[])?, Value::True);
    let cmp = Sym::new(if neg { ">=" } else { "<=" });
    let mut i = from.clone();
    loop {
        if !matches!(ctx.send(&i, cmp, std::slice::from_ref(to))?, Value::True) {
            return Ok(Value::Nil);
        }
        ctx.call_block(body, std::slice::from_ref(&i))?;
        ctx.tick()?;
        i = ctx.send(&i, Sym::new("+"), std::slice::from_ref(by))?;
    }
}

/// Does `exc` match the `on:` argument (a class, or nil for everything)?
fn handles(ctx: &Ctx, filter: &Value, exc: &Value) -> Result<bool, Unwind> {
    match filter {
        Value::Nil => Ok(true),
        Value::Class(c) => Ok(ctx.is_kind_of(exc, c)),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("on:do: expects an exception class or nil, not {n}")))
        }
    }
}

fn on_do(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    // The filter is checked before the body runs, so a bad filter is reported
    // even when the body does not raise (and never replaces a raised exception).
    if !matches!(a[0], Value::Nil | Value::Class(_)) {
        let n = ctx.class_name_of(&a[0]);
        return Err(ctx.type_err(format!("on:do: expects an exception class or nil, not {n}")));
    }
    if let Value::Block(b) = r {
        if b.arity() != 0 {
            return ctx.call_block(r, &[]);
        }
    }
    match ctx.call_block(r, &[]) {
        Err(Unwind::Error(exc)) => {
            if !handles(ctx, &a[0], &exc)? || !is_exception(&ctx.prog, &exc) && !a[0].is_nil() {
                return Err(Unwind::Error(exc));
            }
            match &a[1] {
                Value::Block(b) if b.arity() == 0 => ctx.call_block(&a[1], &[]),
                Value::Block(_) => ctx.call_block(&a[1], std::slice::from_ref(&exc)),
                other => Ok(other.clone()),
            }
        }
        r => r,
    }
}
