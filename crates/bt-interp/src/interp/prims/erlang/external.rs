//! The `erlang` functions that see a value as an Erlang term: `term_to_binary/1,2`,
//! `binary_to_term/1,2` and `phash2/1,2`, and results that are improper lists
//! ([`improper`]). The term is the one the value is on the Erlang wire (the mapping in
//! docs/erlang-interop.md); the codec
//! that makes it lives above the interpreter and is reached through the installed
//! [`TermCodec`](crate::interp::distribution::TermCodec).

use super::phash;
use super::terms::{list_arg, Fail, R};
use crate::interp::distribution::{term_codec, TermCodec};
use crate::interp::eval::Ctx;
use crate::value::{Sym, Value};

fn codec(ctx: &Ctx) -> Result<&'static dyn TermCodec, Fail> {
    term_codec().ok_or_else(|| {
        Fail::Raised(ctx.err(
            crate::interp::error::ErrorKind::Other(Sym::new("undef")),
            "Erlang terms need the value codec, which this process has not installed",
        ))
    })
}

/// A failure of kind `badarg` with its own message.
fn badarg(ctx: &Ctx, mfa: &str, why: String) -> Fail {
    Fail::Raised(super::terms::runtime_error(
        ctx,
        Sym::new("badarg"),
        format!("{mfa}: badarg ({why})"),
        "an argument has the wrong type or value".to_string(),
        Some((
            Sym::new(mfa.split(['/', ':']).nth(1).unwrap_or("")),
            Sym::new("erlang"),
        )),
    ))
}

/// Charges what making `v`'s term (and its bytes) may allocate, before it is made: a term
/// node per value reached, and the bytes of Strings and Binaries twice (the term and the
/// output), counted once per path — a List holding one large String many times costs that
/// many copies, as the term does. The walk stops as soon as the sum is past any limit.
pub(super) fn charge_term(ctx: &mut Ctx, v: &Value) -> Result<(), Fail> {
    const NODE: usize = std::mem::size_of::<eetf::Term>() + 16;
    let cap = ctx
        .prog
        .max_allocation()
        .min(crate::memory::machine_memory());
    let mut total: usize = 0;
    let mut todo: Vec<Value> = vec![v.clone()];
    while let Some(v) = todo.pop() {
        total = total.saturating_add(NODE);
        let more = match &v {
            Value::Str(s) => 2 * s.len(),
            Value::Binary(b) => 2 * b.len(),
            Value::BigInt(b) => (b.bits() / 4) as usize,
            Value::List(l) => {
                todo.extend(l.iter().cloned());
                0
            }
            Value::Queue(l) => {
                todo.extend(l.iter().cloned());
                0
            }
            Value::Array(a) => {
                todo.extend(a.iter().cloned());
                0
            }
            Value::Tuple(t) => {
                todo.extend(t.iter().cloned());
                0
            }
            Value::Dict(d) => {
                for (k, x) in d.iter() {
                    todo.push((*k).clone());
                    todo.push(x.clone());
                }
                0
            }
            Value::Set(s) => s.len().saturating_mul(NODE),
            Value::Bag(b) => b.len().saturating_mul(NODE),
            Value::Object(o) => {
                todo.extend(o.fields.iter().cloned());
                0
            }
            _ => 0,
        };
        total = total.saturating_add(more);
        if total > cap {
            break;
        }
    }
    ctx.reserve(total).map_err(Fail::Raised)
}

/// The bytes of a binary argument.
fn bytes_arg(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Str(s) => Some(s.as_bytes()),
        Value::Binary(b) => Some(b),
        _ => None,
    }
}

fn sym_is(v: &Value, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if s.as_str() == name)
}

/// `term_to_binary/1,2`.
pub(super) fn term_to_binary(ctx: &mut Ctx, a: &[Value]) -> R {
    let mut minor = 1u8;
    let mut level = 0u8;
    if let [_, opts] = a {
        for o in list_arg(opts)? {
            match &o {
                Value::Tuple(t) if t.len() == 2 && sym_is(&t[0], "minor_version") => match &t[1] {
                    Value::Int(n @ 0..=2) => minor = *n as u8,
                    _ => return Err(Fail::Badarg),
                },
                v if sym_is(v, "deterministic") => {}
                Value::Tuple(t) if t.len() == 2 && sym_is(&t[0], "compressed") => match &t[1] {
                    Value::Int(n @ 0..=9) => level = *n as u8,
                    _ => return Err(Fail::Badarg),
                },
                v if sym_is(v, "compressed") => level = 6,
                _ => return Err(Fail::Badarg),
            }
        }
    }
    let c = codec(ctx)?;
    charge_term(ctx, &a[0])?;
    let t = c.to_term(ctx, &a[0])?;
    Ok(binary(c.compress(c.encode(&t, minor), level)))
}

/// A binary as bt holds it: a String when the bytes are UTF-8.
fn binary(bytes: Vec<u8>) -> Value {
    match String::from_utf8(bytes) {
        Ok(s) => Value::str(s),
        Err(e) => Value::Binary(std::sync::Arc::new(e.into_bytes())),
    }
}

/// `binary_to_term/1,2` (options `safe` and `used`).
pub(super) fn binary_to_term(ctx: &mut Ctx, a: &[Value]) -> R {
    let mfa = format!("erlang:binary_to_term/{}", a.len());
    let mut used = false;
    if let [_, opts] = a {
        for o in list_arg(opts)? {
            match &o {
                v if sym_is(v, "safe") => {}
                v if sym_is(v, "used") => used = true,
                _ => return Err(Fail::Badarg),
            }
        }
    }
    let bytes = bytes_arg(&a[0]).ok_or(Fail::Badarg)?;
    let c = codec(ctx)?;
    let decoded = c.decode(bytes, &mut |n| ctx.reserve(n))?;
    let Some((t, n)) = decoded else {
        return Err(badarg(
            ctx,
            &mfa,
            "not a term in the external term format".to_string(),
        ));
    };
    let v = c.value_of(ctx, &t)?;
    Ok(if used {
        Value::tuple(vec![v, Value::Int(n as i64)])
    } else {
        v
    })
}

/// `phash2/1,2`.
pub(super) fn phash2(ctx: &mut Ctx, a: &[Value]) -> R {
    let mfa = format!("erlang:phash2/{}", a.len());
    let range = match a {
        [_] => None,
        [_, Value::Int(r)] if (1..=1 << 32).contains(r) => Some(*r as u64),
        _ => return Err(Fail::Badarg),
    };
    let c = codec(ctx)?;
    charge_term(ctx, &a[0])?;
    let t = c.to_term(ctx, &a[0])?;
    let h = match range {
        None => phash::phash2(&t),
        Some(r) => phash::phash2_range(&t, r),
    };
    match h {
        Ok(h) => Ok(Value::Int(h as i64)),
        Err(phash::Unhashable(what)) => Err(badarg(
            ctx,
            &mfa,
            format!(
                "the term holds {what}, whose hash depends on the code that made it; \
                 bt hashes numbers, atoms, binaries, lists, tuples, maps, pids, ports and \
                 references"
            ),
        )),
    }
}

/// The list of `elements` followed by `tail` (what `++` makes): a List when `tail` is a
/// list, `tail` itself when there are no elements, else an improper list — an opaque
/// value, as such a term from a peer is, printing as `[1|5]`.
pub(super) fn improper(ctx: &mut Ctx, mut elements: Vec<Value>, tail: &Value) -> R {
    if let Ok(rest) = list_arg(tail) {
        elements.extend(rest);
        return Ok(Value::list(elements));
    }
    if elements.is_empty() {
        return Ok(tail.clone());
    }
    let c = codec(ctx)?;
    charge_term(ctx, &Value::list(elements.clone()))?;
    charge_term(ctx, tail)?;
    let mut terms = Vec::with_capacity(elements.len());
    for e in &elements {
        terms.push(c.to_term(ctx, e)?);
    }
    let t = match c.to_term(ctx, tail)? {
        // `[1 | [2 | 3]]` is `[1, 2 | 3]`.
        eetf::Term::ImproperList(l) => {
            terms.extend(l.elements);
            eetf::Term::from(eetf::ImproperList::from((terms, *l.last)))
        }
        last => eetf::Term::from(eetf::ImproperList::from((terms, last))),
    };
    Ok(c.value_of(ctx, &t)?)
}

/// The elements and tail of an improper list (the opaque value [`improper`] answers), as
/// values; `None` for any other value.
pub(super) fn improper_parts(ctx: &mut Ctx, v: &Value) -> Option<(Vec<Value>, Value)> {
    if !matches!(v, Value::Native(_)) {
        return None;
    }
    let c = term_codec()?;
    let eetf::Term::ImproperList(l) = c.to_term(ctx, v).ok()? else {
        return None;
    };
    let mut elements = Vec::with_capacity(l.elements.len());
    for t in &l.elements {
        elements.push(c.value_of(ctx, t).ok()?);
    }
    Some((elements, c.value_of(ctx, &l.last).ok()?))
}
