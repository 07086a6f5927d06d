//! `string`, `binary` and `unicode`. `string` functions take chardata (a String or a
//! charlist) and answer the same shape they were given (a String for a String).

use super::terms::{atom, chardata, charlist, int_arg, joined, list, list_arg, Fail, R};
use crate::value::{Ref, Sym, Value};

/// Text and whether it came as a String (binary) rather than a charlist.
fn chars(v: &Value) -> Result<(String, bool), Fail> {
    if !matches!(
        v,
        Value::Str(_) | Value::Binary(_) | Value::List(_) | Value::Array(_)
    ) {
        return Err(Fail::Badarg);
    }
    let bin = matches!(v, Value::Str(_) | Value::Binary(_));
    chardata(v).map(|s| (s, bin)).ok_or(Fail::Badarg)
}

fn shaped(s: &str, bin: bool) -> Value {
    if bin {
        Value::str(s)
    } else {
        charlist(s)
    }
}

fn bytes(v: &Value) -> Result<Vec<u8>, Fail> {
    match v {
        Value::Str(s) => Ok(s.as_bytes().to_vec()),
        Value::Binary(b) => Ok(b.to_vec()),
        _ => Err(Fail::Badarg),
    }
}

fn bin(b: Vec<u8>) -> Value {
    match String::from_utf8(b) {
        Ok(s) => Value::str(s),
        Err(e) => Value::Binary(Ref::new(e.into_bytes())),
    }
}

fn find(h: &[u8], n: &[u8], from: usize) -> Option<usize> {
    if n.is_empty() || from > h.len() {
        return None;
    }
    h[from..]
        .windows(n.len())
        .position(|w| w == n)
        .map(|p| p + from)
}

/// Whether an options list names `opt` (e.g. `#(#global)`).
/// Whether an options list names `opt`; an option outside `known` is `badarg`.
fn has_opt(opts: &Value, opt: &str, known: &[&str]) -> Result<bool, Fail> {
    let opts = list_arg(opts)?;
    let mut found = false;
    for o in &opts {
        match o {
            Value::Symbol(s) if known.contains(&s.as_str()) => found |= s.as_str() == opt,
            _ => return Err(Fail::Badarg),
        }
    }
    Ok(found)
}

pub(super) fn string(f: &str, a: &[Value]) -> R {
    // What the unicode string functions do with a term that is not chardata.
    if let Some(x) = a.first() {
        if chardata(x).is_none() || matches!(x, Value::Int(_) | Value::Char(_)) {
            match f {
                "length" | "trim" | "equal" | "reverse" => return Err(Fail::FunctionClause),
                "split" => return Err(Fail::Other(Sym::new("badmatch"), String::new())),
                "to_integer" => return Ok(Value::tuple(vec![atom("error"), atom("badarg")])),
                _ => {}
            }
        }
    }
    if f == "equal" && a.get(1).is_some_and(|y| chardata(y).is_none()) {
        return Err(Fail::FunctionClause);
    }
    match (f, a) {
        ("uppercase", [s]) => {
            let (s, b) = chars(s)?;
            Ok(shaped(&s.to_uppercase(), b))
        }
        ("lowercase", [s]) => {
            let (s, b) = chars(s)?;
            Ok(shaped(&s.to_lowercase(), b))
        }
        ("titlecase", [s]) => {
            let (s, b) = chars(s)?;
            let mut it = s.chars();
            let t = match it.next() {
                Some(c) => c.to_uppercase().collect::<String>() + it.as_str(),
                None => String::new(),
            };
            Ok(shaped(&t, b))
        }
        ("trim", [s]) => {
            let (s, b) = chars(s)?;
            Ok(shaped(s.trim(), b))
        }
        ("trim", [s, dir]) => {
            let (s, b) = chars(s)?;
            let t = match dir {
                Value::Symbol(d) if d.as_str() == "leading" => s.trim_start(),
                Value::Symbol(d) if d.as_str() == "trailing" => s.trim_end(),
                Value::Symbol(d) if d.as_str() == "both" => s.trim(),
                _ => return Err(Fail::FunctionClause),
            };
            Ok(shaped(t, b))
        }
        ("length", [s]) => Ok(Value::Int(chars(s)?.0.chars().count() as i64)),
        ("reverse", [s]) => {
            // A list of graphemes, last first (a grapheme of one code point is that code).
            let (s, _) = chars(s)?;
            Ok(list(graphemes(&s).into_iter().rev().collect()))
        }
        ("to_graphemes", [s]) => Ok(list(graphemes(&chars(s)?.0))),
        ("casefold", [s]) => {
            let (s, b) = chars(s)?;
            Ok(shaped(&s.to_lowercase(), b))
        }
        ("chomp", [s]) => {
            let (t, b) = chars(s)?;
            let t = t
                .strip_suffix("\r\n")
                .or_else(|| t.strip_suffix('\n'))
                .unwrap_or(&t);
            Ok(shaped(t, b))
        }
        ("to_upper" | "to_lower", [s]) => {
            let up = f == "to_upper";
            let conv = |c: char| -> char {
                let mut it: Box<dyn Iterator<Item = char>> = if up {
                    Box::new(c.to_uppercase())
                } else {
                    Box::new(c.to_lowercase())
                };
                match (it.next(), it.next()) {
                    (Some(x), None) => x,
                    _ => c,
                }
            };
            match s {
                Value::Int(i) => Ok(Value::Int(
                    u32::try_from(*i)
                        .ok()
                        .and_then(char::from_u32)
                        .map(|c| conv(c) as i64)
                        .unwrap_or(*i),
                )),
                Value::List(_) | Value::Array(_) => {
                    let t = chardata(s).ok_or(Fail::FunctionClause)?;
                    Ok(charlist(&t.chars().map(conv).collect::<String>()))
                }
                _ => Err(Fail::FunctionClause),
            }
        }
        ("tokens", [s, seps]) => {
            // Erlang walks the list with a `case` on the separators: a string that is not
            // a list is `function_clause`, separators that are not one `case_clause`.
            let s = match s {
                Value::List(_) | Value::Array(_) => list_arg(s)?,
                _ => return Err(Fail::FunctionClause),
            };
            if s.is_empty() {
                return Ok(list(Vec::new()));
            }
            let seps = match seps {
                Value::List(_) | Value::Array(_) => list_arg(seps)?,
                _ => return Err(Fail::Other(Sym::new("case_clause"), String::new())),
            };
            let is_sep = |c: &Value| seps.iter().any(|x| crate::value::order::strict_eq(x, c));
            Ok(list(
                s.split(is_sep)
                    .filter(|x| !x.is_empty())
                    .map(|x| list(x.to_vec()))
                    .collect(),
            ))
        }
        ("join", [l, sep]) => {
            // `H ++ Sep ++ …`: a part or separator that is not a list is `badarg`.
            let sep = list_arg(sep)?;
            let parts = list_arg(l).map_err(|_| Fail::FunctionClause)?;
            let mut out = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.extend(sep.iter().cloned());
                }
                out.extend(list_arg(p)?);
            }
            Ok(list(out))
        }
        ("strip", [s]) => Ok(charlist(old_chars(s)?.trim_matches(' '))),
        ("pad", [s, n]) | ("pad", [s, n, _]) | ("pad", [s, n, _, _]) => {
            let (t, _) = chars(s)?;
            let n = int_arg(n)?;
            let dir = match a.get(2) {
                None => "trailing".to_string(),
                Some(Value::Symbol(d)) => d.as_str().to_string(),
                Some(_) => return Err(Fail::FunctionClause),
            };
            let c = match a.get(3) {
                None => Value::Int(32),
                Some(c @ Value::Int(_)) => c.clone(),
                Some(_) => return Err(Fail::FunctionClause),
            };
            let missing = (n - graphemes(&t).len() as i64).max(0) as usize;
            let pad = |k: usize| vec![c.clone(); k];
            Ok(list(match dir.as_str() {
                "trailing" => std::iter::once(s.clone()).chain(pad(missing)).collect(),
                "leading" => vec![list(pad(missing)), s.clone()],
                "both" => {
                    // `[Pad, S, Pad]`, and one more character when the padding is odd.
                    let half = list(pad(missing / 2));
                    let mut v = vec![half.clone(), s.clone(), half];
                    v.extend(pad(missing % 2));
                    v
                }
                _ => return Err(Fail::FunctionClause),
            }))
        }
        ("prefix", [s, p]) => {
            let (t, b) = chars(s)?;
            let (p, _) = chars(p)?;
            Ok(match t.strip_prefix(p.as_str()) {
                Some(rest) => shaped(rest, b),
                None => atom("nomatch"),
            })
        }
        ("take", [s, set]) | ("take", [s, set, _]) | ("take", [s, set, _, _]) => {
            let (t, b) = chars(s)?;
            let set = match a.len() {
                2 => old_chars(set).map_err(|_| Fail::Badarg)?,
                _ => old_chars(set)?,
            };
            let complement = matches!(a.get(2), Some(Value::True));
            let trailing = matches!(a.get(3), Some(Value::Symbol(d)) if d.as_str() == "trailing");
            let keep = |c: char| set.contains(c) != complement;
            let (x, y) = if trailing {
                let cut = t
                    .char_indices()
                    .rev()
                    .take_while(|(_, c)| keep(*c))
                    .last()
                    .map(|(i, _)| i)
                    .unwrap_or(t.len());
                (&t[..cut], &t[cut..])
            } else {
                let cut = t
                    .char_indices()
                    .find(|(_, c)| !keep(*c))
                    .map(|(i, _)| i)
                    .unwrap_or(t.len());
                (&t[..cut], &t[cut..])
            };
            Ok(Value::tuple(vec![shaped(x, b), shaped(y, b)]))
        }
        ("trim", [s, dir, set]) => {
            let (t, b) = chars(s)?;
            let set = old_chars(set)?;
            let hit = |c: char| set.contains(c);
            let t = match dir {
                Value::Symbol(d) if d.as_str() == "leading" => t.trim_start_matches(hit),
                Value::Symbol(d) if d.as_str() == "trailing" => t.trim_end_matches(hit),
                Value::Symbol(d) if d.as_str() == "both" => t.trim_matches(hit),
                _ => return Err(Fail::Badarg),
            };
            Ok(shaped(t, b))
        }
        ("find", [s, p, dir]) => {
            let (t, b) = chars(s)?;
            let (p, _) = chars(p)?;
            let at = match dir {
                Value::Symbol(d) if d.as_str() == "leading" => t.find(p.as_str()),
                Value::Symbol(d) if d.as_str() == "trailing" => t.rfind(p.as_str()),
                _ => return Err(Fail::Badarg),
            };
            Ok(match at {
                Some(i) => shaped(&t[i..], b),
                None => atom("nomatch"),
            })
        }
        ("is_empty", [s]) => Ok(Value::bool(chars(s)?.0.is_empty())),
        ("equal", [x, y]) => Ok(Value::bool(chars(x)?.0 == chars(y)?.0)),
        ("split", [s, sep]) => split(s, sep, false),
        ("split", [s, sep, how]) => match how {
            Value::Symbol(h) if h.as_str() == "all" => split(s, sep, true),
            Value::Symbol(h) if h.as_str() == "leading" => split(s, sep, false),
            Value::Symbol(h) if h.as_str() == "trailing" => {
                let (t, b) = chars(s)?;
                let (p, _) = chars(sep)?;
                Ok(list(match (p.is_empty(), t.rsplit_once(p.as_str())) {
                    (false, Some((x, y))) => vec![shaped(x, b), shaped(y, b)],
                    _ => vec![shaped(&t, b)],
                }))
            }
            _ => Err(Fail::Badarg),
        },
        ("lexemes", [s, seps]) => {
            let (t, b) = chars(s)?;
            let d = old_chars(seps)?;
            Ok(list(
                t.split(|c| d.contains(c))
                    .filter(|x| !x.is_empty())
                    .map(|x| shaped(x, b))
                    .collect(),
            ))
        }
        ("find", [s, p]) => {
            let (t, b) = chars(s)?;
            let (p, _) = chars(p)?;
            Ok(match t.find(p.as_str()) {
                Some(i) => shaped(&t[i..], b),
                None => atom("nomatch"),
            })
        }
        ("replace", [s, p, r]) | ("replace", [s, p, r, _]) => {
            // Erlang answers the pieces around each match with the replacement between them
            // (chardata, not flattened).
            let how = match a.get(3) {
                None => atom("leading"),
                Some(h @ Value::Symbol(_)) => h.clone(),
                Some(_) => return Err(Fail::Badarg),
            };
            chars(r)?;
            let pieces = match &string("split", &[s.clone(), p.clone(), how])? {
                Value::List(l) => l.iter().cloned().collect::<Vec<_>>(),
                other => vec![other.clone()],
            };
            Ok(joined(r, pieces))
        }
        ("slice", [s, start]) | ("slice", [s, start, _]) => {
            let (t, b) = chars(s)?;
            let start = usize::try_from(int_arg(start)?).map_err(|_| Fail::FunctionClause)?;
            let len = match a.get(2) {
                Some(Value::Symbol(s)) if s.as_str() == "infinity" => usize::MAX,
                Some(n) => usize::try_from(int_arg(n)?).map_err(|_| Fail::FunctionClause)?,
                None => usize::MAX,
            };
            Ok(shaped(
                &t.chars().skip(start).take(len).collect::<String>(),
                b,
            ))
        }
        ("to_integer", [s]) => {
            let (t, b) = chars(s)?;
            let digits_end = t
                .char_indices()
                .skip_while(|(i, c)| *i == 0 && (*c == '-' || *c == '+'))
                .find(|(_, c)| !c.is_ascii_digit())
                .map(|(i, _)| i)
                .unwrap_or(t.len());
            let num = &t[..digits_end];
            match num.trim_start_matches(['-', '+']).is_empty() {
                true => Ok(Value::tuple(vec![atom("error"), atom("no_integer")])),
                false => {
                    let n = num.strip_prefix('+').unwrap_or(num);
                    let v =
                        num_bigint::BigInt::parse_bytes(n.as_bytes(), 10).ok_or(Fail::Badarg)?;
                    let v = match num_traits::ToPrimitive::to_i64(&v) {
                        Some(i) => Value::Int(i),
                        None => Value::BigInt(Ref::new(v)),
                    };
                    Ok(Value::tuple(vec![v, shaped(&t[digits_end..], b)]))
                }
            }
        }
        ("to_float", [s]) => {
            let (t, b) = chars(s)?;
            // The longest prefix that parses as an Erlang float.
            let mut best = None;
            for (i, _) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
                let p = &t[..i];
                let body = p.strip_prefix(['-', '+']).unwrap_or(p);
                let digit_first = body.starts_with(|c: char| c.is_ascii_digit());
                if digit_first && p.contains('.') && !p.ends_with('.') && p.parse::<f64>().is_ok() {
                    best = Some(i);
                }
            }
            Ok(match best {
                Some(i) => Value::tuple(vec![
                    Value::float(t[..i].parse::<f64>().unwrap_or(0.0)),
                    shaped(&t[i..], b),
                ]),
                None => Value::tuple(vec![atom("error"), atom("no_float")]),
            })
        }
        ("concat", [x, y]) => {
            let (x, b) = chars(x)?;
            let (y, _) = chars(y)?;
            Ok(shaped(&(x + &y), b))
        }
        ("copies", [s, n]) => {
            let (t, b) = (old_chars(s)?, false);
            let n = usize::try_from(int_arg(n).map_err(|_| Fail::FunctionClause)?)
                .map_err(|_| Fail::FunctionClause)?;
            if t.len().saturating_mul(n) > 1 << 28 {
                return Err(Fail::Badarg);
            }
            Ok(shaped(&t.repeat(n), b))
        }
        _ => Err(Fail::Undef),
    }
}

/// Text of the charlist functions of the old API (a binary is `function_clause`).
fn old_chars(v: &Value) -> Result<String, Fail> {
    match v {
        Value::List(_) | Value::Array(_) => chardata(v).ok_or(Fail::FunctionClause),
        _ => Err(Fail::FunctionClause),
    }
}

/// The grapheme clusters of `s`: a cluster of one code point as its code, else a list of
/// codes.
fn graphemes(s: &str) -> Vec<Value> {
    use unicode_segmentation::UnicodeSegmentation;
    s.graphemes(true)
        .map(|g| {
            let mut it = g.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Value::Int(c as i64),
                _ => charlist(g),
            }
        })
        .collect()
}

fn split(s: &Value, sep: &Value, all: bool) -> R {
    let (t, b) = chars(s)?;
    let (p, _) = chars(sep)?;
    if p.is_empty() {
        return Ok(list(vec![shaped(&t, b)]));
    }
    Ok(list(if all {
        t.split(p.as_str()).map(|x| shaped(x, b)).collect()
    } else {
        match t.split_once(p.as_str()) {
            Some((x, y)) => vec![shaped(x, b), shaped(y, b)],
            None => vec![shaped(&t, b)],
        }
    }))
}

pub(super) fn binary(f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("split", [s, p]) => bsplit(s, p, false),
        ("split", [s, p, opts]) => {
            const KNOWN: [&str; 3] = ["global", "trim", "trim_all"];
            let parts = bsplit(s, p, has_opt(opts, "global", &KNOWN)?)?;
            let (trim, trim_all) = (
                has_opt(opts, "trim", &KNOWN)?,
                has_opt(opts, "trim_all", &KNOWN)?,
            );
            let mut parts = list_arg(&parts)?;
            let empty = |v: &Value| matches!(v, Value::Str(s) if s.is_empty());
            if trim_all {
                parts.retain(|v| !empty(v));
            } else if trim {
                while parts.last().is_some_and(empty) {
                    parts.pop();
                }
            }
            Ok(list(parts))
        }
        ("part", [s, pos, len]) => {
            let b = bytes(s)?;
            let (pos, len) = (int_arg(pos)?, int_arg(len)?);
            let (lo, hi) = if len >= 0 {
                (pos, pos + len)
            } else {
                (pos + len, pos)
            };
            if lo < 0 || hi as usize > b.len() {
                return Err(Fail::Badarg);
            }
            Ok(bin(b[lo as usize..hi as usize].to_vec()))
        }
        ("part", [s, pl]) => match pl {
            Value::Tuple(t) if t.len() == 2 => {
                binary("part", &[s.clone(), t[0].clone(), t[1].clone()])
            }
            _ => Err(Fail::Badarg),
        },
        ("copy", [s]) => Ok(bin(bytes(s)?)),
        ("copy", [s, n]) => {
            let b = bytes(s)?;
            let n = usize::try_from(int_arg(n)?).map_err(|_| Fail::Badarg)?;
            if b.len().saturating_mul(n) > 1 << 28 {
                return Err(Fail::Badarg);
            }
            Ok(bin(b.repeat(n)))
        }
        ("replace", [s, p, r]) => breplace(s, p, r, false),
        ("replace", [s, p, r, opts]) => breplace(s, p, r, has_opt(opts, "global", &["global"])?),
        ("match", [s, p]) => {
            let (b, p) = (bytes(s)?, bytes(p)?);
            if p.is_empty() {
                return Err(Fail::Badarg);
            }
            Ok(match find(&b, &p, 0) {
                Some(i) => Value::tuple(vec![Value::Int(i as i64), Value::Int(p.len() as i64)]),
                None => atom("nomatch"),
            })
        }
        ("matches", [s, p]) => {
            let (b, p) = (bytes(s)?, bytes(p)?);
            if p.is_empty() {
                return Err(Fail::Badarg);
            }
            let mut out = Vec::new();
            let mut at = 0;
            while let Some(i) = find(&b, &p, at) {
                out.push(Value::tuple(vec![
                    Value::Int(i as i64),
                    Value::Int(p.len() as i64),
                ]));
                at = i + p.len();
            }
            Ok(list(out))
        }
        ("first", [s]) => bytes(s)?
            .first()
            .map(|c| Value::Int(*c as i64))
            .ok_or(Fail::Badarg),
        ("last", [s]) => bytes(s)?
            .last()
            .map(|c| Value::Int(*c as i64))
            .ok_or(Fail::Badarg),
        ("at", [s, i]) => {
            let b = bytes(s)?;
            usize::try_from(int_arg(i)?)
                .ok()
                .and_then(|i| b.get(i))
                .map(|c| Value::Int(*c as i64))
                .ok_or(Fail::Badarg)
        }
        ("bin_to_list", [s]) => Ok(list(
            bytes(s)?
                .into_iter()
                .map(|c| Value::Int(c as i64))
                .collect(),
        )),
        ("list_to_bin", [l]) => super::modules::erlang_iolist(l),
        _ => Err(Fail::Undef),
    }
}

fn bsplit(s: &Value, p: &Value, global: bool) -> R {
    let (b, p) = (bytes(s)?, bytes(p)?);
    if p.is_empty() {
        return Err(Fail::Badarg);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = find(&b, &p, at) {
        out.push(bin(b[at..i].to_vec()));
        at = i + p.len();
        if !global {
            break;
        }
    }
    out.push(bin(b[at..].to_vec()));
    Ok(list(out))
}

fn breplace(s: &Value, p: &Value, r: &Value, global: bool) -> R {
    let (b, p, r) = (bytes(s)?, bytes(p)?, bytes(r)?);
    if p.is_empty() {
        return Err(Fail::Badarg);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = find(&b, &p, at) {
        out.extend_from_slice(&b[at..i]);
        out.extend_from_slice(&r);
        at = i + p.len();
        if !global {
            break;
        }
    }
    out.extend_from_slice(&b[at..]);
    Ok(bin(out))
}

pub(super) fn unicode(f: &str, a: &[Value]) -> R {
    let to_list = match f {
        "characters_to_binary" => false,
        "characters_to_list" => true,
        _ => return Err(Fail::Undef),
    };
    let (data, input, output) = match a {
        [d] => (d, Enc::Utf8, Enc::Utf8),
        [d, i] => (d, Enc::of(i)?, Enc::Utf8),
        [d, i, o] if !to_list => (d, Enc::of(i)?, Enc::of(o)?),
        _ => return Err(Fail::Undef),
    };
    if output != Enc::Utf8 || matches!(input, Enc::Utf16(_) | Enc::Utf32(_)) {
        let r = ml_map(data, input, output)?;
        if !to_list {
            return Ok(r);
        }
        // A list from UTF-16 or UTF-32: the UTF-8 binary's characters (`unicode.erl`).
        let chars = |v: &Value| charlist(std::str::from_utf8(bytes_of(v)).unwrap_or(""));
        return Ok(match &r {
            Value::Tuple(t) if t.len() == 3 => {
                Value::tuple(vec![t[0].clone(), chars(&t[1]), t[2].clone()])
            }
            v => chars(v),
        });
    }
    let latin1_in = input == Enc::Latin1;
    let mut conv = Conv {
        latin1_in,
        done: String::new(),
        pending: Vec::new(),
    };
    let outcome = conv.walk(data)?;
    // A truncated UTF-8 sequence at the very end is `incomplete`.
    let (tag, rest) = match outcome {
        None if conv.pending.is_empty() => (None, None),
        None => (
            Some("incomplete"),
            Some(bin_value(std::mem::take(&mut conv.pending))),
        ),
        Some(r) => (Some("error"), Some(r)),
    };
    let done = if to_list {
        charlist(&conv.done)
    } else {
        Value::str(conv.done)
    };
    Ok(match (tag, rest) {
        (Some(tag), Some(rest)) => Value::tuple(vec![atom(tag), done, rest]),
        _ => done,
    })
}

/// A character encoding `unicode` names: `latin1`, `unicode`/`utf8`, `utf16`/`{utf16,
/// big|little}`, `utf32`/`{utf32, big|little}` (big endian unless said otherwise).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Enc {
    Latin1,
    Utf8,
    /// Little endian?
    Utf16(bool),
    Utf32(bool),
}

impl Enc {
    fn of(v: &Value) -> Result<Enc, Fail> {
        let name = |v: &Value| v.as_sym().map(|s| s.as_str().to_string());
        match v {
            Value::Symbol(s) => match s.as_str() {
                "unicode" | "utf8" => Ok(Enc::Utf8),
                "latin1" => Ok(Enc::Latin1),
                "utf16" => Ok(Enc::Utf16(false)),
                "utf32" => Ok(Enc::Utf32(false)),
                _ => Err(Fail::Badarg),
            },
            Value::Tuple(t) if t.len() == 2 => {
                let little = match name(&t[1]).as_deref() {
                    Some("big") => false,
                    Some("little") => true,
                    _ => return Err(Fail::Badarg),
                };
                match name(&t[0]).as_deref() {
                    Some("utf16") => Ok(Enc::Utf16(little)),
                    Some("utf32") => Ok(Enc::Utf32(little)),
                    _ => Err(Fail::Badarg),
                }
            }
            _ => Err(Fail::Badarg),
        }
    }

    /// The first character of `b`, with the bytes it takes.
    fn decode(self, b: &[u8]) -> Dec {
        let unit = |b: &[u8], n: usize, little: bool| -> u32 {
            let mut x = 0u32;
            for k in 0..n {
                let byte = if little { b[n - 1 - k] } else { b[k] };
                x = x << 8 | byte as u32;
            }
            x
        };
        match self {
            Enc::Latin1 => Dec::Char(b[0] as u32, 1),
            Enc::Utf8 => {
                let window = &b[..b.len().min(4)];
                let first = |s: &str| s.chars().next().map(|c| (c as u32, c.len_utf8()));
                match std::str::from_utf8(window) {
                    Ok(s) => first(s).map_or(Dec::Bad, |(c, n)| Dec::Char(c, n)),
                    Err(e) if e.valid_up_to() > 0 => {
                        let s = std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or("");
                        first(s).map_or(Dec::Bad, |(c, n)| Dec::Char(c, n))
                    }
                    Err(e) if e.error_len().is_none() => {
                        let need = match b[0] {
                            0xc0..=0xdf => 2,
                            0xe0..=0xef => 3,
                            _ => 4,
                        };
                        Dec::Incomplete(need - b.len())
                    }
                    Err(_) => Dec::Bad,
                }
            }
            Enc::Utf16(little) => {
                if b.len() < 2 {
                    return Dec::Incomplete(2 - b.len());
                }
                let u = unit(b, 2, little);
                match u {
                    0xd800..=0xdbff => {
                        if b.len() < 4 {
                            return Dec::Incomplete(4 - b.len());
                        }
                        match unit(&b[2..], 2, little) {
                            l @ 0xdc00..=0xdfff => {
                                Dec::Char(0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00), 4)
                            }
                            _ => Dec::Bad,
                        }
                    }
                    0xdc00..=0xdfff => Dec::Bad,
                    u => Dec::Char(u, 2),
                }
            }
            Enc::Utf32(little) => {
                if b.len() < 4 {
                    return Dec::Incomplete(4 - b.len());
                }
                match unit(b, 4, little) {
                    0xd800..=0xdfff => Dec::Bad,
                    u if u > 0x10ffff => Dec::Bad,
                    u => Dec::Char(u, 4),
                }
            }
        }
    }

    /// Writes character `c` in this encoding; false if it has no form there.
    fn encode(self, c: u32, out: &mut Vec<u8>) -> bool {
        let Some(ch) = char::from_u32(c) else {
            return false;
        };
        let put = |x: u32, n: usize, little: bool, out: &mut Vec<u8>| {
            let be = &x.to_be_bytes()[4 - n..];
            if little {
                out.extend(be.iter().rev());
            } else {
                out.extend_from_slice(be);
            }
        };
        match self {
            Enc::Latin1 if c > 255 => return false,
            Enc::Latin1 => out.push(c as u8),
            Enc::Utf8 => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
            Enc::Utf16(little) => {
                let mut units = [0u16; 2];
                for u in ch.encode_utf16(&mut units) {
                    put(*u as u32, 2, little, out);
                }
            }
            Enc::Utf32(little) => put(c, 4, little, out),
        }
        true
    }
}

/// One step of [`Enc::decode`].
enum Dec {
    Char(u32, usize),
    /// The bytes end inside a character that needs this many more.
    Incomplete(usize),
    Bad,
}

/// `unicode:characters_to_binary(Data, In, Out)` when `Out` is not UTF-8 or `In` is UTF-16 or
/// UTF-32: Erlang's own walk (`unicode.erl`'s `ml_map`), so a bad character (or one `Out`
/// cannot hold) is reported in its shape — `{error, Converted, Rest}` where the rest of a
/// list holds the bad integer as `[N]` and each enclosing list wraps the rest of its
/// elements around it (`[[256],98]`), a binary's rest is the binary from the bad character
/// on, a character split between two binaries is joined, and a binary longer than 8192
/// bytes counts as two (its first 8192 bytes, then the others).
fn ml_map(data: &Value, input: Enc, output: Enc) -> R {
    let mut w = MlMap {
        input,
        output,
        out: Vec::new(),
        pending: None,
    };
    let step = match data {
        Value::Str(_) | Value::Binary(_) => w.top_binary(bytes_of(data))?,
        _ => w.list(&list_arg(data)?)?,
    };
    let out = bin_value(std::mem::take(&mut w.out));
    Ok(match (step, w.pending) {
        (Step::Error(rest), _) => Value::tuple(vec![atom("error"), out, rest]),
        (Step::Done, Some((inc, _))) => Value::tuple(vec![atom("incomplete"), out, bin_value(inc)]),
        (Step::Done, None) => out,
    })
}

fn bytes_of(v: &Value) -> &[u8] {
    match v {
        Value::Str(s) => s.as_bytes(),
        Value::Binary(b) => b,
        _ => &[],
    }
}

enum Step {
    Done,
    Error(Value),
}

/// [`ml_map`]'s walk: the bytes written, and the start of a character a binary left
/// unfinished with the number of bytes it still needs.
struct MlMap {
    input: Enc,
    output: Enc,
    out: Vec<u8>,
    pending: Option<(Vec<u8>, usize)>,
}

/// Binaries are taken 8192 bytes at a time.
const PART: usize = 8192;

impl MlMap {
    /// One binary part: its characters written while `output` holds them; the rest from the
    /// first other one (or bad byte), or the unfinished character it ends with.
    fn part(&mut self, b: &[u8]) -> Result<Option<Value>, Fail> {
        let mut i = 0;
        while i < b.len() {
            match self.input.decode(&b[i..]) {
                Dec::Char(c, n) => {
                    if !self.output.encode(c, &mut self.out) {
                        return Ok(Some(bin_value(b[i..].to_vec())));
                    }
                    i += n;
                }
                Dec::Incomplete(need) => {
                    self.pending = Some((b[i..].to_vec(), need));
                    return Ok(None);
                }
                Dec::Bad => return Ok(Some(bin_value(b[i..].to_vec()))),
            }
        }
        Ok(None)
    }

    /// The whole argument is one binary.
    fn top_binary(&mut self, b: &[u8]) -> Result<Step, Fail> {
        if b.len() > PART {
            let parts = vec![bin_value(b[..PART].to_vec()), bin_value(b[PART..].to_vec())];
            return self.list(&parts);
        }
        Ok(match self.part(b)? {
            Some(rest) => Step::Error(rest),
            None => Step::Done,
        })
    }

    fn list(&mut self, items: &[Value]) -> Result<Step, Fail> {
        for (i, x) in items.iter().enumerate() {
            let rest_after = |r: Value| {
                let mut l = vec![r];
                l.extend(items[i + 1..].iter().cloned());
                Step::Error(Value::list(l))
            };
            match x {
                Value::Int(_) | Value::Char(_) => {
                    if let Some((inc, _)) = self.pending.take() {
                        let mut l = vec![bin_value(inc)];
                        l.extend(items[i..].iter().cloned());
                        return Ok(Step::Error(Value::list(l)));
                    }
                    let n = match x {
                        Value::Int(n) => *n,
                        Value::Char(c) => c.get() as i64,
                        _ => -1,
                    };
                    // Integers past Latin-1 are errors when the input is Latin-1 (as Erlang).
                    let limit = if self.input == Enc::Latin1 {
                        255
                    } else {
                        0x10ffff
                    };
                    match n {
                        n if n < 0 => return Err(Fail::Badarg),
                        n if n <= limit && self.output.encode(n as u32, &mut self.out) => {}
                        _ => return Ok(rest_after(Value::list(vec![x.clone()]))),
                    }
                }
                Value::Str(_) | Value::Binary(_) => {
                    let b = bytes_of(x);
                    if let Some((inc, missing)) = self.pending.take() {
                        if b.len() >= missing {
                            let mut head = inc;
                            head.extend_from_slice(&b[..missing]);
                            let mut l = vec![bin_value(head), bin_value(b[missing..].to_vec())];
                            l.extend(items[i + 1..].iter().cloned());
                            return self.list(&l);
                        }
                        let mut more = inc;
                        more.extend_from_slice(b);
                        self.pending = Some((more, missing - b.len()));
                        continue;
                    }
                    if b.len() > PART {
                        let mut l =
                            vec![bin_value(b[..PART].to_vec()), bin_value(b[PART..].to_vec())];
                        l.extend(items[i + 1..].iter().cloned());
                        return self.list(&l);
                    }
                    if let Some(rest) = self.part(b)? {
                        return Ok(rest_after(rest));
                    }
                }
                Value::List(_) | Value::Array(_) => {
                    if let Step::Error(rest) = self.list(&list_arg(x)?)? {
                        return Ok(rest_after(rest));
                    }
                }
                _ => return Err(Fail::Badarg),
            }
        }
        Ok(Step::Done)
    }
}

/// Bytes as bt holds a binary: a String when they are UTF-8.
fn bin_value(b: Vec<u8>) -> Value {
    match String::from_utf8(b) {
        Ok(s) => Value::str(s),
        Err(e) => Value::Binary(Ref::new(e.into_bytes())),
    }
}

/// The List of `whole`'s elements from `from` on (`whole` a List or an Array), headed by
/// `first` when given. A List's rest shares its storage (an RRB vector's `skip`).
fn tail(whole: &Value, from: usize, first: Option<Value>) -> Value {
    match whole {
        Value::List(l) => {
            let mut rest = l.skip(from);
            if let Some(f) = first {
                rest.push_front(f);
            }
            Value::List(Ref::new(rest))
        }
        Value::Array(a) => Value::list(first.into_iter().chain(a.iter().skip(from).cloned())),
        _ => Value::list(first),
    }
}

/// `unicode:characters_to_*`'s walk over chardata: the characters converted so far, and the
/// bytes of a UTF-8 sequence a binary left unfinished (the next binary may finish it).
struct Conv {
    latin1_in: bool,
    done: String,
    pending: Vec<u8>,
}

impl Conv {
    /// Converts `v`; answers the rest from the first bad element on (`None`: all of it
    /// converted), shaped as Erlang answers it: the list from that element on, an element
    /// that is a list holding it replaced by its own rest, a binary from its bad byte on.
    /// A value that is not chardata is `badarg`.
    fn walk(&mut self, v: &Value) -> Result<Option<Value>, Fail> {
        match v {
            Value::Str(_) | Value::Binary(_) => {
                let b: &[u8] = match v {
                    Value::Str(s) => s.as_bytes(),
                    Value::Binary(b) => b,
                    _ => &[],
                };
                Ok(self.binary(b))
            }
            Value::List(l) => self.walk_items(v, l.iter()),
            Value::Array(a) => self.walk_items(v, a.iter()),
            _ => Err(Fail::Badarg),
        }
    }

    /// [`Conv::walk`] over the elements of the List or Array `whole`. A rest shares the
    /// elements' storage where it can ([`tail`]): a conversion that stops early in a long
    /// list answers its rest without a copy of it.
    fn walk_items<'a>(
        &mut self,
        whole: &Value,
        items: impl Iterator<Item = &'a Value>,
    ) -> Result<Option<Value>, Fail> {
        for (i, x) in items.enumerate() {
            if !self.pending.is_empty() && !self.finishes_pending(x) {
                // An unfinished sequence followed by something else.
                let pend = bin_value(std::mem::take(&mut self.pending));
                return Ok(Some(Value::list(vec![pend, tail(whole, i, None)])));
            }
            match x {
                Value::Int(_) | Value::Char(_) => {
                    let code = match x {
                        Value::Int(n) => *n,
                        Value::Char(c) => c.get() as i64,
                        _ => -1,
                    };
                    let code = if self.latin1_in && code > 255 {
                        -1
                    } else {
                        code
                    };
                    match u32::try_from(code).ok().and_then(char::from_u32) {
                        Some(c) => self.done.push(c),
                        None => return Ok(Some(tail(whole, i, None))),
                    }
                }
                Value::Str(_) | Value::Binary(_) | Value::List(_) | Value::Array(_) => {
                    if let Some(r) = self.walk(x)? {
                        return Ok(Some(tail(whole, i + 1, Some(r))));
                    }
                }
                _ => return Err(Fail::Badarg),
            }
        }
        Ok(None)
    }

    /// Is `x` a binary whose first bytes finish the unfinished sequence?
    fn finishes_pending(&self, x: &Value) -> bool {
        let b: &[u8] = match x {
            Value::Str(s) => s.as_bytes(),
            Value::Binary(b) => b,
            _ => return false,
        };
        let mut head = self.pending.clone();
        head.extend(b.iter().take(4));
        match std::str::from_utf8(&head) {
            Ok(_) => true,
            Err(e) => e.valid_up_to() > 0 || e.error_len().is_none(),
        }
    }

    /// A binary's bytes (after any unfinished sequence the previous one left).
    fn binary(&mut self, b: &[u8]) -> Option<Value> {
        if self.latin1_in {
            self.done.extend(b.iter().map(|&x| x as char));
            return None;
        }
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(b);
        match std::str::from_utf8(&bytes) {
            Ok(s) => {
                self.done.push_str(s);
                None
            }
            Err(e) => {
                let good = e.valid_up_to();
                if let Ok(s) = std::str::from_utf8(&bytes[..good]) {
                    self.done.push_str(s);
                }
                match e.error_len() {
                    // Truncated at the end: the next binary may finish it.
                    None => {
                        self.pending = bytes[good..].to_vec();
                        None
                    }
                    Some(_) => Some(bin_value(bytes[good..].to_vec())),
                }
            }
        }
    }
}
