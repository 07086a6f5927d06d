//! Guest workers: a thread outside the pool (an embedding host's, calling `Engine::eval`)
//! delivers a message to one process and runs that process itself, on a pooled coroutine
//! stack, instead of handing it to a worker thread and sleeping until the answer comes back
//! (two thread wake-ups per call).
//!
//! * Every runtime has one guest queue after the workers' (`Shared::workers`, last entry);
//!   [`drive`] takes it for one call — callers serialise (the Interpreter holds a lock).
//! * While the caller is the guest, `schedule` from this thread puts the target's Run task
//!   on the guest queue. The guest runs only that process: any other Run task that lands
//!   there (an actor the job spawned or sent to) goes to the injector for the pool, so no
//!   other coroutine is ever pinned to a thread that is about to leave. Workers may still
//!   steal the Run task before the guest takes it; then the guest just waits.
//! * Coroutines started here are pinned here like any worker's: the guest keeps driving
//!   (resumes, deadlines of its waits) until the caller's `done` is set *and* none of its
//!   coroutines is left, so nothing is stranded when the caller returns.
//! * Wake-ups for guest coroutines unpark the thread registered for the call
//!   (`Shared::guest_thread`); the guest never appears in the `parked` mask, so
//!   `wake_one` never picks it to steal work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

use super::{Shared, Task, Worker, CURRENT_WORKER};
use crate::runtime::process::{enqueue, Envelope, ProcRef};
use crate::runtime::types::Message;

/// What a guest keeps between calls (owned by the caller, e.g. an Interpreter): the
/// worker state of its last call — its coroutine slots and pooled stacks — so a call neither
/// maps a fresh stack nor allocates a worker (a script function called from the host is a
/// few hundred nanoseconds, and the worker's allocations were a visible part of it).
#[derive(Default)]
pub struct GuestStacks(Option<IdleWorker>, Option<GuestDone>);

impl GuestStacks {
    /// A done signal for a call from this thread: the one of the previous call, reset, when
    /// it was made on this thread (saves an allocation per call). Only for guest calls,
    /// whose signal nothing sets after the call is over.
    pub fn done_for_this_thread(&mut self) -> GuestDone {
        match &self.1 {
            Some(d) if d.0 .1.id() == std::thread::current().id() => {
                d.0 .0.store(false, Ordering::Relaxed);
                d.clone()
            }
            _ => {
                let d = GuestDone::new();
                self.1 = Some(d.clone());
                d
            }
        }
    }
}

/// A guest's worker between calls: no coroutine in any slot.
struct IdleWorker(Worker);

// SAFETY: a Worker is not Send only because its slots may hold coroutines (stackful, pinned
// to the thread that started them). An IdleWorker is made only by `IdleWorker::new`, which
// refuses a worker with a coroutine in any slot; what is left (slot generations, free
// list, pooled stacks, the runtime's `Arc<Shared>`) is plain data that may move threads.
#[allow(unsafe_code)]
unsafe impl Send for IdleWorker {}

impl IdleWorker {
    fn new(mut w: Worker) -> Option<IdleWorker> {
        if w.slots.iter().any(|s| s.co.is_some()) {
            return None;
        }
        for s in &mut w.slots {
            s.timeout = None;
        }
        Some(IdleWorker(w))
    }
}

/// Set once when the caller's job is over (it answered, or it was dropped unrun); wakes the
/// thread that made it.
#[derive(Clone)]
pub struct GuestDone(Arc<(AtomicBool, Thread)>);

impl Default for GuestDone {
    fn default() -> Self {
        GuestDone::new()
    }
}

impl GuestDone {
    /// A signal for the calling thread.
    pub fn new() -> GuestDone {
        GuestDone(Arc::new((AtomicBool::new(false), std::thread::current())))
    }

    /// Marks the job over and wakes its thread.
    pub fn set(&self) {
        self.0 .0.store(true, Ordering::Release);
        self.0 .1.unpark();
    }

    pub fn is_set(&self) -> bool {
        self.0 .0.load(Ordering::Acquire)
    }

    /// Parks the calling thread (the one that made the signal) until it is set.
    pub fn wait(&self) {
        while !self.is_set() {
            std::thread::park();
        }
    }
}

impl Shared {
    /// The index of the guest queue (after the workers').
    pub(crate) fn guest_index(&self) -> usize {
        self.workers.len() - 1
    }

    /// Wakes the thread driving the guest queue (a resume was queued for it).
    pub(super) fn unpark_guest(&self) {
        if let Some(t) = self.guest_thread.lock().as_ref() {
            t.unpark();
        }
    }
}

/// Restores the thread's worker identity when the guest call ends (also by a panic).
struct Identity((usize, usize));

impl Drop for Identity {
    fn drop(&mut self) {
        let _ = CURRENT_WORKER.try_with(|c| c.set(self.0));
    }
}

/// Delivers `msg` to `p` and, if that makes `p` runnable, runs it on this thread until `done`
/// is set and no coroutine started here is left (see the module doc). `Err(msg)`, having
/// delivered nothing, when this thread is already a worker of this runtime or the runtime is
/// stopping (the caller then uses the ordinary path); `Ok(false)` when `p` no longer accepts
/// messages.
pub(crate) fn drive(
    sh: &Arc<Shared>,
    stacks: &mut GuestStacks,
    p: &ProcRef,
    msg: Message,
    done: &GuestDone,
) -> Result<bool, Message> {
    if sh.current_worker().is_some() || sh.stopping.load(Ordering::SeqCst) {
        return Err(msg);
    }
    let g = sh.guest_index();
    let _identity = Identity(CURRENT_WORKER.with(|c| c.replace((sh.id, g))));
    *sh.guest_thread.lock() = Some(std::thread::current());
    if enqueue(sh, p, Envelope::User { msg, reply: None }).is_err() {
        *sh.guest_thread.lock() = None;
        return Ok(false);
    }
    // The worker of the previous call on this runtime (its slots are all free: the loop
    // below only ends when no coroutine started here is left).
    let mut w = match stacks.0.take() {
        Some(IdleWorker(w)) if Arc::ptr_eq(&w.shared, sh) && w.id == g => w,
        _ => Worker::new(g, sh.clone()),
    };
    w.next_deadline = u64::MAX;
    loop {
        let task = sh.workers[g].q.lock().pop_front();
        match task {
            Some(Task::Run(q)) if q == *p => w.start(q),
            Some(Task::Run(q)) => {
                sh.injector.lock().push_back(q);
                sh.wake_one();
            }
            Some(Task::Resume { slot, gen }) => w.resume(slot, gen),
            None => {
                // Over when the job is (or can no longer run: the process exited).
                if (done.is_set() || !p.is_alive()) && w.slots.iter().all(|s| s.co.is_none()) {
                    break;
                }
                let now = sh.clock.now_ms();
                w.check_deadlines(now);
                if !sh.workers[g].q.lock().is_empty() {
                    continue;
                }
                // A wake-up between the check and the park leaves the token: park returns.
                if !sh.clock.is_manual() && w.next_deadline != u64::MAX {
                    let ms = w.next_deadline.saturating_sub(now).max(1);
                    std::thread::park_timeout(Duration::from_millis(ms));
                } else {
                    std::thread::park();
                }
            }
        }
    }
    *sh.guest_thread.lock() = None;
    stacks.0 = IdleWorker::new(w);
    Ok(true)
}
