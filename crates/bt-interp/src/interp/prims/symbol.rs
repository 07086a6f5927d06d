//! Symbol primitives: interned names. `printString` is `#` + name, never
//! quoted (`#hello world`); `displayString` and `asString` are the name; comparisons are by
//! name (code points) between Symbols and by term order otherwise.

use std::cmp::Ordering;

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::fault::{Fault, Res};
use crate::interp::prims::number::unary_prim;
use crate::interp::prims::string::pure::g_len;
use crate::value::order::term_cmp;
use crate::value::Value;

/// printString of a Symbol.
pub fn print_symbol(name: &str) -> String {
    format!("#{name}")
}

fn name(v: &Value) -> Res<&'static str> {
    match v {
        Value::Symbol(s) => Ok(s.as_str()),
        other => Err(Fault::expected(
            "Symbol primitive",
            "a Symbol receiver",
            other,
        )),
    }
}

fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Symbol(x), Value::Symbol(y)) => x.as_str().cmp(y.as_str()),
        _ => term_cmp(a, b),
    }
}

/// Number of arguments a selector takes: `#at:put:` 2, `#+` 1, `#size` 0.
pub fn arity(sel: &str) -> i64 {
    if sel.ends_with(':') {
        sel.matches(':').count() as i64
    } else if !sel.is_empty() && sel.chars().all(|c| "+-*/<>=~%&?,\\|".contains(c)) {
        1
    } else {
        0
    }
}

unary_prim! {
    as_string => |r| Ok(Value::str(name(r)?));
    itself => |r: &Value| name(r).map(|_| r.clone());
    print_string => |r| Ok(Value::str(print_symbol(name(r)?)));
    size => |r| Ok(Value::Int(g_len(name(r)?) as i64));
    num_args => |r| Ok(Value::Int(arity(name(r)?)));
    keywords_p => |r| Ok(Value::list(keywords(name(r)?).into_iter().map(Value::str)));
}

/// `#at:put: keywords` is `#("at:", "put:")`; a unary or binary selector answers itself.
pub fn keywords(sel: &str) -> Vec<String> {
    if sel.ends_with(':') {
        sel.split_inclusive(':').map(str::to_string).collect()
    } else {
        vec![sel.to_string()]
    }
}

/// `#selector value: receiver` sends the selector to the receiver.
fn value1(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let sel = r
        .as_sym()
        .ok_or_else(|| ctx.type_err("value: expects a Symbol receiver"))?;
    ctx.send(&a[0], sel, &[])
}

/// `#selector value: receiver value: argument`.
fn value2(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let sel = r
        .as_sym()
        .ok_or_else(|| ctx.type_err("value:value: expects a Symbol receiver"))?;
    ctx.send(&a[0], sel, &a[1..2])
}

ordering_prims!();

pub fn register(p: &mut Prims) {
    let c = "Symbol";
    p.add(c, "asString", as_string);
    p.add(c, "displayString", as_string);
    p.add(c, "asAtom", itself);
    p.add(c, "asSymbol", itself);
    p.add(c, "printString", print_string);
    p.add(c, "size", size);
    p.add(c, "numArgs", num_args);
    p.add(c, "keywords", keywords_p);
    p.add(c, "value:", value1);
    p.add(c, "value:value:", value2);
    p.add(c, "<", lt);
    p.add(c, ">", gt);
    p.add(c, "<=", le);
    p.add(c, ">=", ge);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols() {
        assert_eq!(print_symbol("hello world"), "#hello world");
        assert_eq!(arity("at:put:"), 2);
        assert_eq!(arity("+"), 1);
        assert_eq!(arity("size"), 0);
        assert_eq!(keywords("at:put:"), vec!["at:", "put:"]);
        assert_eq!(keywords("size"), vec!["size"]);
        assert_eq!(compare(&Value::sym("a"), &Value::sym("b")), Ordering::Less);
    }
}
