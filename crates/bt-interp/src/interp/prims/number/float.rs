//! Float primitives: the class constants and the Float-only selectors.
//! Arithmetic, comparisons, rounding and the functions are shared with Integer
//! (`prims::number`). There are no infinities or NaN: `Float infinity` is an arithmetic fault.

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::fault::{Fault, Res};
use crate::interp::prims::number::pure::{self as num, num, Num, Round};
use crate::value::Value;

/// The fractional part, keeping the sign (`-2.5 fractionPart` is `-0.5`).
pub(crate) fn fraction_part(v: &Value) -> Res {
    match num(v) {
        Some(Num::F(f)) => num::float(f.fract()),
        Some(_) => Ok(Value::float(0.0)),
        None => Err(Fault::Arith),
    }
}

/// The integral part as a Float (`-2.5 integerPart` is `-2.0`).
pub(crate) fn integer_part(v: &Value) -> Res {
    match num(v) {
        Some(n) => num::float(n.f64().trunc()),
        None => Err(Fault::Arith),
    }
}

unary_prim! {
    as_integer => |r| num::round(r, Round::Truncate);
    fraction => fraction_part;
    integer => integer_part;
}

fn pi(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::float(std::f64::consts::PI))
}

fn e(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::float(std::f64::consts::E))
}

/// `Float infinity` and `Float nan`: bt has no such values.
fn no_such_float(ctx: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    let detail = format!(
        "`Float {}`: a Float is always finite (there is no infinity or NaN)",
        ctx.cur_sel.as_str()
    );
    Err(crate::interp::error::arith_fault_detailed(
        ctx,
        Some(detail),
    ))
}

pub fn register(p: &mut Prims) {
    let c = "Float";
    p.add_class(c, "pi", pi);
    p.add_class(c, "e", e);
    p.add_class(c, "infinity", no_such_float);
    p.add_class(c, "negativeInfinity", no_such_float);
    p.add_class(c, "nan", no_such_float);
    p.add(c, "asInteger", as_integer);
    p.add(c, "fractionPart", fraction);
    p.add(c, "integerPart", integer);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        assert!(
            matches!(fraction_part(&Value::float(-2.5)), Ok(Value::Float(f)) if f.get() == -0.5)
        );
        assert!(
            matches!(integer_part(&Value::float(-2.5)), Ok(Value::Float(f)) if f.get() == -2.0)
        );
        assert!(matches!(fraction_part(&Value::Int(3)), Ok(Value::Float(f)) if f.get() == 0.0));
    }
}
