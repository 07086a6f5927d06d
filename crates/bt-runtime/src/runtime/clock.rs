//! The runtime clock (real, or manual for deterministic tests) and user timers.
//!
//! Waits with timeouts (sync calls, `sleep`) are timed by the workers themselves (see
//! `sched`). User timers (`after`, `every`) live here: a heap of deadlines served by one
//! timer thread on the real clock, or fired by [`crate::runtime::RtHandle::advance`] on the
//! manual clock. Each firing runs the callback in a fresh process.
//!
//! A leaf: the timers are generic over their one-shot and periodic actions (the scheduler's
//! task closures), and whoever fires them says what firing one does (`Shared::fire_timers`).

// unsafe: the coarse monotonic clock is read through libc (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};

/// Milliseconds since the runtime started: real, or advanced only by hand.
///
/// The real clock reads `CLOCK_MONOTONIC_COARSE` (a few ns, resolution of a scheduler tick)
/// because every sync call reads it to arm its timeout; deadlines add the resolution
/// ([`Clock::slack_ms`]) so a timeout never fires early.
pub(crate) struct Clock {
    start_ms: u64,
    manual: Option<AtomicU64>,
    wall0_ms: u64,
    slack_ms: u64,
}

fn coarse_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into the timespec we pass.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if r != 0 {
        return 0; // not reached on Linux: the coarse clock always exists
    }
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

fn coarse_resolution_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes only into the timespec we pass.
    let r = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if r != 0 {
        return 10;
    }
    (ts.tv_sec as u64 * 1000 + (ts.tv_nsec as u64).div_ceil(1_000_000)).max(1)
}

impl Clock {
    pub(crate) fn new(manual: bool) -> Clock {
        // A manual (test) clock's wall time starts at the Unix epoch, so every time stamp
        // taken from it (restart history, supervisor start times) is deterministic.
        let wall0_ms = if manual {
            0
        } else {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0)
        };
        Clock {
            start_ms: coarse_ms(),
            manual: manual.then(|| AtomicU64::new(0)),
            wall0_ms,
            slack_ms: if manual { 0 } else { coarse_resolution_ms() },
        }
    }
    /// The virtual clock of a simulated runtime: manual, its wall time starting at a fixed
    /// date (`sim::SIM_EPOCH_MS`).
    pub(crate) fn simulated() -> Clock {
        Clock {
            wall0_ms: crate::runtime::config::SIM_EPOCH_MS,
            ..Clock::new(true)
        }
    }
    /// Moves a manual clock forward to `ms` (never back); answers the time now.
    pub(crate) fn set_at_least(&self, ms: u64) -> u64 {
        match &self.manual {
            Some(m) => m.fetch_max(ms, Ordering::SeqCst).max(ms),
            None => self.now_ms(),
        }
    }
    /// Added to deadlines so a coarse clock never fires a timeout early.
    pub(crate) fn slack_ms(&self) -> u64 {
        self.slack_ms
    }
    pub(crate) fn is_manual(&self) -> bool {
        self.manual.is_some()
    }
    pub(crate) fn now_ms(&self) -> u64 {
        match &self.manual {
            Some(m) => m.load(Ordering::SeqCst),
            None => coarse_ms().saturating_sub(self.start_ms),
        }
    }
    /// Wall-clock ms since the Unix epoch, consistent with `now_ms`.
    pub(crate) fn wall_ms(&self) -> u64 {
        self.wall0_ms + self.now_ms()
    }
    /// Advances a manual clock; answers the new time (None on the real clock).
    pub(crate) fn advance(&self, ms: u64) -> Option<u64> {
        self.manual
            .as_ref()
            .map(|m| m.fetch_add(ms, Ordering::SeqCst) + ms)
    }
}

enum Action<O, E> {
    Once(O),
    Every(u64, E),
}

/// What a due timer runs: its one-shot action, or (a copy of) its periodic one.
pub(crate) enum Fired<O, E> {
    Once(O),
    Every(E),
}

struct Entry<O, E> {
    timer: Arc<TimerState>,
    action: Action<O, E>,
}

pub(crate) struct TimerState {
    active: AtomicBool,
    /// Made by a script (`Timer after:do:`/`every:do:`), not by the runtime or its host:
    /// cancelled with the scripts' processes ([`Timers::cancel_scripts`]).
    script: bool,
}

struct Heap<O, E> {
    due: BinaryHeap<Reverse<(u64, u64)>>,
    entries: HashMap<u64, Entry<O, E>>,
    next_id: u64,
    shutdown: bool,
}

/// Pending timers whose actions are `O` (one-shot) and `E` (periodic).
pub(crate) struct Timers<O, E> {
    heap: Mutex<Heap<O, E>>,
    cv: Condvar,
}

impl<O, E> Default for Timers<O, E> {
    fn default() -> Self {
        Timers {
            heap: Mutex::new(Heap {
                due: BinaryHeap::new(),
                entries: HashMap::new(),
                next_id: 0,
                shutdown: false,
            }),
            cv: Condvar::new(),
        }
    }
}

/// A pending `after`/`every` timer.
#[derive(Clone)]
pub struct TimerRef(Arc<TimerState>);

impl TimerRef {
    /// Stops future runs; answers true if it stopped a pending run.
    pub fn cancel(&self) -> bool {
        self.0.active.swap(false, Ordering::SeqCst)
    }
    /// True until cancelled, or until a one-shot timer has fired.
    pub fn is_active(&self) -> bool {
        self.0.active.load(Ordering::SeqCst)
    }
}

/// How many missed periods an `every` timer catches up on after a stall.
const MAX_CATCH_UP: u64 = 100;

impl<O, E: Clone> Timers<O, E> {
    fn insert(&self, deadline: u64, timer: Arc<TimerState>, action: Action<O, E>) {
        let mut h = self.heap.lock();
        let id = h.next_id;
        h.next_id += 1;
        h.due.push(Reverse((deadline, id)));
        h.entries.insert(id, Entry { timer, action });
        self.cv.notify_all();
    }

    pub(crate) fn after(&self, deadline: u64, f: O, script: bool) -> TimerRef {
        let t = Arc::new(TimerState {
            active: AtomicBool::new(true),
            script,
        });
        self.insert(deadline, t.clone(), Action::Once(f));
        TimerRef(t)
    }

    pub(crate) fn every(&self, first: u64, period: u64, f: E, script: bool) -> TimerRef {
        let t = Arc::new(TimerState {
            active: AtomicBool::new(true),
            script,
        });
        self.insert(first, t.clone(), Action::Every(period.max(1), f));
        TimerRef(t)
    }

    /// The earliest deadline of a pending timer (a cancelled one included).
    pub(crate) fn next_due(&self) -> Option<u64> {
        self.heap.lock().due.peek().map(|Reverse((d, _))| *d)
    }

    /// Cancels every pending timer a script made; answers how many were active.
    pub(crate) fn cancel_scripts(&self) -> usize {
        let h = self.heap.lock();
        h.entries
            .values()
            .filter(|e| e.timer.script && e.timer.active.swap(false, Ordering::SeqCst))
            .count()
    }

    /// Pending timers (cancelled ones not yet due included).
    pub(crate) fn pending(&self) -> usize {
        self.heap.lock().entries.len()
    }

    /// Fires every timer due at `now`: hands its action to `fire` (which runs it in a fresh
    /// process), outside the heap's lock.
    pub(crate) fn fire_due(&self, now: u64, mut fire: impl FnMut(Fired<O, E>)) {
        loop {
            let (deadline, entry) = {
                let mut h = self.heap.lock();
                match h.due.peek() {
                    Some(Reverse((d, _))) if *d <= now => {}
                    _ => return,
                }
                let Some(Reverse((d, id))) = h.due.pop() else {
                    return;
                };
                match h.entries.remove(&id) {
                    Some(e) => (d, e),
                    None => continue,
                }
            };
            let Entry { timer, action } = entry;
            match action {
                Action::Once(f) => {
                    if timer.active.swap(false, Ordering::SeqCst) {
                        fire(Fired::Once(f));
                    }
                }
                Action::Every(period, f) => {
                    if timer.active.load(Ordering::SeqCst) {
                        fire(Fired::Every(f.clone()));
                        let mut next = deadline + period;
                        if next + period * MAX_CATCH_UP <= now {
                            next = now + period;
                        }
                        self.insert(next, timer, Action::Every(period, f));
                    }
                }
            }
        }
    }

    /// The timer thread of the real clock: reads the time with `now`, fires what is due
    /// with `fire_due`, sleeps until the next deadline.
    pub(crate) fn run_thread(&self, now: impl Fn() -> u64, mut fire_due: impl FnMut(u64)) {
        let timers = self;
        loop {
            let now = now();
            fire_due(now);
            let mut h = timers.heap.lock();
            if h.shutdown {
                return;
            }
            let wait = h.due.peek().map(|Reverse((d, _))| d.saturating_sub(now));
            match wait {
                Some(0) => continue,
                Some(ms) => {
                    timers.cv.wait_for(&mut h, Duration::from_millis(ms));
                }
                None => timers.cv.wait(&mut h),
            }
        }
    }

    pub(crate) fn shutdown(&self) {
        let mut h = self.heap.lock();
        h.shutdown = true;
        h.entries.clear();
        h.due.clear();
        self.cv.notify_all();
    }
}
