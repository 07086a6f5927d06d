//! Primitive tables: Rust functions bound to selectors of built-in classes.
//!
//! Each module exposes `pub fn register(p: &mut Prims)` ([`Prims`](crate::interp::registry::Prims)); [`register_all`]
//! calls them all when the class table is built, and every registered primitive is installed
//! on its class. Each one must be declared in `stdlib/*.bt` as `selector => @primitive` on the
//! same class and side — the declaration the checker reads — and may be registered once:
//! `agreement_tests` fails otherwise (see docs/architecture.md, "How to add a primitive").

/// Defines the ordering primitives `lt` `gt` `le` `ge` (`<` `>` `<=` `>=`) of a module over
/// its `compare(&Value, &Value) -> Ordering` (the class's own order, term order for a
/// receiver and argument of different kinds). Needs `Ordering`, `Ctx`, `EvalResult` and
/// `Value` in scope.
macro_rules! ordering_prims {
    () => {
        fn cmp_prim(r: &Value, a: &[Value], ok: fn(Ordering) -> bool) -> EvalResult {
            Ok(Value::bool(ok(compare(r, &a[0]))))
        }
        fn lt(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o == Ordering::Less)
        }
        fn gt(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o == Ordering::Greater)
        }
        fn le(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o != Ordering::Greater)
        }
        fn ge(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o != Ordering::Less)
        }
    };
}

pub mod announce;
pub mod atomic;
pub mod binary;
pub mod block;
pub mod boolean;
pub mod character;
pub mod class;
pub mod codec;
pub mod collections;
pub mod console;
pub mod datetime;
pub mod duration;
pub mod erlang;
pub mod exception;
pub mod fault;
pub mod file;
pub mod file_lines;
pub mod json;
pub mod json_parse;
pub mod number;
pub mod object;
pub mod parallel;
pub mod parallel_collect;
pub mod protocol;
pub mod random;
pub mod reflection;
pub mod regex;
pub mod search_eq;
pub mod string;
pub mod symbol;
pub mod timer;
pub mod transcript;

#[cfg(test)]
mod agreement_tests;

use crate::interp::block_code::ClosureExt;
use crate::interp::eval::{Ctx, Prims, Unwind};
use crate::value::{ClassRef, Sym, Value};

/// Registers every primitive module.
/// The primitive tables every program uses, registered once per process (they depend on
/// nothing but the code): what `Program::bootstrap` installs.
pub fn shared() -> &'static crate::interp::registry::SharedPrims {
    static SHARED: std::sync::OnceLock<crate::interp::registry::SharedPrims> =
        std::sync::OnceLock::new();
    SHARED.get_or_init(|| crate::interp::registry::SharedPrims::build(register_all))
}

pub fn register_all(p: &mut Prims) {
    object::register(p);
    boolean::register(p);
    block::register(p);
    exception::register(p);
    class::register(p);
    reflection::register(p);
    number::register(p);
    number::integer::register(p);
    number::float::register(p);
    character::register(p);
    string::register(p);
    string::regex::register(p);
    binary::register(p);
    symbol::register(p);
    collections::register(p);
    // The actor runtime's classes (Actor, Pid, Reference, Timer, Duration, AtomicCounter,
    // TranscriptStream, Workspace actors).
    crate::interp::actor::prims::register(p);
    duration::register(p);
    timer::register(p);
    atomic::register(p);
    transcript::register(p);
    console::register(p);
    parallel::register(p);
    announce::register(p);
    // Batteries.
    json::register(p);
    file::register(p);
    datetime::register(p);
    regex::register(p);
    erlang::register(p);
    random::register(p);
    protocol::register(p);
}

/// A Symbol argument (a String is accepted too).
pub fn sym_arg(ctx: &Ctx, v: &Value, what: &str) -> Result<Sym, Unwind> {
    match v {
        Value::Symbol(s) => Ok(*s),
        Value::Str(s) => Ok(Sym::new(s)),
        other => {
            // A protocol object stands for its name (`Integer conformsTo: Printable`).
            if let Some(p) = protocol::name_of(other) {
                return Ok(p);
            }
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("{what} must be a Symbol, not {n}")))
        }
    }
}

/// A class argument.
pub fn class_arg(ctx: &Ctx, v: &Value, what: &str) -> Result<ClassRef, Unwind> {
    match v {
        Value::Class(c) => Ok(c.clone()),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("{what} must be a class, not {n}")))
        }
    }
}

/// The elements of a List, Array or Tuple argument.
pub fn seq_arg(ctx: &Ctx, v: &Value, what: &str) -> Result<Vec<Value>, Unwind> {
    match v {
        Value::List(l) => Ok(l.iter().cloned().collect()),
        Value::Array(a) => Ok(a.to_vec()),
        Value::Tuple(t) => Ok(t.iter().cloned().collect()),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("{what} must be a List or Array, not {n}")))
        }
    }
}

/// A block argument's value (called with no arguments), or the argument itself.
pub fn value_of(ctx: &mut Ctx, v: &Value) -> Result<Value, Unwind> {
    match v {
        Value::Block(_) => ctx.call_block(v, &[]),
        other => Ok(other.clone()),
    }
}

/// Calls a block with the receiver when it takes one parameter, else with none.
pub fn value_with_optional(ctx: &mut Ctx, block: &Value, arg: &Value) -> Result<Value, Unwind> {
    match block {
        Value::Block(b) if b.arity() == 1 => ctx.call_block(block, std::slice::from_ref(arg)),
        Value::Block(_) => ctx.call_block(block, &[]),
        other => Ok(other.clone()),
    }
}

/// A List of Symbols.
pub fn sym_list(syms: impl IntoIterator<Item = Sym>) -> Value {
    Value::list(syms.into_iter().map(Value::Symbol))
}
