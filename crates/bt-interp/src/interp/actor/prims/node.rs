//! Node: `Node current`, `Node named:` validation, printing, the
//! `node`/`isRemote` selectors of pids and actors, and the link protocol (`connect`,
//! `disconnect`, `isConnected`, `ping`, `Node connected`). A Node is a sealed Value instance
//! with one field, `name` (a Symbol), so equality, hashing and order are those of Value
//! instances.
//!
//! The network side lives above the interpreter (`crate::dist`) and is reached through the
//! [`Distribution`](crate::interp::distribution::Distribution) object a named node installs
//! in `Program::dist`. Without it (no `--name`) the node is `nonode@nohost` and `connect`
//! answers `node_down`.

use crate::interp::capability::{require, Capability};

use crate::interp::actor::await_external;
use crate::interp::actor::prims::actor::target;
use crate::interp::distribution::{valid_node_name, NodeError};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::value::{Sym, Value};

pub mod erl;
pub mod handles;
pub mod identity;
pub mod peer;
pub mod remote;

pub use identity::current_name;
use identity::{current, is_node, node_name};
pub(crate) use identity::{node_arg, node_value};

const HINT: &str = "expected name@host";

pub fn register(p: &mut Prims) {
    let n = "Node";
    p.add_class(n, "current", |ctx, _, _| current(ctx));
    p.add_class(n, "named:", named);
    p.add_class(n, "connected", |ctx, _, _| {
        let names = match ctx.prog.dist.get() {
            Some(d) => d.connected(),
            None => Vec::new(),
        };
        let nodes: Result<Vec<Value>, _> =
            names.iter().map(|s| node_value(ctx, Sym::new(s))).collect();
        Ok(Value::list(nodes?))
    });
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
    p.add(n, "isConnected", |ctx, r, _| {
        let d = ctx.prog.dist.get();
        Ok(Value::bool(
            d.is_some_and(|d| d.is_connected(node_name(r).as_str())),
        ))
    });
    p.add(n, "ping", |ctx, r, _| {
        require(ctx, Capability::Distribution, "Node ping")?;
        let name = node_name(r);
        if name == current_name(ctx) {
            return Ok(Value::True);
        }
        match ctx.prog.dist.get().cloned() {
            Some(d) => Ok(Value::bool(await_external(
                ctx,
                "the distribution layer",
                move |done| d.ping(name.as_str(), done),
            )?)),
            None => Ok(Value::False),
        }
    });
    p.add(n, "disconnect", |ctx, r, _| {
        require(ctx, Capability::Distribution, "Node disconnect")?;
        let d = ctx.prog.dist.get().cloned();
        Ok(Value::bool(
            d.is_some_and(|d| d.disconnect(node_name(r).as_str())),
        ))
    });
    p.add(n, "connect", connect);

    p.send_target(crate::interp::actor::target::target_of::<peer::RemoteName>);
    p.add_class("Actor", "named:on:", peer::named_on);
    remote::register(p);
    p.add("Pid", "node", |ctx, _, _| current(ctx));
    p.add("Actor", "node", |ctx, r, _| {
        target(ctx, r)?;
        current(ctx)
    });
    p.add("Actor", "isRemote", |ctx, r, _| {
        Ok(Value::bool(target(ctx, r)?.proc.pid().node != 0))
    });
}

/// `aNode connect`: a Result.
fn connect(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    require(ctx, Capability::Distribution, "Node connect")?;
    let name = node_name(r);
    let res = match ctx.prog.dist.get().cloned() {
        Some(d) => await_external(ctx, "the distribution layer", move |done| {
            d.connect(name.as_str(), done)
        })?,
        None => Err(NodeError {
            kind: "node_down",
            message: format!("cannot connect to {name}"),
            hint: Some("start bt with --name to enable distribution".into()),
        }),
    };
    match res {
        Ok(()) => Ok(ctx.make_ok(r.clone())),
        Err(e) => {
            let v = crate::interp::actor::prims::actor::error_value_hinted(
                ctx,
                ErrorKind::from_name(e.kind),
                e.message,
                e.hint.as_deref(),
            );
            Ok(ctx.make_error(v))
        }
    }
}

/// `Node named: #'name@host'`: a Result.
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
            ErrorKind::InvalidNodeName,
            format!("invalid node name '{text}'"),
            HINT,
        );
        return Ok(ctx.make_error(e));
    }
    let v = node_value(ctx, Sym::new(&text))?;
    Ok(ctx.make_ok(v))
}

fn label(r: &Value) -> String {
    format!("Node({})", node_name(r))
}

fn error(ctx: &Ctx, kind: ErrorKind, msg: String, hint: &str) -> Value {
    crate::interp::actor::prims::actor::error_value_hinted(ctx, kind, msg, Some(hint))
}
