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
//!   vector of entries kept in insertion order, keyed by [`term_hash`] (Integers hash to
//!   themselves, so runs of nearby Integer keys touch nearby memory). While every key is an
//!   Integer that fits in 64 bits the entries are [`IntEntry`]s (an `i64` and a value, 24
//!   bytes; `Repr::Int`); the first other key turns the table into one of [`Entry`]s (key and
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
//! Files: this one is the API and the choice of representation (flat, tree, the shared
//! update paths, iteration); `hash_table.rs` the flat table over either entry type;
//! `chunked_vec.rs` the entry vector that grows without copying; `page_release.rs` gives an
//! outgrown index's pages back to the system (the one file with `unsafe`); `tests.rs` the
//! model check.

use std::mem::ManuallyDrop;
use std::ops::Deref;

use crate::value::order::term_hash;
use crate::value::{Key, Ref, Value};

mod chunked_vec;
mod hash_table;
mod page_release;
use hash_table::{same_key, Entry, Flat, IntEntry, Slot};

type Map = imbl::OrdMap<Key, Value>;

/// A shared update copies a flat table of at most this many entries instead of making a tree.
const SMALL: usize = 32;

/// A Dictionary's key/value table.
#[derive(Clone)]
pub struct Dict {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    /// Every key an `Int`.
    Int(Flat<IntEntry>),
    Flat(Flat<Entry>),
    Tree(Tree),
}

#[derive(Clone)]
struct Tree {
    map: Map,
    /// Updates in place since the tree was made (see the module doc).
    unique_updates: usize,
}

impl Default for Dict {
    fn default() -> Dict {
        Dict::new()
    }
}

/// A key handed out by a [`Dict`]'s iterators: it dereferences to the key's `Value` (an
/// Integer key is not stored as a `Value`, so it cannot always be a plain reference).
/// `k.clone()` answers the key's `Value`.
pub struct KeyRef<'a>(KeyInner<'a>);

enum KeyInner<'a> {
    Borrowed(&'a Value),
    /// Always a `Value::Int` (nothing to drop).
    Int(ManuallyDrop<Value>),
}

impl<'a> KeyRef<'a> {
    #[inline]
    fn borrowed(v: &'a Value) -> KeyRef<'a> {
        KeyRef(KeyInner::Borrowed(v))
    }

    #[inline]
    fn int(i: i64) -> KeyRef<'a> {
        KeyRef(KeyInner::Int(ManuallyDrop::new(Value::Int(i))))
    }

    /// The stored key `Value`, for as long as the dictionary (None for an Integer key of a
    /// table that stores its keys as `i64`s).
    #[inline]
    pub fn stored(&self) -> Option<&'a Value> {
        match self.0 {
            KeyInner::Borrowed(v) => Some(v),
            KeyInner::Int(_) => None,
        }
    }

    /// The key as an owned `Value`.
    #[inline]
    pub fn to_value(&self) -> Value {
        (**self).clone()
    }
}

impl Deref for KeyRef<'_> {
    type Target = Value;

    #[inline]
    fn deref(&self) -> &Value {
        match &self.0 {
            KeyInner::Borrowed(v) => v,
            KeyInner::Int(v) => v,
        }
    }
}

impl AsRef<Value> for KeyRef<'_> {
    fn as_ref(&self) -> &Value {
        self
    }
}

impl std::fmt::Debug for KeyRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Dict {
    pub fn new() -> Dict {
        Dict {
            repr: Repr::Int(Flat::with_capacity(0)),
        }
    }

    /// An empty dictionary with room for `n` entries, in the representation for Integer
    /// keys when `int_keys` (a `#{…}` literal sizes its table by its first key).
    pub fn with_capacity(n: usize, int_keys: bool) -> Dict {
        Dict {
            repr: if int_keys {
                Repr::Int(Flat::presized(n))
            } else {
                Repr::Flat(Flat::presized(n))
            },
        }
    }

    /// Moves every key and value out to `f` (the iterative drop of deep values,
    /// `value_drop.rs`); cached copies go too.
    pub(crate) fn drain_into(self, mut f: impl FnMut(Value)) {
        let map = match self.repr {
            Repr::Int(fl) => {
                for e in fl.entries.into_iter().flatten() {
                    f(e.value);
                }
                fl.tree.into_inner()
            }
            Repr::Flat(fl) => {
                for e in fl.entries.into_iter().flatten() {
                    f(e.key);
                    f(e.value);
                }
                fl.tree.into_inner()
            }
            Repr::Tree(t) => Some(t.map),
        };
        for (k, v) in map.into_iter().flatten() {
            f(k.0);
            f(v);
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Int(f) => f.live,
            Repr::Flat(f) => f.live,
            Repr::Tree(t) => t.map.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value stored under a key `=:=` to `k`.
    #[inline]
    pub fn get(&self, k: &Value) -> Option<&Value> {
        match &self.repr {
            Repr::Int(f) => match k {
                Value::Int(i) => f.value_at(f.find(*i as u64, |e| e.key == *i)?),
                // No other key is `=:=` to an Integer.
                _ => None,
            },
            Repr::Flat(f) => f.value_at(f.find(term_hash(k), |e| same_key(&e.key, k))?),
            Repr::Tree(t) => t.map.get(Key::from_ref(k)),
        }
    }

    pub fn contains_key(&self, k: &Value) -> bool {
        self.get(k).is_some()
    }

    /// Stores `v` under `k`, answering the value it replaces.
    #[inline]
    pub fn insert(&mut self, k: Value, v: Value) -> Option<Value> {
        match &mut self.repr {
            Repr::Int(f) => match k {
                Value::Int(i) => f.insert(i as u64, IntEntry { key: i, value: v }),
                k => {
                    self.widen();
                    self.insert(k, v)
                }
            },
            Repr::Flat(f) => f.insert(term_hash(&k), Entry { key: k, value: v }),
            Repr::Tree(t) => {
                let old = t.map.insert(Key(k), v);
                self.updated_in_place();
                old
            }
        }
    }

    /// Turns an Integer-keyed table into a general one (a key of another kind is coming).
    #[cold]
    fn widen(&mut self) {
        if let Repr::Int(f) = &mut self.repr {
            let f = std::mem::replace(f, Flat::with_capacity(0));
            self.repr = Repr::Flat(f.map_entries(|e| Entry {
                key: Value::Int(e.key),
                value: e.value,
            }));
        }
    }

    /// Removes `k`, answering its value.
    pub fn remove(&mut self, k: &Value) -> Option<Value> {
        match &mut self.repr {
            Repr::Int(f) => match k {
                Value::Int(i) => {
                    let h = *i as u64;
                    let ix = f.find(h, |e| e.key == *i)?;
                    f.remove_at(h, ix)
                }
                _ => None,
            },
            Repr::Flat(f) => {
                let h = term_hash(k);
                let ix = f.find(h, |e| same_key(&e.key, k))?;
                f.remove_at(h, ix)
            }
            Repr::Tree(t) => {
                let old = t.map.remove(Key::from_ref(k));
                if old.is_some() {
                    self.updated_in_place();
                }
                old
            }
        }
    }

    /// Counts an in-place update of a tree; enough of them pay for turning it flat again.
    fn updated_in_place(&mut self) {
        if let Repr::Tree(t) = &mut self.repr {
            t.unique_updates += 1;
            if t.unique_updates >= t.map.len() + SMALL {
                let d: Dict = t
                    .map
                    .iter()
                    .map(|(k, v)| (k.0.clone(), v.clone()))
                    .collect();
                *self = d;
            }
        }
    }

    /// A copy with `k` set to `v` (and the value it replaces), sharing what it can with
    /// `self`: see the module doc.
    fn with_insert(&self, k: Value, v: Value) -> (Dict, Option<Value>) {
        let mut map = match self.shared_base() {
            Ok(mut d) => {
                let old = d.insert(k, v);
                return (d, old);
            }
            Err(map) => map,
        };
        let old = map.insert(Key(k), v);
        let d = Dict {
            repr: Repr::Tree(Tree {
                map,
                unique_updates: 0,
            }),
        };
        (d, old)
    }

    /// What a shared update starts from: a copy of a small flat table, or else the entries as
    /// a tree (see the module doc).
    fn shared_base(&self) -> Result<Dict, Map> {
        match &self.repr {
            Repr::Int(f) if f.live <= SMALL => Ok(Dict {
                repr: Repr::Int(f.copy()),
            }),
            Repr::Flat(f) if f.live <= SMALL => Ok(Dict {
                repr: Repr::Flat(f.copy()),
            }),
            Repr::Int(f) => Err(f.tree().clone()),
            Repr::Flat(f) => Err(f.tree().clone()),
            Repr::Tree(t) => Err(t.map.clone()),
        }
    }

    /// Key/value pairs in term order of the keys.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.repr {
            Repr::Int(f) if f.sorted => IterRepr::Int(f.entries.iter()),
            Repr::Int(f) => IterRepr::IntOrdered(f.order().iter(), &f.entries),
            Repr::Flat(f) if f.sorted => IterRepr::Entries(f.entries.iter()),
            Repr::Flat(f) => IterRepr::Ordered(f.order().iter(), &f.entries),
            Repr::Tree(t) => IterRepr::Tree(t.map.iter()),
        })
    }

    /// Key/value pairs in an unspecified order (cheaper when the order does not matter).
    pub fn iter_unordered(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Int(f) => Iter(IterRepr::Int(f.entries.iter())),
            Repr::Flat(f) => Iter(IterRepr::Entries(f.entries.iter())),
            Repr::Tree(_) => self.iter(),
        }
    }

    /// Keys in term order.
    pub fn keys(&self) -> impl Iterator<Item = KeyRef<'_>> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Keys in term order as references to stored `Value`s, or None when the table stores
    /// its keys as `i64`s (every key then is an Integer).
    pub(crate) fn stored_keys(&self) -> Option<impl Iterator<Item = &Value> + '_> {
        match self.repr {
            Repr::Int(_) => None,
            _ => Some(self.keys().filter_map(|k| k.stored())),
        }
    }

    /// Values in term order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &Value> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// `self` with every entry of `other` added (`other`'s values win).
    pub fn merged(&self, other: &Dict) -> Dict {
        let mut d = self.clone();
        for (k, v) in other.iter_unordered() {
            d.insert(k.to_value(), v.clone());
        }
        d
    }

    /// Whether the flat (hash) representation is in use.
    #[cfg(test)]
    pub(crate) fn is_flat(&self) -> bool {
        matches!(self.repr, Repr::Flat(_) | Repr::Int(_))
    }

    /// Whether the Integer-keyed flat representation (24-byte entries) is in use.
    #[cfg(test)]
    fn is_int_keyed(&self) -> bool {
        matches!(self.repr, Repr::Int(_))
    }
}

/// An iterator over a [`Dict`]'s key/value pairs.
pub struct Iter<'a>(IterRepr<'a>);

type Entries<E> = chunked_vec::Chunks<Option<E>>;

enum IterRepr<'a> {
    Int(chunked_vec::Iter<'a, Option<IntEntry>>),
    IntOrdered(std::slice::Iter<'a, u32>, &'a Entries<IntEntry>),
    Entries(chunked_vec::Iter<'a, Option<Entry>>),
    Ordered(std::slice::Iter<'a, u32>, &'a Entries<Entry>),
    Tree(imbl::ordmap::Iter<'a, Key, Value>),
}

/// The next live entry of `entries` at the positions `it` yields.
#[inline]
fn next_ordered<'a, E: Slot>(
    it: &mut std::slice::Iter<'a, u32>,
    entries: &'a Entries<E>,
) -> Option<(KeyRef<'a>, &'a Value)> {
    for &i in it.by_ref() {
        if let Some(Some(e)) = entries.get(i as usize) {
            return Some((e.key(), e.value()));
        }
    }
    None
}

impl<'a> Iterator for Iter<'a> {
    type Item = (KeyRef<'a>, &'a Value);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Int(it) => it
                .find_map(Option::as_ref)
                .map(|e| (KeyRef::int(e.key), &e.value)),
            IterRepr::IntOrdered(it, entries) => next_ordered(it, entries),
            IterRepr::Entries(it) => it
                .find_map(Option::as_ref)
                .map(|e| (KeyRef::borrowed(&e.key), &e.value)),
            IterRepr::Ordered(it, entries) => next_ordered(it, entries),
            IterRepr::Tree(it) => it.next().map(|(k, v)| (KeyRef::borrowed(&k.0), v)),
        }
    }
}

impl FromIterator<(Value, Value)> for Dict {
    /// A repeated key keeps the last value.
    fn from_iter<I: IntoIterator<Item = (Value, Value)>>(it: I) -> Dict {
        let it = it.into_iter();
        let mut d = Dict {
            repr: Repr::Int(Flat::with_capacity(it.size_hint().0)),
        };
        for (k, v) in it {
            d.insert(k, v);
        }
        d
    }
}

/// `d at: k put: v` on a dictionary that may be shared: in place when `d` holds the only
/// reference, otherwise `d` becomes an updated copy (the other holders keep the old one) made
/// without copying a large table (see the module doc).
#[inline]
pub fn insert_shared(d: &mut Ref<Dict>, k: Value, v: Value) -> Option<Value> {
    if let Some(m) = crate::value::unique_mut(d) {
        return m.insert(k, v);
    }
    let (new, old) = d.with_insert(k, v);
    *d = Ref::new(new);
    old
}

/// `d removeKey: k` on a dictionary that may be shared (see [`insert_shared`]); a missing key
/// leaves `d` untouched.
pub fn remove_shared(d: &mut Ref<Dict>, k: &Value) -> Option<Value> {
    if let Some(m) = crate::value::unique_mut(d) {
        return m.remove(k);
    }
    if !d.contains_key(k) {
        return None;
    }
    let mut map = match d.shared_base() {
        Ok(mut m) => {
            let old = m.remove(k);
            *d = Ref::new(m);
            return old;
        }
        Err(map) => map,
    };
    let old = map.remove(Key::from_ref(k));
    *d = Ref::new(Dict {
        repr: Repr::Tree(Tree {
            map,
            unique_updates: 0,
        }),
    });
    old
}

#[cfg(test)]
mod tests;
