//! The JSON form of a snapshot, schema `bt.processes/1`.
//!
//! Written directly into one String (no intermediate tree, no per-node Strings): a
//! 100,000-node snapshot serialises in a few tens of ms. Keys come out in the order of 7.5;
//! output is compact. The golden file `tests/golden/eval/supervision/processes.json` pins
//! the schema, so it changes only on purpose. `restartHistory` (each node's last handled
//! exits, oldest first) was added to schema 1 as 7.5 allows (new keys may be added).

use std::fmt::Write;

use crate::runtime::snapshot::{SnapNode, Snapshot, SupInfo, Totals};
use crate::runtime::supervisor::RestartEvent;

/// The schema name; changes only on incompatible changes.
pub const SCHEMA: &str = "bt.processes/1";

impl Snapshot {
    /// The JSON form of 7.5 ([`to_json`]).
    pub fn to_json(&self) -> String {
        to_json(self)
    }
}

/// `aTree asJson`.
pub fn to_json(s: &Snapshot) -> String {
    let t = s.totals();
    // About 300 bytes a worker node: one allocation, no regrowth copies of a big String.
    let mut out = String::with_capacity(256 + 320 * (t.supervisors + t.workers));
    out.push_str("{\"schema\":");
    string(&mut out, SCHEMA);
    out.push_str(",\"node\":");
    string(&mut out, &s.node);
    let _ = write!(out, ",\"capturedAt\":{},\"totals\":", s.captured_at);
    totals(&mut out, &t);
    out.push_str(",\"roots\":[");
    for (i, r) in s.roots.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        node(&mut out, r);
    }
    out.push_str("]}");
    out
}

/// A page of the roots for HTTP: `totals` over the whole snapshot, roots
/// `offset..offset + limit`, then `"page":{"offset":o,"limit":l,"totalRoots":n}` (a key added
/// to schema 1). With every root on the page and `always` false it is exactly [`to_json`].
pub fn to_json_page(s: &Snapshot, offset: usize, limit: usize, always: bool) -> String {
    let n = s.roots.len();
    let start = offset.min(n);
    let end = start.saturating_add(limit).min(n);
    if !always && start == 0 && end == n {
        return to_json(s);
    }
    let t = s.totals();
    let mut out = String::with_capacity(256 + 320 * (end - start).min(1 << 20));
    out.push_str("{\"schema\":");
    string(&mut out, SCHEMA);
    out.push_str(",\"node\":");
    string(&mut out, &s.node);
    let _ = write!(out, ",\"capturedAt\":{},\"totals\":", s.captured_at);
    totals(&mut out, &t);
    out.push_str(",\"roots\":[");
    for (i, r) in s.roots[start..end].iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        node(&mut out, r);
    }
    let _ = write!(
        out,
        "],\"page\":{{\"offset\":{start},\"limit\":{limit},\"totalRoots\":{n}}}}}"
    );
    out
}

fn totals(out: &mut String, t: &Totals) {
    let _ = write!(
        out,
        "{{\"supervisors\":{},\"workers\":{},\"running\":{},\"exited\":{},\"restarts\":{},\"maxDepth\":{}}}",
        t.supervisors, t.workers, t.running, t.exited, t.restarts, t.max_depth
    );
}

fn opt_u64(out: &mut String, v: Option<u64>) {
    match v {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.push_str("null"),
    }
}

fn node(out: &mut String, n: &SnapNode) {
    out.push_str("{\"pid\":");
    match n.pid {
        Some(p) => {
            let _ = write!(out, "\"{p}\"");
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"registeredName\":");
    match n.registered_name {
        Some(s) => string(out, s.as_str()),
        None => out.push_str("null"),
    }
    out.push_str(",\"kind\":\"");
    out.push_str(n.kind.as_str());
    out.push_str("\",\"class\":");
    match n.class.class_object_name() {
        Some(c) => string(out, c.as_str()),
        None => out.push_str("null"),
    }
    out.push_str(",\"state\":\"");
    out.push_str(n.state.as_str());
    let _ = write!(
        out,
        "\",\"restartCount\":{},\"startedAt\":",
        n.restart_count
    );
    opt_u64(out, n.started_at);
    out.push_str(",\"exitedAt\":");
    opt_u64(out, n.exited_at);
    out.push_str(",\"uptimeMs\":");
    opt_u64(out, n.uptime_ms);
    let _ = write!(
        out,
        ",\"childCount\":{},\"truncated\":{},\"supervision\":",
        n.child_count, n.truncated
    );
    match &n.supervision {
        Some(s) => sup(out, s),
        None => out.push_str("null"),
    }
    out.push_str(",\"restartHistory\":[");
    for (i, e) in n.history.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        event(out, e);
    }
    out.push_str("],\"children\":[");
    for (i, c) in n.children.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        node(out, c);
    }
    out.push_str("]}");
}

/// One restart-history event: `{"at":ms,"reason":"killed","kind":"exit","generation":1,"pid":"<0.5.0>"|null}`.
pub fn event(out: &mut String, e: &RestartEvent) {
    let _ = write!(out, "{{\"at\":{},\"reason\":", e.at_ms);
    string(out, &e.reason_text);
    let _ = write!(
        out,
        ",\"kind\":\"{}\",\"generation\":{},\"pid\":",
        e.kind.as_str(),
        e.generation
    );
    match e.pid() {
        Some(p) => {
            let _ = write!(out, "\"{p}\"");
        }
        None => out.push_str("null"),
    }
    out.push('}');
}

fn sup(out: &mut String, s: &SupInfo) {
    let _ = write!(
        out,
        "{{\"strategy\":\"{}\",\"maxRestarts\":{},\"window\":{},\"autoShutdown\":\"{}\",\"generation\":{},\"restartsPerformed\":{}}}",
        s.strategy.as_str(),
        s.max_restarts,
        s.restart_window,
        s.auto_shutdown.map_or("never", |a| a.as_str()),
        s.generation,
        s.restarts_performed
    );
}

/// A JSON string: `"` and `\` escaped with a backslash, control characters as `\n`, `\r`,
/// `\t`, `\b`, `\f` or `\u00XX`.
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(s);
    } else {
        for ch in s.chars() {
            match ch {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        let mut s = String::new();
        string(&mut s, "a\"b\\c\nd\u{1}");
        assert_eq!(s, r#""a\"b\\c\nd\u0001""#);
        let mut s = String::new();
        string(&mut s, "plain");
        assert_eq!(s, "\"plain\"");
    }
}
