//! Per-node queries: `aNode actors`, `actorsOf:`, `actorAt:`,
//! `processes`, `supervisors`, `shapeManifest` and `shapeSkew`. Each answers a Result and
//! never raises: failures are `Result error:` values (`node_down`, `timeout`,
//! `insecure_distribution`, …).
//!
//! `Node current` is answered here from the runtime; any other node is asked over the
//! connection through [`NodeServices::query`](crate::interp::distribution::NodeServices::query)
//! (implemented by `crate::dist::query`, which talks to the peer's reserved query service).
//! Actors of another node come back as remote actor handles and snapshot pids as remote
//! pids (`actor::prims::node::remote`): they print with the connection index of their node
//! and know their Node.

use crate::interp::actor::handle::{downcast, ActorRef, PidVal};
use crate::interp::actor::prims::actor::error_value_hinted;
pub use crate::interp::actor::prims::node::remote::RemotePid;
use crate::interp::actor::prims::node::{current_name, node_arg, node_value};
use crate::interp::actor::sys_of;
use crate::interp::class::ClassExt;
use crate::interp::class::ClassKind;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::collections::dict_from_pairs;
use crate::runtime::snapshot::is_runtime_process;
use crate::runtime::Pid;
use crate::value::{ClassRef, Sym, Value};

/// How long a per-node query waits for its answer (the default send timeout).
pub const QUERY_TIMEOUT_MS: u64 = 5000;
/// How long a remote `status` waits (nil after 1000 ms).
pub const STATUS_TIMEOUT_MS: u64 = 1000;

/// The selectors of 8.10 (and `shapeManifest`), as the query service names them.
pub const QUERIES: [&str; 7] = [
    "actors",
    "actorsOf:",
    "actorAt:",
    "processes",
    "supervisors",
    "shapeManifest",
    "shapeSkew",
];

pub fn register(p: &mut Prims) {
    p.add("Node", "actors", |ctx, r, a| query(ctx, r, "actors", a));
    p.add("Node", "actorsOf:", |ctx, r, a| {
        query(ctx, r, "actorsOf:", a)
    });
    p.add("Node", "actorAt:", |ctx, r, a| query(ctx, r, "actorAt:", a));
    p.add("Node", "processes", |ctx, r, a| {
        query(ctx, r, "processes", a)
    });
    p.add("Node", "supervisors", |ctx, r, a| {
        query(ctx, r, "supervisors", a)
    });
    p.add("Node", "shapeManifest", |ctx, r, a| {
        query(ctx, r, "shapeManifest", a)
    });
    p.add("Node", "shapeSkew", |ctx, r, a| {
        query(ctx, r, "shapeSkew", a)
    });
}

fn error_result(ctx: &mut Ctx, kind: ErrorKind, msg: String, hint: Option<&str>) -> EvalResult {
    let e = error_value_hinted(ctx, kind, msg, hint);
    Ok(ctx.make_error(e))
}

/// Runs query `sel` on the node `r` and answers a Result.
fn query(ctx: &mut Ctx, r: &Value, sel: &str, a: &[Value]) -> EvalResult {
    let Some(name) = node_arg(ctx, r) else {
        let n = ctx.class_name_of(r);
        return Err(ctx.type_err(format!("{sel} needs a Node, not {n}")));
    };
    if sel == "actorsOf:" && !matches!(a[0], Value::Class(_)) {
        let n = ctx.class_name_of(&a[0]);
        return error_result(
            ctx,
            ErrorKind::TypeError,
            format!("actorsOf: expects a class, not {n}"),
            None,
        );
    }
    let answer = if name == current_name(ctx) {
        local(ctx, sel, a)
    } else {
        match ctx.prog.dist.get().cloned() {
            Some(d) => d.query(ctx, name, sel, a, QUERY_TIMEOUT_MS),
            None => {
                return error_result(
                    ctx,
                    ErrorKind::NodeDown,
                    format!("cannot reach {name}"),
                    Some("start bt with --name to enable distribution"),
                )
            }
        }
    };
    match answer {
        Ok(v) => Ok(ctx.make_ok(v)),
        Err(Unwind::Error(e)) => Ok(ctx.make_error(e)),
        Err(u) => Err(u),
    }
}

/// The live user processes of this node with their classes (`label` "actor" or
/// "supervisor"), in spawn order.
fn live(ctx: &Ctx, label: &str) -> Result<Vec<(crate::runtime::ProcRef, Value)>, Unwind> {
    let sys = sys_of(ctx)?;
    Ok(sys
        .rt
        .processes(false)
        .into_iter()
        .filter(|p| p.label == label && !is_runtime_process(p.pid, p.name))
        .filter(|p| p.proc.is_alive())
        .map(|p| {
            let info = p.proc.info().clone();
            (p.proc, info)
        })
        .collect())
}

fn actor_value(p: crate::runtime::ProcRef, info: &Value) -> Option<Value> {
    match info {
        Value::Class(c) => Some(ActorRef::value(p, c.clone())),
        _ => None,
    }
}

/// Parses `<0.7.0>` (or `0.7.0`) into a Pid.
pub fn parse_pid(s: &str) -> Option<Pid> {
    Pid::parse(s)
}

/// The queries on this node.
pub fn local(ctx: &mut Ctx, sel: &str, a: &[Value]) -> EvalResult {
    match sel {
        "actors" => {
            let procs = live(ctx, "actor")?;
            Ok(Value::list(
                procs.into_iter().filter_map(|(p, i)| actor_value(p, &i)),
            ))
        }
        "actorsOf:" => {
            let Value::Class(want) = &a[0] else {
                return Err(ctx.type_err("actorsOf: expects a class"));
            };
            let procs = live(ctx, "actor")?;
            Ok(Value::list(procs.into_iter().filter_map(
                |(p, i)| match &i {
                    Value::Class(c) if c.inherits_or_is(want) => actor_value(p, &i),
                    _ => None,
                },
            )))
        }
        "actorAt:" => {
            let pid = match &a[0] {
                Value::Str(s) => parse_pid(s),
                v => downcast::<PidVal>(v)
                    .map(|p| p.proc.pid())
                    .or_else(|| downcast::<ActorRef>(v).map(|h| h.proc.pid())),
            };
            let sys = sys_of(ctx)?;
            let found = pid
                .filter(|p| p.node == 0 && !p.service)
                .and_then(|p| sys.rt.lookup(p))
                .filter(|p| p.is_alive());
            Ok(match found {
                Some(p) => {
                    let info = p.info().clone();
                    actor_value(p, &info).unwrap_or(Value::Nil)
                }
                None => Value::Nil,
            })
        }
        "processes" => {
            let nav = ctx
                .prog
                .class_named("ProcessNavigation")
                .ok_or_else(|| ctx.err(ErrorKind::ClassNotFound, "no ProcessNavigation"))?;
            let n = ctx.send(&Value::Class(nav), Sym::new("default"), &[])?;
            ctx.send(&n, Sym::new("tree"), &[])
        }
        "supervisors" => {
            let sys = sys_of(ctx)?;
            let procs = live(ctx, "supervisor")?;
            Ok(Value::list(procs.into_iter().filter_map(|(p, _)| {
                let h = sys.supervision.by_pid(p.pid())?;
                Some(crate::interp::actor::prims::supervision::sup_value(ctx, h))
            })))
        }
        "shapeManifest" => Ok(manifest_value(&shape_manifest(&ctx.prog))),
        "shapeSkew" => Ok(Value::list(Vec::new())),
        _ => Err(ctx.err(
            ErrorKind::DoesNotUnderstand,
            format!("no per-node query #{sel}"),
        )),
    }
}

/// `class shapeVersion => N` of a Value class (1 when it declares none).
pub fn shape_version(c: &ClassRef) -> i64 {
    use crate::interp::eval::Method;
    let Some((Method::Compiled(m), _)) = c.lookup_class_side(Sym::new("shapeVersion")) else {
        return 1;
    };
    let body = m.source.split_once("=>").map_or("", |b| b.1);
    let body = body.split("//").next().unwrap_or("").trim();
    let body = body.strip_prefix('^').unwrap_or(body).trim();
    body.replace('_', "").parse().unwrap_or(1)
}

/// Every Value class loaded on this node with its shape version, by name.
pub fn shape_manifest(prog: &crate::interp::program::Program) -> Vec<(Sym, i64)> {
    let mut v: Vec<(Sym, i64)> = prog
        .all_classes()
        .iter()
        .filter(|c| c.kind == ClassKind::Value)
        .map(|c| (c.name, shape_version(c)))
        .collect();
    v.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

/// A manifest as a Dictionary: class-name Symbol → version.
pub fn manifest_value(m: &[(Sym, i64)]) -> Value {
    dict_from_pairs(m.iter().map(|(n, v)| (Value::Symbol(*n), Value::Int(*v))))
}

/// `status` of a process of another node: asked over the wire when called, nil when
/// the node does not answer within [`STATUS_TIMEOUT_MS`] or the process is not alive.
pub fn remote_status(ctx: &mut Ctx, p: &RemotePid) -> Value {
    let Some(d) = ctx.prog.dist.get().cloned() else {
        return Value::Nil;
    };
    let args = [Value::Int(p.number as i64)];
    d.query(ctx, p.node, "status", &args, STATUS_TIMEOUT_MS)
        .unwrap_or(Value::Nil)
}

/// A Node value for `name` (nil when the program has no Node class).
pub fn node_of(ctx: &Ctx, name: Sym) -> Value {
    node_value(ctx, name).unwrap_or(Value::Nil)
}

/// Is `v` a process of another node?
pub fn as_remote_pid(v: &Value) -> Option<&RemotePid> {
    downcast::<RemotePid>(v)
}

/// The node and process number of a process of another node (a remote pid or actor handle).
pub fn remote_process(v: &Value) -> Option<(Sym, u64)> {
    if let Some(p) = downcast::<RemotePid>(v) {
        return Some((p.node, p.number));
    }
    downcast::<crate::interp::actor::prims::node::remote::RemoteActor>(v)
        .map(|a| (a.node, a.number))
}

#[cfg(test)]
mod tests {
    use super::parse_pid;

    #[test]
    fn pids_parse() {
        assert_eq!(parse_pid("<0.7.0>").map(|p| p.number), Some(7));
        assert_eq!(
            parse_pid("2.9.1").map(|p| (p.node, p.service)),
            Some((2, true))
        );
        for bad in ["", "<0.7>", "a.b.c", "0.7.0.0", "0.7.2"] {
            assert!(parse_pid(bad).is_none(), "{bad}");
        }
    }
}
