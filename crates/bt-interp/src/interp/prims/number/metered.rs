//! The Integer primitives whose work grows faster than their operands — `*`, the division
//! family (`div:`, `quo:`, `rem:`, `%`, `mod:`, `\\`), `gcd:`, `lcm:`, `**`/`raisedTo:`,
//! printing in a radix and String `asInteger`/`asNumber` — with huge operands run through
//! `number::big`, whose pieces pay their reductions as they go (`Ctx::charge`), so a
//! deadline, a `CancelHandle`, `Engine::shutdown`, a reduction or memory limit or the
//! actor's preemption comes between pieces instead of after the whole operation.
//!
//! Operands under `big`'s leaf sizes take the direct path: the work charged up front
//! (`Cost::BigProduct`, one `any_big` test for machine Integers and Floats) and one pure
//! call. A result that would pass an embedder's memory limit is refused before the
//! operation allocates (`memory::would_exceed`, as `Ctx::charge` does for bulk steps).

use std::borrow::Cow;

use num_bigint::{BigInt, Sign};
use num_traits::Zero;

use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::fault::{lift, lift_op, Fault, Res};
use crate::interp::prims::number::big::{self, div, gcd, radix};
use crate::interp::prims::number::pure::{self as num, num, Num, Op, MAX_INT_BITS};
use crate::interp::registry::big_units as units;
use crate::interp::registry::Cost;
use crate::value::Value;

/// Both operands as Integers when at least one is a big Integer (else None: the direct path).
fn big_pair<'a>(r: &'a Value, a: &'a Value) -> Option<(Cow<'a, BigInt>, Cow<'a, BigInt>)> {
    if !units::any_big(r, std::slice::from_ref(a)) {
        return None;
    }
    match (num(r)?, num(a)?) {
        (x @ (Num::I(_) | Num::B(_)), y @ (Num::I(_) | Num::B(_))) => Some((x.big()?, y.big()?)),
        _ => None,
    }
}

/// Refuses an operation whose result has about `bits` bits when the result and the pieces'
/// temporaries (three times the result's bytes) would pass the memory limit of the running
/// engine or actor.
fn room_for(ctx: &mut Ctx, bits: u64) -> Result<(), Unwind> {
    let bytes = bits.saturating_mul(3) / 8;
    ctx.reserve(bytes.min(usize::MAX as u64) as usize)
}

/// The direct path: the work charged up front, then the pure operation.
fn charged(ctx: &mut Ctx, r: &Value, a: &[Value], f: fn(&Value, &Value) -> Res) -> EvalResult {
    Cost::BigProduct.charge(ctx, r, a)?;
    lift_op(ctx, r, &a[0], f(r, &a[0]))
}

fn big(v: BigInt) -> EvalResult {
    Ok(Value::from_bigint(v))
}

/// `*`.
pub(crate) fn mul(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match big_pair(r, &a[0]) {
        Some((x, y)) if !big::small_product(x.magnitude(), y.magnitude()) => {
            let bits = x.bits() + y.bits();
            if bits > MAX_INT_BITS {
                return lift(ctx, Err(num::too_large()));
            }
            room_for(ctx, bits)?;
            big(big::mul_int(&x, &y, &mut |u| ctx.charge(u))?)
        }
        _ => charged(ctx, r, a, |r, a| num::arith(Op::Mul, r, a)),
    }
}

/// The division family on huge Integers (`None`: the direct path).
fn division(
    ctx: &mut Ctx,
    r: &Value,
    a: &[Value],
    pick: fn(&BigInt, &BigInt, &mut big::Meter) -> Result<BigInt, Unwind>,
) -> Option<EvalResult> {
    let (x, y) = big_pair(r, &a[0])?;
    if y.is_zero() || div::small_division(x.magnitude(), y.magnitude()) {
        return None;
    }
    Some((|| {
        room_for(ctx, x.bits())?;
        big(pick(&x, &y, &mut |u| ctx.charge(u))?)
    })())
}

/// `div:` / `quo:`.
pub fn quo(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    division(ctx, r, a, |x, y, m| Ok(div::div_rem_int(x, y, m)?.0))
        .unwrap_or_else(|| charged(ctx, r, a, num::quo))
}

/// `rem:` / `%`.
pub fn rem(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    division(ctx, r, a, |x, y, m| Ok(div::div_rem_int(x, y, m)?.1))
        .unwrap_or_else(|| charged(ctx, r, a, num::rem))
}

/// `mod:` / `\\`.
pub(crate) fn modulo(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    division(ctx, r, a, div::mod_floor_int).unwrap_or_else(|| charged(ctx, r, a, num::modulo))
}

/// Operands of at most this many bits take the old gcd path.
const GCD_SMALL_BITS: u64 = 4096;

fn gcd_or_lcm(ctx: &mut Ctx, r: &Value, a: &[Value], lcm: bool) -> EvalResult {
    if let Some((x, y)) = big_pair(r, &a[0]) {
        if x.bits().max(y.bits()) > GCD_SMALL_BITS {
            let (p, q) = (x.magnitude(), y.magnitude());
            room_for(ctx, x.bits() + y.bits())?;
            let mut m = |u| ctx.charge(u);
            let g = if lcm {
                gcd::lcm(p, q, &mut m)?
            } else {
                gcd::gcd(p, q, &mut m)?
            };
            return big(BigInt::from(g));
        }
    }
    Cost::BigProduct.charge(ctx, r, a)?;
    lift(ctx, num::gcd(r, &a[0], lcm))
}

/// `gcd:`.
pub(crate) fn gcd_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    gcd_or_lcm(ctx, r, a, false)
}

/// `lcm:`.
pub(crate) fn lcm_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    gcd_or_lcm(ctx, r, a, true)
}

/// Results of at most this many bits take the old power path.
const POW_SMALL_BITS: u64 = 32 * big::MUL_LEAF as u64;

/// `**` / `raisedTo:`: an exact power whose result is huge is computed by repeated squaring
/// through `big::mul`; anything else as before (charged by the size of the result).
pub(crate) fn pow(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    if let (Some(b @ (Num::I(_) | Num::B(_))), Value::Int(e)) = (num(r), &a[0]) {
        let base = b.big().unwrap_or_default();
        let bits = base.bits().saturating_mul((*e).max(0) as u64);
        if base.bits() > 1 && *e > 1 && bits > POW_SMALL_BITS {
            if bits > MAX_INT_BITS {
                return lift(ctx, Err(num::too_large()));
            }
            room_for(ctx, bits)?;
            return big(big::pow_int(&base, *e as u64, &mut |u| ctx.charge(u))?);
        }
        if base.bits() > 1 && *e > 0 {
            ctx.charge((bits.min(MAX_INT_BITS + 1) / 4) as usize)?;
        }
    }
    lift_op(ctx, r, &a[0], num::power(r, &a[0]))
}

/// The digits of an Integer in `radix` (lower case), metered when it is huge.
fn digits_of(ctx: &mut Ctx, v: &Value, radix: u32) -> Result<Option<String>, Unwind> {
    let Value::BigInt(b) = v else {
        return Ok(None);
    };
    if big::digits(b.magnitude()) <= radix::PRINT_LEAF || radix.is_power_of_two() {
        return Ok(None);
    }
    let s = radix::to_radix(b.magnitude(), radix, &mut |u| ctx.charge(u))?;
    Ok(Some(if b.sign() == Sign::Minus {
        format!("-{s}")
    } else {
        s
    }))
}

/// The decimal printString of an Integer (metered when huge; any number otherwise).
pub(crate) fn int_string(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    match digits_of(ctx, v, 10)? {
        Some(s) => Ok(s),
        None => Ok(num::int_string(v)),
    }
}

/// `printString` / `asString` of a number.
pub fn print_string(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    if let Value::BigInt(b) = r {
        // About 0.302 decimal digits a bit, reserved before they are made.
        ctx.reserve(usize::try_from(b.bits() / 3 + 2).unwrap_or(usize::MAX))?;
    }
    if let Some(s) = digits_of(ctx, r, 10)? {
        return Ok(Value::str(s));
    }
    Cost::BigProduct.charge(ctx, r, a)?;
    Ok(Value::str(num::int_string(r)))
}

/// `printString: base` / `radix: base`, and with the `16r` prefix (`prefixed`).
pub(crate) fn radix_string(ctx: &mut Ctx, r: &Value, a: &[Value], prefixed: bool) -> EvalResult {
    let sel = if prefixed {
        "printStringRadix:"
    } else {
        "printString:"
    };
    let base = crate::interp::prims::fault::int_arg(sel, &a[0]).map_err(|f| f.raise(ctx))?;
    if let (Value::BigInt(b), 2..=36) = (r, base) {
        // The digits (and their upper-cased copy), reserved before they are made.
        let digits = b.bits() / (base as f64).log2().floor().max(1.0) as u64 + 2;
        ctx.reserve(usize::try_from(digits.saturating_mul(2)).unwrap_or(usize::MAX))?;
    }
    let s = match (2..=36).contains(&base) {
        true => digits_of(ctx, r, base as u32)?.map(|s| s.to_uppercase()),
        false => None,
    };
    let s = match s {
        Some(s) => s,
        None => {
            Cost::BigProduct.charge(ctx, r, a)?;
            num::to_radix(r, base).map_err(|f| f.raise(ctx))?
        }
    };
    Ok(Value::str(match (prefixed, s.strip_prefix('-')) {
        (false, _) => s,
        (true, Some(d)) => format!("-{base}r{d}"),
        (true, None) => format!("{base}r{s}"),
    }))
}

/// `"42" asInteger`: as `pure::parse_integer`, metered for long digit strings.
pub(crate) fn parse_integer(ctx: &mut Ctx, s: &str) -> Result<Option<Value>, Unwind> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body.len() <= radix::PARSE_LEAF || !body.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(num::parse_integer(s));
    }
    if body.len() as u64 > MAX_INT_BITS / 3 {
        return Err(num::too_large().raise(ctx));
    }
    room_for(ctx, body.len() as u64 * 4)?;
    let m = radix::parse_decimal(body.as_bytes(), &mut |u| ctx.charge(u))?;
    let sign = if s.starts_with('-') {
        Sign::Minus
    } else {
        Sign::Plus
    };
    Ok(Some(Value::from_bigint(BigInt::from_biguint(sign, m))))
}

/// The receiver of a String primitive (the Value is kept, the text borrowed from it).
fn text(ctx: &Ctx, sel: &str, r: &Value) -> Result<Value, Unwind> {
    match r.as_str() {
        Some(_) => Ok(r.clone()),
        None => Err(Fault::expected(sel, "a String", r).raise(ctx)),
    }
}

/// String `asInteger`: nil when not an Integer.
pub(crate) fn as_integer(ctx: &mut Ctx, r: &Value, _a: &[Value]) -> EvalResult {
    let v = text(ctx, "asInteger", r)?;
    let s = v.as_str().unwrap_or_default();
    Ok(parse_integer(ctx, s)?.unwrap_or(Value::Nil))
}

/// String `asNumber`: an Integer, else a Float, else nil.
pub(crate) fn as_number(ctx: &mut Ctx, r: &Value, _a: &[Value]) -> EvalResult {
    let v = text(ctx, "asNumber", r)?;
    let s = v.as_str().unwrap_or_default();
    if let Some(n) = parse_integer(ctx, s)? {
        return Ok(n);
    }
    Ok(num::parse_float(s).map_or(Value::Nil, Value::float))
}
