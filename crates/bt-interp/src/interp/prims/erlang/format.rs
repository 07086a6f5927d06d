//! `io_lib:format/2` and `io:format/1,2`: Erlang's format directives (`~p ~w ~s ~n ~c ~f
//! ~e ~g ~b ~B ~i ~~`, with field width, precision and `-` for left adjustment) and Erlang's
//! term syntax for `~p`/`~w` (no line breaking). `io` writes through the Transcript.

use super::terms::{atom, chardata, charlist, list_arg, Fail, R};
use crate::interp::eval::Ctx;
use crate::value::{Sym, Value};

pub(super) fn io_lib(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("format" | "fwrite", [fmt, args]) => {
            let text = format(ctx, fmt, args)?;
            // The answer is a List of code points: sixteen bytes for each of them.
            ctx.reserve(text.len().saturating_mul(std::mem::size_of::<Value>()))
                .map_err(Fail::Raised)?;
            Ok(charlist(&text))
        }
        _ => Err(Fail::Undef),
    }
}

pub(super) fn io(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    let text = match (f, a) {
        ("format" | "fwrite", [fmt]) => format(ctx, fmt, &Value::list(Vec::new()))?,
        ("format" | "fwrite", [fmt, args]) => format(ctx, fmt, args)?,
        ("put_chars", [s]) => chardata(s).ok_or(Fail::Badarg)?,
        ("nl", []) => "\n".to_string(),
        _ => return Err(Fail::Undef),
    };
    let t = ctx.class_named("TranscriptStream").ok_or(Fail::Undef)?;
    ctx.send(&Value::Class(t), Sym::new("show:"), &[Value::str(text)])?;
    Ok(atom("ok"))
}

/// The text of `io_lib:format(Format, Args)`. A field width or precision is charged to the
/// memory account before any padding is made (`Ctx::reserve`): `~999999999p` is a
/// `memory_limit`, not gigabytes of spaces.
pub(super) fn format(ctx: &mut Ctx, fmt: &Value, args: &Value) -> Result<String, Fail> {
    let fmt: Vec<char> = match fmt {
        Value::Symbol(s) => s.as_str().chars().collect(),
        Value::Str(_) | Value::Binary(_) | Value::List(_) | Value::Array(_) => {
            chardata(fmt).ok_or(Fail::Badarg)?.chars().collect()
        }
        _ => return Err(Fail::Badarg),
    };
    let mut args = list_arg(args)?.into_iter();
    let mut out = String::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != '~' {
            out.push(c);
            continue;
        }
        let left = fmt.get(i) == Some(&'-');
        if left {
            i += 1;
        }
        let mut num = |i: &mut usize| -> Result<Option<usize>, Fail> {
            if fmt.get(*i) == Some(&'*') {
                *i += 1;
                return match args.next() {
                    Some(Value::Int(n)) if n >= 0 => Ok(Some(n as usize)),
                    _ => Err(Fail::Badarg),
                };
            }
            let start = *i;
            while fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            Ok(fmt[start..*i].iter().collect::<String>().parse().ok())
        };
        let mut width = num(&mut i)?;
        reserve_chars(ctx, width)?;
        let mut precision = None;
        let mut pad = ' ';
        if fmt.get(i) == Some(&'.') {
            i += 1;
            precision = num(&mut i)?;
            reserve_chars(ctx, precision)?;
            if fmt.get(i) == Some(&'.') {
                pad = *fmt.get(i + 1).ok_or(Fail::Badarg)?;
                i += 2;
            }
        }
        let mut unicode = false;
        while matches!(fmt.get(i), Some('t' | 'l')) {
            unicode |= fmt[i] == 't';
            i += 1;
        }
        let ctl = *fmt.get(i).ok_or(Fail::Badarg)?;
        i += 1;
        let mut next = || args.next().ok_or(Fail::Badarg);
        let field = match ctl {
            'n' => "\n".to_string(),
            '~' => "~".to_string(),
            'i' => {
                next()?;
                String::new()
            }
            'c' => {
                let c = match next()? {
                    Value::Int(n) => u32::try_from(n)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or(Fail::Badarg)?,
                    _ => return Err(Fail::Badarg),
                };
                let n = width.unwrap_or(1);
                out.push_str(&c.to_string().repeat(n));
                continue;
            }
            's' => {
                let v = next()?;
                let mut s = match &v {
                    Value::Symbol(_) | Value::Nil | Value::True | Value::False => {
                        super::modules::atom_name(&v)?
                    }
                    // A bare integer is not chardata (a list of them is).
                    Value::Int(_) | Value::Char(_) => return Err(Fail::Badarg),
                    other => chardata(other).ok_or(Fail::Badarg)?,
                };
                if let Some(p) = precision {
                    s = s.chars().take(p).collect();
                }
                s
            }
            'p' | 'w' | 'P' | 'W' => {
                let v = next()?;
                if matches!(ctl, 'P' | 'W') {
                    next()?;
                }
                let mut s = String::new();
                if matches!(ctl, 'p' | 'P') {
                    // The field width of `~p` is the line length; the term starts at the
                    // column the output has reached.
                    let col = 1 + out.chars().rev().take_while(|&c| c != '\n').count();
                    let line = width.take().unwrap_or(80);
                    super::pretty::pretty(&v, unicode, col, line, ctx, &mut s);
                } else {
                    write_term(&v, false, unicode, ctx, &mut s);
                }
                s
            }
            'f' | 'e' | 'g' => {
                let x = match next()? {
                    Value::Float(x) => x.get(),
                    _ => return Err(Fail::Badarg),
                };
                let p = precision.unwrap_or(6);
                match ctl {
                    'f' => fixed(x, p),
                    'e' => exp_text(x, p),
                    _ => {
                        let a = x.abs();
                        if a == 0.0 || (0.1..10000.0).contains(&a) {
                            let int_digits = if a < 1.0 {
                                1
                            } else {
                                a.log10().floor() as usize + 1
                            };
                            let d = p.saturating_sub(int_digits);
                            fixed(x, d)
                        } else {
                            exp_text(x, p)
                        }
                    }
                }
            }
            'b' | 'B' => {
                let base = precision.unwrap_or(10) as u32;
                if !(2..=36).contains(&base) {
                    return Err(Fail::Badarg);
                }
                let n = match &next()? {
                    Value::Int(n) => num_bigint::BigInt::from(*n),
                    Value::BigInt(b) => (**b).clone(),
                    _ => return Err(Fail::Badarg),
                };
                let t = n.to_str_radix(base);
                if ctl == 'B' {
                    t.to_uppercase()
                } else {
                    t
                }
            }
            _ => return Err(Fail::Badarg),
        };
        match width {
            Some(w) if field.chars().count() < w => {
                let fill: String = std::iter::repeat_n(pad, w - field.chars().count()).collect();
                if left {
                    out.push_str(&field);
                    out.push_str(&fill);
                } else {
                    out.push_str(&fill);
                    out.push_str(&field);
                }
            }
            Some(w) if matches!(ctl, 'f' | 'e' | 'g' | 'b' | 'B' | 'p' | 'w') => {
                // A number that does not fit is shown as stars, as Erlang does.
                if matches!(ctl, 'f' | 'e' | 'g' | 'b' | 'B') && field.chars().count() > w {
                    out.push_str(&"*".repeat(w));
                } else {
                    out.push_str(&field);
                }
            }
            Some(w) if ctl == 's' => out.extend(field.chars().take(w)),
            _ => out.push_str(&field),
        }
    }
    if args.next().is_some() {
        return Err(Fail::Badarg);
    }
    Ok(out)
}

/// `x` with `p` digits after the point. A double's exact decimal expansion ends within
/// 1,074 fractional digits: past them the digits are zeros (Rust's formatting refuses a
/// precision over 65,535).
fn fixed(x: f64, p: usize) -> String {
    const EXACT: usize = 1100;
    let mut t = format!("{x:.*}", p.min(EXACT));
    if p > EXACT {
        t.push_str(&"0".repeat(p - EXACT));
    }
    t
}

/// `~e`: `P` significant digits, the exponent without padding (`3.00000e+0`).
fn exp_text(x: f64, p: usize) -> String {
    let d = p.saturating_sub(1);
    // A double's exact decimal expansion has at most 767 significant digits: past them
    // the digits are zeros (Rust's formatting refuses a precision over 65,535).
    const EXACT: usize = 800;
    let mut t = format!("{x:.*e}", d.min(EXACT));
    if d > EXACT {
        if let Some(at) = t.find('e') {
            t.insert_str(at, &"0".repeat(d - EXACT));
        }
    }
    match t.split_once('e') {
        Some((m, e)) if e.starts_with('-') => format!("{m}e{e}"),
        Some((m, e)) => format!("{m}e+{e}"),
        None => t,
    }
}

fn atom_text(name: &str) -> String {
    const RESERVED: [&str; 28] = [
        "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
        "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
        "rem", "try", "when", "xor", "maybe",
    ];
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        && !RESERVED.contains(&name);
    if plain {
        return name.to_string();
    }
    let mut s = String::from("'");
    for c in name.chars() {
        match c {
            '\'' => s.push_str("\\'"),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

fn printable(c: u32, unicode: bool) -> bool {
    matches!(c, 8..=13 | 27 | 32..=126)
        || (160..=255).contains(&c)
        || (unicode && c > 255 && char::from_u32(c).is_some_and(|c| !c.is_control()))
}

fn quote_into(chars: impl Iterator<Item = char>, q: char, out: &mut String) {
    out.push(q);
    for c in chars {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x1b' => out.push_str("\\e"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(q);
}

fn write_bytes(b: &[u8], pretty: bool, unicode: bool, out: &mut String) {
    if pretty && !b.is_empty() {
        if unicode {
            if let Ok(s) = std::str::from_utf8(b) {
                if s.chars().all(|c| printable(c as u32, true)) {
                    out.push_str("<<");
                    quote_into(s.chars(), '"', out);
                    if !s.is_ascii() {
                        out.push_str("/utf8");
                    }
                    out.push_str(">>");
                    return;
                }
            }
        }
        if b.iter().all(|&c| printable(c as u32, false)) {
            out.push_str("<<");
            quote_into(b.iter().map(|&c| c as char), '"', out);
            out.push_str(">>");
            return;
        }
    }
    out.push_str("<<");
    for (i, c) in b.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&c.to_string());
    }
    out.push_str(">>");
}

/// What writing a term needs besides the value: the elements and tail of an improper list
/// (an opaque term, `None` for other values) and a map's pairs in the order `erl` prints
/// them (key order; a hash-trie map's in trie order).
pub(super) trait TermView {
    fn improper(&mut self, v: &Value) -> Option<(Vec<Value>, Value)>;
    fn map_pairs(&mut self, v: &Value) -> Vec<(Value, Value)>;
}

pub(super) type Split<'a> = &'a mut dyn TermView;

impl TermView for Ctx {
    fn improper(&mut self, v: &Value) -> Option<(Vec<Value>, Value)> {
        super::external::improper_parts(self, v)
    }
    fn map_pairs(&mut self, v: &Value) -> Vec<(Value, Value)> {
        let Value::Dict(d) = v else {
            return Vec::new();
        };
        let mut pairs: Vec<(Value, Value)> =
            d.iter().map(|(k, v)| (k.to_value(), v.clone())).collect();
        pairs.sort_by(|a, b| super::modules::erl_cmp(&a.0, &b.0));
        match super::maps::trie_order(self, pairs.clone()) {
            // `io_lib` writes a hash-trie map's pairs from the end of the walk.
            Ok((mut p, true)) => {
                p.reverse();
                p
            }
            _ => pairs,
        }
    }
}

/// A term in Erlang syntax: `~p` (`pretty`: printable lists as strings) or `~w`.
pub(super) fn write_term(v: &Value, pretty: bool, unicode: bool, split: Split, out: &mut String) {
    let seq = |items: &[Value], open: &str, close: &str, split: Split, out: &mut String| {
        out.push_str(open);
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_term(x, pretty, unicode, split, out);
        }
        out.push_str(close);
    };
    match v {
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(b) => out.push_str(&b.to_string()),
        Value::Float(x) => out.push_str(&crate::interp::print::format_float(x.get())),
        Value::Nil => out.push_str("nil"),
        Value::True => out.push_str("true"),
        Value::False => out.push_str("false"),
        Value::Symbol(s) => out.push_str(&atom_text(s.as_str())),
        Value::Str(s) => write_bytes(s.as_bytes(), pretty, unicode, out),
        Value::Binary(b) => write_bytes(b, pretty, unicode, out),
        Value::List(_) | Value::Array(_) => {
            let items = list_arg(v).unwrap_or_default();
            let codes: Option<Vec<char>> = items
                .iter()
                .map(|x| match x {
                    Value::Int(c) if printable(*c as u32, unicode) && *c >= 0 => {
                        char::from_u32(*c as u32)
                    }
                    _ => None,
                })
                .collect();
            match codes {
                Some(cs) if pretty && !cs.is_empty() => quote_into(cs.into_iter(), '"', out),
                _ => seq(&items, "[", "]", split, out),
            }
        }
        Value::Tuple(t) => seq(t, "{", "}", split, out),
        Value::Dict(_) => {
            let pairs = split.map_pairs(v);
            out.push_str("#{");
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_term(k, pretty, unicode, split, out);
                out.push_str(" => ");
                write_term(v, pretty, unicode, split, out);
            }
            out.push('}');
        }
        Value::Char(c) => out.push_str(&(c.get() as u32).to_string()),
        Value::Block(_) => out.push_str("#Fun<erl_eval.1.0>"),
        // A term from a peer (an improper list, a fun, a port): its Erlang text; an
        // improper list's elements as `~p` writes them.
        Value::Native(n) if n.0.class().name.as_str() == "Object" => match split.improper(v) {
            Some((items, tail)) => {
                seq(&items, "[", "|", split, out);
                write_term(&tail, pretty, unicode, split, out);
                out.push(']');
            }
            None => out.push_str(&n.0.print_string()),
        },
        other => {
            let t = crate::interp::print::simple_print(other);
            out.push_str(t.as_deref().unwrap_or("#Ref<0.0.0.0>"));
        }
    }
}

/// Charges a field of `n` characters (up to four bytes each) before it is made.
fn reserve_chars(ctx: &mut Ctx, n: Option<usize>) -> Result<(), Fail> {
    match n {
        Some(n) => ctx.reserve(n.saturating_mul(4)).map_err(Fail::Raised),
        None => Ok(()),
    }
}
