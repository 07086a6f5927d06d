//! `bt observe NODE`: the observer of another node. It starts
//! a hidden distribution node of its own (tooling takes no part in `Node connected`,
//! NodeUp/NodeDown or global names), connects to NODE, and serves NODE's supervision tree
//! with the same HTTP server and page as `bt run --observe` ([`super::server`]). Each
//! snapshot is NODE's `default` tree, asked over the connection through NODE's query
//! service (`crate::dist::query`); `status` of a process is asked when the page asks, and
//! answers nothing after 1000 ms as locally. Pids print with this observer's
//! connection index of NODE (`<1.7.0>`).
//!
//! `--once` prints NODE's tree once as JSON and exits.

use std::sync::Arc;
use std::time::Duration;

use crate::dist::{self, DistNode};
use crate::interp::distribution::NodeLinks;
use crate::observe::{ObserveConfig, ObserveServer, TreeSource};
use crate::runtime::snapshot::{Snapshot, Status};
use crate::runtime::Pid;

/// Longest a snapshot request waits for NODE.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(5);
/// `status` gives up after this long.
const STATUS_TIMEOUT: Duration = Duration::from_millis(1000);

/// NODE's tree, asked over the connection.
pub(crate) struct RemoteSource {
    pub node: Arc<DistNode>,
    pub target: String,
}

impl TreeSource for RemoteSource {
    fn snapshot(&self) -> Snapshot {
        // A node that does not answer shows as an empty tree (the page keeps polling).
        dist::query::fetch_snapshot(&self.node, &self.target, SNAPSHOT_TIMEOUT).unwrap_or_else(
            |_| Snapshot {
                roots: Vec::new(),
                captured_at: 0,
                node: self.target.clone(),
            },
        )
    }
    fn status(&self, pid: Pid) -> Option<Status> {
        dist::query::fetch_status(&self.node, &self.target, pid.number, STATUS_TIMEOUT)
    }
}

/// What `bt observe NODE` was given.
pub struct Args {
    pub target: String,
    /// Where to serve the page (`127.0.0.1:0` picks a free port).
    pub addr: String,
    pub once: bool,
    /// This observer's own node name (default `bt_observe_PID@HOST`, HOST being NODE's).
    pub name: Option<String>,
    pub cookie_file: Option<std::path::PathBuf>,
}

/// Runs `bt observe NODE`; answers the exit status.
pub fn main(a: Args) -> i32 {
    let Some((_, host)) = a.target.split_once('@') else {
        eprintln!(
            "bt observe: expected a node name NAME@HOST, not {}",
            a.target
        );
        return 2;
    };
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("bt_observe_{}@{host}", std::process::id()));
    let opts = dist::Options {
        name,
        hidden: true,
        net_tick: 0,
        cookie_file: a.cookie_file.clone(),
        tls: None,
    };
    let node = match dist::start(opts) {
        Ok(n) => n,
        Err(m) => {
            eprintln!("bt observe: {m}");
            return 2;
        }
    };
    let _guard = dist::NodeGuard(node.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    node.connect(
        &a.target,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("bt observe: {}", e.message);
            return 1;
        }
        Err(_) => {
            eprintln!("bt observe: distribution stopped");
            return 1;
        }
    }
    if a.once {
        return match dist::query::fetch_snapshot(&node, &a.target, SNAPSHOT_TIMEOUT) {
            Ok(s) => {
                println!("{}", s.to_json());
                0
            }
            Err(e) => {
                eprintln!("bt observe: {}", e.message);
                1
            }
        };
    }
    let source = Arc::new(RemoteSource {
        node: node.clone(),
        target: a.target.clone(),
    });
    let server = match ObserveServer::start(&a.addr, source, ObserveConfig::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bt observe: cannot serve on {}: {e}", a.addr);
            return 2;
        }
    };
    println!("observing {} on http://{}/", a.target, server.local_addr());
    // Serve until killed; stop when NODE has gone and cannot be reached again.
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if !node.is_connected(&a.target) {
            let (tx, rx) = std::sync::mpsc::channel();
            node.connect(
                &a.target,
                Box::new(move |r| {
                    let _ = tx.send(r);
                }),
            );
            if !matches!(rx.recv(), Ok(Ok(()))) {
                eprintln!("bt observe: {} is down", a.target);
                return 1;
            }
        }
    }
}
