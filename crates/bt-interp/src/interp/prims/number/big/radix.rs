//! Interruptible printing and parsing of huge Integers (see `big`'s module doc).
//!
//! Printing in a radix that is not a power of two splits the number by the squares of a
//! power of the radix (divide and conquer, as num-bigint does), each division through
//! `big::div` (pieces of bounded work). Decimal parsing splits the digits in halves, `hi · 10^len(lo) + lo`, with the products and the
//! powers through `big::mul` (num-bigint's parse is quadratic: 3 s for a million digits).

use std::collections::HashMap;

use num_bigint::BigUint;
use num_traits::Zero;

use super::{digits, Meter};
use crate::interp::eval::Unwind;

/// Numbers of at most this many 32-bit digits print in one num-bigint call.
pub(crate) const PRINT_LEAF: usize = if cfg!(test) { 4 } else { 512 };
/// Digit strings of at most this many digits parse in one num-bigint call.
pub(crate) const PARSE_LEAF: usize = if cfg!(test) { 40 } else { 4000 };

/// `x` in `radix` (2–36, lower-case digits), calling `m` between steps: divide and conquer
/// by the squares of a power of the radix (as num-bigint does), each division through
/// `big::div`, num-bigint's printing for the pieces.
pub fn to_radix(x: &BigUint, radix: u32, m: &mut Meter) -> Result<String, Unwind> {
    let n = digits(x);
    if n <= PRINT_LEAF || radix.is_power_of_two() {
        m(super::product_units(n, n / 16 + 1))?;
        return Ok(x.to_str_radix(radix));
    }
    // bases[i] = radix^(k · 2^i), the last one about half of x.
    let k = (64.0 / (radix as f64).log2()).floor() as usize;
    let mut bases = vec![(BigUint::from(radix).pow(k as u32), k)];
    loop {
        let (b, p) = bases.last().cloned().unwrap_or_default();
        if 2 * digits(&b) > n + 1 {
            break;
        }
        let sq = super::mul(&b, &b, m)?;
        bases.push((sq, 2 * p));
    }
    let mut out = String::with_capacity(n * 10);
    print_rec(x, radix, &bases, None, &mut out, m)?;
    Ok(out)
}

/// Appends `x` to `out`, left-padded with zeros to `width` digits when given.
fn print_rec(
    x: &BigUint,
    radix: u32,
    bases: &[(BigUint, usize)],
    width: Option<usize>,
    out: &mut String,
    m: &mut Meter,
) -> Result<(), Unwind> {
    let n = digits(x);
    // The largest base not above x (x < that base squared, so the quotient is below it).
    let l = bases.iter().rposition(|(b, _)| b <= x);
    let Some(l) = l.filter(|_| n > PRINT_LEAF) else {
        m(super::product_units(n, n / 16 + 1))?;
        let s = if x.is_zero() {
            String::new()
        } else {
            x.to_str_radix(radix)
        };
        let w = width.unwrap_or(1).max(s.len());
        out.extend(std::iter::repeat_n('0', w - s.len()));
        out.push_str(&s);
        return Ok(());
    };
    let (b, p) = &bases[l];
    let (q, r) = super::div::div_rem(x, b, m)?;
    print_rec(
        &q,
        radix,
        bases,
        width.map(|w| w.saturating_sub(*p)),
        out,
        m,
    )?;
    print_rec(&r, radix, bases, Some(*p), out, m)
}

/// The value of decimal `digits` (ASCII `0`–`9` only), calling `m` between pieces.
pub(crate) fn parse_decimal(digits: &[u8], m: &mut Meter) -> Result<BigUint, Unwind> {
    let mut powers = HashMap::new();
    parse_rec(digits, &mut powers, m)
}

fn parse_rec(
    d: &[u8],
    powers: &mut HashMap<usize, BigUint>,
    m: &mut Meter,
) -> Result<BigUint, Unwind> {
    if d.len() <= PARSE_LEAF {
        m(d.len() * d.len() / 64 + d.len())?;
        return Ok(BigUint::parse_bytes(d, 10).unwrap_or_default());
    }
    let h = d.len() / 2;
    let (hi, lo) = d.split_at(d.len() - h);
    let p = match powers.get(&h) {
        Some(p) => p.clone(),
        None => {
            let p = super::pow(&BigUint::from(10u8), h as u64, m)?;
            powers.insert(h, p.clone());
            p
        }
    };
    let hi = parse_rec(hi, powers, m)?;
    let lo = parse_rec(lo, powers, m)?;
    Ok(super::mul(&hi, &p, m)? + lo)
}
