//! The process record's lock: a spin lock whose release is a plain store.
//!
//! A process record's critical sections are a few dozen instructions (queue or take an
//! envelope, flip the scheduling state, swap the behaviour or the reply slot); nothing blocks,
//! waits or suspends while holding one, and no user code runs under it. A parking mutex
//! (`parking_lot`) pays a locked compare-and-swap to release, because a waiter may have gone
//! to sleep and must be woken; this lock never puts a waiter to sleep on the lock itself, so
//! its release is one release store and only its acquisition is a locked instruction. A
//! local sync round trip takes three process locks: six locked instructions with the parking
//! mutex, three with this one (docs/performance.md "Message passing").
//!
//! Contention: a waiter spins on a plain load (test-and-test-and-set: the line stays shared
//! until it looks free), then yields its thread, then sleeps in short steps, so a holder that
//! its OS thread lost the processor to (a loaded machine, or a holder of lower real-time
//! priority than the waiter) gets it back. No fairness: a critical section this short is
//! rarely contended by more than one other thread.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The raw lock word behind [`ProcMutex`]: true while held.
pub(crate) struct RawSpin(AtomicBool);

/// A mutex over the process record ([`RawSpin`]); same interface as `parking_lot::Mutex`.
pub(crate) type ProcMutex<T> = lock_api::Mutex<RawSpin, T>;
/// The guard of a [`ProcMutex`].
pub(crate) type ProcGuard<'a, T> = lock_api::MutexGuard<'a, RawSpin, T>;

/// Spins on a plain load before yielding the thread.
const SPINS: u32 = 64;
/// Yields before sleeping.
const YIELDS: u32 = 16;

// SAFETY: `lock`/`try_lock` succeed only for the one caller whose compare-and-swap turned the
// word from false to true (so at most one holder), with Acquire ordering so the holder sees
// everything the previous holder wrote before its Release store in `unlock`, which lock_api
// calls only for the holder.
unsafe impl lock_api::RawMutex for RawSpin {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpin = RawSpin(AtomicBool::new(false));

    // As `parking_lot`'s: a guard stays on the thread that took it.
    type GuardMarker = lock_api::GuardNoSend;

    #[inline]
    fn lock(&self) {
        // Acquire: the critical section sees the last holder's writes (its Release store).
        if self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    #[inline]
    fn try_lock(&self) -> bool {
        // Acquire: as in `lock`.
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    unsafe fn unlock(&self) {
        // Release: publishes the critical section's writes to the next holder's Acquire.
        // A plain store (no locked instruction): no waiter sleeps on this word.
        self.0.store(false, Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // Relaxed: a snapshot for diagnostics; it orders nothing.
        self.0.load(Ordering::Relaxed)
    }
}

impl RawSpin {
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut tries = 0u32;
        loop {
            // Relaxed: only a hint that the word may be free; the compare-and-swap below
            // is what acquires (with Acquire).
            while self.0.load(Ordering::Relaxed) {
                tries = tries.saturating_add(1);
                if tries < SPINS {
                    std::hint::spin_loop();
                } else if tries < SPINS + YIELDS {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
            }
            // Acquire: as in `lock`.
            if self
                .0
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::ProcMutex;

    /// Many threads adding under the lock, some of them sleeping while they hold it: no
    /// increment is lost (mutual exclusion) and every thread gets through (no waiter is
    /// left behind on a released lock).
    #[test]
    fn the_spin_lock_excludes_and_lets_everyone_through() {
        let m = Arc::new(ProcMutex::new(0u64));
        let threads: Vec<_> = (0..8)
            .map(|k| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        let mut g = m.lock();
                        let v = *g;
                        if (i + k) % 5_000 == 0 {
                            // A holder that loses its processor: the others must wait.
                            std::thread::sleep(std::time::Duration::from_micros(200));
                        }
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 8 * 20_000);
        assert!(!m.is_locked());
        assert!(m.try_lock().is_some());
    }
}
