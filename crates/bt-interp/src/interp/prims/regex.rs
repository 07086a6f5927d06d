//! `Regex`: a compiled regular expression as an immutable value.
//! `Regex from: aString` / `from:options:` answer `Result ok:` a Regex, or `Result error:` a
//! `regex_error` exception for an invalid pattern. A Regex is accepted wherever the String
//! regex selectors (`string_regex.rs`) take a pattern String. Two Regexes are equal when
//! their source and options are. printString: `Regex(/[0-9]+/)` (options after the slash:
//! `i` caseless, `m` multiline, `s` dotall, `x` extended).

use std::any::Any;

use regex::Regex;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::fault::{article_class, Fault};
use crate::interp::prims::string::regex::{compile, options, Options};
use crate::value::{ClassRef, NativeObj, Value};

pub fn register(p: &mut Prims) {
    let r = "Regex";
    p.add_class(r, "from:", |ctx, _, a| from(ctx, &a[0], Options::default()));
    p.add_class(r, "new", |ctx, rv, _| {
        crate::interp::prims::class::refuse_new(ctx, rv, "Use Regex from: aString")
    });
    p.add_class(r, "from:options:", |ctx, _, a| {
        let o = options(&a[1]).map_err(|f| f.raise(ctx))?;
        from(ctx, &a[0], o)
    });
    p.add(r, "source", |ctx, rv, _| {
        Ok(Value::str(get(ctx, rv)?.source.clone()))
    });
    p.add(r, "options", |ctx, rv, _| {
        let o = get(ctx, rv)?.opts;
        let names = [
            (o.caseless, "caseless"),
            (o.multiline, "multiline"),
            (o.dotall, "dotall"),
            (o.extended, "extended"),
        ];
        Ok(Value::list(
            names
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, n)| Value::sym(n)),
        ))
    });
    p.add(r, "printString", |ctx, rv, _| {
        Ok(Value::str(get(ctx, rv)?.print_string()))
    });
    p.add(r, "displayString", |ctx, rv, _| {
        Ok(Value::str(get(ctx, rv)?.print_string()))
    });
    p.add(r, "matches:", |ctx, rv, a| {
        let re = get(ctx, rv)?.re.clone();
        let s = text(ctx, "matches:", &a[0])?;
        ctx.charge(s.len())?;
        Ok(Value::bool(re.is_match(s)))
    });
    p.add(r, "=:=", |_, rv, a| Ok(Value::bool(same(rv, &a[0]))));
    p.add(r, "==", |_, rv, a| Ok(Value::bool(same(rv, &a[0]))));
    p.add(r, "/=", |_, rv, a| Ok(Value::bool(!same(rv, &a[0]))));
    p.add(r, "=/=", |_, rv, a| Ok(Value::bool(!same(rv, &a[0]))));
}

/// A compiled regular expression.
pub struct RegexVal {
    class: ClassRef,
    pub source: String,
    pub opts: Options,
    pub re: Regex,
}

impl RegexVal {
    fn print_string(&self) -> String {
        let mut flags = String::new();
        for (on, f) in [
            (self.opts.caseless, 'i'),
            (self.opts.multiline, 'm'),
            (self.opts.dotall, 's'),
            (self.opts.extended, 'x'),
        ] {
            if on {
                flags.push(f);
            }
        }
        format!("Regex(/{}/{flags})", self.source)
    }
}

impl NativeObj for RegexVal {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        RegexVal::print_string(self)
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RegexVal>()
            .is_some_and(|o| o.source == self.source && o.opts == self.opts)
    }
    fn hash_code(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.source.hash(&mut h);
        self.opts.hash(&mut h);
        h.finish()
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k: Vec<u64> = "Regex".chars().map(|c| c as u64 + 1).collect();
        k.push(0);
        k.extend(self.source.chars().map(|c| c as u64 + 1));
        k.push(0);
        k.push(
            self.opts.caseless as u64
                | (self.opts.multiline as u64) << 1
                | (self.opts.dotall as u64) << 2
                | (self.opts.extended as u64) << 3,
        );
        (9, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The compiled regex of a Regex value (for the String selectors' pattern arguments).
pub fn compiled(v: &Value) -> Option<Regex> {
    downcast::<RegexVal>(v).map(|r| r.re.clone())
}

/// The source and options of a Regex value.
pub fn source_and_options(v: &Value) -> Option<(String, Options)> {
    downcast::<RegexVal>(v).map(|r| (r.source.clone(), r.opts))
}

fn same(a: &Value, b: &Value) -> bool {
    match (downcast::<RegexVal>(a), downcast::<RegexVal>(b)) {
        (Some(x), Some(y)) => x.source == y.source && x.opts == y.opts,
        _ => false,
    }
}

fn get<'a>(ctx: &Ctx, v: &'a Value) -> Result<&'a RegexVal, Unwind> {
    downcast::<RegexVal>(v).ok_or_else(|| {
        let n = article_class(v);
        ctx.type_err(format!("expected a Regex, got {n}"))
    })
}

fn text<'a>(ctx: &Ctx, what: &str, v: &'a Value) -> Result<&'a str, Unwind> {
    match v {
        Value::Str(s) => Ok(s.as_str()),
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!("Regex {what} expects a String, got {n}")))
        }
    }
}

fn from(ctx: &mut Ctx, src: &Value, opts: Options) -> EvalResult {
    let source = text(ctx, "from:", src)?.to_string();
    match compile(&source, opts) {
        Ok(re) => {
            let class = ctx
                .class_named("Regex")
                .unwrap_or_else(|| ctx.prog.core.object.clone());
            let v = native(RegexVal {
                class,
                source,
                opts,
                re,
            });
            Ok(ctx.make_ok(v))
        }
        Err(f @ Fault::Kind(..)) => match f.raise(ctx) {
            Unwind::Error(exc) => Ok(ctx.make_error(exc)),
            other => Err(other),
        },
        Err(f) => Err(f.raise(ctx)),
    }
}
