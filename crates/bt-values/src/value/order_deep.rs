//! The walks of [`super`] (term order, `=:=`/`==`, hash) for values nested deeper than
//! [`DEEP`] levels: the same answers, computed with an explicit stack on the heap instead of
//! the native one (a List nested a million levels deep would overflow it in `=`, `hash`,
//! Set insertion …).
//!
//! The recursive walks in `order.rs` stay the fast path; they count the nesting and hand a
//! subtree over to the functions here once it is [`DEEP`] levels down. So these must agree
//! exactly with them — the hash in particular must write the same words in the same order —
//! which `order_tests.rs` checks by comparing both on the same values.

use std::cmp::Ordering;

use super::{
    fold_mul, hash_into, is_value_class, rank, sorted_fields, term_cmp_general, TermHasher, MUL,
    SEED,
};
use crate::value::{Key, Value};
use std::hash::Hasher;

/// Nesting depth at which the recursive walks switch to the iterative ones.
pub(super) const DEEP: u32 = 64;

// ---- equality ---------------------------------------------------------------------------

/// `=:=` (`loose` false) or `==` (`loose` true), iteratively.
pub(super) fn eq_iter(a: &Value, b: &Value, loose: bool) -> bool {
    let mut work: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((a, b)) = work.pop() {
        if !eq_shallow(a, b, loose, &mut work) {
            return false;
        }
    }
    true
}

/// Compares `a` and `b` one level down: false when they differ there, else pushes the pairs
/// of elements still to compare.
fn eq_shallow<'a>(
    a: &'a Value,
    b: &'a Value,
    loose: bool,
    work: &mut Vec<(&'a Value, &'a Value)>,
) -> bool {
    use crate::value::Ref;
    use Value as V;
    match (a, b) {
        (V::List(x), V::List(y)) | (V::Queue(x), V::Queue(y)) => {
            if !Ref::ptr_eq(x, y) {
                if x.len() != y.len() {
                    return false;
                }
                work.extend(x.iter().zip(y.iter()));
            }
            true
        }
        (V::Array(x), V::Array(y)) => {
            if !Ref::ptr_eq(x, y) {
                if x.len() != y.len() {
                    return false;
                }
                work.extend(x.iter().zip(y.iter()));
            }
            true
        }
        (V::Tuple(x), V::Tuple(y)) => {
            if x.len() != y.len() {
                return false;
            }
            work.extend(x.iter().zip(y.iter()));
            true
        }
        (V::Dict(x), V::Dict(y)) => {
            if !Ref::ptr_eq(x, y) {
                if x.len() != y.len() {
                    return false;
                }
                for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                    match (k1.stored(), k2.stored()) {
                        (Some(k1), Some(k2)) => work.push((k1, k2)),
                        // An Integer key is a leaf: compared here.
                        _ => {
                            if !eq_iter(&k1, &k2, loose) {
                                return false;
                            }
                        }
                    }
                    work.push((v1, v2));
                }
            }
            true
        }
        (V::Set(x), V::Set(y)) => {
            if x.len() != y.len() {
                return false;
            }
            work.extend(x.iter().map(|k| &k.0).zip(y.iter().map(|k| &k.0)));
            true
        }
        (V::Bag(x), V::Bag(y)) => {
            if x.len() != y.len() {
                return false;
            }
            for ((k1, c1), (k2, c2)) in x.iter().zip(y.iter()) {
                if c1 != c2 {
                    return false;
                }
                work.push((&k1.0, &k2.0));
            }
            true
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
            if fx.len() != fy.len() || fx.iter().zip(fy.iter()).any(|(p, q)| p.0 != q.0) {
                return false;
            }
            work.extend(fx.into_iter().map(|p| p.1).zip(fy.into_iter().map(|q| q.1)));
            true
        }
        // Everything else does not nest (Intervals hold numbers): the recursive walk answers
        // it without going further down.
        _ => super::eq_at(a, b, loose, 0),
    }
}

// ---- term order -------------------------------------------------------------------------

type Elems<'a> = Box<dyn Iterator<Item = &'a Value> + 'a>;

/// Two sequences compared element by element, then `tail` when every element was equal.
struct Frame<'a> {
    xs: Elems<'a>,
    ys: Elems<'a>,
    tail: Ordering,
}

enum Shallow<'a> {
    Done(Ordering),
    Descend(Frame<'a>),
}

/// The standard term order, iteratively.
pub(super) fn cmp_iter(a: &Value, b: &Value) -> Ordering {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut cur = Some((a, b));
    loop {
        if let Some((a, b)) = cur.take() {
            match cmp_shallow(a, b) {
                Shallow::Done(Ordering::Equal) => {}
                Shallow::Done(o) => return o,
                Shallow::Descend(f) => stack.push(f),
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ordering::Equal;
        };
        match (top.xs.next(), top.ys.next()) {
            (None, None) => {
                let t = top.tail;
                stack.pop();
                if t != Ordering::Equal {
                    return t;
                }
            }
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => cur = Some((x, y)),
        }
    }
}

fn descend<'a>(xs: Elems<'a>, ys: Elems<'a>, tail: Ordering) -> Shallow<'a> {
    Shallow::Descend(Frame { xs, ys, tail })
}

/// The order of `a` and `b` decided at this level, or the element sequences that decide it.
/// Mirrors `term_cmp_general` / `library_cmp` / `instance_cmp` step for step.
fn cmp_shallow<'a>(a: &'a Value, b: &'a Value) -> Shallow<'a> {
    use crate::value::Ref;
    use Value as V;
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb {
        return Shallow::Done(ra.cmp(&rb));
    }
    match (a, b) {
        (V::Tuple(x), V::Tuple(y)) => match x.len().cmp(&y.len()) {
            Ordering::Equal => descend(Box::new(x.iter()), Box::new(y.iter()), Ordering::Equal),
            o => Shallow::Done(o),
        },
        (V::Dict(x), V::Dict(y)) => match x.len().cmp(&y.len()) {
            Ordering::Equal => match (x.stored_keys(), y.stored_keys()) {
                (Some(kx), Some(ky)) => descend(
                    Box::new(kx.chain(x.values())),
                    Box::new(ky.chain(y.values())),
                    Ordering::Equal,
                ),
                // One side's keys are all Integers (leaves): its keys compare shallowly.
                _ => match x
                    .keys()
                    .zip(y.keys())
                    .map(|(a, b)| super::term_cmp(&a, &b))
                    .find(|o| o.is_ne())
                {
                    Some(o) => Shallow::Done(o),
                    None => descend(Box::new(x.values()), Box::new(y.values()), Ordering::Equal),
                },
            },
            o => Shallow::Done(o),
        },
        (V::List(x), V::List(y)) => {
            descend(Box::new(x.iter()), Box::new(y.iter()), Ordering::Equal)
        }
        (V::Array(x), V::Array(y)) => {
            descend(Box::new(x.iter()), Box::new(y.iter()), Ordering::Equal)
        }
        (V::Queue(x), V::Queue(y)) => {
            descend(Box::new(x.iter()), Box::new(y.iter()), Ordering::Equal)
        }
        (V::Set(x), V::Set(y)) => match x.len().cmp(&y.len()) {
            Ordering::Equal => descend(
                Box::new(x.iter().map(|k: &Key| &k.0)),
                Box::new(y.iter().map(|k: &Key| &k.0)),
                Ordering::Equal,
            ),
            o => Shallow::Done(o),
        },
        (V::Bag(x), V::Bag(y)) => {
            let total = |m: &imbl::OrdMap<Key, usize>| m.values().sum::<usize>();
            match total(x).cmp(&total(y)) {
                Ordering::Equal => descend(
                    Box::new(x.keys().map(|k| &k.0)),
                    Box::new(y.keys().map(|k| &k.0)),
                    x.values().cmp(y.values()),
                ),
                o => Shallow::Done(o),
            }
        }
        (V::Object(x), V::Object(y))
            if !Ref::ptr_eq(x, y) && is_value_class(&x.class) && is_value_class(&y.class) =>
        {
            // `library_cmp`: class name first (same representation here).
            let o = x.class.name.as_str().cmp(y.class.name.as_str());
            if o != Ordering::Equal {
                return Shallow::Done(o);
            }
            let (fx, fy) = (sorted_fields(x), sorted_fields(y));
            let o = fx.iter().map(|p| p.0).cmp(fy.iter().map(|p| p.0));
            if o != Ordering::Equal {
                return Shallow::Done(o);
            }
            descend(
                Box::new(fx.into_iter().map(|p| p.1)),
                Box::new(fy.into_iter().map(|p| p.1)),
                Ordering::Equal,
            )
        }
        // Leaves, mixed kinds of one rank, identity-ordered objects: no nesting below.
        _ => Shallow::Done(term_cmp_general(a, b, 0)),
    }
}

// ---- hash -------------------------------------------------------------------------------

/// One step of the iterative hash.
enum W<'a> {
    /// Hash a value into the current hasher.
    Val(&'a Value),
    Usize(usize),
    Bytes(&'a [u8]),
    /// Compute `term_hash` of a value on its own (a Dictionary entry's key or value).
    Sub(&'a Value),
    /// A `Sub` of an Integer (a key the Dictionary stores as its `i64`).
    SubInt(i64),
    /// The value of a `Sub` is complete: pop its hasher, keep the result.
    FinishSub,
    /// Fold the last two results (key, value) into the current Dictionary's sum.
    Combine,
    /// Write the current Dictionary's sum.
    DictEnd,
}

/// Adds `v` to `h` exactly as the recursive `hash_into` does, iteratively.
pub(super) fn hash_iter(v: &Value, h: &mut TermHasher) {
    let mut hs = vec![TermHasher(h.0)];
    let mut results: Vec<u64> = Vec::new();
    let mut sums: Vec<u64> = Vec::new();
    let mut work = vec![W::Val(v)];
    while let Some(w) = work.pop() {
        let Some(cur) = hs.last_mut() else { break };
        match w {
            W::Val(v) => hash_shallow(v, cur, &mut sums, &mut work),
            W::Usize(n) => cur.write_usize(n),
            W::Bytes(b) => cur.write(b),
            W::Sub(v) => match v {
                Value::Int(i) => results.push(*i as u64),
                _ => {
                    hs.push(TermHasher(SEED));
                    work.push(W::FinishSub);
                    work.push(W::Val(v));
                }
            },
            W::SubInt(i) => results.push(i as u64),
            W::FinishSub => {
                let t = hs.pop().map_or(0, |t| t.0);
                results.push(fold_mul(t, MUL));
            }
            W::Combine => {
                let e = results.pop().unwrap_or(0);
                let k = results.pop().unwrap_or(0);
                if let Some(s) = sums.last_mut() {
                    *s = s.wrapping_add(fold_mul(k ^ SEED, e | 1));
                }
            }
            W::DictEnd => {
                let s = sums.pop().unwrap_or(0);
                cur.write_u64(s);
            }
        }
    }
    h.0 = hs.first().map_or(h.0, |t| t.0);
}

/// Pushes the items of `it` so that they are processed in order.
fn push_in_order<'a>(work: &mut Vec<W<'a>>, it: impl Iterator<Item = W<'a>>) {
    let start = work.len();
    work.extend(it);
    work[start..].reverse();
}

fn hash_shallow<'a>(v: &'a Value, h: &mut TermHasher, sums: &mut Vec<u64>, work: &mut Vec<W<'a>>) {
    use Value as V;
    match v {
        V::List(x) | V::Queue(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            push_in_order(work, x.iter().map(W::Val));
        }
        V::Array(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            push_in_order(work, x.iter().map(W::Val));
        }
        V::Tuple(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            push_in_order(work, x.iter().map(W::Val));
        }
        V::Set(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            push_in_order(work, x.iter().map(|k| W::Val(&k.0)));
        }
        V::Bag(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            push_in_order(
                work,
                x.iter().flat_map(|(k, c)| [W::Val(&k.0), W::Usize(*c)]),
            );
        }
        V::Dict(x) => {
            h.write_u8(rank(v));
            h.write_usize(x.len());
            sums.push(0);
            push_in_order(
                work,
                x.iter_unordered()
                    .flat_map(|(k, e)| {
                        let k = match k.stored() {
                            Some(k) => W::Sub(k),
                            None => W::SubInt(k.as_int().unwrap_or(0)),
                        };
                        [k, W::Sub(e), W::Combine]
                    })
                    .chain(std::iter::once(W::DictEnd)),
            );
        }
        V::Object(o) if is_value_class(&o.class) => {
            h.write_u8(rank(v));
            h.write(o.class.name.as_str().as_bytes());
            push_in_order(
                work,
                sorted_fields(o)
                    .into_iter()
                    .flat_map(|(name, f)| [W::Bytes(name.as_bytes()), W::Val(f)]),
            );
        }
        // Leaves (and identity-hashed objects): the recursive walk goes no further down.
        _ => hash_into(v, h, 0),
    }
}
