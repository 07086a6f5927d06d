//! What an `Erlang` call is about to allocate, worked out from its arguments before it runs,
//! so the dispatcher can reserve it ([`Ctx::reserve`](crate::interp::eval::Ctx::reserve))
//! and a call past a memory limit ends with `memory_limit` instead of allocating first.
//!
//! Only calls whose result can be much larger than their arguments' own memory are sized
//! here: a count argument (`lists:seq`, `lists:duplicate`, `erlang:make_tuple`,
//! `string:copies`, `binary:copy`, `string:pad`), text turned into a List of code points
//! (`binary_to_list`, `unicode:characters_to_list`, `string:reverse` …: sixteen bytes an
//! element for each byte), text cut into many pieces (`split`, `replace`, `lexemes`,
//! `tokens`: one String per piece), and deep lists whose sublists may be shared
//! (`lists:flatten`, `append/1`, `concat`, `iolist_to_binary`, `iolist_size` …: a List
//! holding the same 100,000-element sublist 1,000 times is 1.6 MB that flattens to 1.6 GB).
//! The sizes are upper bounds of what the call builds, never far above it. Every other call
//! is sized by its arguments ([`copied_bytes`]): the copy a native walk makes of them and a
//! result of their size.

use std::collections::HashMap;

use crate::value::Value;

/// A Value in a List, Array or tuple.
const EACH: usize = std::mem::size_of::<Value>();
/// A one-piece String: its Value, the shared text record and the text's own buffer.
const PIECE: usize = EACH + 64;

/// The bytes the call `module:f(a…)` will allocate for its result when that can be much
/// larger than its arguments; `None` when it cannot.
pub(super) fn amplified_bytes(module: &str, f: &str, a: &[Value]) -> Option<usize> {
    match (module, f, a) {
        ("lists", "seq", [from, to, rest @ ..]) => {
            let (Value::Int(from), Value::Int(to)) = (from, to) else {
                return None;
            };
            let step = match rest {
                [] => 1,
                [Value::Int(s)] if *s != 0 => i128::from(*s),
                _ => return None,
            };
            // A sequence running the wrong way is the function's error to raise.
            let n = (i128::from(*to) - i128::from(*from)) / step + 1;
            Some(usize::try_from(n).ok()?.saturating_mul(EACH))
        }
        ("lists", "duplicate", [n, _]) | ("erlang", "make_tuple", [n, ..]) => {
            Some(count(n)?.saturating_mul(EACH))
        }
        ("string", "pad", [_, n, ..]) => Some(count(n)?.saturating_mul(EACH)),
        ("string", "copies", [s, n]) => Some(count(n)?.saturating_mul(len(s)).saturating_mul(EACH)),
        ("binary", "copy", [b, n]) => Some(count(n)?.saturating_mul(len(b))),
        // Text to a List of code points (or of graphemes): at most one element a byte.
        ("erlang", "binary_to_list" | "bitstring_to_list", [s, ..])
        | ("binary", "bin_to_list", [s, ..])
        | ("unicode", "characters_to_list", [s, ..])
        | ("string", "reverse" | "to_graphemes", [s]) => Some(text_len(s)?.saturating_mul(EACH)),
        // Text cut at every separator: one String a piece (and the replacement between two
        // pieces for `replace`), or one binary for `binary:replace`.
        ("string" | "binary", "split", [s, sep, ..])
        | ("string", "lexemes" | "tokens", [s, sep]) => Some(pieces(s, sep)?.saturating_mul(PIECE)),
        ("string", "replace", [s, pat, _, ..]) => Some(pieces(s, pat)?.saturating_mul(2 * PIECE)),
        ("binary", "replace", [s, pat, rep, ..]) => {
            let found = pieces(s, pat)? - 1;
            Some(
                found
                    .saturating_mul(text_len(rep).unwrap_or(0))
                    .saturating_add(text_len(s)?),
            )
        }
        // Deep lists: every leaf once per place it appears.
        // `append/1` (a list of lists); `append/2` copies its first argument only.
        ("lists", "flatten", [l, ..]) | ("lists", "append", [l]) => {
            let d = Deep::of(l);
            Some(d.leaves.saturating_add(d.texts).saturating_mul(EACH))
        }
        // `concat` makes every String element its code points.
        ("lists", "concat", [l]) => {
            let d = Deep::of(l);
            Some(d.leaves.saturating_add(d.bytes).saturating_mul(EACH))
        }
        ("erlang", "iolist_to_binary" | "list_to_binary" | "iolist_size", [l])
        | ("unicode", "characters_to_binary", [l, ..]) => {
            let d = Deep::of(l);
            // A code point is at most four bytes of UTF-8.
            Some(d.leaves.saturating_mul(4).saturating_add(d.bytes))
        }
        _ => None,
    }
}

/// What any call may allocate in proportion to its arguments' own size: their Lists, tuples,
/// maps and texts copied for the walk, and a result of about their size (`lists:reverse`,
/// `sort`, `map`, `maps:from_list` …). Small, but never nothing: a loop that keeps such
/// results grows by a whole argument per reduction, so the dispatcher charges this work
/// and checks it against the account as a step of bt's own would.
pub(super) fn copied_bytes(a: &[Value]) -> usize {
    a.iter()
        .map(|v| match v {
            Value::List(l) => l.len().saturating_mul(EACH),
            Value::Array(l) => l.len().saturating_mul(EACH),
            Value::Tuple(t) => t.len().saturating_mul(EACH),
            Value::Dict(d) => d.len().saturating_mul(2 * EACH),
            Value::Str(t) => t.len(),
            Value::Binary(b) => b.len(),
            _ => 0,
        })
        .fold(0, usize::saturating_add)
        .saturating_mul(2)
}

fn count(v: &Value) -> Option<usize> {
    match v {
        Value::Int(n) => usize::try_from(*n).ok(),
        _ => None,
    }
}

fn len(v: &Value) -> usize {
    match v {
        Value::List(l) => l.len(),
        Value::Array(l) => l.len(),
        Value::Str(t) => t.len(),
        Value::Binary(b) => b.len(),
        _ => 0,
    }
}

/// The bytes of a String or binary argument.
fn text_len(v: &Value) -> Option<usize> {
    match v {
        Value::Str(t) => Some(t.len()),
        Value::Binary(b) => Some(b.len()),
        _ => None,
    }
}

fn bytes(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Str(t) => Some(t.as_bytes()),
        Value::Binary(b) => Some(b.as_slice()),
        _ => None,
    }
}

/// At most how many pieces `s` falls into when cut at `sep`: a String or binary, or a List
/// of them or of code points (every one counted as a separator of its own, which bounds a
/// pattern given as a list of characters from above); `None` unless `s` is text.
fn pieces(s: &Value, sep: &Value) -> Option<usize> {
    let hay = bytes(s)?;
    let found = |needle: &[u8]| {
        if needle.is_empty() {
            hay.len()
        } else {
            memchr::memmem::find_iter(hay, needle).count()
        }
    };
    let one = |v: &Value| match v {
        Value::Int(c) => {
            let c = u32::try_from(*c).ok().and_then(char::from_u32)?;
            Some(found(c.encode_utf8(&mut [0; 4]).as_bytes()))
        }
        v => bytes(v).map(found),
    };
    let all = match sep {
        Value::List(l) => l.iter().filter_map(one).fold(0, usize::saturating_add),
        Value::Array(l) => l.iter().filter_map(one).fold(0, usize::saturating_add),
        other => one(other).unwrap_or(hay.len()),
    };
    Some(all.saturating_add(1))
}

/// The leaves of a deep list (each counted as often as it appears), its String and binary
/// leaves and their bytes; a sublist met again (the same shared storage) is counted from
/// its first visit, so a structure that shares is sized without walking every repetition.
#[derive(Clone, Copy, Default)]
struct Deep {
    leaves: usize,
    texts: usize,
    bytes: usize,
}

impl Deep {
    fn of(v: &Value) -> Deep {
        let mut seen = HashMap::new();
        Deep::walk(v, &mut seen, 0)
    }

    fn text(bytes: usize) -> Deep {
        Deep {
            leaves: 0,
            texts: 1,
            bytes,
        }
    }

    fn walk(v: &Value, seen: &mut HashMap<usize, Deep>, depth: usize) -> Deep {
        // Past this depth the rest is taken as leaves (the call itself refuses or walks it).
        const MAX_DEPTH: usize = 1_000;
        let (key, items): (usize, Box<dyn Iterator<Item = &Value>>) = match v {
            Value::List(l) if depth < MAX_DEPTH => (
                std::ptr::from_ref(&**l) as *const u8 as usize,
                Box::new(l.iter()),
            ),
            Value::Array(a) if depth < MAX_DEPTH => (
                std::ptr::from_ref(&**a) as *const u8 as usize,
                Box::new(a.iter()),
            ),
            Value::Str(t) => return Deep::text(t.len()),
            Value::Binary(b) => return Deep::text(b.len()),
            _ => {
                return Deep {
                    leaves: 1,
                    ..Deep::default()
                }
            }
        };
        if let Some(d) = seen.get(&key) {
            return *d;
        }
        let mut d = Deep::default();
        for x in items {
            let e = Deep::walk(x, seen, depth + 1);
            d.leaves = d.leaves.saturating_add(e.leaves);
            d.texts = d.texts.saturating_add(e.texts);
            d.bytes = d.bytes.saturating_add(e.bytes);
        }
        seen.insert(key, d);
        d
    }
}
