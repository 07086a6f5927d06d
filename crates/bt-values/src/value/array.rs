//! Array storage (`#[ ]`): one flat vector, in one of two representations with the same
//! behaviour.
//!
//! - **Bytes**: while every element is `nil`, `true`, `false` or an Integer in `0..=252`, each
//!   element is one byte — a code into [`SMALL`], a static table of those immediates. A flag
//!   array of two million booleans is 2 MB instead of 32 MB of 16-byte [`Value`]s, which is what
//!   makes the sieve-style loop cache-friendly.
//! - **Wide**: a `Vec<Value>`, for everything else.
//!
//! Constructors pick Bytes when every element fits; storing an element that does not fit
//! widens the whole array once (O(n), then Wide for good). Readers see `&Value` either way —
//! Bytes elements are references into the static table — so callers never care which
//! representation they hold, except that there is no `&[Value]` slice or `&mut Value` (use
//! [`ArrayData::set`], or [`ArrayData::wide_mut`] for bulk edits).

use std::ops::Index;

use crate::value::{drop_fast, Value};

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

/// The byte code of `v`, if it is one of the [`SMALL`] immediates.
#[inline(always)]
fn encode(v: &Value) -> Option<u8> {
    match v {
        Value::Nil => Some(0),
        Value::False => Some(1),
        Value::True => Some(2),
        Value::Int(i) if (0..=MAX_SMALL_INT).contains(i) => Some(*i as u8 + FIRST_INT_CODE as u8),
        _ => None,
    }
}

#[inline(always)]
fn decode(code: u8) -> &'static Value {
    &SMALL[code as usize]
}

/// The elements of an Array (see the module docs for the two representations).
#[derive(Clone)]
pub struct ArrayData(Repr);

#[derive(Clone)]
enum Repr {
    Bytes(Vec<u8>),
    Wide(Vec<Value>),
}

impl ArrayData {
    pub fn new() -> ArrayData {
        ArrayData(Repr::Bytes(Vec::new()))
    }

    /// `n` copies of `v`.
    pub fn from_elem(v: Value, n: usize) -> ArrayData {
        match encode(&v) {
            Some(code) => ArrayData(Repr::Bytes(vec![code; n])),
            None => ArrayData(Repr::Wide(vec![v; n])),
        }
    }

    /// Whether the compact representation is in use (for tests and diagnostics).
    pub fn is_compact(&self) -> bool {
        matches!(self.0, Repr::Bytes(_))
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Bytes(b) => b.len(),
            Repr::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element at 0-based `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&Value> {
        match &self.0 {
            Repr::Bytes(b) => b.get(i).map(|c| decode(*c)),
            Repr::Wide(v) => v.get(i),
        }
    }

    pub fn first(&self) -> Option<&Value> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&Value> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Bytes(b) => Iter::Bytes(b.iter()),
            Repr::Wide(v) => Iter::Wide(v.iter()),
        }
    }

    /// The elements as a fresh vector.
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().cloned().collect()
    }

    /// Replaces the element at 0-based `i` (which must be in bounds, as for slice indexing).
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: Value) {
        match &mut self.0 {
            Repr::Bytes(b) => match encode(&v) {
                Some(code) => {
                    b[i] = code;
                    // An immediate: nothing to free, and `forget` skips the out-of-line drop
                    // glue (Value has a Drop impl) that the sieve's marking loop paid per store.
                    std::mem::forget(v);
                }
                None => self.wide_mut()[i] = v,
            },
            Repr::Wide(w) => drop_fast(std::mem::replace(&mut w[i], v)),
        }
    }

    pub fn push(&mut self, v: Value) {
        match (&mut self.0, encode(&v)) {
            (Repr::Bytes(b), Some(code)) => b.push(code),
            _ => self.wide_mut().push(v),
        }
    }

    /// Inserts `v` before 0-based `i` (`i <= len`).
    pub fn insert(&mut self, i: usize, v: Value) {
        match (&mut self.0, encode(&v)) {
            (Repr::Bytes(b), Some(code)) => b.insert(i, code),
            _ => self.wide_mut().insert(i, v),
        }
    }

    /// The elements as a `Vec<Value>` to edit in bulk; widens a compact array (once).
    pub(crate) fn wide_mut(&mut self) -> &mut Vec<Value> {
        if let Repr::Bytes(b) = &self.0 {
            self.0 = Repr::Wide(b.iter().map(|c| decode(*c).clone()).collect());
        }
        match &mut self.0 {
            Repr::Wide(w) => w,
            Repr::Bytes(_) => unreachable!("widened above"),
        }
    }
}

impl Default for ArrayData {
    fn default() -> Self {
        ArrayData::new()
    }
}

impl From<Vec<Value>> for ArrayData {
    /// Compact when every element fits in a byte (a scan that stops at the first that does
    /// not), else the vector as it is.
    fn from(v: Vec<Value>) -> ArrayData {
        if v.iter().all(|e| encode(e).is_some()) {
            let bytes = v.iter().map(|e| encode(e).unwrap_or_default()).collect();
            return ArrayData(Repr::Bytes(bytes));
        }
        ArrayData(Repr::Wide(v))
    }
}

impl FromIterator<Value> for ArrayData {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> ArrayData {
        ArrayData::from(iter.into_iter().collect::<Vec<Value>>())
    }
}

impl Index<usize> for ArrayData {
    type Output = Value;
    #[inline(always)]
    fn index(&self, i: usize) -> &Value {
        match &self.0 {
            Repr::Bytes(b) => decode(b[i]),
            Repr::Wide(v) => &v[i],
        }
    }
}

impl<'a> IntoIterator for &'a ArrayData {
    type Item = &'a Value;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over an [`ArrayData`]'s elements.
#[derive(Clone)]
pub enum Iter<'a> {
    Bytes(std::slice::Iter<'a, u8>),
    Wide(std::slice::Iter<'a, Value>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;
    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Iter::Bytes(i) => i.next().map(|c| decode(*c)),
            Iter::Wide(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Bytes(i) => i.size_hint(),
            Iter::Wide(i) => i.size_hint(),
        }
    }
    fn nth(&mut self, n: usize) -> Option<&'a Value> {
        match self {
            Iter::Bytes(i) => i.nth(n).map(|c| decode(*c)),
            Iter::Wide(i) => i.nth(n),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Bytes(i) => i.next_back().map(|c| decode(*c)),
            Iter::Wide(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

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
