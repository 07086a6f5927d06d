//! Deadlines of this node's outgoing calls: one timer task per node ([`reap`]) instead of one per call, so a call
//! queued from a bt process wakes nothing but the connection's writer. A call's deadline
//! is removed when it ends; the task sleeps until the earliest deadline left and fails the
//! calls still pending then with `timeout`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::net::{self, Instant, Notify};

/// How long the timer task sleeps when no call is pending (so the next call's deadline is
/// usually later than its wake-up and needs no notification).
const IDLE: Duration = Duration::from_secs(1);

/// The deadlines (`(when, call number)`, earliest first), and when the timer task will
/// wake next.
type Pending = (BTreeSet<(Instant, u64)>, Option<Instant>);

/// The pending deadlines of a node's calls.
#[derive(Default)]
pub struct Deadlines {
    set: Mutex<Pending>,
    /// Told when a deadline earlier than the timer task's next wake-up arrives.
    earlier: Notify,
}

impl Deadlines {
    /// Call `n` times out `after` from now; answers the key for [`Deadlines::remove`].
    /// Wakes the timer task only when it would sleep past this deadline.
    pub fn add(&self, n: u64, after: Duration) -> (Instant, u64) {
        let key = (Instant::now() + after, n);
        let earlier = {
            let mut s = self.set.lock();
            s.0.insert(key);
            s.1.is_none_or(|wake| key.0 < wake)
        };
        if earlier {
            self.earlier.notify_one();
        }
        key
    }

    pub fn remove(&self, key: (Instant, u64)) {
        self.set.lock().0.remove(&key);
    }

    /// The calls whose deadline has passed (removed).
    fn due(&self) -> Vec<u64> {
        let now = Instant::now();
        let mut s = self.set.lock();
        let mut out = Vec::new();
        while let Some(&(at, n)) = s.0.first() {
            if at > now {
                break;
            }
            s.0.pop_first();
            out.push(n);
        }
        out
    }

    /// When the timer task wakes next (the earliest deadline, or [`IDLE`] from now).
    fn arm(&self) -> Instant {
        let mut s = self.set.lock();
        let at =
            s.0.first()
                .map(|k| k.0)
                .unwrap_or_else(|| Instant::now() + IDLE);
        s.1 = Some(at);
        at
    }
}

/// The node's timer task: calls `expire` with each call whose deadline passed (the
/// connection layer fails it with `timeout`).
pub(crate) async fn reap(deadlines: Arc<Deadlines>, expire: impl Fn(u64)) {
    loop {
        let at = deadlines.arm();
        net::select! {
            _ = net::sleep_until(at) => {}
            _ = deadlines.earlier.notified() => {}
        }
        for n in deadlines.due() {
            expire(n);
        }
    }
}
