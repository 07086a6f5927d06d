//! Dropping values without recursing on the native stack.
//!
//! A [`Value`] freed as the last reference to a container frees its elements, and those their
//! elements: the compiler's drop glue recurses once per level of nesting, so a List nested a
//! million levels deep (`x := #(x)` in a loop) or a long chain of Value instances overflowed
//! the stack when dropped. `Drop for Value` here catches the one case that can nest: a
//! container we hold the only reference to whose elements include containers we also hold
//! the only reference to. It moves those elements out into a worklist (leaving `nil` or an
//! emptied collection behind) and frees them one at a time, each after its own such
//! elements were moved out, so the glue never goes more than one level down.
//!
//! Everything else (immediates, Strings, shared containers, containers of leaves) takes the
//! inline test and the ordinary glue: the hot path stays one tag compare for immediates.

use super::{unique_mut, Ref, Value};

impl Drop for Value {
    #[inline(always)]
    fn drop(&mut self) {
        // Only the last reference to a container can free a nested one. That test is one
        // tag check and one count load; the walk of the elements is out of line, so the drop
        // glue stays small (no stack frame for the walk: an Integer's drop is a few
        // instructions, not the 26 of a glue with the walk inlined).
        if is_unique_container(self) {
            drop_unique_container(self);
        }
    }
}

/// Whether `v` is a container holding the only reference to its storage.
#[inline(always)]
fn is_unique_container(v: &Value) -> bool {
    match v {
        Value::List(r) | Value::Queue(r) => Ref::strong_count(r) == 1,
        Value::Tuple(r) => Ref::strong_count(r) == 1,
        Value::Array(r) => Ref::strong_count(r) == 1,
        Value::Object(r) => Ref::strong_count(r) == 1,
        Value::Dict(r) => Ref::strong_count(r) == 1,
        Value::Set(r) => Ref::strong_count(r) == 1,
        Value::Bag(r) => Ref::strong_count(r) == 1,
        _ => false,
    }
}

/// The rest of [`Drop for Value`] for a uniquely held container: the deep walk when an
/// element is itself a uniquely held container.
#[inline(never)]
fn drop_unique_container(v: &mut Value) {
    if needs_deep_drop(v) {
        drop_deep(v);
    }
}

/// Whether `v` is a container that nothing else references (freeing `v` frees its elements).
#[inline(always)]
fn is_deep_child(v: &Value) -> bool {
    match v {
        Value::List(r) | Value::Queue(r) => Ref::strong_count(r) == 1,
        Value::Tuple(r) => Ref::strong_count(r) == 1,
        Value::Array(r) => Ref::strong_count(r) == 1 && !r.is_compact(),
        // An instance whose fields hold no container frees only leaves: the glue goes one
        // level down and stops, so it need not go through the worklist (a List of a million
        // Points is then freed by the glue, without moving every Point into the worklist).
        Value::Object(r) => Ref::strong_count(r) == 1 && r.fields.iter().any(is_container),
        Value::Dict(r) => Ref::strong_count(r) == 1,
        Value::Set(r) => Ref::strong_count(r) == 1,
        Value::Bag(r) => Ref::strong_count(r) == 1,
        _ => false,
    }
}

/// Whether `v` is a container (shared or not): an element whose drop may go further down.
#[inline(always)]
fn is_container(v: &Value) -> bool {
    matches!(
        v,
        Value::List(_)
            | Value::Queue(_)
            | Value::Tuple(_)
            | Value::Array(_)
            | Value::Object(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::Bag(_)
    )
}

/// Whether freeing `v` would free a container holding another container it alone holds.
#[inline(always)]
fn needs_deep_drop(v: &Value) -> bool {
    match v {
        Value::List(r) | Value::Queue(r) => {
            Ref::strong_count(r) == 1 && !r.is_empty() && r.iter().any(is_deep_child)
        }
        Value::Tuple(r) => Ref::strong_count(r) == 1 && r.iter().any(is_deep_child),
        Value::Array(r) => {
            Ref::strong_count(r) == 1 && !r.is_compact() && r.iter().any(is_deep_child)
        }
        Value::Object(r) => Ref::strong_count(r) == 1 && r.fields.iter().any(is_deep_child),
        Value::Dict(r) => {
            Ref::strong_count(r) == 1
                && !r.is_empty()
                && r.iter_unordered()
                    .any(|(k, e)| is_deep_child(&k) || is_deep_child(e))
        }
        Value::Set(r) => Ref::strong_count(r) == 1 && r.iter().any(|k| is_deep_child(&k.0)),
        Value::Bag(r) => Ref::strong_count(r) == 1 && r.keys().any(|k| is_deep_child(&k.0)),
        _ => false,
    }
}

/// Frees `v`'s nested containers iteratively (see the module docs).
#[cold]
#[inline(never)]
fn drop_deep(v: &mut Value) {
    let mut work: Vec<Value> = Vec::new();
    take_children(v, &mut work);
    while let Some(mut c) = work.pop() {
        take_children(&mut c, &mut work);
        // `c` drops here with no uniquely held containers left inside: one level of glue.
    }
}

/// Moves the uniquely held containers among `v`'s elements into `work` (only when `v`'s own
/// storage is uniquely held; otherwise nothing is freed with `v`).
fn take_children(v: &mut Value, work: &mut Vec<Value>) {
    let keep = |c: Value, work: &mut Vec<Value>| {
        if is_deep_child(&c) {
            work.push(c);
        }
    };
    match v {
        Value::List(r) | Value::Queue(r) => {
            if let Some(l) = unique_mut(r) {
                for c in std::mem::take(l) {
                    keep(c, work);
                }
            }
        }
        Value::Tuple(r) => {
            if let Some(t) = unique_mut(r) {
                for c in t.iter_mut().filter(|c| is_deep_child(c)) {
                    work.push(std::mem::replace(c, Value::Nil));
                }
            }
        }
        Value::Array(r) => {
            if let Some(a) = unique_mut(r) {
                if !a.is_compact() {
                    for c in a.wide_mut().iter_mut().filter(|c| is_deep_child(c)) {
                        work.push(std::mem::replace(c, Value::Nil));
                    }
                }
            }
        }
        Value::Object(r) => {
            if let Some(o) = unique_mut(r) {
                for c in o.fields.iter_mut().filter(|c| is_deep_child(c)) {
                    work.push(std::mem::replace(c, Value::Nil));
                }
            }
        }
        Value::Dict(r) => {
            if let Some(d) = unique_mut(r) {
                std::mem::take(d).drain_into(|c| keep(c, work));
            }
        }
        Value::Set(r) => {
            if let Some(s) = unique_mut(r) {
                for k in std::mem::take(s) {
                    keep(k.0, work);
                }
            }
        }
        Value::Bag(r) => {
            if let Some(b) = unique_mut(r) {
                for (k, _) in std::mem::take(b) {
                    keep(k.0, work);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Ref;

    /// Builds a List nested `n` levels on the heap and drops it on a thread with a small stack.
    #[test]
    fn deep_lists_tuples_and_arrays_drop_on_a_small_stack() {
        let t = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let mut x = Value::list([]);
                for i in 0..300_000 {
                    x = match i % 3 {
                        0 => Value::list([x, Value::Int(i)]),
                        1 => Value::tuple(vec![Value::str("a"), x]),
                        _ => Value::array([x]),
                    };
                }
                drop(x);
                let mut d = Value::Dict(Ref::new(crate::value::dict::Dict::new()));
                for _ in 0..100_000 {
                    let mut m = crate::value::dict::Dict::new();
                    m.insert(Value::Int(1), d);
                    d = Value::Dict(Ref::new(m));
                }
                drop(d);
            })
            .expect("thread");
        t.join()
            .expect("dropping deep values must not overflow the stack");
    }

    #[test]
    fn shared_parts_survive_a_deep_drop() {
        let inner = Value::list([Value::list([Value::Int(7)])]);
        let outer = Value::list([inner.clone(), Value::list([inner.clone()])]);
        drop(outer);
        match &inner {
            Value::List(l) => assert_eq!(l.len(), 1),
            _ => unreachable!(),
        }
        assert!(crate::value::order::strict_eq(
            &inner,
            &Value::list([Value::list([Value::Int(7)])])
        ));
    }
}
