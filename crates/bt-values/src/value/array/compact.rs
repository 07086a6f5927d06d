//! The two representations of a flat vector whose commonest elements fit in a byte: the
//! storage of an Array (`#[ ]`, [`crate::value::array`]), generic over its element so it
//! depends on nothing but [`ByteCoded`].
//!
//! - **Bytes**: while every element has a byte code ([`ByteCoded::encode`]), each element is
//!   that byte; reading one answers a reference into the element type's static table of
//!   coded values ([`ByteCoded::decode`]).
//! - **Wide**: a `Vec<T>`, for everything else.
//!
//! Constructors pick Bytes when every element fits; storing an element that does not fit
//! widens the whole vector once (O(n), then Wide for good). Readers see `&T` either way, so
//! callers never care which representation they hold, except that there is no `&[T]` slice or
//! `&mut T` (use [`CompactVec::set`], or [`CompactVec::wide_mut`] for bulk edits).
//!
//! Everything is monomorphised for the one element type (`Value`): no indirection.

use std::ops::Index;

/// An element type some of whose values have a one-byte code.
pub trait ByteCoded: Clone + 'static {
    /// The byte code of `self`, if it has one. A coded value must own nothing (no reference
    /// count, no heap data): a Bytes vector forgets the values it encodes.
    fn encode(&self) -> Option<u8>;
    /// The value of a byte code made by [`ByteCoded::encode`].
    fn decode(code: u8) -> &'static Self;
    /// Drops a replaced element (an element type may have a cheaper way than the drop glue).
    fn discard(self);
}

/// A flat vector of `T`s, one byte per element while every element has a byte code (see the
/// module docs for the two representations).
#[derive(Clone)]
pub struct CompactVec<T: ByteCoded>(Repr<T>);

#[derive(Clone)]
enum Repr<T> {
    Bytes(Vec<u8>),
    Wide(Vec<T>),
}

impl<T: ByteCoded> CompactVec<T> {
    pub fn new() -> CompactVec<T> {
        CompactVec(Repr::Bytes(Vec::new()))
    }

    /// `n` copies of `v`.
    pub fn from_elem(v: T, n: usize) -> CompactVec<T> {
        match v.encode() {
            Some(code) => CompactVec(Repr::Bytes(vec![code; n])),
            None => CompactVec(Repr::Wide(vec![v; n])),
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
    pub fn get(&self, i: usize) -> Option<&T> {
        match &self.0 {
            Repr::Bytes(b) => b.get(i).map(|c| T::decode(*c)),
            Repr::Wide(v) => v.get(i),
        }
    }

    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&T> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> Iter<'_, T> {
        match &self.0 {
            Repr::Bytes(b) => Iter::Bytes(b.iter()),
            Repr::Wide(v) => Iter::Wide(v.iter()),
        }
    }

    /// The elements as a fresh vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    /// Replaces the element at 0-based `i` (which must be in bounds, as for slice indexing).
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: T) {
        match &mut self.0 {
            Repr::Bytes(b) => match v.encode() {
                Some(code) => {
                    b[i] = code;
                    // A byte-coded element owns nothing (see [`ByteCoded`]): `forget` skips the
                    // out-of-line drop glue that the sieve's marking loop paid per store.
                    std::mem::forget(v);
                }
                None => self.wide_mut()[i] = v,
            },
            Repr::Wide(w) => std::mem::replace(&mut w[i], v).discard(),
        }
    }

    pub fn push(&mut self, v: T) {
        match (&mut self.0, v.encode()) {
            (Repr::Bytes(b), Some(code)) => b.push(code),
            _ => self.wide_mut().push(v),
        }
    }

    /// Keeps the first `n` elements (all of them when there are no more).
    pub fn truncate(&mut self, n: usize) {
        match &mut self.0 {
            Repr::Bytes(b) => b.truncate(n),
            Repr::Wide(w) => w.truncate(n),
        }
    }

    /// Inserts `v` before 0-based `i` (`i <= len`).
    pub fn insert(&mut self, i: usize, v: T) {
        match (&mut self.0, v.encode()) {
            (Repr::Bytes(b), Some(code)) => b.insert(i, code),
            _ => self.wide_mut().insert(i, v),
        }
    }

    /// The elements as a `Vec<T>` to edit in bulk; widens a compact array (once).
    pub(crate) fn wide_mut(&mut self) -> &mut Vec<T> {
        if let Repr::Bytes(b) = &self.0 {
            self.0 = Repr::Wide(b.iter().map(|c| T::decode(*c).clone()).collect());
        }
        match &mut self.0 {
            Repr::Wide(w) => w,
            Repr::Bytes(_) => unreachable!("widened above"),
        }
    }
}

impl<T: ByteCoded> Default for CompactVec<T> {
    fn default() -> Self {
        CompactVec::new()
    }
}

impl<T: ByteCoded> From<Vec<T>> for CompactVec<T> {
    /// Compact when every element fits in a byte (a scan that stops at the first that does
    /// not), else the vector as it is.
    fn from(v: Vec<T>) -> CompactVec<T> {
        if v.iter().all(|e| e.encode().is_some()) {
            let bytes = v.iter().map(|e| e.encode().unwrap_or_default()).collect();
            return CompactVec(Repr::Bytes(bytes));
        }
        CompactVec(Repr::Wide(v))
    }
}

impl<T: ByteCoded> FromIterator<T> for CompactVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> CompactVec<T> {
        CompactVec::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: ByteCoded> Index<usize> for CompactVec<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        match &self.0 {
            Repr::Bytes(b) => T::decode(b[i]),
            Repr::Wide(v) => &v[i],
        }
    }
}

impl<'a, T: ByteCoded> IntoIterator for &'a CompactVec<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Iterator over a [`CompactVec`]'s elements.
#[derive(Clone)]
pub enum Iter<'a, T> {
    Bytes(std::slice::Iter<'a, u8>),
    Wide(std::slice::Iter<'a, T>),
}

impl<'a, T: ByteCoded> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        match self {
            Iter::Bytes(i) => i.next().map(|c| T::decode(*c)),
            Iter::Wide(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Bytes(i) => i.size_hint(),
            Iter::Wide(i) => i.size_hint(),
        }
    }
    fn nth(&mut self, n: usize) -> Option<&'a T> {
        match self {
            Iter::Bytes(i) => i.nth(n).map(|c| T::decode(*c)),
            Iter::Wide(i) => i.nth(n),
        }
    }
}

impl<T: ByteCoded> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Bytes(i) => i.next_back().map(|c| T::decode(*c)),
            Iter::Wide(i) => i.next_back(),
        }
    }
}

impl<T: ByteCoded> ExactSizeIterator for Iter<'_, T> {}
