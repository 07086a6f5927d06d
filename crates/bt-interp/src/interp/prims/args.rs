//! Reading primitive arguments (a Symbol, a class, a sequence, a block's value) with the
//! `type_error` a wrong one raises; re-exported by `prims` for every primitive module.

use crate::interp::block_code::ClosureExt;
use crate::interp::eval::{Ctx, Unwind};
use crate::value::{ClassRef, Sym, Value};

/// A Symbol argument (a String is accepted too).
pub fn sym_arg(ctx: &Ctx, v: &Value, what: &str) -> Result<Sym, Unwind> {
    match v {
        Value::Symbol(s) => Ok(*s),
        Value::Str(s) => Ok(Sym::new(s)),
        other => {
            // A protocol object stands for its name (`Integer conformsTo: Printable`).
            if let Some(p) = crate::interp::prims::protocol::name_of(other) {
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
