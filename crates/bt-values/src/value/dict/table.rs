//! The Dictionary's table and its three representations (Integer-keyed flat, flat, tree),
//! generic over what it holds: a [`Term`], a type with a hash and a total order (the module
//! docs of `dict/mod.rs` describe the representations). `Dict` is this table of `Value`s;
//! `Value`'s [`Term`] impl, by the standard term order, is in `order.rs`. Nothing here names
//! `Value`, so the type that holds a `Dict` and the `Dict` do not name each other; each use is
//! monomorphised for `Value`, with no indirection.

use std::cmp::Ordering;
use std::mem::ManuallyDrop;
use std::ops::Deref;

use super::chunked_vec;
use super::hash_table::{Entry, Flat, IntEntry, Slot};

/// What a [`Table`] needs of its keys and values (one type for both): an Integer view, a hash
/// and equality consistent with a total order, and the wrapper the persistent tree orders.
pub trait Term: Clone {
    /// The same value as a key of the persistent tree (`Ord` by the same total order).
    type Key: Ord + Clone;
    /// The key as an Integer, when it is one that fits in 64 bits (such keys are stored as
    /// their `i64`, and no other key is equal to one).
    fn int_key(&self) -> Option<i64>;
    /// The Integer key `i` as a value (it owns nothing).
    fn from_int_key(i: i64) -> Self;
    /// A hash consistent with [`Term::key_eq`]; an Integer key hashes to itself.
    fn key_hash(&self) -> u64;
    /// Whether the two keys are equal (the order's `Equal`).
    fn key_eq(&self, other: &Self) -> bool;
    /// The total order of keys (the order a table iterates in).
    fn key_cmp(&self, other: &Self) -> Ordering;
    fn into_tree_key(self) -> Self::Key;
    fn as_tree_key(&self) -> &Self::Key;
    fn from_tree_key(k: Self::Key) -> Self;
    fn from_tree_key_ref(k: &Self::Key) -> &Self;
}

/// The persistent tree a shared update makes.
pub(super) type Map<V> = imbl::OrdMap<<V as Term>::Key, V>;

/// A shared update copies a flat table of at most this many entries instead of making a tree.
const SMALL: usize = 32;

/// A Dictionary's key/value table (`Dict`, for Values; see the module docs).
#[derive(Clone)]
pub struct Table<V: Term> {
    repr: Repr<V>,
}

#[derive(Clone)]
enum Repr<V: Term> {
    /// Every key an `Int`.
    Int(Flat<IntEntry<V>>),
    Flat(Flat<Entry<V>>),
    Tree(Tree<V>),
}

#[derive(Clone)]
struct Tree<V: Term> {
    map: Map<V>,
    /// Updates in place since the tree was made (see the module doc).
    unique_updates: usize,
}

impl<V: Term> Default for Table<V> {
    fn default() -> Table<V> {
        Table::new()
    }
}

/// A key handed out by a [`Table`]'s iterators: it dereferences to the key's value (an
/// Integer key is not stored as a value, so it cannot always be a plain reference).
/// `k.clone()` answers the key's value.
pub struct KeyRef<'a, V: Term>(KeyInner<'a, V>);

enum KeyInner<'a, V> {
    Borrowed(&'a V),
    /// Always an Integer ([`Term::from_int_key`]: nothing to drop).
    Int(ManuallyDrop<V>),
}

impl<'a, V: Term> KeyRef<'a, V> {
    #[inline]
    pub(super) fn borrowed(v: &'a V) -> KeyRef<'a, V> {
        KeyRef(KeyInner::Borrowed(v))
    }

    #[inline]
    pub(super) fn int(i: i64) -> KeyRef<'a, V> {
        KeyRef(KeyInner::Int(ManuallyDrop::new(V::from_int_key(i))))
    }

    /// The stored key, for as long as the dictionary (None for an Integer key of a table that
    /// stores its keys as `i64`s).
    #[inline]
    pub fn stored(&self) -> Option<&'a V> {
        match self.0 {
            KeyInner::Borrowed(v) => Some(v),
            KeyInner::Int(_) => None,
        }
    }

    /// The key as an owned value.
    #[inline]
    pub fn to_value(&self) -> V {
        (**self).clone()
    }
}

impl<V: Term> Deref for KeyRef<'_, V> {
    type Target = V;

    #[inline]
    fn deref(&self) -> &V {
        match &self.0 {
            KeyInner::Borrowed(v) => v,
            KeyInner::Int(v) => v,
        }
    }
}

impl<V: Term> AsRef<V> for KeyRef<'_, V> {
    fn as_ref(&self) -> &V {
        self
    }
}

impl<V: Term + std::fmt::Debug> std::fmt::Debug for KeyRef<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<V: Term> Table<V> {
    pub fn new() -> Table<V> {
        Table {
            repr: Repr::Int(Flat::with_capacity(0)),
        }
    }

    /// An empty dictionary with room for `n` entries, in the representation for Integer
    /// keys when `int_keys` (a `#{…}` literal sizes its table by its first key).
    pub fn with_capacity(n: usize, int_keys: bool) -> Table<V> {
        Table {
            repr: if int_keys {
                Repr::Int(Flat::presized(n))
            } else {
                Repr::Flat(Flat::presized(n))
            },
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
    pub fn get(&self, k: &V) -> Option<&V> {
        match &self.repr {
            Repr::Int(f) => match k.int_key() {
                Some(i) => f.value_at(f.find(i as u64, |e| e.key == i)?),
                // No other key is `=:=` to an Integer.
                None => None,
            },
            Repr::Flat(f) => f.value_at(f.find(k.key_hash(), |e| e.key.key_eq(k))?),
            Repr::Tree(t) => t.map.get(k.as_tree_key()),
        }
    }

    pub fn contains_key(&self, k: &V) -> bool {
        self.get(k).is_some()
    }

    /// Stores `v` under `k`, answering the value it replaces. Always inlined: `d at: k put: v`
    /// on an unshared dictionary is this call, and a generic function is instantiated in the
    /// caller's crate, where the inliner left it out of line (16 instructions more per update).
    #[inline(always)]
    pub fn insert(&mut self, k: V, v: V) -> Option<V> {
        match &mut self.repr {
            Repr::Int(f) => match k.int_key() {
                Some(i) => f.insert(i as u64, IntEntry { key: i, value: v }),
                None => {
                    self.widen();
                    self.insert(k, v)
                }
            },
            Repr::Flat(f) => f.insert(k.key_hash(), Entry { key: k, value: v }),
            Repr::Tree(t) => {
                let old = t.map.insert(k.into_tree_key(), v);
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
                key: V::from_int_key(e.key),
                value: e.value,
            }));
        }
    }

    /// Removes `k`, answering its value.
    pub fn remove(&mut self, k: &V) -> Option<V> {
        match &mut self.repr {
            Repr::Int(f) => match k.int_key() {
                Some(i) => {
                    let h = i as u64;
                    let ix = f.find(h, |e| e.key == i)?;
                    f.remove_at(h, ix)
                }
                None => None,
            },
            Repr::Flat(f) => {
                let h = k.key_hash();
                let ix = f.find(h, |e| e.key.key_eq(k))?;
                f.remove_at(h, ix)
            }
            Repr::Tree(t) => {
                let old = t.map.remove(k.as_tree_key());
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
                let d: Table<V> = t
                    .map
                    .iter()
                    .map(|(k, v)| (V::from_tree_key_ref(k).clone(), v.clone()))
                    .collect();
                *self = d;
            }
        }
    }

    /// A copy with `k` set to `v` (and the value it replaces), sharing what it can with
    /// `self`: see the module doc.
    pub(super) fn with_insert(&self, k: V, v: V) -> (Table<V>, Option<V>) {
        let mut map = match self.shared_base() {
            Ok(mut d) => {
                let old = d.insert(k, v);
                return (d, old);
            }
            Err(map) => map,
        };
        let old = map.insert(k.into_tree_key(), v);
        let d = Table {
            repr: Repr::Tree(Tree {
                map,
                unique_updates: 0,
            }),
        };
        (d, old)
    }

    /// What a shared update starts from: a copy of a small flat table, or else the entries as
    /// a tree (see the module doc).
    fn shared_base(&self) -> Result<Table<V>, Map<V>> {
        match &self.repr {
            Repr::Int(f) if f.live <= SMALL => Ok(Table {
                repr: Repr::Int(f.copy()),
            }),
            Repr::Flat(f) if f.live <= SMALL => Ok(Table {
                repr: Repr::Flat(f.copy()),
            }),
            Repr::Int(f) => Err(f.tree().clone()),
            Repr::Flat(f) => Err(f.tree().clone()),
            Repr::Tree(t) => Err(t.map.clone()),
        }
    }

    /// A copy without `k` (and its value), sharing what it can with `self`, like
    /// [`Table::with_insert`].
    pub(super) fn with_remove(&self, k: &V) -> (Table<V>, Option<V>) {
        let mut map = match self.shared_base() {
            Ok(mut m) => {
                let old = m.remove(k);
                return (m, old);
            }
            Err(map) => map,
        };
        let old = map.remove(k.as_tree_key());
        let d = Table {
            repr: Repr::Tree(Tree {
                map,
                unique_updates: 0,
            }),
        };
        (d, old)
    }

    /// Key/value pairs in term order of the keys.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter(match &self.repr {
            Repr::Int(f) if f.sorted => IterRepr::Int(f.entries.iter()),
            Repr::Int(f) => IterRepr::IntOrdered(f.order().iter(), &f.entries),
            Repr::Flat(f) if f.sorted => IterRepr::Entries(f.entries.iter()),
            Repr::Flat(f) => IterRepr::Ordered(f.order().iter(), &f.entries),
            Repr::Tree(t) => IterRepr::Tree(t.map.iter()),
        })
    }

    /// Key/value pairs in an unspecified order (cheaper when the order does not matter).
    pub fn iter_unordered(&self) -> Iter<'_, V> {
        match &self.repr {
            Repr::Int(f) => Iter(IterRepr::Int(f.entries.iter())),
            Repr::Flat(f) => Iter(IterRepr::Entries(f.entries.iter())),
            Repr::Tree(_) => self.iter(),
        }
    }

    /// Keys in term order.
    pub fn keys(&self) -> impl Iterator<Item = KeyRef<'_, V>> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Keys in term order as references to stored values, or None when the table stores
    /// its keys as `i64`s (every key then is an Integer).
    pub(crate) fn stored_keys(&self) -> Option<impl Iterator<Item = &V> + '_> {
        match self.repr {
            Repr::Int(_) => None,
            _ => Some(self.keys().filter_map(|k| k.stored())),
        }
    }

    /// Values in term order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// `self` with every entry of `other` added (`other`'s values win).
    pub fn merged(&self, other: &Table<V>) -> Table<V> {
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
    pub(crate) fn is_int_keyed(&self) -> bool {
        matches!(self.repr, Repr::Int(_))
    }
}

/// An iterator over a [`Table`]'s key/value pairs.
pub struct Iter<'a, V: Term>(IterRepr<'a, V>);

type Entries<E> = chunked_vec::Chunks<Option<E>>;

enum IterRepr<'a, V: Term> {
    Int(chunked_vec::Iter<'a, Option<IntEntry<V>>>),
    IntOrdered(std::slice::Iter<'a, u32>, &'a Entries<IntEntry<V>>),
    Entries(chunked_vec::Iter<'a, Option<Entry<V>>>),
    Ordered(std::slice::Iter<'a, u32>, &'a Entries<Entry<V>>),
    Tree(imbl::ordmap::Iter<'a, V::Key, V>),
}

/// The next live entry of `entries` at the positions `it` yields.
#[inline]
fn next_ordered<'a, E: Slot>(
    it: &mut std::slice::Iter<'a, u32>,
    entries: &'a Entries<E>,
) -> Option<(KeyRef<'a, E::V>, &'a E::V)> {
    for &i in it.by_ref() {
        if let Some(Some(e)) = entries.get(i as usize) {
            return Some((e.key(), e.value()));
        }
    }
    None
}

impl<'a, V: Term> Iterator for Iter<'a, V> {
    type Item = (KeyRef<'a, V>, &'a V);

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
            IterRepr::Tree(it) => it
                .next()
                .map(|(k, v)| (KeyRef::borrowed(V::from_tree_key_ref(k)), v)),
        }
    }
}

impl<V: Term> FromIterator<(V, V)> for Table<V> {
    /// A repeated key keeps the last value.
    fn from_iter<I: IntoIterator<Item = (V, V)>>(it: I) -> Table<V> {
        let it = it.into_iter();
        let mut d = Table {
            repr: Repr::Int(Flat::with_capacity(it.size_hint().0)),
        };
        for (k, v) in it {
            d.insert(k, v);
        }
        d
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
