//! The JSON form of a snapshot (LANGUAGE.md 7.5), schema `bt.processes/1`.
//!
//! Dedicated serde structs, kept apart from the live and snapshot structs, so the schema
//! changes only on purpose (a golden file pins it). Keys come out in declaration order;
//! output is compact.

use serde::Serialize;

use crate::runtime::snapshot::{class_name, SnapNode, Snapshot, SupInfo, Totals};

/// The schema name; changes only on incompatible changes.
pub const SCHEMA: &str = "bt.processes/1";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonTree<'a> {
    schema: &'static str,
    node: &'a str,
    captured_at: u64,
    totals: JsonTotals,
    roots: Vec<JsonNode>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonTotals {
    supervisors: usize,
    workers: usize,
    running: usize,
    exited: usize,
    restarts: u64,
    max_depth: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonNode {
    pid: Option<String>,
    registered_name: Option<String>,
    kind: &'static str,
    class: Option<String>,
    state: &'static str,
    restart_count: u64,
    started_at: Option<u64>,
    exited_at: Option<u64>,
    uptime_ms: Option<u64>,
    child_count: usize,
    truncated: bool,
    supervision: Option<JsonSup>,
    children: Vec<JsonNode>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonSup {
    strategy: &'static str,
    max_restarts: u32,
    window: u64,
    auto_shutdown: &'static str,
    generation: u64,
    restarts_performed: u64,
}

impl From<Totals> for JsonTotals {
    fn from(t: Totals) -> JsonTotals {
        JsonTotals {
            supervisors: t.supervisors,
            workers: t.workers,
            running: t.running,
            exited: t.exited,
            restarts: t.restarts,
            max_depth: t.max_depth,
        }
    }
}

fn sup(s: &SupInfo) -> JsonSup {
    JsonSup {
        strategy: s.strategy.as_str(),
        max_restarts: s.max_restarts,
        window: s.restart_window,
        auto_shutdown: s.auto_shutdown.map_or("never", |a| a.as_str()),
        generation: s.generation,
        restarts_performed: s.restarts_performed,
    }
}

fn node(n: &SnapNode) -> JsonNode {
    JsonNode {
        pid: n.pid.map(|p| p.to_string()),
        registered_name: n.registered_name.map(|s| s.as_str().to_string()),
        kind: n.kind.as_str(),
        class: class_name(&n.class),
        state: n.state.as_str(),
        restart_count: n.restart_count,
        started_at: n.started_at,
        exited_at: n.exited_at,
        uptime_ms: n.uptime_ms,
        child_count: n.child_count,
        truncated: n.truncated,
        supervision: n.supervision.as_ref().map(sup),
        children: n.children.iter().map(node).collect(),
    }
}

/// `aTree asJson`.
pub fn to_json(s: &Snapshot) -> String {
    let tree = JsonTree {
        schema: SCHEMA,
        node: &s.node,
        captured_at: s.captured_at,
        totals: s.totals().into(),
        roots: s.roots.iter().map(node).collect(),
    };
    serde_json::to_string(&tree).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
}
