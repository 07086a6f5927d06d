//! Number primitives shared by Integer, Float and Character.
//!
//! Arithmetic answers an Integer for two Integers and a Float otherwise; a non-number argument
//! is an arithmetic fault (`1 + "x"`). Comparisons are numeric between numbers and fall back
//! to the standard term order for any other argument (`3 < "a"` is true).

use std::cmp::Ordering;

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::fault::{int_arg, Fault, Res};
use crate::interp::prims::number::pure::{self as num, compare, num, Op, Round};
use crate::value::Value;

/// Defines a one-argument primitive over a pure `fn(&Value, &Value) -> Res`.
macro_rules! binary_prim {
    ($($name:ident => $f:expr;)*) => {$(
        fn $name(
            ctx: &mut $crate::interp::eval::Ctx,
            r: &$crate::value::Value,
            a: &[$crate::value::Value],
        ) -> $crate::interp::eval::EvalResult {
            let f: fn(
                &$crate::value::Value,
                &$crate::value::Value,
            ) -> $crate::interp::prims::fault::Res = $f;
            $crate::interp::prims::fault::lift_op(ctx, r, &a[0], f(r, &a[0]))
        }
    )*};
}

/// Defines a unary primitive over a pure `fn(&Value) -> Res`.
macro_rules! unary_prim {
    ($($name:ident => $f:expr;)*) => {$(
        fn $name(
            ctx: &mut $crate::interp::eval::Ctx,
            r: &$crate::value::Value,
            _a: &[$crate::value::Value],
        ) -> $crate::interp::eval::EvalResult {
            let f: fn(&$crate::value::Value) -> $crate::interp::prims::fault::Res = $f;
            $crate::interp::prims::fault::lift_unary(ctx, r, f(r))
        }
    )*};
}

pub(crate) use {binary_prim, unary_prim};

pub mod big;
pub mod float;
pub mod integer;
pub mod metered;
pub mod pure;
use crate::interp::registry::Cost;

binary_prim! {
    add => |r, a| num::arith(Op::Add, r, a);
    sub => |r, a| num::arith(Op::Sub, r, a);
    div => num::divide;
    round_to => |r, a| num::round_to(r, a, Round::Nearest);
    truncate_to => |r, a| num::round_to(r, a, Round::Truncate);
    atan2 => atan2_of;
    log_base => log_base_of;
}

unary_prim! {
    negated => num::negate;
    abs => num::abs;
    rounded => |r| num::round(r, Round::Nearest);
    floor => |r| num::round(r, Round::Floor);
    ceiling => |r| num::round(r, Round::Ceiling);
    truncated => |r| num::round(r, Round::Truncate);
    as_float => num::to_float;
    sqrt => num::sqrt;
    ln => num::ln;
    log2 => num::log2;
    log10 => num::log10;
    exp => |r| num::float_fn(r, f64::exp);
    sin => |r| num::float_fn(r, f64::sin);
    cos => |r| num::float_fn(r, f64::cos);
    tan => |r| num::float_fn(r, f64::tan);
    sinh => |r| num::float_fn(r, f64::sinh);
    cosh => |r| num::float_fn(r, f64::cosh);
    tanh => |r| num::float_fn(r, f64::tanh);
    asin => |r| num::float_fn(r, f64::asin);
    acos => |r| num::float_fn(r, f64::acos);
    atan => |r| num::float_fn(r, f64::atan);
    itself => |r: &Value| Ok(r.clone());
}

fn atan2_of(y: &Value, x: &Value) -> Res {
    match (num(y), num(x)) {
        (Some(a), Some(b)) => num::float(a.f64().atan2(b.f64())),
        _ => Err(Fault::Arith),
    }
}

/// `100 log: 10` is `2.0`.
fn log_base_of(x: &Value, base: &Value) -> Res {
    let (a, b) = (num::ln(x)?, num::ln(base)?);
    match (a, b) {
        (Value::Float(a), Value::Float(b)) if b.get() != 0.0 => num::float(a.get() / b.get()),
        _ => Err(Fault::Arith),
    }
}

/// The places of `printShowingDecimalPlaces:` (0 to 100).
fn places_arg(places: &Value) -> Res<usize> {
    let n = int_arg("printShowingDecimalPlaces:", places)?;
    if !(0..=100).contains(&n) {
        return Err(Fault::Type(format!(
            "printShowingDecimalPlaces: expects 0 to 100 places, got {n}"
        )));
    }
    Ok(n as usize)
}

/// `3.14159 printShowingDecimalPlaces: 2` is `"3.14"`, `5 printShowingDecimalPlaces: 2`
/// `"5.00"`. A huge Integer's digits come from the metered radix conversion
/// (`metered::int_string`), so a limit lands between its pieces.
fn decimal_places(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let n = places_arg(&a[0]).map_err(|f| f.raise(ctx))?;
    match num(r) {
        Some(num::Num::F(f)) => Ok(Value::str(format!("{f:.*}", n))),
        Some(_) => {
            let mut s = metered::int_string(ctx, r)?;
            if n > 0 {
                s.push('.');
                s.extend(std::iter::repeat_n('0', n));
            }
            Ok(Value::str(s))
        }
        None => Err(Fault::Arith.raise(ctx)),
    }
}

ordering_prims!();

/// `max:` answers the argument on a tie (Smalltalk's `self > x ifTrue: [self] ifFalse: [x]`).
fn max(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    Ok(char_mix(
        r,
        &a[0],
        if compare(r, &a[0]) == Ordering::Greater {
            r
        } else {
            &a[0]
        },
    ))
}

/// The result of `max:`/`min:`: a Character compared with a non-Character answers its code
/// point (Integer arithmetic answers Integers); two Characters answer a Character.
fn char_mix(r: &Value, x: &Value, chosen: &Value) -> Value {
    match chosen {
        Value::Char(c) if !matches!((r, x), (Value::Char(_), Value::Char(_))) => {
            Value::Int(c.get() as i64)
        }
        other => other.clone(),
    }
}

/// `min:` answers the argument on a tie.
fn min(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    Ok(char_mix(
        r,
        &a[0],
        if compare(r, &a[0]) == Ordering::Less {
            r
        } else {
            &a[0]
        },
    ))
}

/// `between: lo and: hi`, inclusive.
fn between(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    Ok(Value::bool(
        compare(r, &a[0]) != Ordering::Less && compare(r, &a[1]) != Ordering::Greater,
    ))
}

pub fn register(p: &mut Prims) {
    p.hooks.big_int_string = metered::int_string;
    let c = "Number";
    p.add(c, "+", add).cost(Cost::BigLinear);
    p.add(c, "-", sub).cost(Cost::BigLinear);
    // `*`, the division family, `**` and printing charge themselves: small operands up
    // front as `Cost::BigProduct`, huge ones piece by piece (metered.rs).
    p.add(c, "*", metered::mul);
    p.add(c, "/", div).cost(Cost::BigProduct);
    p.add(c, "%", metered::rem);
    p.add(c, "rem:", metered::rem);
    p.add(c, "mod:", metered::modulo);
    p.add(c, "div:", metered::quo);
    p.add(c, "quo:", metered::quo);
    p.add(c, "\\\\", metered::modulo);
    p.add(c, "value", itself);
    p.add(c, "**", metered::pow);
    p.add(c, "raisedTo:", metered::pow);
    p.add(c, "<", lt).cost(Cost::BigLinear);
    p.add(c, ">", gt).cost(Cost::BigLinear);
    p.add(c, "<=", le).cost(Cost::BigLinear);
    p.add(c, ">=", ge).cost(Cost::BigLinear);
    p.add(c, "max:", max);
    p.add(c, "min:", min);
    p.add(c, "between:and:", between);
    p.add(c, "negated", negated);
    p.add(c, "abs", abs);
    p.add(c, "rounded", rounded);
    p.add(c, "floor", floor);
    p.add(c, "ceiling", ceiling);
    p.add(c, "truncated", truncated);
    p.add(c, "roundTo:", round_to);
    p.add(c, "truncateTo:", truncate_to);
    p.add(c, "asFloat", as_float);
    p.add(c, "sqrt", sqrt);
    p.add(c, "ln", ln);
    p.add(c, "log", ln);
    p.add(c, "log:", log_base);
    p.add(c, "log2", log2);
    p.add(c, "log10", log10);
    p.add(c, "exp", exp);
    p.add(c, "sin", sin);
    p.add(c, "cos", cos);
    p.add(c, "tan", tan);
    p.add(c, "sinh", sinh);
    p.add(c, "cosh", cosh);
    p.add(c, "tanh", tanh);
    p.add(c, "asin", asin);
    p.add(c, "arcSin", asin);
    p.add(c, "acos", acos);
    p.add(c, "arcCos", acos);
    p.add(c, "atan", atan);
    p.add(c, "arcTan", atan);
    p.add(c, "atan2:", atan2);
    p.add(c, "printString", metered::print_string);
    p.add(c, "asString", metered::print_string);
    p.add(c, "printShowingDecimalPlaces:", decimal_places);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_comparison_ignores_kind() {
        assert_eq!(compare(&Value::Int(1), &Value::float(1.0)), Ordering::Equal);
        assert_eq!(compare(&Value::ch('a'), &Value::Int(98)), Ordering::Less);
        assert_eq!(
            compare(&Value::float(2.5), &Value::Int(2)),
            Ordering::Greater
        );
    }

    #[test]
    fn log_with_base_and_decimal_places() {
        let f = |r: Res| match r {
            Ok(Value::Float(x)) => x.get(),
            _ => f64::NAN,
        };
        assert_eq!(f(log_base_of(&Value::Int(8), &Value::Int(2))), 3.0);
        assert_eq!(
            log_base_of(&Value::Int(8), &Value::Int(1)).err(),
            Some(Fault::Arith)
        );
        // The printing itself is a context primitive (tests/engine/limits.rs).
        assert_eq!(places_arg(&Value::Int(2)), Ok(2));
        assert!(places_arg(&Value::Int(101)).is_err());
    }
}
