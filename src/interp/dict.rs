//! The storage behind `Value::Dict` (LANGUAGE.md 9.8): keys compared with `=:=` and visited
//! in the standard term order (5.12).
//!
//! Everything outside this module uses the API below (lookups by `&Value`, ordered iteration,
//! in-place updates on `&mut Dict`, and [`insert_shared`]/[`remove_shared`] for a dictionary
//! that may be shared), so the representation can change without touching the callers.

use crate::interp::value::{Key, Ref, Value};

type Map = imbl::OrdMap<Key, Value>;

/// A Dictionary's key/value table.
#[derive(Clone, Default)]
pub struct Dict {
    map: Map,
}

impl Dict {
    pub fn new() -> Dict {
        Dict::default()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The value stored under a key `=:=` to `k`.
    #[inline]
    pub fn get(&self, k: &Value) -> Option<&Value> {
        self.map.get(Key::from_ref(k))
    }

    pub fn contains_key(&self, k: &Value) -> bool {
        self.get(k).is_some()
    }

    /// Stores `v` under `k`, answering the value it replaces.
    #[inline]
    pub fn insert(&mut self, k: Value, v: Value) -> Option<Value> {
        self.map.insert(Key(k), v)
    }

    /// Removes `k`, answering its value.
    pub fn remove(&mut self, k: &Value) -> Option<Value> {
        self.map.remove(Key::from_ref(k))
    }

    /// Key/value pairs in term order of the keys.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &Value)> + '_ {
        self.map.iter().map(|(k, v)| (&k.0, v))
    }

    /// Keys in term order.
    pub fn keys(&self) -> impl Iterator<Item = &Value> + '_ {
        self.map.keys().map(|k| &k.0)
    }

    /// Values in term order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &Value> + '_ {
        self.map.values()
    }

    /// `self` with every entry of `other` added (`other`'s values win).
    pub fn merged(&self, other: &Dict) -> Dict {
        Dict {
            map: other.map.clone().union(self.map.clone()),
        }
    }
}

impl FromIterator<(Value, Value)> for Dict {
    /// A repeated key keeps the last value.
    fn from_iter<I: IntoIterator<Item = (Value, Value)>>(it: I) -> Dict {
        let mut d = Dict::new();
        for (k, v) in it {
            d.insert(k, v);
        }
        d
    }
}

/// `d at: k put: v` on a dictionary that may be shared: in place when `d` holds the only
/// reference, otherwise `d` becomes an updated copy (the other holders keep the old one).
#[inline]
pub fn insert_shared(d: &mut Ref<Dict>, k: Value, v: Value) -> Option<Value> {
    Ref::make_mut(d).insert(k, v)
}

/// `d removeKey: k` on a dictionary that may be shared (see [`insert_shared`]); a missing key
/// leaves `d` untouched.
pub fn remove_shared(d: &mut Ref<Dict>, k: &Value) -> Option<Value> {
    if !d.contains_key(k) {
        return None;
    }
    Ref::make_mut(d).remove(k)
}
