//! The regex selectors of String over the `regex` crate: Perl-style syntax
//! without backreferences or look-around. An invalid pattern raises `regex_error`.
//!
//! `matchesRegex:` answers whether the pattern matches anywhere in the receiver (anchor with
//! `^…$` for a whole-string match). Replacement text is literal (`$1` is not expanded).
//! Compiled patterns are cached per (pattern, options), up to [`CACHE_SIZE`] entries. Each
//! selector charges the receiver's bytes up front (`Ctx::charge`).

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;
use regex::{NoExpand, Regex, RegexBuilder};

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::fault::{lift, str_arg, Fault, Res};
use crate::interp::prims::string::recv;
use crate::value::Value;

/// Compiled patterns kept at most.
pub const CACHE_SIZE: usize = 256;

/// Regex options: `#caseless`, `#multiline`, `#dotall` (`.` matches a newline), `#extended`
/// (whitespace and `#` comments in the pattern are ignored).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    pub caseless: bool,
    pub multiline: bool,
    pub dotall: bool,
    pub extended: bool,
}

/// Options from a Symbol, a String or a List of them.
pub fn options(v: &Value) -> Res<Options> {
    let mut o = Options::default();
    let mut one = |v: &Value| -> Res<()> {
        let name = match v {
            Value::Symbol(s) => s.as_str(),
            Value::Str(s) => s.as_str(),
            other => {
                return Err(Fault::expected(
                    "regex options",
                    "#caseless, #multiline, #dotall or #extended",
                    other,
                ))
            }
        };
        match name {
            "caseless" | "ignoreCase" | "i" => o.caseless = true,
            "multiline" | "m" => o.multiline = true,
            "dotall" | "s" => o.dotall = true,
            "extended" | "x" => o.extended = true,
            other => {
                return Err(Fault::Type(format!(
                "unknown regex option #{other} (use #caseless, #multiline, #dotall or #extended)"
            )))
            }
        }
        Ok(())
    };
    match v {
        Value::List(items) => {
            for item in items.iter() {
                one(item)?;
            }
        }
        Value::Array(items) => {
            for item in items.iter() {
                one(item)?;
            }
        }
        other => one(other)?,
    }
    Ok(o)
}

fn cache() -> &'static Mutex<HashMap<(String, Options), Regex>> {
    static C: OnceLock<Mutex<HashMap<(String, Options), Regex>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The compiled pattern (cached), or `regex_error`.
pub fn compile(pattern: &str, o: Options) -> Res<Regex> {
    let key = (pattern.to_string(), o);
    if let Some(r) = cache().lock().get(&key) {
        return Ok(r.clone());
    }
    let r = RegexBuilder::new(pattern)
        .case_insensitive(o.caseless)
        .multi_line(o.multiline)
        .dot_matches_new_line(o.dotall)
        .ignore_whitespace(o.extended)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("").trim().to_string();
            Fault::Kind(
                ErrorKind::RegexError,
                format!("invalid regex {pattern:?}: {last}"),
            )
        })?;
    let mut c = cache().lock();
    if c.len() >= CACHE_SIZE {
        c.clear();
    }
    c.insert(key, r.clone());
    Ok(r)
}

/// A pattern argument: a String, or a compiled `Regex` value (`prims::regex`).
fn pat(what: &str, v: &Value) -> Res<Regex> {
    if let Some(r) = crate::interp::prims::regex::compiled(v) {
        return Ok(r);
    }
    compile(str_arg(what, v)?, Options::default())
}

/// Both option sets.
pub fn merge(a: Options, b: Options) -> Options {
    Options {
        caseless: a.caseless || b.caseless,
        multiline: a.multiline || b.multiline,
        dotall: a.dotall || b.dotall,
        extended: a.extended || b.extended,
    }
}

/// Charges a search over the receiver up front: a reduction per 64 bytes (the `regex` crate
/// runs in time linear in the input; see `interp::eval::charge`).
fn pay(ctx: &mut Ctx, r: &Value) -> Result<(), Unwind> {
    match r {
        Value::Str(s) => ctx.charge(s.len()),
        _ => Ok(()),
    }
}

/// `matchesRegex:`.
pub fn matches(s: &str, re: &Regex) -> bool {
    re.is_match(s)
}

fn matches_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    pay(ctx, r)?;
    let f = || {
        Ok(Value::bool(matches(
            recv(r)?,
            &pat("matchesRegex:", &a[0])?,
        )))
    };
    lift(ctx, f())
}

fn matches_opts(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    pay(ctx, r)?;
    let f = || {
        let re = match crate::interp::prims::regex::source_and_options(&a[0]) {
            Some((src, o)) => compile(&src, merge(o, options(&a[1])?))?,
            None => compile(str_arg("matchesRegex:options:", &a[0])?, options(&a[1])?)?,
        };
        Ok(Value::bool(matches(recv(r)?, &re)))
    };
    lift(ctx, f())
}

fn first_match(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    pay(ctx, r)?;
    let f = || {
        let re = pat("firstMatch:", &a[0])?;
        Ok(re
            .find(recv(r)?)
            .map_or(Value::Nil, |m| Value::str(m.as_str())))
    };
    lift(ctx, f())
}

/// Reserves the List of Strings the matches of `a[0]` in `r` make (`what` names the
/// selector): counted first for a receiver long enough to matter.
fn reserve_matches(
    ctx: &mut Ctx,
    what: &str,
    r: &Value,
    a: &[Value],
    extra: usize,
) -> Result<(), Unwind> {
    if let Value::Str(s) = r {
        if crate::interp::prims::string::worth_counting(s.len()) {
            if let Ok(re) = pat(what, &a[0]) {
                let n = re.find_iter(s).count() + extra;
                crate::interp::prims::string::reserve_parts(ctx, n, s.len())?;
            }
        }
    }
    Ok(())
}

fn all_matches(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    pay(ctx, r)?;
    reserve_matches(ctx, "allMatches:", r, a, 0)?;
    let f = || {
        let re = pat("allMatches:", &a[0])?;
        Ok(Value::list(
            re.find_iter(recv(r)?).map(|m| Value::str(m.as_str())),
        ))
    };
    lift(ctx, f())
}

fn replace(ctx: &mut Ctx, r: &Value, a: &[Value], all: bool) -> EvalResult {
    pay(ctx, r)?;
    // The copy with every match replaced: at most the receiver plus the replacement once
    // per match, reserved before it is built (`Ctx::reserve`).
    if let (Value::Str(s), Value::Str(w)) = (r, &a[1]) {
        let big = s.len().saturating_mul(w.len()) >= crate::interp::eval::charge::RESERVE_FREE;
        if big {
            if let Ok(re) = pat("replaceAllRegex:with:", &a[0]) {
                let n = if all { re.find_iter(s).count() } else { 1 };
                ctx.reserve(s.len().saturating_add(n.saturating_mul(w.len())))?;
            }
        }
    }
    let f = || {
        let sel = if all {
            "replaceAllRegex:with:"
        } else {
            "replaceRegex:with:"
        };
        let re = pat(sel, &a[0])?;
        let with = str_arg(sel, &a[1])?;
        let s = recv(r)?;
        let out = if all {
            re.replace_all(s, NoExpand(with))
        } else {
            re.replace(s, NoExpand(with))
        };
        Ok(Value::str(out.into_owned()))
    };
    lift(ctx, f())
}

fn replace_first(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    replace(ctx, r, a, false)
}

fn replace_all(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    replace(ctx, r, a, true)
}

fn split(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    pay(ctx, r)?;
    reserve_matches(ctx, "splitRegex:", r, a, 1)?;
    let f = || {
        let re = pat("splitRegex:", &a[0])?;
        Ok(Value::list(re.split(recv(r)?).map(Value::str)))
    };
    lift(ctx, f())
}

pub fn register(p: &mut Prims) {
    let c = "String";
    p.add(c, "matchesRegex:", matches_p);
    p.add(c, "matchesRegex:options:", matches_opts);
    p.add(c, "firstMatch:", first_match);
    p.add(c, "allMatches:", all_matches);
    p.add(c, "replaceRegex:with:", replace_first);
    p.add(c, "replaceAllRegex:with:", replace_all);
    p.add(c, "splitRegex:", split);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Sym;

    #[test]
    fn compile_and_match() {
        let re = compile(r"\d+", Options::default()).unwrap();
        assert!(matches("abc123", &re));
        assert!(!matches("abc", &re));
        let ci = compile(
            "hello",
            Options {
                caseless: true,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(matches("HeLLo", &ci));
        assert!(matches!(
            compile("[invalid", Options::default()),
            Err(Fault::Kind(ErrorKind::RegexError, _))
        ));
        assert!(matches!(
            compile(r"(a)\1", Options::default()),
            Err(Fault::Kind(ErrorKind::RegexError, _))
        ));
    }

    #[test]
    fn option_parsing() {
        assert!(
            options(&Value::Symbol(Sym::new("caseless")))
                .unwrap()
                .caseless
        );
        let both = options(&Value::list([
            Value::sym("caseless"),
            Value::sym("multiline"),
        ]))
        .unwrap();
        assert!(both.caseless && both.multiline);
        assert!(options(&Value::sym("bogus")).is_err());
        assert!(options(&Value::Int(1)).is_err());
    }
}
