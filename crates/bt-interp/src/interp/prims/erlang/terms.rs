//! What the module implementations of the `Erlang` class (`lists`, `maps`, `modules`,
//! `text`) share: the failure an Erlang function reports ([`Fail`]) and the conversions
//! between bt values and Erlang terms (lists, atoms, charlists, chardata, funs, predicates'
//! booleans). `mod.rs` dispatches a call to those modules and raises a [`Fail`] as Erlang
//! would; this module names neither.

use crate::interp::eval::{Ctx, Unwind};
use crate::value::{Sym, Value};

/// Why a call failed, as Erlang would report it.
pub(crate) enum Fail {
    Badarg,
    Badarith,
    Badkey(Value),
    Badmap(Value),
    FunctionClause,
    Undef,
    /// Another reason a forwarded call failed with (`{badmatch, X}`, an exit reason, …): the
    /// kind is the reason's atom (its first element for a tuple), the detail the whole term.
    Other(Sym, String),
    /// An exception raised by a block used as a fun (or a limit): passed on unchanged.
    Raised(Unwind),
}

impl From<Unwind> for Fail {
    fn from(u: Unwind) -> Fail {
        Fail::Raised(u)
    }
}

pub(crate) type R = Result<Value, Fail>;

/// The elements of an Erlang list (a List or an Array), else `badarg`.
pub(crate) fn list_arg(v: &Value) -> Result<Vec<Value>, Fail> {
    match v {
        Value::List(l) => Ok(l.iter().cloned().collect()),
        Value::Array(a) => Ok(a.to_vec()),
        _ => Err(Fail::Badarg),
    }
}

/// The same, with `function_clause` for a non-list (what the `lists` functions raise).
pub(crate) fn list_fc(v: &Value) -> Result<Vec<Value>, Fail> {
    list_arg(v).map_err(|_| Fail::FunctionClause)
}

pub(crate) fn int_arg(v: &Value) -> Result<i64, Fail> {
    match v {
        Value::Int(i) => Ok(*i),
        _ => Err(Fail::Badarg),
    }
}

pub(crate) fn is_int(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::BigInt(_))
}

pub(crate) fn is_num(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_))
}

pub(crate) fn num_f64(v: &Value) -> Result<f64, Fail> {
    use num_traits::ToPrimitive;
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::BigInt(b) => b.to_f64().ok_or(Fail::Badarith),
        Value::Float(x) => Ok(x.get()),
        _ => Err(Fail::Badarg),
    }
}

/// `items` with `sep` between each two (`lists:join/2`): an Erlang list.
pub(crate) fn joined(sep: &Value, items: Vec<Value>) -> Value {
    let mut out = Vec::with_capacity(items.len() * 2);
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(sep.clone());
        }
        out.push(x);
    }
    list(out)
}

/// A List of `items`, held about once while it changes storage ([`Value::list_from_vec`]).
pub(crate) fn list(items: Vec<Value>) -> Value {
    Value::list_from_vec(items)
}

pub(crate) fn atom(s: &str) -> Value {
    Value::sym(s)
}

/// A charlist (a List of code points) from text.
pub(crate) fn charlist(s: &str) -> Value {
    Value::list(s.chars().map(|c| Value::Int(c as i64)))
}

/// Text from a charlist or a binary (chardata, flattened); `None` when it is neither.
pub(crate) fn chardata(v: &Value) -> Option<String> {
    let mut out = String::new();
    fn walk(v: &Value, out: &mut String) -> bool {
        match v {
            Value::Str(s) => {
                out.push_str(s);
                true
            }
            Value::Binary(b) => match std::str::from_utf8(b) {
                Ok(s) => {
                    out.push_str(s);
                    true
                }
                Err(_) => false,
            },
            Value::Int(i) => match u32::try_from(*i).ok().and_then(char::from_u32) {
                Some(c) => {
                    out.push(c);
                    true
                }
                None => false,
            },
            Value::Char(c) => {
                out.push(c.get());
                true
            }
            Value::List(l) => l.iter().all(|x| walk(x, out)),
            Value::Array(a) => a.iter().all(|x| walk(x, out)),
            _ => false,
        }
    }
    walk(v, &mut out).then_some(out)
}

/// Applies a fun (a block) to arguments.
pub(crate) fn fun(ctx: &mut Ctx, f: &Value, args: &[Value]) -> R {
    match f {
        Value::Block(_) => Ok(ctx.call_block(f, args)?),
        _ => Err(Fail::Badarg),
    }
}

/// Erlang's truthiness for predicates: only `true` counts; anything else but `false` is an
/// error in Erlang, `badarg` here.
pub(crate) fn truth(v: &Value) -> Result<bool, Fail> {
    match v {
        Value::True => Ok(true),
        Value::False => Ok(false),
        _ => Err(Fail::Badarg),
    }
}

/// A RuntimeError of kind `kind` whatever the kind (Erlang's `error`, `exit` and `throw`
/// reasons are all RuntimeErrors), with the function and module when known.
pub(crate) fn runtime_error(
    ctx: &Ctx,
    kind: Sym,
    message: String,
    hint: String,
    at: Option<(Sym, Sym)>,
) -> Unwind {
    let class = ctx.prog.core.runtime_error.clone();
    let v = crate::interp::error::make_exception(
        &ctx.prog,
        &class,
        kind,
        message,
        Some(hint),
        at.map(|a| a.0),
        at.map(|a| a.1),
        None,
        ctx.stack_trace(),
    );
    let v = ctx.with_locations(v);
    ctx.note_raise(&v);
    Unwind::Error(v)
}
