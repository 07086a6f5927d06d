//! Unit tests of the Dictionary storage: a model check against an ordered map, the shared
//! update paths (copy, tree, cached tree, back to flat) and the key view of a value.
// The model map is keyed by `Key`: its interior mutability is a `Dict`'s caches (ordered view,
// tree copy), which never change how a key compares.
#![allow(clippy::mutable_key_type)]

use super::*;
use crate::value::dict::{insert_shared, remove_shared, Dict};
use crate::value::order::strict_eq;
use crate::value::order::term_cmp;
use crate::value::{Key, Ref, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

fn int(i: i64) -> Value {
    Value::Int(i)
}

/// A deterministic pseudo-random sequence (no dependency on a crate).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// A key of one of several kinds, from a small number.
fn key_of(n: u64) -> Value {
    let i = (n / 6) as i64;
    match n % 6 {
        0 => int(i - 50),
        1 => Value::float(i as f64 / 2.0),
        2 => Value::str(format!("s{i}")),
        3 => Value::sym(&format!("y{i}")),
        4 => Value::tuple(vec![int(i % 3), Value::str(format!("{i}"))]),
        _ => int(i * 1_000_003),
    }
}

fn assert_matches(d: &Dict, model: &BTreeMap<Key, i64>) {
    assert_eq!(d.len(), model.len());
    let got: Vec<(Value, Value)> = d.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), model.len());
    for ((k, v), (mk, mv)) in got.iter().zip(model.iter()) {
        assert!(strict_eq(k, &mk.0), "order: {k:?} vs {:?}", mk.0);
        assert_eq!(v.as_int(), Some(*mv));
    }
    for (mk, mv) in model.iter() {
        assert_eq!(d.get(&mk.0).and_then(Value::as_int), Some(*mv));
    }
}

#[test]
fn flat_table_agrees_with_an_ordered_map() {
    let mut rng = Lcg(7);
    let mut d = Dict::new();
    let mut model = BTreeMap::new();
    for step in 0..20_000i64 {
        let k = key_of(rng.next() % 600);
        if rng.next().is_multiple_of(4) {
            assert_eq!(
                d.remove(&k).and_then(|v| v.as_int()),
                model.remove(&Key(k.clone()))
            );
        } else {
            assert_eq!(
                d.insert(k.clone(), int(step)).and_then(|v| v.as_int()),
                model.insert(Key(k), step)
            );
        }
        if step % 997 == 0 {
            assert_matches(&d, &model);
        }
    }
    assert!(d.is_flat());
    assert_matches(&d, &model);
    for k in model.keys() {
        assert!(d.remove(&k.0).is_some());
    }
    assert!(d.is_empty());
    assert_eq!(d.iter().count(), 0);
    assert!(d.get(&int(1)).is_none());
}

#[test]
fn ascending_inserts_stay_sorted_and_removals_keep_order() {
    let mut d: Dict = (0..1000).map(|i| (int(i * 7), int(i))).collect();
    assert!(matches!(&d.repr, Repr::Int(f) if f.sorted));
    for i in (0..1000).step_by(3) {
        assert_eq!(d.remove(&int(i * 7)).and_then(|v| v.as_int()), Some(i));
    }
    assert!(matches!(&d.repr, Repr::Int(f) if f.sorted));
    let keys: Vec<i64> = d.keys().filter_map(|k| k.as_int()).collect();
    let want: Vec<i64> = (0..1000).filter(|i| i % 3 != 0).map(|i| i * 7).collect();
    assert_eq!(keys, want);
    d.insert(int(-1), int(0));
    assert_eq!(d.keys().next().and_then(|k| k.as_int()), Some(-1));
    assert_eq!(d.keys().last().and_then(|k| k.as_int()), Some(998 * 7));
}

#[test]
fn colliding_integer_patterns_still_work() {
    // Multiples of a large power of two all share their low bits.
    let mut d = Dict::new();
    for i in 0..5000i64 {
        d.insert(int(i << 20), int(i));
        d.insert(int(-(i << 32)), int(-i));
    }
    assert_eq!(d.len(), 9999);
    for i in 0..5000i64 {
        assert_eq!(d.get(&int(i << 20)).and_then(Value::as_int), Some(i));
        assert_eq!(d.get(&int(-(i << 32))).and_then(Value::as_int), Some(-i));
    }
}

#[test]
fn shared_updates_leave_the_original_and_do_not_copy_large_tables() {
    let base: Dict = (0..1000).map(|i| (int(i), int(i))).collect();
    let base = Ref::new(base);
    // A small shared table is copied, and stays flat.
    let mut small = Ref::new((0..4).map(|i| (int(i), int(i))).collect::<Dict>());
    let keep = small.clone();
    insert_shared(&mut small, int(10), int(10));
    assert!(small.is_flat());
    assert_eq!(keep.len(), 4);
    assert_eq!(small.len(), 5);
    // A large shared one becomes a tree; the original keeps its entries and caches the tree.
    let mut a = base.clone();
    assert_eq!(
        insert_shared(&mut a, int(5), int(-5)).and_then(|v| v.as_int()),
        Some(5)
    );
    assert!(!a.is_flat());
    assert_eq!(a.get(&int(5)).and_then(Value::as_int), Some(-5));
    assert_eq!(base.get(&int(5)).and_then(Value::as_int), Some(5));
    let Repr::Int(f) = &base.repr else {
        panic!("the original stays flat (Integer-keyed)")
    };
    assert!(f.tree.get().is_some());
    // Shared updates of the tree share structure; each version stays intact.
    let mut versions = vec![a.clone()];
    for i in 0..100 {
        insert_shared(&mut a, int(2000 + i), int(i));
        versions.push(a.clone());
    }
    for (n, v) in versions.iter().enumerate() {
        assert_eq!(v.len(), 1000 + n);
    }
    let mut b = base.clone();
    assert_eq!(
        remove_shared(&mut b, &int(3)).and_then(|v| v.as_int()),
        Some(3)
    );
    assert!(remove_shared(&mut b, &int(-3)).is_none());
    assert_eq!(b.len(), 999);
    assert_eq!(base.len(), 1000);
    // Updated in place often enough, the tree turns flat again, with the same entries.
    drop(versions);
    let before: Vec<(Value, Value)> = a.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for i in 0..(a.len() as i64 + 40) {
        insert_shared(&mut a, int(i % 10), int(i % 10));
    }
    assert!(a.is_flat());
    assert_eq!(a.len(), before.len());
    let after: Vec<Value> = a.keys().map(|k| k.to_value()).collect();
    for ((k, _), k2) in before.iter().zip(after) {
        assert!(strict_eq(k, &k2));
    }
}

#[test]
fn unordered_inserts_iterate_in_term_order() {
    let keys = [
        Value::str("b"),
        int(3),
        Value::sym("z"),
        Value::float(2.5),
        Value::tuple(vec![int(1)]),
        int(-7),
        Value::str("a"),
        Value::Nil,
        Value::ch('a'),
    ];
    let d: Dict = keys.iter().map(|k| (k.clone(), Value::Nil)).collect();
    let mut want: Vec<Key> = keys.iter().cloned().map(Key).collect();
    want.sort();
    let got: Vec<Value> = d.keys().map(|k| k.to_value()).collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!(strict_eq(g, &w.0));
    }
}

#[test]
fn a_value_seen_as_a_key_is_the_same_value() {
    let v = Value::str("k");
    let k = Key::from_ref(&v);
    assert!(std::ptr::eq(&k.0, &v));
    assert_eq!(k.0.as_str(), Some("k"));
}

#[test]
fn an_integer_keyed_table_widens_in_place() {
    let mut d = Dict::new();
    for i in 0..100 {
        d.insert(int(i * 3), int(i));
    }
    for i in 0..50 {
        d.remove(&int(i * 6));
    }
    assert!(d.is_int_keyed());
    // No other key is `=:=` to an Integer.
    assert!(d.get(&Value::float(3.0)).is_none());
    assert!(d.remove(&Value::float(3.0)).is_none());
    d.insert(Value::float(3.0), int(-1));
    assert!(!d.is_int_keyed() && d.is_flat());
    assert_eq!(d.len(), 51);
    assert_eq!(d.get(&int(3)).and_then(Value::as_int), Some(1));
    assert_eq!(d.get(&Value::float(3.0)).and_then(Value::as_int), Some(-1));
    assert!(d.get(&int(6)).is_none());
    let keys: Vec<Value> = d.keys().map(|k| k.to_value()).collect();
    assert_eq!(keys.len(), 51);
    for w in keys.windows(2) {
        assert_eq!(term_cmp(&w[0], &w[1]), Ordering::Less);
    }
    // Keys handed out by an Integer-keyed table are the Integers themselves.
    let e: Dict = (0..5).map(|i| (int(i), int(i * i))).collect();
    assert!(e.is_int_keyed());
    let got: Vec<(i64, i64)> = e
        .iter()
        .filter_map(|(k, v)| Some((k.as_int()?, v.as_int()?)))
        .collect();
    assert_eq!(got, vec![(0, 0), (1, 1), (2, 4), (3, 9), (4, 16)]);
    assert!(e.iter().all(|(k, _)| k.stored().is_none()));
}

#[test]
fn a_table_that_outgrows_large_indexes_keeps_every_entry() {
    // Past 2^16 index slots each outgrown index has its pages given back (`page_release.rs`)
    // before it is freed; the table must not notice.
    let n = 200_000i64;
    let mut d = Dict::new();
    for i in 0..n {
        d.insert(int(i * 7), int(i));
    }
    assert_eq!(d.len(), n as usize);
    assert!((0..n).all(|i| d.get(&int(i * 7)).and_then(Value::as_int) == Some(i)));
    let mut g = Dict::new();
    for i in 0..n {
        g.insert(Value::str(format!("k{i}")), int(i));
    }
    assert!((0..n)
        .step_by(97)
        .all(|i| g.get(&Value::str(format!("k{i}"))).and_then(Value::as_int) == Some(i)));
}
