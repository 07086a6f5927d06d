//! The flat (hash) table behind a [`Table`](super::table::Table), generic over its entry type:
//! an index of `u32` slots (open addressing, CPython's perturbed probe sequence) over a chunked
//! vector of entries kept in insertion order (see the module doc of `dict/mod.rs`).
//!
//! Two entry types: [`Entry`] (any key: a key and a value, 32 bytes for `Value`s) and
//! [`IntEntry`] (an `i64` key and a value, 24 bytes), used while every key of the table is an
//! Integer that fits in 64 bits — the commonest Dictionary, and a quarter smaller per entry.

use std::cmp::Ordering;
use std::sync::OnceLock;

use super::chunked_vec::Chunks;
use super::table::{KeyRef, Map, Term};

/// An index slot never used.
const EMPTY: u32 = u32::MAX;
/// An index slot whose entry was removed (the probe sequence goes on past it).
const DUMMY: u32 = u32::MAX - 1;
/// The smallest index (a power of two).
pub(super) const MIN_INDEX: usize = 8;

/// What the table needs of an entry.
pub(super) trait Slot: Clone {
    /// What the table holds (keys and values).
    type V: Term;
    /// The key's [`Term::key_hash`].
    fn hash(&self) -> u64;
    /// Whether the two keys are equal ([`Term::key_eq`]).
    fn same(&self, other: &Self) -> bool;
    /// The order of the two keys ([`Term::key_cmp`]).
    fn cmp_keys(&self, other: &Self) -> Ordering;
    fn key(&self) -> KeyRef<'_, Self::V>;
    fn value(&self) -> &Self::V;
    fn value_mut(&mut self) -> &mut Self::V;
    fn into_pair(self) -> (Self::V, Self::V);
}

/// A key and its value. The hash is not stored (it is recomputed when the index is rebuilt:
/// Integers hash to themselves), so an entry of `Value`s is 32 bytes.
#[derive(Clone)]
pub(super) struct Entry<V> {
    pub(super) key: V,
    pub(super) value: V,
}

/// An Integer key (as its `i64`) and its value: 24 bytes for a `Value`.
#[derive(Clone)]
pub(super) struct IntEntry<V> {
    pub(super) key: i64,
    pub(super) value: V,
}

impl<V: Term> Slot for Entry<V> {
    type V = V;
    #[inline]
    fn hash(&self) -> u64 {
        self.key.key_hash()
    }
    #[inline]
    fn same(&self, other: &Self) -> bool {
        self.key.key_eq(&other.key)
    }
    #[inline]
    fn cmp_keys(&self, other: &Self) -> Ordering {
        self.key.key_cmp(&other.key)
    }
    #[inline]
    fn key(&self) -> KeyRef<'_, V> {
        KeyRef::borrowed(&self.key)
    }
    #[inline]
    fn value(&self) -> &V {
        &self.value
    }
    #[inline]
    fn value_mut(&mut self) -> &mut V {
        &mut self.value
    }
    fn into_pair(self) -> (V, V) {
        (self.key, self.value)
    }
}

impl<V: Term> Slot for IntEntry<V> {
    type V = V;
    #[inline]
    fn hash(&self) -> u64 {
        // The same as `key_hash` of the Integer.
        self.key as u64
    }
    #[inline]
    fn same(&self, other: &Self) -> bool {
        self.key == other.key
    }
    #[inline]
    fn cmp_keys(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
    #[inline]
    fn key(&self) -> KeyRef<'_, V> {
        KeyRef::int(self.key)
    }
    #[inline]
    fn value(&self) -> &V {
        &self.value
    }
    #[inline]
    fn value_mut(&mut self) -> &mut V {
        &mut self.value
    }
    fn into_pair(self) -> (V, V) {
        (V::from_int_key(self.key), self.value)
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
pub(super) fn index_len_for(n: usize) -> usize {
    (n.saturating_mul(2)).next_power_of_two().max(MIN_INDEX)
}

enum Probe {
    /// `entries[ix]` holds the key.
    Found { ix: usize },
    /// The key is absent; a new entry goes in `slot` (`fresh` when that slot was [`EMPTY`]).
    Vacant { slot: usize, fresh: bool },
}

#[derive(Clone)]
pub(super) struct Flat<E: Slot> {
    /// In insertion order; `None` is a removed entry (compacted away on the next rebuild).
    /// Invariant: empty, or the last element is `Some`.
    pub(super) entries: Chunks<Option<E>>,
    /// Positions in `entries`, [`EMPTY`] or [`DUMMY`]; a power of two long, or empty before
    /// the first insert.
    index: Vec<u32>,
    /// Live entries.
    pub(super) live: usize,
    /// Index slots not [`EMPTY`] (live entries and [`DUMMY`]s); at most 2/3 of the index.
    filled: usize,
    /// Whether the live entries are in ascending term order of their keys.
    pub(super) sorted: bool,
    /// When not `sorted`: positions of the live entries in term order of their keys.
    order: OnceLock<Box<[u32]>>,
    /// The same entries as a persistent tree, made by the first update while shared.
    pub(super) tree: OnceLock<Map<E::V>>,
}

impl<E: Slot> Flat<E> {
    pub(super) fn with_capacity(n: usize) -> Flat<E> {
        Flat {
            entries: Chunks::with_capacity(n),
            index: Vec::new(),
            live: 0,
            filled: 0,
            sorted: true,
            order: OnceLock::new(),
            tree: OnceLock::new(),
        }
    }

    /// A copy of the table without the caches (it is about to change).
    pub(super) fn copy(&self) -> Flat<E> {
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

    /// An empty table with room for `n` entries and its index already sized for them (a
    /// literal `#{…}` of `n` pairs fills it without a rebuild).
    pub(super) fn presized(n: usize) -> Flat<E> {
        let mut f = Flat::with_capacity(n);
        if n > 0 {
            f.index.resize(index_len_for(n), EMPTY);
        }
        f
    }

    /// The same table with every entry mapped by `f` (keys keep their hashes and order, so the
    /// index stays valid); the caches are dropped.
    pub(super) fn map_entries<F: Slot<V = E::V>>(self, mut f: impl FnMut(E) -> F) -> Flat<F> {
        let mut entries = Chunks::with_capacity(self.entries.len());
        for e in self.entries {
            entries.push(e.map(&mut f));
        }
        Flat {
            entries,
            index: self.index,
            live: self.live,
            filled: self.filled,
            sorted: self.sorted,
            order: OnceLock::new(),
            tree: OnceLock::new(),
        }
    }

    /// The position of the entry for which `is` answers true, among those of hash `h`.
    #[inline]
    pub(super) fn find(&self, h: u64, is: impl Fn(&E) -> bool) -> Option<usize> {
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
                        if is(e) {
                            return Some(ix as usize);
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn probe(&self, h: u64, k: &E) -> Probe {
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
                        if e.same(k) {
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
        // A fresh vector rather than a resize: the old index is freed first (its pages given
        // back at once), not copied.
        super::page_release::release(&mut self.index);
        self.index = Vec::new();
        self.index.resize(len, EMPTY);
        let mask = len - 1;
        for (j, e) in self.entries.iter().enumerate() {
            let Some(e) = e else { continue };
            let mut probes = Probes::new(e.hash(), mask);
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

    /// Stores the entry `e` (whose key has hash `h`), answering the value it replaces.
    #[inline]
    pub(super) fn insert(&mut self, h: u64, e: E) -> Option<E::V> {
        if self.index.is_empty() {
            self.rebuild(MIN_INDEX);
        }
        match self.probe(h, &e) {
            Probe::Found { ix } => {
                self.tree.take();
                let old = self.entries.get_mut(ix)?.as_mut()?;
                let (_, v) = e.into_pair();
                Some(std::mem::replace(old.value_mut(), v))
            }
            Probe::Vacant { slot, fresh } => {
                if self.sorted {
                    if let Some(Some(last)) = self.entries.last() {
                        if last.cmp_keys(&e) != Ordering::Less {
                            self.sorted = false;
                        }
                    }
                }
                self.changed();
                // Entries beyond u32 range would need hundreds of GiB.
                self.index[slot] = self.entries.len() as u32;
                self.entries.push(Some(e));
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

    /// Removes the entry at position `ix` (found under hash `h`), answering its value.
    pub(super) fn remove_at(&mut self, h: u64, ix: usize) -> Option<E::V> {
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
        Some(e.into_pair().1)
    }

    #[inline]
    pub(super) fn value_at(&self, ix: usize) -> Option<&E::V> {
        self.entries.get(ix)?.as_ref().map(Slot::value)
    }

    /// Positions of the live entries in term order of their keys.
    pub(super) fn order(&self) -> &[u32] {
        self.order.get_or_init(|| {
            let mut o: Vec<u32> = (0..self.entries.len() as u32)
                .filter(|&i| matches!(self.entries.get(i as usize), Some(Some(_))))
                .collect();
            let entry = |i: &u32| self.entries.get(*i as usize).and_then(Option::as_ref);
            o.sort_unstable_by(|a, b| match (entry(a), entry(b)) {
                (Some(x), Some(y)) => x.cmp_keys(y),
                _ => Ordering::Equal,
            });
            o.into_boxed_slice()
        })
    }

    /// The same entries as a persistent tree (made once, then shared).
    pub(super) fn tree(&self) -> &Map<E::V> {
        self.tree.get_or_init(|| {
            self.entries
                .iter()
                .flatten()
                .map(|e| (e.key().to_value().into_tree_key(), e.value().clone()))
                .collect()
        })
    }
}
