//! The observer's bt surface: `aNode restartHistory`, `treeB diffFrom: treeA` and the
//! `SnapshotDiff` it answers (declared in stdlib/Observer.bt).
//!
//! The data comes from the runtime: restart history is kept per child by the supervisor
//! (`runtime::supervisor::history`), the diff is computed by `runtime::snapshot::diff`. This
//! file only turns them into bt values: history events are Dictionaries, diff entries are
//! the SupervisionNodes of the two snapshots.

use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, PidVal};
use crate::interp::actor::prims::supervision::snap::{Repr, Shared, SnapVal};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::collections::dict_from_pairs;
use crate::runtime::snapshot::diff::{self, Place, SnapDiff};
use crate::runtime::snapshot::Snapshot;
use crate::runtime::supervisor::RestartEvent;
use crate::value::{ClassRef, NativeObj, Sym, Value};

fn dict(pairs: Vec<(&str, Value)>) -> Value {
    dict_from_pairs(pairs.into_iter().map(|(k, v)| (Value::sym(k), v)))
}

fn snap_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a SnapVal, Unwind> {
    downcast::<SnapVal>(r).ok_or_else(|| {
        let n = ctx.class_name_of(r);
        ctx.type_err(format!("{n} is not a snapshot value"))
    })
}

/// One history event as `#{#at => ms, #reason => r, #kind => #exit, #generation => g,
/// #pid => aPid | nil}`.
fn event(e: &RestartEvent, pid_class: &ClassRef) -> Value {
    dict(vec![
        ("at", Value::Int(e.at_ms as i64)),
        ("reason", e.reason.clone()),
        ("kind", Value::sym(e.kind.as_str())),
        ("generation", Value::Int(e.generation as i64)),
        (
            "pid",
            e.proc.as_ref().map_or(Value::Nil, |p| {
                native(PidVal {
                    proc: p.clone(),
                    class: pid_class.clone(),
                })
            }),
        ),
    ])
}

/// Most restart-history events a supervisor class may ask to keep per child.
pub const MAX_HISTORY: i64 = 1000;

/// A supervisor class's `restartHistoryLimit` (class side, default 20; stdlib/Observer.bt):
/// events kept per child, 0..=1000.
pub fn history_limit(ctx: &mut Ctx, class: &Value) -> Result<usize, Unwind> {
    match ctx.send(class, Sym::new("restartHistoryLimit"), &[])? {
        Value::Int(n) if (0..=MAX_HISTORY).contains(&n) => Ok(n as usize),
        other => {
            let n = ctx.print_string(&other)?;
            Err(ctx.type_err(format!(
                "restartHistoryLimit must answer an Integer from 0 to {MAX_HISTORY}, not {n}"
            )))
        }
    }
}

fn restart_history(ctx: &mut Ctx, r: &Value) -> EvalResult {
    let s = snap_of(ctx, r)?;
    let pid_class = &s.sh.classes.pid;
    Ok(Value::list(
        s.data()
            .map(|n| {
                n.history
                    .iter()
                    .map(|e| event(e, pid_class))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
    ))
}

/// The snapshot behind a tree or navigation: its own when it was taken by a snapshot; a
/// new one made of the node records when it was built by hand.
fn snapshot_of(s: &SnapVal) -> Arc<Shared> {
    match &s.repr {
        Repr::Tree { flat: None } | Repr::Nav { nodes: None } => s.sh.clone(),
        _ => {
            let nodes = s.list();
            let roots = nodes
                .iter()
                .filter_map(downcast::<SnapVal>)
                .filter(|n| n.is_node() && n.parent().is_none())
                .map(SnapVal::to_record)
                .collect();
            Arc::new(Shared {
                snap: Snapshot {
                    roots,
                    captured_at: s.sh.snap.captured_at,
                    node: s.sh.snap.node.clone(),
                },
                node: s.sh.node.clone(),
                classes: s.sh.classes.clone(),
            })
        }
    }
}

/// A `SnapshotDiff`: the diff plus the two snapshots its places point into.
#[derive(Clone)]
pub struct DiffVal {
    pub from: Arc<Shared>,
    pub to: Arc<Shared>,
    pub diff: Arc<SnapDiff>,
    pub class: ClassRef,
}

impl DiffVal {
    fn node(sh: &Arc<Shared>, p: &Place) -> Value {
        SnapVal {
            sh: sh.clone(),
            repr: Repr::Node {
                path: p.path.clone(),
                fields: None,
            },
        }
        .value()
    }
    pub fn to_json(&self) -> String {
        diff::to_json(&self.diff, &self.from.snap, &self.to.snap)
    }
}

impl NativeObj for DiffVal {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let d = &self.diff;
        format!(
            "#SnapshotDiff<added: {}, removed: {}, restarted: {} ({} restarts), stateChanged: {}>",
            d.added.len(),
            d.removed.len(),
            d.restarted.len(),
            d.restarts(),
            d.state_changed.len()
        )
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<DiffVal>()
            .is_some_and(|o| o.to_json() == self.to_json())
    }
    fn hash_code(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.to_json().hash(&mut h);
        h.finish()
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![3, self.hash_code()])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn diff_from(ctx: &mut Ctx, r: &Value, other: &Value) -> EvalResult {
    let b = snap_of(ctx, r)?;
    let Some(a) = downcast::<SnapVal>(other).filter(|a| !a.is_node()) else {
        let n = ctx.class_name_of(other);
        return Err(ctx.type_err(format!(
            "diffFrom: expects a SupervisionTree or ProcessNavigation, not {n}"
        )));
    };
    let (from, to) = (snapshot_of(a), snapshot_of(b));
    let d = diff::diff(&from.snap, &to.snap);
    let class = ctx
        .prog
        .class_named("SnapshotDiff")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    Ok(native(DiffVal {
        from,
        to,
        diff: Arc::new(d),
        class,
    }))
}

fn diff_of<'a>(ctx: &Ctx, r: &'a Value) -> Result<&'a DiffVal, Unwind> {
    downcast::<DiffVal>(r).ok_or_else(|| {
        let n = ctx.class_name_of(r);
        ctx.type_err(format!("{n} is not a SnapshotDiff"))
    })
}

fn diff_sel(ctx: &mut Ctx, r: &Value, sel: &str) -> EvalResult {
    let v = diff_of(ctx, r)?;
    let d = &v.diff;
    Ok(match sel {
        "added" => Value::list(d.added.iter().map(|p| DiffVal::node(&v.to, p))),
        "removed" => Value::list(d.removed.iter().map(|p| DiffVal::node(&v.from, p))),
        "restarted" => Value::list(d.restarted.iter().map(|x| {
            dict(vec![
                ("node", DiffVal::node(&v.to, &x.place)),
                ("count", Value::Int(x.count as i64)),
            ])
        })),
        "stateChanged" => Value::list(d.state_changed.iter().map(|x| {
            dict(vec![
                ("node", DiffVal::node(&v.to, &x.place)),
                ("from", Value::sym(x.from.as_str())),
                ("to", Value::sym(x.to.as_str())),
            ])
        })),
        "restarts" => Value::Int(d.restarts() as i64),
        "isEmpty" => Value::bool(d.is_empty()),
        "asJson" => Value::str(v.to_json()),
        "counts" => dict(vec![
            ("added", Value::Int(d.added.len() as i64)),
            ("removed", Value::Int(d.removed.len() as i64)),
            ("restarted", Value::Int(d.restarted.len() as i64)),
            ("restarts", Value::Int(d.restarts() as i64)),
            ("stateChanged", Value::Int(d.state_changed.len() as i64)),
        ]),
        _ => Value::Nil,
    })
}

macro_rules! diff_prims {
    ($p:expr, $($sel:literal),*) => {
        $( $p.add("SnapshotDiff", $sel, |ctx, r, _| diff_sel(ctx, r, $sel)); )*
    };
}

pub fn register(p: &mut Prims) {
    p.add("SupervisionNode", "restartHistory", |ctx, r, _| {
        restart_history(ctx, r)
    });
    p.add("SupervisionTree", "diffFrom:", |ctx, r, a| {
        diff_from(ctx, r, &a[0])
    });
    p.add("ProcessNavigation", "diffFrom:", |ctx, r, a| {
        diff_from(ctx, r, &a[0])
    });
    diff_prims!(
        p,
        "added",
        "removed",
        "restarted",
        "stateChanged",
        "restarts",
        "isEmpty",
        "asJson",
        "counts"
    );
}
