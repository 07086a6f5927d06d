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
}

impl Threads {
    pub(crate) fn set_owner(&self, sh: &Arc<Shared>) {
        let _ = self.me.set(Arc::downgrade(sh));
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
        for i in hs.len()..sh.cfg.workers {
            let s = sh.clone();
            match std::thread::Builder::new()
                .name(format!("bt-worker-{i}"))
                .spawn(move || Worker::new(i, s).run())
            {
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
        match std::thread::Builder::new()
            .name("bt-timer".into())
            .spawn(move || Timers::run_thread(s))
        {
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
