//! Busy-waiting for a reply before sleeping: a process that made a
//! remote call may keep its worker thread for a short while, polling for the reply, instead
//! of suspending at once — a reply that arrives within that time resumes the caller with
//! no thread wake-up (BEAM schedulers busy-wait the same way before they sleep).
//!
//! Callers poll for [`DEFAULT_SPIN`] by default, reading their connection themselves
//! meanwhile (`super::hub`: the reply is handled on the caller's thread), and so does a
//! worker about to wait for input right after input came;
//! `BT_DIST_SPIN_US=N` sets the time, `0` turns all polling off. On a quiet machine this
//! took the bt↔bt round trip of `bench/remote_pingpong.sh` from 80–200 µs to 20–70 µs
//! (docs/remote-actors.md, "Latency"); on a loaded machine the adaptive back-off below
//! keeps it from burning CPU.
//!
//! Adaptive, so a loaded machine or a slow callee burns little CPU: after [`MISSES_OFF`]
//! waits that timed out, only one wait in [`RETRY_EVERY`] polls (to notice when replies
//! come fast again); a hit turns polling back on. Between probes the thread yields its core
//! ([`pause`]); a poll that lost its core for long (the machine is busy) stops and counts as
//! a miss even when the answer is there ([`Adaptive::poll`]).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long callers and readers poll unless `BT_DIST_SPIN_US` says otherwise.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(100);
/// Consecutive timed-out polls after which polling is mostly off.
const MISSES_OFF: u32 = 4;
/// While mostly off, one wait in this many still polls.
const RETRY_EVERY: u32 = 32;
/// A gap this long between two clock readings of a poll: the thread lost its core.
pub const PREEMPTED: Duration = Duration::from_micros(25);

/// The polling time: `BT_DIST_SPIN_US` if set (and a number), else [`DEFAULT_SPIN`].
pub fn configured() -> Duration {
    static T: OnceLock<Duration> = OnceLock::new();
    *T.get_or_init(|| {
        std::env::var("BT_DIST_SPIN_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DEFAULT_SPIN, Duration::from_micros)
    })
}

/// How long a caller polls for its reply (zero: it suspends at once).
pub fn caller_spin() -> Duration {
    configured()
}

/// The hit/miss history of one kind of wait.
#[derive(Default)]
pub struct Adaptive {
    misses: AtomicU32,
    waits: AtomicU32,
}

impl Adaptive {
    pub const fn new() -> Adaptive {
        Adaptive {
            misses: AtomicU32::new(0),
            waits: AtomicU32::new(0),
        }
    }

    /// Should this wait poll first?
    pub fn should_poll(&self) -> bool {
        if caller_spin().is_zero() {
            return false;
        }
        let w = self.waits.fetch_add(1, Ordering::Relaxed);
        self.misses.load(Ordering::Relaxed) < MISSES_OFF || w.is_multiple_of(RETRY_EVERY)
    }

    /// Records the outcome of a poll.
    pub fn record(&self, hit: bool) {
        if hit {
            self.misses.store(0, Ordering::Relaxed);
        } else {
            let m = self.misses.load(Ordering::Relaxed);
            self.misses.store(m.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// Polls `flag` for up to [`caller_spin`] when the history allows, calling `read`
    /// (which may set it) between looks; answers whether it was set.
    pub fn wait_for(&self, flag: &AtomicBool, mut read: impl FnMut()) -> bool {
        if !self.should_poll() {
            return false;
        }
        self.poll(caller_spin(), Instant::now, || {
            if !flag.load(Ordering::Acquire) {
                read();
            }
            flag.load(Ordering::Acquire).then_some(())
        })
        .is_some()
    }

    /// Calls `probe` until it answers something or `budget` (read from `clock`) is spent;
    /// records the outcome. An answer counts as a hit only when it came while this thread
    /// kept its core: a gap of [`PREEMPTED`] between two clock readings means the thread
    /// was descheduled (a busy machine), the poll then stops after one last probe and
    /// counts as a miss even if that probe answers — waiting for a time slice is what
    /// polling is meant to avoid, and a history of such "hits" would keep polling on.
    pub fn poll<T>(
        &self,
        budget: Duration,
        mut clock: impl FnMut() -> Instant,
        mut probe: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let mut last = clock();
        let until = last + budget;
        loop {
            if let Some(v) = probe() {
                self.record(true);
                return Some(v);
            }
            pause();
            let now = clock();
            if now >= until || now.saturating_duration_since(last) >= PREEMPTED {
                let v = probe();
                self.record(false);
                return v;
            }
            last = now;
        }
    }
}

/// Between polls: lets another runnable thread have this core (two nodes on a 2-core
/// machine would otherwise spin against the threads doing the work: without the yield a
/// bt→bt call took 2–3× longer on a busy machine), unless `BT_DIST_SPIN_YIELD=0`.
/// Under the EEVDF scheduler (Linux 6.6 on) each yield also pushes the thread's deadline
/// back by a slice, so next to a CPU-bound thread a poller can lose its core for
/// milliseconds: that poll ends as a miss ([`Adaptive::poll`]), and after a few such
/// polls stop.
pub fn pause() {
    static YIELD: OnceLock<bool> = OnceLock::new();
    if *YIELD.get_or_init(|| std::env::var("BT_DIST_SPIN_YIELD").map_or(true, |v| v != "0")) {
        std::thread::yield_now();
    } else {
        for _ in 0..16 {
            std::hint::spin_loop();
        }
    }
}

/// The callers' history (one per OS process: callers share their workers).
pub static CALLERS: Adaptive = Adaptive::new();

/// The history of workers polling for input before they block (`super::hub`).
pub static READERS: Adaptive = Adaptive::new();

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that jumps `step` at every reading (a thread that loses its core between two
    /// readings sees such jumps).
    fn jumping(step: Duration) -> impl FnMut() -> Instant {
        let start = Instant::now();
        let n = Cell::new(0u32);
        move || {
            n.set(n.get() + 1);
            start + step * n.get()
        }
    }

    #[test]
    fn an_answer_found_after_losing_the_core_counts_as_a_miss() {
        // The poller is descheduled for 3 ms (a busy machine) and finds the answer when it
        // runs again: polling did not save a wake-up, it cost the wait of a time slice.
        // After a few such polls the history turns polling mostly off.
        let a = Adaptive::new();
        for _ in 0..MISSES_OFF {
            assert!(a.should_poll());
            let found = Cell::new(false);
            let got = a.poll(DEFAULT_SPIN, jumping(Duration::from_millis(3)), || {
                // The answer is there once the clock was read after the start.
                let r = found.get().then_some(());
                found.set(true);
                r
            });
            assert_eq!(got, Some(()));
        }
        let polls = (0..RETRY_EVERY).filter(|_| a.should_poll()).count();
        assert_eq!(polls, 1, "one wait in {RETRY_EVERY} still polls");
    }

    #[test]
    fn answers_in_time_keep_polling_on_and_misses_turn_it_off() {
        let a = Adaptive::new();
        for _ in 0..10 {
            assert!(a.should_poll());
            let got = a.poll(DEFAULT_SPIN, jumping(Duration::from_micros(1)), || Some(1));
            assert_eq!(got, Some(1));
        }
        for _ in 0..MISSES_OFF {
            assert!(a.should_poll());
            let got: Option<()> = a.poll(DEFAULT_SPIN, jumping(Duration::from_micros(5)), || None);
            assert_eq!(got, None);
        }
        let polls = (0..RETRY_EVERY).filter(|_| a.should_poll()).count();
        assert_eq!(polls, 1);
    }
}
