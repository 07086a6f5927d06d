//! Character primitives. Character is a subclass of
//! Integer: the Integer primitives see a Character as its code point and answer Integers
//! (`$a + 1` is `98`); this module adds what differs — construction, printing (`$a`),
//! conversion and case mapping, which answer Characters.

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::fault::{lift, Res};
use crate::interp::prims::number::pure::to_char;
use crate::interp::prims::number::unary_prim;
use crate::value::Value;

/// `$a` printString: `$` followed by the character itself (also for control characters).
pub fn print_char(c: char) -> String {
    format!("${c}")
}

/// Upper-cases a Character when the mapping is one Character (`ß` stays `ß`).
pub fn upper(c: char) -> char {
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Lower-cases a Character when the mapping is one Character.
pub fn lower(c: char) -> char {
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn map_char(v: &Value, f: fn(char) -> char) -> Res {
    match v {
        Value::Char(c) => Ok(Value::ch(f(c.get()))),
        other => Ok(other.clone()),
    }
}

unary_prim! {
    code_point => |r: &Value| Ok(match r {
        Value::Char(c) => Value::Int(c.get() as i64),
        other => other.clone(),
    });
    as_string => |r: &Value| Ok(match r {
        Value::Char(c) => Value::str(c.to_string()),
        other => other.clone(),
    });
    print_string => |r: &Value| Ok(match r {
        Value::Char(c) => Value::str(print_char(c.get())),
        other => other.clone(),
    });
    uppercase => |r| map_char(r, upper);
    lowercase => |r| map_char(r, lower);
}

/// `Character value: 98` is `$b`; not a Unicode scalar value → `type_error`.
fn value(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, to_char(&a[0]))
}

fn lf(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::ch('\n'))
}
fn cr(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::ch('\r'))
}
fn tab(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::ch('\t'))
}
fn space(_: &mut Ctx, _r: &Value, _a: &[Value]) -> EvalResult {
    Ok(Value::ch(' '))
}

pub fn register(p: &mut Prims) {
    let c = "Character";
    p.add_class(c, "lf", lf);
    p.add_class(c, "cr", cr);
    p.add_class(c, "tab", tab);
    p.add_class(c, "space", space);
    p.add_class(c, "value:", value);
    p.add_class(c, "codePoint:", value);
    p.add(c, "asInteger", code_point);
    p.add(c, "value", code_point);
    p.add(c, "codePoint", code_point);
    p.add(c, "asString", as_string);
    p.add(c, "printString", print_string);
    p.add(c, "uppercase", uppercase);
    p.add(c, "lowercase", lowercase);
    p.add(c, "asUppercase", uppercase);
    p.add(c, "asLowercase", lowercase);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_printing() {
        assert_eq!(upper('a'), 'A');
        assert_eq!(upper('ß'), 'ß');
        assert_eq!(lower('Ä'), 'ä');
        assert_eq!(print_char('a'), "$a");
        assert_eq!(print_char(' '), "$ ");
    }
}
