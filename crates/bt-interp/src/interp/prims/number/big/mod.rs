//! Big-Integer arithmetic a limit can interrupt: multiplication, division, gcd,
//! powers, radix printing and decimal parsing of huge Integers, split into pieces of bounded
//! work with a check between them.
//!
//! num-bigint's operations are single opaque calls: multiplying two million-digit Integers,
//! dividing them or printing one holds the thread for a second or more, and its gcd (binary
//! Stein) takes minutes. Here every operation on operands above a leaf size runs as a
//! sequence of num-bigint calls on pieces of at most about a millisecond each, and calls the
//! [`Meter`] with the units of work of each piece (`interp::eval::charge` rates: the product
//! of the pieces' bytes / 64), so the evaluator's limit hook (deadline, `CancelHandle`,
//! `Engine::shutdown`, reductions, memory) and the actor's preemption run between pieces:
//!
//! * **multiplication** ([`mul`]): Toom-3 at the top levels (the algorithm num-bigint uses
//!   itself above 256 limbs, so the complexity is the same), long operands against short ones
//!   by slices of the long one added in place, num-bigint for products of at most
//!   [`MUL_LEAF`] 32-bit digits a side; operands are split and coefficients summed in
//!   num-bigint's 64-bit limbs (one copy per operand and result a level, no 32-bit
//!   conversions: within ~6% of num-bigint's instructions, `bench/bigint_ratio.rs`);
//! * **division** (`div`): Burnikel–Ziegler recursive division (the algorithm of CPython's
//!   `_pylong`), its multiplications through [`mul`], num-bigint for quotients × divisors of
//!   at most [`div::BASE_WORK`] bits²;
//! * **gcd** (`gcd`): Lehmer's algorithm on 126-bit leading parts, one linear combination
//!   of the operands per step (about 63 bits of progress);
//! * **powers** ([`pow`]): repeated squaring through [`mul`];
//! * **radix printing** (`radix::to_radix`): the remainders by a power of the radix, as
//!   num-bigint does, one division per check; **decimal parsing** (`radix::parse_decimal`):
//!   divide and conquer over the digit string through [`mul`].
//!
//! Results are exact (property tests against num-bigint in `tests.rs`). Operands under the
//! leaf sizes take the caller's direct path (one num-bigint call, charged up front), so the
//! common small and medium case costs what it did.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Signed, Zero};

use crate::interp::eval::Unwind;

pub mod div;
pub mod gcd;
pub mod radix;
#[cfg(test)]
mod tests;

/// The check between pieces: called with the units of work just done (one unit a byte,
/// `interp::eval::charge`); an error (a limit) stops the operation at once.
pub(crate) type Meter<'a> = dyn FnMut(usize) -> Result<(), Unwind> + 'a;

/// Products of at most this many 32-bit digits squared (both sides 12 KiB, about 29,000
/// decimal digits, or a shorter side against a longer one) are one num-bigint call: about a
/// millisecond. Unit tests use tiny leaves so that small operands run every path.
pub(crate) const MUL_LEAF: usize = if cfg!(test) { 24 } else { 3072 };

/// 32-bit digits of `x`.
pub fn digits(x: &BigUint) -> usize {
    (x.bits() as usize).div_ceil(32)
}

/// Units of a schoolbook product of `a` and `b` digits (the `Cost::BigProduct` rate).
pub(crate) fn product_units(a: usize, b: usize) -> usize {
    let (x, y) = (a.saturating_mul(4), b.saturating_mul(4));
    (x.saturating_mul(y) / 64).saturating_add(x + y)
}

/// True when a product of `x` and `y` is one num-bigint call (no chunking).
pub(crate) fn small_product(x: &BigUint, y: &BigUint) -> bool {
    digits(x).saturating_mul(digits(y)) <= MUL_LEAF * MUL_LEAF
}

/// The 32-bit digits `lo..hi` of `d` (little-endian) as a number.
fn slice(d: &[u32], lo: usize, hi: usize) -> BigUint {
    let hi = hi.min(d.len());
    if lo >= hi {
        return BigUint::zero();
    }
    BigUint::from_slice(&d[lo..hi])
}

/// The number whose 64-bit limbs (little-endian) are `d`: one pass (num-bigint's own limbs
/// are 64-bit on 64-bit targets; its constructors take 32-bit digits, which the limbs are,
/// viewed in place on a little-endian machine).
fn from_limbs(d: &[u64]) -> BigUint {
    #[cfg(target_endian = "little")]
    {
        BigUint::from_slice(bytemuck::cast_slice(d))
    }
    #[cfg(not(target_endian = "little"))]
    {
        BigUint::new(
            d.iter()
                .flat_map(|&w| [w as u32, (w >> 32) as u32])
                .collect(),
        )
    }
}

/// The limbs `lo..hi` of `d` as a number.
fn limb_slice(d: &[u64], lo: usize, hi: usize) -> BigUint {
    let hi = hi.min(d.len());
    if lo >= hi {
        return BigUint::zero();
    }
    from_limbs(&d[lo..hi])
}

/// Adds `x` into `acc` (little-endian 64-bit limbs) at limb `at`; `acc` is long enough.
fn add_at(acc: &mut [u64], at: usize, x: &BigUint) {
    let mut carry = false;
    let mut i = at;
    for d in x.iter_u64_digits() {
        let (s, c1) = acc[i].overflowing_add(d);
        let (s, c2) = s.overflowing_add(carry as u64);
        acc[i] = s;
        carry = c1 | c2;
        i += 1;
    }
    while carry && i < acc.len() {
        let (s, c) = acc[i].overflowing_add(1);
        acc[i] = s;
        carry = c;
        i += 1;
    }
}

/// `a * b`, exactly, calling `m` between pieces of bounded work (see the module doc).
pub fn mul(a: &BigUint, b: &BigUint, m: &mut Meter) -> Result<BigUint, Unwind> {
    let (x, y) = if digits(a) <= digits(b) {
        (a, b)
    } else {
        (b, a)
    };
    let (lx, ly) = (digits(x), digits(y));
    if lx == 0 {
        return Ok(BigUint::zero());
    }
    if small_product(x, y) {
        m(product_units(lx, ly))?;
        return Ok(x * y);
    }
    if ly >= 2 * lx {
        return mul_unbalanced(x, y, m);
    }
    toom3(x, y, m)
}

/// A short `x` times a long `y`: `y` by slices, each product added in place.
fn mul_unbalanced(x: &BigUint, y: &BigUint, m: &mut Meter) -> Result<BigUint, Unwind> {
    let lx = digits(x);
    // Slices as long as `x` (balanced products), or longer when `x` is short, as long as a
    // slice's product stays a leaf; in whole 64-bit limbs, rounded down (a slice never
    // outgrows that bound, so its product is a leaf or balanced: no recursion back here).
    let piece = (lx.max(MUL_LEAF * MUL_LEAF / lx) / 2).max(1);
    let yd = y.to_u64_digits();
    let mut acc = vec![0u64; lx.div_ceil(2) + yd.len() + 1];
    let mut at = 0;
    while at < yd.len() {
        let p = mul(x, &limb_slice(&yd, at, at + piece), m)?;
        add_at(&mut acc, at, &p);
        m(lx + 2 * piece)?;
        at += piece;
    }
    Ok(from_limbs(&acc))
}

/// Signed product through [`mul`].
fn mul_signed(a: &BigInt, b: &BigInt, m: &mut Meter) -> Result<BigInt, Unwind> {
    let p = mul(a.magnitude(), b.magnitude(), m)?;
    Ok(BigInt::from_biguint(a.sign() * b.sign(), p))
}

/// Toom-3 (Bodrato's interpolation, as in num-bigint) with each of the five products
/// through [`mul`]; `x` is at least half as long as `y`. Split and summed in 64-bit limbs
/// (num-bigint's own), so a level costs a copy of each operand and of the result.
fn toom3(x: &BigUint, y: &BigUint, m: &mut Meter) -> Result<BigUint, Unwind> {
    let (xd, yd) = (x.to_u64_digits(), y.to_u64_digits());
    let k = yd.len().div_ceil(3);
    let split = |d: &[u64]| [0, 1, 2].map(|i| BigInt::from(limb_slice(d, i * k, (i + 1) * k)));
    let [x0, x1, x2] = split(&xd);
    let [y0, y1, y2] = split(&yd);
    // Evaluation at 0, 1, -1, -2, ∞.
    let p0 = &x0 + &x2;
    let (px1, pxm1) = (&p0 + &x1, &p0 - &x1);
    let pxm2 = ((&pxm1 + &x2) << 1usize) - &x0;
    let q0 = &y0 + &y2;
    let (qy1, qym1) = (&q0 + &y1, &q0 - &y1);
    let qym2 = ((&qym1 + &y2) << 1usize) - &y0;
    m(8 * (digits(x) + digits(y)))?;
    let r0 = mul_signed(&x0, &y0, m)?;
    let r1 = mul_signed(&px1, &qy1, m)?;
    let rm1 = mul_signed(&pxm1, &qym1, m)?;
    let rm2 = mul_signed(&pxm2, &qym2, m)?;
    let rinf = mul_signed(&x2, &y2, m)?;
    // Interpolation.
    let mut c3 = (&rm2 - &r1) / 3u8;
    let mut c1 = (&r1 - &rm1) >> 1usize;
    let mut c2 = &rm1 - &r0;
    c3 = ((&c2 - &c3) >> 1usize) + (&rinf << 1usize);
    c2 = c2 + &c1 - &rinf;
    c1 -= &c3;
    // The coefficients of a product of non-negative numbers are non-negative: added in
    // place at their offsets (no shifted temporaries).
    let mut acc = vec![0u64; xd.len() + yd.len() + 2];
    for (i, c) in [r0, c1, c2, c3, rinf].iter().enumerate() {
        debug_assert!(!c.is_negative(), "Toom-3 coefficient below zero");
        add_at(&mut acc, i * k, c.magnitude());
    }
    m(16 * (digits(x) + digits(y)))?;
    Ok(from_limbs(&acc))
}

/// `base ** e` by repeated squaring through [`mul`] (the caller has refused results over
/// the size limit).
pub(crate) fn pow(base: &BigUint, e: u64, m: &mut Meter) -> Result<BigUint, Unwind> {
    if e == 0 {
        return Ok(BigUint::one());
    }
    let mut r = base.clone();
    for i in (0..63 - e.leading_zeros()).rev() {
        r = mul(&r, &r, m)?;
        if (e >> i) & 1 == 1 {
            r = mul(&r, base, m)?;
        }
    }
    Ok(r)
}

/// Signed `a * b` through [`mul`].
pub(crate) fn mul_int(a: &BigInt, b: &BigInt, m: &mut Meter) -> Result<BigInt, Unwind> {
    mul_signed(a, b, m)
}

/// Signed `base ** e` through [`pow`].
pub(crate) fn pow_int(base: &BigInt, e: u64, m: &mut Meter) -> Result<BigInt, Unwind> {
    let mag = pow(base.magnitude(), e, m)?;
    let sign = if base.sign() == Sign::Minus && e % 2 == 1 {
        Sign::Minus
    } else {
        Sign::Plus
    };
    Ok(BigInt::from_biguint(sign, mag))
}
