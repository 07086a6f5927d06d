//! Set and Bag: elements compared with `=:=` (so `1` and `1.0` are
//! distinct) and kept in the standard term order. A Bag maps each element to its count.

use crate::interp::error::ErrorKind;
use crate::interp::eval::charge::KEYED;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::{Key, Ref, Value};

use super::common::{arg, bag_from, elems_arg, expected, on_copy, set_from};
use super::stream;

type SetT = imbl::OrdSet<Key>;
type BagT = imbl::OrdMap<Key, usize>;

pub fn register(p: &mut Prims) {
    let c = "Set";
    p.add_class(c, "new", set_new);
    p.add_class(c, "new:", set_with_all);
    p.add_class(c, "withAll:", set_with_all);
    p.add(c, "fromList:", set_from_list);
    p.add(c, "includes:", set_includes);
    p.add(c, "add:", set_add);
    p.add(c, "remove:", set_remove);
    p.add(c, "union:", union);
    p.add(c, "intersection:", intersection);
    p.add(c, "difference:", difference);
    p.add(c, "isSubsetOf:", is_subset_of);
    p.add(c, "stream", stream_p);
    p.add(c, "addAll:", union);
    p.add(c, "remove:ifAbsent:", set_remove_if_absent);
    let c = "Bag";
    p.add_class(c, "new", bag_new);
    p.add_class(c, "new:", bag_with_all);
    p.add_class(c, "withAll:", bag_with_all);
    p.add(c, "occurrencesOf:", occurrences_of);
    p.add(c, "includes:", bag_includes);
    p.add(c, "add:", bag_add);
    p.add(c, "add:withCount:", bag_add_with_count);
    p.add(c, "remove:", bag_remove);
}

fn set_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<&'a Ref<SetT>, Unwind> {
    match v {
        Value::Set(s) => Ok(s),
        _ => Err(expected(ctx, sel, "a Set", v)),
    }
}

fn bag_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<&'a Ref<BagT>, Unwind> {
    match v {
        Value::Bag(b) => Ok(b),
        _ => Err(expected(ctx, sel, "a Bag", v)),
    }
}

/// A set argument: a Set as it is, any other collection converted.
fn set_arg(ctx: &mut Ctx, sel: &str, v: &Value) -> Result<SetT, Unwind> {
    match v {
        Value::Set(s) => Ok((**s).clone()),
        other => {
            let items = elems_arg(ctx, sel, other)?;
            ctx.charge(items.len().saturating_mul(KEYED))?;
            Ok(items.into_iter().map(Key).collect())
        }
    }
}

fn set_new(_: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::Set(Ref::new(SetT::new())))
}

fn set_with_all(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    let items = elems_arg(ctx, "withAll:", arg(args, 0))?;
    ctx.charge(items.len().saturating_mul(KEYED))?;
    Ok(set_from(items))
}

/// `aSet fromList: aList` answers `aList asSet`.
fn set_from_list(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    let items = elems_arg(ctx, "fromList:", arg(args, 0))?;
    ctx.charge(items.len().saturating_mul(KEYED))?;
    Ok(set_from(items))
}

fn set_includes(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = set_of(ctx, "includes:", recv)?;
    let x = arg(args, 0);
    if s.contains(&Key(x.clone())) {
        return Ok(Value::True);
    }
    // A class with its own `=`: equal elements need not be `=:=` (see `search_eq`).
    let eq = crate::interp::prims::search_eq::user_eq(x);
    if eq.is_some() {
        for k in s.clone().iter() {
            ctx.tick()?;
            if crate::interp::prims::search_eq::matches(ctx, eq, &k.0, x)? {
                return Ok(Value::True);
            }
        }
    }
    Ok(Value::False)
}

/// Set `add:` in place (see [`super::InPlaceFn`]).
pub(crate) fn set_add_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Set(s) => {
            let k = Key(arg(args, 0).clone());
            if !s.contains(&k) {
                Ref::make_mut(s).insert(k);
            }
        }
        other => return Err(expected(ctx, "add:", "a Set receiver", other)),
    }
    Ok(recv.clone())
}

/// Set `remove:` in place; removing an absent element answers the Set unchanged.
pub(crate) fn set_remove_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Set(s) => {
            let k = Key(arg(args, 0).clone());
            if s.contains(&k) {
                Ref::make_mut(s).remove(&k);
            }
        }
        other => return Err(expected(ctx, "remove:", "a Set receiver", other)),
    }
    Ok(recv.clone())
}

fn set_add(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(set_add_in_place, ctx, recv, args)
}

fn set_remove(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(set_remove_in_place, ctx, recv, args)
}

fn set_remove_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let s = set_of(ctx, "remove:ifAbsent:", recv)?;
    if s.contains(&Key(arg(args, 0).clone())) {
        set_remove(ctx, recv, args)
    } else {
        ctx.call_block(arg(args, 1), &[])
    }
}

fn union(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let a = set_of(ctx, "union:", recv)?;
    let b = set_arg(ctx, "union:", arg(args, 0))?;
    ctx.charge(b.len().saturating_mul(KEYED))?;
    Ok(Value::Set(Ref::new((**a).clone().union(b))))
}

fn intersection(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let a = set_of(ctx, "intersection:", recv)?;
    let b = set_arg(ctx, "intersection:", arg(args, 0))?;
    ctx.charge(b.len().saturating_mul(KEYED))?;
    Ok(Value::Set(Ref::new((**a).clone().intersection(b))))
}

fn difference(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let a = set_of(ctx, "difference:", recv)?;
    let b = set_arg(ctx, "difference:", arg(args, 0))?;
    ctx.charge(b.len().saturating_mul(KEYED))?;
    Ok(Value::Set(Ref::new((**a).clone().relative_complement(b))))
}

fn is_subset_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let a = set_of(ctx, "isSubsetOf:", recv)?;
    let b = set_arg(ctx, "isSubsetOf:", arg(args, 0))?;
    ctx.charge(b.len().saturating_mul(KEYED))?;
    Ok(Value::bool(a.is_subset(&b)))
}

fn stream_p(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    stream::stream_on(ctx, recv)
}

fn bag_new(_: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::Bag(Ref::new(BagT::new())))
}

fn bag_with_all(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    let items = elems_arg(ctx, "withAll:", arg(args, 0))?;
    ctx.charge(items.len().saturating_mul(KEYED))?;
    Ok(bag_from(items))
}

fn occurrences_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let b = bag_of(ctx, "occurrencesOf:", recv)?;
    Ok(Value::Int(
        b.get(&Key(arg(args, 0).clone())).copied().unwrap_or(0) as i64,
    ))
}

fn bag_includes(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let b = bag_of(ctx, "includes:", recv)?;
    let x = arg(args, 0);
    if b.contains_key(&Key(x.clone())) {
        return Ok(Value::True);
    }
    let eq = crate::interp::prims::search_eq::user_eq(x);
    if eq.is_some() {
        for k in b.clone().keys() {
            ctx.tick()?;
            if crate::interp::prims::search_eq::matches(ctx, eq, &k.0, x)? {
                return Ok(Value::True);
            }
        }
    }
    Ok(Value::False)
}

fn bag_add_n(ctx: &mut Ctx, recv: &mut Value, x: &Value, n: usize) -> EvalResult {
    match recv {
        Value::Bag(b) => {
            if n > 0 {
                *Ref::make_mut(b).entry(Key(x.clone())).or_insert(0) += n;
            }
        }
        other => return Err(expected(ctx, "add:", "a Bag receiver", other)),
    }
    Ok(recv.clone())
}

/// Bag `add:` in place.
pub(crate) fn bag_add_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    bag_add_n(ctx, recv, arg(args, 0), 1)
}

/// Bag `add:withCount:` in place; a negative count raises `user_error`.
pub(crate) fn bag_add_with_count_in_place(
    ctx: &mut Ctx,
    recv: &mut Value,
    args: &[Value],
) -> EvalResult {
    let n = match arg(args, 1) {
        Value::Int(n) if *n < 0 => {
            return Err(ctx.err(
                ErrorKind::UserError,
                format!("add:withCount: count must not be negative: {n}"),
            ))
        }
        Value::Int(n) => *n as usize,
        other => return Err(expected(ctx, "add:withCount:", "an Integer", other)),
    };
    bag_add_n(ctx, recv, arg(args, 0), n)
}

/// Bag `remove:` in place: one occurrence (absent: unchanged).
pub(crate) fn bag_remove_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Bag(b) => {
            let k = Key(arg(args, 0).clone());
            match b.get(&k).copied() {
                Some(1) => {
                    Ref::make_mut(b).remove(&k);
                }
                Some(n) => {
                    Ref::make_mut(b).insert(k, n - 1);
                }
                None => {}
            }
        }
        other => return Err(expected(ctx, "remove:", "a Bag receiver", other)),
    }
    Ok(recv.clone())
}

fn bag_add(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(bag_add_in_place, ctx, recv, args)
}

fn bag_add_with_count(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(bag_add_with_count_in_place, ctx, recv, args)
}

fn bag_remove(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(bag_remove_in_place, ctx, recv, args)
}
