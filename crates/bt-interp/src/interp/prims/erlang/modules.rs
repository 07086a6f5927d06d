//! `erlang`, `math` and `timer`.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use super::terms::{
    atom, chardata, charlist, fun, int_arg, is_int, is_num, list, list_arg, num_f64, Fail, R,
};
use crate::interp::block_code::ClosureExt;
use crate::interp::eval::{Ctx, Unwind};
use crate::value::{Sym, Value};

/// Whether bt implements (some of) `module`.
pub(super) fn known(module: &str) -> bool {
    matches!(
        module,
        "erlang"
            | "lists"
            | "maps"
            | "string"
            | "binary"
            | "math"
            | "timer"
            | "unicode"
            | "crypto"
            | "base64"
            | "proplists"
            | "os"
            | "calendar"
            | "io"
            | "io_lib"
    )
}

fn int_value(b: BigInt) -> Value {
    match b.to_i64() {
        Some(i) => Value::Int(i),
        None => Value::BigInt(crate::value::Ref::new(b)),
    }
}

fn big(v: &Value) -> Option<BigInt> {
    match v {
        Value::Int(i) => Some(BigInt::from(*i)),
        Value::BigInt(b) => Some((**b).clone()),
        _ => None,
    }
}

fn float_to_int(x: f64) -> Result<Value, Fail> {
    if !x.is_finite() {
        return Err(Fail::Badarg);
    }
    if x.abs() < 9.0e18 {
        return Ok(Value::Int(x as i64));
    }
    num_bigint::BigInt::from_f64_lossy(x)
        .map(int_value)
        .ok_or(Fail::Badarg)
}

trait FromF64 {
    fn from_f64_lossy(x: f64) -> Option<BigInt>;
}
impl FromF64 for BigInt {
    fn from_f64_lossy(x: f64) -> Option<BigInt> {
        num_traits::FromPrimitive::from_f64(x)
    }
}

fn tuple_items(v: &Value) -> Result<&Vec<Value>, Fail> {
    match v {
        Value::Tuple(t) => Ok(t),
        _ => Err(Fail::Badarg),
    }
}

fn is_list(v: &Value) -> bool {
    matches!(v, Value::List(_) | Value::Array(_))
}

fn is_atom(v: &Value) -> bool {
    matches!(
        v,
        Value::Symbol(_) | Value::Nil | Value::True | Value::False
    )
}

pub(super) fn atom_name(v: &Value) -> Result<String, Fail> {
    Ok(match v {
        Value::Symbol(s) => s.as_str().to_string(),
        Value::Nil => "nil".into(),
        Value::True => "true".into(),
        Value::False => "false".into(),
        _ => return Err(Fail::Badarg),
    })
}

fn to_atom(s: &str) -> Value {
    match s {
        "true" => Value::True,
        "false" => Value::False,
        "nil" => Value::Nil,
        _ => atom(s),
    }
}

fn parse_int(s: &str, base: u32) -> Result<Value, Fail> {
    let t = s.strip_prefix('+').unwrap_or(s);
    if t.is_empty() || t == "-" {
        return Err(Fail::Badarg);
    }
    BigInt::parse_bytes(t.as_bytes(), base)
        .map(int_value)
        .ok_or(Fail::Badarg)
}

fn parse_float(s: &str) -> Result<Value, Fail> {
    // Erlang wants digits on both sides of the point.
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let mant = body.split(['e', 'E']).next().unwrap_or("");
    let ok = mant
        .split_once('.')
        .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty());
    match (ok, s.parse::<f64>()) {
        (true, Ok(x)) => Ok(Value::float(x)),
        _ => Err(Fail::Badarg),
    }
}

fn text_arg(v: &Value) -> Result<String, Fail> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        Value::Binary(b) => String::from_utf8(b.to_vec()).map_err(|_| Fail::Badarg),
        _ => Err(Fail::Badarg),
    }
}

fn list_text(v: &Value) -> Result<String, Fail> {
    if !is_list(v) {
        return Err(Fail::Badarg);
    }
    chardata(v).ok_or(Fail::Badarg)
}

/// `float_to_list/1`: scientific with `d` decimals (20 unless an option says otherwise) and
/// a signed two-digit exponent.
fn float_text(x: f64, d: usize) -> String {
    let t = format!("{x:.d$e}");
    match t.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => t,
    }
}

/// The functions of `erlang` bt provides.
pub(super) fn erlang(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    use Value as V;
    let b = |x: bool| Ok(Value::bool(x));
    match (f, a) {
        ("is_atom", [x]) => b(is_atom(x)),
        ("is_binary" | "is_bitstring", [x]) => b(matches!(x, V::Str(_) | V::Binary(_))),
        ("is_boolean", [x]) => b(matches!(x, V::True | V::False)),
        ("is_integer", [x]) => b(is_int(x)),
        ("is_float", [x]) => b(matches!(x, V::Float(_))),
        ("is_number", [x]) => b(is_num(x)),
        ("is_list", [x]) => b(is_list(x)),
        ("is_map", [x]) => b(matches!(x, V::Dict(_))),
        ("is_tuple", [x]) => b(matches!(x, V::Tuple(_))),
        ("is_function", [x]) => b(matches!(x, V::Block(_))),
        ("is_function", [x, n]) => {
            let n = int_arg(n)?;
            b(matches!(x, V::Block(c) if c.arity() as i64 == n))
        }
        ("is_map_key", [k, m]) => match m {
            V::Dict(d) => b(d.contains_key(k)),
            _ => Err(Fail::Badmap(m.clone())),
        },
        ("map_get", [k, m]) => match m {
            V::Dict(d) => d.get(k).cloned().ok_or_else(|| Fail::Badkey(k.clone())),
            _ => Err(Fail::Badmap(m.clone())),
        },
        ("map_size", [m]) => match m {
            V::Dict(d) => Ok(V::Int(d.len() as i64)),
            _ => Err(Fail::Badmap(m.clone())),
        },
        ("abs", [x]) => match x {
            V::Int(i) => Ok(i
                .checked_abs()
                .map(V::Int)
                .unwrap_or_else(|| int_value(BigInt::from(*i).abs()))),
            V::BigInt(n) => Ok(int_value(n.abs())),
            V::Float(x) => Ok(V::float(x.get().abs())),
            _ => Err(Fail::Badarg),
        },
        ("element", [n, t]) => {
            let (n, t) = (int_arg(n)?, tuple_items(t)?);
            usize::try_from(n)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| t.get(i).cloned())
                .ok_or(Fail::Badarg)
        }
        ("setelement", [n, t, v]) => {
            let (n, t) = (int_arg(n)?, tuple_items(t)?);
            let mut t = t.clone();
            match usize::try_from(n).ok().and_then(|i| i.checked_sub(1)) {
                Some(i) if i < t.len() => {
                    t[i] = v.clone();
                    Ok(V::tuple(t))
                }
                _ => Err(Fail::Badarg),
            }
        }
        ("tuple_size", [t]) => Ok(V::Int(tuple_items(t)?.len() as i64)),
        ("size", [x]) => match x {
            V::Tuple(t) => Ok(V::Int(t.len() as i64)),
            V::Str(s) => Ok(V::Int(s.len() as i64)),
            V::Binary(s) => Ok(V::Int(s.len() as i64)),
            _ => Err(Fail::Badarg),
        },
        ("byte_size", [x]) => match x {
            V::Str(s) => Ok(V::Int(s.len() as i64)),
            V::Binary(s) => Ok(V::Int(s.len() as i64)),
            _ => Err(Fail::Badarg),
        },
        ("tuple_to_list", [t]) => Ok(list(tuple_items(t)?.clone())),
        ("list_to_tuple", [l]) => Ok(V::tuple(list_arg(l)?)),
        ("make_tuple", [n, v]) => {
            let n = usize::try_from(int_arg(n)?).map_err(|_| Fail::Badarg)?;
            ctx.charge(n)?;
            Ok(V::tuple(vec![v.clone(); n]))
        }
        ("append_element", [t, v]) => {
            let mut t = tuple_items(t)?.clone();
            t.push(v.clone());
            Ok(V::tuple(t))
        }
        ("length", [l]) => Ok(V::Int(list_arg(l)?.len() as i64)),
        ("hd", [l]) => list_arg(l)?.first().cloned().ok_or(Fail::Badarg),
        ("tl", [l]) => {
            let l = list_arg(l)?;
            if l.is_empty() {
                return Err(Fail::Badarg);
            }
            Ok(list(l[1..].to_vec()))
        }
        ("integer_to_list", [n]) => Ok(charlist(&big(n).ok_or(Fail::Badarg)?.to_string())),
        ("integer_to_list", [n, base]) => Ok(charlist(&radix(n, base)?)),
        ("integer_to_binary", [n]) => Ok(V::str(big(n).ok_or(Fail::Badarg)?.to_string())),
        ("integer_to_binary", [n, base]) => Ok(V::str(radix(n, base)?)),
        ("list_to_integer", [l]) => parse_int(&list_text(l)?, 10),
        ("list_to_integer", [l, base]) => parse_int(&list_text(l)?, base_arg(base)?),
        ("binary_to_integer", [s]) => parse_int(&text_arg(s)?, 10),
        ("binary_to_integer", [s, base]) => parse_int(&text_arg(s)?, base_arg(base)?),
        ("list_to_float", [l]) => parse_float(&list_text(l)?),
        ("binary_to_float", [s]) => parse_float(&text_arg(s)?),
        ("float_to_list", [x]) => match x {
            V::Float(x) => Ok(charlist(&float_text(x.get(), 20))),
            _ => Err(Fail::Badarg),
        },
        ("float_to_binary", [x]) => match x {
            V::Float(x) => Ok(V::str(float_text(x.get(), 20))),
            _ => Err(Fail::Badarg),
        },
        ("atom_to_list", [x]) => Ok(charlist(&atom_name(x)?)),
        ("atom_to_binary", [x]) | ("atom_to_binary", [x, _]) => Ok(V::str(atom_name(x)?)),
        ("list_to_atom" | "list_to_existing_atom", [l]) => Ok(to_atom(&list_text(l)?)),
        ("binary_to_atom" | "binary_to_existing_atom", [s])
        | ("binary_to_atom" | "binary_to_existing_atom", [s, _]) => {
            if let [_, e] = a {
                if !matches!(e, Value::Symbol(e) if matches!(e.as_str(), "utf8" | "unicode" | "latin1"))
                {
                    return Err(Fail::Badarg);
                }
            }
            Ok(to_atom(&text_arg(s)?))
        }
        ("binary_to_list", [s]) => match s {
            V::Str(s) => Ok(list(s.bytes().map(|c| V::Int(c as i64)).collect())),
            V::Binary(s) => Ok(list(s.iter().map(|c| V::Int(*c as i64)).collect())),
            _ => Err(Fail::Badarg),
        },
        ("list_to_binary" | "iolist_to_binary", [l]) => erlang_iolist(l),
        ("max", [x, y]) => Ok(if erl_cmp(y, x).is_gt() { y } else { x }.clone()),
        ("min", [x, y]) => Ok(if erl_cmp(y, x).is_lt() { y } else { x }.clone()),
        ("round", [x]) => match x {
            V::Float(x) => float_to_int(x.get().round()),
            x if is_int(x) => Ok(x.clone()),
            _ => Err(Fail::Badarg),
        },
        ("trunc", [x]) => match x {
            V::Float(x) => float_to_int(x.get().trunc()),
            x if is_int(x) => Ok(x.clone()),
            _ => Err(Fail::Badarg),
        },
        ("floor", [x]) => match x {
            V::Float(x) => float_to_int(x.get().floor()),
            x if is_int(x) => Ok(x.clone()),
            _ => Err(Fail::Badarg),
        },
        ("ceil", [x]) => match x {
            V::Float(x) => float_to_int(x.get().ceil()),
            x if is_int(x) => Ok(x.clone()),
            _ => Err(Fail::Badarg),
        },
        ("float", [x]) => Ok(V::float(num_f64(x)?)),
        ("node", []) => node(ctx),
        ("self", []) => {
            let me = crate::interp::process::need_cx(ctx)?.me().clone();
            Ok(crate::interp::actor::prims::actor::pid_value(ctx, me))
        }
        ("system_time" | "os_time", []) => Ok(V::Int(now_ns())),
        ("system_time" | "os_time", [unit]) => Ok(V::Int(in_unit(now_ns(), unit)?)),
        ("monotonic_time", []) => Ok(V::Int(mono_ns())),
        ("monotonic_time", [unit]) => Ok(V::Int(in_unit(mono_ns(), unit)?)),
        ("error", [reason]) | ("error", [reason, _]) => {
            Err(Fail::Raised(erlang_error(ctx, reason)))
        }
        ("throw", [v]) => Err(Fail::Other(
            Sym::new("throw"),
            format!(
                " {}",
                crate::interp::print::element_print(ctx, v).unwrap_or_default()
            ),
        )),
        ("exit", [v]) => {
            // The kind is the reason's atom (a tuple's first element), as for a peer's exit.
            let kind = match v {
                V::Symbol(s) => *s,
                V::Tuple(t) => t.first().and_then(V::as_sym).unwrap_or(Sym::new("exit")),
                _ => Sym::new("exit"),
            };
            Err(Fail::Other(
                kind,
                format!(
                    " {}",
                    crate::interp::print::element_print(ctx, v).unwrap_or_default()
                ),
            ))
        }
        ("insert_element", [n, t, v]) => {
            let (n, mut t) = (int_arg(n)?, tuple_items(t)?.clone());
            match usize::try_from(n).ok().and_then(|i| i.checked_sub(1)) {
                Some(i) if i <= t.len() => {
                    t.insert(i, v.clone());
                    Ok(V::tuple(t))
                }
                _ => Err(Fail::Badarg),
            }
        }
        ("delete_element", [n, t]) => {
            let (n, mut t) = (int_arg(n)?, tuple_items(t)?.clone());
            match usize::try_from(n).ok().and_then(|i| i.checked_sub(1)) {
                Some(i) if i < t.len() => {
                    t.remove(i);
                    Ok(V::tuple(t))
                }
                _ => Err(Fail::Badarg),
            }
        }
        ("unique_integer", []) => Ok(V::Int(unique())),
        ("unique_integer", [opts]) => {
            for o in list_arg(opts)? {
                match o.as_sym().map(|s| s.as_str()) {
                    Some("positive" | "monotonic") => {}
                    _ => return Err(Fail::Badarg),
                }
            }
            Ok(V::Int(unique()))
        }
        ("timestamp", []) => Ok(timestamp()),
        ("convert_time_unit", [t, from, to]) => {
            let t = big(t).ok_or(Fail::Badarg)?;
            let (f, g) = (unit_per_sec(from)?, unit_per_sec(to)?);
            let v = t * BigInt::from(g);
            let d = BigInt::from(f);
            // Rounded towards negative infinity, as Erlang does.
            Ok(int_value(num_integer::Integer::div_floor(&v, &d)))
        }
        ("apply", [f, args]) => fun(ctx, f, &list_arg(args)?),
        ("band" | "bor" | "bxor" | "bsl" | "bsr", [x, y]) => {
            let (x, y) = match (big(x), big(y)) {
                (Some(x), Some(y)) => (x, y),
                _ => return Err(Fail::Badarith),
            };
            Ok(int_value(match f {
                "band" => x & y,
                "bor" => x | y,
                "bxor" => x ^ y,
                _ => {
                    let n = y.to_i64().ok_or(Fail::Badarith)?;
                    let left = if f == "bsl" { n } else { -n };
                    if left > 1 << 24 {
                        return Err(Fail::Raised(ctx.err(
                            crate::interp::error::ErrorKind::Other(Sym::new("system_limit")),
                            format!("erlang:{f}/2: system_limit"),
                        )));
                    }
                    if left >= 0 {
                        x << (left as usize)
                    } else {
                        x >> ((-left) as usize)
                    }
                }
            }))
        }
        ("bnot", [x]) => Ok(int_value(!big(x).ok_or(Fail::Badarith)?)),
        ("iolist_size", [l]) => Ok(V::Int(super::crypto::iodata(l)?.len() as i64)),
        ("md5", [l]) => super::crypto::crypto("hash", &[atom("md5"), l.clone()]),
        ("crc32", [l]) => Ok(V::Int(crc32(&super::crypto::iodata(l)?) as i64)),
        ("adler32", [l]) => Ok(V::Int(adler32(&super::crypto::iodata(l)?) as i64)),
        ("is_alive", []) => Ok(V::bool(
            node(ctx)?
                .as_sym()
                .is_some_and(|s| s.as_str() != "nonode@nohost"),
        )),
        ("split_binary", [s, n]) => {
            let b = match s {
                V::Str(s) => s.as_bytes().to_vec(),
                V::Binary(b) => b.to_vec(),
                _ => return Err(Fail::Badarg),
            };
            match usize::try_from(int_arg(n)?) {
                Ok(n) if n <= b.len() => Ok(V::tuple(vec![
                    super::crypto::binary(b[..n].to_vec()),
                    super::crypto::binary(b[n..].to_vec()),
                ])),
                _ => Err(Fail::Badarg),
            }
        }
        ("bit_size", [x]) => match x {
            V::Str(s) => Ok(V::Int(s.len() as i64 * 8)),
            V::Binary(s) => Ok(V::Int(s.len() as i64 * 8)),
            _ => Err(Fail::Badarg),
        },
        ("float_to_list", [x, opts]) => Ok(charlist(&float_opts(x, opts)?)),
        ("float_to_binary", [x, opts]) => Ok(V::str(float_opts(x, opts)?)),
        _ => Err(Fail::Undef),
    }
}

fn base_arg(v: &Value) -> Result<u32, Fail> {
    match v {
        Value::Int(b @ 2..=36) => Ok(*b as u32),
        _ => Err(Fail::Badarg),
    }
}

fn radix(n: &Value, base: &Value) -> Result<String, Fail> {
    let n = big(n).ok_or(Fail::Badarg)?;
    Ok(n.to_str_radix(base_arg(base)?).to_uppercase())
}

pub(super) fn erlang_iolist(v: &Value) -> R {
    super::crypto::iodata(v).map(super::crypto::binary)
}

/// Erlang's term comparison: numbers by value, else the standard term order.
pub(super) fn erl_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    if is_num(a) && is_num(b) {
        return crate::value::order::num_cmp(a, b);
    }
    crate::value::order::term_cmp(a, b)
}

fn node(ctx: &mut Ctx) -> R {
    let node_cls = ctx.class_named("Node").ok_or(Fail::Undef)?;
    let cur = ctx.send(&Value::Class(node_cls), Sym::new("current"), &[])?;
    let name = ctx.send(&cur, Sym::new("name"), &[])?;
    Ok(match &name {
        Value::Str(s) if s.contains('@') => atom(s),
        Value::Symbol(s) if s.as_str().contains('@') => Value::Symbol(*s),
        _ => atom("nonode@nohost"),
    })
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn mono_ns() -> i64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as i64
}

fn in_unit(ns: i64, unit: &Value) -> Result<i64, Fail> {
    let name = match unit {
        Value::Symbol(s) => s.as_str(),
        _ => return Err(Fail::Badarg),
    };
    Ok(match name {
        "second" | "seconds" => ns / 1_000_000_000,
        "millisecond" | "milli_seconds" => ns / 1_000_000,
        "microsecond" | "micro_seconds" => ns / 1000,
        "nanosecond" | "nano_seconds" | "native" => ns,
        _ => return Err(Fail::Badarg),
    })
}

/// `erlang:error(Reason)`: an exception whose kind is the reason when it is an atom.
fn erlang_error(ctx: &mut Ctx, reason: &Value) -> Unwind {
    let kind = match reason {
        Value::Symbol(s) => *s,
        _ => Sym::new("error"),
    };
    let text = crate::interp::print::element_print(ctx, reason).unwrap_or_default();
    super::terms::runtime_error(
        ctx,
        kind,
        format!("erlang:error/1: {text}"),
        format!("Erlang function raised '{kind}'"),
        None,
    )
}

/// The functions of `math` (Floats in, Floats out; a domain error is `badarith`).
pub(super) fn math(f: &str, a: &[Value]) -> R {
    let fl = |x: f64| {
        if x.is_finite() {
            Ok(Value::float(x))
        } else {
            Err(Fail::Badarith)
        }
    };
    let x = |i: usize| num_f64(&a[i]);
    match (f, a.len()) {
        ("pi", 0) => fl(std::f64::consts::PI),
        ("e", 0) => fl(std::f64::consts::E),
        ("sqrt", 1) => fl(x(0)?.sqrt()),
        ("pow", 2) => fl(x(0)?.powf(x(1)?)),
        ("sin", 1) => fl(x(0)?.sin()),
        ("cos", 1) => fl(x(0)?.cos()),
        ("tan", 1) => fl(x(0)?.tan()),
        ("asin", 1) => fl(x(0)?.asin()),
        ("acos", 1) => fl(x(0)?.acos()),
        ("atan", 1) => fl(x(0)?.atan()),
        ("atan2", 2) => fl(x(0)?.atan2(x(1)?)),
        ("sinh", 1) => fl(x(0)?.sinh()),
        ("cosh", 1) => fl(x(0)?.cosh()),
        ("tanh", 1) => fl(x(0)?.tanh()),
        ("exp", 1) => fl(x(0)?.exp()),
        ("log", 1) => fl(x(0)?.ln()),
        ("log2", 1) => fl(x(0)?.log2()),
        ("log10", 1) => fl(x(0)?.log10()),
        ("floor", 1) => fl(x(0)?.floor()),
        ("ceil", 1) => fl(x(0)?.ceil()),
        ("fmod", 2) => fl(x(0)? % x(1)?),
        _ => Err(Fail::Undef),
    }
}

/// The functions of `timer`: `sleep/1` suspends the calling process (an actor yields its
/// scheduler), `tc/1` answers `{Microseconds, Value}`.
pub(super) fn timer(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("sleep", [ms]) => {
            let ms = match ms {
                Value::Int(i) if *i >= 0 => *i as u64,
                Value::Symbol(s) if s.as_str() == "infinity" => u64::MAX / 4,
                _ => return Err(Fail::Other(Sym::new("timeout_value"), String::new())),
            };
            match crate::interp::actor::cx_of(ctx) {
                Some(cx) => cx.sleep(ms).map_err(|e| Unwind::Exit(e.0.to_value()))?,
                None => std::thread::sleep(std::time::Duration::from_millis(ms)),
            }
            Ok(atom("ok"))
        }
        ("tc", [f]) => tc(ctx, f, &[]),
        ("tc", [f, args]) => tc(ctx, f, &list_arg(args)?),
        ("seconds", [n]) => Ok(scale(n, 1000)?),
        ("minutes", [n]) => Ok(scale(n, 60_000)?),
        ("hours", [n]) => Ok(scale(n, 3_600_000)?),
        _ => Err(Fail::Undef),
    }
}

fn scale(n: &Value, k: i64) -> R {
    match n {
        Value::Int(n) => n.checked_mul(k).map(Value::Int).ok_or(Fail::Badarith),
        Value::BigInt(_) => Ok(int_value(big(n).ok_or(Fail::Badarith)? * k)),
        Value::Float(x) => Ok(Value::float(x.get() * k as f64)),
        _ => Err(Fail::Badarith),
    }
}

fn tc(ctx: &mut Ctx, f: &Value, args: &[Value]) -> R {
    let t = std::time::Instant::now();
    let v = fun(ctx, f, args)?;
    let us = t.elapsed().as_micros() as i64;
    Ok(Value::tuple(vec![Value::Int(us), v]))
}

fn unique() -> i64 {
    use std::sync::atomic::{AtomicI64, Ordering};
    static NEXT: AtomicI64 = AtomicI64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// `{MegaSecs, Secs, MicroSecs}` of the system clock.
pub(super) fn timestamp() -> Value {
    let us = now_ns() / 1000;
    Value::tuple(vec![
        Value::Int(us / 1_000_000_000_000),
        Value::Int(us / 1_000_000 % 1_000_000),
        Value::Int(us % 1_000_000),
    ])
}

fn unit_per_sec(unit: &Value) -> Result<i64, Fail> {
    match unit {
        Value::Int(n) if *n > 0 => Ok(*n),
        Value::Symbol(s) => Ok(match s.as_str() {
            "second" | "seconds" => 1,
            "millisecond" | "milli_seconds" => 1000,
            "microsecond" | "micro_seconds" => 1_000_000,
            "nanosecond" | "nano_seconds" | "native" => 1_000_000_000,
            "perf_counter" => 1_000_000_000,
            _ => return Err(Fail::Badarg),
        }),
        _ => Err(Fail::Badarg),
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// `float_to_list/2`: `[{decimals, N}]` (with `compact`), `[{scientific, N}]`, `[short]`.
fn float_opts(x: &Value, opts: &Value) -> Result<String, Fail> {
    let x = match x {
        Value::Float(x) => x.get(),
        _ => return Err(Fail::Badarg),
    };
    let mut decimals = None;
    let mut scientific = None;
    let mut compact = false;
    let mut short = false;
    for o in list_arg(opts)? {
        match &o {
            Value::Symbol(s) if s.as_str() == "compact" => compact = true,
            Value::Symbol(s) if s.as_str() == "short" => short = true,
            Value::Tuple(t) if t.len() == 2 => {
                let n = match &t[1] {
                    Value::Int(n @ 0..=253) => *n as usize,
                    _ => return Err(Fail::Badarg),
                };
                match t[0].as_sym().map(|s| s.as_str()) {
                    Some("decimals") => {
                        decimals = Some(n);
                        scientific = None;
                    }
                    Some("scientific") if n <= 249 => {
                        scientific = Some(n);
                        decimals = None;
                    }
                    _ => return Err(Fail::Badarg),
                }
            }
            _ => return Err(Fail::Badarg),
        }
    }
    if short {
        return Ok(crate::interp::print::format_float(x));
    }
    if let Some(d) = decimals {
        let mut t = round_half_up(x, d);
        if compact && t.contains('.') {
            let keep = t.trim_end_matches('0');
            t = if keep.ends_with('.') {
                format!("{keep}0")
            } else {
                keep.to_string()
            };
        }
        return Ok(t);
    }
    Ok(float_text(x, scientific.unwrap_or(20)))
}

/// `x` with `d` decimals, the exact binary value rounded half away from zero (as Erlang's
/// `{decimals, D}`).
fn round_half_up(x: f64, d: usize) -> String {
    // Rust prints the exact expansion when asked for enough digits.
    let exact = format!("{:.*}", d + 40, x.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes().take(d)).collect();
    let up = frac.as_bytes().get(d).is_some_and(|c| *c >= b'5');
    if up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let int_len = digits.len() - d;
    let mut out = String::new();
    if x.is_sign_negative() && digits.iter().any(|c| *c != b'0') {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[..int_len]).unwrap_or("0"));
    if d > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[int_len..]).unwrap_or(""));
    }
    out
}
