//! List/Array primitives that build a new sequence from the whole receiver: pairwise and
//! indexed collects, reversal, `unique`, `takeWhile:`/`dropWhile:`, flattening, `++` and
//! `addAll:`, `from:to:`, `zip:`, grouping and partitioning, `intersperse:`, `join`/`join:`.
//! Registered by `seq::register` with the rest.

use crate::interp::eval::charge::{Meter, ELEM, KEYED};
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::{Key, Ref, Value};

use super::super::common::{arg, elems_arg, expected, test1};
use super::*;

/// `with: other collect: [:a :b | …]`; collections of different sizes raise `user_error`
/// (as Pharo's `errorSizeMismatch`).
pub(super) fn with_collect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "with:collect:", recv)?;
    let other = elems_arg(ctx, "with:collect:", arg(args, 0))?;
    if v.len() != other.len() {
        let msg = format!(
            "with:collect: needs collections of the same size ({} and {})",
            v.len(),
            other.len()
        );
        return Err(ctx.err(crate::interp::error::ErrorKind::UserError, msg));
    }
    let block = arg(args, 1);
    let mut out = Vector::new();
    for (a, b) in v.iter().zip(other) {
        ctx.tick()?;
        out.push_back(ctx.call_block(block, &[a.clone(), b])?);
    }
    Ok(same_kind(recv, out))
}

/// `collectWithIndex: [:e :i | …]`.
pub(super) fn collect_with_index(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "collectWithIndex:", recv)?;
    let block = arg(args, 0);
    let mut out = Vector::new();
    for (i, e) in v.iter().enumerate() {
        ctx.tick()?;
        out.push_back(ctx.call_block(block, &[e.clone(), Value::Int(i as i64 + 1)])?);
    }
    Ok(same_kind(recv, out))
}

pub(super) fn reversed(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "reversed", recv)?;
    pay(ctx, v.len())?;
    Ok(same_kind(recv, v.iter().rev().cloned().collect()))
}

pub(super) fn reverse_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "reverseDo:", recv)?;
    let block = arg(args, 0);
    for e in v.iter().rev() {
        ctx.tick()?;
        ctx.call_block(block, std::slice::from_ref(e))?;
    }
    Ok(Value::Nil)
}

pub(super) fn unique(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "unique", recv)?;
    ctx.charge(v.len().saturating_mul(KEYED))?;
    let set: imbl::OrdSet<Key> = v.iter().cloned().map(Key).collect();
    Ok(same_kind(recv, set.into_iter().map(|k| k.0).collect()))
}

pub(super) fn take_while(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "takeWhile:", recv)?;
    pay_array(ctx, recv)?;
    let block = arg(args, 0);
    let mut n = 0;
    for e in v.iter() {
        ctx.tick()?;
        if !test1(ctx, "takeWhile:", block, e)? {
            break;
        }
        n += 1;
    }
    Ok(same_kind(recv, v.take(n)))
}

pub(super) fn drop_while(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "dropWhile:", recv)?;
    pay_array(ctx, recv)?;
    let block = arg(args, 0);
    let mut n = 0;
    for e in v.iter() {
        ctx.tick()?;
        if !test1(ctx, "dropWhile:", block, e)? {
            break;
        }
        n += 1;
    }
    Ok(same_kind(recv, v.skip(n)))
}

/// Appends `x` to `out`, splicing it when it is a List or Array. Answers the elements it
/// added: each is paid for, as the result holds its own copy of them (a List whose
/// elements are one shared List many times over flattens to all of them).
pub(super) fn splice(out: &mut Vector, x: Value) -> usize {
    match &x {
        Value::List(l) => {
            let n = l.len();
            out.append((**l).clone());
            n
        }
        Value::Array(a) => {
            out.extend(a.iter().cloned());
            a.len()
        }
        _ => {
            out.push_back(x);
            1
        }
    }
}

pub(super) fn flatten(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "flatten", recv)?;
    let mut out = Vector::new();
    let mut m = Meter::default();
    for e in v.iter() {
        let n = splice(&mut out, e.clone());
        m.step(ctx, n.saturating_mul(ELEM))?;
        ctx.built(out.len().saturating_mul(ELEM))?;
    }
    m.finish(ctx)?;
    pay_array(ctx, recv)?;
    Ok(same_kind(recv, out))
}

pub(super) fn flat_map(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "flatMap:", recv)?;
    let block = arg(args, 0);
    let mut out = Vector::new();
    for e in v.iter() {
        ctx.tick()?;
        let r = ctx.call_block(block, std::slice::from_ref(e))?;
        let n = splice(&mut out, r);
        ctx.charge(n.saturating_mul(ELEM))?;
        ctx.built(out.len().saturating_mul(ELEM))?;
    }
    Ok(same_kind(recv, out))
}

/// `++`: two Lists or two Arrays; any other pairing raises `type_error`.
pub(super) fn concat(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    match (recv, arg(args, 0)) {
        (Value::List(a), Value::List(b)) => {
            let mut v = (**a).clone();
            v.append((**b).clone());
            Ok(same_kind(recv, v))
        }
        (Value::Array(a), Value::Array(b)) => {
            pay(ctx, a.len().saturating_add(b.len()))?;
            let mut v = Vec::with_capacity(a.len() + b.len());
            v.extend(a.iter().cloned());
            v.extend(b.iter().cloned());
            Ok(Value::Array(Ref::new(v.into())))
        }
        (_, other) => {
            let what = if matches!(recv, Value::Array(_)) {
                "an Array"
            } else {
                "a List"
            };
            Err(expected(ctx, "++", what, other))
        }
    }
}

pub(super) fn add_all(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "addAll:", recv)?;
    let more = elems_arg(ctx, "addAll:", arg(args, 0))?;
    pay(ctx, more.len())?;
    pay_array(ctx, recv)?;
    let mut out = v.to_vector();
    out.extend(more);
    Ok(same_kind(recv, out))
}

/// `from: start to: end` (1-based, inclusive): start < 1 raises `index_out_of_bounds`, end is
/// clamped, end < start answers an empty collection.
pub(super) fn from_to(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "from:to:", recv)?;
    pay_array(ctx, recv)?;
    let start = match arg(args, 0) {
        Value::Int(i) => *i,
        other => return Err(expected(ctx, "from:to:", "an Integer", other)),
    };
    let end = match arg(args, 1) {
        Value::Int(i) => *i,
        other => return Err(expected(ctx, "from:to:", "an Integer", other)),
    };
    if start < 1 {
        return Err(oob_err(ctx, start, v.len()));
    }
    let end = end.min(v.len() as i64);
    if end < start {
        return Ok(same_kind(recv, Vector::new()));
    }
    let (s, e) = (start as usize - 1, end as usize);
    Ok(same_kind(recv, v.skip(s).take(e - s)))
}

/// The bytes of a two-element List beyond its slot in the result: the shared header and
/// the Vector with its two elements.
const PAIR_BYTES: usize =
    2 * std::mem::size_of::<usize>() + std::mem::size_of::<Vector>() + 2 * ELEM;

pub(super) fn zip(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "zip:", recv)?;
    let other = elems_arg(ctx, "zip:", arg(args, 0))?;
    let n = other.len().min(v.len());
    pay(ctx, n.saturating_mul(2))?;
    // Each pair is a List of its own (its header and two elements), reserved before any is
    // built: pairs take several times the bytes of the two collections zipped.
    ctx.reserve(n.saturating_mul(ELEM + PAIR_BYTES))?;
    let out: Vector = v
        .iter()
        .zip(other)
        .map(|(a, b)| Value::list([a.clone(), b]))
        .collect();
    Ok(Value::List(Ref::new(out)))
}

pub(super) fn group_by(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "groupBy:", recv)?;
    let block = arg(args, 0);
    let mut groups: imbl::OrdMap<Key, Vector> = imbl::OrdMap::new();
    for e in v.iter() {
        ctx.tick()?;
        let k = ctx.call_block(block, std::slice::from_ref(e))?;
        groups.entry(Key(k)).or_default().push_back(e.clone());
    }
    let out: crate::value::dict::Dict = groups
        .into_iter()
        .map(|(k, g)| (k.0, same_kind(recv, g)))
        .collect();
    Ok(Value::Dict(Ref::new(out)))
}

pub(super) fn partition(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "partition:", recv)?;
    let block = arg(args, 0);
    let (mut yes, mut no) = (Vector::new(), Vector::new());
    for e in v.iter() {
        ctx.tick()?;
        if test1(ctx, "partition:", block, e)? {
            yes.push_back(e.clone());
        } else {
            no.push_back(e.clone());
        }
    }
    Ok(super::super::common::dict_from_pairs([
        (Value::str("matching"), same_kind(recv, yes)),
        (Value::str("nonMatching"), same_kind(recv, no)),
    ]))
}

pub(super) fn intersperse(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "intersperse:", recv)?;
    let sep = arg(args, 0);
    pay(ctx, v.len().saturating_mul(2))?;
    pay_array(ctx, recv)?;
    let mut out = Vector::new();
    for (i, e) in v.iter().enumerate() {
        if i > 0 {
            out.push_back(sep.clone());
        }
        out.push_back(e.clone());
    }
    Ok(same_kind(recv, out))
}

pub(super) fn keys_and_values_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "keysAndValuesDo:", recv)?;
    let block = arg(args, 0);
    for (i, e) in v.iter().enumerate() {
        ctx.tick()?;
        ctx.call_block(block, &[Value::Int(i as i64 + 1), e.clone()])?;
    }
    Ok(Value::Nil)
}
/// The text of a `join` element: a String itself, anything else its displayString.
pub(super) fn piece(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        other => ctx.display_string(other),
    }
}

pub(super) fn join(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "join", recv)?;
    let mut out = String::new();
    let mut m = Meter::default();
    for e in v.iter() {
        let p = piece(ctx, e)?;
        m.step(ctx, ELEM + p.len())?;
        out.push_str(&p);
    }
    m.finish(ctx)?;
    Ok(Value::str(out))
}

pub(super) fn join_with(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let v = vec_of(ctx, "join:", recv)?;
    let sep = piece(ctx, arg(args, 0))?;
    let mut out = String::new();
    let mut m = Meter::default();
    for (i, e) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        let p = piece(ctx, e)?;
        m.step(ctx, ELEM + sep.len() + p.len())?;
        out.push_str(&p);
    }
    m.finish(ctx)?;
    Ok(Value::str(out))
}
