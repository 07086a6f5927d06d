//! String primitives: a sealed, immutable value class, always valid UTF-8,
//! whose elements are grapheme clusters, each represented as a one-grapheme String.
//!
//! The pure work lives in [`crate::interp::prims::string::pure`]; this module checks arguments, builds
//! values and runs the iteration selectors (which call `ctx.tick()` per element). Primitives
//! whose work is linear in their inputs declare it at registration (`.cost(Cost::InputBytes)`:
//! the bytes are charged before they run, `registry::Cost`). The byte
//! selectors (`byteAt:`, `part:size:`, `concat:`, `asHex` …) work on the UTF-8 bytes. Regex
//! selectors are in `string_regex`.

use std::cmp::Ordering;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::codec;
use crate::interp::prims::fault::{
    article_class, clamped_int_arg, int_arg, lift, text_arg, Fault, Res,
};
use crate::interp::prims::number::pure as num;
use crate::interp::prims::number::{binary_prim, metered, unary_prim};
use crate::interp::prims::string::pure::{self as text, g_len, graphemes};
use crate::value::order::term_cmp;
use crate::value::text::Text;
use crate::value::{Ref, Value};

pub mod pure;
pub mod regex;
use crate::interp::registry::Cost;

/// The receiver's text (a String receiver is guaranteed by dispatch; anything else is a
/// `type_error` rather than a panic).
pub fn recv(v: &Value) -> Res<&Text> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(Fault::expected(
            "String primitive",
            "a String receiver",
            other,
        )),
    }
}

fn strs<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    Value::list(items.into_iter().map(Value::str))
}

/// The items of a List or Array argument.
pub fn seq_items<'a>(
    what: &str,
    v: &'a Value,
) -> Res<Box<dyn DoubleEndedIterator<Item = &'a Value> + 'a>> {
    match v {
        Value::List(items) => Ok(Box::new(items.iter())),
        Value::Array(items) => Ok(Box::new(items.iter())),
        other => Err(Fault::expected(what, "a List", other)),
    }
}

/// Bytes as a String when they are valid UTF-8, else as a Binary.
pub fn bytes_value(bytes: Vec<u8>) -> Value {
    match String::from_utf8(bytes) {
        Ok(s) => Value::str(s),
        Err(e) => Value::Binary(Ref::new(e.into_bytes())),
    }
}

/// The bytes of a String or Binary argument (for `concat:`).
pub fn bytes_arg<'a>(what: &str, v: &'a Value) -> Res<&'a [u8]> {
    match v {
        Value::Str(s) => Ok(s.as_bytes()),
        Value::Binary(b) => Ok(b),
        other => Err(Fault::expected(what, "a String or a Binary", other)),
    }
}

/// `byteAt:` (0-based) over any byte slice.
pub fn byte_at(bytes: &[u8], i: &Value) -> Res {
    let i = match i {
        Value::Int(i) => *i,
        Value::BigInt(_) => return Err(Fault::index(num::int_string(i), bytes.len())),
        other => return Err(Fault::expected("byteAt:", "an Integer", other)),
    };
    match usize::try_from(i).ok().and_then(|i| bytes.get(i)) {
        Some(b) => Ok(Value::Int(*b as i64)),
        None => Err(Fault::index(i, bytes.len())),
    }
}

/// `part: offset size: n` (0-based) over any byte slice.
pub fn part(bytes: &[u8], offset: &Value, size: &Value) -> Res<Vec<u8>> {
    let o = int_arg("part:size:", offset)?;
    let n = int_arg("part:size:", size)?;
    if o < 0 || n < 0 || (o as u64).saturating_add(n as u64) > bytes.len() as u64 {
        let bad = if o < 0 || o as u64 > bytes.len() as u64 {
            o
        } else {
            o.saturating_add(n)
        };
        return Err(Fault::index(bad, bytes.len()));
    }
    Ok(bytes[o as usize..(o + n) as usize].to_vec())
}

/// A List of byte Integers.
pub fn byte_list(bytes: &[u8]) -> Value {
    Value::list(bytes.iter().map(|b| Value::Int(*b as i64)))
}

/// Ordering for `< > <= >=`: two Strings by code points, anything else by term order.
fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x.as_str().cmp(y.as_str()),
        _ => term_cmp(a, b),
    }
}

/// `++` and `,`: String with String only.
fn concat_strings(r: &Value, a: &Value) -> Res {
    let s = recv(r)?;
    match a {
        Value::Str(t) => {
            if (s.len() + t.len()) as i64 > text::MAX_STRING_BYTES {
                return Err(text::too_long());
            }
            let mut out = String::with_capacity(s.len() + t.len());
            out.push_str(s);
            out.push_str(t);
            Ok(Value::str(out))
        }
        Value::Binary(_) => Err(Fault::Type(
            "++ cannot join a String and a Binary; use concat:".into(),
        )),
        other => Err(Fault::expected("++", "a String", other)),
    }
}

/// String `++` in place (see `collections::in_place`): appends a String argument to a
/// String held alone; any other argument, or a result past the longest String, answers
/// what the ordinary `++` answers.
pub(crate) fn append_in_place(ctx: &mut Ctx, recv: &mut Value, args: &[Value]) -> EvalResult {
    let fits = matches!((&*recv, args.first()), (Value::Str(s), Some(Value::Str(t)))
        if ((s.len() + t.len()) as i64) <= text::MAX_STRING_BYTES);
    if !fits {
        return ctx.send(recv, crate::value::Sym::new("++"), args);
    }
    ctx.charge_append(recv, args)?;
    if let (Value::Str(s), Some(Value::Str(t))) = (&mut *recv, args.first()) {
        crate::value::make_mut(s).push_str(t);
    }
    Ok(recv.clone())
}

/// `++` for an evaluator that owns its receiver (a temporary, or a local it has taken out of
/// its slot): when the String is not shared it is extended in place, so `s := s ++ t` in a
/// loop is linear rather than quadratic. Same answers and errors as `++`.
pub fn append_owned(mut recv: Value, arg: &Value) -> Res {
    match (&mut recv, arg) {
        (Value::Str(s), Value::Str(t)) => {
            if (s.len() + t.len()) as i64 > text::MAX_STRING_BYTES {
                return Err(text::too_long());
            }
            match crate::value::unique_mut(s) {
                Some(owned) => {
                    owned.push_str(t);
                    Ok(recv)
                }
                None => concat_strings(&recv, arg),
            }
        }
        _ => concat_strings(&recv, arg),
    }
}

fn text_op(what: &str, r: &Value, a: &Value, f: fn(&str, &str) -> bool) -> Res {
    Ok(Value::bool(f(recv(r)?, &text_arg(what, a)?)))
}

fn join_list(sep: &Value, items: &Value) -> Res {
    let sep = recv(sep)?;
    let mut out = String::new();
    for (i, v) in seq_items("join:", items)?.enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&text_arg("join:", v)?);
    }
    Ok(Value::str(out))
}

fn pad_prim(r: &Value, n: &Value, with: Option<&Value>, left: bool) -> Res {
    let width = int_arg(if left { "padLeft:" } else { "padRight:" }, n)?;
    let with = match with {
        Some(w) => text_arg("padLeft:with:", w)?,
        None => " ".into(),
    };
    Ok(Value::str(text::pad(recv(r)?, width, &with, left)?))
}

unary_prim! {
    size => |r| Ok(Value::Int(g_len(recv(r)?) as i64));
    is_empty => |r| Ok(Value::bool(recv(r)?.is_empty()));
    is_not_empty => |r| Ok(Value::bool(!recv(r)?.is_empty()));
    is_blank => |r| Ok(Value::bool(text::is_blank(recv(r)?)));
    first => |r| Ok(Value::str(text::g_first(recv(r)?, false)?));
    last => |r| Ok(Value::str(text::g_first(recv(r)?, true)?));
    all_but_first => |r| Ok(Value::str(text::g_drop(recv(r)?, 1)));
    all_but_last => |r| {
        let s = recv(r)?;
        Ok(Value::str(text::g_take(s, g_len(s) as i64 - 1)))
    };
    uppercase => |r| Ok(Value::str(recv(r)?.to_uppercase()));
    lowercase => |r| Ok(Value::str(recv(r)?.to_lowercase()));
    capitalize => |r| Ok(Value::str(text::capitalize(recv(r)?)));
    trim => |r| Ok(Value::str(recv(r)?.trim()));
    trim_left => |r| Ok(Value::str(recv(r)?.trim_start()));
    trim_right => |r| Ok(Value::str(recv(r)?.trim_end()));
    reverse => |r| Ok(Value::str(text::g_reverse(recv(r)?)));
    is_digit => |r| Ok(Value::bool(text::is_digits(recv(r)?)));
    is_alpha => |r| Ok(Value::bool(text::is_alpha(recv(r)?)));
    as_float => |r| Ok(num::parse_float(recv(r)?).map_or(Value::Nil, Value::float));
    as_symbol => |r| Ok(Value::sym(recv(r)?));
    as_list => |r| Ok(strs(graphemes(recv(r)?)));
    as_array => |r| Ok(Value::array(graphemes(recv(r)?).into_iter().map(Value::str)));
    itself => |r: &Value| recv(r).map(|_| r.clone());
    print_string => |r| Ok(Value::str(crate::interp::print::quote_string(recv(r)?)));
    url_encoded => |r| Ok(Value::str(text::url_encode(recv(r)?)));
    url_decoded => |r| Ok(Value::str(text::url_decode(recv(r)?)?));
    byte_size => |r| Ok(Value::Int(recv(r)?.len() as i64));
    to_bytes => |r| Ok(byte_list(recv(r)?.as_bytes()));
    as_binary => |r| Ok(Value::Binary(Ref::new(recv(r)?.as_bytes().to_vec())));
    as_hex => |r| Ok(Value::str(codec::hex_encode(recv(r)?.as_bytes())));
    as_base64 => |r| Ok(Value::str(codec::base64_encode(recv(r)?.as_bytes())));
    as_base64url => |r| Ok(Value::str(codec::base64url_encode(recv(r)?.as_bytes())));
    as_character => |r| {
        let s = recv(r)?;
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => Ok(Value::ch(c)),
            _ => Err(Fault::Type(format!(
                "asCharacter expects a one-character String, got {}",
                crate::interp::print::quote_string(s)
            ))),
        }
    };
}

binary_prim! {
    concat => concat_strings;
    at => |r, i| Ok(Value::str(text::g_at(recv(r)?, i)?));
    take => |r, n| Ok(Value::str(text::g_take(recv(r)?, clamped_int_arg("take:", n)?)));
    drop => |r, n| Ok(Value::str(text::g_drop(recv(r)?, clamped_int_arg("drop:", n)?)));
    last_n => |r, n| Ok(Value::str(text::g_last_n(recv(r)?, int_arg("last:", n)?)));
    repeat => |r, n| Ok(Value::str(text::repeat(recv(r)?, int_arg("repeat:", n)?)?));
    index_of => |r, a| Ok(match a {
        Value::Str(_) | Value::Char(_) => text::index_of(recv(r)?, &text_arg("indexOf:", a)?)
            .map_or(Value::Nil, |i| Value::Int(i as i64)),
        _ => Value::Nil,
    });
    includes => |r, a| Ok(Value::bool(match a {
        Value::Str(_) | Value::Char(_) => text::includes_grapheme(recv(r)?, &text_arg("includes:", a)?),
        _ => false,
    }));
    includes_substring => |r, a| text_op("includesSubstring:", r, a, |s, t| s.contains(t));
    starts_with => |r, a| text_op("startsWith:", r, a, |s, t| s.starts_with(t));
    ends_with => |r, a| text_op("endsWith:", r, a, |s, t| s.ends_with(t));
    occurrences_of => |r, a| {
        let (s, t) = (recv(r)?, text_arg("occurrencesOf:", a)?);
        Ok(Value::Int(if t.is_empty() { 0 } else { s.matches(t.as_ref()).count() as i64 }))
    };
    pad_left => |r, n| pad_prim(r, n, None, true);
    pad_right => |r, n| pad_prim(r, n, None, false);
    byte_at_p => |r, i| byte_at(recv(r)?.as_bytes(), i);
    concat_bytes => |r, a| {
        let (s, t) = (recv(r)?.as_bytes(), bytes_arg("concat:", a)?);
        if (s.len() + t.len()) as i64 > text::MAX_STRING_BYTES {
            return Err(text::too_long());
        }
        Ok(bytes_value([s, t].concat()))
    };
}

fn from_to(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let f = || {
        let (s, e) = (int_arg("from:to:", &a[0])?, int_arg("from:to:", &a[1])?);
        Ok(Value::str(text::g_from_to(recv(r)?, s, e)?))
    };
    lift(ctx, f())
}

fn copy_from_to(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let f = || {
        let (s, e) = (
            int_arg("copyFrom:to:", &a[0])?,
            int_arg("copyFrom:to:", &a[1])?,
        );
        Ok(Value::str(text::g_copy_from_to(recv(r)?, s, e)?))
    };
    lift(ctx, f())
}

/// `contains:` — a Block tests the graphemes (as `anySatisfy:`); a String or Character is
/// searched for as a substring.
fn contains(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match &a[0] {
        Value::Block(_) => any_satisfy(ctx, r, a),
        other => {
            let f = || text_op("contains:", r, other, |s, t| s.contains(t));
            lift(ctx, f())
        }
    }
}

/// Reserves a List of `parts` Strings holding `text` bytes together (`Ctx::reserve`).
pub(crate) fn reserve_parts(ctx: &mut Ctx, parts: usize, text: usize) -> Result<(), Unwind> {
    ctx.reserve(
        parts
            .saturating_mul(crate::interp::eval::charge::PART_BYTES)
            .saturating_add(text),
    )
}

/// Whether a receiver of `len` bytes may split into parts worth reserving (counting them
/// first costs a scan; shorter ones cannot pass `Ctx::reserve`'s threshold).
pub(crate) fn worth_counting(len: usize) -> bool {
    len.saturating_mul(crate::interp::eval::charge::PART_BYTES)
        >= crate::interp::eval::charge::RESERVE_FREE
}

fn lines(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    if let Value::Str(s) = r {
        if worth_counting(s.len()) {
            reserve_parts(ctx, memchr_count(s, b'\n') + 1, s.len())?;
        }
    }
    lift(ctx, recv(r).map(|s| strs(text::lines(s))))
}

fn words(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    if let Value::Str(s) = r {
        if worth_counting(s.len()) {
            reserve_parts(ctx, s.split_whitespace().count(), s.len())?;
        }
    }
    lift(ctx, recv(r).map(|s| strs(text::words(s))))
}

fn split(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    if let (Value::Str(s), Value::Str(sep)) = (r, &a[0]) {
        if worth_counting(s.len()) {
            let n = if sep.is_empty() {
                s.len()
            } else {
                s.matches(sep.as_str()).count() + 1
            };
            reserve_parts(ctx, n, s.len())?;
        }
    }
    let f = || -> Res { Ok(strs(text::split_on(recv(r)?, &text_arg("split:", &a[0])?))) };
    lift(ctx, f())
}

/// Occurrences of the byte `b` in `s`.
fn memchr_count(s: &str, b: u8) -> usize {
    s.as_bytes().iter().filter(|&&c| c == b).count()
}

/// `sep join: items`: the result's bytes (the parts and a separator between each two) are
/// reserved before it is built.
fn join(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    if let (Value::Str(sep), Ok(items)) = (r, seq_items("join:", &a[0])) {
        let (n, bytes) = items.fold((0usize, 0usize), |(n, b), v| {
            let len = match v {
                Value::Str(s) => s.len(),
                _ => 4,
            };
            (n + 1, b.saturating_add(len))
        });
        ctx.reserve(bytes.saturating_add(sep.len().saturating_mul(n.saturating_sub(1))))?;
    }
    lift(ctx, join_list(r, &a[0]))
}

/// The bytes of `s` with every (non-overlapping) `pat` replaced by `with`, as
/// `str::replace` makes it: counted before the copy is built (`Ctx::reserve`).
fn replaced_len(s: &str, pat: &str, with: &str) -> usize {
    if pat.is_empty() || with.len() <= pat.len() {
        return s.len();
    }
    let n = s.matches(pat).count();
    s.len()
        .saturating_add(n.saturating_mul(with.len() - pat.len()))
}

fn replace_all(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    if let (Value::Str(s), Value::Str(p), Value::Str(w)) = (r, &a[0], &a[1]) {
        ctx.reserve(replaced_len(s, p, w))?;
    }
    let f = || -> Res {
        let (p, w) = (
            text_arg("replaceAll:with:", &a[0])?,
            text_arg("replaceAll:with:", &a[1])?,
        );
        Ok(Value::str(text::replace_all(recv(r)?, &p, &w)))
    };
    lift(ctx, f())
}

fn replace_first(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let f = || -> Res {
        let (p, w) = (
            text_arg("replaceFirst:with:", &a[0])?,
            text_arg("replaceFirst:with:", &a[1])?,
        );
        Ok(Value::str(text::replace_first(recv(r)?, &p, &w)))
    };
    lift(ctx, f())
}

fn pad_left_with(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, pad_prim(r, &a[0], Some(&a[1]), true))
}

fn pad_right_with(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, pad_prim(r, &a[0], Some(&a[1]), false))
}

fn part_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let f = || Ok(bytes_value(part(recv(r)?.as_bytes(), &a[0], &a[1])?));
    lift(ctx, f())
}

ordering_prims!();

// ---- iteration -------------------------------------------------------------------------

/// A Boolean answered by a predicate block; anything else is a `type_error`.
pub fn truth(ctx: &Ctx, sel: &str, v: Value) -> Result<bool, Unwind> {
    match v {
        Value::True => Ok(true),
        Value::False => Ok(false),
        other => Err(ctx.type_err(format!(
            "{sel} expects the block to answer a Boolean, got {}",
            article_class(&other)
        ))),
    }
}

/// The receiver's grapheme clusters one at a time, or the exception for a non-String
/// receiver (an iteration holds no list of them: a `do:` over a long String takes no memory
/// in proportion to it).
fn gs<'a>(ctx: &Ctx, r: &'a Value) -> Result<unicode_segmentation::Graphemes<'a>, Unwind> {
    use unicode_segmentation::UnicodeSegmentation;
    recv(r).map(|s| s.graphemes(true)).map_err(|f| f.raise(ctx))
}

fn do_each(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    for g in gs(ctx, r)? {
        ctx.tick()?;
        ctx.call_block(&a[0], &[Value::str(g)])?;
    }
    Ok(Value::Nil)
}

fn reverse_do(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    for g in gs(ctx, r)?.rev() {
        ctx.tick()?;
        ctx.call_block(&a[0], &[Value::str(g)])?;
    }
    Ok(Value::Nil)
}

fn do_separated(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    for (i, g) in gs(ctx, r)?.enumerate() {
        ctx.tick()?;
        if i > 0 {
            ctx.call_block(&a[1], &[])?;
        }
        ctx.call_block(&a[0], &[Value::str(g)])?;
    }
    Ok(Value::Nil)
}

/// `eachWithIndex:` / `doWithIndex:` (`[:g :i | …]`) and `keysAndValuesDo:` (`[:i :g | …]`).
fn with_index(ctx: &mut Ctx, r: &Value, block: &Value, index_first: bool) -> EvalResult {
    for (i, g) in gs(ctx, r)?.enumerate() {
        ctx.tick()?;
        let (g, i) = (Value::str(g), Value::Int(i as i64 + 1));
        let args = if index_first { [i, g] } else { [g, i] };
        ctx.call_block(block, &args)?;
    }
    Ok(Value::Nil)
}

fn each_with_index(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    with_index(ctx, r, &a[0], false)
}

fn keys_and_values_do(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    with_index(ctx, r, &a[0], true)
}

/// `collect:` — the block answers Strings (or Characters); answers their concatenation.
fn collect(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let mut out = String::new();
    for g in gs(ctx, r)? {
        ctx.tick()?;
        match &ctx.call_block(&a[0], &[Value::str(g)])? {
            Value::Str(s) => out.push_str(s),
            Value::Char(c) => out.push(c.get()),
            other => {
                return Err(ctx.type_err(format!(
                    "String collect: expects the block to answer Strings, got {}",
                    article_class(other)
                )))
            }
        }
    }
    Ok(Value::str(out))
}

fn filter(ctx: &mut Ctx, r: &Value, block: &Value, keep: bool, sel: &str) -> EvalResult {
    let mut out = String::new();
    for g in gs(ctx, r)? {
        ctx.tick()?;
        let v = ctx.call_block(block, &[Value::str(g)])?;
        if truth(ctx, sel, v)? == keep {
            out.push_str(g);
        }
    }
    Ok(Value::str(out))
}

fn select(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    filter(ctx, r, &a[0], true, "select:")
}

fn reject(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    filter(ctx, r, &a[0], false, "reject:")
}

/// The first grapheme satisfying the block, if any.
fn find(ctx: &mut Ctx, r: &Value, block: &Value, sel: &str) -> Result<Option<Value>, Unwind> {
    for g in gs(ctx, r)? {
        ctx.tick()?;
        let g = Value::str(g);
        let v = ctx.call_block(block, std::slice::from_ref(&g))?;
        if truth(ctx, sel, v)? {
            return Ok(Some(g));
        }
    }
    Ok(None)
}

fn detect(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match find(ctx, r, &a[0], "detect:")? {
        Some(g) => Ok(g),
        None => Err(ctx.err_hint(
            ErrorKind::NotFound,
            "not found: no element matches",
            "Use detect:ifNone: to supply a default",
        )),
    }
}

fn detect_if_none(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    match find(ctx, r, &a[0], "detect:ifNone:")? {
        Some(g) => Ok(g),
        None => ctx.call_block(&a[1], &[]),
    }
}

fn any_satisfy(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    Ok(Value::bool(find(ctx, r, &a[0], "anySatisfy:")?.is_some()))
}

fn all_satisfy(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    for g in gs(ctx, r)? {
        ctx.tick()?;
        let v = ctx.call_block(&a[0], &[Value::str(g)])?;
        if !truth(ctx, "allSatisfy:", v)? {
            return Ok(Value::False);
        }
    }
    Ok(Value::True)
}

fn count(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let mut n = 0;
    for g in gs(ctx, r)? {
        ctx.tick()?;
        let v = ctx.call_block(&a[0], &[Value::str(g)])?;
        n += i64::from(truth(ctx, "count:", v)?);
    }
    Ok(Value::Int(n))
}

fn inject_into(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let mut acc = a[0].clone();
    for g in gs(ctx, r)? {
        ctx.tick()?;
        acc = ctx.call_block(&a[1], &[acc, Value::str(g)])?;
    }
    Ok(acc)
}

// ---- class side ------------------------------------------------------------------------

fn with_all(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    let f = || -> Res {
        let mut out = String::new();
        for v in seq_items("String withAll:", &a[0])? {
            match v {
                Value::Str(s) => out.push_str(s),
                Value::Char(c) => out.push(c.get()),
                other => {
                    return Err(Fault::expected(
                        "String withAll:",
                        "a List of Strings",
                        other,
                    ))
                }
            }
        }
        Ok(Value::str(out))
    };
    lift(ctx, f())
}

fn from_code_point(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, text::from_code_points([&a[0]]).map(Value::str))
}

fn from_code_points(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    let f = || {
        Ok(Value::str(text::from_code_points(seq_items(
            "fromCodePoints:",
            &a[0],
        )?)?))
    };
    lift(ctx, f())
}

/// Reserves the bytes an iolist flattens to before they are copied (`Ctx::reserve`): a
/// walk of its nesting, each node paid for (shared sublists count every time they appear,
/// as in the result), stopped as soon as the bytes pass the largest step allowed.
pub(crate) fn reserve_iolist(ctx: &mut Ctx, v: &Value) -> Result<(), Unwind> {
    let cap = ctx.prog.max_allocation();
    let mut bytes = 0usize;
    let mut m = crate::interp::eval::charge::Meter::default();
    let mut stack: Vec<&Value> = vec![v];
    while let Some(v) = stack.pop() {
        m.step(ctx, crate::interp::eval::charge::ELEM)?;
        match v {
            Value::Str(s) => bytes = bytes.saturating_add(s.len()),
            Value::Binary(b) => bytes = bytes.saturating_add(b.len()),
            Value::List(items) => stack.extend(items.iter()),
            Value::Array(items) => stack.extend(items.iter()),
            _ => bytes = bytes.saturating_add(1),
        }
        if bytes > cap {
            break;
        }
    }
    m.finish(ctx)?;
    ctx.reserve(bytes)
}

fn from_iolist(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    reserve_iolist(ctx, &a[0])?;
    let f = || {
        let bytes = text::iolist_bytes(&a[0], "String fromIolist:")?;
        String::from_utf8(bytes)
            .map(Value::str)
            .map_err(|_| Fault::Type("String fromIolist: the bytes are not valid UTF-8".into()))
    };
    lift(ctx, f())
}

fn lf(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::str("\n"))
}
fn cr(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::str("\r"))
}
fn crlf(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::str("\r\n"))
}
fn tab(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::str("\t"))
}
fn space(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::str(" "))
}

pub fn register(p: &mut Prims) {
    let c = "String";
    p.add_class(c, "withAll:", with_all).cost(Cost::Copy);
    p.add_class(c, "fromCodePoint:", from_code_point);
    p.add_class(c, "fromCodePoints:", from_code_points)
        .cost(Cost::Copy);
    p.add_class(c, "fromIolist:", from_iolist)
        .cost(Cost::InputBytes);
    p.add_class(c, "lf", lf);
    p.add_class(c, "cr", cr);
    p.add_class(c, "crlf", crlf);
    p.add_class(c, "tab", tab);
    p.add_class(c, "space", space);

    for (sel, f, cost) in [
        (
            "<",
            lt as fn(&mut Ctx, &Value, &[Value]) -> EvalResult,
            Cost::InputBytes,
        ),
        (">", gt, Cost::InputBytes),
        ("<=", le, Cost::InputBytes),
        (">=", ge, Cost::InputBytes),
        ("++", concat, Cost::Copy),
        (",", concat, Cost::Copy),
        ("repeat:", repeat, Cost::RepeatResult),
        ("size", size, Cost::Clusters),
        ("length", size, Cost::Clusters),
        ("at:", at, Cost::Clusters),
        ("first", first, Cost::Free),
        ("last", last, Cost::InputBytes),
        ("first:", take, Cost::Copy),
        ("last:", last_n, Cost::Copy),
        ("allButFirst", all_but_first, Cost::Copy),
        ("allButLast", all_but_last, Cost::Copy),
        ("from:to:", from_to, Cost::Copy),
        ("copyFrom:to:", copy_from_to, Cost::Copy),
        ("asCharacter", as_character, Cost::Free),
        ("contains:", contains, Cost::InputBytes),
        ("withIndexDo:", each_with_index, Cost::Free),
        ("asUtf8", as_binary, Cost::Copy),
        ("indexOf:", index_of, Cost::InputBytes),
        ("take:", take, Cost::Copy),
        ("drop:", drop, Cost::Copy),
        ("isEmpty", is_empty, Cost::Free),
        ("isEmptyOrNil", is_empty, Cost::Free),
        ("isNotEmpty", is_not_empty, Cost::Free),
        ("notEmpty", is_not_empty, Cost::Free),
        ("isBlank", is_blank, Cost::InputBytes),
        ("uppercase", uppercase, Cost::Copy),
        ("lowercase", lowercase, Cost::Copy),
        ("asUppercase", uppercase, Cost::Copy),
        ("asLowercase", lowercase, Cost::Copy),
        ("capitalize", capitalize, Cost::Copy),
        ("trim", trim, Cost::Copy),
        ("trimSeparators", trim, Cost::Copy),
        ("trimLeft", trim_left, Cost::Copy),
        ("trimRight", trim_right, Cost::Copy),
        ("reverse", reverse, Cost::Copy),
        ("reversed", reverse, Cost::Copy),
        ("includesSubstring:", includes_substring, Cost::InputBytes),
        ("startsWith:", starts_with, Cost::InputBytes),
        ("endsWith:", ends_with, Cost::InputBytes),
        ("includes:", includes, Cost::InputBytes),
        ("occurrencesOf:", occurrences_of, Cost::InputBytes),
        ("split:", split, Cost::Copy),
        ("splitOn:", split, Cost::Copy),
        ("lines", lines, Cost::Copy),
        ("words", words, Cost::Copy),
        ("replaceAll:with:", replace_all, Cost::InputBytes),
        ("replaceFirst:with:", replace_first, Cost::InputBytes),
        ("padLeft:", pad_left, Cost::PadResult),
        ("padRight:", pad_right, Cost::PadResult),
        ("padLeft:with:", pad_left_with, Cost::PadResult),
        ("padRight:with:", pad_right_with, Cost::PadResult),
        ("join:", join, Cost::InputBytes),
        ("isDigit", is_digit, Cost::InputBytes),
        ("isAlpha", is_alpha, Cost::InputBytes),
        // Metered: a huge digit string parses in pieces (number/metered.rs).
        ("asInteger", metered::as_integer, Cost::InputBytes),
        ("asFloat", as_float, Cost::InputBytes),
        ("asNumber", metered::as_number, Cost::InputBytes),
        ("asAtom", as_symbol, Cost::InputBytes),
        ("asSymbol", as_symbol, Cost::InputBytes),
        // A String a grapheme: `PART_BYTES` (64) each.
        ("asList", as_list, Cost::Grow(64)),
        ("asArray", as_array, Cost::Grow(64)),
        ("asString", itself, Cost::Free),
        ("displayString", itself, Cost::Free),
        ("printString", print_string, Cost::Copy),
        ("urlEncoded", url_encoded, Cost::Grow(3)),
        ("urlDecoded", url_decoded, Cost::Copy),
        ("do:", do_each, Cost::Free),
        ("reverseDo:", reverse_do, Cost::Free),
        ("do:separatedBy:", do_separated, Cost::Free),
        ("eachWithIndex:", each_with_index, Cost::Free),
        ("doWithIndex:", each_with_index, Cost::Free),
        ("keysAndValuesDo:", keys_and_values_do, Cost::Free),
        ("collect:", collect, Cost::Free),
        ("select:", select, Cost::Free),
        ("reject:", reject, Cost::Free),
        ("detect:", detect, Cost::Free),
        ("detect:ifNone:", detect_if_none, Cost::Free),
        ("anySatisfy:", any_satisfy, Cost::Free),
        ("allSatisfy:", all_satisfy, Cost::Free),
        ("count:", count, Cost::Free),
        ("inject:into:", inject_into, Cost::Free),
        ("byteSize", byte_size, Cost::Free),
        ("byteAt:", byte_at_p, Cost::Free),
        ("part:size:", part_p, Cost::Copy),
        ("concat:", concat_bytes, Cost::Copy),
        ("toBytes", to_bytes, Cost::Grow(16)),
        ("asBinary", as_binary, Cost::Copy),
        ("asHex", as_hex, Cost::Grow(2)),
        ("asBase64", as_base64, Cost::Grow(2)),
        ("asBase64Url", as_base64url, Cost::Grow(2)),
    ] {
        p.add(c, sel, f).cost(cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenation_rules() {
        let a = Value::str("ab");
        assert_eq!(
            concat_strings(&a, &Value::str("cd")).unwrap().as_str(),
            Some("abcd")
        );
        assert!(matches!(
            concat_strings(&a, &Value::Binary(Ref::new(vec![1]))),
            Err(Fault::Type(_))
        ));
        assert!(matches!(
            concat_strings(&a, &Value::Int(1)),
            Err(Fault::Type(_))
        ));
    }

    #[test]
    fn owned_append_reuses_a_unique_string() {
        let s = Value::str(String::with_capacity(64) + "ab");
        let before = match &s {
            Value::Str(r) => r.as_ptr(),
            _ => unreachable!(),
        };
        let out = append_owned(s, &Value::str("cd")).unwrap();
        match &out {
            Value::Str(r) => {
                assert_eq!(r.as_str(), "abcd");
                assert_eq!(r.as_ptr(), before, "appended in place");
            }
            _ => panic!("expected a String"),
        }
        // A shared String is copied, the other holder keeps its value.
        let shared = Value::str("x");
        let keep = shared.clone();
        assert_eq!(
            append_owned(shared, &Value::str("y")).unwrap().as_str(),
            Some("xy")
        );
        assert_eq!(keep.as_str(), Some("x"));
        assert!(append_owned(Value::str("x"), &Value::Int(1)).is_err());
    }

    #[test]
    fn bytes() {
        assert!(matches!(
            byte_at(b"abc", &Value::Int(0)),
            Ok(Value::Int(97))
        ));
        assert_eq!(
            byte_at(b"abc", &Value::Int(3)).err(),
            Some(Fault::index(3, 3))
        );
        assert_eq!(
            byte_at(b"abc", &Value::Int(-1)).err(),
            Some(Fault::index(-1, 3))
        );
        assert_eq!(
            part(b"hello", &Value::Int(1), &Value::Int(3)).unwrap(),
            b"ell"
        );
        assert_eq!(part(b"hello", &Value::Int(5), &Value::Int(0)).unwrap(), b"");
        assert!(part(b"hello", &Value::Int(3), &Value::Int(3)).is_err());
        assert!(matches!(bytes_value(vec![0xff]), Value::Binary(_)));
        assert_eq!(bytes_value(b"ok".to_vec()).as_str(), Some("ok"));
    }

    #[test]
    fn ordering_and_join() {
        assert_eq!(
            compare(&Value::str("abc"), &Value::str("abd")),
            Ordering::Less
        );
        assert_eq!(compare(&Value::str("Z"), &Value::str("a")), Ordering::Less);
        assert_eq!(
            compare(&Value::str("é"), &Value::str("z")),
            Ordering::Greater
        );
        let j = join_list(
            &Value::str(", "),
            &Value::list([Value::str("a"), Value::str("b")]),
        );
        assert_eq!(j.unwrap().as_str(), Some("a, b"));
        assert!(join_list(&Value::str(","), &Value::list([Value::Int(1)])).is_err());
    }
}
