//! [`Layered`]: a map of the checker's class table over shared, frozen layers.
//!
//! Every checker starts from the built-in library's table (`Checker::new`), and every
//! checked unit works on a copy of its checker's table (`Checker::check_files` adds the
//! unit's declarations to the copy). Copying the classes with their method maps was a
//! visible part of a fresh `bt run` and of each checked `eval`, so the entries sit in
//! `Arc`'d frozen layers that copies share, and a copy holds only what it adds or changes:
//! `get_mut` on a frozen entry copies that one entry into the own layer first; `remove`
//! leaves a tombstone that hides the frozen entries below it.
//!
//! `freeze` (after the library, and after each unit a checker remembers) pushes the own
//! layer as a new frozen layer and merges the newest layers while a layer is at least half
//! the size of the one below it, like a log-structured merge: there are at most about
//! log₂(entries) layers, each entry is copied O(log entries) times over a checker's life,
//! and a copy of the table costs the number of layers, not the number of classes — an
//! engine that has loaded thousands of classes checks each `eval` as cheaply as a new one.

/// The maps' hasher: foldhash (the library's ~110 classes and their names are hashed on every
/// type resolution of the class table's construction; SipHash was a fifth of it).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::sync::Arc;

/// One layer: an entry, or `None` for a key removed at this layer (a tombstone).
type Layer<V> = HashMap<String, Option<V>>;

/// The entries below every layer, made on first read (the built-in library's: its classes
/// are taken in when the checker first asks for them, `classtable::LibraryBase`).
pub trait Base<V>: Sync {
    /// The entry for `k`, made now if it is not yet.
    fn get(&self, k: &str) -> Option<&'static V>;
    /// Whether there is an entry for `k`, without making it.
    fn has(&self, k: &str) -> bool;
    /// Every entry (all made now).
    fn all(&self) -> Vec<(&'static String, &'static V)>;
}

/// A `String`-keyed map: own entries over shared frozen layers over an optional base that
/// makes its entries on first read (see the module doc).
pub struct Layered<V: 'static> {
    /// Oldest first; an entry or tombstone in a newer layer hides the older ones.
    frozen: Vec<Arc<Layer<V>>>,
    own: Layer<V>,
    base: Option<&'static dyn Base<V>>,
}

impl<V> Default for Layered<V> {
    fn default() -> Self {
        Layered {
            frozen: Vec::new(),
            own: HashMap::default(),
            base: None,
        }
    }
}

impl<V: Clone> Clone for Layered<V> {
    fn clone(&self) -> Self {
        Layered {
            frozen: self.frozen.clone(),
            own: self.own.clone(),
            base: self.base,
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for Layered<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V> Layered<V> {
    /// An empty map over `base`.
    pub fn over(base: &'static dyn Base<V>) -> Layered<V> {
        Layered {
            base: Some(base),
            ..Layered::default()
        }
    }

    /// The newest slot for `k`: `Some(Some(v))` an entry, `Some(None)` a tombstone.
    fn slot(&self, k: &str) -> Option<&Option<V>> {
        if let Some(s) = self.own.get(k) {
            return Some(s);
        }
        self.frozen.iter().rev().find_map(|l| l.get(k))
    }

    pub fn get(&self, k: &str) -> Option<&V> {
        match self.slot(k) {
            Some(s) => s.as_ref(),
            None => self.base?.get(k),
        }
    }

    /// Whether there is an entry for `k` (the base's is not made for the answer).
    pub fn contains_key(&self, k: &str) -> bool {
        match self.slot(k) {
            Some(s) => s.is_some(),
            None => self.base.is_some_and(|b| b.has(k)),
        }
    }

    fn base_has(&self, k: &str) -> bool {
        self.base.is_some_and(|b| b.has(k))
    }

    pub fn insert(&mut self, k: String, v: V) -> Option<V>
    where
        V: Clone,
    {
        let old = match self.own.remove(&k) {
            Some(o) => o,
            None => self.get(&k).cloned(),
        };
        self.own.insert(k, Some(v));
        old
    }

    pub fn remove(&mut self, k: &str) -> Option<V>
    where
        V: Clone,
    {
        let old = match self.own.remove(k) {
            Some(o) => o,
            None => self.get(k).cloned(),
        };
        if self.frozen.iter().any(|l| l.contains_key(k)) || self.base_has(k) {
            self.own.insert(k.to_string(), None);
        }
        old
    }

    /// Takes `k`'s entry out of this map's own layer, leaving no tombstone: what was below it
    /// (a frozen layer, the base) answers for `k` after. For an owner whose base has been
    /// given the same entry.
    pub(crate) fn take_own(&mut self, k: &str) -> Option<V> {
        self.own.remove(k).flatten()
    }

    /// The entry for `k`, copied into this map's own layer first when it is a frozen one.
    pub fn get_mut(&mut self, k: &str) -> Option<&mut V>
    where
        V: Clone,
    {
        if !self.own.contains_key(k) {
            let v = self.get(k)?.clone();
            self.own.insert(k.to_string(), Some(v));
        }
        self.own.get_mut(k)?.as_mut()
    }

    /// Every live entry once (the newest one for its key), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> + '_ {
        let mut seen: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            Default::default();
        let mut out = Vec::new();
        for layer in std::iter::once(&self.own).chain(self.frozen.iter().rev().map(|l| &**l)) {
            for (k, slot) in layer {
                if seen.insert(k.as_str()) {
                    if let Some(v) = slot {
                        out.push((k, v));
                    }
                }
            }
        }
        if let Some(b) = self.base {
            for (k, v) in b.all() {
                if seen.insert(k.as_str()) {
                    out.push((k, v));
                }
            }
        }
        out.into_iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// How many layers a copy shares (for tests of the merge policy).
    #[cfg(test)]
    pub(crate) fn frozen_layers(&self) -> usize {
        self.frozen.len()
    }

    /// How many entries (and tombstones) a copy of this map clones.
    #[cfg(test)]
    pub(crate) fn own_len(&self) -> usize {
        self.own.len()
    }

    /// Makes the own entries a new shared layer (copies of this map then share it), merging
    /// the newest layers while one is at least half the size of the one below it.
    pub(crate) fn freeze(&mut self)
    where
        V: Clone,
    {
        if self.own.is_empty() {
            return;
        }
        self.frozen.push(Arc::new(std::mem::take(&mut self.own)));
        while let [.., below, top] = &self.frozen[..] {
            if top.len() * 2 < below.len() {
                break;
            }
            let top = Arc::unwrap_or_clone(self.frozen.pop().expect("two layers"));
            let mut merged = Arc::unwrap_or_clone(self.frozen.pop().expect("two layers"));
            let bottom = self.frozen.is_empty();
            for (k, slot) in top {
                match slot {
                    None if bottom && !self.base_has(&k) => {
                        merged.remove(&k);
                    }
                    slot => {
                        merged.insert(k, slot);
                    }
                }
            }
            self.frozen.push(Arc::new(merged));
        }
    }
}

impl<V> std::ops::Index<&String> for Layered<V> {
    type Output = V;

    /// The entry for `k` (panics when there is none, like `HashMap`'s index).
    fn index(&self, k: &String) -> &V {
        match self.get(k) {
            Some(v) => v,
            None => panic!("no entry {k:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Layered;

    #[test]
    fn copies_share_the_base_and_keep_their_changes() {
        let mut a: Layered<Vec<u32>> = Layered::default();
        a.insert("x".into(), vec![1]);
        a.insert("y".into(), vec![2]);
        a.freeze();
        let mut b = a.clone();
        b.get_mut("x").unwrap().push(9);
        assert_eq!(b.remove("y"), Some(vec![2]));
        b.insert("z".into(), vec![3]);
        assert_eq!(a.get("x"), Some(&vec![1]));
        assert_eq!(a.get("y"), Some(&vec![2]));
        assert!(!a.contains_key("z"));
        assert_eq!(b.get("x"), Some(&vec![1, 9]));
        assert!(!b.contains_key("y"));
        let mut keys: Vec<&String> = b.keys().collect();
        keys.sort();
        assert_eq!(keys, ["x", "z"]);
        b.insert("y".into(), vec![4]);
        assert_eq!(b.get("y"), Some(&vec![4]));
        assert_eq!(b.len(), 3);
    }

    #[test]
    fn removals_and_changes_survive_freezing_and_merging() {
        let mut a: Layered<u32> = Layered::default();
        for i in 0..100 {
            a.insert(format!("k{i}"), i);
        }
        a.freeze();
        a.remove("k1");
        *a.get_mut("k2").unwrap() = 200;
        a.insert("new".into(), 7);
        let copy = a.clone();
        a.freeze();
        for i in 0..300 {
            a.insert(format!("m{i}"), i);
            a.freeze();
        }
        assert_eq!(a.get("k1"), None);
        assert_eq!(a.get("k2"), Some(&200));
        assert_eq!(a.get("k3"), Some(&3));
        assert_eq!(a.get("new"), Some(&7));
        assert_eq!(a.get("m299"), Some(&299));
        assert_eq!(a.len(), 100 - 1 + 1 + 300);
        assert_eq!(a.iter().filter(|(k, _)| k.as_str() == "k2").count(), 1);
        // The copy made before is unaffected by the merges.
        assert_eq!(copy.get("k2"), Some(&200));
        assert_eq!(copy.get("m0"), None);
        assert_eq!(copy.len(), 100);
    }

    #[test]
    fn a_table_that_grows_one_entry_at_a_time_keeps_few_layers() {
        let mut a: Layered<u32> = Layered::default();
        for i in 0..110 {
            a.insert(format!("lib{i}"), i);
        }
        a.freeze();
        for i in 0..5000 {
            a.insert(format!("user{i}"), i);
            a.freeze();
            assert_eq!(a.own_len(), 0);
            assert!(a.frozen_layers() <= 14, "{} layers", a.frozen_layers());
        }
        assert_eq!(a.len(), 5110);
    }
}
