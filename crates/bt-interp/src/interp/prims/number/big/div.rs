//! Interruptible division of huge Integers (see `big`'s module doc): Burnikel–Ziegler
//! recursive division over bit lengths, after CPython's `Lib/_pylong.py` (`_divmod_pos`,
//! `_div2n1n`, `_div3n2n`), with its multiplications through `big::mul` and num-bigint's
//! schoolbook division for the pieces whose quotient bits × divisor bits is at most
//! [`BASE_WORK`].

use num_bigint::{BigInt, BigUint};
use num_integer::Integer as _;
use num_traits::{Signed, Zero};

use super::{digits, product_units, Meter};
use crate::interp::eval::Unwind;

/// Quotient bits × divisor bits of the largest piece num-bigint divides in one call:
/// (2^16 bits)², a 1,024 × 1,024-limb schoolbook division, about a millisecond.
pub(crate) const BASE_WORK: u64 = if cfg!(test) { 1 << 16 } else { 1 << 32 };

/// True when `a / b` is one num-bigint call.
pub(crate) fn small_division(a: &BigUint, b: &BigUint) -> bool {
    let (an, bn) = (a.bits(), b.bits());
    an.saturating_sub(bn)
        .saturating_add(64)
        .saturating_mul(bn.max(64))
        <= BASE_WORK
}

fn base(a: &BigUint, b: &BigUint, m: &mut Meter) -> Result<(BigUint, BigUint), Unwind> {
    let qd = digits(a).saturating_sub(digits(b)) + 1;
    m(product_units(qd, digits(b)))?;
    Ok(a.div_rem(b))
}

/// `(a / b, a % b)` for `b > 0`, exactly, calling `m` between pieces of bounded work.
pub fn div_rem(a: &BigUint, b: &BigUint, m: &mut Meter) -> Result<(BigUint, BigUint), Unwind> {
    if b.is_zero() || a < b || small_division(a, b) {
        if b.is_zero() {
            return Ok((BigUint::zero(), a.clone()));
        }
        return base(a, b, m);
    }
    let n = b.bits();
    // A short divisor: long division over digits of `d` bits (a multiple of 32), each piece
    // one num-bigint call of bounded work.
    if n.saturating_mul(n) <= BASE_WORK {
        let d = ((BASE_WORK / n.max(64)) & !31).max(32);
        return long_division(a, b, d, m, |x, b, m| base(x, b, m));
    }
    // A long divisor: shift both so its length is a multiple of 32 bits (the quotient is the
    // same, the remainder shifts back), then digits of the divisor's length, each divided by
    // the recursive algorithm.
    let s = (32 - n % 32) % 32;
    let (a2, b2) = (a << s, b << s);
    let n2 = n + s;
    let bi = BigInt::from(b2.clone());
    let (q, r) = long_division(&a2, &b2, n2, m, |x, _, m| {
        let (q, r) = div2n1n(BigInt::from(x.clone()), &bi, n2, m)?;
        Ok((q.into_parts().1, r.into_parts().1))
    })?;
    Ok((q, r >> s))
}

/// Schoolbook division in base 2^`d` (`d` a multiple of 32; `step` divides a two-digit
/// number below `b · 2^d` by `b`).
fn long_division(
    a: &BigUint,
    b: &BigUint,
    d: u64,
    m: &mut Meter,
    mut step: impl FnMut(&BigUint, &BigUint, &mut Meter) -> Result<(BigUint, BigUint), Unwind>,
) -> Result<(BigUint, BigUint), Unwind> {
    let w = (d / 32) as usize;
    let ad = a.to_u32_digits();
    let count = ad.len().div_ceil(w);
    let mut q = vec![0u32; count * w];
    let mut r = BigUint::zero();
    for i in (0..count).rev() {
        let digit = super::slice(&ad, i * w, (i + 1) * w);
        let x = (r << d) | digit;
        let (qi, ri) = step(&x, b, m)?;
        for (j, v) in qi.iter_u32_digits().enumerate() {
            q[i * w + j] = v;
        }
        r = ri;
        m(4 * w)?;
    }
    Ok((BigUint::new(q), r))
}

/// Divides `a` (< 2^n · b) by `b` of exactly `n` bits (CPython's `_div2n1n`).
fn div2n1n(mut a: BigInt, b: &BigInt, n: u64, m: &mut Meter) -> Result<(BigInt, BigInt), Unwind> {
    let qbits = a.bits().saturating_sub(n) + 1;
    if qbits.saturating_mul(n) <= BASE_WORK {
        let (q, r) = base(a.magnitude(), b.magnitude(), m)?;
        return Ok((BigInt::from(q), BigInt::from(r)));
    }
    let mut b = std::borrow::Cow::Borrowed(b);
    let mut n = n;
    let pad = n & 1;
    if pad == 1 {
        a <<= 1usize;
        b = std::borrow::Cow::Owned(b.as_ref() << 1usize);
        n += 1;
    }
    let half = n >> 1;
    let mask = (BigInt::from(1u8) << half) - 1u8;
    let (b1, b2) = (b.as_ref() >> half, b.as_ref() & &mask);
    let (q1, r) = div3n2n(&a >> n, (&a >> half) & &mask, &b, &b1, &b2, half, m)?;
    let (q2, mut r) = div3n2n(r, &a & &mask, &b, &b1, &b2, half, m)?;
    if pad == 1 {
        r >>= 1usize;
    }
    Ok(((q1 << half) | q2, r))
}

/// CPython's `_div3n2n`.
fn div3n2n(
    a12: BigInt,
    a3: BigInt,
    b: &BigInt,
    b1: &BigInt,
    b2: &BigInt,
    n: u64,
    m: &mut Meter,
) -> Result<(BigInt, BigInt), Unwind> {
    let (mut q, r) = if &(&a12 >> n) == b1 {
        let q = (BigInt::from(1u8) << n) - 1u8;
        let r = &a12 - (b1 << n) + b1;
        (q, r)
    } else {
        div2n1n(a12, b1, n, m)?
    };
    let qb2 = super::mul_int(&q, b2, m)?;
    let mut r = ((r << n) | a3) - qb2;
    while r.is_negative() {
        q -= 1u8;
        r += b;
    }
    m(8 * digits(b.magnitude()))?;
    Ok((q, r))
}

/// Signed division: `(quotient truncated toward zero, remainder with the dividend's sign)`.
pub(crate) fn div_rem_int(
    a: &BigInt,
    b: &BigInt,
    m: &mut Meter,
) -> Result<(BigInt, BigInt), Unwind> {
    let (q, r) = div_rem(a.magnitude(), b.magnitude(), m)?;
    let qs = if a.sign() == b.sign() || q.is_zero() {
        num_bigint::Sign::Plus
    } else {
        num_bigint::Sign::Minus
    };
    Ok((
        BigInt::from_biguint(qs, q),
        BigInt::from_biguint(a.sign(), r),
    ))
}

/// Floored modulo (the sign of the divisor).
pub(crate) fn mod_floor_int(a: &BigInt, b: &BigInt, m: &mut Meter) -> Result<BigInt, Unwind> {
    let (_, r) = div_rem_int(a, b, m)?;
    if !r.is_zero() && r.is_negative() != b.is_negative() {
        Ok(r + b)
    } else {
        Ok(r)
    }
}
