//! Dictionary `#{ }`: keys compared with `=:=` and kept in the standard
//! term order; `at:put:`/`removeKey:`/`merge:` answer new Dictionaries;
//! `do:`, `collect:`, `select:`, `reject:` work on values and keep the keys.

use crate::interp::error::ErrorKind;
use crate::interp::eval::charge::{Meter, ELEM, KEYED};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::dict::{self as store, Dict};
use crate::value::{Ref, Value};

use super::common::{arg, expected, on_copy, test1};

pub fn register(p: &mut Prims) {
    let c = "Dictionary";
    p.add_class(c, "new", class_new);
    p.add_class(c, "new:", class_new_from);
    p.add_class(c, "withAll:", class_new_from);
    p.add(c, "keys", keys);
    p.add(c, "values", values);
    p.add(c, "at:", at);
    p.add(c, "at:ifAbsent:", at_if_absent);
    p.add(c, "at:ifPresent:", at_if_present);
    p.add(c, "at:put:", at_put);
    p.add(c, "removeKey:", remove_key);
    p.add(c, "includesKey:", includes_key);
    p.add(c, "merge:", merge);
    p.add(c, "collect:", collect);
    p.add(c, "select:", select);
    p.add(c, "reject:", reject);
    p.add(c, "doWithKey:", keys_and_values_do);
    p.add(c, "keysAndValuesDo:", keys_and_values_do);
    p.add(c, "keysDo:", keys_do);
    p.add(c, "valuesDo:", values_do);
    p.add(c, "associations", associations);
    p.add(c, "stream", no_stream);
    p.add(c, "at:ifPresent:ifAbsent:", at_if_present_if_absent);
    p.add(c, "associationsDo:", associations_do);
    p.add(c, "removeKey:ifAbsent:", remove_key_if_absent);
    p.add(c, "keyAtValue:", key_at_value);
    p.add(c, "keyAtValue:ifAbsent:", key_at_value_if_absent);
}

fn map_of<'a>(ctx: &Ctx, sel: &str, v: &'a Value) -> Result<&'a Ref<Dict>, Unwind> {
    match v {
        Value::Dict(d) => Ok(d),
        _ => Err(expected(ctx, sel, "a Dictionary", v)),
    }
}

fn class_new(_: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Ok(Value::Dict(Ref::new(Dict::new())))
}

/// `Dictionary new: aDictionary` (a copy, which for an immutable value is itself);
/// `withAll:` also accepts a collection of `{key, value}` Tuples or two-element Lists.
fn class_new_from(ctx: &mut Ctx, _: &Value, args: &[Value]) -> EvalResult {
    let a = arg(args, 0);
    if let Value::Dict(_) = a {
        return Ok(a.clone());
    }
    let Some(items) = super::common::elems(a) else {
        return Err(expected(ctx, "new:", "a Dictionary", a));
    };
    let mut m = Dict::new();
    let mut meter = Meter::default();
    for e in items {
        meter.step(ctx, KEYED)?;
        match &e {
            Value::Tuple(t) if t.len() == 2 => {
                m.insert(t[0].clone(), t[1].clone());
            }
            Value::List(l) if l.len() == 2 => {
                m.insert(l[0].clone(), l[1].clone());
            }
            Value::Array(l) if l.len() == 2 => {
                m.insert(l[0].clone(), l[1].clone());
            }
            _ => return Err(expected(ctx, "withAll:", "key/value pairs", &e)),
        }
    }
    Ok(Value::Dict(Ref::new(m)))
}

fn keys(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let m = map_of(ctx, "keys", recv)?;
    Ok(Value::List(Ref::new(
        ctx.collect_charged(m.keys().map(|k| k.to_value()), ELEM)?,
    )))
}

fn values(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let m = map_of(ctx, "values", recv)?;
    Ok(Value::List(Ref::new(
        ctx.collect_charged(m.values().cloned(), ELEM)?,
    )))
}

/// `key_error` for a missing key, with the Dictionary hint.
pub(crate) fn key_error(ctx: &mut Ctx, key: &Value) -> Unwind {
    match ctx.print_string(key) {
        Ok(k) => ctx.err_hint(
            ErrorKind::KeyError,
            format!("key not found: {}", crate::diagnostic::cap_quote(&k, 200)),
            "Use 'includesKey:' to test first, or 'at:ifAbsent:' to supply a default.",
        ),
        Err(e) => e,
    }
}

fn at(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "at:", recv)?;
    let k = arg(args, 0);
    match m.get(k) {
        Some(v) => Ok(v.clone()),
        None => Err(key_error(ctx, k)),
    }
}

fn at_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "at:ifAbsent:", recv)?;
    match m.get(arg(args, 0)) {
        Some(v) => Ok(v.clone()),
        None => ctx.call_block(arg(args, 1), &[]),
    }
}

/// `at: k ifPresent: [:v | …]`: the block's value when the key is present, else nil.
fn at_if_present(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "at:ifPresent:", recv)?;
    match m.get(arg(args, 0)) {
        Some(v) => {
            let v = v.clone();
            ctx.call_block(arg(args, 1), &[v])
        }
        None => Ok(Value::Nil),
    }
}

/// `at:put:` in place (see [`super::InPlaceFn`]).
pub(crate) fn at_put_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Dict(d) => {
            store::insert_shared(d, arg(args, 0).clone(), arg(args, 1).clone());
        }
        other => return Err(expected(ctx, "at:put:", "a Dictionary receiver", other)),
    }
    Ok(recv.clone())
}

/// `removeKey:` in place; a missing key is not an error.
pub(crate) fn remove_key_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    match recv {
        Value::Dict(d) => {
            store::remove_shared(d, arg(args, 0));
        }
        other => return Err(expected(ctx, "removeKey:", "a Dictionary receiver", other)),
    }
    Ok(recv.clone())
}

fn at_put(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(at_put_in_place, ctx, recv, args)
}

fn remove_key(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    on_copy(remove_key_in_place, ctx, recv, args)
}

fn includes_key(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "includesKey:", recv)?;
    Ok(Value::bool(m.contains_key(arg(args, 0))))
}

/// `merge:` — the argument's values win.
fn merge(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let a = map_of(ctx, "merge:", recv)?;
    let b = map_of(ctx, "merge:", arg(args, 0))?;
    ctx.charge(b.len().saturating_mul(KEYED))?;
    Ok(Value::Dict(Ref::new(a.merged(b))))
}

fn collect(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "collect:", recv)?.clone();
    let block = arg(args, 0);
    let mut out = Dict::new();
    for (k, v) in m.iter() {
        ctx.tick()?;
        out.insert(k.clone(), ctx.call_block(block, std::slice::from_ref(v))?);
    }
    Ok(Value::Dict(Ref::new(out)))
}

fn filter(ctx: &mut Ctx, sel: &str, recv: &Value, block: &Value, keep: bool) -> EvalResult {
    let m = map_of(ctx, sel, recv)?.clone();
    let mut out = Dict::new();
    for (k, v) in m.iter() {
        ctx.tick()?;
        if test1(ctx, sel, block, v)? == keep {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Dict(Ref::new(out)))
}

fn select(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    filter(ctx, "select:", recv, arg(args, 0), true)
}

fn reject(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    filter(ctx, "reject:", recv, arg(args, 0), false)
}

fn keys_and_values_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "keysAndValuesDo:", recv)?.clone();
    let block = arg(args, 0);
    for (k, v) in m.iter() {
        ctx.tick()?;
        ctx.call_block(block, &[k.clone(), v.clone()])?;
    }
    Ok(Value::Nil)
}

fn keys_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "keysDo:", recv)?.clone();
    let block = arg(args, 0);
    for k in m.keys() {
        ctx.tick()?;
        ctx.call_block(block, std::slice::from_ref(&*k))?;
    }
    Ok(Value::Nil)
}

fn values_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "valuesDo:", recv)?.clone();
    let block = arg(args, 0);
    for v in m.values() {
        ctx.tick()?;
        ctx.call_block(block, std::slice::from_ref(v))?;
    }
    Ok(Value::Nil)
}

/// `associations`: a List of `{key, value}` Tuples in key order.
fn associations(ctx: &mut Ctx, recv: &Value, _: &[Value]) -> EvalResult {
    let m = map_of(ctx, "associations", recv)?;
    let it = m
        .iter()
        .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]));
    Ok(Value::List(Ref::new(ctx.collect_charged(it, 2 * ELEM)?)))
}

fn at_if_present_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "at:ifPresent:ifAbsent:", recv)?;
    match m.get(arg(args, 0)) {
        Some(v) => {
            let v = v.clone();
            ctx.call_block(arg(args, 1), &[v])
        }
        None => ctx.call_block(arg(args, 2), &[]),
    }
}

/// `associationsDo: [:pair | …]` with `{key, value}` Tuples.
fn associations_do(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "associationsDo:", recv)?.clone();
    let block = arg(args, 0);
    for (k, v) in m.iter() {
        ctx.tick()?;
        ctx.call_block(block, &[Value::tuple(vec![k.clone(), v.clone()])])?;
    }
    Ok(Value::Nil)
}

/// `removeKey: k ifAbsent: aBlock`: the Dictionary without `k`, or the block's value.
fn remove_key_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "removeKey:ifAbsent:", recv)?;
    if m.contains_key(arg(args, 0)) {
        remove_key(ctx, recv, args)
    } else {
        ctx.call_block(arg(args, 1), &[])
    }
}

/// The first key (in key order) whose value equals `x`: `=:=`, or `x`'s own `=` when its class
/// defines one (see `search_eq`).
fn find_key(ctx: &mut Ctx, m: &Dict, x: &Value) -> Result<Option<Value>, Unwind> {
    let eq = crate::interp::prims::search_eq::user_eq(x);
    for (k, v) in m.iter() {
        ctx.tick()?;
        if crate::interp::prims::search_eq::matches(ctx, eq, v, x)? {
            return Ok(Some(k.clone()));
        }
    }
    Ok(None)
}

/// `keyAtValue: v`: the first key (in key order) whose value equals v, or nil.
fn key_at_value(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "keyAtValue:", recv)?.clone();
    Ok(find_key(ctx, &m, arg(args, 0))?.unwrap_or(Value::Nil))
}

fn key_at_value_if_absent(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let m = map_of(ctx, "keyAtValue:ifAbsent:", recv)?.clone();
    match find_key(ctx, &m, arg(args, 0))? {
        Some(k) => Ok(k),
        None => ctx.call_block(arg(args, 1), &[]),
    }
}

fn no_stream(ctx: &mut Ctx, _: &Value, _: &[Value]) -> EvalResult {
    Err(ctx.type_err("a Dictionary cannot be streamed"))
}
