//! The read-only [`View`] every List/Array primitive works on (a persistent vector or a
//! flat Array behind one interface), how results are built back in the receiver's kind
//! (`make`, `same_kind`) and the up-front charges of copies (`pay`, `pay_array`).

use crate::interp::eval::charge::ELEM;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::array::ArrayData;
use crate::value::{Ref, Value};

use super::super::common::expected;
use super::*;

/// A read-only view of a List's (persistent vector) or an Array's (flat vector) elements.
#[derive(Clone, Copy)]
pub(super) enum View<'a> {
    L(&'a Vector),
    A(&'a ArrayData),
}

/// Iterator over a [`View`].
pub(super) enum ViewIter<'a> {
    L(imbl::vector::Iter<'a, Value>),
    A(crate::value::array::Iter<'a>),
}

impl<'a> Iterator for ViewIter<'a> {
    type Item = &'a Value;
    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            ViewIter::L(i) => i.next(),
            ViewIter::A(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            ViewIter::L(i) => i.size_hint(),
            ViewIter::A(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for ViewIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            ViewIter::L(i) => i.next_back(),
            ViewIter::A(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for ViewIter<'_> {}

impl<'a> View<'a> {
    pub(super) fn len(self) -> usize {
        match self {
            View::L(v) => v.len(),
            View::A(v) => v.len(),
        }
    }
    pub(super) fn is_empty(self) -> bool {
        self.len() == 0
    }
    pub(super) fn get(self, i: usize) -> Option<&'a Value> {
        match self {
            View::L(v) => v.get(i),
            View::A(v) => v.get(i),
        }
    }
    pub(super) fn front(self) -> Option<&'a Value> {
        self.get(0)
    }
    pub(super) fn back(self) -> Option<&'a Value> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }
    pub(super) fn iter(self) -> ViewIter<'a> {
        match self {
            View::L(v) => ViewIter::L(v.iter()),
            View::A(v) => ViewIter::A(v.iter()),
        }
    }
    /// The elements as a persistent vector (O(1) for a List).
    pub(super) fn to_vector(self) -> Vector {
        match self {
            View::L(v) => v.clone(),
            View::A(v) => v.iter().cloned().collect(),
        }
    }
    /// The first `n` elements (n ≤ len).
    pub(super) fn take(self, n: usize) -> Vector {
        match self {
            View::L(v) => v.take(n),
            View::A(v) => v.iter().take(n).cloned().collect(),
        }
    }
    /// Without the first `n` elements (n ≤ len).
    pub(super) fn skip(self, n: usize) -> Vector {
        match self {
            View::L(v) => v.skip(n),
            View::A(v) => v.iter().skip(n).cloned().collect(),
        }
    }
}

impl std::ops::Index<usize> for View<'_> {
    type Output = Value;
    fn index(&self, i: usize) -> &Value {
        match self {
            View::L(v) => &v[i],
            View::A(v) => &v[i],
        }
    }
}

/// The elements of a List or Array receiver.
pub(super) fn vec_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<View<'a>, Unwind> {
    match v {
        Value::List(l) => Ok(View::L(l)),
        Value::Array(a) => Ok(View::A(a)),
        _ => Err(expected(ctx, sel, "a List or Array receiver", v)),
    }
}

/// A List or Array like `like`.
pub(super) fn same_kind(like: &Value, v: Vector) -> Value {
    match like {
        Value::Array(_) => Value::Array(Ref::new(v.into_iter().collect())),
        _ => Value::List(Ref::new(v)),
    }
}

pub(super) fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "Array",
        _ => "List",
    }
}

pub(super) fn class_kind(recv: &Value) -> &'static str {
    match recv {
        Value::Class(c) => c.name.as_str(),
        _ => "List",
    }
}

/// A List or Array (by class name) of `v`, charging the building (4 elements a reduction).
pub(super) fn make(ctx: &mut Ctx, class: &str, v: impl IntoIterator<Item = Value>) -> EvalResult {
    let it = v.into_iter();
    Ok(if class == "Array" {
        let v = ctx.collect_vec_charged(it, ELEM)?;
        Value::Array(Ref::new(v.into()))
    } else {
        Value::List(Ref::new(ctx.collect_charged(it, ELEM)?))
    })
}

/// Charges the O(n) copy an Array receiver's slice or rebuild costs (a List shares
/// structure: `take:`, `rest`, `++` … are O(log n) on it and free).
pub(super) fn pay_array(ctx: &mut Ctx, recv: &Value) -> Result<(), Unwind> {
    match recv {
        Value::Array(a) => ctx.charge(a.len().saturating_mul(ELEM)),
        _ => Ok(()),
    }
}

/// Charges `n` elements' work up front.
pub(super) fn pay(ctx: &mut Ctx, n: usize) -> Result<(), Unwind> {
    ctx.charge(n.saturating_mul(ELEM))
}
