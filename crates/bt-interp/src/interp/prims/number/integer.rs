//! Integer primitives: bit operations, factorial, gcd/lcm, code-point
//! classification, radix printing, the counting loops and Interval construction.
//!
//! The loops (`timesRepeat:`, `to:do:`, `to:by:do:`) are the fallback for non-literal blocks
//! (the evaluator may inline literal ones): they call `ctx.tick()` and `ctx.call_block` per
//! iteration and never add call depth per iteration.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::fault::{int_arg, lift, Fault, Res};
use crate::interp::prims::number::metered;
use crate::interp::prims::number::pure::{
    self as num, code_point_char, compare, int, num, to_char, Num, Op, MAX_INT_BITS,
};
use crate::interp::registry::big_units::{self as units, Growth};
use crate::interp::registry::Cost;
use crate::value::{Interval, Ref, Value};

/// The bitwise operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    And,
    Or,
    Xor,
}

/// `bitAnd:`, `bitOr:`, `bitXor:` with two's-complement semantics at any size.
pub(crate) fn bit_op(op: Bit, a: &Value, b: &Value) -> Res {
    let sel = match op {
        Bit::And => "bitAnd:",
        Bit::Or => "bitOr:",
        Bit::Xor => "bitXor:",
    };
    let (x, y) = (int(sel, a)?, int(sel, b)?);
    if let (Num::I(p), Num::I(q)) = (x, y) {
        return Ok(Value::Int(match op {
            Bit::And => p & q,
            Bit::Or => p | q,
            Bit::Xor => p ^ q,
        }));
    }
    let (p, q) = (x.big().unwrap_or_default(), y.big().unwrap_or_default());
    Ok(Value::from_bigint(match op {
        Bit::And => p.as_ref() & q.as_ref(),
        Bit::Or => p.as_ref() | q.as_ref(),
        Bit::Xor => p.as_ref() ^ q.as_ref(),
    }))
}

/// `bitNot`: `-x - 1`.
pub(crate) fn bit_not(a: &Value) -> Res {
    match int("bitNot", a)? {
        Num::I(i) => Ok(Value::Int(!i)),
        n => Ok(Value::from_bigint(
            -n.big().unwrap_or_default().into_owned() - 1,
        )),
    }
}

/// `bitShift: n`: positive shifts left, negative shifts right (rounding toward −∞).
pub(crate) fn bit_shift(a: &Value, n: &Value) -> Res {
    let x = int("bitShift:", a)?;
    let n = match int("bitShift:", n)? {
        Num::I(n) => n,
        Num::B(b) if b.is_negative() => i64::MIN,
        Num::B(_) => i64::MAX,
        Num::F(_) => 0,
    };
    if n >= 0 {
        if let Num::I(i) = x {
            if n < 63 && (i << n) >> n == i {
                return Ok(Value::Int(i << n));
            }
            if i == 0 {
                return Ok(Value::Int(0));
            }
        }
        let big = x.big().unwrap_or_default();
        if big.bits().saturating_add(n as u64) > MAX_INT_BITS {
            return Err(Fault::Kind(
                ErrorKind::RuntimeError,
                format!("integer too large: the result would need more than {MAX_INT_BITS} bits"),
            ));
        }
        return Ok(Value::from_bigint(big.as_ref() << (n as usize)));
    }
    let s = n.unsigned_abs();
    match x {
        Num::I(i) => Ok(Value::Int(i >> s.min(63))),
        _ => {
            let big = x.big().unwrap_or_default();
            if s > big.bits() {
                return Ok(Value::Int(if big.is_negative() { -1 } else { 0 }));
            }
            Ok(Value::from_bigint(big.as_ref() >> (s as usize)))
        }
    }
}

/// `bitAt: i` (1-based): 0 or 1.
pub(crate) fn bit_at(a: &Value, i: &Value) -> Res {
    let i = int_arg("bitAt:", i)?;
    if i < 1 {
        return Err(Fault::index(i, 64));
    }
    bit_shift(a, &Value::Int(-(i - 1))).and_then(|v| bit_op(Bit::And, &v, &Value::Int(1)))
}

/// `n factorial`, calling `charge(bytes)` with the size of the accumulator at every
/// multiplication into it (the work is linear in that size), so long runs pay their
/// reductions and can be preempted (see `interp::eval::charge`).
pub fn factorial<E>(n: &Value, mut charge: impl FnMut(usize) -> Result<(), E>) -> Result<Res, E> {
    let n = match int("factorial", n) {
        Ok(Num::I(n)) => n,
        Ok(_) => {
            return Ok(Err(Fault::Kind(
                ErrorKind::RuntimeError,
                "integer too large: factorial of a number this size".into(),
            )))
        }
        Err(f) => return Ok(Err(f)),
    };
    if n < 0 {
        return Ok(Err(Fault::Type(format!(
            "factorial is not defined for negative numbers ({n})"
        ))));
    }
    // n! has about n·log2(n) bits.
    if (n as f64) * (n.max(2) as f64).log2() > MAX_INT_BITS as f64 {
        return Ok(Err(Fault::Kind(
            ErrorKind::RuntimeError,
            format!("integer too large: {n} factorial would need more than {MAX_INT_BITS} bits"),
        )));
    }
    let mut acc = BigInt::from(1u8);
    let mut chunk: u64 = 1;
    for k in 2..=(n as u64) {
        match chunk.checked_mul(k) {
            Some(c) => chunk = c,
            None => {
                charge((acc.bits() / 8) as usize)?;
                acc *= chunk;
                chunk = k;
            }
        }
    }
    acc *= chunk;
    Ok(Ok(Value::from_bigint(acc)))
}

const PRIME_BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// Miller–Rabin: deterministic below 2^64 (these bases suffice), and with the same twelve
/// bases beyond (a composite passing all of them is not known).
pub(crate) fn is_prime(v: &Value) -> bool {
    match num(v) {
        Some(Num::I(n)) => n >= 2 && is_prime_u64(n as u64),
        Some(Num::B(b)) if b.is_positive() => is_prime_big(b),
        _ => false,
    }
}

fn is_prime_u64(n: u64) -> bool {
    for p in PRIME_BASES {
        if n == p {
            return true;
        }
        if n.is_multiple_of(p) {
            return false;
        }
    }
    let mul = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let pow = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        r
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in PRIME_BASES {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul(x, x);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

fn is_prime_big(n: &BigInt) -> bool {
    for p in PRIME_BASES {
        if (n % p).is_zero() {
            return false;
        }
    }
    let one = BigInt::from(1u8);
    let m1 = n - &one;
    let s = m1.trailing_zeros().unwrap_or(0);
    let d = &m1 >> (s as usize);
    'bases: for a in PRIME_BASES {
        let mut x = BigInt::from(a).modpow(&d, n);
        if x == one || x == m1 {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&BigInt::from(2u8), n);
            if x == m1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// A pseudo-random u64 (xorshift, seeded per thread from the OS-randomised hasher).
fn random_u64() -> u64 {
    use std::cell::Cell;
    use std::hash::{BuildHasher, Hasher};
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(0x9E37_79B9_7F4A_7C15);
            h.finish() | 1
        });
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x
    })
}

/// `n atRandom`: a uniformly chosen Integer in 1..n (n ≥ 1, else `type_error`).
pub(crate) fn at_random(v: &Value) -> Res {
    match int("atRandom", v)? {
        Num::I(n) if n >= 1 => Ok(Value::Int(1 + (random_u64() % n as u64) as i64)),
        Num::B(b) if b.is_positive() => {
            let words = b.bits() / 64 + 2;
            let mut r = BigInt::from(0u8);
            for _ in 0..words {
                r = (r << 64usize) + random_u64();
            }
            Ok(Value::from_bigint(r % b + 1))
        }
        _ => Err(Fault::Type(format!(
            "atRandom expects a positive receiver, got {}",
            num::int_string(v)
        ))),
    }
}

/// The code-point classifications of Integer and Character.
pub fn classify(v: &Value, test: fn(char) -> bool) -> Value {
    Value::bool(code_point_char(v).is_some_and(test))
}

/// `printPaddedWith: $0 to: 5` (the digits printed in one call: the unit tests' path).
#[cfg(test)]
pub fn padded(a: &Value, pad: &Value, width: &Value) -> Res {
    let (pad, width) = pad_args(a, pad, width)?;
    Ok(pad_digits(&num::int_string(a), pad, width))
}

/// The checked pad Character and width of `printPaddedWith:to:` (the receiver an Integer).
fn pad_args(a: &Value, pad: &Value, width: &Value) -> Res<(char, usize)> {
    let pad = code_point_char(pad)
        .ok_or_else(|| Fault::expected("printPaddedWith:to:", "a Character", pad))?;
    let width = int_arg("printPaddedWith:to:", width)?;
    if width > crate::interp::prims::string::pure::MAX_STRING_BYTES {
        return Err(crate::interp::prims::string::pure::too_long());
    }
    int("printPaddedWith:to:", a)?;
    Ok((pad, width.max(0) as usize))
}

/// The decimal digits `s` (with their sign) padded with `pad` after the sign to `width`.
fn pad_digits(s: &str, pad: char, width: usize) -> Value {
    let (sign, digits) = match s.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", s),
    };
    let len = sign.len() + digits.len();
    let fill: String = std::iter::repeat_n(pad, width.saturating_sub(len)).collect();
    Value::str(format!("{sign}{fill}{digits}"))
}

/// A number for an Interval bound (Characters become their code point).
fn bound(what: &str, v: &Value) -> Res {
    match v {
        Value::Char(c) => Ok(Value::Int(c.get() as i64)),
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) => Ok(v.clone()),
        _ => Err(Fault::expected(what, "a number", v)),
    }
}

/// `a to: b` and `a to: b by: step` (a step of 0 raises `user_error`).
pub fn interval(from: &Value, to: &Value, step: Option<&Value>) -> Res {
    let what = if step.is_some() { "to:by:" } else { "to:" };
    let from = bound(what, from)?;
    let to = bound(what, to)?;
    let explicit_step = step.is_some();
    let step = bound(what, step.unwrap_or(&Value::Int(1)))?;
    if num(&step).is_some_and(|s| s.signum() == 0) {
        return Err(Fault::Kind(
            ErrorKind::UserError,
            "Interval step cannot be zero".into(),
        ));
    }
    Ok(Value::Interval(Ref::new(Interval {
        from,
        to,
        step,
        explicit_step,
    })))
}

unary_prim! {
    bit_not_p => bit_not;
    is_letter => |r| Ok(classify(r, char::is_alphabetic));
    is_digit => |r| Ok(classify(r, |c| c.is_ascii_digit()));
    is_uppercase => |r| Ok(classify(r, char::is_uppercase));
    is_lowercase => |r| Ok(classify(r, char::is_lowercase));
    is_whitespace => |r| Ok(classify(r, char::is_whitespace));
    is_alphanumeric => |r| Ok(classify(r, |c| c.is_alphabetic() || c.is_ascii_digit()));
    as_character => to_char;
    is_prime_p => |r| Ok(Value::bool(is_prime(r)));
    at_random_p => at_random;
}

binary_prim! {
    bit_and => |r, a| bit_op(Bit::And, r, a);
    bit_or => |r, a| bit_op(Bit::Or, r, a);
    bit_xor => |r, a| bit_op(Bit::Xor, r, a);
    bit_shift_p => bit_shift;
    bit_at_p => bit_at;
    to => |r, a| interval(r, a, None);
}

fn radix(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    metered::radix_string(ctx, r, a, false)
}

fn radix_prefixed(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    metered::radix_string(ctx, r, a, true)
}

fn to_by(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, interval(r, &a[0], Some(&a[1])))
}

/// `printPaddedWith:to:`: the padding paid for before it is built (a width of 10**9 is a
/// bulk step a memory limit refuses), a huge Integer's digits from the metered radix
/// conversion (`metered::int_string`), so a limit lands between its pieces.
fn padded_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let (pad, width) = pad_args(r, &a[0], &a[1]).map_err(|f| f.raise(ctx))?;
    let bytes = width.saturating_mul(pad.len_utf8());
    ctx.reserve(bytes)?;
    ctx.charge(bytes)?;
    let s = metered::int_string(ctx, r)?;
    Ok(pad_digits(&s, pad, width))
}

fn factorial_p(ctx: &mut Ctx, r: &Value, _a: &[Value]) -> EvalResult {
    let r = factorial(r, |units| ctx.charge(units))?;
    lift(ctx, r)
}

/// `n timesRepeat: aBlock` — nil.
fn times_repeat(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let n: i128 = match num(r) {
        Some(Num::I(n)) => n as i128,
        Some(Num::B(b)) => b
            .to_i128()
            .unwrap_or(if b.is_negative() { 0 } else { i128::MAX }),
        _ => return Err(Fault::expected("timesRepeat:", "an Integer receiver", r).raise(ctx)),
    };
    let mut i = 0;
    while i < n {
        ctx.tick()?;
        ctx.call_block(&a[0], &[])?;
        i += 1;
    }
    Ok(Value::Nil)
}

fn to_do(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    count_loop(ctx, r, &a[0], &Value::Int(1), &a[1])
}

fn to_by_do(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    count_loop(ctx, r, &a[0], &a[1], &a[2])
}

/// `from to: to by: step do: block` — nil; a zero step runs the body zero times.
pub(crate) fn count_loop(
    ctx: &mut Ctx,
    from: &Value,
    to: &Value,
    step: &Value,
    block: &Value,
) -> EvalResult {
    let bounds = (|| {
        Ok((
            bound("to:do:", from)?,
            bound("to:do:", to)?,
            bound("to:do:", step)?,
        ))
    })();
    let (from, to, step) = bounds.map_err(|f: Fault| f.raise(ctx))?;
    let up = match num(&step).map(Num::signum) {
        Some(0) | None => return Ok(Value::Nil),
        Some(s) => s > 0,
    };
    if let (Value::Int(mut i), Value::Int(end), Value::Int(st)) = (&from, &to, &step) {
        let (end, st) = (*end, *st);
        while if up { i <= end } else { i >= end } {
            ctx.tick()?;
            ctx.call_block(block, &[Value::Int(i)])?;
            match i.checked_add(st) {
                Some(n) => i = n,
                None => break,
            }
        }
        return Ok(Value::Nil);
    }
    let mut i = from;
    loop {
        let o = compare(&i, &to);
        if (up && o == std::cmp::Ordering::Greater) || (!up && o == std::cmp::Ordering::Less) {
            break;
        }
        ctx.tick()?;
        ctx.call_block(block, std::slice::from_ref(&i))?;
        i = num::arith(Op::Add, &i, &step).map_err(|f| f.raise(ctx))?;
    }
    Ok(Value::Nil)
}

/// `bitShift:` pays for the bytes of its result (a machine Integer can shift into a huge one).
fn charged_bit_shift(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match a.first() {
        Some(Value::Int(n)) if *n > 0 => {
            let bits = match r {
                Value::BigInt(b) => b.bits(),
                _ => 64,
            };
            let out = bits.saturating_add(*n as u64).min(MAX_INT_BITS + 1);
            ctx.reserve((out / 8) as usize)?;
            ctx.charge((out / 8) as usize)?;
        }
        _ if units::any_big(r, a) => ctx.charge(units::big_units(r, a, Growth::Linear))?,
        _ => {}
    }
    bit_shift_p(ctx, r, a)
}

pub fn register(p: &mut Prims) {
    let c = "Integer";
    p.add(c, "bitAnd:", bit_and).cost(Cost::BigLinear);
    p.add(c, "bitOr:", bit_or).cost(Cost::BigLinear);
    p.add(c, "bitXor:", bit_xor).cost(Cost::BigLinear);
    p.add(c, "bitShift:", charged_bit_shift);
    p.add(c, "bitNot", bit_not_p).cost(Cost::BigLinear);
    p.add(c, "bitAt:", bit_at_p);
    p.add(c, "factorial", factorial_p);
    // Huge operands run in pieces that pay as they go (metered.rs).
    p.add(c, "gcd:", metered::gcd_p);
    p.add(c, "lcm:", metered::lcm_p);
    p.add(c, "isLetter", is_letter);
    p.add(c, "isDigit", is_digit);
    p.add(c, "isUppercase", is_uppercase);
    p.add(c, "isLowercase", is_lowercase);
    p.add(c, "isWhitespace", is_whitespace);
    p.add(c, "isAlphaNumeric", is_alphanumeric);
    p.add(c, "asCharacter", as_character);
    p.add(c, "isPrime", is_prime_p);
    p.add(c, "atRandom", at_random_p);
    p.add(c, "printString:", radix);
    p.add(c, "radix:", radix);
    p.add(c, "printStringRadix:", radix_prefixed);
    p.add(c, "printPaddedWith:to:", padded_p);
    p.add(c, "timesRepeat:", times_repeat);
    // Intervals and counting loops work from any number (Float bounds included).
    let n = "Number";
    p.add(n, "to:do:", to_do);
    p.add(n, "to:by:do:", to_by_do);
    p.add(n, "to:", to);
    p.add(n, "to:by:", to_by);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::prims::number::pure::gcd;

    fn s(r: Res) -> String {
        match r {
            Ok(v) => num::int_string(&v),
            Err(f) => format!("{f:?}"),
        }
    }
    fn big(t: &str) -> Value {
        Value::from_bigint(BigInt::parse_bytes(t.as_bytes(), 10).unwrap())
    }

    #[test]
    fn bits() {
        assert_eq!(s(bit_op(Bit::And, &Value::Int(12), &Value::Int(10))), "8");
        assert_eq!(s(bit_op(Bit::Or, &Value::Int(12), &Value::Int(10))), "14");
        assert_eq!(s(bit_op(Bit::Xor, &Value::Int(12), &Value::Int(10))), "6");
        assert_eq!(
            s(bit_op(
                Bit::And,
                &Value::Int(-1),
                &big("18446744073709551616")
            )),
            "18446744073709551616"
        );
        assert_eq!(s(bit_not(&Value::Int(5))), "-6");
        assert_eq!(
            s(bit_not(&big("18446744073709551616"))),
            "-18446744073709551617"
        );
        assert_eq!(s(bit_shift(&Value::Int(1), &Value::Int(10))), "1024");
        assert_eq!(
            s(bit_shift(&Value::Int(1), &Value::Int(64))),
            "18446744073709551616"
        );
        assert_eq!(
            s(bit_shift(&Value::Int(-1), &Value::Int(63))),
            "-9223372036854775808"
        );
        assert_eq!(
            s(bit_shift(&Value::Int(3), &Value::Int(62))),
            "13835058055282163712"
        );
        assert_eq!(s(bit_shift(&Value::Int(1024), &Value::Int(-3))), "128");
        assert_eq!(s(bit_shift(&Value::Int(-5), &Value::Int(-1))), "-3");
        assert_eq!(s(bit_shift(&Value::Int(-5), &Value::Int(-100))), "-1");
        assert_eq!(
            s(bit_shift(&big("18446744073709551616"), &Value::Int(-64))),
            "1"
        );
        assert_eq!(
            s(bit_shift(&big("-18446744073709551617"), &Value::Int(-64))),
            "-2"
        );
        assert_eq!(
            s(bit_shift(&Value::Int(0), &Value::Int(1_000_000_000_000))),
            "0"
        );
        assert!(matches!(
            bit_shift(&Value::Int(1), &Value::Int(1 << 40)),
            Err(Fault::Kind(ErrorKind::RuntimeError, _))
        ));
        assert_eq!(s(bit_at(&Value::Int(5), &Value::Int(1))), "1");
        assert_eq!(s(bit_at(&Value::Int(5), &Value::Int(2))), "0");
        assert!(matches!(
            bit_op(Bit::And, &Value::Int(1), &Value::float(1.0)),
            Err(Fault::Type(_))
        ));
    }

    #[test]
    fn factorials() {
        let f = |n: i64| s(factorial(&Value::Int(n), |_| Ok::<(), ()>(())).unwrap());
        assert_eq!(f(0), "1");
        assert_eq!(f(5), "120");
        assert_eq!(f(20), "2432902008176640000");
        assert_eq!(f(25), "15511210043330985984000000");
        assert!(f(-1).starts_with("Type("));
        // 3000! has 30,272 bits; the accumulator is charged at each of ~500 multiplications.
        let mut units = 0;
        let r = factorial(&Value::Int(3000), |n| {
            units += n;
            Ok::<(), ()>(())
        });
        assert!(r.is_ok());
        assert!((500_000..2_000_000).contains(&units), "{units}");
        // A failing charge stops it.
        let r = factorial(
            &Value::Int(3000),
            |n| if n > 1000 { Err(()) } else { Ok(()) },
        );
        assert!(r.is_err());
    }

    #[test]
    fn gcd_lcm() {
        assert_eq!(s(gcd(&Value::Int(12), &Value::Int(18), false)), "6");
        assert_eq!(s(gcd(&Value::Int(-12), &Value::Int(18), false)), "6");
        assert_eq!(s(gcd(&Value::Int(0), &Value::Int(0), false)), "0");
        assert_eq!(s(gcd(&Value::Int(4), &Value::Int(6), true)), "12");
        assert_eq!(s(gcd(&Value::Int(-4), &Value::Int(6), true)), "12");
        assert_eq!(s(gcd(&Value::Int(0), &Value::Int(6), true)), "0");
        assert_eq!(
            s(gcd(&Value::Int(i64::MIN), &Value::Int(0), false)),
            "9223372036854775808"
        );
    }

    #[test]
    fn primes_and_random() {
        let primes: Vec<i64> = (0..50).filter(|&n| is_prime(&Value::Int(n))).collect();
        assert_eq!(
            primes,
            vec![2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47]
        );
        assert!(is_prime(&Value::Int(2_147_483_647)));
        assert!(!is_prime(&Value::Int(3_215_031_751))); // strong pseudoprime to bases 2,3,5,7
        assert!(is_prime(&Value::Int(i64::MAX - 24))); // 2^63 - 25
        assert!(!is_prime(&Value::Int(-7)));
        assert!(is_prime(&big("170141183460469231731687303715884105727"))); // 2^127 - 1
        assert!(!is_prime(&big("170141183460469231731687303715884105729")));
        for _ in 0..200 {
            match at_random(&Value::Int(6)) {
                Ok(Value::Int(n)) => assert!((1..=6).contains(&n)),
                _ => panic!("atRandom"),
            }
        }
        assert!(matches!(at_random(&Value::Int(1)), Ok(Value::Int(1))));
        assert!(at_random(&Value::Int(0)).is_err());
        let b = big("100000000000000000000000");
        match at_random(&b) {
            Ok(v) => assert!(num::cmp(num(&v).unwrap(), num(&b).unwrap()).is_le()),
            Err(_) => panic!("atRandom big"),
        }
    }

    #[test]
    fn characters_and_classification() {
        assert!(matches!(to_char(&Value::Int(98)), Ok(Value::Char(c)) if c.get() == 'b'));
        assert!(matches!(to_char(&Value::Int(0xD800)), Err(Fault::Type(_))));
        assert!(matches!(to_char(&Value::Int(-1)), Err(Fault::Type(_))));
        assert!(matches!(to_char(&Value::str("a")), Err(Fault::Type(_))));
        assert!(matches!(
            classify(&Value::Int(65), char::is_uppercase),
            Value::True
        ));
        assert!(matches!(
            classify(&Value::Int(-5), char::is_uppercase),
            Value::False
        ));
        assert!(matches!(
            classify(&Value::ch('é'), char::is_alphabetic),
            Value::True
        ));
    }

    #[test]
    fn padding_and_intervals() {
        let p = |n: i64, w: i64| {
            padded(&Value::Int(n), &Value::ch('0'), &Value::Int(w))
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap()
        };
        assert_eq!(p(5, 3), "005");
        assert_eq!(p(-5, 4), "-005");
        assert_eq!(p(12345, 3), "12345");
        assert!(matches!(
            interval(&Value::Int(1), &Value::Int(5), Some(&Value::Int(0))),
            Err(Fault::Kind(ErrorKind::UserError, _))
        ));
        match interval(&Value::ch('a'), &Value::Int(5), None) {
            Ok(Value::Interval(ref i)) => {
                assert!(matches!(i.from, Value::Int(97)));
                assert!(!i.explicit_step);
            }
            _ => panic!("expected an Interval"),
        }
        assert!(matches!(
            interval(&Value::Int(1), &Value::Nil, None),
            Err(Fault::Type(_))
        ));
    }
}
