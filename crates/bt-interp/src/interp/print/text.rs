//! Printing that needs no dispatch and no evaluation context: the printString of numbers,
//! Characters, Symbols, Strings, Binaries, nil, Booleans and Intervals, the Float rule and
//! JSON string literals. A leaf: it names only the values layer.

use std::fmt::Write as _;

use crate::value::{Interval, Value};

/// The printString of a Float: shortest round-trip digits, fixed or scientific
/// notation, whichever is shorter (fixed on a tie).
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    // `{:e}` gives the shortest round-trip digits: "1.2345e-7", "5e0".
    let e = format!("{:e}", x.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    // Scientific: d.ddd e X
    let sci = {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{first}.{rest}e{exp}")
    };
    // Fixed.
    let fixed = if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    } else {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    };
    if sci.len() < fixed.len() {
        format!("{sign}{sci}")
    } else {
        format!("{sign}{fixed}")
    }
}

/// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`,
/// `\f` or `\u00XX`; every other character as it is.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::runtime::snapshot::json::string(&mut out, s);
    out
}

/// The printString of a String: in double quotes, inner quotes doubled.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The printString of a Binary: `<<FF FE>>`.
pub fn binary_string(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() * 3 + 4);
    out.push_str("<<");
    for (i, byte) in b.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{byte:02X}");
    }
    out.push_str(">>");
    out
}

/// The printString of numbers, Characters, Symbols, Strings, Binaries, nil and Booleans: the
/// kinds whose printing needs no dispatch. `None` for every other kind.
pub fn simple_print(v: &Value) -> Option<String> {
    Some(match v {
        Value::Nil => "nil".into(),
        Value::True => "true".into(),
        Value::False => "false".into(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(b) => b.to_string(),
        Value::Float(f) => format_float(f.get()),
        Value::Char(c) => format!("${c}"),
        Value::Symbol(s) => format!("#{}", s.as_str()),
        Value::Str(s) => quote_string(s),
        Value::Binary(b) => binary_string(b),
        Value::Class(c) => c.name.as_str().to_string(),
        Value::Meta(c) => format!("{} class", c.name.as_str()),
        _ => return None,
    })
}

/// The printString of an Interval: `(1 to: 10)`, `(1 to: 10 by: 2)`.
pub fn interval_string(iv: &Interval) -> String {
    let n = |v: &Value| simple_print(v).unwrap_or_default();
    if iv.explicit_step {
        format!("({} to: {} by: {})", n(&iv.from), n(&iv.to), n(&iv.step))
    } else {
        format!("({} to: {})", n(&iv.from), n(&iv.to))
    }
}
