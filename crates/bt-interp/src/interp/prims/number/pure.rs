//! The pure numeric core behind Number, Integer, Float and Character.
//!
//! Integers take an `i64` fast path with checked operations; on overflow they move to `BigInt`
//! and every result is normalised back through [`Value::from_bigint`]. Every Float result goes
//! through [`float`], which turns a non-finite value into an arithmetic fault: bt has no
//! infinities and no NaN. A Character is its code point wherever a number is expected.
//!
//! Also here, since the Number, Integer, Character and String primitives all use them: the
//! numeric-or-term-order [`compare`], [`gcd`]/lcm, and code point ↔ Character
//! ([`code_point_char`], [`to_char`]). This module names no other primitive module.

use std::borrow::Cow;
use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{FromPrimitive, Signed, ToPrimitive, Zero};

use crate::interp::error::ErrorKind;
use crate::interp::prims::fault::{Fault, Res};
use crate::interp::print::format_float;
use crate::value::order::term_cmp;
use crate::value::Value;

/// Integers larger than this many bits are refused (`runtime_error`) rather than exhausting
/// memory: 2^28 bits is a 32 MiB number.
pub(crate) const MAX_INT_BITS: u64 = 1 << 28;

/// A borrowed view of a numeric value.
#[derive(Clone, Copy, Debug)]
pub enum Num<'a> {
    I(i64),
    B(&'a BigInt),
    F(f64),
}

/// The numeric view of a value: Integers, Floats and Characters (their code point).
pub fn num(v: &Value) -> Option<Num<'_>> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Char(c) => Some(Num::I(c.get() as i64)),
        Value::BigInt(b) => Some(Num::B(b)),
        Value::Float(f) => Some(Num::F(f.get())),
        _ => None,
    }
}

impl<'a> Num<'a> {
    /// The integer as a BigInt (None for a Float).
    pub fn big(self) -> Option<Cow<'a, BigInt>> {
        match self {
            Num::I(i) => Some(Cow::Owned(BigInt::from(i))),
            Num::B(b) => Some(Cow::Borrowed(b)),
            Num::F(_) => None,
        }
    }

    /// The nearest f64 (infinite for huge integers).
    pub fn f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::B(b) => b.to_f64().unwrap_or(f64::NAN),
            Num::F(f) => f,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Num::F(_))
    }

    /// -1, 0 or 1.
    pub(crate) fn signum(self) -> i64 {
        match self {
            Num::I(i) => i.signum(),
            Num::B(b) => {
                if b.is_negative() {
                    -1
                } else {
                    1
                }
            }
            Num::F(f) => {
                if f > 0.0 {
                    1
                } else if f < 0.0 {
                    -1
                } else {
                    0
                }
            }
        }
    }
}

/// A Float result, or an arithmetic fault when it is not finite.
pub fn float(x: f64) -> Res {
    if x.is_finite() {
        Ok(Value::float(x))
    } else {
        Err(Fault::Arith)
    }
}

/// Both operands as numbers; a non-number is an arithmetic fault.
fn pair<'a>(a: &'a Value, b: &'a Value) -> Res<(Num<'a>, Num<'a>)> {
    match (num(a), num(b)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(Fault::Arith),
    }
}

/// The fault of a result over [`MAX_INT_BITS`].
pub(crate) fn too_large() -> Fault {
    Fault::Kind(
        ErrorKind::RuntimeError,
        format!("integer too large: the result would need more than {MAX_INT_BITS} bits"),
    )
}

/// The three ring operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
}

/// `+`, `-`, `*`: exact on Integers, Float when either side is a Float.
pub fn arith(op: Op, a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    if let (Num::I(p), Num::I(q)) = (x, y) {
        let r = match op {
            Op::Add => p.checked_add(q),
            Op::Sub => p.checked_sub(q),
            Op::Mul => p.checked_mul(q),
        };
        if let Some(r) = r {
            return Ok(Value::Int(r));
        }
    }
    if x.is_float() || y.is_float() {
        let (p, q) = (x.f64(), y.f64());
        return float(match op {
            Op::Add => p + q,
            Op::Sub => p - q,
            Op::Mul => p * q,
        });
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    if op == Op::Mul && p.bits() + q.bits() > MAX_INT_BITS {
        return Err(too_large());
    }
    Ok(Value::from_bigint(match op {
        Op::Add => p.as_ref() + q.as_ref(),
        Op::Sub => p.as_ref() - q.as_ref(),
        Op::Mul => p.as_ref() * q.as_ref(),
    }))
}

/// `x * 2^e` without intermediate overflow or underflow.
pub(crate) fn ldexp(mut x: f64, mut e: i64) -> f64 {
    let up = 2f64.powi(1000);
    let down = 2f64.powi(-1000);
    while e > 1000 && x.is_finite() && x != 0.0 {
        x *= up;
        e -= 1000;
    }
    while e < -1000 && x != 0.0 {
        x *= down;
        e += 1000;
    }
    x * 2f64.powi(e.clamp(-2000, 2000) as i32)
}

/// a / b as the nearest double, for integers of any size (b ≠ 0).
pub(crate) fn ratio_f64(a: &BigInt, b: &BigInt) -> f64 {
    let k = b.bits() as i64 - a.bits() as i64 + 64;
    let q = if k >= 0 {
        (a << (k as usize)) / b
    } else {
        a / (b << ((-k) as usize))
    };
    ldexp(q.to_f64().unwrap_or(0.0), -k)
}

const EXACT_F64: i64 = 1 << 53;

/// `/`: always a Float (`6 / 3` is `2.0`); division by zero is an arithmetic fault.
pub fn divide(a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    match (x, y) {
        (Num::I(p), Num::I(q)) => {
            if q == 0 {
                return Err(Fault::Arith);
            }
            if p.abs() <= EXACT_F64 && q.abs() <= EXACT_F64 {
                float(p as f64 / q as f64)
            } else {
                float(ratio_f64(&BigInt::from(p), &BigInt::from(q)))
            }
        }
        (Num::F(_), _) | (_, Num::F(_)) => {
            let q = y.f64();
            if q == 0.0 {
                return Err(Fault::Arith);
            }
            float(x.f64() / q)
        }
        _ => {
            let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
            if q.is_zero() {
                return Err(Fault::Arith);
            }
            float(ratio_f64(&p, &q))
        }
    }
}

/// `div:`: the quotient truncated toward zero, an Integer (also for Float operands).
pub fn quo(a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    if x.is_float() || y.is_float() {
        let q = y.f64();
        if q == 0.0 {
            return Err(Fault::Arith);
        }
        let r = (x.f64() / q).trunc();
        if !r.is_finite() {
            return Err(Fault::Arith);
        }
        return Ok(float_to_int(r));
    }
    if let (Num::I(p), Num::I(q)) = (x, y) {
        if q == 0 {
            return Err(Fault::Arith);
        }
        if let Some(r) = p.checked_div(q) {
            return Ok(Value::Int(r));
        }
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    if q.is_zero() {
        return Err(Fault::Arith);
    }
    Ok(Value::from_bigint(p.as_ref() / q.as_ref()))
}

/// `%` and `rem:`: remainder with the sign of the dividend (`-7 % 2` is `-1`).
pub fn rem(a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    if x.is_float() || y.is_float() {
        let q = y.f64();
        if q == 0.0 {
            return Err(Fault::Arith);
        }
        return float(x.f64() % q);
    }
    if let (Num::I(p), Num::I(q)) = (x, y) {
        if q == 0 {
            return Err(Fault::Arith);
        }
        return Ok(Value::Int(p.checked_rem(q).unwrap_or(0)));
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    if q.is_zero() {
        return Err(Fault::Arith);
    }
    Ok(Value::from_bigint(p.as_ref() % q.as_ref()))
}

/// `mod:`: remainder with the sign of the divisor (floored division, Smalltalk's `\\`).
pub(crate) fn modulo(a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    if x.is_float() || y.is_float() {
        let q = y.f64();
        if q == 0.0 {
            return Err(Fault::Arith);
        }
        let r = x.f64() % q;
        return float(if r != 0.0 && (r < 0.0) != (q < 0.0) {
            r + q
        } else {
            r
        });
    }
    if let (Num::I(p), Num::I(q)) = (x, y) {
        if q == 0 {
            return Err(Fault::Arith);
        }
        return Ok(Value::Int(p.checked_rem_euclid(q).map_or(0, |r| {
            if r != 0 && q < 0 {
                r + q
            } else {
                r
            }
        })));
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    if q.is_zero() {
        return Err(Fault::Arith);
    }
    Ok(Value::from_bigint(p.mod_floor(&*q)))
}

/// `**` and `raisedTo:`: exact for an Integer base and a non-negative Integer exponent, a Float
/// otherwise (`2 ** -1` is `0.5`).
pub fn power(a: &Value, b: &Value) -> Res {
    let (x, y) = pair(a, b)?;
    if !x.is_float() {
        match y {
            Num::I(e) if e >= 0 => return int_pow(x, e as u64),
            Num::B(e) if e.is_positive() => {
                return match x {
                    Num::I(0) | Num::I(1) => Ok(Value::Int(x.signum())),
                    Num::I(-1) => Ok(Value::Int(if e.is_even() { 1 } else { -1 })),
                    _ => Err(too_large()),
                }
            }
            _ => {}
        }
    }
    float(x.f64().powf(y.f64()))
}

/// An integer to a non-negative integer power, exactly.
pub(crate) fn int_pow(x: Num, e: u64) -> Res {
    if e == 0 {
        return Ok(Value::Int(1));
    }
    match x {
        Num::I(0) | Num::I(1) => return Ok(Value::Int(x.signum())),
        Num::I(-1) => return Ok(Value::Int(if e.is_multiple_of(2) { 1 } else { -1 })),
        Num::I(i) => {
            if let Ok(e32) = u32::try_from(e) {
                if let Some(r) = i.checked_pow(e32) {
                    return Ok(Value::Int(r));
                }
            }
        }
        _ => {}
    }
    let base = x.big().unwrap_or_default();
    let bits = base.bits().saturating_mul(e);
    if bits > MAX_INT_BITS {
        return Err(too_large());
    }
    Ok(Value::from_bigint(base.pow(e as u32)))
}

/// Exact comparison of two numbers (an Integer and a Float compare by mathematical value).
pub fn cmp(x: Num, y: Num) -> Ordering {
    match (x, y) {
        (Num::I(a), Num::I(b)) => a.cmp(&b),
        (Num::F(a), Num::F(b)) => a.partial_cmp(&b).unwrap_or_else(|| a.total_cmp(&b)),
        (Num::F(f), i) => cmp_int_float(i, f).reverse(),
        (i, Num::F(f)) => cmp_int_float(i, f),
        (a, b) => a
            .big()
            .unwrap_or_default()
            .cmp(&b.big().unwrap_or_default()),
    }
}

fn cmp_int_float(i: Num, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Less;
    }
    if f.is_infinite() {
        return if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let fl = f.floor();
    let c = match i {
        Num::I(a) if fl.abs() < 9.0e18 => a.cmp(&(fl as i64)),
        _ => i
            .big()
            .unwrap_or_default()
            .as_ref()
            .cmp(&BigInt::from_f64(fl).unwrap_or_default()),
    };
    match c {
        Ordering::Equal if fl != f => Ordering::Less,
        c => c,
    }
}

/// `negated`.
pub fn negate(a: &Value) -> Res {
    match num(a).ok_or(Fault::Arith)? {
        Num::I(i) => Ok(i
            .checked_neg()
            .map_or_else(|| Value::from_bigint(-BigInt::from(i)), Value::Int)),
        Num::B(b) => Ok(Value::from_bigint(-b)),
        Num::F(f) => Ok(Value::float(-f)),
    }
}

/// `abs`.
pub fn abs(a: &Value) -> Res {
    match num(a).ok_or(Fault::Arith)? {
        Num::I(i) => Ok(i
            .checked_abs()
            .map_or_else(|| Value::from_bigint(BigInt::from(i).abs()), Value::Int)),
        Num::B(b) => Ok(Value::from_bigint(b.abs())),
        Num::F(f) => Ok(Value::float(f.abs())),
    }
}

/// A finite, integral f64 as an Integer.
pub fn float_to_int(f: f64) -> Value {
    if f.abs() < 9.0e18 {
        Value::Int(f as i64)
    } else {
        Value::from_bigint(BigInt::from_f64(f).unwrap_or_default())
    }
}

/// `asFloat`: an Integer too large for a double is an arithmetic fault.
pub(crate) fn to_float(a: &Value) -> Res {
    float(num(a).ok_or(Fault::Arith)?.f64())
}

/// The rounding family on any number: Integers answer themselves, Floats an Integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// Half away from zero.
    Nearest,
    Floor,
    Ceiling,
    Truncate,
}

pub fn round(a: &Value, how: Round) -> Res {
    match num(a).ok_or(Fault::Arith)? {
        Num::F(f) => Ok(float_to_int(match how {
            Round::Nearest => f.round(),
            Round::Floor => f.floor(),
            Round::Ceiling => f.ceil(),
            Round::Truncate => f.trunc(),
        })),
        Num::I(i) => Ok(Value::Int(i)),
        Num::B(_) => Ok(a.clone()),
    }
}

/// `roundTo: q` (nearest multiple, half away from zero) and `truncateTo: q`.
pub(crate) fn round_to(a: &Value, q: &Value, how: Round) -> Res {
    let (x, y) = pair(a, q)?;
    if x.is_float() || y.is_float() {
        let q = y.f64();
        if q == 0.0 {
            return Err(Fault::Arith);
        }
        let t = x.f64() / q;
        let r = if how == Round::Nearest {
            t.round()
        } else {
            t.trunc()
        };
        return float(r * q);
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    if q.is_zero() {
        return Err(Fault::Arith);
    }
    let (mut d, r) = p.div_rem(&q);
    if how == Round::Nearest && (r.abs() * 2u8) >= q.abs() {
        if p.is_negative() != q.is_negative() {
            d -= 1;
        } else {
            d += 1;
        }
    }
    Ok(Value::from_bigint(d * q.as_ref()))
}

/// (mantissa, exponent) with value = mantissa · 2^exponent, exact enough for logarithms and
/// square roots of integers beyond the double range.
fn parts(n: Num) -> (f64, i64) {
    match n {
        Num::B(b) if b.bits() > 1000 => {
            let s = b.bits() - 64;
            ((b >> (s as usize)).to_f64().unwrap_or(0.0), s as i64)
        }
        _ => (n.f64(), 0),
    }
}

/// Square root as a Float; negative → arithmetic fault.
pub fn sqrt(a: &Value) -> Res {
    match num(a).ok_or(Fault::Arith)? {
        Num::B(b) if b.is_negative() => Err(Fault::Arith),
        // The integer square root has more than 53 significant bits here, so rounding it
        // gives the correctly rounded Float.
        Num::B(b) if b.bits() > 1000 => float(b.sqrt().to_f64().unwrap_or(f64::INFINITY)),
        n => float(n.f64().sqrt()),
    }
}

/// Natural logarithm as a Float; zero or negative → arithmetic fault.
pub fn ln(a: &Value) -> Res {
    let (m, e) = parts(num(a).ok_or(Fault::Arith)?);
    float(m.ln() + e as f64 * std::f64::consts::LN_2)
}

/// Base-2 logarithm.
pub(crate) fn log2(a: &Value) -> Res {
    let (m, e) = parts(num(a).ok_or(Fault::Arith)?);
    float(m.log2() + e as f64)
}

/// Base-10 logarithm (exact for powers of ten that fit a double).
pub fn log10(a: &Value) -> Res {
    let (m, e) = parts(num(a).ok_or(Fault::Arith)?);
    if e == 0 {
        return float(m.log10());
    }
    float(m.log10() + e as f64 * std::f64::consts::LOG10_2)
}

/// Applies a Float function to a number; a non-finite answer is an arithmetic fault.
pub(crate) fn float_fn(a: &Value, f: fn(f64) -> f64) -> Res {
    float(f(num(a).ok_or(Fault::Arith)?.f64()))
}

/// `"42" asInteger`: optional sign and decimal digits, else None.
pub(crate) fn parse_integer(s: &str) -> Option<Value> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::Int(i));
    }
    BigInt::parse_bytes(s.trim_start_matches('+').as_bytes(), 10).map(Value::from_bigint)
}

/// `"2.5" asFloat`: `[+-]digits[.digits][e[+-]digits]`, finite, else None.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return None;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return None;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// An integer in base 2–36 with upper-case digits (`255` in 16 → `FF`).
pub(crate) fn to_radix(a: &Value, base: i64) -> Res<String> {
    if !(2..=36).contains(&base) {
        return Err(Fault::Type(format!(
            "radix must be between 2 and 36, got {base}"
        )));
    }
    match num(a) {
        Some(n @ (Num::I(_) | Num::B(_))) => Ok(n
            .big()
            .unwrap_or_default()
            .to_str_radix(base as u32)
            .to_uppercase()),
        _ => Err(Fault::Type("radix printing needs an Integer".into())),
    }
}

/// Decimal printString of an Integer value (Integers and BigInts only).
pub(crate) fn int_string(a: &Value) -> String {
    match a {
        Value::Int(i) => i.to_string(),
        Value::BigInt(b) => b.to_string(),
        Value::Char(c) => (c.get() as u32).to_string(),
        Value::Float(f) => format_float(f.get()),
        _ => String::new(),
    }
}

/// Numeric comparison between numbers (Characters by code point), term order otherwise.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (num(a), num(b)) {
        (Some(x), Some(y)) => cmp(x, y),
        _ => term_cmp(a, b),
    }
}

/// The receiver or argument as an integer view, else `type_error`.
pub(crate) fn int<'a>(what: &str, v: &'a Value) -> Res<Num<'a>> {
    match num(v) {
        Some(n @ (Num::I(_) | Num::B(_))) => Ok(n),
        _ => Err(Fault::expected(what, "an Integer", v)),
    }
}

/// `gcd:` (non-negative) and `lcm:` (non-negative).
pub fn gcd(a: &Value, b: &Value, lcm: bool) -> Res {
    let sel = if lcm { "lcm:" } else { "gcd:" };
    let (x, y) = (int(sel, a)?, int(sel, b)?);
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    Ok(Value::from_bigint(if lcm {
        if p.is_zero() || q.is_zero() {
            BigInt::zero()
        } else {
            p.lcm(&q).abs()
        }
    } else {
        p.gcd(&q)
    }))
}

/// The value as a Unicode scalar value, if it is one.
pub(crate) fn code_point_char(v: &Value) -> Option<char> {
    match v {
        Value::Char(c) => Some(c.get()),
        Value::Int(i) => u32::try_from(*i).ok().and_then(char::from_u32),
        _ => None,
    }
}

/// `asCharacter` / `Character value:`: not a Unicode scalar value → `type_error`.
pub(crate) fn to_char(v: &Value) -> Res {
    match code_point_char(v) {
        Some(c) => Ok(Value::ch(c)),
        None if num(v).is_some() && !matches!(v, Value::Float(_)) => Err(Fault::Type(format!(
            "{} is not a Unicode scalar value",
            int_string(v)
        ))),
        None => Err(Fault::expected(
            "Character value:",
            "an Integer code point",
            v,
        )),
    }
}

#[cfg(test)]
#[path = "pure_tests.rs"]
mod tests;
