//! [`Layered`]: a map of the checker's class table over a shared, frozen base.
//!
//! Every checker starts from the built-in library's table (`Checker::new`), and every
//! checked unit works on a copy of its checker's table (`Checker::check_files` adds the
//! unit's declarations to the copy). Copying ~110 classes with their method maps was a
//! visible part of a fresh `bt run` and of each checked `eval`, so the library's entries
//! sit in an `Arc`'d base that copies share, and a copy holds only what it adds or changes:
//! `get_mut` on a base entry copies that one entry into the own layer first; `remove`
//! hides a base entry.

/// The maps' hasher: foldhash (the library's ~110 classes and their names are hashed on every
/// type resolution of the class table's construction; SipHash was a fifth of it).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::sync::Arc;

/// A `String`-keyed map: own entries over a shared base (see the module doc).
pub struct Layered<V> {
    base: Option<Arc<HashMap<String, V>>>,
    own: HashMap<String, V>,
    /// Base keys removed here.
    removed: Vec<String>,
}

impl<V> Default for Layered<V> {
    fn default() -> Self {
        Layered {
            base: None,
            own: HashMap::default(),
            removed: Vec::new(),
        }
    }
}

impl<V: Clone> Clone for Layered<V> {
    fn clone(&self) -> Self {
        Layered {
            base: self.base.clone(),
            own: self.own.clone(),
            removed: self.removed.clone(),
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for Layered<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V> Layered<V> {
    fn base_get(&self, k: &str) -> Option<&V> {
        let v = self.base.as_ref()?.get(k)?;
        if !self.removed.is_empty() && self.removed.iter().any(|r| r == k) {
            return None;
        }
        Some(v)
    }

    pub fn get(&self, k: &str) -> Option<&V> {
        self.own.get(k).or_else(|| self.base_get(k))
    }

    pub fn contains_key(&self, k: &str) -> bool {
        self.own.contains_key(k) || self.base_get(k).is_some()
    }

    pub fn insert(&mut self, k: String, v: V) -> Option<V>
    where
        V: Clone,
    {
        let old = match self.own.remove(&k) {
            Some(o) => Some(o),
            None => self.base_get(&k).cloned(),
        };
        self.removed.retain(|r| *r != k);
        self.own.insert(k, v);
        old
    }

    pub fn remove(&mut self, k: &str) -> Option<V>
    where
        V: Clone,
    {
        let own = self.own.remove(k);
        let base = self.base_get(k).cloned();
        if base.is_some() {
            self.removed.push(k.to_string());
        }
        own.or(base)
    }

    /// The entry for `k`, copied into this map's own layer first when it is the base's.
    pub fn get_mut(&mut self, k: &str) -> Option<&mut V>
    where
        V: Clone,
    {
        if !self.own.contains_key(k) {
            let v = self.base_get(k)?.clone();
            self.own.insert(k.to_string(), v);
        }
        self.own.get_mut(k)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> + '_ {
        let base = self.base.iter().flat_map(|b| b.iter()).filter(|(k, _)| {
            !self.own.contains_key(k.as_str()) && !self.removed.iter().any(|r| r == *k)
        });
        self.own.iter().chain(base)
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

    /// Makes every entry part of a new shared base (copies of this map then share it).
    pub(crate) fn freeze(&mut self)
    where
        V: Clone,
    {
        let all: HashMap<String, V> = if self.base.is_none() {
            std::mem::take(&mut self.own) // nothing shared yet: no copy
        } else {
            self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        self.base = Some(Arc::new(all));
        self.own.clear();
        self.removed.clear();
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
}
