//! List `#( )` and Array `#[ ]`: indexed access with the shared errors,
//! slicing, sorting, grouping and the updates `add:`, `addFirst:` and Array `at:put:`. Both
//! classes get the same selectors (an Array answers Arrays) except `at:put:`, which only Array
//! has.
//!
//! Files: this one (registration, access, slices, sorting, in-place updates), `view` (the
//! [`View`] over either representation and how results are built), `transform` (primitives
//! that build a new sequence from the whole receiver).

mod transform;
mod view;

use transform::*;
use view::*;

use std::cell::Cell;

use crate::interp::eval::charge::{Meter, ELEM};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::array::ArrayData;
use crate::value::order::strict_eq;
use crate::value::{Ref, Value};

use super::common::{
    arg, count_arg, elems_arg, empty_err, expected, index_arg, on_copy, oob_err, truth,
};
use super::generic::precedes;
use super::sort::merge_sort;
use super::stream;

type Vector = imbl::Vector<Value>;

pub fn register(p: &mut Prims) {
    for c in ["List", "Array"] {
        p.add_class(c, "new", class_new);
        p.add_class(c, "new:", class_new_size);
        p.add_class(c, "new:withAll:", class_new_with_all);
        p.add_class(c, "withAll:", class_with_all);
        p.add_class(c, "with:", class_with);
        p.add_class(c, "with:with:", class_with);
        p.add_class(c, "with:with:with:", class_with);
        p.add_class(c, "with:with:with:with:", class_with);
        p.add(c, "at:", at);
        p.add(c, "at:ifAbsent:", at_if_absent);
        p.add(c, "first", first);
        p.add(c, "last", last);
        p.add(c, "first:", take);
        p.add(c, "last:", last_n);
        p.add(c, "rest", rest);
        p.add(c, "allButFirst", rest);
        p.add(c, "allButLast", all_but_last);
        p.add(c, "indexOf:", index_of);
        p.add(c, "sort", sort);
        p.add(c, "sort:", sort_by);
        p.add(c, "reversed", reversed);
        p.add(c, "reverse", reversed);
        p.add(c, "reverseDo:", reverse_do);
        p.add(c, "unique", unique);
        p.add(c, "take:", take);
        p.add(c, "drop:", drop);
        p.add(c, "takeWhile:", take_while);
        p.add(c, "dropWhile:", drop_while);
        p.add(c, "flatten", flatten);
        p.add(c, "flatMap:", flat_map);
        p.add(c, "++", concat);
        p.add(c, "addAll:", add_all);
        p.add(c, "from:to:", from_to);
        p.add(c, "copyFrom:to:", from_to);
        p.add(c, "zip:", zip);
        p.add(c, "groupBy:", group_by);
        p.add(c, "partition:", partition);
        p.add(c, "intersperse:", intersperse);
        p.add(c, "addFirst:", add_first);
        p.add(c, "add:", add);
        p.add(c, "keysAndValuesDo:", keys_and_values_do);
        p.add(c, "stream", stream_p);
        p.add(c, "readStream", stream_p);
        p.add(c, "atRandom", at_random);
        p.add(c, "join", join);
        p.add(c, "join:", join_with);
        p.add(c, "sorted", sort);
        p.add(c, "sorted:", sort_by);
        p.add(c, "sortBy:", sort_by);
        p.add(c, "addLast:", add);
        p.add(c, "copyWith:", add);
        p.add(c, "copyWithout:", copy_without);
        p.add(c, "remove:", remove);
        p.add(c, "head", first);
        p.add(c, "tail", rest);
        p.add(c, "second", second);
        p.add(c, "third", third);
        p.add(c, "indexOf:ifAbsent:", index_of_if_absent);
        p.add(c, "with:collect:", with_collect);
        p.add(c, "collectWithIndex:", collect_with_index);
    }
    p.add("Array", "at:put:", at_put);
}
fn class_new(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    make(ctx, class_kind(recv), Vector::new())
}

/// `new: n` (n nils) or `new: aCollection` (like `withAll:`).
fn class_new_size(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    match arg(args, 0) {
        Value::Int(n) => {
            if *n < 0 {
                return Err(ctx.type_err(format!("new: expects a non-negative size, got {n}")));
            }
            if *n > 100_000_000 {
                return Err(ctx.type_err(format!("new: size too large: {n}")));
            }
            let v = std::iter::repeat_n(Value::Nil, (*n).max(0) as usize);
            make(ctx, class_kind(recv), v)
        }
        other => {
            let items = elems_arg(ctx, "new:", other)?;
            make(ctx, class_kind(recv), items)
        }
    }
}

/// `new: n withAll: x`: n copies of x.
fn class_new_with_all(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    if let Value::Int(n @ ..0) = arg(args, 0) {
        return Err(ctx.type_err(format!("new:withAll: expects a non-negative size, got {n}")));
    }
    let n = count_arg(ctx, "new:withAll:", arg(args, 0))?;
    if n > 100_000_000 {
        return Err(ctx.type_err(format!("new:withAll: size too large: {n}")));
    }
    let x = arg(args, 1).clone();
    if class_kind(recv) == "Array" {
        // One allocation filled by cloning (a flat copy for immediates such as `true`), paid
        // up front: a byte an element when compact, a Value otherwise.
        let compact = matches!(
            x,
            Value::Nil | Value::True | Value::False | Value::Int(0..=252)
        );
        let bytes = if compact { n } else { n.saturating_mul(ELEM) };
        ctx.reserve(bytes)?;
        ctx.charge(bytes)?;
        return Ok(Value::Array(Ref::new(ArrayData::from_elem(x, n))));
    }
    make(ctx, class_kind(recv), std::iter::repeat_n(x, n))
}

fn class_with_all(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let items = elems_arg(ctx, "withAll:", arg(args, 0))?;
    make(ctx, class_kind(recv), items)
}

fn class_with(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    make(ctx, class_kind(recv), args.iter().cloned())
}

fn at(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "at:", recv)?;
    let i = index_arg(ctx, "at:", kind_name(recv), arg(args, 0), v.len(), true)?;
    Ok(v[i].clone())
}

fn at_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "at:ifAbsent:", recv)?;
    match arg(args, 0) {
        Value::Int(i) if *i >= 1 && (*i as u64) <= v.len() as u64 => Ok(v[*i as usize - 1].clone()),
        Value::Int(_) | Value::BigInt(_) => ctx.call_block(arg(args, 1), &[]),
        other => Err(expected(ctx, "at:ifAbsent:", "an Integer index", other)),
    }
}

fn first(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "first", recv)?;
    v.front()
        .cloned()
        .ok_or_else(|| empty_err(ctx, kind_name(recv)))
}

fn last(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "last", recv)?;
    v.back()
        .cloned()
        .ok_or_else(|| empty_err(ctx, kind_name(recv)))
}

fn rest(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "rest", recv)?;
    pay_array(ctx, recv)?;
    Ok(same_kind(recv, v.skip(v.len().min(1))))
}

fn all_but_last(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "allButLast", recv)?;
    pay_array(ctx, recv)?;
    Ok(same_kind(recv, v.take(v.len().saturating_sub(1))))
}

fn take(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "take:", recv)?;
    pay_array(ctx, recv)?;
    let n = count_arg(ctx, "take:", arg(args, 0))?.min(v.len());
    Ok(same_kind(recv, v.take(n)))
}

fn last_n(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "last:", recv)?;
    pay_array(ctx, recv)?;
    let n = count_arg(ctx, "last:", arg(args, 0))?.min(v.len());
    Ok(same_kind(recv, v.skip(v.len() - n)))
}

fn drop(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "drop:", recv)?;
    pay_array(ctx, recv)?;
    let n = count_arg(ctx, "drop:", arg(args, 0))?.min(v.len());
    Ok(same_kind(recv, v.skip(n)))
}

fn index_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "indexOf:", recv)?;
    let x = arg(args, 0);
    let mut m = Meter::default();
    let mut found = None;
    let eq = crate::interp::prims::search_eq::user_eq(x);
    for (i, e) in v.iter().enumerate() {
        m.step(ctx, ELEM)?;
        if crate::interp::prims::search_eq::matches(ctx, eq, e, x)? {
            found = Some(i);
            break;
        }
    }
    Ok(match found {
        Some(i) => Value::Int(i as i64 + 1),
        None => Value::Nil,
    })
}

/// Sorts by [`precedes`] (numbers numerically, built-ins by term order, objects by `<=`).
pub(crate) fn sort_values(ctx: &mut Ctx, items: Vec<Value>) -> Result<Vec<Value>, Unwind> {
    merge_sort(items, |a, b| {
        ctx.tick()?;
        precedes(ctx, a, b)
    })
}

fn sort(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "sort", recv)?;
    let sorted = sort_values(ctx, v.iter().cloned().collect())?;
    Ok(same_kind(recv, sorted.into_iter().collect()))
}

/// `sort: [:a :b | …]` (true when `a` may precede `b`; stable). A one-parameter block is a
/// sort key (`sortBy: [:p | p age]`): elements are ordered by their keys as `sort` orders.
fn sort_by(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "sort:", recv)?;
    let block = arg(args, 0);
    if super::common::block_arity(ctx, "sort:", block)? == 1 {
        let mut keyed = Vec::with_capacity(v.len());
        for e in v.iter() {
            ctx.tick()?;
            keyed.push((ctx.call_block(block, std::slice::from_ref(e))?, e.clone()));
        }
        let sorted = merge_sort(keyed, |a, b| {
            ctx.tick()?;
            precedes(ctx, &a.0, &b.0)
        })?;
        return Ok(same_kind(recv, sorted.into_iter().map(|p| p.1).collect()));
    }
    let sorted = merge_sort(v.iter().cloned().collect(), |a, b| {
        ctx.tick()?;
        let r = ctx.call_block(block, &[a.clone(), b.clone()])?;
        truth(ctx, "sort:", &r)
    })?;
    Ok(same_kind(recv, sorted.into_iter().collect()))
}

fn nth(ctx: &mut Ctx, recv: &Value, sel: &str, k: usize) -> EvalResult {
    let v = vec_of(ctx, sel, recv)?;
    match v.get(k) {
        Some(x) => Ok(x.clone()),
        None if v.is_empty() => Err(empty_err(ctx, kind_name(recv))),
        None => Err(oob_err(ctx, k + 1, v.len())),
    }
}

fn second(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    nth(ctx, recv, "second", 1)
}

fn third(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    nth(ctx, recv, "third", 2)
}

fn index_of_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    match index_of(ctx, recv, args)? {
        Value::Nil => ctx.call_block(arg(args, 1), &[]),
        i => Ok(i),
    }
}

/// `copyWithout: x`: every element not `=:=` x.
fn copy_without(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "copyWithout:", recv)?;
    pay_array(ctx, recv)?;
    let x = arg(args, 0);
    Ok(same_kind(
        recv,
        v.iter().filter(|e| !strict_eq(e, x)).cloned().collect(),
    ))
}

/// `remove: x`: without the first element `=:=` x (unchanged when absent).
fn remove(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "remove:", recv)?;
    let x = arg(args, 0);
    pay(ctx, v.len())?;
    match v.iter().position(|e| strict_eq(e, x)) {
        Some(i) => {
            let mut out = v.to_vector();
            out.remove(i);
            Ok(same_kind(recv, out))
        }
        None => Ok(recv.clone()),
    }
}

/// Charges the copy an update of the Array `a` makes first when `a` is shared (a Value an
/// element; a List's copy shares its structure and stays free).
#[inline]
pub(crate) fn charge_shared_copy(
    ctx: &mut Ctx,
    a: &crate::value::Ref<crate::value::array::ArrayData>,
) -> Result<(), Unwind> {
    if crate::value::Ref::strong_count(a) > 1 || crate::value::Ref::weak_count(a) > 0 {
        ctx.charge(a.len().saturating_mul(ELEM))?;
    }
    Ok(())
}

/// List/Array `add:` in place (see [`super::InPlaceFn`]).
pub(crate) fn add_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::List(l) => crate::value::make_mut(l).push_back(arg(args, 0).clone()),
        Value::Array(a) => {
            charge_shared_copy(ctx, a)?;
            crate::value::make_mut(a).push(arg(args, 0).clone())
        }
        other => return Err(expected(ctx, "add:", "a List receiver", other)),
    }
    Ok(recv.clone())
}

/// List/Array `addFirst:` in place.
pub(crate) fn add_first_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::List(l) => crate::value::make_mut(l).push_front(arg(args, 0).clone()),
        Value::Array(a) => {
            charge_shared_copy(ctx, a)?;
            crate::value::make_mut(a).insert(0, arg(args, 0).clone())
        }
        other => return Err(expected(ctx, "addFirst:", "a List receiver", other)),
    }
    Ok(recv.clone())
}

/// Array `at:put:` in place: answers the updated Array.
pub(crate) fn at_put_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    let name = kind_name(recv);
    match recv {
        Value::Array(a) => {
            let i = index_arg(ctx, "at:put:", name, arg(args, 0), a.len(), true)?;
            charge_shared_copy(ctx, a)?;
            crate::value::make_mut(a).set(i, arg(args, 1).clone());
        }
        Value::List(a) => {
            let i = index_arg(ctx, "at:put:", name, arg(args, 0), a.len(), true)?;
            crate::value::make_mut(a).set(i, arg(args, 1).clone());
        }
        other => return Err(expected(ctx, "at:put:", "an Array receiver", other)),
    }
    Ok(recv.clone())
}

fn add(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(add_in_place, ctx, recv, args)
}

fn add_first(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(add_first_in_place, ctx, recv, args)
}

fn at_put(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(at_put_in_place, ctx, recv, args)
}

fn stream_p(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    stream::stream_on(ctx, recv)
}

thread_local! {
    static RNG: Cell<u64> = Cell::new({
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        t | 1
    });
}

/// A pseudo-random number below `n` (xorshift64*; `atRandom` needs no cryptographic quality).
pub(crate) fn random_below(n: usize) -> usize {
    RNG.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1) as u64) as usize
    })
}

fn at_random(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "atRandom", recv)?;
    if v.is_empty() {
        return Err(empty_err(ctx, kind_name(recv)));
    }
    Ok(v[random_below(v.len())].clone())
}
