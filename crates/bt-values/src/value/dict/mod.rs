//! The storage behind `Value::Dict`: keys compared with `=:=` and visited
//! in the standard term order.
//!
//! Everything outside this module uses the API of [`Dict`] (lookups by `&Value`, ordered
//! iteration yielding [`KeyRef`] keys, in-place updates on `&mut Dict`) and
//! [`insert_shared`]/[`remove_shared`] for a dictionary that may be shared, so the
//! representation can change without touching callers.
//!
//! Representations:
//! * **Flat** (the usual one, `hash_table.rs`): a hash table in the style of CPython's compact
//!   dict: an index of `u32` slots (open addressing, CPython's perturbed probe sequence) over a
//!   vector of entries kept in insertion order, keyed by `term_hash` (Integers hash to
//!   themselves, so runs of nearby Integer keys touch nearby memory). While every key is an
//!   Integer that fits in 64 bits the entries are `IntEntry`s (an `i64` and a value, 24
//!   bytes; `Repr::Int`); the first other key turns the table into one of `Entry`s (key and
//!   value, 32 bytes; `Repr::Flat`) in place, keeping the index. The hash is not stored (it is
//!   recomputed on a rebuild, and a probe compares keys directly); entries sit in a chunked
//!   vector (`chunked_vec.rs`: growing never copies), and the index is rebuilt half full, so a
//!   million-entry Integer-keyed table is ~32 MB. Ordered iteration walks the entries
//!   directly while they were inserted in ascending term order (tracked on every insert),
//!   otherwise a permutation sorted by `term_cmp`, computed on first use and cached until the
//!   next change.
//! * **Tree**: the persistent `imbl::OrdMap`, for dictionaries updated while shared. A shared
//!   update must not copy the whole table each time (`inject:into:` accumulators, a dictionary
//!   kept in a List and updated): a small flat table is copied, a larger one is turned into a
//!   tree once (cached on the shared original, so updating the same original again is
//!   O(log n) too), and trees are updated by path copying. A tree that is then updated in place
//!   as many times as it has entries turns back into a flat table (amortised O(1)).
//!
//! The caches sit in `OnceLock`s: a shared `Dict` is read from several actors at once.
//!
//! Files: this one is the Dictionary of `Value`s ([`Dict`], the table instantiated for
//! `Value`) and the updates of a dictionary that may be shared; `table.rs` the API and the
//! choice of representation (flat, tree, the shared update paths, iteration), generic over a
//! [`Term`](table::Term) (keys and values, hashed and ordered) so that it does not name
//! `Value` — `Value`'s impl, by the standard term order, is in `order.rs`; `hash_table.rs`
//! the flat table over either entry type; `chunked_vec.rs` the entry vector that grows
//! without copying; `page_release.rs` gives an outgrown index's pages back to the system (the
//! one file with `unsafe`); `tests.rs` the model check.

use crate::value::{unique_mut, Ref, Value};

mod chunked_vec;
mod hash_table;
mod page_release;
pub mod table;

/// A Dictionary's key/value table: a [`table::Table`] of Values.
pub type Dict = table::Table<Value>;

/// A key handed out by a [`Dict`]'s iterators: it dereferences to the key's `Value` (an
/// Integer key is not stored as a `Value`, so it cannot always be a plain reference).
/// `k.clone()` answers the key's `Value`.
pub type KeyRef<'a> = table::KeyRef<'a, Value>;

/// An iterator over a [`Dict`]'s key/value pairs.
pub type Iter<'a> = table::Iter<'a, Value>;

/// `d at: k put: v` on a dictionary that may be shared: in place when `d` holds the only
/// reference, otherwise `d` becomes an updated copy (the other holders keep the old one) made
/// without copying a large table (see the module doc).
#[inline]
pub fn insert_shared(d: &mut Ref<Dict>, k: Value, v: Value) -> Option<Value> {
    if let Some(m) = unique_mut(d) {
        return m.insert(k, v);
    }
    let (new, old) = d.with_insert(k, v);
    *d = Ref::new(new);
    old
}

/// `d removeKey: k` on a dictionary that may be shared (see [`insert_shared`]); a missing key
/// leaves `d` untouched.
pub fn remove_shared(d: &mut Ref<Dict>, k: &Value) -> Option<Value> {
    if let Some(m) = unique_mut(d) {
        return m.remove(k);
    }
    if !d.contains_key(k) {
        return None;
    }
    let (new, old) = d.with_remove(k);
    *d = Ref::new(new);
    old
}
