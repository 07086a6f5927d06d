//! Standard term order and the equalities `=:=` / `==`.
//!
//! * [`term_cmp`] is the total order Sets and Dictionaries keep their keys in, and the order
//!   `sort` uses for built-in values. Two values compare `Equal` exactly when they are `=:=`.
//! * [`strict_eq`] is `=:=`: structural for values and collections, identity for blocks,
//!   classes and Object-kind instances; `1 =:= 1.0` and `$a =:= 97` are false.
//! * [`loose_eq`] is `==`: like `=:=` but numbers (Integer, Character, Float) compare by value,
//!   also inside collections.
//! * [`term_hash`] (Dictionary keys) and [`hash_value`] (the `hash` message) are consistent
//!   with `=:=`.
//!
//! Everything here is pure: no sends, no `Ctx`. Recursion follows the nesting of the values
//! down to [`order_deep::DEEP`] levels; deeper subtrees are walked with an explicit stack
//! (`order_deep.rs`), so any depth the heap holds is fine.

use std::cmp::Ordering;
use std::hash::Hasher;

use num_bigint::BigInt;
use num_traits::{FromPrimitive, Signed, ToPrimitive};

use crate::value::class::{Class, ClassKind};
use crate::value::dict::table::Term;
use crate::value::dict::Dict;
use crate::value::{Instance, Interval, Key, Ref, Value};

/// The rank of a value in the standard term order (1 = lowest).
pub fn rank(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Char(_) => 1,
        Value::Symbol(_) | Value::Nil | Value::True | Value::False => 2,
        Value::Block(_) => 4,
        Value::Native(n) => n.0.order_key().0.clamp(1, 12),
        Value::Class(_) | Value::Meta(_) => 6,
        Value::Tuple(_) => 7,
        Value::Dict(_) => 8,
        Value::Object(_) | Value::Set(_) | Value::Bag(_) | Value::Queue(_) | Value::Interval(_) => {
            9
        }
        Value::List(_) => 10,
        Value::Array(_) => 11,
        Value::Str(_) | Value::Binary(_) => 12,
    }
}

/// Compares two values in the standard term order.
#[inline]
pub fn term_cmp(a: &Value, b: &Value) -> Ordering {
    // Fast path for the commonest Dictionary keys (inlined into the B-tree searches).
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.cmp(y);
    }
    term_cmp_general(a, b, 0)
}

/// Keys (Dictionary trees, Sets, Bags) are ordered by [`term_cmp`]: equal exactly when `=:=`.
impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        term_cmp(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        term_cmp(&self.0, &other.0)
    }
}

/// Dictionaries key Values by the standard term order: `term_hash`, `=:=` and [`term_cmp`].
impl Term for Value {
    type Key = Key;
    #[inline(always)]
    fn int_key(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    #[inline(always)]
    fn from_int_key(i: i64) -> Value {
        Value::Int(i)
    }
    #[inline]
    fn key_hash(&self) -> u64 {
        term_hash(self)
    }
    #[inline]
    fn key_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(x), Value::Int(y)) => x == y,
            _ => term_cmp(self, other) == Ordering::Equal,
        }
    }
    #[inline]
    fn key_cmp(&self, other: &Value) -> Ordering {
        term_cmp(self, other)
    }
    #[inline(always)]
    fn into_tree_key(self) -> Key {
        Key(self)
    }
    #[inline(always)]
    fn as_tree_key(&self) -> &Key {
        Key::from_ref(self)
    }
    #[inline(always)]
    fn from_tree_key(k: Key) -> Value {
        k.0
    }
    #[inline(always)]
    fn from_tree_key_ref(k: &Key) -> &Value {
        &k.0
    }
}

/// [`term_cmp`] of elements `depth` levels down.
#[inline]
fn term_cmp_at(a: &Value, b: &Value, depth: u32) -> Ordering {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.cmp(y);
    }
    if depth >= order_deep::DEEP {
        return order_deep::cmp_iter(a, b);
    }
    term_cmp_general(a, b, depth)
}

fn term_cmp_general(a: &Value, b: &Value, depth: u32) -> Ordering {
    match (a, b) {
        // Two Symbols: by text (what rank 2 below answers), without the rank walk.
        (Value::Symbol(x), Value::Symbol(y)) if x == y => return Ordering::Equal,
        (Value::Symbol(x), Value::Symbol(y)) => return x.as_str().cmp(y.as_str()),
        (Value::Str(x), Value::Str(y)) => return x.as_bytes().cmp(y.as_bytes()),
        _ => {}
    }
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match ra {
        1 => num_cmp(a, b).then_with(|| num_subrank(a).cmp(&num_subrank(b))),
        2 => {
            let (na, sa) = atom_name(a);
            let (nb, sb) = atom_name(b);
            na.cmp(nb).then_with(|| sb.cmp(&sa))
        }
        4 => match (a, b) {
            // Creation order; two blocks are equal only when identical.
            (Value::Block(x), Value::Block(y)) => {
                x.serial.cmp(&y.serial).then_with(|| addr(x).cmp(&addr(y)))
            }
            _ => native_or_subrank_cmp(a, b),
        },
        6 => class_key(a).cmp(&class_key(b)),
        7 => match (a, b) {
            (Value::Tuple(x), Value::Tuple(y)) => x
                .len()
                .cmp(&y.len())
                .then_with(|| seq_cmp(x.iter(), y.iter(), depth)),
            _ => native_or_subrank_cmp(a, b),
        },
        8 => match (a, b) {
            (Value::Dict(x), Value::Dict(y)) => x
                .len()
                .cmp(&y.len())
                .then_with(|| key_cmp(x, y, depth))
                .then_with(|| seq_cmp(x.values(), y.values(), depth)),
            _ => native_or_subrank_cmp(a, b),
        },
        9 => library_cmp(a, b, depth),
        10 | 11 => match (a, b) {
            (Value::List(x), Value::List(y)) => seq_cmp(x.iter(), y.iter(), depth),
            (Value::Array(x), Value::Array(y)) => seq_cmp(x.iter(), y.iter(), depth),
            _ => native_or_subrank_cmp(a, b),
        },
        12 => match (a, b) {
            (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Value::Binary(x), Value::Binary(y)) => x.as_slice().cmp(y.as_slice()),
            (Value::Str(x), Value::Binary(y)) => {
                x.as_bytes().cmp(y.as_slice()).then(Ordering::Less)
            }
            (Value::Binary(x), Value::Str(y)) => {
                x.as_slice().cmp(y.as_bytes()).then(Ordering::Greater)
            }
            _ => native_or_subrank_cmp(a, b),
        },
        // Ranks 3 and 5 (and anything a native claims): natives only.
        _ => native_or_subrank_cmp(a, b),
    }
}

/// Lexicographic comparison; a proper prefix comes first.
/// The keys of two Dictionaries of the same size compared in order (the first difference).
fn key_cmp(x: &Dict, y: &Dict, depth: u32) -> Ordering {
    x.keys()
        .zip(y.keys())
        .map(|(a, b)| term_cmp_at(&a, &b, depth + 1))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn seq_cmp<'a>(
    mut xs: impl Iterator<Item = &'a Value>,
    mut ys: impl Iterator<Item = &'a Value>,
    depth: u32,
) -> Ordering {
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match term_cmp_at(x, y, depth + 1) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
}

fn addr<T>(r: &Ref<T>) -> usize {
    Ref::as_ptr(r) as *const u8 as usize
}

/// Natives of the same rank by their order key; a native against a built-in value of the same
/// rank: the built-in first (deterministic, never equal).
fn native_or_subrank_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Native(x), Value::Native(y)) => x.0.order_key().cmp(&y.0.order_key()),
        (Value::Native(_), _) => Ordering::Greater,
        (_, Value::Native(_)) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// Integer < Character < Float among numerically equal values.
fn num_subrank(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::BigInt(_) => 0,
        Value::Char(_) => 1,
        _ => 2,
    }
}

/// A number (or Character) as an exact quantity.
enum Num<'a> {
    I(i64),
    B(&'a BigInt),
    F(f64),
}

fn as_num(v: &Value) -> Option<Num<'_>> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Char(c) => Some(Num::I(c.get() as i64)),
        Value::BigInt(b) => Some(Num::B(b)),
        Value::Float(f) => Some(Num::F(f.get())),
        _ => None,
    }
}

/// Compares two numbers (Characters by code point) by exact numeric value.
/// Non-numbers compare `Equal` (callers check the kinds first).
pub fn num_cmp(a: &Value, b: &Value) -> Ordering {
    let (Some(x), Some(y)) = (as_num(a), as_num(b)) else {
        return Ordering::Equal;
    };
    match (x, y) {
        (Num::I(x), Num::I(y)) => x.cmp(&y),
        (Num::F(x), Num::F(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Num::B(x), Num::B(y)) => x.cmp(y),
        // A normalised BigInt lies outside the i64 range.
        (Num::I(_), Num::B(y)) => {
            if y.is_positive() {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Num::B(x), Num::I(_)) => {
            if x.is_positive() {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Num::I(x), Num::F(y)) => int_float_cmp(x, y),
        (Num::F(x), Num::I(y)) => int_float_cmp(y, x).reverse(),
        (Num::B(x), Num::F(y)) => big_float_cmp(x, y),
        (Num::F(x), Num::B(y)) => big_float_cmp(y, x).reverse(),
    }
}

/// Exact comparison of an i64 with a finite double.
fn int_float_cmp(i: i64, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Equal;
    }
    // Every i64 lies in [-2^63, 2^63).
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO63 {
        return Ordering::Less;
    }
    if f < -TWO63 {
        return Ordering::Greater;
    }
    let fl = f.floor();
    // fl is integral and within [-2^63, 2^63): exact as i128.
    let fi = fl as i128;
    match (i as i128).cmp(&fi) {
        Ordering::Equal => {
            if f > fl {
                Ordering::Less
            } else {
                Ordering::Equal
            }
        }
        o => o,
    }
}

/// Exact comparison of a BigInt (outside the i64 range) with a finite double.
fn big_float_cmp(b: &BigInt, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Equal;
    }
    let fl = f.floor();
    match BigInt::from_f64(fl) {
        Some(fb) => match b.cmp(&fb) {
            Ordering::Equal if f > fl => Ordering::Less,
            o => o,
        },
        None => {
            if f > 0.0 {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
    }
}

/// The name of a rank-2 value and whether it is a Symbol (the Symbol sorts first).
fn atom_name(v: &Value) -> (&'static str, bool) {
    match v {
        Value::Symbol(s) => (s.as_str(), true),
        Value::Nil => ("nil", false),
        Value::True => ("true", false),
        Value::False => ("false", false),
        _ => ("", false),
    }
}

fn class_key(v: &Value) -> (&'static str, bool) {
    match v {
        Value::Class(c) => (c.name.as_str(), false),
        Value::Meta(c) => (c.name.as_str(), true),
        _ => ("", false),
    }
}

/// The class name a rank-9 value sorts under.
fn library_class_name(v: &Value) -> &'static str {
    match v {
        Value::Object(o) => o.class.name.as_str(),
        Value::Set(_) => "Set",
        Value::Bag(_) => "Bag",
        Value::Queue(_) => "Queue",
        Value::Interval(_) => "Interval",
        Value::Native(n) => n.0.class().name.as_str(),
        _ => "",
    }
}

/// Which representation a rank-9 value has (separates a user class named like a built-in).
fn library_repr(v: &Value) -> u8 {
    match v {
        Value::Object(_) => 0,
        Value::Set(_) => 1,
        Value::Bag(_) => 2,
        Value::Queue(_) => 3,
        Value::Interval(_) => 4,
        _ => 5,
    }
}

fn library_cmp(a: &Value, b: &Value, depth: u32) -> Ordering {
    let o = library_class_name(a).cmp(library_class_name(b));
    if o != Ordering::Equal {
        return o;
    }
    let o = library_repr(a).cmp(&library_repr(b));
    if o != Ordering::Equal {
        return o;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => instance_cmp(x, y, depth),
        (Value::Set(x), Value::Set(y)) => x
            .len()
            .cmp(&y.len())
            .then_with(|| seq_cmp(x.iter().map(|k| &k.0), y.iter().map(|k| &k.0), depth)),
        (Value::Bag(x), Value::Bag(y)) => {
            let total = |m: &imbl::OrdMap<Key, usize>| m.values().sum::<usize>();
            total(x)
                .cmp(&total(y))
                .then_with(|| seq_cmp(x.keys().map(|k| &k.0), y.keys().map(|k| &k.0), depth))
                .then_with(|| x.values().cmp(y.values()))
        }
        (Value::Queue(x), Value::Queue(y)) => seq_cmp(x.iter(), y.iter(), depth),
        (Value::Interval(x), Value::Interval(y)) => interval_cmp(x, y),
        (Value::Native(x), Value::Native(y)) => x.0.order_key().cmp(&y.0.order_key()),
        _ => Ordering::Equal,
    }
}

fn interval_cmp(x: &Interval, y: &Interval) -> Ordering {
    // Interval bounds are numbers: no nesting below.
    term_cmp(&x.from, &y.from)
        .then_with(|| term_cmp(&x.to, &y.to))
        .then_with(|| term_cmp(&x.step, &y.step))
}

/// Whether instances of `c` compare structurally (a Value-kind class).
pub(super) fn is_value_class(c: &Class) -> bool {
    c.kind == ClassKind::Value
}

/// Field indexes of a class sorted by field name (the "field-name order" of 5.12 and 10.1).
pub fn fields_in_name_order(c: &Class) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..c.field_names.len()).collect();
    idx.sort_by(|&i, &j| c.field_names[i].as_str().cmp(c.field_names[j].as_str()));
    idx
}

fn instance_cmp(x: &Ref<Instance>, y: &Ref<Instance>, depth: u32) -> Ordering {
    if Ref::ptr_eq(x, y) {
        return Ordering::Equal;
    }
    if !is_value_class(&x.class) || !is_value_class(&y.class) {
        // Object kind: identity only; a stable but arbitrary order.
        return is_value_class(&y.class)
            .cmp(&is_value_class(&x.class))
            .then_with(|| addr(x).cmp(&addr(y)));
    }
    let (fx, fy) = (sorted_fields(x), sorted_fields(y));
    let names = |f: &Vec<(&'static str, &Value)>| f.iter().map(|p| p.0).collect::<Vec<_>>();
    let o = names(&fx).cmp(&names(&fy));
    if o != Ordering::Equal {
        return o;
    }
    seq_cmp(fx.iter().map(|p| p.1), fy.iter().map(|p| p.1), depth)
}

pub(super) fn sorted_fields(x: &Instance) -> Vec<(&'static str, &Value)> {
    let mut v: Vec<(&'static str, &Value)> = x
        .class
        .field_names
        .iter()
        .map(|s| s.as_str())
        .zip(x.fields.iter())
        .collect();
    v.sort_by(|a, b| a.0.cmp(b.0));
    v
}

/// `=:=`: exact and structural. Agrees with [`term_cmp`] `== Equal`.
pub fn strict_eq(a: &Value, b: &Value) -> bool {
    eq_at(a, b, false, 0)
}

/// `==`: like `=:=`, but numbers and Characters compare by value (`1 == 1.0`, `$a == 97`),
/// recursively inside collections.
pub fn loose_eq(a: &Value, b: &Value) -> bool {
    eq_at(a, b, true, 0)
}

/// `=:=`/`==` of values `depth` levels down.
fn eq_at(a: &Value, b: &Value, loose: bool, depth: u32) -> bool {
    use Value as V;
    if depth >= order_deep::DEEP {
        return order_deep::eq_iter(a, b, loose);
    }
    let d = depth + 1;
    let eq_with = |p: &Value, q: &Value, loose: bool| eq_at(p, q, loose, d);
    let seq = |x: &mut dyn Iterator<Item = &Value>, y: &mut dyn Iterator<Item = &Value>| loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if eq_at(p, q, loose, d) => {}
            _ => return false,
        }
    };
    match (a, b) {
        (V::Int(x), V::Int(y)) => x == y,
        (V::Float(x), V::Float(y)) => x.get() == y.get(),
        (V::Char(x), V::Char(y)) => x == y,
        (V::BigInt(x), V::BigInt(y)) => x == y,
        (
            V::Int(_) | V::BigInt(_) | V::Float(_) | V::Char(_),
            V::Int(_) | V::BigInt(_) | V::Float(_) | V::Char(_),
        ) => loose && num_cmp(a, b) == Ordering::Equal,
        (V::Nil, V::Nil) | (V::True, V::True) | (V::False, V::False) => true,
        (V::Symbol(x), V::Symbol(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::Binary(x), V::Binary(y)) => x == y,
        (V::List(x), V::List(y)) | (V::Queue(x), V::Queue(y)) => {
            Ref::ptr_eq(x, y) || (x.len() == y.len() && seq(&mut x.iter(), &mut y.iter()))
        }
        (V::Array(x), V::Array(y)) => {
            Ref::ptr_eq(x, y) || (x.len() == y.len() && seq(&mut x.iter(), &mut y.iter()))
        }
        (V::Tuple(x), V::Tuple(y)) => x.len() == y.len() && seq(&mut x.iter(), &mut y.iter()),
        (V::Dict(x), V::Dict(y)) => {
            Ref::ptr_eq(x, y)
                || (x.len() == y.len()
                    && x.iter().zip(y.iter()).all(|((k1, v1), (k2, v2))| {
                        eq_with(&k1, &k2, loose) && eq_with(v1, v2, loose)
                    }))
        }
        (V::Set(x), V::Set(y)) => {
            x.len() == y.len() && seq(&mut x.iter().map(|k| &k.0), &mut y.iter().map(|k| &k.0))
        }
        (V::Bag(x), V::Bag(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k1, c1), (k2, c2))| c1 == c2 && eq_with(&k1.0, &k2.0, loose))
        }
        (V::Interval(x), V::Interval(y)) => {
            eq_with(&x.from, &y.from, loose)
                && eq_with(&x.to, &y.to, loose)
                && eq_with(&x.step, &y.step, loose)
        }
        (V::Object(x), V::Object(y)) => {
            if Ref::ptr_eq(x, y) {
                return true;
            }
            if !is_value_class(&x.class) || !is_value_class(&y.class) {
                return false;
            }
            if x.class.name != y.class.name {
                return false;
            }
            let (fx, fy) = (sorted_fields(x), sorted_fields(y));
            fx.len() == fy.len()
                && fx
                    .iter()
                    .zip(fy.iter())
                    .all(|(p, q)| p.0 == q.0 && eq_with(p.1, q.1, loose))
        }
        // A class is its name: a redefinition replaces the class under that name.
        (V::Class(x), V::Class(y)) | (V::Meta(x), V::Meta(y)) => {
            Ref::ptr_eq(x, y) || x.name == y.name
        }
        (V::Block(x), V::Block(y)) => Ref::ptr_eq(x, y),
        (V::Native(x), V::Native(y)) => Ref::ptr_eq(x, y) || x.0.equals(&*y.0),
        _ => false,
    }
}

/// A hash consistent with the standard term order: `term_cmp(a, b) == Equal` (that is `=:=`)
/// implies `term_hash(a) == term_hash(b)`. This is the hash Dictionaries index their keys by.
///
/// Integers hash to themselves (as in Python), so runs of nearby Integer keys land in nearby
/// table slots; the table's probe sequence mixes the high bits in. Everything else is mixed
/// (folded 128-bit multiplies). Classes hash by name. Values equal only to themselves (blocks,
/// Object-kind instances) hash by identity, so hashes are not stable across runs. Floats are finite here
/// (arithmetic raises instead of producing NaN), so `0.0`/`-0.0` is the only special case.
#[inline]
pub(crate) fn term_hash(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        _ => term_hash_general(v),
    }
}

/// A well-mixed hash consistent with `=:=` (the `hash` message, native objects' hashes).
pub fn hash_value(v: &Value) -> u64 {
    fold_mul(term_hash(v) ^ SEED, MUL)
}

pub(super) const SEED: u64 = 0x243f_6a88_85a3_08d3;
pub(super) const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
const MUL2: u64 = 0xa076_1d64_78bd_642f;

/// The high and low halves of a 128-bit product, folded (foldhash/wyhash mixing).
#[inline]
pub(super) fn fold_mul(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// The streaming state behind [`term_hash`] for everything but a top-level Integer.
pub(super) struct TermHasher(pub(super) u64);

impl Hasher for TermHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(w) ^ ((bytes.len() as u64) << 56));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = fold_mul(self.0 ^ x, MUL2);
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn term_hash_general(v: &Value) -> u64 {
    term_hash_general_at(v, 0)
}

fn term_hash_general_at(v: &Value, depth: u32) -> u64 {
    let mut h = TermHasher(SEED);
    hash_into(v, &mut h, depth);
    fold_mul(h.0, MUL)
}

/// [`term_hash`] of a value `depth` levels down.
fn term_hash_at(v: &Value, depth: u32) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        _ => term_hash_general_at(v, depth),
    }
}

/// Adds `v` to `h`. Values that can be `=:=` only to values of the same variant, so each
/// variant hashes its own way, after its rank.
fn hash_into(v: &Value, h: &mut TermHasher, depth: u32) {
    use Value as V;
    if depth >= order_deep::DEEP {
        return order_deep::hash_iter(v, h);
    }
    let d = depth + 1;
    let seq = |h: &mut TermHasher, n: usize, it: &mut dyn Iterator<Item = &Value>| {
        h.write_usize(n);
        it.for_each(|e| hash_into(e, h, d));
    };
    match v {
        // The rank of a native asks it for its order key: hash natives by that key alone.
        V::Native(n) => {
            let (rank, key) = n.0.order_key();
            h.write_u8(rank.clamp(1, 12));
            key.iter().for_each(|k| h.write_u64(*k));
            return;
        }
        _ => h.write_u8(rank(v)),
    }
    match v {
        V::Nil => h.write_u8(0),
        V::True => h.write_u8(1),
        V::False => h.write_u8(2),
        V::Int(i) => h.write_u64(*i as u64),
        V::BigInt(b) => {
            h.write_u8(b.is_positive() as u8);
            b.iter_u64_digits().for_each(|d| h.write_u64(d));
        }
        V::Float(f) => {
            // 0.0 =:= -0.0
            let f = if f.get() == 0.0 { 0.0 } else { f.get() };
            h.write_u64(f.to_bits())
        }
        V::Char(c) => h.write_u64(u64::from(c.get() as u32) | (1 << 40)),
        // Symbols are interned: equal exactly when they are the same symbol.
        V::Symbol(s) => h.write_u64(s.index() as u64),
        V::Str(s) => h.write(s.as_bytes()),
        V::Binary(b) => {
            // Never `=:=` to a String of the same bytes (same rank).
            h.write_u8(1);
            h.write(b.as_slice())
        }
        V::List(x) | V::Queue(x) => seq(h, x.len(), &mut x.iter()),
        V::Array(x) => seq(h, x.len(), &mut x.iter()),
        V::Tuple(x) => seq(h, x.len(), &mut x.iter()),
        V::Dict(x) => {
            // Order-independent, so a table that keeps no sorted order need not sort.
            h.write_usize(x.len());
            let mut sum = 0u64;
            for (k, e) in x.iter_unordered() {
                sum =
                    sum.wrapping_add(fold_mul(term_hash_at(&k, d) ^ SEED, term_hash_at(e, d) | 1));
            }
            h.write_u64(sum);
        }
        V::Set(x) => seq(h, x.len(), &mut x.iter().map(|k| &k.0)),
        V::Bag(x) => {
            h.write_usize(x.len());
            for (k, c) in x.iter() {
                hash_into(&k.0, h, d);
                h.write_usize(*c);
            }
        }
        V::Interval(x) => {
            hash_into(&x.from, h, d);
            hash_into(&x.to, h, d);
            hash_into(&x.step, h, d);
        }
        V::Object(o) => {
            h.write(o.class.name.as_str().as_bytes());
            if is_value_class(&o.class) {
                for (name, f) in sorted_fields(o) {
                    h.write(name.as_bytes());
                    hash_into(f, h, d);
                }
            } else {
                h.write_usize(addr(o));
            }
        }
        V::Class(c) => h.write(c.name.as_str().as_bytes()),
        V::Meta(c) => {
            h.write(c.name.as_str().as_bytes());
            h.write_u8(1);
        }
        V::Block(b) => h.write_usize(addr(b)),
        V::Native(_) => {}
    }
}

/// A Float as an exact Integer value when it is integral (used by callers that convert).
pub fn float_to_int(f: f64) -> Option<Value> {
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    if f.abs() < 9.0e15 {
        return Some(Value::Int(f as i64));
    }
    BigInt::from_f64(f).map(Value::from_bigint)
}

/// A number as f64 (Characters by code point), if it is one.
pub fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Char(c) => Some(c.get() as u32 as f64),
        Value::Float(f) => Some(f.get()),
        Value::BigInt(b) => b.to_f64(),
        _ => None,
    }
}

#[path = "order_deep.rs"]
mod order_deep;

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
