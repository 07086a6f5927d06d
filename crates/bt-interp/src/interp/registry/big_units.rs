//! The units of big-Integer work (see `interp::eval::charge`, and `registry::Cost::BigLinear`/
//! `BigProduct`, which charge them): a primitive on a `BigInt` operand pays for its size up front — linear operations (`+`, `-`, comparisons, bit operations) the
//! bytes of the operands; multiplication, division, gcd and decimal printing the product of
//! the operands' sizes / 64 (schoolbook order; Karatsuba and friends are cheaper, so this
//! errs towards charging). Machine Integers and Floats are never charged (one discriminant
//! test each).

use crate::value::Value;

/// How a big-Integer primitive's work grows with its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Growth {
    Linear,
    Product,
}

fn bytes(v: &Value) -> usize {
    match v {
        Value::BigInt(b) => (b.bits() / 8) as usize,
        Value::Int(_) | Value::Float(_) => 8,
        _ => 0,
    }
}

/// Units for a primitive on `r` and `a` (`a` empty for unary ones, which count `r` twice
/// for a product: printing divides the number by powers of ten).
pub(crate) fn big_units(r: &Value, a: &[Value], cost: Growth) -> usize {
    let x = bytes(r);
    let y = a.first().map_or(x, bytes);
    let linear = x.saturating_add(y);
    match cost {
        Growth::Linear => linear,
        Growth::Product => (x.min(y).saturating_mul(x.max(y)) / 64).saturating_add(linear),
    }
}

/// Whether a primitive call involves a big Integer.
#[inline(always)]
pub(crate) fn any_big(r: &Value, a: &[Value]) -> bool {
    matches!(r, Value::BigInt(_)) || matches!(a.first(), Some(Value::BigInt(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    #[test]
    fn costs_grow_with_the_operands() {
        let big = Value::from_bigint(BigInt::from(1u8) << 80_000usize); // 10,000 bytes
        let one = Value::Int(1);
        assert!(!any_big(&one, std::slice::from_ref(&one)));
        assert!(any_big(&one, std::slice::from_ref(&big)));
        assert_eq!(
            big_units(&big, std::slice::from_ref(&one), Growth::Linear),
            10_008
        );
        assert_eq!(
            big_units(&big, std::slice::from_ref(&big), Growth::Product),
            10_000 * 10_000 / 64 + 20_000
        );
        assert_eq!(
            big_units(&big, &[], Growth::Product),
            10_000 * 10_000 / 64 + 20_000
        );
    }
}
