//! A runtime's threads, started on first need: the first worker when work is first queued
//! for the pool (or before, when the caller knows work is coming: `bt run`,
//! `RtHandle::start_first_worker`), the others when work is queued while every started
//! worker is busy (`Shared::wake_one`; all of them for an installed input), the timer
//! thread when the first timer is set. The first worker started early runs on a thread
//! about to end when one offers itself (`bt run`'s library thread, `base::spare_thread`),
//! and is then joined by a flag ([`WorkerThread::Lent`]). A runtime
//! whose only process is run by a guest (an embedding engine evaluating on the host's
//! thread, `sched::guest`) never starts a thread, so creating and dropping an engine does
//! not pay for spawning and joining three.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{OnceLock, Weak};
use std::thread::JoinHandle;

use parking_lot::Mutex;

/// The threads of a runtime whose shared state is `S` (the scheduler's `Shared`, which
/// also starts them: `sched.rs`, `impl Threads<Shared>`).
pub(crate) struct Threads<S> {
    /// The runtime itself (set once by `Runtime::new`), to hand to the threads it starts.
    pub(crate) me: OnceLock<Weak<S>>,
    pub(crate) workers_started: AtomicBool,
    /// Looks for work still to come from workers started before any work was queued for
    /// them (`start_first_early`): each looks when it starts, so work queued meanwhile
    /// takes one of these instead of starting another worker (`Shared::wake_one`).
    pub(crate) starting: AtomicUsize,
    pub(crate) timer_started: AtomicBool,
    pub(crate) workers: Mutex<Vec<WorkerThread>>,
    pub(crate) timer: Mutex<Option<JoinHandle<()>>>,
    /// The memory account every thread of this runtime is charged to from its start (an
    /// embedding engine's `max_memory`, `crate::memory`): what its processes allocate and
    /// free there counts, also when no hooked run has started on the thread yet (a process
    /// that is stopped before it ever runs is freed by a worker).
    pub(crate) account: OnceLock<&'static crate::memory::Account>,
}

impl<S> Default for Threads<S> {
    fn default() -> Self {
        Threads {
            me: OnceLock::new(),
            workers_started: AtomicBool::new(false),
            starting: AtomicUsize::new(0),
            timer_started: AtomicBool::new(false),
            workers: Mutex::new(Vec::new()),
            timer: Mutex::new(None),
            account: OnceLock::new(),
        }
    }
}

impl<S> Threads<S> {
    /// Charges the threads started from now on to `a` (set before any thread starts).
    pub(crate) fn charge_to(&self, a: &'static crate::memory::Account) {
        let _ = self.account.set(a);
    }

    /// Charges the calling thread (just started) to the runtime's account, if any.
    pub(crate) fn charge_this_thread(account: Option<&'static crate::memory::Account>) {
        if account.is_some() {
            crate::memory::set_current(account);
        }
    }

    /// The started threads, for joining at shutdown: (workers in index order, timer).
    pub(crate) fn take(&self) -> (Vec<WorkerThread>, Option<JoinHandle<()>>) {
        (
            std::mem::take(&mut *self.workers.lock()),
            self.timer.lock().take(),
        )
    }
}

/// A worker started on a thread the runtime did not start: joined through its flag.
#[derive(Default)]
pub(crate) struct LentThread {
    done: parking_lot::Mutex<bool>,
    cv: parking_lot::Condvar,
}

/// Sets its thread's flag when the worker ends (also by a panic).
pub(crate) struct LentDone(std::sync::Arc<LentThread>);

impl LentThread {
    /// What the worker holds while it runs: its end (also by a panic) sets the flag.
    pub(crate) fn done_on_drop(self: &std::sync::Arc<Self>) -> LentDone {
        LentDone(self.clone())
    }
}

impl Drop for LentDone {
    fn drop(&mut self) {
        *self.0.done.lock() = true;
        self.0.cv.notify_all();
    }
}

/// A worker's thread, for joining at shutdown.
pub(crate) enum WorkerThread {
    Own(std::thread::JoinHandle<()>),
    Lent(std::sync::Arc<LentThread>),
}

impl WorkerThread {
    /// Waits until the worker has ended.
    pub(crate) fn join(self) {
        match self {
            WorkerThread::Own(h) => {
                let _ = h.join();
            }
            WorkerThread::Lent(l) => {
                let mut done = l.done.lock();
                while !*done {
                    l.cv.wait(&mut done);
                }
            }
        }
    }
}
