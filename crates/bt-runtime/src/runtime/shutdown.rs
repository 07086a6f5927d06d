//! Shutdown helper: telling a worker stuck inside one long coroutine resume — an
//! opaque library call such as a huge bignum `printString`, which no reduction check point
//! can interrupt — from one that is merely busy, so the runtime's drop (and with it `bt run`'s
//! exit) does not wait seconds for work nobody will see.
//!
//! A worker counts as stuck once the same resume (`WorkerQ::driving`, a serial number) has
//! been running for [`STUCK_AFTER`]. A coroutine that is told to exit leaves at its next
//! check point (every reduction budget), so anything still inside the same resume that long
//! after shutdown began is inside such a call.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::sched::WorkerQ;

/// How long one resume must run, unchanged, for its worker to count as stuck.
pub(crate) const STUCK_AFTER: Duration = Duration::from_millis(100);

/// How often shutdown re-examines the workers while it waits for coroutines to end.
pub(crate) const POLL: Duration = Duration::from_millis(10);

/// The resume each worker was seen in, and since when.
pub(crate) struct Stuck {
    seen: Vec<(u64, Instant)>,
}

impl Stuck {
    pub(crate) fn new(workers: usize) -> Stuck {
        Stuck {
            seen: vec![(0, Instant::now()); workers],
        }
    }

    /// Workers inside the same resume for at least [`STUCK_AFTER`].
    pub(crate) fn count(&mut self, workers: &[WorkerQ]) -> usize {
        let now = Instant::now();
        let mut n = 0;
        for (w, seen) in workers.iter().zip(self.seen.iter_mut()) {
            let d = w.driving.load(Ordering::Relaxed);
            if d == 0 || d != seen.0 {
                *seen = (d, now);
            } else if now.duration_since(seen.1) >= STUCK_AFTER {
                n += 1;
            }
        }
        n
    }
}
