//! Process navigation: `ProcessNavigation`, `SupervisionTree` and
//! `SupervisionNode` as native values wrapping one immutable [`Snapshot`].
//!
//! The value type is [`SnapVal`] (snap.rs); the generated field protocol of 5.2
//! (constructors, `with…:`, `fieldNames`, `fieldAt:`) is in fields.rs. Only
//! `status` and `asSupervisor` contact the live runtime again; `on:` answers the `default`
//! snapshot for `Node current` and asks any other Node for its own
//! `actor::prims::node_query`): the nodes of such a tree carry that Node, their pids print with
//! its connection index, and `status` goes over the wire when called.

use std::sync::Arc;

use crate::interp::actor::handle::{downcast, PidVal};
use crate::interp::actor::prims::actor::error_value;
use crate::interp::actor::prims::supervision::fields;
use crate::interp::actor::prims::supervision::snap::{Classes, Repr, Shared, SnapVal, NODE_FIELDS};
use crate::interp::actor::prims::supervision::{sup_value, SupRef};
use crate::interp::actor::sys_of;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::collections::dict_from_pairs;
use crate::runtime::snapshot::{
    self, default_snapshot, from_pid, system_snapshot, FromError, NodeState, SnapOptions, Snapshot,
    Totals, DEFAULT_LIMIT,
};
use crate::value::order;
use crate::value::{ClassRef, Sym, Value};

fn class(ctx: &Ctx, name: &str) -> ClassRef {
    ctx.prog
        .class_named(name)
        .unwrap_or_else(|| ctx.prog.core.object.clone())
}

fn classes(ctx: &Ctx) -> Classes {
    Classes {
        nav: class(ctx, "ProcessNavigation"),
        tree: class(ctx, "SupervisionTree"),
        node: class(ctx, "SupervisionNode"),
        pid: class(ctx, "Pid"),
    }
}

/// `Node current`, or nil while the runtime has no Node class.
fn current_node(ctx: &mut Ctx) -> Value {
    match ctx.prog.class_named("Node") {
        Some(c) => ctx
            .send(&Value::Class(c), Sym::new("current"), &[])
            .unwrap_or(Value::Nil),
        None => Value::Nil,
    }
}

fn shared(ctx: &mut Ctx, snap: Snapshot, node: Value) -> Arc<Shared> {
    Arc::new(Shared {
        snap,
        node,
        classes: classes(ctx),
    })
}

/// Values not cut from a snapshot share an empty one (no node, captured at 0).
pub fn hand_built(ctx: &mut Ctx, repr: Repr) -> Value {
    let snap = Snapshot {
        roots: Vec::new(),
        captured_at: 0,
        node: String::new(),
    };
    SnapVal {
        sh: shared(ctx, snap, Value::Nil),
        repr,
    }
    .value()
}

fn snap_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a SnapVal, Unwind> {
    downcast::<SnapVal>(r).ok_or_else(|| {
        let n = ctx.class_name_of(r);
        ctx.type_err(format!("{n} is not a snapshot value"))
    })
}

fn opts(ctx: &mut Ctx, limit: Option<usize>, node: &Value) -> SnapOptions {
    let name = match node {
        Value::Nil => "nonode@nohost".to_string(),
        v => match ctx.send(v, Sym::new("name"), &[]) {
            Ok(Value::Symbol(s)) => s.as_str().to_string(),
            _ => "nonode@nohost".to_string(),
        },
    };
    SnapOptions {
        limit,
        node: name,
        ..SnapOptions::default()
    }
}

/// Takes a snapshot with `f` on this node and wraps it as a ProcessNavigation.
fn take(
    ctx: &mut Ctx,
    limit: Option<usize>,
    f: impl FnOnce(&SnapOptions) -> Result<Snapshot, FromError>,
) -> Result<Value, FromError> {
    let node = current_node(ctx);
    let o = opts(ctx, limit, &node);
    let snap = f(&o)?;
    Ok(SnapVal {
        sh: shared(ctx, snap, node),
        repr: Repr::Nav { nodes: None },
    }
    .value())
}

fn from(ctx: &mut Ctx, root: &Value, limit: Option<usize>) -> EvalResult {
    // A process of another node: the snapshot is taken there.
    if let Some((node, number)) = crate::interp::actor::prims::node_query::remote_process(root) {
        return remote_from(ctx, node, number, limit);
    }
    let pid = if let Some(s) = downcast::<SupRef>(root) {
        s.h.pid()
    } else if let Some(p) = downcast::<PidVal>(root) {
        p.proc.pid()
    } else {
        let n = ctx.class_name_of(root);
        let e = error_value(
            ctx,
            ErrorKind::TypeError,
            format!("ProcessNavigation from: expects a Supervisor or a Pid, not {n}"),
        );
        return Ok(ctx.make_error(e));
    };
    let sys = sys_of(ctx)?;
    match take(ctx, limit, |o| from_pid(&sys.supervision, pid, o)) {
        Ok(v) => Ok(ctx.make_ok(v)),
        Err(e) => {
            let e = error_value(ctx, ErrorKind::from_name(e.kind()), e.message());
            Ok(ctx.make_error(e))
        }
    }
}

/// `ProcessNavigation on: aNode`: the `default` snapshot taken on that node.
fn on(ctx: &mut Ctx, node: &Value) -> EvalResult {
    let is_node = ctx
        .prog
        .class_named("Node")
        .is_some_and(|c| ctx.is_kind_of(node, &c));
    if !is_node {
        let n = ctx.class_name_of(node);
        let e = error_value(
            ctx,
            ErrorKind::TypeError,
            format!("ProcessNavigation on: expects a Node, not {n}"),
        );
        return Ok(ctx.make_error(e));
    }
    let here = current_node(ctx);
    if !order::strict_eq(node, &here) {
        // Another node: its `default` snapshot, over the connection.
        return remote_on(ctx, node);
    }
    let sys = sys_of(ctx)?;
    let v = take(ctx, Some(DEFAULT_LIMIT), |o| {
        Ok(default_snapshot(&sys.supervision, o))
    })
    .unwrap_or(Value::Nil);
    Ok(ctx.make_ok(v))
}

/// `ProcessNavigation on:` another node: its `processes` query, seen as a navigation.
fn remote_on(ctx: &mut Ctx, node: &Value) -> EvalResult {
    let r = ctx.send(node, Sym::new("processes"), &[])?;
    let ok = ctx.send(&r, Sym::new("isOk"), &[])?;
    if !matches!(ok, Value::True) {
        return Ok(r);
    }
    let tree = ctx.send(&r, Sym::new("unwrap"), &[])?;
    let s = snap_of(ctx, &tree)?;
    let nav = s.with_repr(Repr::Nav { nodes: None }).value();
    Ok(ctx.make_ok(nav))
}

/// `ProcessNavigation from:` a process of `node`: the subtree taken there.
fn remote_from(ctx: &mut Ctx, node: Sym, number: u64, limit: Option<usize>) -> EvalResult {
    let Some(d) = ctx.prog.dist.get().cloned() else {
        let e = error_value(ctx, ErrorKind::NodeDown, format!("cannot reach {node}"));
        return Ok(ctx.make_error(e));
    };
    let lim = limit.map_or(Value::sym("infinity"), |l| Value::Int(l as i64));
    let args = [Value::Int(number as i64), lim];
    match d.query(
        ctx,
        node,
        "from:",
        &args,
        crate::interp::actor::prims::node_query::QUERY_TIMEOUT_MS,
    ) {
        Ok(tree) => {
            let s = snap_of(ctx, &tree)?;
            let nav = s.with_repr(Repr::Nav { nodes: None }).value();
            Ok(ctx.make_ok(nav))
        }
        Err(Unwind::Error(e)) => Ok(ctx.make_error(e)),
        Err(u) => Err(u),
    }
}

/// A snapshot taken on another node (`node`, a Node value), as its SupervisionTree: class
/// names map to this node's classes of that name where there is one.
pub fn remote_tree(ctx: &mut Ctx, mut snap: Snapshot, node: Value) -> Value {
    fn classes(ctx: &Ctx, n: &mut crate::runtime::snapshot::SnapNode) {
        if let Value::Symbol(s) = &n.class {
            if let Some(c) = ctx.prog.class_by_sym(*s) {
                n.class = Value::Class(c);
            }
        }
        for c in &mut n.children {
            classes(ctx, c);
        }
    }
    for r in &mut snap.roots {
        classes(ctx, r);
    }
    SnapVal {
        sh: shared(ctx, snap, node),
        repr: Repr::Tree { flat: None },
    }
    .value()
}

fn opt_int(v: Option<u64>) -> Value {
    v.map_or(Value::Nil, |i| Value::Int(i as i64))
}

fn node_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a SnapVal, Unwind> {
    let s = snap_of(ctx, r)?;
    if s.is_node() {
        Ok(s)
    } else {
        Err(ctx.type_err("not a SupervisionNode"))
    }
}

fn dict(pairs: Vec<(&str, Value)>) -> Value {
    dict_from_pairs(pairs.into_iter().map(|(k, v)| (Value::sym(k), v)))
}

/// The `status` Dictionary: `#module`, `#sysState` and `#queueLength` of a `statusDetails`
/// answer (nil stays nil).
fn status_keys(details: Value) -> Value {
    match &details {
        Value::Dict(d) => dict(
            ["module", "sysState", "queueLength"]
                .into_iter()
                .map(|k| (k, d.get(&Value::sym(k)).cloned().unwrap_or(Value::Nil)))
                .collect(),
        ),
        _ => details,
    }
}

fn field_index(name: &str) -> Option<usize> {
    NODE_FIELDS.iter().position(|f| *f == name)
}

fn node_sel(ctx: &mut Ctx, r: &Value, sel: &str) -> EvalResult {
    let s = node_of(ctx, r)?;
    if let Some(i) = field_index(sel) {
        return Ok(s.field(i));
    }
    let data = s.data();
    let sup = data.and_then(|n| n.supervision.as_deref());
    Ok(match sel {
        "state" => Value::sym(s.state().as_str()),
        "isSupervisor" => Value::bool(s.kind_is(&["beamtalkSupervisor", "otpSupervisor"])),
        "isBeamtalk" => Value::bool(s.kind_is(&["beamtalkSupervisor", "beamtalkActor"])),
        "children" => Value::list(s.children()),
        "parent" => s.parent().map_or(Value::Nil, SnapVal::value),
        "parentPid" => s.parent().map_or(Value::Nil, |p| p.field(0)),
        "strategy" => sup.map_or(Value::Nil, |i| Value::sym(i.strategy.as_str())),
        "maxRestarts" => sup.map_or(Value::Nil, |i| Value::Int(i.max_restarts as i64)),
        "restartWindow" => sup.map_or(Value::Nil, |i| Value::Int(i.restart_window as i64)),
        "restartIntensity" => sup.map_or(Value::Nil, |i| {
            dict(vec![
                ("maxRestarts", Value::Int(i.max_restarts as i64)),
                ("window", Value::Int(i.restart_window as i64)),
            ])
        }),
        "autoShutdown" => sup.map_or(Value::Nil, |i| {
            Value::sym(i.auto_shutdown.map_or("never", |a| a.as_str()))
        }),
        "truncated" => Value::bool(data.is_some_and(|n| n.truncated)),
        "restartCount" => Value::Int(data.map_or(0, |n| n.restart_count) as i64),
        "startedAt" => opt_int(data.and_then(|n| n.started_at)),
        "exitedAt" => opt_int(data.and_then(|n| n.exited_at)),
        "uptime" => opt_int(data.and_then(|n| n.uptime_ms)),
        "generation" => opt_int(sup.map(|i| i.generation)),
        "restartsPerformed" => opt_int(sup.map(|i| i.restarts_performed)),
        "node" => {
            if data.is_some() {
                s.sh.node.clone()
            } else {
                Value::Nil
            }
        }
        // `status` answers the three keys of 7.3; `statusDetails` adds the bytes the process
        // holds (`#memory`) and the casts its bounded mailbox dropped (`#droppedCasts`).
        "status" => status_keys(node_sel(ctx, r, "statusDetails")?),
        "statusDetails" => {
            if let Some(rp) = crate::interp::actor::prims::node_query::as_remote_pid(&s.field(0)) {
                if s.state() != NodeState::Running {
                    return Ok(Value::Nil);
                }
                return Ok(crate::interp::actor::prims::node_query::remote_status(
                    ctx, rp,
                ));
            }
            let sys = sys_of(ctx)?;
            let pid = downcast::<PidVal>(&s.field(0)).map(|p| p.proc.pid());
            match pid.filter(|_| s.state() == NodeState::Running) {
                Some(p) => match snapshot::status(&sys.rt, p) {
                    Some(st) => dict(vec![
                        ("module", Value::sym(&st.module)),
                        ("sysState", Value::sym("running")),
                        ("queueLength", Value::Int(st.queue_length as i64)),
                        ("memory", Value::Int(st.memory as i64)),
                        ("droppedCasts", Value::Int(st.dropped_casts as i64)),
                    ]),
                    None => Value::Nil,
                },
                None => Value::Nil,
            }
        }
        "asSupervisor" => {
            let sys = sys_of(ctx)?;
            let pid = downcast::<PidVal>(&s.field(0)).map(|p| p.proc.pid());
            match pid {
                Some(p) if s.kind_is(&["beamtalkSupervisor"]) => match sys.supervision.by_pid(p) {
                    Some(h) => sup_value(ctx, h),
                    None => Value::Nil,
                },
                _ => Value::Nil,
            }
        }
        _ => Value::Nil,
    })
}

/// The node values among a tree's nodes (other elements of a hand-built list are skipped).
fn node_vals(list: &[Value]) -> impl Iterator<Item = &SnapVal> {
    list.iter()
        .filter_map(downcast::<SnapVal>)
        .filter(|n| n.is_node())
}

fn pid_string(v: &Value) -> Value {
    match downcast::<PidVal>(v) {
        Some(p) => Value::str(p.proc.pid().to_string()),
        None => match crate::interp::actor::prims::node_query::as_remote_pid(v) {
            Some(p) => Value::str(format!("<{}.{}.0>", p.index, p.number)),
            None => Value::Nil,
        },
    }
}

fn tree_dicts(nodes: &[Value]) -> Value {
    Value::list(node_vals(nodes).map(|n| {
        let [pid, name, kind, class, count] = n.fields();
        let cls = match &class {
            Value::Class(c) => Value::Symbol(c.name),
            _ => Value::Nil,
        };
        dict(vec![
            ("pid", pid_string(&pid)),
            ("registeredName", name),
            ("kind", kind),
            ("class", cls),
            ("childCount", count),
            (
                "isSupervisor",
                Value::bool(n.kind_is(&["beamtalkSupervisor", "otpSupervisor"])),
            ),
            (
                "parentPid",
                n.parent().map_or(Value::Nil, |p| pid_string(&p.field(0))),
            ),
        ])
    }))
}

fn totals(s: &SnapVal, nodes: &[Value]) -> Totals {
    if matches!(s.repr, Repr::Tree { flat: None }) {
        return s.sh.snap.totals();
    }
    let mut t = Totals::default();
    for n in node_vals(nodes) {
        let declared = n.data().is_some_and(|d| d.declared_supervisor);
        if n.kind_is(&["beamtalkSupervisor", "otpSupervisor"]) || declared {
            t.supervisors += 1;
        } else {
            t.workers += 1;
        }
        match n.state() {
            NodeState::Running => t.running += 1,
            NodeState::Exited => t.exited += 1,
            NodeState::Restarting => {}
        }
        t.restarts += n.data().map_or(0, |d| d.restart_count);
        t.max_depth = t.max_depth.max(n.depth());
    }
    t
}

fn as_json(s: &SnapVal, nodes: &[Value]) -> String {
    if matches!(s.repr, Repr::Tree { flat: None }) {
        return s.sh.snap.to_json();
    }
    let snap = Snapshot {
        roots: node_vals(nodes)
            .filter(|n| n.parent().is_none())
            .map(SnapVal::to_record)
            .collect(),
        captured_at: s.sh.snap.captured_at,
        node: s.sh.snap.node.clone(),
    };
    snap.to_json()
}

fn tree_sel(ctx: &mut Ctx, r: &Value, sel: &str, args: &[Value]) -> EvalResult {
    let s = snap_of(ctx, r)?.clone();
    if matches!(sel, "size" | "isEmpty") && matches!(s.repr, Repr::Tree { flat: None }) {
        let n = s.sh.snap.flat().len();
        return Ok(if sel == "size" {
            Value::Int(n as i64)
        } else {
            Value::bool(n == 0)
        });
    }
    let nodes = s.list();
    let roots = || -> Vec<Value> {
        nodes
            .iter()
            .filter(|v| downcast::<SnapVal>(v).is_some_and(|n| n.is_node() && n.parent().is_none()))
            .cloned()
            .collect()
    };
    Ok(match sel {
        "nodes" => Value::list(nodes),
        "flatNodes" => s.list_field(),
        "size" => Value::Int(nodes.len() as i64),
        "isEmpty" => Value::bool(nodes.is_empty()),
        "root" => roots().into_iter().next().unwrap_or(Value::Nil),
        "roots" => Value::list(roots()),
        "asJson" => Value::str(as_json(&s, &nodes)),
        "node" => s.sh.node.clone(),
        "totals" => {
            let t = totals(&s, &nodes);
            dict(vec![
                ("supervisors", Value::Int(t.supervisors as i64)),
                ("workers", Value::Int(t.workers as i64)),
                ("running", Value::Int(t.running as i64)),
                ("exited", Value::Int(t.exited as i64)),
                ("restarts", Value::Int(t.restarts as i64)),
                ("maxDepth", Value::Int(t.max_depth as i64)),
            ])
        }
        "asDictionaries" => tree_dicts(&nodes),
        "nodesOfKind:" => Value::list(nodes.into_iter().filter(|v| {
            downcast::<SnapVal>(v)
                .is_some_and(|n| n.is_node() && order::strict_eq(&n.field(2), &args[0]))
        })),
        "findClass:" => Value::list(nodes.into_iter().filter(|v| {
            downcast::<SnapVal>(v).is_some_and(|n| {
                n.is_node()
                    && matches!((&n.field(3), &args[0]),
                        (Value::Class(a), Value::Class(b)) if Arc::ptr_eq(a, b))
            })
        })),
        "do:" => {
            for n in nodes {
                ctx.tick()?;
                ctx.call_block(&args[0], &[n])?;
            }
            r.clone()
        }
        "select:" => {
            let mut out = Vec::new();
            for n in nodes {
                ctx.tick()?;
                if matches!(
                    ctx.call_block(&args[0], std::slice::from_ref(&n))?,
                    Value::True
                ) {
                    out.push(n);
                }
            }
            Value::list(out)
        }
        "collect:" => {
            let mut out = Vec::new();
            for n in nodes {
                ctx.tick()?;
                out.push(ctx.call_block(&args[0], &[n])?);
            }
            Value::list(out)
        }
        "detect:" | "detect:ifNone:" => {
            for n in nodes {
                ctx.tick()?;
                if matches!(
                    ctx.call_block(&args[0], std::slice::from_ref(&n))?,
                    Value::True
                ) {
                    return Ok(n);
                }
            }
            if sel == "detect:" {
                return Err(ctx.err(ErrorKind::NotFound, "no node matches"));
            }
            ctx.call_block(&args[1], &[])?
        }
        _ => Value::Nil,
    })
}

/// The `nodes` of a ProcessNavigation flattened in pre-order (a tree's `flatNodes`).
fn flatten_values(roots: &[Value]) -> Vec<Value> {
    fn go(v: &Value, out: &mut Vec<Value>) {
        out.push(v.clone());
        if let Some(n) = downcast::<SnapVal>(v) {
            for c in n.children() {
                go(&c, out);
            }
        }
    }
    let mut out = Vec::new();
    for r in roots {
        go(r, &mut out);
    }
    out
}

macro_rules! node_prims {
    ($p:expr, $($sel:literal),*) => {
        $( $p.add("SupervisionNode", $sel, |ctx, r, _| node_sel(ctx, r, $sel)); )*
    };
}

macro_rules! tree_prims {
    ($p:expr, $($sel:literal),*) => {
        $( $p.add("SupervisionTree", $sel, |ctx, r, a| tree_sel(ctx, r, $sel, a)); )*
    };
}

pub fn register(p: &mut Prims) {
    let pn = "ProcessNavigation";
    p.add_class(pn, "default", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        Ok(take(ctx, Some(DEFAULT_LIMIT), |o| {
            Ok(default_snapshot(&sys.supervision, o))
        })
        .unwrap_or(Value::Nil))
    });
    p.add_class(pn, "system", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        if !sys.privileged.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ctx.err(
                ErrorKind::PermissionDenied,
                "ProcessNavigation system needs a privileged context (granted by the host)",
            ));
        }
        Ok(take(ctx, Some(DEFAULT_LIMIT), |o| {
            Ok(system_snapshot(&sys.supervision, o))
        })
        .unwrap_or(Value::Nil))
    });
    p.add_class(pn, "from:", |ctx, _, a| {
        from(ctx, &a[0], Some(DEFAULT_LIMIT))
    });
    p.add_class(pn, "from:limit:", |ctx, _, a| {
        let limit = match &a[1] {
            Value::Int(n) if *n > 0 => Some(*n as usize),
            Value::Symbol(s) if s.as_str() == "infinity" => None,
            other => {
                let n = ctx.class_name_of(other);
                return Err(ctx.type_err(format!(
                    "limit must be a positive Integer or #infinity, not {n}"
                )));
            }
        };
        from(ctx, &a[0], limit)
    });
    p.add_class(pn, "on:", |ctx, _, a| on(ctx, &a[0]));
    p.add(pn, "tree", |ctx, r, _| {
        let s = snap_of(ctx, r)?;
        let flat = match &s.repr {
            Repr::Nav { nodes: None } => None,
            _ => Some(Value::list(flatten_values(&s.list()))),
        };
        Ok(s.with_repr(Repr::Tree { flat }).value())
    });
    p.add(pn, "nodes", |ctx, r, _| Ok(snap_of(ctx, r)?.list_field()));
    p.add(pn, "node", |ctx, r, _| Ok(snap_of(ctx, r)?.sh.node.clone()));
    tree_prims!(
        p,
        "nodes",
        "flatNodes",
        "size",
        "isEmpty",
        "root",
        "roots",
        "asJson",
        "node",
        "totals",
        "asDictionaries",
        "nodesOfKind:",
        "findClass:",
        "do:",
        "select:",
        "collect:",
        "detect:",
        "detect:ifNone:"
    );
    node_prims!(
        p,
        "pid",
        "registeredName",
        "kind",
        "behaviourClass",
        "childCount",
        "state",
        "isSupervisor",
        "isBeamtalk",
        "children",
        "parent",
        "parentPid",
        "strategy",
        "maxRestarts",
        "restartWindow",
        "restartIntensity",
        "autoShutdown",
        "truncated",
        "restartCount",
        "startedAt",
        "exitedAt",
        "uptime",
        "generation",
        "restartsPerformed",
        "node",
        "status",
        "statusDetails",
        "asSupervisor"
    );
    p.add("SupervisionNode", "childNodes", |ctx, r, _| {
        node_sel(ctx, r, "children")
    });
    p.add_class("Workspace", "processes", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        let v = take(ctx, Some(DEFAULT_LIMIT), |o| {
            Ok(default_snapshot(&sys.supervision, o))
        })
        .unwrap_or(Value::Nil);
        let s = snap_of(ctx, &v)?;
        Ok(s.with_repr(Repr::Tree { flat: None }).value())
    });
    fields::register(p);
}
