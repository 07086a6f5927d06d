//! Dropping values without recursing deeply on the native stack.
//!
//! A [`Value`] freed as the last reference to a container frees its elements, and those their
//! elements: the compiler's drop glue recurses once per level of nesting, so a List nested a
//! million levels deep (`x := #(x)` in a loop) or a long chain of Value instances overflowed
//! the stack when dropped. `Drop for Value` counts the levels of containers being freed on
//! this thread: past [`MAX_LEVELS`] a container is not freed where it is met but moved to a
//! list of deferred ones (leaving `nil` behind), which the outermost drop frees one at a time
//! after its own glue returns — each again at most [`MAX_LEVELS`] deep. The stack a drop
//! needs is bounded, and no drop looks at more than it frees: a List whose storage is shared
//! with another version (imbl's structural sharing) is dropped by the glue in the time it
//! takes to release its own nodes, not after a walk of every element.
//!
//! Everything else (immediates, Strings, shared containers) takes the inline test and
//! nothing more: the hot path stays one tag compare for immediates.

use std::cell::{Cell, RefCell};

use super::{unique_mut, Ref, Value};

/// Levels of containers freed inside one another before the rest is deferred. A level of
/// glue is a few frames (the value, its `Arc`, the collection and, for a List, its tree
/// nodes): well under 2 KB, so 32 levels stay far inside the smallest stack a drop runs on
/// (an actor's coroutine stack, the test threads' 256 KB).
const MAX_LEVELS: u32 = 32;

thread_local! {
    /// Containers being freed, outermost first, on this thread.
    static LEVEL: Cell<u32> = const { Cell::new(0) };
    /// Containers met past [`MAX_LEVELS`], freed by the outermost drop.
    static DEFERRED: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Value {
    #[inline(always)]
    fn drop(&mut self) {
        // Only the last reference to a container can free a nested one. That test is one
        // tag check and one count load; the rest is out of line, so the drop glue stays
        // small (an Integer's drop is a few instructions).
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
        Value::Array(r) => Ref::strong_count(r) == 1 && !r.is_compact(),
        Value::Object(r) => Ref::strong_count(r) == 1,
        Value::Dict(r) => Ref::strong_count(r) == 1,
        Value::Set(r) => Ref::strong_count(r) == 1,
        Value::Bag(r) => Ref::strong_count(r) == 1,
        _ => false,
    }
}

/// The rest of [`Drop for Value`] for a uniquely held container: freed here, one level
/// deeper, or deferred past [`MAX_LEVELS`] (see the module docs).
#[inline(never)]
fn drop_unique_container(v: &mut Value) {
    // An instance or a Tuple (a few slots) holding no container frees only leaves: its glue
    // goes one level down and stops, with no level to count.
    let leaves_only = match v {
        Value::Object(o) => !o.fields.iter().any(is_container),
        Value::Tuple(t) => !t.iter().any(is_container),
        _ => false,
    };
    if leaves_only {
        return;
    }
    let level = LEVEL.with(Cell::get);
    if level >= MAX_LEVELS {
        let mut c = Some(std::mem::replace(v, Value::Nil));
        // `try_with`: while the thread's locals are being destroyed the list may be gone;
        // then the container is freed here, one level deeper (only a value dropped by
        // another thread-local's destructor can meet that).
        let deferred = DEFERRED
            .try_with(|d| d.borrow_mut().push(c.take().expect("taken once")))
            .is_ok();
        match c {
            Some(c) if !deferred => *v = c,
            _ => return,
        }
    }
    LEVEL.with(|l| l.set(level + 1));
    // The elements are freed here, with this level counted: their drops see it. (The
    // emptied storage is freed by `v`'s glue after this returns.)
    free_elements(v);
    if level == 0 {
        // The outermost drop frees what was deferred, each one level down from here (and
        // may defer more, freed by this loop in turn).
        while let Some(c) = DEFERRED.try_with(|d| d.borrow_mut().pop()).ok().flatten() {
            drop(c);
        }
    }
    LEVEL.with(|l| l.set(level));
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

/// Takes the elements out of `v`'s uniquely held storage and frees them.
fn free_elements(v: &mut Value) {
    match v {
        Value::List(r) | Value::Queue(r) => {
            if let Some(l) = unique_mut(r) {
                drop(std::mem::take(l));
            }
        }
        Value::Tuple(r) => {
            if let Some(t) = unique_mut(r) {
                drop(std::mem::take(t));
            }
        }
        Value::Array(r) => {
            if let Some(a) = unique_mut(r) {
                drop(std::mem::take(a));
            }
        }
        Value::Object(r) => {
            if let Some(o) = unique_mut(r) {
                drop(std::mem::take(&mut o.fields));
            }
        }
        Value::Dict(r) => {
            if let Some(d) = unique_mut(r) {
                drop(std::mem::take(d));
            }
        }
        Value::Set(r) => {
            if let Some(s) = unique_mut(r) {
                drop(std::mem::take(s));
            }
        }
        Value::Bag(r) => {
            if let Some(b) = unique_mut(r) {
                drop(std::mem::take(b));
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

    /// Many deep chains side by side, and chains through Sets and instances' fields, each
    /// deferred part freed in turn on a small stack.
    #[test]
    fn wide_and_deep_values_drop_on_a_small_stack() {
        let t = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let chains = (0..40).map(|k| {
                    let mut x = Value::Int(k);
                    for i in 0..20_000 {
                        x = if i % 2 == 0 {
                            Value::list([x])
                        } else {
                            Value::tuple(vec![x, Value::Int(i)])
                        };
                    }
                    x
                });
                drop(Value::list(chains));
                let mut s = Value::Nil;
                for _ in 0..100_000 {
                    let mut set = imbl::OrdSet::new();
                    set.insert(crate::value::Key(s));
                    s = Value::Set(Ref::new(set));
                }
                drop(s);
                // Nothing is left deferred, and the level is back at the top.
                DEFERRED.with(|d| assert!(d.borrow().is_empty()));
                assert_eq!(LEVEL.with(Cell::get), 0);
            })
            .expect("thread");
        t.join()
            .expect("dropping wide and deep values must not overflow the stack");
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
