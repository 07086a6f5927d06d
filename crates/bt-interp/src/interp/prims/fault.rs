//! Errors of the pure helpers behind the number and text primitives, and small shared
//! argument helpers.
//!
//! Helpers return [`Res`] so they can be unit-tested without an evaluator; a primitive turns a
//! [`Fault`] into a language exception with [`Fault::raise`] (through `Ctx`, which maps a kind
//! to its exception class).

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::{Sym, Value};

/// Why a helper could not answer a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An arithmetic fault: `type_error` / raw reason `badarith`, fixed message and hint.
    Arith,
    /// `type_error` with a message.
    Type(String),
    /// Any other kind (`index_out_of_bounds`, `parse_error`, …) with a message.
    Kind(ErrorKind, String),
}

/// What a pure helper answers.
pub type Res<T = Value> = Result<T, Fault>;

impl Fault {
    /// The language exception for this fault.
    pub fn raise(self, ctx: &Ctx) -> Unwind {
        match self {
            Fault::Arith => ctx.arith_err(),
            Fault::Type(m) => ctx.type_err(m),
            Fault::Kind(k, m) => ctx.err(k, m),
        }
    }

    /// `type_error` saying what `what` expected and what it got.
    pub fn expected(what: &str, expected: &str, got: &Value) -> Fault {
        Fault::Type(format!(
            "{what} expects {expected}, got {}",
            article_class(got)
        ))
    }

    /// `index_out_of_bounds` with the message
    pub fn index(index: impl std::fmt::Display, size: usize) -> Fault {
        Fault::Kind(
            ErrorKind::IndexOutOfBounds,
            format!("index out of bounds: {index} (size {size})"),
        )
    }

    /// `empty_collection`: `String is empty`.
    pub fn empty(class: &str) -> Fault {
        Fault::Kind(ErrorKind::EmptyCollection, format!("{class} is empty"))
    }
}

/// Turns a helper's answer into a primitive's answer.
pub fn lift(ctx: &Ctx, r: Res) -> EvalResult {
    r.map_err(|f| f.raise(ctx))
}

/// [`lift`] for a binary operation `r SEL a[0]`: an arithmetic fault remembers the operation
/// for the printed report (`` `1 / 0`: division by zero ``).
pub fn lift_op(ctx: &Ctx, r: &Value, a: &Value, res: Res) -> EvalResult {
    match res {
        Err(Fault::Arith) => Err(crate::interp::error::arith_fault_on(ctx, r, a)),
        other => lift(ctx, other),
    }
}

/// [`lift`] for a unary operation `r SEL`: an arithmetic fault names it (`` `-1 sqrt`: the
/// square root of a negative number is not a real number ``).
pub fn lift_unary(ctx: &Ctx, r: &Value, res: Res) -> EvalResult {
    match res {
        Err(Fault::Arith) => Err(crate::interp::error::arith_fault_of(ctx, r)),
        other => lift(ctx, other),
    }
}

pub use crate::interp::error::{article_class, class_name};

/// The argument as an i64 (Integers and Characters), else `type_error`.
pub fn int_arg(what: &str, v: &Value) -> Res<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Char(c) => Ok(c.get() as i64),
        Value::BigInt(_) => Err(Fault::Type(format!("{what}: integer argument too large"))),
        _ => Err(Fault::expected(what, "an Integer", v)),
    }
}

/// The argument as an i64 count that may be clamped (`take:`/`drop:`, which never raise, 9):
/// an Integer beyond 64 bits saturates to i64::MAX or i64::MIN by its sign.
pub fn clamped_int_arg(what: &str, v: &Value) -> Res<i64> {
    match v {
        Value::BigInt(b) if num_traits::Signed::is_negative(&**b) => Ok(i64::MIN),
        Value::BigInt(_) => Ok(i64::MAX),
        other => int_arg(what, other),
    }
}

/// The argument as a &str, else `type_error`.
pub fn str_arg<'a>(what: &str, v: &'a Value) -> Res<&'a str> {
    match v {
        Value::Str(s) => Ok(s.as_str()),
        _ => Err(Fault::expected(what, "a String", v)),
    }
}

/// The argument as a String; a Character counts as a one-character String.
pub fn text_arg<'a>(what: &str, v: &'a Value) -> Res<std::borrow::Cow<'a, str>> {
    match v {
        Value::Str(s) => Ok(std::borrow::Cow::Borrowed(s.as_str())),
        Value::Char(c) => Ok(std::borrow::Cow::Owned(c.to_string())),
        _ => Err(Fault::expected(what, "a String", v)),
    }
}

/// Builds `Result ok: v` through the Result class (so user extensions of Result apply).
pub fn result_ok(ctx: &mut Ctx, v: Value) -> EvalResult {
    result_send(ctx, "ok:", v)
}

/// Builds `Result error: v`.
pub fn result_error(ctx: &mut Ctx, v: Value) -> EvalResult {
    result_send(ctx, "error:", v)
}

fn result_send(ctx: &mut Ctx, sel: &str, v: Value) -> EvalResult {
    match ctx.class_named("Result") {
        Some(c) => ctx.send(&Value::Class(c), Sym::new(sel), &[v]),
        None => Err(ctx.err(ErrorKind::RuntimeError, "class Result is not loaded")),
    }
}

/// The exception object a fault would raise, as a value (for `Result error:`).
pub fn fault_value(ctx: &Ctx, f: Fault) -> EvalResult {
    match f.raise(ctx) {
        Unwind::Error(v) => Ok(v),
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_message_matches_spec() {
        assert_eq!(
            Fault::index(9, 3),
            Fault::Kind(
                ErrorKind::IndexOutOfBounds,
                "index out of bounds: 9 (size 3)".into()
            )
        );
        assert_eq!(
            Fault::empty("String"),
            Fault::Kind(ErrorKind::EmptyCollection, "String is empty".into())
        );
    }

    #[test]
    fn articles() {
        assert_eq!(article_class(&Value::Int(1)), "an Integer");
        assert_eq!(article_class(&Value::str("x")), "a String");
        assert_eq!(article_class(&Value::Nil), "nil");
    }
}
