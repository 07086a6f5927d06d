//! Which node: this node's name ([`current_name`]), Node values ([`node_value`]: a sealed
//! Value instance with one field, `name`) and the name a Node argument stands for
//! ([`node_arg`]). The Node primitives (`node.rs`) and the remote-process modules beside this
//! one use it; it names none of them.

use std::sync::Arc;

use crate::interp::distribution::NO_NODE;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult};
use crate::value::{ClassRef, Instance, Sym, Value};

/// This node's name (`nonode@nohost` unless started with `--name`).
pub fn current_name(ctx: &Ctx) -> Sym {
    if let Some(d) = ctx.prog.dist.get() {
        return d.node_name();
    }
    match &ctx.proc.sys {
        Some(sys) => sys.node_name,
        None => Sym::new(NO_NODE),
    }
}

/// The Node value of this node.
pub fn current(ctx: &mut Ctx) -> EvalResult {
    let name = current_name(ctx);
    node_value(ctx, name)
}

/// The built-in Node class (a program may declare a class of the same name).
fn node_class(ctx: &Ctx) -> Option<ClassRef> {
    match &ctx.proc.sys {
        Some(sys) => sys.node_class.clone(),
        None => ctx.prog.class_named("Node"),
    }
}

/// Is `v` an instance of the built-in Node class?
pub(crate) fn is_node(ctx: &Ctx, v: &Value) -> bool {
    match (v, node_class(ctx)) {
        (Value::Object(i), Some(c)) => Arc::ptr_eq(&i.class, &c),
        _ => false,
    }
}

/// A Node value named `name` (not validated).
pub(crate) fn node_value(ctx: &Ctx, name: Sym) -> EvalResult {
    let Some(class) = node_class(ctx) else {
        return Err(ctx.err(ErrorKind::ClassNotFound, "Class 'Node' not found"));
    };
    let mut fields = vec![Value::Nil; class.field_names.len().max(1)];
    let i = class.field_index(Sym::new("name")).unwrap_or(0);
    fields[i] = Value::Symbol(name);
    Ok(Value::Object(Arc::new(Instance {
        class,
        fields: fields.into(),
    })))
}

/// The name of a Node argument (None if `v` is not a Node).
pub(crate) fn node_arg(ctx: &Ctx, v: &Value) -> Option<Sym> {
    is_node(ctx, v).then(|| node_name(v))
}

pub(crate) fn node_name(r: &Value) -> Sym {
    match r {
        Value::Object(i) => {
            let idx = i.class.field_index(Sym::new("name")).unwrap_or(0);
            match i.fields.get(idx) {
                Some(Value::Symbol(s)) => *s,
                _ => Sym::new(""),
            }
        }
        _ => Sym::new(""),
    }
}
