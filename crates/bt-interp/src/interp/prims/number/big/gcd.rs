//! Interruptible gcd of huge Integers (see `big`'s module doc): Lehmer's algorithm (Knuth,
//! TAOCP vol. 2, 4.5.2, Algorithm L) on 126-bit leading parts. Each step simulates the
//! Euclidean quotients that the leading parts determine (cofactors kept below 2^63), then
//! applies them to the whole operands in one pass (a linear combination, in place); a step
//! whose first quotient is not determined (operands of very different lengths) is one
//! division through `big::div`. num-bigint's own gcd (binary, one bit a pass) took minutes
//! for million-digit operands; this is about 63 bits a pass.

use num_bigint::BigUint;
use num_integer::Integer as _;
use num_traits::Zero;

use super::{div, Meter};
use crate::interp::eval::Unwind;

/// Operands of at most this many bits go to num-bigint's gcd in one call.
const SMALL_BITS: u64 = if cfg!(test) { 200 } else { 4096 };

fn bits(x: &[u64]) -> u64 {
    match x.last() {
        Some(&t) => 64 * x.len() as u64 - t.leading_zeros() as u64,
        None => 0,
    }
}

fn trim(x: &mut Vec<u64>) {
    while x.last() == Some(&0) {
        x.pop();
    }
}

/// 126 bits of `x` from bit `s` on (`x` < 2^(s+126)).
fn extract(x: &[u64], s: u64) -> u128 {
    let (w, off) = ((s / 64) as usize, (s % 64) as u32);
    let at = |i: usize| x.get(i).copied().unwrap_or(0) as u128;
    let lo = at(w) | (at(w + 1) << 64);
    let hi = at(w + 2);
    let v = if off == 0 {
        lo
    } else {
        (lo >> off) | (hi << (128 - off))
    };
    v & ((1u128 << 126) - 1)
}

/// `x < y` for trimmed little-endian limbs.
fn less(x: &[u64], y: &[u64]) -> bool {
    if x.len() != y.len() {
        return x.len() < y.len();
    }
    x.iter().rev().lt(y.iter().rev())
}

fn to_big(x: &[u64]) -> BigUint {
    let mut d = Vec::with_capacity(x.len() * 2);
    for &w in x {
        d.push(w as u32);
        d.push((w >> 32) as u32);
    }
    BigUint::new(d)
}

/// The cofactors `(a, b, c, d)` of Algorithm L for leading parts `x ≥ y`: `a·u + b·v` and
/// `c·u + d·v` are the operands some Euclidean steps later. `b == 0`: no step determined.
fn cofactors(x: u128, y: u128) -> (i64, i64, i64, i64) {
    const MAX: i128 = 1 << 62;
    let (mut x, mut y) = (x as i128, y as i128);
    let (mut a, mut b, mut c, mut d) = (1i128, 0i128, 0i128, 1i128);
    loop {
        if y + c <= 0 || y + d <= 0 || x + a < 0 || x + b < 0 {
            break;
        }
        let q = (x + a) / (y + c);
        if q != (x + b) / (y + d) {
            break;
        }
        let (Some(qc), Some(qd)) = (q.checked_mul(c), q.checked_mul(d)) else {
            break;
        };
        let (nc, nd) = (a - qc, b - qd);
        if nc.abs() >= MAX || nd.abs() >= MAX {
            break;
        }
        (a, c) = (c, nc);
        (b, d) = (d, nd);
        let t = x - q * y;
        x = y;
        y = t;
    }
    (a as i64, b as i64, c as i64, d as i64)
}

/// `u, v := a·u + b·v, c·u + d·v` in place (both results are non-negative; within each pair
/// the cofactors have opposite signs, so no intermediate overflows an i128).
fn combine(u: &mut Vec<u64>, v: &mut Vec<u64>, (a, b, c, d): (i64, i64, i64, i64)) {
    v.resize(u.len(), 0);
    let (a, b, c, d) = (a as i128, b as i128, c as i128, d as i128);
    let (mut cu, mut cv) = (0i128, 0i128);
    for i in 0..u.len() {
        let (x, y) = (u[i] as i128, v[i] as i128);
        let tu = a * x + b * y + cu;
        let tv = c * x + d * y + cv;
        u[i] = tu as u64;
        v[i] = tv as u64;
        cu = tu >> 64;
        cv = tv >> 64;
    }
    debug_assert!(cu == 0 && cv == 0, "Lehmer step left a carry");
    trim(u);
    trim(v);
}

/// `gcd(a, b)` (non-negative), exactly, calling `m` after each step.
pub fn gcd(a: &BigUint, b: &BigUint, m: &mut Meter) -> Result<BigUint, Unwind> {
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if big.bits() <= SMALL_BITS {
        m(super::product_units(super::digits(big), super::digits(big)))?;
        return Ok(big.gcd(small));
    }
    let mut u: Vec<u64> = big.to_u64_digits();
    let mut v: Vec<u64> = small.to_u64_digits();
    loop {
        if v.is_empty() {
            return Ok(to_big(&u));
        }
        let (ub, vb) = (bits(&u), bits(&v));
        if ub <= SMALL_BITS {
            let (x, y) = (to_big(&u), to_big(&v));
            m(super::product_units(super::digits(&x), super::digits(&x)))?;
            return Ok(x.gcd(&y));
        }
        let k = if ub - vb < 64 {
            let s = ub - 126;
            cofactors(extract(&u, s), extract(&v, s))
        } else {
            (1, 0, 0, 1)
        };
        if k.1 == 0 {
            // No quotient determined: one division step.
            let (x, y) = (to_big(&u), to_big(&v));
            let (_, r) = div::div_rem(&x, &y, m)?;
            u = v;
            v = r.to_u64_digits();
        } else {
            combine(&mut u, &mut v, k);
            if less(&u, &v) {
                std::mem::swap(&mut u, &mut v);
            }
        }
        m(32 * u.len())?;
    }
}

/// `lcm(a, b)` = a / gcd(a, b) · b (zero when either is zero).
pub fn lcm(a: &BigUint, b: &BigUint, m: &mut Meter) -> Result<BigUint, Unwind> {
    if a.is_zero() || b.is_zero() {
        return Ok(BigUint::zero());
    }
    let g = gcd(a, b, m)?;
    let (q, _) = div::div_rem(a, &g, m)?;
    super::mul(&q, b, m)
}
