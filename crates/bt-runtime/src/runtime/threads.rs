//! A runtime's threads, started on first need: the workers when work is first queued for
//! the pool (`Shared::wake_one`), the timer thread when the first timer is set. A runtime
//! whose only process is run by a guest (an embedding engine evaluating on the host's
//! thread, `sched::guest`) never starts a thread, so creating and dropping an engine does
//! not pay for spawning and joining three.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::runtime::clock::Timers;
use crate::runtime::sched::{Shared, Worker};

#[derive(Default)]
pub(crate) struct Threads {
    /// The runtime itself (set once by `Runtime::new`), to hand to the threads it starts.
    me: OnceLock<Weak<Shared>>,
    workers_started: AtomicBool,
    timer_started: AtomicBool,
    workers: Mutex<Vec<JoinHandle<()>>>,
    timer: Mutex<Option<JoinHandle<()>>>,
    /// The memory account every thread of this runtime is charged to from its start (an
    /// embedding engine's `max_memory`, `crate::memory`): what its processes allocate and
    /// free there counts, also when no hooked run has started on the thread yet (a process
    /// that is stopped before it ever runs is freed by a worker).
    account: OnceLock<&'static crate::memory::Account>,
}

impl Threads {
    pub(crate) fn set_owner(&self, sh: &Arc<Shared>) {
        let _ = self.me.set(Arc::downgrade(sh));
    }

    /// Charges the threads started from now on to `a` (set before any thread starts).
    pub(crate) fn charge_to(&self, a: &'static crate::memory::Account) {
        let _ = self.account.set(a);
    }

    /// Charges the calling thread (just started) to the runtime's account, if any.
    fn charge_this_thread(account: Option<&'static crate::memory::Account>) {
        if account.is_some() {
            crate::memory::set_current(account);
        }
    }

    fn owner(&self) -> Option<Arc<Shared>> {
        self.me.get().and_then(Weak::upgrade)
    }

    /// Starts the worker threads unless they run already (or the runtime is shutting down).
    pub(crate) fn ensure_workers(&self) {
        if self.workers_started.load(Ordering::Acquire) {
            return;
        }
        let Some(sh) = self.owner() else { return };
        let mut hs = self.workers.lock();
        if self.workers_started.load(Ordering::Acquire) || sh.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let account = self.account.get().copied();
        for i in hs.len()..sh.cfg.workers {
            let s = sh.clone();
            match std::thread::Builder::new()
                .name(format!("bt-worker-{i}"))
                .spawn(move || {
                    Self::charge_this_thread(account);
                    Worker::new(i, s).run()
                }) {
                Ok(h) => hs.push(h),
                Err(e) => {
                    // Tried again at the next wake-up.
                    sh.log(&format!("runtime: cannot start a worker thread: {e}"));
                    return;
                }
            }
        }
        self.workers_started.store(true, Ordering::Release);
    }

    /// Starts the timer thread of the real clock unless it runs already.
    pub(crate) fn ensure_timer(&self) {
        if self.timer_started.load(Ordering::Acquire) {
            return;
        }
        let Some(sh) = self.owner() else { return };
        if sh.clock.is_manual() {
            return;
        }
        let mut t = self.timer.lock();
        if t.is_some() || sh.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let s = sh.clone();
        let account = self.account.get().copied();
        match std::thread::Builder::new()
            .name("bt-timer".into())
            .spawn(move || {
                Self::charge_this_thread(account);
                Timers::run_thread(s)
            }) {
            Ok(h) => {
                *t = Some(h);
                self.timer_started.store(true, Ordering::Release);
            }
            Err(e) => sh.log(&format!("runtime: cannot start the timer thread: {e}")),
        }
    }

    /// The started threads, for joining at shutdown: (workers in index order, timer).
    pub(crate) fn take(&self) -> (Vec<JoinHandle<()>>, Option<JoinHandle<()>>) {
        (
            std::mem::take(&mut *self.workers.lock()),
            self.timer.lock().take(),
        )
    }
}
