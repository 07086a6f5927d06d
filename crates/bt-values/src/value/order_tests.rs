//! Unit tests of the standard term order and the equalities.

use super::*;
use crate::value::class::{Builtin, Class, ClassKind};
use crate::value::{ClassRef, Instance, Key, Sym};
use num_bigint::BigInt;
use std::cmp::Ordering::{Equal, Greater, Less};

fn int(i: i64) -> Value {
    Value::Int(i)
}
fn big(s: &str) -> Value {
    Value::from_bigint(s.parse::<BigInt>().unwrap())
}
fn list(v: Vec<Value>) -> Value {
    Value::list(v)
}
fn dict(pairs: Vec<(Value, Value)>) -> Value {
    Value::Dict(Ref::new(pairs.into_iter().collect()))
}
fn set(v: Vec<Value>) -> Value {
    Value::Set(Ref::new(v.into_iter().map(Key).collect()))
}

pub(crate) fn class(name: &str, kind: ClassKind, fields: &[&str]) -> ClassRef {
    // A class as the values layer knows it: data only (no interpreter part).
    Ref::new(Class::from_parts(
        Sym::new(name),
        None,
        kind,
        fields.iter().map(|f| Sym::new(f)).collect(),
        false,
        false,
        Builtin::None,
        Box::new(()),
    ))
}

fn inst(c: &ClassRef, fields: Vec<Value>) -> Value {
    Value::Object(Ref::new(Instance {
        class: c.clone(),
        fields: fields.into(),
    }))
}

/// Asserts that `vs` is strictly increasing in term order, and that the order is antisymmetric.
fn assert_increasing(vs: &[Value]) {
    for (i, a) in vs.iter().enumerate() {
        for (j, b) in vs.iter().enumerate() {
            let expected = i.cmp(&j);
            assert_eq!(
                term_cmp(a, b),
                expected,
                "term_cmp({a:?}, {b:?}) (#{i} vs #{j})"
            );
            assert_eq!(strict_eq(a, b), i == j, "strict_eq({a:?}, {b:?})");
        }
    }
}

#[test]
fn ranks_in_order() {
    let c = class("Point", ClassKind::Value, &["x", "y"]);
    assert_increasing(&[
        int(-5),
        Value::ch('a'),
        Value::float(1e300),
        Value::sym("a"),
        Value::Nil,
        Value::Class(c.clone()),
        Value::tuple(vec![]),
        dict(vec![]),
        inst(&c, vec![int(1), int(2)]),
        list(vec![]),
        Value::array(vec![]),
        Value::str(""),
        Value::Binary(Ref::new(vec![])),
    ]);
}

#[test]
fn numbers_by_value_then_integer_character_float() {
    assert_increasing(&[
        big("-100000000000000000000"),
        Value::float(-1e19),
        int(i64::MIN),
        int(-1),
        Value::float(-0.5),
        int(0),
        Value::float(0.5),
        int(1),
        Value::float(1.0),
        Value::float(1.5),
        int(97),
        Value::ch('a'),
        Value::float(97.0),
        Value::ch('b'),
        int(i64::MAX),
        Value::float(9_223_372_036_854_775_808.0),
        big("9223372036854775809"),
        Value::float(1e19),
        big("100000000000000000000"),
    ]);
}

#[test]
fn bigint_against_float_is_exact() {
    // 2^63 + 1 is not representable as a double; it is above 2^63.0.
    let b = big("9223372036854775809");
    assert_eq!(
        term_cmp(&b, &Value::float(9_223_372_036_854_775_808.0)),
        Greater
    );
    let b = big("9223372036854775808"); // 2^63 exactly
    assert_eq!(
        num_cmp(&b, &Value::float(9_223_372_036_854_775_808.0)),
        Equal
    );
    assert_eq!(
        term_cmp(&b, &Value::float(9_223_372_036_854_775_808.0)),
        Less
    );
    // i64 near 2^53 against a float that rounds
    let i = int((1 << 53) + 1);
    assert_eq!(term_cmp(&i, &Value::float((1u64 << 53) as f64)), Greater);
    assert_eq!(term_cmp(&int(3), &Value::float(2.999_999)), Greater);
    assert_eq!(term_cmp(&int(-3), &Value::float(-2.5)), Less);
}

#[test]
fn atoms_by_name_symbol_first() {
    assert_increasing(&[
        Value::sym("a"),
        Value::sym("false"),
        Value::False,
        Value::sym("nil"),
        Value::Nil,
        Value::sym("true"),
        Value::True,
        Value::sym("zz"),
    ]);
}

#[test]
fn classes_by_name_meta_after() {
    let foo = class("Foo", ClassKind::Object, &[]);
    let bar = class("Bar", ClassKind::Object, &[]);
    assert_increasing(&[
        Value::Class(bar.clone()),
        Value::Meta(bar),
        Value::Class(foo.clone()),
        Value::Meta(foo),
    ]);
}

#[test]
fn tuples_by_size_then_elements() {
    assert_increasing(&[
        Value::tuple(vec![int(9)]),
        Value::tuple(vec![int(1), int(1)]),
        Value::tuple(vec![int(1), int(2)]),
        Value::tuple(vec![int(2), int(0)]),
        Value::tuple(vec![int(0), int(0), int(0)]),
    ]);
}

#[test]
fn dictionaries_by_size_keys_values() {
    assert_increasing(&[
        dict(vec![]),
        dict(vec![(int(5), int(0))]),
        dict(vec![(int(1), int(1)), (int(2), int(9))]),
        dict(vec![(int(1), int(2)), (int(2), int(0))]),
        dict(vec![(int(1), int(2)), (int(3), int(0))]),
    ]);
}

#[test]
fn value_instances_by_class_then_fields_by_name() {
    // fields declared y, x: compared x first
    let p = class("Point", ClassKind::Value, &["y", "x"]);
    let a = class("Apple", ClassKind::Value, &[]);
    assert_increasing(&[
        inst(&a, vec![]),
        inst(&p, vec![int(9), int(1)]),
        inst(&p, vec![int(1), int(2)]),
        inst(&p, vec![int(2), int(2)]),
        set(vec![]),
        set(vec![int(1)]),
        set(vec![int(0), int(1)]),
    ]);
    assert!(strict_eq(
        &inst(&p, vec![int(1), list(vec![])]),
        &inst(&p, vec![int(1), list(vec![])])
    ));
}

#[test]
fn object_instances_by_identity() {
    let c = class("Thing", ClassKind::Object, &[]);
    let a = inst(&c, vec![]);
    let b = inst(&c, vec![]);
    assert!(strict_eq(&a, &a.clone()));
    assert!(!strict_eq(&a, &b));
    assert!(!loose_eq(&a, &b));
    assert_ne!(term_cmp(&a, &b), Equal);
    assert_eq!(term_cmp(&a, &b), term_cmp(&b, &a).reverse());
}

#[test]
fn lists_and_arrays_prefix_first() {
    assert_increasing(&[
        list(vec![]),
        list(vec![int(1)]),
        list(vec![int(1), int(1)]),
        list(vec![int(2)]),
        Value::array(vec![]),
        Value::array(vec![int(0)]),
    ]);
}

#[test]
fn strings_then_binaries_by_bytes() {
    let bin = |b: &[u8]| Value::Binary(Ref::new(b.to_vec()));
    assert_increasing(&[
        Value::str(""),
        bin(b""),
        Value::str("a"),
        bin(b"a"),
        Value::str("ab"),
        Value::str("b"),
        bin(b"b"),
        Value::str("é"),
    ]);
}

#[test]
fn strict_versus_loose() {
    assert!(!strict_eq(&int(1), &Value::float(1.0)));
    assert!(loose_eq(&int(1), &Value::float(1.0)));
    assert!(!strict_eq(&Value::ch('a'), &int(97)));
    assert!(loose_eq(&Value::ch('a'), &int(97)));
    assert!(loose_eq(
        &list(vec![int(1), int(2)]),
        &list(vec![Value::float(1.0), int(2)])
    ));
    assert!(!strict_eq(
        &list(vec![int(1), int(2)]),
        &list(vec![Value::float(1.0), int(2)])
    ));
    assert!(!loose_eq(&list(vec![int(1)]), &Value::array(vec![int(1)])));
    assert!(loose_eq(
        &dict(vec![(int(1), int(2))]),
        &dict(vec![(Value::float(1.0), int(2))])
    ));
    assert!(!loose_eq(&Value::sym("nil"), &Value::Nil));
    assert!(!loose_eq(&Value::str("a"), &Value::sym("a")));
    assert!(loose_eq(&big("100000000000000000000"), &Value::float(1e20)));
    assert!(strict_eq(&Value::float(0.0), &Value::float(-0.0)));
}

#[test]
fn sets_keep_one_and_one_point_zero_apart() {
    let s = set(vec![int(1), Value::float(1.0), int(1)]);
    match &s {
        Value::Set(s) => assert_eq!(s.len(), 2),
        _ => unreachable!(),
    }
}

#[test]
fn hash_is_consistent_with_strict_equality() {
    let c = class("Point", ClassKind::Value, &["x", "y"]);
    let pairs = [
        (
            list(vec![int(1), Value::str("a")]),
            list(vec![int(1), Value::str("a")]),
        ),
        (
            dict(vec![(Value::sym("k"), int(1))]),
            dict(vec![(Value::sym("k"), int(1))]),
        ),
        (
            inst(&c, vec![int(1), int(2)]),
            inst(&c, vec![int(1), int(2)]),
        ),
        (Value::float(0.0), Value::float(-0.0)),
        (
            big("123456789012345678901234"),
            big("123456789012345678901234"),
        ),
    ];
    for (a, b) in pairs {
        assert!(strict_eq(&a, &b));
        assert_eq!(hash_value(&a), hash_value(&b));
    }
    assert_ne!(hash_value(&int(1)), hash_value(&Value::float(1.0)));
}

#[test]
fn term_hash_agrees_with_the_term_order() {
    let c = class("HPoint", ClassKind::Value, &["y", "x"]);
    let tup = |v: Vec<Value>| Value::tuple(v);
    let nested = || {
        tup(vec![
            int(1),
            tup(vec![
                Value::str("a"),
                Value::sym("b"),
                big("-98765432109876543210"),
            ]),
            list(vec![Value::float(-0.0), Value::ch('z')]),
        ])
    };
    // Built in different orders: one flat and sorted, one flat and unsorted, one a tree.
    let ascending = dict((0..50).map(|i| (int(i), int(i * i))).collect());
    let descending = dict((0..50).rev().map(|i| (int(i), int(i * i))).collect());
    let mut shared = Ref::new(crate::value::dict::Dict::new());
    let mut keep = Vec::new();
    for i in 0..50 {
        keep.push(shared.clone());
        crate::value::dict::insert_shared(&mut shared, int(i), int(i * i));
    }
    assert!(!shared.is_flat());
    let tree = Value::Dict(shared);
    let pairs = vec![
        (int(1), int(1)),
        (int(-1), int(-1)),
        (
            big("123456789012345678901234"),
            big("123456789012345678901234"),
        ),
        (
            big("-123456789012345678901234"),
            big("-123456789012345678901234"),
        ),
        (Value::float(1.5), Value::float(1.5)),
        (Value::float(0.0), Value::float(-0.0)),
        (Value::str("abc"), Value::str("abc")),
        (
            Value::str("a long string of more than eight bytes"),
            Value::str("a long string of more than eight bytes"),
        ),
        (Value::sym("abc"), Value::sym("abc")),
        (Value::ch('x'), Value::ch('x')),
        (nested(), nested()),
        (
            inst(&c, vec![int(1), nested()]),
            inst(&c, vec![int(1), nested()]),
        ),
        (ascending.clone(), descending.clone()),
        (ascending.clone(), tree.clone()),
        (
            set(vec![int(3), Value::str("q"), int(1)]),
            set(vec![int(1), int(3), Value::str("q")]),
        ),
        (Value::Nil, Value::Nil),
    ];
    for (a, b) in &pairs {
        assert_eq!(term_cmp(a, b), Equal);
        assert_eq!(term_hash(a), term_hash(b), "{a:?} / {b:?}");
        assert_eq!(hash_value(a), hash_value(b));
    }
    // Different kinds that look alike are different keys; their hashes differ too.
    let distinct = [
        int(1),
        Value::float(1.0),
        Value::ch('\u{1}'),
        big("18446744073709551617"),
        big("-18446744073709551617"),
        Value::str("abc"),
        Value::sym("abc"),
        Value::Binary(Ref::new(b"abc".to_vec())),
        tup(vec![int(1), int(2)]),
        list(vec![int(1), int(2)]),
        inst(&c, vec![int(2), int(1)]),
        inst(&c, vec![int(1), int(2)]),
        Value::Nil,
        Value::sym("nil"),
    ];
    for (i, a) in distinct.iter().enumerate() {
        for b in &distinct[i + 1..] {
            assert_ne!(term_cmp(a, b), Equal);
            assert_ne!(term_hash(a), term_hash(b), "{a:?} / {b:?}");
        }
    }
    // Object-kind instances: identity.
    let o = class("HObj", ClassKind::Object, &["a"]);
    let (x, y) = (inst(&o, vec![int(1)]), inst(&o, vec![int(1)]));
    assert_eq!(term_hash(&x), term_hash(&x.clone()));
    assert_ne!(term_cmp(&x, &y), Equal);
    drop(keep);
}

/// Random nested values for comparing the recursive walks with the iterative ones
/// (`order_deep.rs`), which must agree exactly (the hash word for word).
mod deep {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn gen(r: &mut Rng, depth: u32, point: &ClassRef) -> Value {
        let leaf = depth == 0 || r.below(4) == 0;
        if leaf {
            return match r.below(6) {
                0 => Value::Int(r.below(3) as i64),
                1 => Value::float(r.below(3) as f64),
                2 => Value::str(["a", "b"][r.below(2) as usize]),
                3 => Value::sym("s"),
                4 => Value::Nil,
                _ => Value::ch('a'),
            };
        }
        let n = r.below(3) as usize;
        let kids = |r: &mut Rng| (0..n).map(|_| gen(r, depth - 1, point)).collect::<Vec<_>>();
        match r.below(8) {
            0 => Value::list(kids(r)),
            1 => Value::array(kids(r)),
            2 => Value::tuple(kids(r)),
            3 => set(kids(r)),
            4 => dict(
                kids(r)
                    .into_iter()
                    .map(|k| (k, gen(r, depth - 1, point)))
                    .collect(),
            ),
            5 => Value::Bag(Ref::new(
                kids(r).into_iter().map(|k| (Key(k), 2usize)).collect(),
            )),
            6 => Value::Queue(Ref::new(kids(r).into_iter().collect())),
            _ => inst(
                point,
                vec![gen(r, depth - 1, point), gen(r, depth - 1, point)],
            ),
        }
    }

    #[test]
    fn iterative_walks_agree_with_the_recursive_ones() {
        let point = class("P", ClassKind::Value, &["y", "x"]);
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let vals: Vec<Value> = (0..400).map(|_| gen(&mut r, 4, &point)).collect();
        for a in &vals {
            let mut h1 = TermHasher(SEED);
            hash_into(a, &mut h1, 0);
            let mut h2 = TermHasher(SEED);
            order_deep::hash_iter(a, &mut h2);
            assert_eq!(h1.0, h2.0, "hash of {a:?}");
            for b in vals.iter().take(60) {
                assert_eq!(
                    term_cmp_general(a, b, 0),
                    order_deep::cmp_iter(a, b),
                    "order"
                );
                for loose in [false, true] {
                    assert_eq!(eq_at(a, b, loose, 0), order_deep::eq_iter(a, b, loose));
                }
            }
        }
    }

    /// A List nested far below the switch-over point, on a thread with a small stack.
    #[test]
    fn walks_of_a_million_levels_on_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(|| {
                let build = |leaf: i64| {
                    let mut x = Value::list([Value::Int(leaf)]);
                    for i in 0..1_000_000 {
                        x = match i % 4 {
                            0 => Value::list([x]),
                            1 => Value::tuple(vec![Value::Int(1), x]),
                            2 => dict(vec![(Value::sym("k"), x)]),
                            _ => Value::array([x]),
                        };
                    }
                    x
                };
                let (a, b, c) = (build(1), build(1), build(2));
                assert!(strict_eq(&a, &b));
                assert!(loose_eq(&a, &b));
                assert!(!strict_eq(&a, &c));
                assert_eq!(term_cmp(&a, &b), Equal);
                assert_eq!(term_cmp(&a, &c), Less);
                assert_eq!(term_hash(&a), term_hash(&b));
                assert_ne!(term_hash(&a), term_hash(&c));
            })
            .expect("thread")
            .join()
            .expect("deep walks must not overflow the stack");
    }
}
