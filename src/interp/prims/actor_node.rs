//! Node (LANGUAGE.md 8.2, 8.3; the local part): `Node current`, `Node named:` validation,
//! printing, and the `node`/`isRemote` selectors of pids and actors. A Node is a sealed
//! Value instance with one field, `name` (a Symbol), so equality, hashing and order are
//! those of Value instances. Connecting to other nodes is not implemented yet: without
//! `--name` the node is `nonode@nohost` and `connect` answers `node_down` as 8.1 says.

use std::sync::Arc;

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::actor::target;
use crate::interp::value::{ClassRef, Instance, Sym, Value};

/// The name of a node that was not started with `--name` (8.1).
pub const NO_NODE: &str = "nonode@nohost";
const HINT: &str = "expected name@host";

pub fn register(p: &mut Prims) {
    let n = "Node";
    p.add_class(n, "current", |ctx, _, _| current(ctx));
    p.add_class(n, "named:", named);
    p.add_class(n, "connected", |_, _, _| Ok(Value::list(Vec::new())));
    // A program may declare its own class named Node: its instances keep the defaults.
    p.add(n, "name", |ctx, r, _| match is_node(ctx, r) {
        true => Ok(Value::Symbol(node_name(r))),
        false => ctx
            .read_field(r, Sym::new("name"), usize::MAX)
            .map_err(|b| *b),
    });
    p.add(n, "printString", |ctx, r, _| match is_node(ctx, r) {
        true => Ok(Value::str(label(r))),
        false => Ok(Value::str(ctx.default_print(r)?)),
    });
    p.add(n, "displayString", |ctx, r, _| match is_node(ctx, r) {
        true => Ok(Value::str(label(r))),
        false => Ok(Value::str(crate::interp::print::default_display(ctx, r)?)),
    });
    p.add(n, "isCurrent", |ctx, r, _| {
        Ok(Value::bool(node_name(r) == current_name(ctx)))
    });
    p.add(n, "isConnected", |_, _, _| Ok(Value::False));
    p.add(n, "ping", |ctx, r, _| {
        Ok(Value::bool(node_name(r) == current_name(ctx)))
    });
    p.add(n, "disconnect", |_, _, _| Ok(Value::False));
    p.add(n, "connect", |ctx, r, _| {
        let hint = if current_name(ctx).as_str() == NO_NODE {
            "start bt with --name to enable distribution"
        } else {
            "distribution is not available in this build"
        };
        let e = error(
            ctx,
            "node_down",
            format!("cannot connect to {}", node_name(r)),
            hint,
        );
        Ok(ctx.make_error(e))
    });

    p.add("Pid", "node", |ctx, _, _| current(ctx));
    p.add("Actor", "node", |ctx, r, _| {
        target(ctx, r)?;
        current(ctx)
    });
    p.add("Actor", "isRemote", |ctx, r, _| {
        Ok(Value::bool(target(ctx, r)?.proc.pid().node != 0))
    });
}

/// This node's name (`nonode@nohost` until distribution exists).
pub fn current_name(ctx: &Ctx) -> Sym {
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
fn is_node(ctx: &Ctx, v: &Value) -> bool {
    match (v, node_class(ctx)) {
        (Value::Object(i), Some(c)) => Arc::ptr_eq(&i.class, &c),
        _ => false,
    }
}

/// A Node value named `name` (not validated).
pub fn node_value(ctx: &Ctx, name: Sym) -> EvalResult {
    let Some(class) = node_class(ctx) else {
        return Err(ctx.err("class_not_found", "Class 'Node' not found"));
    };
    let mut fields = vec![Value::Nil; class.field_names.len().max(1)];
    let i = class.field_index(Sym::new("name")).unwrap_or(0);
    fields[i] = Value::Symbol(name);
    Ok(Value::Object(Arc::new(Instance {
        class,
        fields: fields.into(),
    })))
}

/// `Node named: #'name@host'`: a Result (8.2).
fn named(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let text = match &a[0] {
        Value::Symbol(s) => s.as_str().to_string(),
        Value::Str(s) => s.as_str().to_string(),
        other => {
            let n = ctx.class_name_of(other);
            return Err(ctx.type_err(format!("Node named: expects a Symbol, not {n}")));
        }
    };
    if !valid_node_name(&text) {
        let e = error(
            ctx,
            "invalid_node_name",
            format!("invalid node name '{text}'"),
            HINT,
        );
        return Ok(ctx.make_error(e));
    }
    let v = node_value(ctx, Sym::new(&text))?;
    Ok(ctx.make_ok(v))
}

/// `name@host`: exactly one `@`, both parts non-empty, characters `[A-Za-z0-9_.-]`.
pub fn valid_node_name(s: &str) -> bool {
    let Some((name, host)) = s.split_once('@') else {
        return false;
    };
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    ok(name) && ok(host)
}

fn node_name(r: &Value) -> Sym {
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

fn label(r: &Value) -> String {
    format!("Node({})", node_name(r))
}

fn error(ctx: &Ctx, kind: &str, msg: String, hint: &str) -> Value {
    crate::interp::prims::actor::error_value_hinted(ctx, kind, msg, Some(hint))
}

#[cfg(test)]
mod tests {
    use super::valid_node_name;

    #[test]
    fn node_names() {
        for ok in ["a@b", "worker@localhost", "n-1.x_y@host.example-2"] {
            assert!(valid_node_name(ok), "{ok}");
        }
        for bad in ["", "a", "@b", "a@", "a@b@c", "a b@c", "a@b!", "é@b"] {
            assert!(!valid_node_name(bad), "{bad}");
        }
    }
}
