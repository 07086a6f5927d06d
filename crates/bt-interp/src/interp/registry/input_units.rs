//! The units of work of the linear String and Binary primitives (see `interp::eval::charge`):
//! what `registry::Cost::InputBytes` charges before such a primitive runs.

use crate::interp::eval::charge::ELEM;

use crate::value::Value;

/// The bytes of work a String primitive's inputs stand for: the receiver's and each String
/// argument's bytes; a List/Array argument (`join:`, `withAll:` …) its elements and their
/// bytes.
pub(crate) fn input_units(r: &Value, a: &[Value]) -> usize {
    let one = |v: &Value| -> usize {
        match v {
            Value::Str(s) => s.len(),
            Value::Binary(b) => b.len(),
            Value::List(l) => elems_units(l.iter()),
            Value::Array(l) => elems_units(l.iter()),
            _ => 0,
        }
    };
    a.iter().map(one).fold(one(r), usize::saturating_add)
}

/// The units of a List/Array argument's elements: each one, plus a String's bytes.
fn elems_units<'a>(it: impl Iterator<Item = &'a Value>) -> usize {
    it.map(|e| match e {
        Value::Str(s) => s.len() + ELEM,
        _ => ELEM,
    })
    .fold(0usize, usize::saturating_add)
}
