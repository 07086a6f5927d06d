//! What changed between two snapshots (`treeB diffFrom: treeA`): nodes added, removed,
//! restarted (with how many restarts) and nodes whose state changed.
//!
//! Nodes are matched by an identity that survives restarts, not by pid: a supervised child is
//! its supervisor's identity plus its child id (a dynamic child adds its spawn number), a
//! root is its registered name, else its pid. So a worker restarted between the two
//! snapshots is one `restarted` entry, not a removal plus an addition. The JSON form has
//! schema `bt.processes.diff/1`; the live page (`crate::observe`) highlights with it.

use std::collections::HashMap;
use std::fmt::Write;

use crate::runtime::snapshot::json::string;
use crate::runtime::snapshot::{class_name, NodeKind, NodeState, SnapNode, Snapshot};
use crate::runtime::supervisor::ChildKey;

/// The schema name of a diff's JSON form.
pub const DIFF_SCHEMA: &str = "bt.processes.diff/1";

/// Where a node sits in one of the two snapshots: its identity and its index path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The restart-surviving identity, e.g. `App/Pool/Task#3` or `<0.9.0>`.
    pub ident: String,
    /// Child indexes from the snapshot's roots (`[root, child, …]`).
    pub path: Vec<usize>,
}

/// A node present in both snapshots whose process was restarted in between.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restarted {
    /// In the newer snapshot.
    pub place: Place,
    /// Restarts between the two snapshots (at least 1).
    pub count: u64,
}

/// A node present in both snapshots whose state differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateChange {
    /// In the newer snapshot.
    pub place: Place,
    pub from: NodeState,
    pub to: NodeState,
}

/// The difference from snapshot `a` (older) to `b` (newer). Each list is in `b`'s pre-order
/// (`removed`: `a`'s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapDiff {
    /// Places in `b`.
    pub added: Vec<Place>,
    /// Places in `a`.
    pub removed: Vec<Place>,
    pub restarted: Vec<Restarted>,
    pub state_changed: Vec<StateChange>,
    pub from_captured: u64,
    pub to_captured: u64,
}

impl SnapDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.restarted.is_empty()
            && self.state_changed.is_empty()
    }
    /// Restarts over all restarted nodes.
    pub fn restarts(&self) -> u64 {
        self.restarted.iter().map(|r| r.count).sum()
    }
}

/// Looks a node up by its index path.
pub fn node_at<'a>(s: &'a Snapshot, path: &[usize]) -> Option<&'a SnapNode> {
    let (first, rest) = path.split_first()?;
    let mut n = s.roots.get(*first)?;
    for i in rest {
        n = n.children.get(*i)?;
    }
    Some(n)
}

/// The identity of a root node.
fn root_ident(n: &SnapNode) -> String {
    match (n.registered_name, n.pid) {
        (Some(name), _) => name.as_str().to_string(),
        (None, Some(p)) => p.to_string(),
        (None, None) => n.kind.as_str().to_string(),
    }
}

/// The identity of a child under `parent`.
fn child_ident(parent: &str, n: &SnapNode, index: usize) -> String {
    let id = n.id.map_or_else(
        || n.pid.map_or_else(|| format!("@{index}"), |p| p.to_string()),
        |s| s.as_str().to_string(),
    );
    match n.key {
        Some(ChildKey::Dynamic(k)) => format!("{parent}/{id}#{k}"),
        _ => format!("{parent}/{id}"),
    }
}

/// Every node of `s` with its identity and path, in pre-order. A second node with the same
/// identity (two unnamed roots cannot collide: they have pids) gets `~2`, `~3` … appended.
pub fn places(s: &Snapshot) -> Vec<(Place, &SnapNode)> {
    fn go<'a>(
        n: &'a SnapNode,
        ident: String,
        path: &mut Vec<usize>,
        seen: &mut HashMap<String, usize>,
        out: &mut Vec<(Place, &'a SnapNode)>,
    ) {
        let count = seen.entry(ident.clone()).or_insert(0);
        *count += 1;
        let ident = if *count > 1 {
            format!("{ident}~{count}")
        } else {
            ident
        };
        out.push((
            Place {
                ident: ident.clone(),
                path: path.clone(),
            },
            n,
        ));
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            go(c, child_ident(&ident, c, i), path, seen, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    let mut seen = HashMap::new();
    for (i, r) in s.roots.iter().enumerate() {
        go(r, root_ident(r), &mut vec![i], &mut seen, &mut out);
    }
    out
}

/// The diff from `a` (older) to `b` (newer).
pub fn diff(a: &Snapshot, b: &Snapshot) -> SnapDiff {
    let pa = places(a);
    let pb = places(b);
    let index_a: HashMap<&str, usize> = pa
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p.ident.as_str(), i))
        .collect();
    let index_b: HashMap<&str, ()> = pb.iter().map(|(p, _)| (p.ident.as_str(), ())).collect();
    let mut d = SnapDiff {
        from_captured: a.captured_at,
        to_captured: b.captured_at,
        ..SnapDiff::default()
    };
    for (place, nb) in &pb {
        let Some(&ia) = index_a.get(place.ident.as_str()) else {
            d.added.push(place.clone());
            continue;
        };
        let na = pa[ia].1;
        let count = nb.restart_count.saturating_sub(na.restart_count);
        let new_process = matches!((na.pid, nb.pid), (Some(x), Some(y)) if x != y);
        if count > 0 || new_process {
            d.restarted.push(Restarted {
                place: place.clone(),
                count: count.max(1),
            });
        }
        if na.state != nb.state {
            d.state_changed.push(StateChange {
                place: place.clone(),
                from: na.state,
                to: nb.state,
            });
        }
    }
    for (place, _) in &pa {
        if !index_b.contains_key(place.ident.as_str()) {
            d.removed.push(place.clone());
        }
    }
    d
}

fn entry(out: &mut String, s: &Snapshot, p: &Place) {
    out.push_str("{\"path\":");
    string(out, &p.ident);
    let n = node_at(s, &p.path);
    out.push_str(",\"pid\":");
    match n.and_then(|n| n.pid) {
        Some(pid) => {
            let _ = write!(out, "\"{pid}\"");
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"class\":");
    match n.and_then(|n| class_name(&n.class)) {
        Some(c) => string(out, &c),
        None => out.push_str("null"),
    }
    let _ = write!(
        out,
        ",\"kind\":\"{}\",\"state\":\"{}\"",
        n.map_or(NodeKind::OtpProcess, |n| n.kind).as_str(),
        n.map_or(NodeState::Running, |n| n.state).as_str()
    );
}

fn entries(out: &mut String, s: &Snapshot, ps: &[Place]) {
    out.push('[');
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        entry(out, s, p);
        out.push('}');
    }
    out.push(']');
}

/// The JSON form of a diff between `a` and `b` (compact, keys in this order):
/// `{"schema":"bt.processes.diff/1","node":…,"from":ms,"to":ms,"counts":{"added":n,"removed":n,
/// "restarted":n,"restarts":n,"stateChanged":n},"added":[ENTRY],"removed":[ENTRY],
/// "restarted":[ENTRY+"count"],"stateChanged":[ENTRY+"from","to"]}` where ENTRY is
/// `{"path":…,"pid":…|null,"class":…|null,"kind":…,"state":…}`.
pub fn to_json(d: &SnapDiff, a: &Snapshot, b: &Snapshot) -> String {
    let mut out = String::with_capacity(
        256 + 120 * (d.added.len() + d.removed.len() + d.restarted.len() + d.state_changed.len()),
    );
    out.push_str("{\"schema\":");
    string(&mut out, DIFF_SCHEMA);
    out.push_str(",\"node\":");
    string(&mut out, &b.node);
    let _ = write!(
        out,
        ",\"from\":{},\"to\":{},\"counts\":{{\"added\":{},\"removed\":{},\"restarted\":{},\"restarts\":{},\"stateChanged\":{}}}",
        d.from_captured,
        d.to_captured,
        d.added.len(),
        d.removed.len(),
        d.restarted.len(),
        d.restarts(),
        d.state_changed.len()
    );
    out.push_str(",\"added\":");
    entries(&mut out, b, &d.added);
    out.push_str(",\"removed\":");
    entries(&mut out, a, &d.removed);
    out.push_str(",\"restarted\":[");
    for (i, r) in d.restarted.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        entry(&mut out, b, &r.place);
        let _ = write!(out, ",\"count\":{}}}", r.count);
    }
    out.push_str("],\"stateChanged\":[");
    for (i, c) in d.state_changed.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        entry(&mut out, b, &c.place);
        let _ = write!(
            out,
            ",\"from\":\"{}\",\"to\":\"{}\"}}",
            c.from.as_str(),
            c.to.as_str()
        );
    }
    out.push_str("]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::types::Pid;
    use crate::value::{Sym, Value};

    fn pid(n: u64) -> Pid {
        Pid {
            node: 0,
            number: n,
            service: false,
        }
    }

    fn node(id: &str, n: u64, restarts: u64, state: NodeState) -> SnapNode {
        let mut s = SnapNode::new(None, NodeKind::BeamtalkActor, Value::sym(id), state);
        s.pid = (state != NodeState::Restarting).then(|| pid(n));
        s.id = Some(Sym::new(id));
        s.key = Some(ChildKey::Static(0));
        s.restart_count = restarts;
        s
    }

    fn tree(children: Vec<SnapNode>, at: u64) -> Snapshot {
        let mut root = SnapNode::new(
            None,
            NodeKind::BeamtalkSupervisor,
            Value::sym("App"),
            NodeState::Running,
        );
        root.pid = Some(pid(2));
        root.registered_name = Some(Sym::new("App"));
        root.children = children;
        Snapshot {
            roots: vec![root],
            captured_at: at,
            node: "nonode@nohost".into(),
        }
    }

    #[test]
    fn restarts_are_matched_by_identity_not_pid() {
        let a = tree(
            vec![
                node("Logger", 3, 0, NodeState::Running),
                node("Cache", 4, 0, NodeState::Running),
                node("Old", 5, 0, NodeState::Running),
            ],
            10,
        );
        let b = tree(
            vec![
                node("Logger", 7, 2, NodeState::Running),
                node("Cache", 4, 0, NodeState::Exited),
                node("New", 8, 0, NodeState::Running),
            ],
            20,
        );
        let d = diff(&a, &b);
        assert_eq!(d.restarted.len(), 1);
        assert_eq!(d.restarted[0].place.ident, "App/Logger");
        assert_eq!(d.restarted[0].count, 2);
        assert_eq!(d.state_changed.len(), 1);
        assert_eq!(d.state_changed[0].from, NodeState::Running);
        assert_eq!(d.state_changed[0].to, NodeState::Exited);
        assert_eq!(d.added[0].ident, "App/New");
        assert_eq!(d.removed[0].ident, "App/Old");
        assert!(diff(&b, &b).is_empty());
        let j = to_json(&d, &a, &b);
        assert!(j.starts_with("{\"schema\":\"bt.processes.diff/1\""), "{j}");
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["counts"]["restarts"], 2);
        assert_eq!(v["restarted"][0]["count"], 2);
        assert_eq!(v["stateChanged"][0]["to"], "exited");
    }
}
