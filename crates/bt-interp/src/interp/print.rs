//! Printing: the default `printString` of every built-in kind, the
//! Float rule, `displayString` defaults, and the top-level display with its JSON rendering of
//! Lists (what every `// =>` expectation compares against).
//!
//! Containers print their elements with `ctx.print_string`, so a user class's own
//! `printString` applies inside them. Pure helpers (`format_float`, `json_string`,
//! `quote_string`, …) need no `Ctx`: they live in `text` (a leaf) and are unit-tested
//! directly. Layer: above the evaluator (it names `eval`, `class`, `block_code`); the
//! evaluator reaches it through the `Ctx` methods defined here (`Ctx::default_print`).

mod text;

use crate::interp::block_code::ClosureExt;
use std::cell::Cell;
use std::fmt::Write as _;

pub use text::{
    binary_string, format_float, interval_string, json_string, quote_string, simple_print,
};

use crate::interp::class::{Class, ClassKind};
use crate::interp::eval::{Ctx, Unwind};
use crate::value::order::fields_in_name_order;
use crate::value::{Instance, Sym, Value};

/// How deep Value instances nest before the rest prints as `...`.
pub const MAX_VALUE_NESTING: usize = 5;

thread_local! {
    /// Value instances currently being printed on this thread (for the `...` cut-off).
    static VALUE_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Decrements the nesting counter when a Value instance has been printed (also on unwind).
struct DepthGuard;
impl Drop for DepthGuard {
    fn drop(&mut self) {
        VALUE_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// The printString of a value inside a container: user overrides apply, but actors are
/// rendered from their handle (`Actor(Counter, 0.7.0)`) without being sent a message.
pub fn element_print(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    // Printing recurses natively once per level of nesting: a value nested deeper than the
    // stack allows raises a catchable `stack_overflow` instead of crashing.
    ctx.check_native_stack()?;
    if let Value::Native(n) = v {
        if n.0.class().kind == ClassKind::Actor {
            return Ok(n.0.print_string());
        }
    }
    ctx.print_string(v)
}

/// Appends `open`, the elements' printStrings separated by `, `, and `close` to `out`.
/// Elements that are containers printed the built-in way are written straight into `out`
/// ([`element_print_into`]): printing a value nested `d` deep copies each character once,
/// not once per level.
fn join_printed_into<'a>(
    ctx: &mut Ctx,
    out: &mut String,
    open: &str,
    items: impl Iterator<Item = &'a Value>,
    close: &str,
) -> Result<(), Unwind> {
    out.push_str(open);
    let mut m = crate::interp::eval::charge::Meter::default();
    for (i, e) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let before = out.len();
        let own = element_print_into(ctx, e, out)?;
        // Bulk work is charged (interp::eval::charge): an element plus the bytes printed
        // here (a container written in place paid for its own).
        let bytes = if own { out.len() - before } else { 0 };
        m.step(ctx, crate::interp::eval::charge::ELEM + bytes)?;
        ctx.built(out.len())?;
    }
    out.push_str(close);
    Ok(())
}

/// Appends the printString of `v`, an element of a container, to `out` (see
/// [`element_print`]). A List, Array, Tuple, Queue, Set or Dictionary whose `printString`
/// is the built-in one (no override or extension up its class chain) is printed into `out`
/// directly (answers false: it paid for its bytes); everything else through
/// [`element_print`] (answers true).
fn element_print_into(ctx: &mut Ctx, v: &Value, out: &mut String) -> Result<bool, Unwind> {
    let container = matches!(
        v,
        Value::List(_)
            | Value::Array(_)
            | Value::Tuple(_)
            | Value::Queue(_)
            | Value::Set(_)
            | Value::Dict(_)
    );
    if container && builtin_print(ctx, v) {
        ctx.check_native_stack()?;
        container_print_into(ctx, v, out)?;
        return Ok(false);
    }
    let p = element_print(ctx, v)?;
    // Refused before the text grows past the largest step, not after (a String that
    // doubles its capacity past the limit would take twice the limit first).
    ctx.built(out.len().saturating_add(p.len()))?;
    out.push_str(&p);
    Ok(true)
}

/// True when `v`'s `printString` is the built-in one (`Object`'s primitive).
fn builtin_print(ctx: &Ctx, v: &Value) -> bool {
    use crate::interp::class::ClassExt;
    let sel = ctx.prog.syms.print_string;
    match ctx.class_of(v).lookup(sel) {
        Some((crate::interp::eval::Method::Prim(_), holder)) => holder.name.as_str() == "Object",
        _ => false,
    }
}

/// The built-in printString of a container, appended to `out`.
fn container_print_into(ctx: &mut Ctx, v: &Value, out: &mut String) -> Result<(), Unwind> {
    match v {
        Value::List(l) => join_printed_into(ctx, out, "#(", l.iter(), ")"),
        Value::Array(a) => join_printed_into(ctx, out, "#[", a.iter(), "]"),
        Value::Tuple(t) => join_printed_into(ctx, out, "{", t.iter(), "}"),
        Value::Queue(q) => join_printed_into(ctx, out, "Queue(", q.iter(), ")"),
        Value::Set(s) => join_printed_into(ctx, out, "Set(", s.iter().map(|k| &k.0), ")"),
        Value::Dict(d) => {
            out.push_str("#{");
            let mut m = crate::interp::eval::charge::Meter::default();
            for (i, (k, e)) in d.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let at_key = out.len();
                let own_key = element_print_into(ctx, &k, out)?;
                let key_bytes = if own_key { out.len() - at_key } else { 0 };
                out.push_str(" => ");
                let at_value = out.len();
                let own_value = element_print_into(ctx, e, out)?;
                let value_bytes = if own_value { out.len() - at_value } else { 0 };
                m.step(
                    ctx,
                    2 * crate::interp::eval::charge::ELEM + key_bytes + value_bytes,
                )?;
                ctx.built(out.len())?;
            }
            out.push('}');
            Ok(())
        }
        other => {
            let p = default_print(ctx, other)?;
            out.push_str(&p);
            Ok(())
        }
    }
}

/// Whether `c` is `name` or inherits from it.
pub fn inherits_from(c: &Class, name: &str) -> bool {
    let mut cur = Some(c);
    while let Some(k) = cur {
        if k.name.as_str() == name {
            return true;
        }
        cur = k.superclass.as_deref();
    }
    false
}

/// A field of an instance by name.
pub fn field<'a>(o: &'a Instance, name: &str) -> Option<&'a Value> {
    let s = Sym::new(name);
    o.class
        .field_names
        .iter()
        .position(|f| *f == s)
        .and_then(|i| o.fields.get(i))
}

impl Ctx {
    /// The built-in printString of a value (no user override of `v`'s own printString).
    pub fn default_print(&mut self, v: &Value) -> Result<String, Unwind> {
        default_print(self, v)
    }
}

/// The default printString of every built-in kind. Elements of containers are printed
/// with `ctx.print_string`, honouring user overrides.
pub fn default_print(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    if let Value::BigInt(_) = v {
        // A huge Integer prints in metered pieces (a limit lands between them).
        return (ctx.prog.prims.prims.hooks.big_int_string)(ctx, v);
    }
    if let Some(s) = simple_print(v) {
        return Ok(s);
    }
    match v {
        Value::List(_)
        | Value::Array(_)
        | Value::Tuple(_)
        | Value::Queue(_)
        | Value::Set(_)
        | Value::Dict(_) => {
            let mut out = String::new();
            container_print_into(ctx, v, &mut out)?;
            Ok(out)
        }
        Value::Bag(_) => Ok("Bag".into()),
        Value::Interval(iv) => Ok(interval_string(iv)),
        Value::Block(b) => Ok(format!("Block/{}", b.arity())),
        Value::Native(n) => Ok(n.0.print_string()),
        Value::Object(o) => print_instance(ctx, v, o),
        _ => Ok(String::new()),
    }
}

/// Result, exceptions, Value instances (`Point(x: 3, y: 4)`), Object-kind instances.
fn print_instance(ctx: &mut Ctx, v: &Value, o: &Instance) -> Result<String, Unwind> {
    let class = &o.class;
    if class.name.as_str() == "Result" {
        if let (Some(ok), Some(val), Some(err)) =
            (field(o, "isOk"), field(o, "okValue"), field(o, "errReason"))
        {
            return Ok(if matches!(ok, Value::True) {
                format!("Result ok: {}", element_print(ctx, val)?)
            } else {
                format!("Result error: {}", element_print(ctx, err)?)
            });
        }
    }
    if inherits_from(class, "Exception") {
        // The message is what `messageText` answers, so a subclass that overrides it (the
        // Pharo way to give an exception class its text) prints, describes and reports with
        // it.
        let text = ctx.send(v, Sym::new("messageText"), &[])?;
        let msg = match &text {
            Value::Str(s) => s.to_string(),
            Value::Nil => class.name.as_str().to_string(),
            other => ctx.display_string(other)?,
        };
        return Ok(match field(o, "hint") {
            Some(Value::Str(h)) => format!("{msg}\nHint: {h}"),
            Some(Value::Nil) | None => msg,
            Some(other) => format!("{msg}\nHint: {}", ctx.display_string(other)?),
        });
    }
    if class.kind != ClassKind::Value {
        return Ok(class.name.as_str().to_string());
    }
    let depth = VALUE_DEPTH.with(|d| {
        let n = d.get() + 1;
        d.set(n);
        n
    });
    let _guard = DepthGuard;
    if depth > MAX_VALUE_NESTING {
        return Ok("...".into());
    }
    let mut out = format!("{}(", class.name.as_str());
    for (i, idx) in fields_in_name_order(class).into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(class.field_names[idx].as_str());
        out.push_str(": ");
        let f = o.fields.get(idx).cloned().unwrap_or(Value::Nil);
        out.push_str(&element_print(ctx, &f)?);
    }
    out.push(')');
    Ok(out)
}

/// The default displayString: a String is itself, a Symbol its name, anything else its
/// printString (through `ctx.print_string`, so overrides apply).
pub fn default_display(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        Value::Symbol(s) => Ok(s.as_str().to_string()),
        _ => ctx.print_string(v),
    }
}

/// The top-level display of a value: REPL output and `// =>` expectations.
pub fn top_display(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        Value::Symbol(s) => Ok(s.as_str().to_string()),
        Value::List(_) => {
            let mut out = String::new();
            json_value(ctx, v, &mut out)?;
            Ok(out)
        }
        Value::Native(n) if n.0.class().kind == ClassKind::Actor => {
            // The actor's own printString if it answers within 1000 ms, else its label.
            let args = [
                Value::sym("printString"),
                Value::list([]),
                Value::Int(ACTOR_DISPLAY_TIMEOUT_MS),
            ];
            match ctx.send(v, Sym::new("perform:withArguments:timeout:"), &args) {
                Ok(r) => Ok(match &r {
                    Value::Str(s) => s.to_string(),
                    _ => n.0.print_string(),
                }),
                Err(Unwind::Error(_)) => Ok(n.0.print_string()),
                Err(other) => Err(other),
            }
        }
        _ => ctx.print_string(v),
    }
}

/// How long the top-level display waits for an actor's own printString.
pub const ACTOR_DISPLAY_TIMEOUT_MS: i64 = 1000;

/// The JSON rendering of one List element, appended to `out`.
fn json_value(ctx: &mut Ctx, v: &Value, out: &mut String) -> Result<(), Unwind> {
    ctx.check_native_stack()?;
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(b) => {
            let _ = write!(out, "{b}");
        }
        Value::True => out.push_str("true"),
        Value::False => out.push_str("false"),
        Value::Nil => out.push_str("\"nil\""),
        Value::Str(s) => out.push_str(&json_string(s)),
        Value::Symbol(s) => out.push_str(&json_string(s.as_str())),
        Value::Float(f) => out.push_str(&json_string(&format_float(f.get()))),
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_value(ctx, e, out)?;
            }
            out.push(']');
        }
        other => {
            let s = element_print(ctx, other)?;
            out.push_str(&json_string(&s));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Interval;

    #[test]
    fn floats_of_the_spec() {
        let cases = [
            (5.0, "5.0"),
            (0.5, "0.5"),
            (10.0 / 3.0, "3.3333333333333335"),
            (100.0, "100.0"),
            (1000.0, "1.0e3"),
            (1500.0, "1.5e3"),
            (123456.0, "123456.0"),
            (0.0001, "0.0001"),
            (0.00012, "1.2e-4"),
            (1e21, "1.0e21"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (2.0, "2.0"),
            (3.25, "3.25"),
            (-7.5, "-7.5"),
            (1e10, "1.0e10"),
            (12345.0, "12345.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e-10, "1.0e-10"),
            (0.001, "0.001"),
            (0.0012, "0.0012"),
            (1.5e300, "1.5e300"),
            (5e-324, "5.0e-324"),
            (-1000.0, "-1.0e3"),
            (123.45, "123.45"),
            (10.0, "10.0"),
            (2.5e-3, "0.0025"),
            (1e100, "1.0e100"),
            (12.0, "12.0"),
            (f64::MAX, "1.7976931348623157e308"),
        ];
        for (x, s) in cases {
            assert_eq!(format_float(x), s, "{x:e}");
        }
    }

    #[test]
    fn floats_read_back() {
        for x in [
            0.1,
            1.0 / 3.0,
            2.0f64.sqrt(),
            6.02214076e23,
            1.7976931348623157e308,
            1e-300,
        ] {
            let s = format_float(x);
            assert_eq!(s.parse::<f64>().unwrap(), x, "{s}");
        }
    }

    #[test]
    fn json_strings_escape() {
        assert_eq!(json_string("hi"), r#""hi""#);
        assert_eq!(json_string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(json_string("l1\nl2\tx\r"), r#""l1\nl2\tx\r""#);
        assert_eq!(
            json_string("\u{8}\u{c}\u{1}\u{1f}"),
            r#""\b\f\u0001\u001f""#
        );
        assert_eq!(json_string("é ✓ \u{7f}"), "\"é ✓ \u{7f}\"");
    }

    #[test]
    fn simple_kinds() {
        assert_eq!(quote_string(r#"a"b"#), r#""a""b""#);
        assert_eq!(binary_string(&[0xff, 0xfe, 0x01]), "<<FF FE 01>>");
        assert_eq!(binary_string(&[]), "<<>>");
        assert_eq!(simple_print(&Value::ch(' ')).unwrap(), "$ ");
        assert_eq!(
            simple_print(&Value::sym("hello world")).unwrap(),
            "#hello world"
        );
        assert_eq!(simple_print(&Value::sym("at:put:")).unwrap(), "#at:put:");
        assert_eq!(simple_print(&Value::Int(-7)).unwrap(), "-7");
        let iv = Interval {
            from: Value::Int(1),
            to: Value::Int(10),
            step: Value::Int(2),
            explicit_step: true,
        };
        assert_eq!(interval_string(&iv), "(1 to: 10 by: 2)");
        let iv = Interval {
            explicit_step: false,
            step: Value::Int(1),
            ..iv
        };
        assert_eq!(interval_string(&iv), "(1 to: 10)");
    }
}
