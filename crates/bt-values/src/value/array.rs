//! Array storage (`#[ ]`): a [`CompactVec`](compact::CompactVec) of [`Value`]s, one byte per element while every
//! element is `nil`, `true`, `false` or an Integer in `0..=252`.
//!
//! Each such element is a code into [`SMALL`], a static table of those immediates. A flag
//! array of two million booleans is 2 MB instead of 32 MB of 16-byte [`Value`]s, which is
//! what makes the sieve-style loop cache-friendly. The two representations (bytes, or a
//! `Vec<Value>` once an element does not fit) and the operations over them are generic, in
//! `array/compact.rs`; this file says which Values have a code.

pub mod compact;

use crate::value::{drop_fast, Value};

/// The elements of an Array (see the module docs).
pub type ArrayData = compact::CompactVec<Value>;

/// Iterator over an [`ArrayData`]'s elements.
pub type Iter<'a> = compact::Iter<'a, Value>;

/// Largest Integer stored as a byte; codes are `nil`, `false`, `true`, then 0..=252.
const MAX_SMALL_INT: i64 = 252;
const FIRST_INT_CODE: usize = 3;

/// The immediates a Bytes array can hold, indexed by code.
static SMALL: [Value; 256] = small_table();

const fn small_table() -> [Value; 256] {
    let mut t = [const { Value::Nil }; 256];
    std::mem::forget(std::mem::replace(&mut t[1], Value::False));
    std::mem::forget(std::mem::replace(&mut t[2], Value::True));
    let mut i = FIRST_INT_CODE;
    while i < 256 {
        let v = Value::Int((i - FIRST_INT_CODE) as i64);
        // The old element is `nil`, which owns nothing; forgetting it is a no-op that keeps
        // the function const.
        std::mem::forget(std::mem::replace(&mut t[i], v));
        i += 1;
    }
    t
}

impl compact::ByteCoded for Value {
    /// The byte code of `self`, if it is one of the `SMALL` immediates (which own nothing).
    #[inline(always)]
    fn encode(&self) -> Option<u8> {
        match self {
            Value::Nil => Some(0),
            Value::False => Some(1),
            Value::True => Some(2),
            Value::Int(i) if (0..=MAX_SMALL_INT).contains(i) => {
                Some(*i as u8 + FIRST_INT_CODE as u8)
            }
            _ => None,
        }
    }

    #[inline(always)]
    fn decode(code: u8) -> &'static Value {
        &SMALL[code as usize]
    }

    #[inline(always)]
    fn discard(self) {
        drop_fast(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &ArrayData) -> Vec<String> {
        v.iter().map(|e| format!("{e:?}")).collect()
    }

    #[test]
    fn small_immediates_are_compact_and_read_back() {
        let a = ArrayData::from(vec![
            Value::Nil,
            Value::True,
            Value::False,
            Value::Int(0),
            Value::Int(252),
        ]);
        assert!(a.is_compact());
        assert_eq!(ints(&a), ["nil", "true", "false", "0", "252"]);
        assert_eq!(format!("{:?}", a[4]), "252");
        assert_eq!(format!("{:?}", a.iter().next_back().unwrap()), "252");
    }

    #[test]
    fn values_outside_the_table_are_wide() {
        for v in [
            Value::Int(253),
            Value::Int(-1),
            Value::str("x"),
            Value::float(1.0),
        ] {
            assert!(!ArrayData::from(vec![Value::Int(1), v]).is_compact());
        }
        assert!(!ArrayData::from_elem(Value::Int(1000), 3).is_compact());
    }

    #[test]
    fn storing_a_wide_value_widens_once_and_keeps_the_others() {
        let mut a = ArrayData::from_elem(Value::True, 4);
        a.set(1, Value::False);
        assert!(a.is_compact());
        a.set(2, Value::Int(1 << 40));
        assert!(!a.is_compact());
        assert_eq!(ints(&a), ["true", "false", "1099511627776", "true"]);
        a.push(Value::Nil);
        a.insert(0, Value::str("s"));
        assert_eq!(
            ints(&a),
            ["\"s\"", "true", "false", "1099511627776", "true", "nil"]
        );
    }

    #[test]
    fn push_and_insert_stay_compact_for_small_values() {
        let mut a = ArrayData::new();
        a.push(Value::Int(7));
        a.insert(0, Value::True);
        assert!(a.is_compact());
        assert_eq!(ints(&a), ["true", "7"]);
        assert_eq!(a.len(), 2);
        assert_eq!(a.last().map(|v| format!("{v:?}")).as_deref(), Some("7"));
    }
}
