//! Restart intensity: at most `max` restart operations within a sliding window.
//!
//! A pure type: the caller passes the current time (the runtime clock, manual in tests), so
//! the arithmetic is tested without sleeping.

use std::collections::VecDeque;

/// Remembers when the recent restart operations happened.
#[derive(Clone, Debug)]
pub struct Intensity {
    max: u32,
    window_ms: u64,
    stamps: VecDeque<u64>,
}

impl Intensity {
    /// At most `max` restarts within `window_s` seconds.
    pub fn new(max: u32, window_s: u64) -> Intensity {
        Intensity {
            max,
            window_ms: window_s.saturating_mul(1000),
            stamps: VecDeque::new(),
        }
    }

    /// Records one restart operation at `now_ms`. Answers false when this makes more than
    /// `max` operations within the window: the supervisor must give up.
    pub fn record(&mut self, now_ms: u64) -> bool {
        self.stamps.push_back(now_ms);
        self.expire(now_ms);
        self.stamps.len() <= self.max as usize
    }

    /// Operations still inside the window at `now_ms`.
    pub fn recent(&mut self, now_ms: u64) -> usize {
        self.expire(now_ms);
        self.stamps.len()
    }

    fn expire(&mut self, now_ms: u64) {
        // An operation exactly `window` old has left the window.
        while let Some(&t) = self.stamps.front() {
            if now_ms.saturating_sub(t) >= self.window_ms {
                self.stamps.pop_front();
            } else {
                break;
            }
        }
    }

    /// Forgets every recorded operation (a fresh generation).
    pub fn reset(&mut self) {
        self.stamps.clear();
    }

    pub fn max(&self) -> u32 {
        self.max
    }
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_max_then_refuses_within_the_window() {
        let mut i = Intensity::new(3, 5);
        assert!(i.record(0));
        assert!(i.record(100));
        assert!(i.record(200));
        assert!(!i.record(300), "the fourth restart in 5 s exceeds 3");
    }

    #[test]
    fn old_operations_leave_the_window() {
        let mut i = Intensity::new(2, 1);
        assert!(i.record(0));
        assert!(i.record(500));
        assert!(!i.record(900));
        // At 1500 the ones at 0 and 500 are gone (>= 1000 ms old); 900 remains.
        assert!(i.record(1500));
        assert_eq!(i.recent(1500), 2);
        assert_eq!(i.recent(10_000), 0);
    }

    #[test]
    fn zero_max_refuses_the_first_restart() {
        let mut i = Intensity::new(0, 60);
        assert!(!i.record(0));
    }

    #[test]
    fn spaced_restarts_never_exceed() {
        let mut i = Intensity::new(1, 1);
        for k in 0..100 {
            assert!(i.record(k * 1000), "restart {k}");
        }
    }

    #[test]
    fn reset_forgets() {
        let mut i = Intensity::new(1, 60);
        assert!(i.record(0));
        i.reset();
        assert!(i.record(1));
    }
}
