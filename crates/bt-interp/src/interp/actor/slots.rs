//! The typed-state check of spawn: after initialisation every `state:` slot
//! declared with a type, without a default, whose type does not admit nil, must be non-nil;
//! otherwise spawn raises `instantiation_error` naming the class, with a hint naming the slot
//! and its type.
//!
//! Whether a type admits nil is decided leniently (the checker is the strict one): `nil`,
//! `Nil`, `UndefinedObject`, `Object`, `ProtoObject`, `Dynamic`, type parameters and names
//! that are not classes (protocols, aliases) admit it; a union admits it when a member does.

use crate::interp::class::ClassExt;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, Unwind};
use crate::interp::program::Program;
use crate::syntax::ast::{TypeExpr, TypeKind};
use crate::value::{ClassRef, Value};

/// Index (into `cls.typed_slots`) of the first typed slot left nil in `fields`, if any.
pub fn nil_typed_slot(prog: &Program, cls: &ClassRef, fields: &[Value]) -> Option<usize> {
    cls.typed_slots().iter().position(|t| {
        cls.field_index(t.name)
            .and_then(|i| fields.get(i))
            .is_some_and(Value::is_nil)
            && !admits_nil(prog, &t.ty)
    })
}

/// The `instantiation_error` for typed slot `idx` of `cls` left nil.
pub fn nil_slot_error(ctx: &Ctx, cls: &ClassRef, idx: usize) -> Unwind {
    let Some(t) = cls.typed_slots().get(idx) else {
        return ctx.err(
            ErrorKind::InstantiationError,
            format!("Cannot spawn {}", cls.name),
        );
    };
    let ty = type_text(&t.ty);
    ctx.err_hint(
        ErrorKind::InstantiationError,
        format!(
            "Cannot spawn {}: state slot {} is nil after initialization",
            cls.name, t.name
        ),
        format!(
            "state: {} :: {ty} does not admit nil: give it a default, pass it to spawnWith:, or set it in initialize",
            t.name
        ),
    )
}

/// Does a value of type `t` include nil?
pub fn admits_nil(prog: &Program, t: &TypeExpr) -> bool {
    match &t.kind {
        TypeKind::Nil | TypeKind::Error => true,
        TypeKind::Named { name, .. } => match name.as_str() {
            "Nil" | "UndefinedObject" | "Object" | "ProtoObject" | "Dynamic" => true,
            n if n.len() == 1 => true, // a type parameter
            n => prog.class_named(n).is_none(),
        },
        TypeKind::SelfType
        | TypeKind::Meta(_)
        | TypeKind::Symbol(_)
        | TypeKind::False
        | TypeKind::True => false,
        TypeKind::Union(ms) => ms.iter().any(|m| admits_nil(prog, m)),
        TypeKind::Inter(ms) => ms.iter().all(|m| admits_nil(prog, m)),
        TypeKind::Diff(a, b) => admits_nil(prog, a) && !admits_nil(prog, b),
    }
}

/// A type as written (`List(Integer)`, `Integer | #none`, `Foo class`).
pub fn type_text(t: &TypeExpr) -> String {
    match &t.kind {
        TypeKind::Named { name, args } if args.is_empty() => name.to_string(),
        TypeKind::Named { name, args } => {
            let a: Vec<String> = args.iter().map(type_text).collect();
            format!("{name}({})", a.join(", "))
        }
        TypeKind::SelfType => "Self".into(),
        TypeKind::Meta(c) => format!("{} class", type_text(c)),
        TypeKind::Symbol(s) => format!("#{s}"),
        TypeKind::Nil => "nil".into(),
        TypeKind::False => "false".into(),
        TypeKind::True => "true".into(),
        TypeKind::Union(ms) => join(ms, " | "),
        TypeKind::Inter(ms) => join(ms, " & "),
        TypeKind::Diff(a, b) => format!("{} \\ {}", operand(a), operand(b)),
        TypeKind::Error => "?".into(),
    }
}

fn join(ms: &[TypeExpr], sep: &str) -> String {
    ms.iter().map(operand).collect::<Vec<_>>().join(sep)
}

/// A member of a compound type, parenthesised when it is compound itself.
fn operand(t: &TypeExpr) -> String {
    match t.kind {
        TypeKind::Union(_) | TypeKind::Inter(_) | TypeKind::Diff(..) => {
            format!("({})", type_text(t))
        }
        _ => type_text(t),
    }
}
