//! `Json`: `Json parse:` answers a Result (reader in `json_parse.rs`);
//! `Json generate:` / `Json prettyPrint:` write what JSON can hold and raise `type_error`
//! naming the path of anything else. Also the default `asJson` of Value instances (the
//! JsonRepresentable protocol): a Dictionary of field name → value.
//!
//! Output is deterministic: Dictionaries are written in their term order, Value
//! instances' fields in field-name order, Sets in term order. Floats use the printString
//! digits (shortest round trip). Strings are escaped by serde_json.
//!
//! Mapping (generate): nil → null, Booleans, Integers of any size, Floats, Strings, Symbols
//! and Characters → strings, List/Array/Tuple/Set/Bag/Queue/Interval → arrays, Dictionary
//! (String or Symbol keys) → objects, anything answering `asJson` (Value instances by default,
//! DateTime as its ISO 8601 string) → what its `asJson` answers.

use crate::interp::class::ClassExt;
use crate::interp::class::ClassKind;
use crate::interp::error::ErrorKind;
use crate::interp::eval::charge::{Meter, ELEM};
use crate::interp::eval::{Ctx, EvalResult, Method, Prims, Unwind};
use crate::interp::prims::fault::article_class;
use crate::interp::prims::json_parse;
use crate::interp::print::format_float;
use crate::value::{Sym, Value};

pub fn register(p: &mut Prims) {
    let j = "Json";
    p.add_class(j, "parse:", parse);
    p.add_class(j, "generate:", |ctx, _, a| generate(ctx, &a[0], false));
    p.add_class(j, "prettyPrint:", |ctx, _, a| generate(ctx, &a[0], true));
    p.add("Value", "asJson", value_as_json);
}

fn parse(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let text = match &a[0] {
        Value::Str(s) => s.clone(),
        other => {
            let n = article_class(other);
            return Err(ctx.type_err(format!("Json parse: expects a String, got {n}")));
        }
    };
    // The reader is linear in the input: a reduction per 64 bytes, up front. A huge Integer
    // is read by the metered parser (interruptible pieces, not one quadratic call).
    ctx.charge(text.len())?;
    let parsed = {
        let mut big =
            |digits: &str| crate::interp::prims::number::metered::parse_integer(ctx, digits);
        json_parse::parse_with(&text, &mut big)
    };
    match parsed {
        Ok(v) => Ok(ctx.make_ok(v)),
        Err(json_parse::Failed::Stopped(u)) => Err(u),
        Err(json_parse::Failed::Syntax(e)) => match ctx.err(ErrorKind::ParseError, e.to_string()) {
            Unwind::Error(exc) => Ok(ctx.make_error(exc)),
            other => Err(other),
        },
    }
}

/// `Json generate:` (compact) or `Json prettyPrint:` (two-space indentation).
pub fn generate(ctx: &mut Ctx, v: &Value, pretty: bool) -> EvalResult {
    let mut w = Writer {
        out: Vec::with_capacity(64),
        pretty,
        indent: 0,
        path: Vec::new(),
        meter: Meter::default(),
        as_json: Sym::new("asJson"),
        depth: 0,
    };
    w.value(ctx, v)?;
    let Writer { out, meter, .. } = w;
    meter.finish(ctx)?;
    match String::from_utf8(out) {
        Ok(s) => Ok(Value::str(s)),
        Err(_) => Err(ctx.err(
            ErrorKind::RuntimeError,
            "Json generate: produced invalid UTF-8",
        )),
    }
}

/// A step of the path to the value being written (for error messages).
enum Seg {
    Index(usize),
    Key(String),
}

struct Writer {
    out: Vec<u8>,
    pretty: bool,
    indent: usize,
    path: Vec<Seg>,
    meter: Meter,
    as_json: Sym,
    depth: usize,
}

/// Nesting beyond this raises (a cyclic `asJson` would otherwise recurse forever).
const MAX_DEPTH: usize = 512;

impl Writer {
    /// The path to where the writer is (`[2].name`); of a deep one the first and last six
    /// steps, the ones between counted.
    fn path_text(&self) -> String {
        let mut s = String::new();
        let n = self.path.len();
        for (i, seg) in self.path.iter().enumerate() {
            if n > 12 && (6..n - 6).contains(&i) {
                if i == 6 {
                    s.push_str(&format!("…({} more levels)…", n - 12));
                }
                continue;
            }
            match seg {
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
                Seg::Key(k) => {
                    let plain = !k.is_empty()
                        && k.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && !k.starts_with(|c: char| c.is_ascii_digit());
                    if plain {
                        s.push('.');
                        s.push_str(k);
                    } else {
                        s.push('[');
                        s.push_str(&crate::interp::print::json_string(k));
                        s.push(']');
                    }
                }
            }
        }
        s
    }

    fn unwritable(&self, ctx: &Ctx, v: &Value, why: &str) -> Unwind {
        let what = article_class(v).to_lowercase();
        let at = if self.path.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.path_text())
        };
        ctx.type_err(format!("{what}{at} cannot be written as JSON{why}"))
    }

    /// `type_error` for a Dictionary holding a Symbol and a String of the same name.
    fn duplicate_key(&self, ctx: &Ctx, name: &str) -> Unwind {
        let at = if self.path.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.path_text())
        };
        ctx.type_err(format!(
            "a Dictionary{at} has the key {} as a Symbol and as a String: JSON names must be \
             unique",
            crate::interp::print::quote_string(name)
        ))
    }

    fn newline(&mut self) {
        if self.pretty {
            self.out.push(b'\n');
            for _ in 0..self.indent {
                self.out.extend_from_slice(b"  ");
            }
        }
    }

    fn string(&mut self, s: &str) {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, s);
    }

    fn value(&mut self, ctx: &mut Ctx, v: &Value) -> Result<(), Unwind> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.unwritable(
                ctx,
                v,
                &format!(" (nested deeper than {MAX_DEPTH} levels)"),
            ));
        }
        ctx.check_native_stack()?;
        let r = self.value_in(ctx, v);
        self.depth -= 1;
        r
    }

    fn value_in(&mut self, ctx: &mut Ctx, v: &Value) -> Result<(), Unwind> {
        self.meter.step(ctx, ELEM)?;
        // The text so far is one step's result (`Ctx::built`).
        ctx.built(self.out.len())?;
        match v {
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::True => self.out.extend_from_slice(b"true"),
            Value::False => self.out.extend_from_slice(b"false"),
            Value::Int(i) => self.out.extend_from_slice(i.to_string().as_bytes()),
            Value::BigInt(_) => {
                // Huge Integers print in metered pieces (a limit lands between them).
                let s = crate::interp::prims::number::metered::int_string(ctx, v)?;
                self.meter.step(ctx, s.len())?;
                self.out.extend_from_slice(s.as_bytes());
            }
            Value::Float(f) => self.out.extend_from_slice(format_float(f.get()).as_bytes()),
            Value::Str(s) => {
                self.meter.step(ctx, s.len())?;
                ctx.built(self.out.len() + s.len())?;
                self.string(s);
            }
            Value::Symbol(s) => self.string(s.as_str()),
            Value::Char(c) => self.string(&c.get().to_string()),
            Value::List(l) => self.seq(ctx, l.len(), &mut l.iter())?,
            Value::Array(a) => self.seq(ctx, a.len(), &mut a.iter())?,
            Value::Tuple(t) => self.seq(ctx, t.len(), &mut t.iter())?,
            Value::Queue(q) => self.seq(ctx, q.len(), &mut q.iter())?,
            Value::Set(s) => self.seq(ctx, s.len(), &mut s.iter().map(|k| &k.0))?,
            Value::Bag(_) | Value::Interval(_) => {
                let items = crate::interp::prims::collections::common::elems(v)
                    .map(|it| it.collect::<Vec<Value>>())
                    .unwrap_or_default();
                self.seq(ctx, items.len(), &mut items.iter())?
            }
            Value::Dict(d) => {
                self.out.push(b'{');
                self.indent += 1;
                let mut first = true;
                // A Symbol and a String of the same name would write one JSON name twice
                // Keys come in term order, Symbols before Strings, so the
                // Symbol names are remembered as they pass and a String key is checked only
                // when there were any (an all-String Dictionary pays nothing).
                let mut symbol_names: std::collections::HashSet<&'static str> =
                    std::collections::HashSet::new();
                for (k, x) in d.iter() {
                    let key = match &*k {
                        Value::Str(s) => {
                            if !symbol_names.is_empty() && symbol_names.contains(s.as_str()) {
                                return Err(self.duplicate_key(ctx, s.as_str()));
                            }
                            s.to_string()
                        }
                        Value::Symbol(s) => {
                            symbol_names.insert(s.as_str());
                            s.as_str().to_string()
                        }
                        other => {
                            return Err(self.unwritable(
                                ctx,
                                other,
                                " (as a Dictionary key: keys must be Strings or Symbols)",
                            ))
                        }
                    };
                    if !first {
                        self.out.push(b',');
                    }
                    first = false;
                    self.newline();
                    self.string(&key);
                    self.out.push(b':');
                    if self.pretty {
                        self.out.push(b' ');
                    }
                    self.path.push(Seg::Key(key));
                    self.value(ctx, x)?;
                    self.path.pop();
                }
                self.indent -= 1;
                if !first {
                    self.newline();
                }
                self.out.push(b'}');
            }
            Value::Object(o) if o.class.kind == ClassKind::Value && self.default_as_json(v) => {
                let d = fields_dict(v);
                self.value(ctx, &d)?;
            }
            _ => {
                if matches!(v, Value::Block(_)) || !ctx.responds_to(v, self.as_json) {
                    return Err(self.unwritable(ctx, v, ""));
                }
                let j = ctx.send(v, self.as_json, &[])?;
                if let (Value::Object(a), Value::Object(b)) = (v, &j) {
                    if std::ptr::eq(&**a, &**b) {
                        return Err(self.unwritable(ctx, v, " (its asJson answers itself)"));
                    }
                }
                self.value(ctx, &j)?;
            }
        }
        Ok(())
    }

    /// Whether a Value instance's `asJson` is the built-in one (fields → object).
    fn default_as_json(&self, v: &Value) -> bool {
        let Value::Object(o) = v else { return false };
        match o.class.lookup(self.as_json) {
            Some((Method::Prim(p), _)) => p.f as *const () == value_as_json as *const (),
            Some(_) => false,
            None => true,
        }
    }

    fn seq(
        &mut self,
        ctx: &mut Ctx,
        len: usize,
        items: &mut dyn Iterator<Item = &Value>,
    ) -> Result<(), Unwind> {
        self.out.push(b'[');
        if len == 0 {
            self.out.push(b']');
            return Ok(());
        }
        self.indent += 1;
        for (i, x) in items.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.newline();
            self.path.push(Seg::Index(i + 1));
            self.value(ctx, x)?;
            self.path.pop();
        }
        self.indent -= 1;
        self.newline();
        self.out.push(b']');
        Ok(())
    }
}

/// The fields of a Value instance as a Dictionary keyed by field-name Strings.
fn fields_dict(v: &Value) -> Value {
    let Value::Object(o) = v else {
        return Value::Nil;
    };
    let d: crate::value::dict::Dict = o
        .class
        .field_names
        .iter()
        .zip(o.fields.iter())
        .map(|(n, x)| (Value::str(n.as_str()), x.clone()))
        .collect();
    Value::Dict(crate::value::Ref::new(d))
}

/// `Value>>asJson`: a Dictionary of field name (String) → value.
fn value_as_json(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    match r {
        Value::Object(_) => Ok(fields_dict(r)),
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!("{n} has no JSON form")))
        }
    }
}
