//! Exception: signalling on both sides, re-signal, `signalKind:class:selector:hint:`.
//! Accessors (`message kind hint selector errorClass stackTrace`) are the generated getters of
//! the exception fields; printing lives in `interp::print`.

use std::sync::Arc;

use crate::interp::error::ErrorKind;
use crate::interp::error::{
    class_for_kind, is_exception, make_exception, F_ERROR_CLASS, F_KIND, F_MESSAGE, F_TRACE,
};
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::sym_arg;
use crate::value::{ClassRef, Instance, Sym, Value};

pub fn register(p: &mut Prims) {
    let e = "Exception";
    p.add(e, "signal", |ctx, r, _| signal(ctx, r, None));
    p.add(e, "signal:", |ctx, r, a| signal(ctx, r, Some(&a[0])));
    p.add(e, "messageText", |ctx, r, _| {
        let m = crate::interp::error::exc_field(r, F_MESSAGE);
        if m.is_nil() {
            Ok(Value::str(ctx.class_name_of(r)))
        } else {
            Ok(m)
        }
    });
    p.add(e, "sourceExcerpt", |ctx, r, _| {
        let locs = crate::interp::error::exc_field(r, crate::interp::error::F_LOCS);
        let Value::List(locs) = &locs else {
            return Ok(Value::Nil);
        };
        let first = locs.iter().find_map(|l| l.as_str().map(str::to_string));
        Ok(first
            .and_then(|l| ctx.prog.excerpt_at(&l))
            .map_or(Value::Nil, Value::str))
    });
    p.add(e, "description", |ctx, r, _| {
        Ok(Value::str(ctx.print_string(r)?))
    });
    p.add_class(e, "signal", |ctx, r, _| {
        let inst = new_instance(ctx, r)?;
        signal(ctx, &inst, None)
    });
    p.add_class(e, "signal:", |ctx, r, a| {
        let inst = new_instance(ctx, r)?;
        signal(ctx, &inst, Some(&a[0]))
    });
    p.add_class(e, "signalKind:message:", |ctx, r, a| {
        let kind = sym_arg(ctx, &a[0], "kind")?;
        let msg = ctx.display_string(&a[1])?;
        let origin = ctx.acts.last().map(|x| x.class);
        let Some(class) = own_class(ctx, r, kind) else {
            return Err(ctx.err_full(ErrorKind::from(kind), msg, None, None, origin));
        };
        let v = make_exception(
            &ctx.prog,
            &class,
            kind,
            msg,
            None,
            None,
            origin,
            None,
            ctx.stack_trace(),
        );
        let v = ctx.with_locations(v);
        ctx.note_raise(&v);
        Err(crate::interp::eval::Unwind::Error(v))
    });
    p.add_class(e, "signalKind:class:selector:hint:", |ctx, r, a| {
        let kind = sym_arg(ctx, &a[0], "kind")?;
        let cls = sym_arg(ctx, &a[1], "class")?;
        let sel = match &a[2] {
            Value::Nil => None,
            v => Some(sym_arg(ctx, v, "selector")?),
        };
        let hint = match &a[3] {
            Value::Nil => None,
            v => Some(ctx.display_string(v)?),
        };
        let class = own_class(ctx, r, kind)
            .unwrap_or_else(|| class_for_kind(&ctx.prog, ErrorKind::from(kind)));
        let v = make_exception(
            &ctx.prog,
            &class,
            kind,
            kind.as_str().to_string(),
            hint,
            sel,
            Some(cls),
            None,
            ctx.stack_trace(),
        );
        let v = ctx.with_locations(v);
        ctx.note_raise(&v);
        Err(crate::interp::eval::Unwind::Error(v))
    });
}

/// The class `signalKind:…` sent to `recv` raises when it is not the one the run time maps
/// `kind` to: the receiver itself unless that mapped class already is (or inherits from) it.
/// So `Exception`/`Error signalKind: #type_error …` raise a TypeError while
/// `MyError signalKind: …` raises a MyError.
fn own_class(ctx: &Ctx, recv: &Value, kind: Sym) -> Option<ClassRef> {
    let Value::Class(c) = recv else { return None };
    let mapped = class_for_kind(&ctx.prog, ErrorKind::from(kind));
    if mapped.inherits_or_is(c) || !is_exception_class(ctx, c) {
        None
    } else {
        Some(c.clone())
    }
}

/// True when `c` is Exception or one of its subclasses.
fn is_exception_class(ctx: &Ctx, c: &ClassRef) -> bool {
    c.inherits_or_is(&ctx.prog.core.exception)
}

fn new_instance(ctx: &mut Ctx, r: &Value) -> EvalResult {
    match r {
        Value::Class(c) => {
            let c = c.clone();
            ctx.instantiate(&c)
        }
        _ => Err(ctx.type_err("signal sent to a non-class")),
    }
}

/// Raises `exc` (a copy with message, kind, errorClass and trace filled in).
fn signal(ctx: &mut Ctx, exc: &Value, msg: Option<&Value>) -> EvalResult {
    if !is_exception(&ctx.prog, exc) {
        let n = ctx.class_name_of(exc);
        return Err(ctx.type_err(format!("{n} is not an exception")));
    }
    let Value::Object(inst) = exc else {
        return Err(ctx.type_err("not an exception"));
    };
    let mut fields = inst.fields.to_vec();
    if let Some(m) = msg {
        let s = ctx.display_string(m)?;
        fields[F_MESSAGE] = Value::str(s);
    } else if fields[F_MESSAGE].is_nil() {
        fields[F_MESSAGE] = Value::str(inst.class.name.as_str());
    }
    if fields[F_KIND].is_nil() {
        fields[F_KIND] = Value::Symbol(ctx.prog.syms.signal);
    }
    if fields[F_ERROR_CLASS].is_nil() {
        let origin = ctx.acts.last().map(|a| a.class).unwrap_or(inst.class.name);
        fields[F_ERROR_CLASS] = Value::Symbol(origin);
    }
    if fields[F_TRACE].is_nil() {
        fields[F_TRACE] = ctx.stack_trace();
        if let Some(l) = fields.get_mut(crate::interp::error::F_LOCS) {
            *l = ctx.stack_locations();
        }
    }
    let v = Value::Object(Arc::new(Instance {
        class: inst.class.clone(),
        fields: fields.into(),
    }));
    ctx.note_raise(&v);
    Err(crate::interp::eval::Unwind::Error(v))
}
