//! The Collection protocol for every built-in collection, over
//! [`elems`]: iteration, species-preserving `collect:`/`select:`/`reject:`, searching,
//! folding and conversions. Dictionary overrides the selectors whose answers keep keys.

use std::cmp::Ordering;

use crate::interp::error::ErrorKind;
use crate::interp::eval::charge::{BUILT_EVERY, ELEM, KEYED};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::order::{num_cmp, rank, term_cmp};
use crate::value::{Ref, Value};

use super::common::bag_from;
use super::common::{
    arg, class_name, elems, empty_err, expected, sels, size_of, species_of, test1, Species,
};

/// Largest up-front allocation for a result (an Interval may claim a huge size).
const CAPACITY_HINT_MAX: usize = 1 << 16;

/// Every built-in collection class.
pub const ALL: [&str; 8] = [
    "List",
    "Array",
    "Set",
    "Bag",
    "Queue",
    "Tuple",
    "Interval",
    "Dictionary",
];

/// Selectors a collection's own module registers instead of the generic primitive.
const OWN: &[(&str, &str)] = &[
    ("Dictionary", "collect:"),
    ("Dictionary", "select:"),
    ("Dictionary", "reject:"),
    ("Set", "includes:"),
    ("Bag", "includes:"),
    ("Bag", "occurrencesOf:"),
    ("Interval", "includes:"),
];

pub fn register(p: &mut Prims) {
    for c in ALL {
        let mut p = Generic { p, c };
        let p = &mut p;
        p.add(c, "size", size);
        p.add(c, "isEmpty", is_empty);
        p.add(c, "isNotEmpty", not_empty);
        p.add(c, "notEmpty", not_empty);
        p.add(c, "do:", do_);
        p.add(c, "collect:", collect);
        p.add(c, "select:", select);
        p.add(c, "reject:", reject);
        p.add(c, "detect:", detect);
        p.add(c, "detect:ifNone:", detect_if_none);
        p.add(c, "inject:into:", inject_into);
        p.add(c, "includes:", includes);
        p.add(c, "anySatisfy:", any_satisfy);
        p.add(c, "allSatisfy:", all_satisfy);
        p.add(c, "noneSatisfy:", none_satisfy);
        p.add(c, "count:", count);
        p.add(c, "sum", sum);
        p.add(c, "max", max);
        p.add(c, "min", min);
        p.add(c, "average", average);
        p.add(c, "anyOne", any_one);
        p.add(c, "eachWithIndex:", each_with_index);
        p.add(c, "doWithIndex:", each_with_index);
        p.add(c, "withIndexDo:", each_with_index);
        p.add(c, "contains:", any_satisfy);
        p.add(c, "isEmptyOrNil", is_empty);
        p.add(c, "occurrencesOf:", occurrences_of);
        p.add(c, "detectMax:", detect_max);
        p.add(c, "detectMin:", detect_min);
        p.add(c, "sum:", sum_of);
        p.add(c, "max:", max_of);
        p.add(c, "min:", min_of);
        p.add(c, "do:separatedBy:", do_separated_by);
        p.add(c, "asList", as_list);
        p.add(c, "asArray", as_array);
        p.add(c, "asSet", as_set);
        p.add(c, "asBag", as_bag);
        p.add(c, "asString", as_string);
        p.add(c, "species", species);
        p.add(c, "parallelCollect:", parallel_collect);
        p.add(c, "parallelCollect:maxConcurrency:", parallel_collect);
    }
}

/// Registers the generic primitives of one class, leaving out its [`OWN`] selectors.
struct Generic<'a> {
    p: &'a mut Prims,
    c: &'static str,
}

impl Generic<'_> {
    fn add(&mut self, c: &'static str, sel: &'static str, f: crate::interp::eval::PrimFn) {
        if !OWN.contains(&(self.c, sel)) {
            self.p.add(c, sel, f);
        }
    }
}

/// The elements of a receiver this module was registered on.
fn items<'a>(ctx: &Ctx, recv: &'a Value) -> Result<Box<dyn Iterator<Item = Value> + 'a>, Unwind> {
    elems(recv).ok_or_else(|| expected(ctx, "Collection", "a collection receiver", recv))
}

fn size(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    if let Value::Interval(iv) = recv {
        return Ok(super::progression::size_value(iv));
    }
    match size_of(recv) {
        Some(n) => Ok(Value::Int(n as i64)),
        None => Err(expected(ctx, "size", "a collection receiver", recv)),
    }
}

fn is_empty(_: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::bool(size_of(recv) == Some(0)))
}

fn not_empty(_: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::bool(size_of(recv).is_some_and(|n| n > 0)))
}

fn do_(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let block = arg(args, 0);
    if let Value::Block(b) = block {
        // A List or Array and a block: the elements by reference, each cloned once into the
        // block's parameter slot (no boxed iterator, no second count per element).
        match recv {
            Value::List(l) => {
                // Leaf by leaf, in order: a slice walk instead of a tree lookup per element.
                for leaf in l.leaves() {
                    for e in leaf {
                        ctx.tick()?;
                        ctx.invoke_block(b, std::slice::from_ref(e))
                            .map_err(|u| *u)?;
                    }
                }
                return Ok(Value::Nil);
            }
            Value::Array(a) => {
                for e in a.iter() {
                    ctx.tick()?;
                    ctx.invoke_block(b, std::slice::from_ref(e))
                        .map_err(|u| *u)?;
                }
                return Ok(Value::Nil);
            }
            _ => {}
        }
    }
    for e in items(ctx, recv)? {
        ctx.tick()?;
        ctx.call_block(block, &[e])?;
    }
    Ok(Value::Nil)
}

/// Applies `block` to every element, in order.
pub(crate) fn map_all(ctx: &mut Ctx, recv: &Value, block: &Value) -> Result<Vec<Value>, Unwind> {
    let n = size_of(recv).unwrap_or(0);
    ctx.reserve(n.saturating_mul(ELEM))?;
    let mut out = Vec::with_capacity(n.min(CAPACITY_HINT_MAX));
    for e in items(ctx, recv)? {
        ctx.tick()?;
        out.push(ctx.call_block(block, &[e])?);
    }
    Ok(out)
}

fn collect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let out = map_all(ctx, recv, arg(args, 0))?;
    Ok(species_of(recv).build(out))
}

/// The elements for which `block` answers `keep`.
pub(crate) fn filter(
    ctx: &mut Ctx,
    sel: &str,
    recv: &Value,
    block: &Value,
    keep: bool,
) -> Result<Vec<Value>, Unwind> {
    let mut out = Vec::new();
    for e in items(ctx, recv)? {
        ctx.tick()?;
        if test1(ctx, sel, block, &e)? == keep {
            out.push(e);
            if out.len() % BUILT_EVERY == 0 {
                ctx.built(out.len().saturating_mul(ELEM))?;
            }
        }
    }
    Ok(out)
}

fn select(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let out = filter(ctx, "select:", recv, arg(args, 0), true)?;
    Ok(species_of(recv).build(out))
}

fn reject(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let out = filter(ctx, "reject:", recv, arg(args, 0), false)?;
    Ok(species_of(recv).build(out))
}

/// The first element satisfying `block`.
fn find(ctx: &mut Ctx, sel: &str, recv: &Value, block: &Value) -> Result<Option<Value>, Unwind> {
    for e in items(ctx, recv)? {
        ctx.tick()?;
        if test1(ctx, sel, block, &e)? {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

/// `not_found` for `detect:`.
pub(crate) fn not_found(ctx: &Ctx) -> Unwind {
    ctx.err_hint(
        ErrorKind::NotFound,
        "not found: no element matches",
        "Use detect:ifNone: to supply a default",
    )
}

fn detect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    find(ctx, "detect:", recv, arg(args, 0))?.ok_or_else(|| not_found(ctx))
}

fn detect_if_none(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    match find(ctx, "detect:ifNone:", recv, arg(args, 0))? {
        Some(e) => Ok(e),
        None => ctx.call_block(arg(args, 1), &[]),
    }
}

fn inject_into(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let block = arg(args, 1);
    let mut acc = arg(args, 0).clone();
    for e in items(ctx, recv)? {
        ctx.tick()?;
        acc = ctx.call_block_moving(block, &mut [acc, e])?;
    }
    Ok(acc)
}

fn includes(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let x = arg(args, 0);
    let eq = crate::interp::prims::search_eq::user_eq(x);
    let mut m = crate::interp::eval::charge::Meter::default();
    for e in items(ctx, recv)? {
        m.step(ctx, ELEM)?;
        if crate::interp::prims::search_eq::matches(ctx, eq, &e, x)? {
            return Ok(Value::True);
        }
    }
    m.finish(ctx)?;
    Ok(Value::False)
}

fn occurrences_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let x = arg(args, 0);
    let mut m = crate::interp::eval::charge::Meter::default();
    let mut n = 0i64;
    let eq = crate::interp::prims::search_eq::user_eq(x);
    for e in items(ctx, recv)? {
        m.step(ctx, ELEM)?;
        n += crate::interp::prims::search_eq::matches(ctx, eq, &e, x)? as i64;
    }
    m.finish(ctx)?;
    Ok(Value::Int(n))
}

fn any_satisfy(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    Ok(Value::bool(
        find(ctx, "anySatisfy:", recv, arg(args, 0))?.is_some(),
    ))
}

fn all_satisfy(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let block = arg(args, 0);
    for e in items(ctx, recv)? {
        ctx.tick()?;
        if !test1(ctx, "allSatisfy:", block, &e)? {
            return Ok(Value::False);
        }
    }
    Ok(Value::True)
}

fn none_satisfy(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    Ok(Value::bool(
        find(ctx, "noneSatisfy:", recv, arg(args, 0))?.is_none(),
    ))
}

fn count(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let n = filter(ctx, "count:", recv, arg(args, 0), true)?.len();
    Ok(Value::Int(n as i64))
}

/// `a + b` with fast paths for machine integers and floats, else a real send (so BigInts,
/// faults and user numbers behave as everywhere else).
pub(crate) fn add(ctx: &mut Ctx, a: &Value, b: &Value) -> EvalResult {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            if let Some(s) = x.checked_add(*y) {
                return Ok(Value::Int(s));
            }
        }
        (Value::Float(x), Value::Float(y)) if (x.get() + y.get()).is_finite() => {
            return Ok(Value::float(x.get() + y.get()));
        }
        (Value::Int(x), Value::Float(y)) if (*x as f64 + y.get()).is_finite() => {
            return Ok(Value::float(*x as f64 + y.get()));
        }
        (Value::Float(x), Value::Int(y)) if (x.get() + *y as f64).is_finite() => {
            return Ok(Value::float(x.get() + *y as f64));
        }
        _ => {}
    }
    ctx.send(a, sels().plus, std::slice::from_ref(b))
}

fn sum(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let mut acc = Value::Int(0);
    for e in items(ctx, recv)? {
        ctx.tick()?;
        acc = add(ctx, &acc, &e)?;
    }
    Ok(acc)
}

/// `sum: [:e | …]`: the sum of the block's values (0 when empty).
fn sum_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let block = arg(args, 0);
    let mut acc = Value::Int(0);
    for e in items(ctx, recv)? {
        ctx.tick()?;
        let x = ctx.call_block(block, &[e])?;
        acc = add(ctx, &acc, &x)?;
    }
    Ok(acc)
}

/// `max: [:e | …]` / `min:`: the largest / smallest of the block's values.
fn extreme_of(ctx: &mut Ctx, recv: &Value, block: &Value, want_max: bool) -> EvalResult {
    let mapped = Value::list(map_all(ctx, recv, block)?);
    extreme(ctx, &mapped, want_max)
}

fn max_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    extreme_of(ctx, recv, arg(args, 0), true)
}

fn min_of(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    extreme_of(ctx, recv, arg(args, 0), false)
}

fn average(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let n = size_of(recv).unwrap_or(0);
    if n == 0 {
        return Err(empty_err(ctx, &class_name(ctx, recv)));
    }
    let total = sum(ctx, recv, args)?;
    let avg = ctx.send(&total, sels().slash, &[Value::Int(n as i64)])?;
    Ok(match avg {
        Value::Int(i) => Value::float(i as f64),
        other => other,
    })
}

fn is_number(v: &Value) -> bool {
    rank(v) == 1
}

/// Whether built-in ordering applies (everything but user/library instances).
fn builtin_ordered(v: &Value) -> bool {
    !matches!(v, Value::Object(_))
}

/// Are `a` and `b` ordered by term order: both built-in values, or an instance and a
/// built-in value (mixed kinds: `#((Duration seconds: 1), (Result ok: 1)) sort`)?
/// Two instances compare through their own `<=` / `<`.
#[inline]
fn by_term_order(a: &Value, b: &Value) -> bool {
    builtin_ordered(a) || builtin_ordered(b)
}

/// The ordering `sort`, `max` and `min` use: numbers numerically, other built-in values and
/// mixed kinds by term order (Strings and Symbols by code points), two instances through
/// `<=`. Answers "may `a` precede `b`".
pub(crate) fn precedes(ctx: &mut Ctx, a: &Value, b: &Value) -> Result<bool, Unwind> {
    if is_number(a) && is_number(b) {
        return Ok(num_cmp(a, b) != Ordering::Greater);
    }
    if by_term_order(a, b) {
        return Ok(term_cmp(a, b) != Ordering::Greater);
    }
    let r = ctx.send(a, sels().le, std::slice::from_ref(b))?;
    super::common::truth(ctx, "<=", &r)
}

/// Strictly before (for `max`/`min`): `a < b`.
fn before(ctx: &mut Ctx, a: &Value, b: &Value) -> Result<bool, Unwind> {
    if is_number(a) && is_number(b) {
        return Ok(num_cmp(a, b) == Ordering::Less);
    }
    if by_term_order(a, b) {
        return Ok(term_cmp(a, b) == Ordering::Less);
    }
    let r = ctx.send(a, sels().lt, std::slice::from_ref(b))?;
    super::common::truth(ctx, "<", &r)
}

fn extreme(ctx: &mut Ctx, recv: &Value, want_max: bool) -> EvalResult {
    let mut best: Option<Value> = None;
    for e in items(ctx, recv)? {
        ctx.tick()?;
        best = Some(match best {
            None => e,
            Some(b) => {
                let better = if want_max {
                    before(ctx, &b, &e)?
                } else {
                    before(ctx, &e, &b)?
                };
                if better {
                    e
                } else {
                    b
                }
            }
        });
    }
    best.ok_or_else(|| empty_err(ctx, &class_name(ctx, recv)))
}

/// `detectMax:` / `detectMin:`: the element whose key (the block's answer) is largest /
/// smallest; nil when empty.
fn detect_extreme(ctx: &mut Ctx, recv: &Value, block: &Value, want_max: bool) -> EvalResult {
    let mut best: Option<(Value, Value)> = None;
    for e in items(ctx, recv)? {
        ctx.tick()?;
        let k = ctx.call_block(block, std::slice::from_ref(&e))?;
        best = Some(match best {
            None => (e, k),
            Some((be, bk)) => {
                let better = if want_max {
                    before(ctx, &bk, &k)?
                } else {
                    before(ctx, &k, &bk)?
                };
                if better {
                    (e, k)
                } else {
                    (be, bk)
                }
            }
        });
    }
    Ok(best.map(|b| b.0).unwrap_or(Value::Nil))
}

fn detect_max(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    detect_extreme(ctx, recv, arg(args, 0), true)
}

fn detect_min(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    detect_extreme(ctx, recv, arg(args, 0), false)
}

fn max(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    extreme(ctx, recv, true)
}

fn min(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    extreme(ctx, recv, false)
}

fn any_one(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let first = items(ctx, recv)?.next();
    first.ok_or_else(|| empty_err(ctx, &class_name(ctx, recv)))
}

fn each_with_index(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let block = arg(args, 0);
    for (i, e) in items(ctx, recv)?.enumerate() {
        ctx.tick()?;
        ctx.call_block(block, &[e, Value::Int(i as i64 + 1)])?;
    }
    Ok(Value::Nil)
}

fn do_separated_by(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let (block, sep) = (arg(args, 0), arg(args, 1));
    for (i, e) in items(ctx, recv)?.enumerate() {
        ctx.tick()?;
        if i > 0 {
            ctx.call_block(sep, &[])?;
        }
        ctx.call_block(block, &[e])?;
    }
    Ok(Value::Nil)
}

fn as_list(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    if let Value::List(_) = recv {
        return Ok(recv.clone());
    }
    let it = items(ctx, recv)?;
    Ok(Value::List(Ref::new(ctx.collect_charged(it, ELEM)?)))
}

fn as_array(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    match recv {
        Value::Array(_) => Ok(recv.clone()),
        Value::List(l) => {
            ctx.charge(l.len().saturating_mul(ELEM))?;
            Ok(Value::Array(Ref::new(l.iter().cloned().collect())))
        }
        _ => {
            let it = items(ctx, recv)?;
            let v = ctx.collect_vec_charged(it, ELEM)?;
            Ok(Value::Array(Ref::new(v.into())))
        }
    }
}

fn as_set(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    match recv {
        Value::Set(_) => Ok(recv.clone()),
        _ => {
            let it = items(ctx, recv)?;
            let v = ctx.collect_vec_charged(it, KEYED)?;
            Ok(Species::Set.build(v))
        }
    }
}

fn as_bag(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    match recv {
        Value::Bag(_) => Ok(recv.clone()),
        _ => {
            let it = items(ctx, recv)?;
            let v = ctx.collect_vec_charged(it, KEYED)?;
            Ok(bag_from(v))
        }
    }
}

fn as_string(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::str(ctx.print_string(recv)?))
}

fn species(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let name = match recv {
        Value::Dict(_) => "Dictionary",
        _ => species_of(recv).class_name(),
    };
    ctx.class_named(name).map(Value::Class).ok_or_else(|| {
        ctx.err(
            ErrorKind::ClassNotFound,
            format!("Class '{name}' not found"),
        )
    })
}

/// `parallelCollect:` (and `…maxConcurrency:`): one process per element, see
/// `prims::parallel_collect`.
fn parallel_collect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let limit = match args.get(1) {
        Some(n) => crate::interp::prims::parallel_collect::limit_arg(ctx, n)?,
        None => usize::MAX,
    };
    let elems: Vec<Value> = items(ctx, recv)?.collect();
    crate::interp::prims::parallel_collect::collect(ctx, elems, arg(args, 0), limit)
}
