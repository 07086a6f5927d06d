//! Process navigation (LANGUAGE.md part 7): `ProcessNavigation`, `SupervisionTree` and
//! `SupervisionNode` as native values wrapping one immutable [`Snapshot`].
//!
//! A node is the snapshot plus the path of child indexes from its root, so `parent` and
//! `children` navigate without copying. Only `status` and `asSupervisor` contact the live
//! runtime again.

use std::sync::Arc;

use crate::interp::actor::sys_of;
use crate::interp::actor_handle::{downcast, native, ActorRef, PidVal};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::actor::{error_value, pid_value};
use crate::interp::prims::collections::dict_from_pairs;
use crate::interp::prims::supervision::{sup_value, SupRef};
use crate::interp::value::{ClassRef, NativeObj, Value};
use crate::runtime::snapshot::{
    self, default_snapshot, from_pid, system_snapshot, NodeState, SnapNode, SnapOptions, Snapshot,
};
use crate::runtime::Pid;

/// Which of the three values a [`SnapVal`] is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Nav,
    Tree,
    /// A node: `path` locates it.
    Node,
}

/// A snapshot seen as a ProcessNavigation, a SupervisionTree or one SupervisionNode.
pub struct SnapVal {
    snap: Arc<Snapshot>,
    kind: Kind,
    path: Vec<usize>,
    class: ClassRef,
}

impl SnapVal {
    fn node(&self) -> Option<&SnapNode> {
        let (first, rest) = self.path.split_first()?;
        let mut n = self.snap.roots.get(*first)?;
        for i in rest {
            n = n.children.get(*i)?;
        }
        Some(n)
    }
}

fn pid_str(p: Pid) -> String {
    format!("{p}")
}

impl NativeObj for SnapVal {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        match self.kind {
            Kind::Nav => format!("ProcessNavigation(nodes: {} roots)", self.snap.roots.len()),
            Kind::Tree => {
                let n = self.snap.flat().len();
                match self.snap.roots.first() {
                    None => "#SupervisionTree<empty>".to_string(),
                    Some(r) => {
                        let l = match snapshot::class_name(&r.class) {
                            Some(c) => format!("#{c}"),
                            None => match r.registered_name {
                                Some(s) => format!("#{s}"),
                                None => format!("#{}", r.kind.as_str()),
                            },
                        };
                        format!("#SupervisionTree<{n} nodes, root: {l}>")
                    }
                }
            }
            Kind::Node => match self.node() {
                None => "#SupervisionNode<>".to_string(),
                Some(n) => {
                    let mut s = format!("#SupervisionNode<#{} ", n.kind.as_str());
                    let label = snapshot::class_name(&n.class)
                        .or_else(|| n.registered_name.map(|s| s.as_str().to_string()));
                    if let Some(l) = label {
                        s.push_str(&l);
                        s.push(' ');
                    }
                    match n.pid {
                        Some(p) => s.push_str(&pid_str(p)),
                        None => s.push_str("restarting"),
                    }
                    if n.state == NodeState::Exited {
                        s.push_str(" exited");
                    }
                    if n.kind.is_supervisor() {
                        s.push_str(&format!(" children: {}", n.child_count));
                    }
                    s.push('>');
                    s
                }
            },
        }
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other.as_any().downcast_ref::<SnapVal>().is_some_and(|o| {
            Arc::ptr_eq(&o.snap, &self.snap) && o.kind == self.kind && o.path == self.path
        })
    }
    fn hash_code(&self) -> u64 {
        self.snap.captured_at ^ self.path.len() as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k = vec![self.snap.captured_at];
        k.extend(self.path.iter().map(|i| *i as u64));
        (6, k)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn class(ctx: &Ctx, name: &str) -> ClassRef {
    ctx.prog
        .class_named(name)
        .unwrap_or_else(|| ctx.prog.core.object.clone())
}

fn wrap(ctx: &Ctx, snap: Arc<Snapshot>, kind: Kind, path: Vec<usize>) -> Value {
    let class = class(
        ctx,
        match kind {
            Kind::Nav => "ProcessNavigation",
            Kind::Tree => "SupervisionTree",
            Kind::Node => "SupervisionNode",
        },
    );
    native(SnapVal {
        snap,
        kind,
        path,
        class,
    })
}

fn snap_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a SnapVal, Unwind> {
    downcast::<SnapVal>(r).ok_or_else(|| {
        let n = ctx.class_name_of(r);
        ctx.type_err(format!("{n} is not a snapshot value"))
    })
}

/// Every node of the snapshot in pre-order, as node values.
fn flat_nodes(ctx: &Ctx, s: &SnapVal) -> Vec<Value> {
    fn go(
        ctx: &Ctx,
        snap: &Arc<Snapshot>,
        n: &SnapNode,
        path: &mut Vec<usize>,
        out: &mut Vec<Value>,
    ) {
        out.push(wrap(ctx, snap.clone(), Kind::Node, path.clone()));
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            go(ctx, snap, c, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    for (i, r) in s.snap.roots.iter().enumerate() {
        go(ctx, &s.snap, r, &mut vec![i], &mut out);
    }
    out
}

fn opts(limit: Option<usize>) -> SnapOptions {
    SnapOptions {
        limit,
        ..SnapOptions::default()
    }
}

fn nav(ctx: &Ctx, s: Snapshot) -> Value {
    wrap(ctx, Arc::new(s), Kind::Nav, Vec::new())
}

fn from(ctx: &mut Ctx, root: &Value, limit: Option<usize>) -> EvalResult {
    let pid = if let Some(s) = downcast::<SupRef>(root) {
        s.h.pid()
    } else if let Some(p) = downcast::<PidVal>(root) {
        p.proc.pid()
    } else {
        let n = ctx.class_name_of(root);
        let e = error_value(
            ctx,
            "type_error",
            format!("ProcessNavigation from: expects a Supervisor or a Pid, not {n}"),
        );
        return Ok(ctx.make_error(e));
    };
    let sys = sys_of(ctx)?;
    match from_pid(&sys.supervision, pid, &opts(limit)) {
        Ok(s) => {
            let v = nav(ctx, s);
            Ok(ctx.make_ok(v))
        }
        Err(e) => {
            let e = error_value(ctx, e.kind(), e.message());
            Ok(ctx.make_error(e))
        }
    }
}

fn opt_int(v: Option<u64>) -> Value {
    v.map_or(Value::Nil, |i| Value::Int(i as i64))
}

fn pid_or_nil(ctx: &Ctx, p: Option<Pid>) -> Value {
    let Some(p) = p else { return Value::Nil };
    match ctx.proc.sys.as_ref().and_then(|s| s.rt.lookup(p)) {
        Some(proc) => pid_value(ctx, proc),
        None => Value::Nil,
    }
}

fn node_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<(&'a SnapVal, &'a SnapNode), Unwind> {
    let s = snap_of(ctx, r)?;
    match s.node() {
        Some(n) => Ok((s, n)),
        None => Err(ctx.type_err("not a SupervisionNode")),
    }
}

fn dict(pairs: Vec<(&str, Value)>) -> Value {
    dict_from_pairs(pairs.into_iter().map(|(k, v)| (Value::sym(k), v)))
}

fn node_sel(ctx: &mut Ctx, r: &Value, sel: &str) -> EvalResult {
    let (s, n) = node_of(ctx, r)?;
    let sup = n.supervision.as_ref();
    Ok(match sel {
        "pid" => pid_or_nil(ctx, n.pid),
        "registeredName" => n.registered_name.map_or(Value::Nil, Value::Symbol),
        "kind" => Value::sym(n.kind.as_str()),
        "behaviourClass" => match &n.class {
            Value::Class(c) => Value::Class(c.clone()),
            _ => Value::Nil,
        },
        "childCount" => Value::Int(n.child_count as i64),
        "state" => Value::sym(n.state.as_str()),
        "isSupervisor" => Value::bool(n.kind.is_supervisor()),
        "isBeamtalk" => Value::bool(n.kind.is_beamtalk()),
        "children" => {
            let snap = s.snap.clone();
            let path = s.path.clone();
            let k = n.children.len();
            Value::list((0..k).map(|i| {
                let mut p = path.clone();
                p.push(i);
                wrap(ctx, snap.clone(), Kind::Node, p)
            }))
        }
        "parent" => {
            if s.path.len() <= 1 {
                Value::Nil
            } else {
                let p = s.path[..s.path.len() - 1].to_vec();
                wrap(ctx, s.snap.clone(), Kind::Node, p)
            }
        }
        "parentPid" => {
            if s.path.len() <= 1 {
                Value::Nil
            } else {
                let p = s.path[..s.path.len() - 1].to_vec();
                let parent = SnapVal {
                    snap: s.snap.clone(),
                    kind: Kind::Node,
                    path: p,
                    class: s.class.clone(),
                };
                pid_or_nil(ctx, parent.node().and_then(|n| n.pid))
            }
        }
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
        "truncated" => Value::bool(n.truncated),
        "restartCount" => Value::Int(n.restart_count as i64),
        "startedAt" => opt_int(n.started_at),
        "exitedAt" => opt_int(n.exited_at),
        "uptime" => opt_int(n.uptime_ms),
        "generation" => opt_int(sup.map(|i| i.generation)),
        "restartsPerformed" => opt_int(sup.map(|i| i.restarts_performed)),
        "node" => Value::Nil,
        "status" => {
            let sys = sys_of(ctx)?;
            match n.pid.filter(|_| n.state == NodeState::Running) {
                Some(p) => match snapshot::status(&sys.rt, p) {
                    Some(st) => dict(vec![
                        ("module", Value::sym(&st.module)),
                        ("sysState", Value::sym("running")),
                        ("queueLength", Value::Int(st.queue_length as i64)),
                    ]),
                    None => Value::Nil,
                },
                None => Value::Nil,
            }
        }
        "asSupervisor" => {
            let sys = sys_of(ctx)?;
            match n.pid {
                Some(p) if n.kind == snapshot::NodeKind::BeamtalkSupervisor => {
                    match sys.supervision.by_pid(p) {
                        Some(h) => sup_value(ctx, h),
                        None => Value::Nil,
                    }
                }
                _ => Value::Nil,
            }
        }
        _ => Value::Nil,
    })
}

fn tree_dicts(ctx: &Ctx, s: &SnapVal) -> Value {
    let mut out = Vec::new();
    fn go(n: &SnapNode, parent: Option<Pid>, out: &mut Vec<Value>) {
        let cls = snapshot::class_name(&n.class).map_or(Value::Nil, |c| Value::sym(&c));
        out.push(dict(vec![
            ("pid", n.pid.map_or(Value::Nil, |p| Value::str(pid_str(p)))),
            (
                "registeredName",
                n.registered_name.map_or(Value::Nil, Value::Symbol),
            ),
            ("kind", Value::sym(n.kind.as_str())),
            ("class", cls),
            ("childCount", Value::Int(n.child_count as i64)),
            ("isSupervisor", Value::bool(n.kind.is_supervisor())),
            (
                "parentPid",
                parent.map_or(Value::Nil, |p| Value::str(pid_str(p))),
            ),
        ]));
        for c in &n.children {
            go(c, n.pid, out);
        }
    }
    for r in &s.snap.roots {
        go(r, None, &mut out);
    }
    let _ = ctx;
    Value::list(out)
}

fn tree_sel(ctx: &mut Ctx, r: &Value, sel: &str, args: &[Value]) -> EvalResult {
    let s = snap_of(ctx, r)?;
    let nodes = || flat_nodes(ctx, s);
    Ok(match sel {
        "nodes" | "flatNodes" => Value::list(nodes()),
        "size" => Value::Int(s.snap.flat().len() as i64),
        "isEmpty" => Value::bool(s.snap.roots.is_empty()),
        "root" => {
            if s.snap.roots.is_empty() {
                Value::Nil
            } else {
                wrap(ctx, s.snap.clone(), Kind::Node, vec![0])
            }
        }
        "roots" => Value::list(
            (0..s.snap.roots.len()).map(|i| wrap(ctx, s.snap.clone(), Kind::Node, vec![i])),
        ),
        "asJson" => Value::str(s.snap.to_json()),
        "node" => Value::Nil,
        "totals" => {
            let t = s.snap.totals();
            dict(vec![
                ("supervisors", Value::Int(t.supervisors as i64)),
                ("workers", Value::Int(t.workers as i64)),
                ("running", Value::Int(t.running as i64)),
                ("exited", Value::Int(t.exited as i64)),
                ("restarts", Value::Int(t.restarts as i64)),
                ("maxDepth", Value::Int(t.max_depth as i64)),
            ])
        }
        "asDictionaries" => tree_dicts(ctx, s),
        "nodesOfKind:" => {
            let k = match &args[0] {
                Value::Symbol(k) => k.as_str().to_string(),
                _ => String::new(),
            };
            let all = nodes();
            Value::list(all.into_iter().filter(|v| {
                downcast::<SnapVal>(v)
                    .and_then(SnapVal::node)
                    .is_some_and(|n| n.kind.as_str() == k)
            }))
        }
        "findClass:" => {
            let all = nodes();
            Value::list(all.into_iter().filter(|v| {
                downcast::<SnapVal>(v)
                    .and_then(SnapVal::node)
                    .is_some_and(|n| match (&n.class, &args[0]) {
                        (Value::Class(a), Value::Class(b)) => Arc::ptr_eq(a, b),
                        _ => false,
                    })
            }))
        }
        "do:" => {
            for n in nodes() {
                ctx.call_block(&args[0], &[n])?;
            }
            r.clone()
        }
        "select:" => {
            let mut out = Vec::new();
            for n in nodes() {
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
            for n in nodes() {
                out.push(ctx.call_block(&args[0], &[n])?);
            }
            Value::list(out)
        }
        "detect:" | "detect:ifNone:" => {
            for n in nodes() {
                if matches!(
                    ctx.call_block(&args[0], std::slice::from_ref(&n))?,
                    Value::True
                ) {
                    return Ok(n);
                }
            }
            if sel == "detect:" {
                return Err(ctx.err("not_found", "no node matches"));
            }
            ctx.call_block(&args[1], &[])?
        }
        _ => Value::Nil,
    })
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
        Ok(nav(
            ctx,
            default_snapshot(&sys.supervision, &opts(Some(200))),
        ))
    });
    p.add_class(pn, "system", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        if !sys.privileged.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ctx.err(
                "permission_denied",
                "ProcessNavigation system needs a privileged context (granted by the host)",
            ));
        }
        Ok(nav(
            ctx,
            system_snapshot(&sys.supervision, &opts(Some(200))),
        ))
    });
    p.add_class(pn, "from:", |ctx, _, a| from(ctx, &a[0], Some(200)));
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
    p.add(pn, "tree", |ctx, r, _| {
        let s = snap_of(ctx, r)?;
        Ok(wrap(ctx, s.snap.clone(), Kind::Tree, Vec::new()))
    });
    p.add(pn, "nodes", |ctx, r, _| {
        let s = snap_of(ctx, r)?;
        Ok(Value::list(
            (0..s.snap.roots.len()).map(|i| wrap(ctx, s.snap.clone(), Kind::Node, vec![i])),
        ))
    });
    p.add(pn, "node", |_, _, _| Ok(Value::Nil));
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
        "asSupervisor"
    );
    p.add("SupervisionNode", "childNodes", |ctx, r, _| {
        node_sel(ctx, r, "children")
    });
    p.add_class("Workspace", "processes", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        let s = default_snapshot(&sys.supervision, &opts(Some(200)));
        Ok(wrap(ctx, Arc::new(s), Kind::Tree, Vec::new()))
    });
    let _ = downcast::<ActorRef>;
}
