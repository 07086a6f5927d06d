//! Snapshots between nodes: the bytes a node answers when a peer asks
//! for its `ProcessNavigation default` tree, and the [`Snapshot`] the asking node rebuilds
//! from them.
//!
//! The form is a private JSON document (not the public schema of 7.5, which drops what
//! diffs need: child keys and ids, declared supervisors). Pids travel as process numbers;
//! the receiver renumbers them with its connection index for the answering node,
//! so a remote tree prints `<2.7.0>` on the node that asked. Processes of another node
//! have no [`ProcRef`](crate::runtime::process::ProcRef) here: nodes carry `proc: None`,
//! classes travel by name (the receiver maps a name to its own class when it has one, else
//! keeps the Symbol), restart events keep their text (as a String reason) but not their
//! pid. The form carries its own version ([`VERSION`]); a newer one is refused.

use serde::{Deserialize, Serialize};

use crate::runtime::snapshot::{NodeKind, NodeState, SnapNode, Snapshot, SupInfo};
use crate::runtime::supervisor::{AutoShutdown, ChildKey, RestartEvent, RestartKind, Strategy};
use crate::runtime::types::Pid;
use crate::value::{Sym, Value};

/// Version of the transfer form.
pub const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Doc {
    v: u32,
    captured_at: u64,
    node: String,
    /// Root count, then every node in pre-order (flat: no nesting limit when parsing).
    roots: usize,
    nodes: Vec<TNode>,
}

#[derive(Serialize, Deserialize)]
struct TNode {
    /// (process number, service)
    pid: Option<(u64, bool)>,
    name: Option<String>,
    kind: String,
    class: Option<String>,
    state: String,
    restarts: u64,
    started: Option<u64>,
    exited: Option<u64>,
    uptime: Option<u64>,
    count: usize,
    truncated: bool,
    sup: Option<TSup>,
    declared: bool,
    /// (dynamic, number)
    key: Option<(bool, u64)>,
    id: Option<String>,
    history: Vec<TEvent>,
    /// How many of the following nodes (in pre-order) are its children.
    children: usize,
}

#[derive(Serialize, Deserialize)]
struct TSup {
    strategy: String,
    max_restarts: u32,
    window: u64,
    auto_shutdown: Option<String>,
    generation: u64,
    performed: u64,
}

#[derive(Serialize, Deserialize)]
struct TEvent {
    at: u64,
    reason: String,
    kind: String,
    generation: u64,
}

/// The transfer form of `s`.
pub fn encode(s: &Snapshot) -> Vec<u8> {
    let doc = Doc {
        v: VERSION,
        captured_at: s.captured_at,
        node: s.node.clone(),
        roots: s.roots.len(),
        nodes: {
            let mut v = Vec::new();
            for r in &s.roots {
                r.walk(1, &mut |n, _| v.push(node_out(n)));
            }
            v
        },
    };
    serde_json::to_vec(&doc).unwrap_or_default()
}

fn node_out(n: &SnapNode) -> TNode {
    TNode {
        pid: n.pid.map(|p| (p.number, p.service)),
        name: n.registered_name.map(|s| s.as_str().to_string()),
        kind: n.kind.as_str().to_string(),
        class: n.class.class_object_name().map(|s| s.as_str().to_string()),
        state: n.state.as_str().to_string(),
        restarts: n.restart_count,
        started: n.started_at,
        exited: n.exited_at,
        uptime: n.uptime_ms,
        count: n.child_count,
        truncated: n.truncated,
        sup: n.supervision.as_ref().map(|s| TSup {
            strategy: s.strategy.as_str().to_string(),
            max_restarts: s.max_restarts,
            window: s.restart_window,
            auto_shutdown: s.auto_shutdown.map(|a| a.as_str().to_string()),
            generation: s.generation,
            performed: s.restarts_performed,
        }),
        declared: n.declared_supervisor,
        key: n.key.map(|k| match k {
            ChildKey::Static(i) => (false, i as u64),
            ChildKey::Dynamic(i) => (true, i),
        }),
        id: n.id.map(|s| s.as_str().to_string()),
        history: n
            .history
            .iter()
            .map(|e| TEvent {
                at: e.at_ms,
                reason: e.reason_text.to_string(),
                kind: e.kind.as_str().to_string(),
                generation: e.generation,
            })
            .collect(),
        children: n.children.len(),
    }
}

/// Rebuilds a snapshot sent by the node at connection index `index`: its pids carry that
/// index. Errors name what was wrong (a malformed or newer document).
pub fn decode(bytes: &[u8], index: u32) -> Result<Snapshot, String> {
    let doc: Doc = serde_json::from_slice(bytes).map_err(|e| format!("malformed snapshot: {e}"))?;
    if doc.v > VERSION {
        return Err(format!(
            "snapshot form {} is newer than this node's ({VERSION})",
            doc.v
        ));
    }
    let mut it = doc.nodes.into_iter();
    let mut roots = Vec::with_capacity(doc.roots.min(1 << 16));
    for _ in 0..doc.roots {
        roots.push(node_in(&mut it, index, 1)?);
    }
    if it.next().is_some() {
        return Err("malformed snapshot: nodes left over".into());
    }
    Ok(Snapshot {
        roots,
        captured_at: doc.captured_at,
        node: doc.node,
    })
}

fn kind_of(s: &str) -> Result<NodeKind, String> {
    Ok(match s {
        "beamtalkSupervisor" => NodeKind::BeamtalkSupervisor,
        "beamtalkActor" => NodeKind::BeamtalkActor,
        "otpSupervisor" => NodeKind::OtpSupervisor,
        "otpProcess" => NodeKind::OtpProcess,
        "restarting" => NodeKind::Restarting,
        other => return Err(format!("unknown node kind {other}")),
    })
}

fn state_of(s: &str) -> Result<NodeState, String> {
    Ok(match s {
        "running" => NodeState::Running,
        "restarting" => NodeState::Restarting,
        "exited" => NodeState::Exited,
        other => return Err(format!("unknown node state {other}")),
    })
}

fn restart_kind(s: &str) -> RestartKind {
    match s {
        "exit" => RestartKind::Exit,
        "group" => RestartKind::Group,
        "parent" => RestartKind::Parent,
        _ => RestartKind::Ended,
    }
}

fn node_in(
    it: &mut impl Iterator<Item = TNode>,
    index: u32,
    depth: usize,
) -> Result<SnapNode, String> {
    if depth > super::MAX_DEPTH + 1 {
        return Err("snapshot deeper than the depth guard".into());
    }
    let t = it.next().ok_or("malformed snapshot: missing nodes")?;
    let class = t.class.map_or(Value::Nil, |c| Value::Symbol(Sym::new(&c)));
    let mut n = SnapNode::new(None, kind_of(&t.kind)?, class, state_of(&t.state)?);
    n.pid = t.pid.map(|(number, service)| Pid {
        node: index,
        number,
        service,
    });
    n.registered_name = t.name.as_deref().map(Sym::new);
    n.restart_count = t.restarts;
    n.started_at = t.started;
    n.exited_at = t.exited;
    n.uptime_ms = t.uptime;
    n.child_count = t.count;
    n.truncated = t.truncated;
    n.supervision = match t.sup {
        Some(s) => Some(Box::new(SupInfo {
            strategy: Strategy::from_symbol(&s.strategy)
                .ok_or_else(|| format!("unknown strategy {}", s.strategy))?,
            max_restarts: s.max_restarts,
            restart_window: s.window,
            auto_shutdown: s
                .auto_shutdown
                .as_deref()
                .and_then(AutoShutdown::from_symbol),
            generation: s.generation,
            restarts_performed: s.performed,
        })),
        None => None,
    };
    n.declared_supervisor = t.declared;
    n.key = t.key.map(|(dynamic, i)| match dynamic {
        true => ChildKey::Dynamic(i),
        false => ChildKey::Static(i as usize),
    });
    n.id = t.id.as_deref().map(Sym::new);
    n.history = t
        .history
        .into_iter()
        .map(|e| RestartEvent {
            at_ms: e.at,
            reason: Value::str(e.reason.as_str()),
            reason_text: e.reason.into(),
            kind: restart_kind(&e.kind),
            generation: e.generation,
            proc: None,
        })
        .collect();
    let mut children = Vec::with_capacity(t.children.min(1 << 16));
    for _ in 0..t.children {
        children.push(node_in(it, index, depth + 1)?);
    }
    n.children = children;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        let mut sup = SnapNode::new(
            None,
            NodeKind::BeamtalkSupervisor,
            Value::Symbol(Sym::new("App")),
            NodeState::Running,
        );
        sup.pid = Some(Pid {
            node: 0,
            number: 5,
            service: false,
        });
        sup.registered_name = Some(Sym::new("app"));
        sup.supervision = Some(Box::new(SupInfo {
            strategy: Strategy::OneForAll,
            max_restarts: 3,
            restart_window: 5,
            auto_shutdown: Some(AutoShutdown::Never),
            generation: 2,
            restarts_performed: 1,
        }));
        let mut w = SnapNode::new(
            None,
            NodeKind::Restarting,
            Value::Symbol(Sym::new("Worker")),
            NodeState::Restarting,
        );
        w.key = Some(ChildKey::Dynamic(4));
        w.id = Some(Sym::new("w"));
        w.restart_count = 2;
        w.history = vec![RestartEvent {
            at_ms: 10,
            reason: Value::str("killed"),
            reason_text: "killed".into(),
            kind: RestartKind::Exit,
            generation: 1,
            proc: None,
        }]
        .into();
        sup.children.push(w);
        sup.child_count = 0;
        Snapshot {
            roots: vec![sup],
            captured_at: 99,
            node: "a@localhost".into(),
        }
    }

    #[test]
    fn round_trip_renumbers_pids_with_the_connection_index() {
        let s = sample();
        let back = decode(&encode(&s), 3).unwrap();
        assert_eq!(back.node, "a@localhost");
        assert_eq!(back.captured_at, 99);
        let r = &back.roots[0];
        assert_eq!(r.pid.map(|p| p.to_string()).as_deref(), Some("<3.5.0>"));
        assert_eq!(r.supervision.as_deref(), s.roots[0].supervision.as_deref());
        assert_eq!(r.children[0].key, Some(ChildKey::Dynamic(4)));
        assert_eq!(r.children[0].history.len(), 1);
        // The public JSON is the same but for the renumbered pid.
        let a = s.to_json().replace("<0.5.0>", "<3.5.0>");
        assert_eq!(back.to_json(), a);
    }

    #[test]
    fn malformed_and_newer_documents_are_refused() {
        assert!(decode(b"{", 1).is_err());
        let newer = String::from_utf8(encode(&sample()))
            .unwrap()
            .replacen("\"v\":1", "\"v\":9", 1);
        assert!(decode(newer.as_bytes(), 1).unwrap_err().contains("newer"));
        let bad_kind = String::from_utf8(encode(&sample()))
            .unwrap()
            .replace("beamtalkSupervisor", "nope");
        assert!(decode(bad_kind.as_bytes(), 1).is_err());
    }
}
