//! The observer: `bt run --observe ADDR` serves the live supervision tree over HTTP, with a
//! page that draws it, and `bt top` shows it in a terminal.
//!
//! | module | what lives there |
//! |---|---|
//! | [`server`] | the HTTP/1.1 server (hyper on its own small tokio runtime): limits, timeouts |
//! | [`routes`] | what each `GET` answers: the page, `/runtime/processes`, events, status |
//! | [`page`] | the live page (HTML/JS/CSS compiled into the binary, no external asset) |
//! | [`client`] | a tiny blocking HTTP client (tests, `bt top`) |
//! | [`tls`] | HTTPS (`--observe-tls CONFIG`): the server's certificate, optional client certificates |
//! | [`top`] | `bt top` / `bt observe --tty`: a refreshing text tree |
//! | `remote` | `bt observe NODE`: the tree of another node, asked over distribution |
//!
//! The server never touches a live process: it takes snapshots through a [`TreeSource`]
//! (`runtime::snapshot`), answers `status` lazily from the process record, and computes
//! "what changed" with `runtime::snapshot::diff`.
//!
//! Endpoints (all `GET`; anything else is 405):
//! * `/` — the live page; `/app.js`, `/style.css` — its script and style.
//! * `/runtime/processes[?offset=N&limit=M]` — `ProcessNavigation default tree asJson`;
//!   more roots than the cap (1000) are paged, with a `page` key.
//! * `/runtime/events` — server-sent events: `tree` events carrying
//!   `{"tree":TREE,"idents":[…],"diff":DIFF|null}` whenever the tree changed.
//! * `/runtime/status?pid=0.5.0` — the lazy status of one process, or `null`.

pub mod client;
pub mod page;
#[cfg(feature = "dist")]
pub mod remote;
pub mod routes;
pub mod server;
pub mod tls;
pub mod tls_client;
pub mod top;

use std::time::Duration;

use crate::runtime::snapshot::{self, SnapOptions, Snapshot, Status};
use crate::runtime::supervisor::Supervision;
use crate::runtime::Pid;

pub use server::ObserveServer;
pub use tls::ObserveTls;

/// Where the observer gets its data.
pub trait TreeSource: Send + Sync + 'static {
    /// A fresh `default` snapshot.
    fn snapshot(&self) -> Snapshot;
    /// The live status of a process, None when it is not alive.
    fn status(&self, pid: Pid) -> Option<Status>;
}

/// The `default` snapshot of a runtime's supervision.
pub struct SupervisionSource {
    pub sup: Supervision,
    pub opts: SnapOptions,
}

impl SupervisionSource {
    pub fn new(sup: Supervision) -> SupervisionSource {
        SupervisionSource {
            sup,
            opts: SnapOptions::default(),
        }
    }
}

impl TreeSource for SupervisionSource {
    fn snapshot(&self) -> Snapshot {
        snapshot::default_snapshot(&self.sup, &self.opts)
    }
    fn status(&self, pid: Pid) -> Option<Status> {
        snapshot::status(self.sup.rt(), pid)
    }
}

/// Limits and timings of the server. The defaults suit a developer's machine.
#[derive(Clone, Debug)]
pub struct ObserveConfig {
    /// Connections served at once; more are answered `503` and closed.
    pub max_connections: usize,
    /// Event streams open at once (each also counts as a connection).
    pub max_streams: usize,
    /// A client must send its whole request head within this time.
    pub header_timeout: Duration,
    /// Most bytes of a request head (request line + headers); more is `431`.
    pub max_head_bytes: usize,
    /// A non-streaming connection is closed after this long, answered or not.
    pub request_deadline: Duration,
    /// An event stream is closed after this long (browsers reconnect by themselves).
    pub stream_lifetime: Duration,
    /// How often an event stream looks for changes.
    pub interval: Duration,
    /// Most roots in one `/runtime/processes` answer or event (the rest are paged).
    pub max_roots: usize,
    /// Snapshots taken at once (each on a blocking thread).
    pub max_snapshots: usize,
}

impl Default for ObserveConfig {
    fn default() -> Self {
        ObserveConfig {
            max_connections: 512,
            max_streams: 32,
            header_timeout: Duration::from_secs(5),
            max_head_bytes: 16 * 1024,
            request_deadline: Duration::from_secs(30),
            stream_lifetime: Duration::from_secs(300),
            interval: Duration::from_millis(500),
            max_roots: 1000,
            max_snapshots: 2,
        }
    }
}

/// Parses `<0.5.0>`, `0.5.0` (or with `%3C`/`%3E`, as a URL query carries it) into a Pid.
pub fn parse_pid(s: &str) -> Option<Pid> {
    let s = s.trim();
    let s = s
        .strip_prefix("%3C")
        .or_else(|| s.strip_prefix("%3c"))
        .unwrap_or(s);
    let s = s
        .strip_suffix("%3E")
        .or_else(|| s.strip_suffix("%3e"))
        .unwrap_or(s);
    Pid::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_parse_in_every_spelling() {
        let p = Pid {
            node: 0,
            number: 5,
            service: false,
        };
        assert_eq!(parse_pid("<0.5.0>"), Some(p));
        assert_eq!(parse_pid("0.5.0"), Some(p));
        assert_eq!(parse_pid("%3C0.5.0%3E"), Some(p));
        assert_eq!(parse_pid("0.3.1").map(|p| p.service), Some(true));
        for bad in ["", "0.5", "0.5.2", "a.b.c", "0.5.0.1", "<0.-1.0>"] {
            assert_eq!(parse_pid(bad), None, "{bad}");
        }
    }
}
