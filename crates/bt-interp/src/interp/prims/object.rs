//! ProtoObject and Object: equality, class, perform, nil tests, printing, reflection
//! on instances, `error:` and friends, and transcript output.

use crate::interp::class::ClassKind;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{sel_arity, Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::{class_arg, seq_arg, sym_arg, sym_list, value_with_optional};
use crate::interp::print;
use crate::value::order;
use crate::value::Value;

/// The units (`interp::eval::charge`) of walking a value's top level: a Value's worth per
/// element of a collection, a unit per byte of a String or Binary, nothing otherwise.
fn deep_units(v: &Value) -> usize {
    use crate::interp::eval::charge::ELEM;
    match v {
        Value::Str(s) => s.len(),
        Value::Binary(b) => b.len(),
        Value::Dict(d) => d.len().saturating_mul(2 * ELEM),
        Value::List(_) | Value::Array(_) | Value::Tuple(_) | Value::Set(_) | Value::Queue(_) => {
            crate::interp::prims::collections::common::size_of(v)
                .unwrap_or(0)
                .saturating_mul(ELEM)
        }
        _ => 0,
    }
}

/// Equality walks at most the smaller side (a huge List compared with nil is free).
fn pay_compare(ctx: &mut Ctx, a: &Value, b: &Value) -> Result<(), Unwind> {
    ctx.charge(deep_units(a).min(deep_units(b)))
}

pub fn register(p: &mut Prims) {
    {
        let c = "ProtoObject";
        p.add(c, "==", |ctx, r, a| {
            pay_compare(ctx, r, &a[0])?;
            Ok(Value::bool(order::loose_eq(r, &a[0])))
        });
        p.add(c, "/=", |ctx, r, a| {
            pay_compare(ctx, r, &a[0])?;
            Ok(Value::bool(!order::loose_eq(r, &a[0])))
        });
        p.add(c, "=:=", |ctx, r, a| {
            pay_compare(ctx, r, &a[0])?;
            Ok(Value::bool(order::strict_eq(r, &a[0])))
        });
        p.add(c, "=/=", |ctx, r, a| {
            pay_compare(ctx, r, &a[0])?;
            Ok(Value::bool(!order::strict_eq(r, &a[0])))
        });
        p.add(c, "class", class_of);
        p.add(c, "doesNotUnderstand:args:", dnu);
        p.add(c, "perform:withArguments:", perform_with_arguments);
        p.add(c, "perform:withArguments:timeout:", |ctx, r, a| {
            perform_with_arguments(ctx, r, &a[..2])
        });
        p.add(c, "performLocally:withArguments:", perform_with_arguments);
    }
    let o = "Object";
    p.add(o, "isNil", |_, _, _| Ok(Value::False));
    p.add(o, "notNil", |_, _, _| Ok(Value::True));
    p.add(o, "ifNil:", |_, r, _| Ok(r.clone()));
    p.add(o, "ifNotNil:", |ctx, r, a| {
        value_with_optional(ctx, &a[0], r)
    });
    p.add(o, "ifNil:ifNotNil:", |ctx, r, a| {
        value_with_optional(ctx, &a[1], r)
    });
    p.add(o, "ifNotNil:ifNil:", |ctx, r, a| {
        value_with_optional(ctx, &a[0], r)
    });
    p.add(o, "printString", |ctx, r, _| {
        Ok(Value::str(print::default_print(ctx, r)?))
    });
    p.add(o, "displayString", |ctx, r, _| {
        Ok(Value::str(print::default_display(ctx, r)?))
    });
    p.add(o, "yourself", |_, r, _| Ok(r.clone()));
    p.add(o, "copy", |_, r, _| Ok(r.clone()));
    p.add(o, "shallowCopy", |_, r, _| Ok(r.clone()));
    p.add(o, "deepCopy", |_, r, _| Ok(r.clone()));
    p.add(o, "hash", |ctx, r, _| {
        ctx.charge(deep_units(r))?;
        Ok(Value::Int((order::hash_value(r) >> 2) as i64))
    });
    p.add(o, "equals:", |ctx, r, a| {
        pay_compare(ctx, r, &a[0])?;
        Ok(Value::bool(order::strict_eq(r, &a[0])))
    });
    p.add(o, "respondsTo:", responds_to);
    p.add(o, "fieldNames", field_names);
    p.add(o, "fieldAt:", field_at);
    p.add(o, "fieldAt:put:", field_at_put);
    p.add(o, "perform:", |ctx, r, a| perform(ctx, r, &a[0], &[]));
    p.add(o, "perform:with:", |ctx, r, a| {
        perform(ctx, r, &a[0], &a[1..])
    });
    p.add(o, "perform:with:with:", |ctx, r, a| {
        perform(ctx, r, &a[0], &a[1..])
    });
    p.add(o, "perform:with:with:with:", |ctx, r, a| {
        perform(ctx, r, &a[0], &a[1..])
    });
    p.add(o, "perform:withArguments:", perform_with_arguments);
    p.add(o, "isKindOf:", is_kind_of);
    p.add(o, "isMemberOf:", |ctx, r, a| {
        let c = class_arg(ctx, &a[0], "isMemberOf: argument")?;
        Ok(Value::bool(std::sync::Arc::ptr_eq(&ctx.class_of(r), &c)))
    });
    p.add(o, "isClass", |_, _, _| Ok(Value::False));
    // Type tests a Smalltalk user expects on every object: false here, true in
    // the classes that override them (String.bt, Symbol.bt, Number.bt, boolean.rs …).
    for sel in [
        "isString",
        "isSymbol",
        "isNumber",
        "isInteger",
        "isFloat",
        "isCharacter",
        "isBoolean",
        "isBehaviour",
        "isMeta",
        "isMetaclass",
        "isEmptyOrNil",
    ] {
        p.add(o, sel, |_, _, _| Ok(Value::False));
    }
    p.add(o, "error:", error);
    p.add(o, "subclassResponsibility", |ctx, r, _| {
        Err(ctx.user_error(
            r,
            "This method is abstract and must be overridden by a subclass",
        ))
    });
    p.add(o, "notImplemented", |ctx, r, _| {
        Err(ctx.user_error(r, "Method not yet implemented"))
    });
    p.add(o, "show:", |ctx, r, a| {
        let s = ctx.display_string(&a[0])?;
        ctx.prog.write_out(&s);
        Ok(r.clone())
    });
    p.add(o, "showCr:", |ctx, r, a| {
        let s = ctx.display_string(&a[0])?;
        ctx.prog.write_out(&format!("{s}\n"));
        Ok(r.clone())
    });
    p.add(o, "value", |_, r, _| Ok(r.clone()));

    system(p);
}

fn class_of(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    Ok(match r {
        Value::Class(c) | Value::Meta(c) => Value::Meta(c.clone()),
        other => Value::Class(ctx.class_of(other)),
    })
}

/// The default `doesNotUnderstand: #sel args: list`: raises `does_not_understand`.
fn dnu(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let sel = sym_arg(ctx, &a[0], "selector")?;
    Err(ctx.dnu_error(r, sel))
}

fn perform(ctx: &mut Ctx, r: &Value, sel: &Value, args: &[Value]) -> EvalResult {
    let sel = sym_arg(ctx, sel, "perform: selector")?;
    let want = sel_arity(sel.as_str());
    if want != args.len() {
        return Err(ctx.err(
            ErrorKind::ArityMismatch,
            format!(
                "Wrong number of arguments: {} expects {} but was called with {}",
                sel,
                want,
                args.len()
            ),
        ));
    }
    ctx.send(r, sel, args)
}

fn perform_with_arguments(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let args = seq_arg(ctx, &a[1], "perform:withArguments: arguments")?;
    perform(ctx, r, &a[0], &args)
}

fn responds_to(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let sel = sym_arg(ctx, &a[0], "respondsTo: argument")?;
    Ok(Value::bool(ctx.responds_to(r, sel)))
}

fn is_kind_of(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match &a[0] {
        Value::Class(c) => Ok(Value::bool(ctx.is_kind_of(r, c))),
        Value::Meta(c) => Ok(Value::bool(
            matches!(r, Value::Class(k) if k.inherits_or_is(c)),
        )),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("isKindOf: argument must be a class, not {n}")))
        }
    }
}

fn field_names(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    match r {
        Value::Object(i) if i.class.kind == ClassKind::Value => {
            Ok(sym_list(i.class.field_names.iter().copied()))
        }
        _ => {
            let _ = ctx;
            Ok(Value::list(Vec::new()))
        }
    }
}

fn immutable(ctx: &Ctx, r: &Value) -> Unwind {
    let n = ctx.class_name_of(r);
    ctx.err(
        ErrorKind::ImmutableValue,
        format!("{n} is immutable: fields cannot be changed in place"),
    )
}

fn field_at(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let name = sym_arg(ctx, &a[0], "fieldAt: argument")?;
    match r {
        Value::Object(i) if i.class.kind == ClassKind::Value => match i.class.field_index(name) {
            Some(k) => Ok(i.fields.get(k).cloned().unwrap_or(Value::Nil)),
            None => Err(ctx.err(ErrorKind::KeyError, format!("key not found: #{name}"))),
        },
        _ => Err(immutable(ctx, r)),
    }
}

fn field_at_put(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let _ = sym_arg(ctx, &a[0], "fieldAt:put: field name")?;
    Err(immutable(ctx, r))
}

fn error(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let msg = ctx.display_string(&a[0])?;
    Err(ctx.user_error(r, msg))
}

/// `System` and `Program`: arguments, environment and exit (the clocks of `Time` are in
/// `timer.rs`).
fn system(p: &mut Prims) {
    use crate::interp::capability::{require, require_env, Capability};
    let s = "System";
    p.add_class(s, "arguments", |ctx, _, _| {
        Ok(Value::list(
            ctx.prog.args.read().iter().map(|a| Value::str(a.clone())),
        ))
    });
    p.add_class(s, "getEnv:", |ctx, _, a| {
        let k = ctx.display_string(&a[0])?;
        require_env(ctx, "System getEnv:", &k)?;
        Ok(std::env::var(k).map(Value::str).unwrap_or(Value::Nil))
    });
    p.add_class(s, "getEnv:default:", |ctx, _, a| {
        let k = ctx.display_string(&a[0])?;
        require_env(ctx, "System getEnv:default:", &k)?;
        Ok(std::env::var(k)
            .map(Value::str)
            .unwrap_or_else(|_| a[1].clone()))
    });
    p.add_class(s, "osFamily", |_, _, _| {
        Ok(Value::str(std::env::consts::FAMILY))
    });
    p.add_class(s, "hostname", |ctx, _, _| {
        require(ctx, Capability::Sys, "System hostname")?;
        let h = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .unwrap_or_else(|_| "localhost".into());
        Ok(Value::str(h.trim()))
    });
    p.add_class(s, "pid", |ctx, _, _| {
        require(ctx, Capability::Sys, "System pid")?;
        Ok(Value::Int(std::process::id() as i64))
    });
    let pg = "Program";
    p.add_class(pg, "exit", |_, _, _| Err(Unwind::program_exit(0)));
    p.add_class(pg, "exit:", |ctx, _, a| match &a[0] {
        Value::Int(c) if (0..=255).contains(c) => Err(Unwind::program_exit(*c)),
        other => {
            let n = ctx.print_string(other)?;
            Err(ctx.type_err(format!("Program exit: expects an Integer 0-255, got {n}")))
        }
    });
    p.add_class(pg, "commandName", |ctx, _, _| {
        Ok(Value::str(ctx.prog.command_name.read().clone()))
    });
}
