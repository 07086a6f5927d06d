//! True, False and UndefinedObject. The evaluator inlines these selectors
//! when their arguments are literal blocks; these primitives serve every other call.

use crate::interp::eval::{Ctx, Prims};
use crate::interp::prims::value_of;
use crate::value::Value;

fn truthy(ctx: &Ctx, v: &Value, sel: &str) -> Result<bool, crate::interp::eval::Unwind> {
    match v {
        Value::True => Ok(true),
        Value::False => Ok(false),
        other => Err(ctx.dnu_error(other, crate::value::Sym::new(sel))),
    }
}

pub fn register(p: &mut Prims) {
    for c in ["True", "False"] {
        p.add(c, "ifTrue:", |ctx, r, a| {
            if truthy(ctx, r, "ifTrue:")? {
                value_of(ctx, &a[0])
            } else {
                Ok(r.clone())
            }
        });
        p.add(c, "ifFalse:", |ctx, r, a| {
            if truthy(ctx, r, "ifFalse:")? {
                Ok(r.clone())
            } else {
                value_of(ctx, &a[0])
            }
        });
        p.add(c, "ifTrue:ifFalse:", |ctx, r, a| {
            if truthy(ctx, r, "ifTrue:ifFalse:")? {
                value_of(ctx, &a[0])
            } else {
                value_of(ctx, &a[1])
            }
        });
        p.add(c, "and:", |ctx, r, a| {
            if truthy(ctx, r, "and:")? {
                value_of(ctx, &a[0])
            } else {
                Ok(Value::False)
            }
        });
        p.add(c, "or:", |ctx, r, a| {
            if truthy(ctx, r, "or:")? {
                Ok(Value::True)
            } else {
                value_of(ctx, &a[0])
            }
        });
        p.add(c, "not", |ctx, r, _| {
            Ok(Value::bool(!truthy(ctx, r, "not")?))
        });
        p.add(c, "xor:", |ctx, r, a| {
            let x = truthy(ctx, r, "xor:")?;
            let y = value_of(ctx, &a[0])?;
            let y = truthy(ctx, &y, "xor:")?;
            Ok(Value::bool(x != y))
        });
    }
    let u = "UndefinedObject";
    p.add(u, "isNil", |_, _, _| Ok(Value::True));
    p.add(u, "notNil", |_, _, _| Ok(Value::False));
    p.add(u, "ifNil:", |ctx, _, a| value_of(ctx, &a[0]));
    p.add(u, "ifNotNil:", |_, _, _| Ok(Value::Nil));
    p.add(u, "ifNil:ifNotNil:", |ctx, _, a| value_of(ctx, &a[0]));
    p.add(u, "ifNotNil:ifNil:", |ctx, _, a| value_of(ctx, &a[1]));
    p.add(u, "copy", |_, _, _| Ok(Value::Nil));
    p.add(u, "deepCopy", |_, _, _| Ok(Value::Nil));
    p.add(u, "shallowCopy", |_, _, _| Ok(Value::Nil));
}
