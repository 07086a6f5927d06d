//! Busy-waiting for a reply before sleeping: a process that made a
//! remote call may keep its worker thread for a short while, polling for the reply, instead
//! of suspending at once — a reply that arrives within that time resumes the caller with
//! no thread wake-up (BEAM schedulers busy-wait the same way before they sleep).
//!
//! Callers and readers poll for [`DEFAULT_SPIN`] by default (callers while their reply is
//! due, readers while replies are due and right after their peer sent);
//! `BT_DIST_SPIN_US=N` sets the time, `0` turns all polling off. On a quiet machine this
//! took the bt↔bt round trip of `bench/remote_pingpong.sh` from 80–200 µs to 20–70 µs
//! (docs/remote-actors.md, "Latency"); on a loaded machine the adaptive back-off below
//! keeps it from burning CPU.
//!
//! Adaptive, so a loaded machine or a slow callee burns little CPU: after [`MISSES_OFF`]
//! waits that timed out, only one wait in [`RETRY_EVERY`] polls (to notice when replies
//! come fast again); a hit turns polling back on. Between polls the thread yields its
//! core to any other runnable thread ([`pause`]).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long callers and readers poll unless `BT_DIST_SPIN_US` says otherwise.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(100);
/// Consecutive timed-out polls after which polling is mostly off.
const MISSES_OFF: u32 = 4;
/// While mostly off, one wait in this many still polls.
const RETRY_EVERY: u32 = 32;

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

/// How long a reader polls its socket.
pub fn reader_spin() -> Duration {
    configured()
}

/// Does a reader also poll right after its peer sent (not only while replies are due)?
pub fn reader_polls_after_traffic() -> bool {
    !configured().is_zero()
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

    /// Polls `flag` for up to [`caller_spin`] when the history allows; answers whether it
    /// was set.
    pub fn wait_for(&self, flag: &AtomicBool) -> bool {
        if !self.should_poll() {
            return false;
        }
        let until = Instant::now() + caller_spin();
        loop {
            for _ in 0..64 {
                if flag.load(Ordering::Acquire) {
                    self.record(true);
                    return true;
                }
                std::hint::spin_loop();
            }
            if Instant::now() >= until {
                self.record(false);
                return false;
            }
            pause();
        }
    }
}

/// Between polls: lets another runnable thread have this core (two nodes on a 2-core
/// machine would otherwise spin against the threads doing the work), unless
/// `BT_DIST_SPIN_YIELD=0`.
pub fn pause() {
    static YIELD: OnceLock<bool> = OnceLock::new();
    if *YIELD.get_or_init(|| std::env::var("BT_DIST_SPIN_YIELD").map_or(true, |v| v != "0")) {
        std::thread::yield_now();
    }
}

/// The callers' history (one per OS process: callers share their workers).
pub static CALLERS: Adaptive = Adaptive::new();
