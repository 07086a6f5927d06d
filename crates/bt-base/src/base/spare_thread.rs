//! A thread about to end, lent to run a thread's work instead of a new thread: `bt run`
//! starts a thread that takes in the library while the main thread builds the program
//! (`check::Checker::prepare_in_background`), and the runtime's first worker is asked for
//! soon after (`RtHandle::start_first_worker`). When the library thread is still at work,
//! it runs the worker once it is done, on its own stack and with its allocator heap (whose
//! pages of every small size are already in use): one thread start fewer, and the worker's
//! first allocations fault in no fresh pages.
//!
//! One slot per process: the thread that [`open`]s it runs, at its [`finish`], the job
//! [`give`] hands it before then or while it lingers (`bt run` asks for its worker just
//! after the library thread is done as often as before); after that, `give` hands the job
//! back and the caller starts a thread as before.

use parking_lot::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Work handed to the lent thread.
pub type Job = Box<dyn FnOnce() + Send>;

enum Slot {
    /// No thread offers its end.
    Closed,
    /// A thread runs `finish` at its end and has no job yet.
    Open,
    /// The job it will run.
    Taken(Job),
}

static SLOT: Mutex<Slot> = Mutex::new(Slot::Closed);
static GIVEN: Condvar = Condvar::new();

/// Offers the calling thread's end: until it calls [`finish`], one [`give`] succeeds.
pub fn open() {
    let mut s = SLOT.lock();
    if matches!(*s, Slot::Closed) {
        *s = Slot::Open;
    }
}

/// Closes the offer and runs the job given, if any, on this thread: one given already, or
/// one given within `linger` (the thread waits for it, parked).
pub fn finish(linger: Duration) {
    let mut s = SLOT.lock();
    if matches!(*s, Slot::Open) {
        let until = Instant::now() + linger;
        while matches!(*s, Slot::Open) {
            if GIVEN.wait_until(&mut s, until).timed_out() {
                break;
            }
        }
    }
    let job = match std::mem::replace(&mut *s, Slot::Closed) {
        Slot::Taken(job) => Some(job),
        Slot::Open | Slot::Closed => None,
    };
    drop(s);
    if let Some(job) = job {
        job();
    }
}

/// Hands `job` to the thread that offered its end, to run when its own work is done; gives
/// it back when no thread offers one (none did, it has finished, or it has a job already).
pub fn give(job: Job) -> Result<(), Job> {
    let mut s = SLOT.lock();
    match *s {
        Slot::Open => {
            *s = Slot::Taken(job);
            GIVEN.notify_all();
            Ok(())
        }
        Slot::Closed | Slot::Taken(_) => Err(job),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_job_runs_at_the_end_of_the_open_thread_and_only_one_is_taken() {
        let ran = Arc::new(AtomicUsize::new(0));
        assert!(give(Box::new(|| {})).is_err(), "nothing is open");
        open();
        let r = ran.clone();
        assert!(give(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }))
        .is_ok());
        assert!(give(Box::new(|| {})).is_err(), "one job at most");
        assert_eq!(ran.load(Ordering::SeqCst), 0, "not before the end");
        finish(Duration::ZERO);
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(give(Box::new(|| {})).is_err(), "closed again");
        // A job given while the thread lingers runs on it.
        let r = ran.clone();
        let t = std::thread::spawn(move || {
            open();
            finish(Duration::from_secs(60));
            r.load(Ordering::SeqCst)
        });
        let r = ran.clone();
        let mut job: Job = Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        while let Err(j) = give(job) {
            job = j;
            std::thread::yield_now();
        }
        assert_eq!(t.join().unwrap(), 2);
    }
}
