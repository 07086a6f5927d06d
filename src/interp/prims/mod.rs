//! Primitive tables: Rust functions bound to selectors of built-in classes.
//!
//! Each module exposes `pub fn register(p: &mut Prims)`; [`register_all`] calls them all when
//! the class table is built. The stdlib (`stdlib/*.bt`) may bind a primitive explicitly with
//! `sel => @primitive name`; every registered primitive is also installed directly.
//! Modules registered later win on a clash, so the owners of a class register after the
//! generic fallbacks here.

pub mod actor;
pub mod actor_node;
pub mod actor_node_peer;
pub mod announce;
pub mod atomic;
pub mod binary;
pub mod block;
pub mod boolean;
pub mod capability;
pub mod character;
pub mod class;
pub mod codec;
pub mod collections;
pub mod console;
pub mod datetime;
pub mod duration;
pub mod exception;
pub mod fault;
pub mod file;
pub mod file_lines;
pub mod float;
pub mod integer;
pub mod json;
pub mod json_parse;
pub mod num;
pub mod number;
pub mod object;
pub mod observer;
pub mod parallel;
pub mod protocol;
pub mod random;
pub mod reflection;
pub mod regex;
pub mod search_eq;
pub mod string;
pub mod string_regex;
pub mod supervision;
pub mod supervision_fields;
pub mod supervision_nav;
pub mod supervision_snap;
pub mod symbol;
pub mod text;
pub mod timer;
pub mod transcript;

#[cfg(test)]
mod batteries_tests;
#[cfg(test)]
mod stdlib_tests;

use crate::interp::eval::{Ctx, Prims, Unwind};
use crate::interp::value::{ClassRef, Sym, Value};

/// Registers every primitive module.
pub fn register_all(p: &mut Prims) {
    object::register(p);
    boolean::register(p);
    block::register(p);
    exception::register(p);
    class::register(p);
    reflection::register(p);
    // Class families register after the generic fallbacks above, so theirs win.
    number::register(p);
    integer::register(p);
    float::register(p);
    character::register(p);
    string::register(p);
    string_regex::register(p);
    binary::register(p);
    symbol::register(p);
    collections::register(p);
    // The actor runtime's classes (Actor, Pid, Reference, Timer, Duration, AtomicCounter,
    // TranscriptStream, Workspace actors).
    actor::register(p);
    actor_node::register(p);
    duration::register(p);
    timer::register(p);
    atomic::register(p);
    transcript::register(p);
    console::register(p);
    supervision::register(p);
    supervision_nav::register(p);
    parallel::register(p);
    announce::register(p);
    // Batteries (LANGUAGE.md 13).
    json::register(p);
    file::register(p);
    datetime::register(p);
    regex::register(p);
    random::register(p);
    protocol::register(p);
    observer::register(p);
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
