//! The storage behind `Value::Dict`: keys compared with `=:=` and visited
//! in the standard term order (5.12).
//!
//! Everything outside this module uses the API of [`Dict`] (lookups by `&Value`, ordered
//! iteration, in-place updates on `&mut Dict`) and [`insert_shared`]/[`remove_shared`] for a
//! dictionary that may be shared, so the representation can change without touching callers.
//!
//! Two representations:
//! * **Flat** (the usual one): a hash table in the style of CPython's compact dict: an index of
//!   `u32` slots (open addressing, CPython's perturbed probe sequence) over a vector of entries
//!   kept in insertion order, keyed by [`term_hash`] (Integers hash to themselves, so runs of
//!   nearby Integer keys touch nearby memory). Entries are 32 bytes (key and value; the hash
//!   is recomputed on a rebuild, and a probe compares keys directly) in a chunked vector
//!   (`dict_chunks.rs`: growing never copies), and the index is rebuilt half full, so a
//!   million-entry table is ~40 MB at its peak. Ordered iteration walks the entries directly
//!   while they were inserted in ascending term order (tracked on every insert), otherwise a
//!   permutation sorted by `term_cmp`, computed on first use and cached until the next change.
//! * **Tree**: the persistent `imbl::OrdMap`, for dictionaries updated while shared. A shared
//!   update must not copy the whole table each time (`inject:into:` accumulators, a dictionary
//!   kept in a List and updated): a small flat table is copied, a larger one is turned into a
//!   tree once (cached on the shared original, so updating the same original again is
//!   O(log n) too), and trees are updated by path copying. A tree that is then updated in place
//!   as many times as it has entries turns back into a flat table (amortised O(1)).
//!
//! The caches sit in `OnceLock`s: a shared `Dict` is read from several actors at once.

use std::cmp::Ordering;
use std::sync::OnceLock;

use crate::value::order::{term_cmp, term_hash};
use crate::value::{Key, Ref, Value};

#[path = "dict_chunks.rs"]
mod chunks;
use chunks::Chunks;

type Map = imbl::OrdMap<Key, Value>;

/// An index slot never used.
const EMPTY: u32 = u32::MAX;
/// An index slot whose entry was removed (the probe sequence goes on past it).
const DUMMY: u32 = u32::MAX - 1;
/// The smallest index (a power of two).
const MIN_INDEX: usize = 8;
/// A shared update copies a flat table of at most this many entries instead of making a tree.
const SMALL: usize = 32;

/// A Dictionary's key/value table.
#[derive(Clone)]
pub struct Dict {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Flat(Flat),
    Tree(Tree),
}

/// A key and its value. The hash is not stored (it is recomputed when the index is rebuilt:
/// Integers hash to themselves), so an entry is 32 bytes.
#[derive(Clone)]
struct Entry {
    key: Value,
    value: Value,
}

#[derive(Clone, Default)]
struct Flat {
    /// In insertion order; `None` is a removed entry (compacted away on the next rebuild).
    /// Invariant: empty, or the last element is `Some`.
    entries: Chunks<Option<Entry>>,
    /// Positions in `entries`, [`EMPTY`] or [`DUMMY`]; a power of two long, or empty before
    /// the first insert.
    index: Vec<u32>,
    /// Live entries.
    live: usize,
    /// Index slots not [`EMPTY`] (live entries and [`DUMMY`]s); at most 2/3 of the index.
    filled: usize,
    /// Whether the live entries are in ascending term order of their keys.
    sorted: bool,
    /// When not `sorted`: positions of the live entries in term order of their keys.
    order: OnceLock<Box<[u32]>>,
    /// The same entries as a persistent tree, made by the first update while shared.
    tree: OnceLock<Map>,
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

/// Whether two keys are `=:=`.
#[inline]
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        _ => term_cmp(a, b) == Ordering::Equal,
    }
}

/// CPython's probe sequence for hash `h` in an index of `mask + 1` slots: starts at the low
/// bits, then mixes in 5 more high bits per step; once those run out it is a full-period walk
/// of the index (so a loop over it ends at the first [`EMPTY`] slot).
struct Probes {
    i: usize,
    perturb: u64,
    mask: usize,
}

impl Probes {
    #[inline]
    fn new(h: u64, mask: usize) -> Probes {
        Probes {
            i: h as usize & mask,
            perturb: h,
            mask,
        }
    }

    /// The next slot to look at.
    #[inline]
    fn next_slot(&mut self) -> usize {
        let i = self.i;
        self.perturb >>= 5;
        self.i = (i
            .wrapping_mul(5)
            .wrapping_add(1)
            .wrapping_add(self.perturb as usize))
            & self.mask;
        i
    }
}

/// An index length with room for `n` entries at most half full (it grows again at 2/3).
fn index_len_for(n: usize) -> usize {
    (n.saturating_mul(2)).next_power_of_two().max(MIN_INDEX)
}

enum Probe {
    /// `entries[ix]` holds the key.
    Found { ix: usize },
    /// The key is absent; a new entry goes in `slot` (`fresh` when that slot was [`EMPTY`]).
    Vacant { slot: usize, fresh: bool },
}

impl Flat {
    fn with_capacity(n: usize) -> Flat {
        Flat {
            entries: Chunks::with_capacity(n),
            sorted: true,
            ..Flat::default()
        }
    }

    /// A copy of the table without the caches (it is about to change).
    fn copy(&self) -> Flat {
        Flat {
            entries: self.entries.clone(),
            index: self.index.clone(),
            live: self.live,
            filled: self.filled,
            sorted: self.sorted,
            order: OnceLock::new(),
            tree: OnceLock::new(),
        }
    }

    #[inline]
    fn find(&self, h: u64, k: &Value) -> Option<usize> {
        if self.index.is_empty() {
            return None;
        }
        let mut probes = Probes::new(h, self.index.len() - 1);
        loop {
            let i = probes.next_slot();
            match self.index[i] {
                EMPTY => return None,
                DUMMY => {}
                ix => {
                    if let Some(Some(e)) = self.entries.get(ix as usize) {
                        if same_key(&e.key, k) {
                            return Some(ix as usize);
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn probe(&self, h: u64, k: &Value) -> Probe {
        let mut dummy = None;
        let mut probes = Probes::new(h, self.index.len() - 1);
        loop {
            let i = probes.next_slot();
            match self.index[i] {
                EMPTY => {
                    return match dummy {
                        Some(slot) => Probe::Vacant { slot, fresh: false },
                        None => Probe::Vacant {
                            slot: i,
                            fresh: true,
                        },
                    }
                }
                DUMMY => {
                    dummy.get_or_insert(i);
                }
                ix => {
                    if let Some(Some(e)) = self.entries.get(ix as usize) {
                        if same_key(&e.key, k) {
                            return Probe::Found { ix: ix as usize };
                        }
                    }
                }
            }
        }
    }

    /// The index slot that points at `entries[ix]` (whose key has hash `h`).
    fn slot_of(&self, h: u64, ix: usize) -> Option<usize> {
        let mut probes = Probes::new(h, self.index.len() - 1);
        loop {
            let i = probes.next_slot();
            match self.index[i] {
                EMPTY => return None,
                x if x as usize == ix => return Some(i),
                _ => {}
            }
        }
    }

    /// Drops removed entries and rebuilds the index at `len` slots.
    fn rebuild(&mut self, len: usize) {
        if self.live != self.entries.len() {
            self.entries.retain(Option::is_some);
        }
        self.index.clear();
        self.index.resize(len, EMPTY);
        let mask = len - 1;
        for (j, e) in self.entries.iter().enumerate() {
            let Some(e) = e else { continue };
            let mut probes = Probes::new(term_hash(&e.key), mask);
            let mut i = probes.next_slot();
            while self.index[i] != EMPTY {
                i = probes.next_slot();
            }
            self.index[i] = j as u32;
        }
        self.filled = self.live;
    }

    /// Drops the caches a change makes stale.
    #[inline]
    fn changed(&mut self) {
        if !self.sorted {
            self.order.take();
        }
        self.tree.take();
    }

    #[inline]
    fn insert(&mut self, k: Value, v: Value) -> Option<Value> {
        if self.index.is_empty() {
            self.rebuild(MIN_INDEX);
        }
        let h = term_hash(&k);
        match self.probe(h, &k) {
            Probe::Found { ix } => {
                self.tree.take();
                let e = self.entries.get_mut(ix)?.as_mut()?;
                Some(std::mem::replace(&mut e.value, v))
            }
            Probe::Vacant { slot, fresh } => {
                if self.sorted {
                    if let Some(Some(last)) = self.entries.last() {
                        if term_cmp(&last.key, &k) != Ordering::Less {
                            self.sorted = false;
                        }
                    }
                }
                self.changed();
                // Entries beyond u32 range would need hundreds of GiB.
                self.index[slot] = self.entries.len() as u32;
                self.entries.push(Some(Entry { key: k, value: v }));
                self.live += 1;
                if fresh {
                    self.filled += 1;
                    if self.filled * 3 >= self.index.len() * 2 {
                        self.rebuild(index_len_for(self.live));
                    }
                }
                None
            }
        }
    }

    fn remove(&mut self, k: &Value) -> Option<Value> {
        let h = term_hash(k);
        let ix = self.find(h, k)?;
        let slot = self.slot_of(h, ix)?;
        self.index[slot] = DUMMY;
        self.changed();
        let e = self.entries.get_mut(ix)?.take()?;
        self.live -= 1;
        // Keep the last element live (so `insert` can compare with it).
        while let Some(None) = self.entries.last() {
            self.entries.pop();
        }
        if self.live == 0 {
            *self = Flat::with_capacity(0);
        } else if self.entries.len() > 2 * self.live + MIN_INDEX {
            self.rebuild(index_len_for(self.live));
        }
        Some(e.value)
    }

    fn get(&self, k: &Value) -> Option<&Value> {
        let ix = self.find(term_hash(k), k)?;
        self.entries.get(ix)?.as_ref().map(|e| &e.value)
    }

    /// Positions of the live entries in term order of their keys.
    fn order(&self) -> &[u32] {
        self.order.get_or_init(|| {
            let mut o: Vec<u32> = (0..self.entries.len() as u32)
                .filter(|&i| matches!(self.entries.get(i as usize), Some(Some(_))))
                .collect();
            let key = |i: &u32| {
                self.entries
                    .get(*i as usize)
                    .and_then(Option::as_ref)
                    .map(|e| &e.key)
            };
            o.sort_unstable_by(|a, b| match (key(a), key(b)) {
                (Some(x), Some(y)) => term_cmp(x, y),
                _ => Ordering::Equal,
            });
            o.into_boxed_slice()
        })
    }

    /// The same entries as a persistent tree (made once, then shared).
    fn tree(&self) -> &Map {
        self.tree.get_or_init(|| {
            self.entries
                .iter()
                .flatten()
                .map(|e| (Key(e.key.clone()), e.value.clone()))
                .collect()
        })
    }
}

impl Dict {
    pub fn new() -> Dict {
        Dict {
            repr: Repr::Flat(Flat::with_capacity(0)),
        }
    }

    /// Moves every key and value out to `f` (the iterative drop of deep values,
    /// `value_drop.rs`); cached copies go too.
    pub fn drain_into(self, mut f: impl FnMut(Value)) {
        let map = match self.repr {
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
            Repr::Flat(f) => f.get(k),
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
            Repr::Flat(f) => f.insert(k, v),
            Repr::Tree(t) => {
                let old = t.map.insert(Key(k), v);
                self.updated_in_place();
                old
            }
        }
    }

    /// Removes `k`, answering its value.
    pub fn remove(&mut self, k: &Value) -> Option<Value> {
        match &mut self.repr {
            Repr::Flat(f) => f.remove(k),
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
                let mut f = Flat::with_capacity(t.map.len());
                for (k, v) in t.map.iter() {
                    f.insert(k.0.clone(), v.clone());
                }
                self.repr = Repr::Flat(f);
            }
        }
    }

    /// A copy with `k` set to `v` (and the value it replaces), sharing what it can with
    /// `self`: see the module doc.
    fn with_insert(&self, k: Value, v: Value) -> (Dict, Option<Value>) {
        let mut map = match &self.repr {
            Repr::Flat(f) if f.live <= SMALL => {
                let mut d = Dict {
                    repr: Repr::Flat(f.copy()),
                };
                let old = d.insert(k, v);
                return (d, old);
            }
            Repr::Flat(f) => f.tree().clone(),
            Repr::Tree(t) => t.map.clone(),
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

    /// Key/value pairs in term order of the keys.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.repr {
            Repr::Flat(f) if f.sorted => IterRepr::Entries(f.entries.iter()),
            Repr::Flat(f) => IterRepr::Ordered(f.order().iter(), &f.entries),
            Repr::Tree(t) => IterRepr::Tree(t.map.iter()),
        })
    }

    /// Key/value pairs in an unspecified order (cheaper when the order does not matter).
    pub fn iter_unordered(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Flat(f) => Iter(IterRepr::Entries(f.entries.iter())),
            Repr::Tree(_) => self.iter(),
        }
    }

    /// Keys in term order.
    pub fn keys(&self) -> impl Iterator<Item = &Value> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Values in term order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &Value> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// `self` with every entry of `other` added (`other`'s values win).
    pub fn merged(&self, other: &Dict) -> Dict {
        let mut d = self.clone();
        for (k, v) in other.iter_unordered() {
            d.insert(k.clone(), v.clone());
        }
        d
    }

    /// Whether the flat (hash) representation is in use (for tests and measurements).
    pub fn is_flat(&self) -> bool {
        matches!(self.repr, Repr::Flat(_))
    }
}

/// An iterator over a [`Dict`]'s key/value pairs.
pub struct Iter<'a>(IterRepr<'a>);

enum IterRepr<'a> {
    Entries(chunks::Iter<'a, Option<Entry>>),
    Ordered(std::slice::Iter<'a, u32>, &'a Chunks<Option<Entry>>),
    Tree(imbl::ordmap::Iter<'a, Key, Value>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Value, &'a Value);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Entries(it) => it.find_map(Option::as_ref).map(|e| (&e.key, &e.value)),
            IterRepr::Ordered(it, entries) => {
                for &i in it.by_ref() {
                    if let Some(Some(e)) = entries.get(i as usize) {
                        return Some((&e.key, &e.value));
                    }
                }
                None
            }
            IterRepr::Tree(it) => it.next().map(|(k, v)| (&k.0, v)),
        }
    }
}

impl FromIterator<(Value, Value)> for Dict {
    /// A repeated key keeps the last value.
    fn from_iter<I: IntoIterator<Item = (Value, Value)>>(it: I) -> Dict {
        let it = it.into_iter();
        let mut f = Flat::with_capacity(it.size_hint().0);
        for (k, v) in it {
            f.insert(k, v);
        }
        Dict {
            repr: Repr::Flat(f),
        }
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
    let mut map = match &d.repr {
        Repr::Flat(f) if f.live <= SMALL => {
            let mut m = Dict {
                repr: Repr::Flat(f.copy()),
            };
            let old = m.remove(k);
            *d = Ref::new(m);
            return old;
        }
        Repr::Flat(f) => f.tree().clone(),
        Repr::Tree(t) => t.map.clone(),
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
#[path = "dict_tests.rs"]
mod tests;
