//! Standard term order (LANGUAGE.md 5.12) and the equalities `=:=` / `==`.
//! (Skeleton — the collections owner fills it in.)

use std::cmp::Ordering;

use crate::interp::value::Value;

pub fn term_cmp(_a: &Value, _b: &Value) -> Ordering {
    Ordering::Equal
}
