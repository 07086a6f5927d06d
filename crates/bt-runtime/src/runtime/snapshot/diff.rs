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

/// Appends the identity segment of a node: a root's registered name, else its pid, else its
/// kind; a child's id (else its pid, else `@index`), with `#N` for a dynamic child.
fn segment(n: &SnapNode, index: usize, root: bool, out: &mut String) {
    use std::fmt::Write as _;
    if root {
        match (n.registered_name, n.pid) {
            (Some(name), _) => out.push_str(name.as_str()),
            (None, Some(p)) => {
                let _ = write!(out, "{p}");
            }
            (None, None) => out.push_str(n.kind.as_str()),
        }
        return;
    }
    match (n.id, n.pid) {
        (Some(id), _) => out.push_str(id.as_str()),
        (None, Some(p)) => {
            let _ = write!(out, "{p}");
        }
        (None, None) => {
            let _ = write!(out, "@{index}");
        }
    }
    if let Some(ChildKey::Dynamic(k)) = n.key {
        let _ = write!(out, "#{k}");
    }
}

/// FNV-1a over `bytes`, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

const NO_PARENT: u32 = u32::MAX;

/// One node of an [`Index`].
struct Entry<'a> {
    node: &'a SnapNode,
    parent: u32,
    /// Position among its parent's children (or among the roots).
    index: u32,
    /// 1 for the first node with its identity, 2, 3 … for later ones (`~2`).
    dup: u32,
    /// Hash of the identity string (parent's hash, `/`, segment, dup).
    hash: u64,
}

/// Every node of a snapshot in pre-order with a hash of its identity: built in one pass
/// without a String per node; identities and index paths are spelled out only on demand.
pub struct Index<'a> {
    entries: Vec<Entry<'a>>,
}

impl<'a> Index<'a> {
    pub fn new(s: &'a Snapshot) -> Index<'a> {
        let mut entries = Vec::new();
        let mut seen: HashMap<u64, u32> = HashMap::new();
        let mut seg = String::new();
        // (node, parent entry, index among siblings)
        let mut stack: Vec<(&'a SnapNode, u32, u32)> = s
            .roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, r)| (r, NO_PARENT, i as u32))
            .collect();
        while let Some((n, parent, index)) = stack.pop() {
            seg.clear();
            segment(n, index as usize, parent == NO_PARENT, &mut seg);
            let base = match parent {
                NO_PARENT => fnv(0xcbf2_9ce4_8422_2325, seg.as_bytes()),
                p => fnv(fnv(entries_hash(&entries, p), b"/"), seg.as_bytes()),
            };
            let dup = {
                let c = seen.entry(base).or_insert(0);
                *c += 1;
                *c
            };
            let hash = if dup > 1 {
                fnv(base, format!("~{dup}").as_bytes())
            } else {
                base
            };
            let me = entries.len() as u32;
            entries.push(Entry {
                node: n,
                parent,
                index,
                dup,
                hash,
            });
            for (i, c) in n.children.iter().enumerate().rev() {
                stack.push((c, me, i as u32));
            }
        }
        Index { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends the identity of entry `i` (e.g. `App/Pool/Task#3`).
    pub fn write_ident(&self, i: usize, out: &mut String) {
        let e = &self.entries[i];
        if e.parent != NO_PARENT {
            self.write_ident(e.parent as usize, out);
            out.push('/');
        }
        segment(e.node, e.index as usize, e.parent == NO_PARENT, out);
        if e.dup > 1 {
            out.push('~');
            out.push_str(&e.dup.to_string());
        }
    }

    pub fn ident(&self, i: usize) -> String {
        let mut s = String::new();
        self.write_ident(i, &mut s);
        s
    }

    /// The child-index path of entry `i` from the snapshot's roots.
    pub fn path(&self, i: usize) -> Vec<usize> {
        let mut p = Vec::new();
        let mut j = i as u32;
        while j != NO_PARENT {
            let e = &self.entries[j as usize];
            p.push(e.index as usize);
            j = e.parent;
        }
        p.reverse();
        p
    }

    pub fn place(&self, i: usize) -> Place {
        Place {
            ident: self.ident(i),
            path: self.path(i),
        }
    }
}

fn entries_hash(entries: &[Entry<'_>], i: u32) -> u64 {
    entries[i as usize].hash
}

/// Every node of `s` with its identity and path, in pre-order.
pub fn places(s: &Snapshot) -> Vec<(Place, &SnapNode)> {
    let ix = Index::new(s);
    (0..ix.len())
        .map(|i| (ix.place(i), ix.entries[i].node))
        .collect()
}

/// The diff from `a` (older) to `b` (newer).
pub fn diff(a: &Snapshot, b: &Snapshot) -> SnapDiff {
    diff_indexed(&Index::new(a), &Index::new(b), a.captured_at, b.captured_at)
}

/// The diff between two indexed snapshots (`from_at`/`to_at`: their capture times).
pub fn diff_indexed(a: &Index<'_>, b: &Index<'_>, from_at: u64, to_at: u64) -> SnapDiff {
    let in_a: HashMap<u64, u32> = a
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.hash, i as u32))
        .collect();
    let mut d = SnapDiff {
        from_captured: from_at,
        to_captured: to_at,
        ..SnapDiff::default()
    };
    let mut matched = vec![false; a.entries.len()];
    for (i, eb) in b.entries.iter().enumerate() {
        let Some(&ia) = in_a.get(&eb.hash) else {
            d.added.push(b.place(i));
            continue;
        };
        matched[ia as usize] = true;
        let (na, nb) = (a.entries[ia as usize].node, eb.node);
        let count = nb.restart_count.saturating_sub(na.restart_count);
        let new_process = matches!((na.pid, nb.pid), (Some(x), Some(y)) if x != y);
        if count > 0 || new_process {
            d.restarted.push(Restarted {
                place: b.place(i),
                count: count.max(1),
            });
        }
        if na.state != nb.state {
            d.state_changed.push(StateChange {
                place: b.place(i),
                from: na.state,
                to: nb.state,
            });
        }
    }
    for (i, m) in matched.iter().enumerate() {
        if !m {
            d.removed.push(a.place(i));
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
