//! Instance creation on the class side: `new` and `new:` by class kind, with
//! `instantiation_error` for abstract classes, actors and built-ins created otherwise.

use crate::interp::class::{Builtin, ClassKind};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::value::{ClassRef, Instance, Ref, Value};

pub fn register(p: &mut Prims) {
    p.add_class("Object", "new", |ctx, r, _| {
        let c = receiver_class(ctx, r)?;
        check_new(ctx, &c, false)?;
        ctx.instantiate(&c)
    });
    p.add_class("Object", "new:", |ctx, r, a| {
        let c = receiver_class(ctx, r)?;
        check_new(ctx, &c, true)?;
        new_with(ctx, &c, &a[0])
    });
    // The instance side of Behaviour: reached by a class whose class side has no `new` of
    // its own (ProtoObject and `nil subclass:` roots), with the same checks.
    p.add("Behaviour", "new", |ctx, r, _| {
        let c = receiver_class(ctx, r)?;
        check_new(ctx, &c, false)?;
        ctx.instantiate(&c)
    });
    p.add("Behaviour", "new:", |ctx, r, a| {
        let c = receiver_class(ctx, r)?;
        check_new(ctx, &c, true)?;
        new_with(ctx, &c, &a[0])
    });
    for m in ["new", "new:"] {
        p.add("Metaclass", m, |ctx, r, _| {
            let n = ctx.class_name_of(r);
            Err(ctx.err(
                ErrorKind::InstantiationError,
                format!("Cannot instantiate {n}: metaclasses have no instances"),
            ))
        });
    }
    // `self class spawn` inside a class method: a metaclass forwards its class's actor
    // instance-creation selectors to the class.
    p.add("Metaclass", "spawn", |ctx, r, a| {
        forward(ctx, r, "spawn", a)
    });
    p.add("Metaclass", "spawnWith:", |ctx, r, a| {
        forward(ctx, r, "spawnWith:", a)
    });
    p.add("Metaclass", "spawnAs:", |ctx, r, a| {
        forward(ctx, r, "spawnAs:", a)
    });
    p.add("Metaclass", "spawnWith:as:", |ctx, r, a| {
        forward(ctx, r, "spawnWith:as:", a)
    });
}

/// Sends `sel` to the class of the metaclass `r`.
fn forward(ctx: &mut Ctx, r: &Value, sel: &str, a: &[Value]) -> EvalResult {
    let Value::Meta(c) = r else {
        let n = ctx.class_name_of(r);
        return Err(ctx.type_err(format!("{sel} needs a metaclass receiver, not {n}")));
    };
    ctx.send(&Value::Class(c.clone()), crate::value::Sym::new(sel), a)
}

fn receiver_class(ctx: &Ctx, r: &Value) -> Result<ClassRef, crate::interp::eval::Unwind> {
    match r {
        Value::Class(c) => Ok(c.clone()),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.err(
                ErrorKind::InstantiationError,
                format!("Cannot instantiate {n}"),
            ))
        }
    }
}

/// The checks of 5.2/5.3/5.5, made before looking at any argument.
fn check_new(ctx: &Ctx, c: &ClassRef, keyed: bool) -> Result<(), crate::interp::eval::Unwind> {
    if c.is_abstract || c.builtin == Builtin::Abstract {
        return Err(ctx.err(
            ErrorKind::InstantiationError,
            format!("Cannot instantiate abstract class {}", c.name),
        ));
    }
    if c.builtin == Builtin::NoNew {
        let sel = if keyed { "new:" } else { "new" };
        return Err(ctx.err(
            ErrorKind::InstantiationError,
            format!("Cannot create {} instances with {sel}", c.name),
        ));
    }
    if c.kind == ClassKind::Actor {
        let msg = if keyed {
            "Use spawnWith: instead"
        } else {
            "Use spawn instead"
        };
        return Err(ctx.err(ErrorKind::InstantiationError, msg));
    }
    Ok(())
}

/// `new` for a library class whose instances only its constructors make (DateTime, Regex,
/// Protocol): `instantiation_error` "Cannot create X instances with new", with a hint naming
/// the constructor (an instance without its native payload would fail every send).
pub fn refuse_new(ctx: &Ctx, r: &Value, hint: &str) -> EvalResult {
    let n = match r {
        Value::Class(c) => c.name.as_str().to_string(),
        other => ctx.class_name_of(other),
    };
    Err(ctx.err_hint(
        ErrorKind::InstantiationError,
        format!("Cannot create {n} instances with new"),
        hint,
    ))
}

/// `new` evaluated for a class value (helpers for other modules).
pub fn new_instance(ctx: &mut Ctx, c: &ClassRef) -> EvalResult {
    check_new(ctx, c, false)?;
    ctx.instantiate(c)
}

/// `new:` after the checks: object classes refuse it; value classes take a Dictionary of
/// field values.
fn new_with(ctx: &mut Ctx, c: &ClassRef, arg: &Value) -> EvalResult {
    if c.kind == ClassKind::Object {
        return Err(ctx.err(
            ErrorKind::InstantiationError,
            format!("{} does not take new: — use new", c.name),
        ));
    }
    let Value::Dict(d) = arg else {
        let n = ctx.class_name_of(arg);
        return Err(ctx.type_err(format!(
            "new: expects a Dictionary of field values, not {n}"
        )));
    };
    let d = d.clone();
    let inst = ctx.instantiate(c)?;
    let Value::Object(o) = &inst else {
        return Ok(inst);
    };
    let mut fields = o.fields.to_vec();
    for (i, f) in c.field_names.iter().enumerate() {
        if let Some(v) = d.get(&Value::Symbol(*f)) {
            fields[i] = v.clone();
        }
    }
    Ok(Value::Object(Ref::new(Instance {
        class: c.clone(),
        fields: fields.into(),
    })))
}
