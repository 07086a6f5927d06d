//! Deadlines of this node's outgoing calls (LANGUAGE.md 5.6, 8.8: the default 5000 ms and
//! `withTimeout:`): one timer task per node ([`reap`]) instead of one per call, so a call
//! queued from a bt process wakes nothing but the connection's writer. A call's deadline
//! is removed when it ends; the task sleeps until the earliest deadline left and fails the
//! calls still pending then with `timeout`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::net::{self, Instant, Notify};
use super::node::Inner;

/// The pending deadlines: `(when, call number)`, earliest first.
#[derive(Default)]
pub struct Deadlines {
    set: Mutex<BTreeSet<(Instant, u64)>>,
    /// Told when a deadline earlier than all others arrives.
    earlier: Notify,
}

impl Deadlines {
    /// Call `n` times out `after` from now; answers the key for [`Deadlines::remove`].
    pub fn add(&self, n: u64, after: Duration) -> (Instant, u64) {
        let key = (Instant::now() + after, n);
        let first = {
            let mut s = self.set.lock();
            let first = s.first().is_none_or(|f| key < *f);
            s.insert(key);
            first
        };
        if first {
            self.earlier.notify_one();
        }
        key
    }

    pub fn remove(&self, key: (Instant, u64)) {
        self.set.lock().remove(&key);
    }

    /// The calls whose deadline has passed (removed).
    fn due(&self) -> Vec<u64> {
        let now = Instant::now();
        let mut s = self.set.lock();
        let mut out = Vec::new();
        while let Some(&(at, n)) = s.first() {
            if at > now {
                break;
            }
            s.pop_first();
            out.push(n);
        }
        out
    }

    fn first(&self) -> Option<Instant> {
        self.set.lock().first().map(|k| k.0)
    }
}

/// The node's timer task: fails calls whose deadline passed with `timeout`.
pub(crate) async fn reap(inner: Arc<Inner>) {
    loop {
        match inner.deadlines.first() {
            None => inner.deadlines.earlier.notified().await,
            Some(at) => {
                net::select! {
                    _ = net::sleep_until(at) => {}
                    _ = inner.deadlines.earlier.notified() => {}
                }
            }
        }
        for n in inner.deadlines.due() {
            super::conn::expire(&inner, n);
        }
    }
}
