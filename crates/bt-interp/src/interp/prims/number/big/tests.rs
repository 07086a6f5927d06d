//! Property tests of the interruptible big-Integer operations against num-bigint, on seeded
//! random operands of many sizes (the unit-test build uses tiny leaf sizes, so these
//! operands run every recursive path), and of the checks between pieces.

use num_bigint::{BigInt, BigUint};
use num_integer::Integer as _;

use super::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A random number of up to `digits` 32-bit digits, sometimes with long runs of zero
    /// or one bits (carries and borrows across pieces).
    fn big(&mut self, digits: usize) -> BigUint {
        let n = 1 + (self.next() as usize) % digits.max(1);
        let style = self.next() % 4;
        let d: Vec<u32> = (0..n)
            .map(|_| match style {
                0 => u32::MAX,
                1 if self.next().is_multiple_of(3) => 0,
                _ => self.next() as u32,
            })
            .collect();
        BigUint::new(d)
    }

    fn signed(&mut self, digits: usize) -> BigInt {
        let m = self.big(digits);
        if self.next().is_multiple_of(2) {
            -BigInt::from(m)
        } else {
            BigInt::from(m)
        }
    }
}

/// A meter that never stops and records the largest charge.
fn free() -> impl FnMut(usize) -> Result<(), Unwind> {
    |_| Ok(())
}

const SIZES: [usize; 8] = [1, 3, 20, 30, 50, 90, 200, 400];

#[test]
fn products_agree_with_num_bigint() {
    let mut r = Rng(0x5eed_0001);
    let mut m = free();
    for &sa in &SIZES {
        for &sb in &SIZES {
            for _ in 0..3 {
                let (a, b) = (r.signed(sa), r.signed(sb));
                assert_eq!(mul_int(&a, &b, &mut m).ok().unwrap(), &a * &b, "{a} * {b}");
            }
        }
    }
}

#[test]
fn divisions_agree_with_num_bigint() {
    let mut r = Rng(0x5eed_0002);
    let mut m = free();
    for &sa in &SIZES {
        for &sb in &SIZES {
            for _ in 0..3 {
                let (a, mut b) = (r.signed(sa), r.signed(sb));
                if b == BigInt::from(0u8) {
                    b = BigInt::from(7u8);
                }
                let (q, rem) = div::div_rem_int(&a, &b, &mut m).ok().unwrap();
                assert_eq!((q, rem), (&a / &b, &a % &b), "{a} / {b}");
                let md = div::mod_floor_int(&a, &b, &mut m).ok().unwrap();
                assert_eq!(md, a.mod_floor(&b), "{a} mod {b}");
            }
        }
    }
    // A divisor just below a power of two and a dividend built from it: the correction steps.
    let b = (BigUint::from(1u8) << 5000usize) - 1u8;
    let a = &b * &b + (&b - 1u8);
    assert_eq!(div::div_rem(&a, &b, &mut m).ok().unwrap(), a.div_rem(&b));
}

#[test]
fn gcds_agree_with_num_bigint() {
    let mut r = Rng(0x5eed_0003);
    let mut m = free();
    for &sa in &SIZES {
        for &sb in &SIZES {
            for _ in 0..2 {
                // A common factor makes the answer non-trivial.
                let f = r.big(sa.min(sb) / 2 + 1);
                let (a, b) = (r.big(sa) * &f, r.big(sb) * &f);
                assert_eq!(
                    gcd::gcd(&a, &b, &mut m).ok().unwrap(),
                    a.gcd(&b),
                    "gcd {a} {b}"
                );
                assert_eq!(
                    gcd::lcm(&a, &b, &mut m).ok().unwrap(),
                    a.lcm(&b),
                    "lcm {a} {b}"
                );
            }
        }
    }
    let z = BigUint::from(0u8);
    let a = r.big(300);
    assert_eq!(gcd::gcd(&a, &z, &mut m).ok().unwrap(), a);
    assert_eq!(gcd::gcd(&z, &a, &mut m).ok().unwrap(), a);
}

#[test]
fn powers_printing_and_parsing_agree_with_num_bigint() {
    let mut r = Rng(0x5eed_0004);
    let mut m = free();
    for e in [0u64, 1, 2, 3, 17, 100, 333] {
        let b = r.signed(12);
        assert_eq!(
            pow_int(&b, e, &mut m).ok().unwrap(),
            b.pow(e as u32),
            "{b} ** {e}"
        );
    }
    for &s in &SIZES {
        for _ in 0..3 {
            let x = r.big(s);
            for radix in [10, 7, 16, 36] {
                assert_eq!(
                    radix::to_radix(&x, radix, &mut m).ok().unwrap(),
                    x.to_str_radix(radix)
                );
            }
            let text = x.to_str_radix(10);
            assert_eq!(
                radix::parse_decimal(text.as_bytes(), &mut m).ok().unwrap(),
                x
            );
        }
    }
    // Leading zeros and zero itself.
    let zeros = format!("{}{}", "0".repeat(500), "123");
    assert_eq!(
        radix::parse_decimal(zeros.as_bytes(), &mut m).ok().unwrap(),
        BigUint::from(123u8)
    );
    let zero = BigUint::from(0u8);
    assert_eq!(radix::to_radix(&zero, 10, &mut m).ok().unwrap(), "0");
}

/// Runs `op` with a meter that records every charge, then again with one that fails halfway:
/// the failure ends it (the error is answered), and no piece between two checks was larger
/// than `max_piece` units.
fn checks_between_bounded_pieces(
    what: &str,
    max_piece: usize,
    op: &dyn Fn(&mut Meter) -> Result<(), Unwind>,
) {
    let mut calls = 0usize;
    let mut biggest = 0usize;
    let mut total = 0usize;
    op(&mut |u| {
        calls += 1;
        biggest = biggest.max(u);
        total += u;
        Ok(())
    })
    .ok()
    .unwrap();
    assert!(calls >= 10, "{what}: only {calls} checks");
    assert!(
        biggest <= max_piece,
        "{what}: a piece of {biggest} units (total {total})"
    );
    let mut n = 0;
    let r = op(&mut |_| {
        n += 1;
        if n >= calls / 2 {
            Err(Unwind::limit("deadline"))
        } else {
            Ok(())
        }
    });
    assert!(r.is_err(), "{what}: the failing check did not stop it");
    assert_eq!(n, calls / 2, "{what}: went on after the failing check");
}

#[test]
fn every_operation_checks_between_pieces_of_bounded_work() {
    let mut r = Rng(0x5eed_0005);
    let (a, b) = (r.big(400) | BigUint::from(1u8) << 12_700usize, r.big(400));
    let b = b | BigUint::from(1u8) << 6_000usize;
    // A piece is at most a leaf product or one linear pass over the operands (additions,
    // shifts, a Lehmer step): bounded by the leaf size and the operands' size, not their
    // product.
    let leaf = product_units(MUL_LEAF, MUL_LEAF).max(64 * digits(&a));
    checks_between_bounded_pieces("mul", leaf, &|m| mul(&a, &a, m).map(drop));
    checks_between_bounded_pieces("div", 4 * leaf, &|m| div::div_rem(&a, &b, m).map(drop));
    checks_between_bounded_pieces("gcd", 4 * leaf, &|m| gcd::gcd(&a, &b, m).map(drop));
    checks_between_bounded_pieces("pow", leaf, &|m| pow(&b, 5, m).map(drop));
    checks_between_bounded_pieces("print", 4 * leaf, &|m| radix::to_radix(&a, 10, m).map(drop));
    let text = a.to_str_radix(10);
    checks_between_bounded_pieces("parse", leaf, &|m| {
        radix::parse_decimal(text.as_bytes(), m).map(drop)
    });
}
