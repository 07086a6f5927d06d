//! Interruptible printing and parsing of huge Integers (see `big`'s module doc).
//!
//! Printing in a radix that is not a power of two divides by a power of the radix again and
//! again (quadratic, as num-bigint's own printing): here one division per check, the power
//! chosen so that one division is at most about [`STEP_WORK`] limb operations. Decimal
//! parsing splits the digits in halves, `hi · 10^len(lo) + lo`, with the products and the
//! powers through `big::mul` (num-bigint's parse is quadratic: 3 s for a million digits).

use std::collections::HashMap;

use num_bigint::BigUint;
use num_integer::Integer as _;
use num_traits::Zero;

use super::{digits, Meter};
use crate::interp::eval::Unwind;

/// 32-bit digit operations of one printing step (about a millisecond).
const STEP_WORK: usize = if cfg!(test) { 64 } else { 1 << 21 };
/// Numbers of at most this many 32-bit digits print in one num-bigint call.
pub const PRINT_LEAF: usize = if cfg!(test) { 4 } else { 512 };
/// Digit strings of at most this many digits parse in one num-bigint call.
pub const PARSE_LEAF: usize = if cfg!(test) { 40 } else { 4000 };

/// `x` in `radix` (2–36, lower-case digits), calling `m` between steps.
pub fn to_radix(x: &BigUint, radix: u32, m: &mut Meter) -> Result<String, Unwind> {
    let n = digits(x);
    if n <= PRINT_LEAF || radix.is_power_of_two() {
        m(super::product_units(n, n / 16 + 1))?;
        return Ok(x.to_str_radix(radix));
    }
    // The divisor radix^k of about `len` digits: a step is n · len digit operations.
    let len = (STEP_WORK / n).clamp(1, 256);
    let per_digit = (radix as f64).log2() / 32.0;
    let k = ((len as f64 / per_digit) as usize).max(1);
    let base = BigUint::from(radix).pow(k as u32);
    let mut chunks: Vec<String> = Vec::new();
    let mut rest = x.clone();
    while rest >= base {
        let (q, r) = rest.div_rem(&base);
        m(super::product_units(digits(&rest), digits(&base)))?;
        let s = r.to_str_radix(radix);
        chunks.push(format!("{}{s}", "0".repeat(k - s.len())));
        rest = q;
    }
    let mut out = rest.to_str_radix(radix);
    if rest.is_zero() {
        out.clear();
    }
    out.reserve(chunks.len() * k);
    for c in chunks.iter().rev() {
        out.push_str(c);
    }
    if out.is_empty() {
        out.push('0');
    }
    Ok(out)
}

/// The value of decimal `digits` (ASCII `0`–`9` only), calling `m` between pieces.
pub fn parse_decimal(digits: &[u8], m: &mut Meter) -> Result<BigUint, Unwind> {
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
