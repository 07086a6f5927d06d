//! Seed nodes: `bt run --connect NODE[,NODE…]` (or `BT_CONNECT`) names nodes this
//! node keeps connected. It connects to them at start (before the program's first statement,
//! each attempt bounded by the connect timeout) and, whenever a link to one of them is lost
//! (or was never made), tries again with exponential backoff: 1 s, doubling up to 30 s,
//! each wait scaled by a random factor in 0.75–1.25 so that nodes healing from one
//! partition do not all dial at the same instant. A successful connect resets the backoff.
//! Every reconnect is an ordinary link: NodeUp is announced, the global registry resyncs
//! (`super::global::peer_event`) and process groups are exchanged again (`super::pg`).
//!
//! Each seed has one task on the node's runtime; it waits on [`Inner::downs`], a counter
//! every lost link bumps, so a NodeDown is never missed between two looks at the table.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::net;
use super::node::DistNode;
use super::state::Inner;

/// The first wait after a failed attempt or a lost link.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `d` scaled by a random factor in 0.75–1.25.
fn jitter(d: Duration) -> Duration {
    use std::hash::BuildHasher;
    let r = std::collections::hash_map::RandomState::new().hash_one(std::time::Instant::now());
    let f = 0.75 + (r % 1000) as f64 / 2000.0;
    d.mul_f64(f)
}

/// The next backoff after `d`.
fn doubled(d: Duration) -> Duration {
    (d * 2).min(MAX_BACKOFF)
}

impl DistNode {
    /// Keeps this node connected to `seeds`: connects to each now (waiting for all the
    /// attempts), then reconnects in the background after every lost link, with backoff.
    pub fn keep_connected(&self, seeds: Vec<String>) {
        let seeds: Vec<String> = seeds
            .into_iter()
            .filter(|s| !s.is_empty() && *s != self.inner.me.name)
            .collect();
        if seeds.is_empty() {
            return;
        }
        let inner = self.inner.clone();
        let first = seeds.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        self.spawn(async move {
            let attempts: Vec<_> = first
                .iter()
                .map(|s| {
                    let inner = inner.clone();
                    let s = s.clone();
                    net::spawn(async move { inner.ensure(&s).await.is_ok() })
                })
                .collect();
            let mut ok = Vec::new();
            for a in attempts {
                ok.push(a.await.unwrap_or(false));
            }
            let _ = tx.send(ok);
        });
        let ok = rx.recv().unwrap_or_default();
        for (i, seed) in seeds.into_iter().enumerate() {
            let connected = ok.get(i).copied().unwrap_or(false);
            let weak = Arc::downgrade(&self.inner);
            self.spawn(keep(weak, seed, connected));
        }
    }
}

fn connected(inner: &Inner, seed: &str) -> bool {
    inner.state.lock().peers.contains_key(seed)
}

/// Keeps `seed` connected for as long as the node runs.
async fn keep(inner: Weak<Inner>, seed: String, mut connected_now: bool) {
    let Some(mut downs) = inner.upgrade().map(|i| i.downs.subscribe()) else {
        return;
    };
    let mut backoff = FIRST_BACKOFF;
    loop {
        if !connected_now {
            net::sleep(jitter(backoff)).await;
            backoff = doubled(backoff);
        }
        let Some(node) = inner.upgrade() else { return };
        // Seen before looking at the table: a loss after this look wakes the wait below.
        downs.borrow_and_update();
        if connected(&node, &seed) || node.ensure(&seed).await.is_ok() {
            backoff = FIRST_BACKOFF;
            drop(node);
            // Connected: wait until some link is lost, then see whether it was this one.
            loop {
                if downs.changed().await.is_err() {
                    return;
                }
                let Some(node) = inner.upgrade() else { return };
                if !connected(&node, &seed) {
                    break;
                }
            }
        }
        connected_now = false;
    }
}
