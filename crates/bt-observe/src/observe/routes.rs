//! What the observer answers: a request (method, path, query, Host) becomes a [`Reply`].
//! Pure decisions (no sockets), so the rules — GET only, Host checked against the bound
//! address, paging — are unit-tested here; [`super::server`] does the I/O.

use std::net::SocketAddr;

use crate::observe::page;
use crate::runtime::snapshot::diff::{self, SnapDiff};
use crate::runtime::snapshot::json::{self, string};
use crate::runtime::snapshot::{Snapshot, Status};

/// What to send back.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A complete response.
    Fixed {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    /// The tree JSON, paged (the snapshot is taken by the server).
    Processes {
        offset: usize,
        limit: usize,
        paged: bool,
    },
    /// The status of one process (looked up by the server).
    Status(Option<crate::runtime::Pid>),
    /// An event stream.
    Events,
}

impl Reply {
    fn error(status: u16, msg: &str) -> Reply {
        let mut body = String::from("{\"error\":");
        string(&mut body, msg);
        body.push('}');
        Reply::Fixed {
            status,
            content_type: "application/json",
            body,
        }
    }
    fn asset(content_type: &'static str, body: &str) -> Reply {
        Reply::Fixed {
            status: 200,
            content_type,
            body: body.to_string(),
        }
    }
}

/// Whether `host` (the Host header) names the server at `bound`: a loopback name or the
/// bound IP, with the bound port. A page served from another name (DNS rebinding) is refused.
pub(crate) fn host_ok(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some(host) = host else { return false };
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) if !n.is_empty() && !p.contains(']') => (n, p),
        _ => return false,
    };
    if port.parse::<u16>().ok() != Some(bound.port()) {
        return false;
    }
    let name = name.to_ascii_lowercase();
    let bound_ip = match bound {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name == bound_ip
}

fn query_param<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then_some(v)
    })
}

/// Decides the reply to `method path?query` with `host`, for a server bound at `bound` whose
/// answers carry at most `max_roots` roots (the tests' entry; the server decides the Host
/// check itself and calls [`route_checked`]).
#[cfg(test)]
pub(crate) fn route(
    method: &str,
    path: &str,
    query: Option<&str>,
    host: Option<&str>,
    bound: SocketAddr,
    max_roots: usize,
) -> Reply {
    route_checked(method, path, query, host_ok(host, bound), max_roots)
}

/// Decides the reply to `method path?query`, with the Host check already decided (`host_ok`: the server over TLS also
/// accepts the names its certificate is valid for, `crate::observe::tls`).
pub(crate) fn route_checked(
    method: &str,
    path: &str,
    query: Option<&str>,
    host_ok: bool,
    max_roots: usize,
) -> Reply {
    if method != "GET" {
        return Reply::error(405, "only GET is served");
    }
    if !host_ok {
        return Reply::error(421, "the Host header does not name this server");
    }
    match path {
        "/" | "/index.html" => Reply::asset("text/html; charset=utf-8", page::INDEX_HTML),
        "/app.js" => Reply::asset("text/javascript; charset=utf-8", page::APP_JS),
        "/style.css" => Reply::asset("text/css; charset=utf-8", page::STYLE_CSS),
        "/runtime/processes" => {
            let num = |k| query_param(query, k).map(|v| v.parse::<usize>());
            let offset = match num("offset") {
                None => 0,
                Some(Ok(n)) => n,
                Some(Err(_)) => return Reply::error(400, "offset must be a number"),
            };
            let (limit, explicit) = match num("limit") {
                None => (max_roots, false),
                Some(Ok(n)) if n >= 1 => (n.min(max_roots), true),
                Some(_) => return Reply::error(400, "limit must be a positive number"),
            };
            Reply::Processes {
                offset,
                limit,
                paged: explicit || offset > 0,
            }
        }
        "/runtime/status" => match query_param(query, "pid").and_then(crate::observe::parse_pid) {
            Some(p) => Reply::Status(Some(p)),
            None => Reply::error(400, "status needs ?pid=N.N.N"),
        },
        "/runtime/events" => Reply::Events,
        _ => Reply::error(404, "not found"),
    }
}

/// The body of `/runtime/status`.
pub(crate) fn status_json(pid: crate::runtime::Pid, st: Option<Status>) -> String {
    match st {
        None => "null".to_string(),
        Some(st) => {
            let mut out = format!("{{\"pid\":\"{pid}\",\"module\":");
            string(&mut out, &st.module);
            out.push_str(&format!(
                ",\"sysState\":\"running\",\"queueLength\":{}}}",
                st.queue_length
            ));
            out
        }
    }
}

/// A snapshot cut to its first `max_roots` roots (what events carry).
pub fn capped(mut s: Snapshot, max_roots: usize) -> Snapshot {
    s.roots.truncate(max_roots);
    s
}

/// The data of one `tree` event: the tree, the identity of each node in pre-order (so the
/// page can match diff entries to the nodes it drew) and the diff from `prev`.
pub fn event_json(prev: Option<&Snapshot>, cur: &Snapshot) -> String {
    let tree = json::to_json(cur);
    let mut out = String::with_capacity(tree.len() * 11 / 10 + 64);
    out.push_str("{\"tree\":");
    out.push_str(&tree);
    out.push_str(",\"idents\":[");
    let ib = diff::Index::new(cur);
    let mut ident = String::new();
    for i in 0..ib.len() {
        if i > 0 {
            out.push(',');
        }
        ident.clear();
        ib.write_ident(i, &mut ident);
        string(&mut out, &ident);
    }
    out.push_str("],\"diff\":");
    match prev {
        Some(p) => {
            let d: SnapDiff =
                diff::diff_indexed(&diff::Index::new(p), &ib, p.captured_at, cur.captured_at);
            out.push_str(&diff::to_json(&d, p, cur));
        }
        None => out.push_str("null"),
    }
    out.push('}');
    out
}

/// A key that is equal for two snapshots showing the same tree (capture time and uptimes
/// left out): the event stream sends an update only when it changes.
pub(crate) fn tree_key(s: &Snapshot) -> String {
    fn clear(n: &mut crate::runtime::snapshot::SnapNode) {
        n.uptime_ms = None;
        for c in &mut n.children {
            clear(c);
        }
    }
    let mut c = s.clone();
    c.captured_at = 0;
    for r in &mut c.roots {
        clear(r);
    }
    json::to_json(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound() -> SocketAddr {
        "127.0.0.1:4000".parse().unwrap()
    }

    fn r(method: &str, path: &str, query: Option<&str>, host: &str) -> Reply {
        route(method, path, query, Some(host), bound(), 1000)
    }

    fn status_of(rep: &Reply) -> u16 {
        match rep {
            Reply::Fixed { status, .. } => *status,
            _ => 200,
        }
    }

    #[test]
    fn only_get_is_served() {
        for m in ["POST", "PUT", "DELETE", "HEAD", "OPTIONS", "BREW"] {
            assert_eq!(status_of(&r(m, "/", None, "127.0.0.1:4000")), 405, "{m}");
        }
        assert_eq!(status_of(&r("GET", "/", None, "127.0.0.1:4000")), 200);
        assert_eq!(
            status_of(&r("GET", "/etc/passwd", None, "localhost:4000")),
            404
        );
        assert_eq!(
            status_of(&r("GET", "/../Cargo.toml", None, "localhost:4000")),
            404
        );
    }

    #[test]
    fn host_must_name_this_server() {
        for ok in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LOCALHOST:4000",
            "[::1]:4000",
        ] {
            assert!(host_ok(Some(ok), bound()), "{ok}");
        }
        for bad in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "localhost",
            "",
            ":4000",
            "127.0.0.1.evil.example:4000",
        ] {
            assert!(!host_ok(Some(bad), bound()), "{bad}");
        }
        assert!(!host_ok(None, bound()));
        assert_eq!(
            status_of(&r("GET", "/runtime/processes", None, "rebind.example:4000")),
            421
        );
    }

    #[test]
    fn processes_are_paged_on_request_or_past_the_cap() {
        assert_eq!(
            r("GET", "/runtime/processes", None, "localhost:4000"),
            Reply::Processes {
                offset: 0,
                limit: 1000,
                paged: false
            }
        );
        assert_eq!(
            r(
                "GET",
                "/runtime/processes",
                Some("offset=5&limit=5000"),
                "localhost:4000"
            ),
            Reply::Processes {
                offset: 5,
                limit: 1000,
                paged: true
            }
        );
        assert_eq!(
            status_of(&r(
                "GET",
                "/runtime/processes",
                Some("limit=0"),
                "localhost:4000"
            )),
            400
        );
        assert_eq!(
            status_of(&r(
                "GET",
                "/runtime/processes",
                Some("offset=x"),
                "localhost:4000"
            )),
            400
        );
        assert_eq!(
            status_of(&r(
                "GET",
                "/runtime/status",
                Some("pid=nope"),
                "localhost:4000"
            )),
            400
        );
    }
}
