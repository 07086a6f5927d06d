//! The scheduler: a small pool of worker threads, each driving coroutines from its own run
//! queue.
//!
//! * A **Run** task runs a process that has work on a **runner** coroutine; any worker may
//!   run it, so idle workers steal Run tasks. A process runs on at most one coroutine at a
//!   time (its `sched` flag), so handlers of one actor never overlap. A runner is made on a
//!   pooled stack; when its process run ends (the process idle) a pool worker keeps it as a
//!   spare for the next run (`Suspend::Idle`, one per worker; counted in `live_cos`
//!   but not busy, `busy_cos`) instead of retiring it, so a message to an idle actor starts
//!   no coroutine and touches no shared counter.
//! * A **Resume** task continues a suspended coroutine. Suspended coroutines are **pinned**
//!   to the worker that created them (kept in that worker's slot table, never shared), so a
//!   coroutine never changes threads and needs no `unsafe impl Send`. A wake-up for it is
//!   pushed to its owner's queue — or, from a coroutine of the same pool worker while that
//!   queue is empty, kept in `LOCAL_NEXT` and run next without the queue's lock.
//! * A sync call to an idle process on a pool worker hands the callee to the worker with
//!   the caller's suspension (`Handoff::next`): the callee runs at once on the same
//!   thread, ahead of queued work, and the caller's resumption queues at the back like any
//!   wake-up (elsewhere the callee's Run task goes to the front of the queue,
//!   `schedule_next`). A callee with nothing queued is handed over *claimed*, its behaviour
//!   and the message in hand (`process::enqueue_call`): its run takes no lock to start.
//!   With a spare runner at hand the caller switches to it itself instead
//!   (`Handoff::run_callee`) and goes on without suspending when the run ends idle with
//!   the caller next in line: two coroutine switches per round trip, no worker loop.
//! * A runner's suspension at the end of its run charges no stack (only a coroutine that
//!   stays suspended in a run is charged, `Worker::charge_stack`, and a probe of its
//!   resident pages is a system call).
//! * Preemption: a coroutine that uses its reduction budget yields and goes to the back of
//!   its worker's queue behind whatever became runnable meanwhile.
//! * Timeouts of waits are kept in the worker's slots (O(1) to arm and disarm); the worker
//!   scans them only when the earliest known deadline has passed.
//! * Stack cap: at most `max_coroutines` coroutines exist (each stack is two kernel
//!   mappings); a Run task that finds the cap reached (or cannot map a stack) waits in a
//!   queue until a coroutine finishes. The last eighth is reserved for processes someone is
//!   blocked on, which are also served first.

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use parking_lot::{Condvar, Mutex};

use crate::runtime::clock::{Clock, Fired, Timers};
use crate::runtime::config::Config;
use crate::runtime::cx::Cx;
use crate::runtime::process::{
    finish, Body, Claimed, EveryFn, ExitHook, Extras, Handed, Inner, Proc, ProcRef, RunRef, Sched,
    TaskFn,
};
use crate::runtime::threads::{LentThread, WorkerThread};
use crate::runtime::types::{ExitReason, NameError, Pid};
use crate::runtime::waiter::{Resume, WaitRef, Wake};
use crate::value::{Sym, Value};

mod guest;
pub(crate) mod sim;
mod worker;
pub(crate) use guest::{drive as drive_guest, drive_job as drive_guest_job};
pub use guest::{GuestDone, GuestStacks};
pub(crate) use worker::Worker;

/// What a coroutine tells its worker when it suspends.
pub(crate) enum Suspend {
    /// Preempted (or `yield_now`): run again after the others queued.
    Yield,
    /// Waiting on a waiter; with a deadline at which the worker completes it with `Timeout`
    /// (the waiter by address: it is the process's `waiting`, see [`WaitRef`]).
    Wait { timeout: Option<(u64, WaitRef)> },
    /// A runner coroutine's process run is over: it can run another one (resumed with a
    /// [`Handoff::start`] set) or, resumed without, returns (see `Worker::start_one`).
    Idle,
}

/// The hand-offs between a pool worker and the runner coroutines it made, in one record
/// the worker and each runner share (`Rc`: a runner never leaves its worker's thread). A
/// thread-local per hand-off was an out-of-line `LocalKey::with` with a check for its
/// destructor's registration; passing them as resume or suspend values made corosensei's
/// switch copy them and stop being inlined.
pub(crate) struct Handoff {
    /// The process run a runner picks up when it is started or resumed from the spares (the
    /// process, its wake-up address and what a sync call claimed); empty when a spare is
    /// retired.
    pub(crate) start: Cell<Option<(RunRef, Wake, Option<Claimed>)>>,
    /// Set by a runner just before it suspends in a sync call (read by the worker's `drive`
    /// right after): the idle callee, which the worker runs at once (`Cx::call`'s hand-off).
    pub(crate) next: Cell<Option<Handed>>,
    /// One object the code running on this worker's runners keeps between process runs
    /// (the interpreter's evaluation context: [`Cx::take_local`], [`Cx::keep_local`]). The
    /// record reaches it without a thread-local look-up (two per message through
    /// [`Shared::worker_local_take`] and its `put`: each checks the thread's worker identity
    /// and borrows a `RefCell`); the worker drops it when it stops.
    /// Kept with its type's id, so taking it back compares the id with a constant (a
    /// `dyn Any` downcast asks the object's vtable: an indirect call per message).
    pub(crate) local: Cell<Option<(TypeId, Box<dyn Any>)>>,
    /// The emptied argument vector of the last message handled here, for the next sync
    /// call made here ([`Cx::spare_args`], [`Cx::keep_args`]): no allocation per call, and
    /// no thread-local look-up for it either.
    pub(crate) args: Cell<Vec<Value>>,
    /// The worker's spare runner (one: each holds a stack, like a pooled stack; more
    /// would only pin memory): kept here rather than in the worker so that a sync caller on one of its runners can switch to it straight
    /// from its own coroutine (`Handoff::run_callee`).
    pub(in crate::runtime) spare: Cell<Option<Spare>>,
    /// A runner that a sync caller switched to directly and that did not end its run
    /// there (it waits, was preempted, returned or failed), for the worker to file as
    /// if it had resumed it: set just before the caller suspends, read by the `drive`
    /// that resumed the caller.
    pub(in crate::runtime) parked: Cell<Option<Parked>>,
    /// The index of the worker this record belongs to.
    pub(crate) worker: usize,
}

/// A runner coroutine of a pool worker.
pub(in crate::runtime) type Co =
    corosensei::Coroutine<(), Suspend, usize, crate::runtime::stack::PooledStack>;

/// A spare runner: its slot and the slot's generation (the worker's slot table is not
/// reachable from a runner; the worker copies the generation back when it takes the spare).
pub(in crate::runtime) struct Spare {
    pub(in crate::runtime) slot: u32,
    pub(in crate::runtime) gen: u32,
    pub(in crate::runtime) co: Co,
}

/// How a runner's resume ended: what `corosensei` answers, or the panic it let through.
pub(in crate::runtime) type Resumed =
    std::thread::Result<corosensei::CoroutineResult<Suspend, usize>>;

/// A runner a caller ran directly that the worker must file (see [`Handoff::parked`]).
pub(in crate::runtime) struct Parked {
    pub(in crate::runtime) spare: Spare,
    pub(in crate::runtime) r: Resumed,
    /// The stack depth it suspended at (`SUSPEND_DEPTH` when it returned).
    pub(in crate::runtime) depth: usize,
}

impl Handoff {
    pub(crate) fn new(worker: usize) -> Handoff {
        Handoff {
            start: Cell::new(None),
            next: Cell::new(None),
            local: Cell::new(None),
            args: Cell::new(Vec::new()),
            spare: Cell::new(None),
            parked: Cell::new(None),
            worker,
        }
    }
}

/// Input a runtime's idle workers wait on instead of sleeping: a named node's connections,
/// which a worker with nothing to run polls itself (as the BEAM's schedulers poll their
/// ports), so a message from a peer is read, delivered and run on one thread with one
/// wake-up. Installed with [`RtHandle::set_io`]; one idle worker at a time waits in it,
/// the others park. What it reads it handles on the calling worker (a process it makes
/// runnable lands on that worker's own queue).
pub trait IoWait: Send + Sync {
    /// Waits until input came (and was handled), [`IoWait::wake`] was called, or
    /// `timeout` passed (None: no limit); false at once when another thread waits in it
    /// (the worker then parks as usual: [`Shared::unpark`] also unparks its thread).
    /// It returns once it handled anything (a connection's end too): what it handled may
    /// have made work for the calling worker (a completed wait of one of its coroutines,
    /// a process scheduled on its queue), and nobody else wakes a worker for work it made
    /// itself — it looks at its queue when the wait returns.
    fn wait(&self, timeout: Option<std::time::Duration>) -> bool;
    /// Handles input that is there, without waiting (a busy worker between tasks).
    fn poll(&self);
    /// Ends a [`IoWait::wait`] now or, if none is in progress, the next one (any thread).
    fn wake(&self);
    /// The runtime stops: no worker will wait in it again.
    fn released(&self) {}
}

/// `Shared::io_worker` when no worker waits in the input.
const NO_IO_WORKER: usize = usize::MAX;

pub(crate) enum Task {
    Run(ProcRef),
    Resume { slot: u32, gen: u32 },
}

pub(crate) struct WorkerQ {
    q: Mutex<VecDeque<Task>>,
    /// `q`'s length, written under its lock and read without it (every push and pop
    /// updates it, the guest loop's too: `guest::pop_guest`).
    len: AtomicUsize,
    thread: OnceLock<Thread>,
    /// A number for the coroutine resume this worker is inside, 0 when it is between
    /// resumes: shutdown tells a worker stuck in one long resume (an opaque library call)
    /// from one that keeps yielding, and does not wait for the former.
    pub driving: AtomicU64,
    /// Spare runners this worker keeps (written by the worker only, plain stores): they are
    /// counted in `Shared::live_cos` but are not busy (`Shared::busy_cos`).
    spares: AtomicUsize,
}

static NEXT_RUNTIME_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// (runtime id, worker index) of the current thread, if it is a worker. Plain numbers
    /// only: coroutines never migrate, so this stays true across suspensions.
    static CURRENT_WORKER: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// One object the code running on this worker thread keeps between process runs (the
    /// interpreter's evaluation context: no pool lock per message). Only pool workers use
    /// it (never a guest thread, which belongs to an embedder), and the worker drops it
    /// when it stops.
    static WORKER_LOCAL: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
    /// A resumption (slot, generation) a coroutine on this pool worker queued for another
    /// coroutine of the same worker while the worker's queue was empty: run next, without
    /// the queue's lock (`Shared::push_resume`; taken at the top of the worker loop).
    static LOCAL_NEXT: Cell<Option<(u32, u32)>> = const { Cell::new(None) };
    /// Bytes of its stack a coroutine had used when it last suspended (set by the
    /// coroutine, read by the `drive` that resumed it: `Worker::charge_stack`).
    pub(crate) static SUSPEND_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Options of [`RtHandle::spawn_opts`] / [`RtHandle::spawn_task_opts`].
#[derive(Clone)]
pub struct SpawnOpts {
    /// Register under this name atomically with the spawn.
    pub name: Option<Sym>,
    /// A runtime service: numbered apart (`<0.N.1>`), may use `bt_` names.
    pub service: bool,
    /// Kind of process for snapshots (`actor`, `main`, `timer`, `callback`, `worker`, …).
    pub label: &'static str,
    /// Free data for snapshots (e.g. the actor's class).
    pub info: Value,
    /// Receive exit signals of linked processes as [`Signal::Exit`] instead of dying.
    pub trap_exits: bool,
    /// Link to this process at birth.
    pub link: Option<ProcRef>,
}

impl Default for SpawnOpts {
    fn default() -> Self {
        SpawnOpts {
            name: None,
            service: false,
            label: "actor",
            info: Value::Nil,
            trap_exits: false,
            link: None,
        }
    }
}

/// A cheap, cloneable handle to a runtime, usable from any thread and any process.
#[derive(Clone)]
pub struct RtHandle(pub(crate) Arc<Shared>);

pub(crate) struct Shared {
    pub cfg: Config,
    id: usize,
    /// The workers' queues, then the guest queue (`guest`: a caller running one process).
    pub workers: Box<[WorkerQ]>,
    /// The thread driving the guest queue now, if any.
    guest_thread: Mutex<Option<Thread>>,
    /// The worker and timer threads, started on first need (`runtime::threads`).
    pub(crate) threads: crate::runtime::threads::Threads<Shared>,
    injector: Mutex<VecDeque<ProcRef>>,
    parked: AtomicU64,
    pub shutdown: AtomicBool,
    pub stopping: AtomicBool,
    pub live_cos: AtomicUsize,
    pub max_cos: usize,
    /// Processes waiting for a stack: (with blocked sync callers, others). The first kind is
    /// served first and may use the reserve, so a server is never starved of a stack by the
    /// very callers waiting on it.
    stack_waiters: Mutex<(VecDeque<ProcRef>, VecDeque<ProcRef>)>,
    /// Coroutines kept for processes that have blocked sync callers.
    reserve: usize,
    /// Length of `stack_waiters`, read without the lock on the hot path.
    stack_waiting: AtomicUsize,
    /// Live processes by (service, number): spawn order within each kind.
    pub procs: Mutex<crate::runtime::proctable::ProcTable<ProcRef>>,
    next_number: AtomicU64,
    next_service: AtomicU64,
    pub next_ref: AtomicU64,
    pub names: Mutex<HashMap<Sym, ProcRef>>,
    pub clock: Clock,
    pub timers: Timers<TaskFn, EveryFn>,
    pub drained: (Mutex<()>, Condvar),
    /// Rate limits of the log lines, per call site.
    log_limit: bt_base::base::log::Limiter,
    /// The deterministic scheduler's state, when the runtime is simulated (`sim`).
    pub(crate) sim: Option<Box<sim::Sim>>,
    /// The input idle workers wait on ([`IoWait`]), if installed; `io_on` mirrors whether.
    io: Mutex<Option<Arc<dyn IoWait>>>,
    io_on: AtomicBool,
    /// The worker waiting in `io` now, or [`NO_IO_WORKER`].
    io_worker: AtomicUsize,
}

/// Starting a runtime's threads, which run the scheduler's workers and timers.
impl crate::runtime::threads::Threads<Shared> {
    pub(crate) fn set_owner(&self, sh: &Arc<Shared>) {
        let _ = self.me.set(Arc::downgrade(sh));
    }

    fn owner(&self) -> Option<Arc<Shared>> {
        self.me.get().and_then(std::sync::Weak::upgrade)
    }

    /// Starts the worker threads unless they run already (or the runtime is shutting down).
    pub(crate) fn ensure_workers(&self) {
        self.start_workers(false, false);
    }

    /// Starts the first worker thread, unless one runs already, before any work is queued
    /// for it (`RtHandle::start_first_worker`).
    pub(crate) fn start_first_early(&self) {
        let none = self.workers.lock().is_empty();
        if none {
            self.start_workers(true, true);
        }
    }

    /// Takes one of the early-started workers' first looks for work, if one is left
    /// (`starting`): whether a worker still starting will find the work just queued.
    pub(crate) fn take_starting(&self) -> bool {
        self.starting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Starts worker threads unless they run already (or the runtime is shutting down):
    /// with `first_alone`, only the first one when none runs yet (the rest when called again).
    /// With `early`, before work is queued for them: each counts in `starting` until it
    /// first looks for work, and work queued meanwhile takes one of those looks instead of
    /// starting another worker.
    fn start_workers(&self, first_alone: bool, early: bool) {
        if self.workers_started.load(Ordering::Acquire) {
            return;
        }
        let Some(sh) = self.owner() else { return };
        let mut hs = self.workers.lock();
        if self.workers_started.load(Ordering::Acquire) || sh.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let account = self.account.get().copied();
        let upto = if first_alone && hs.is_empty() {
            sh.cfg.workers.min(1)
        } else {
            sh.cfg.workers
        };
        for i in hs.len()..upto {
            let s = sh.clone();
            if early {
                self.starting.fetch_add(1, Ordering::SeqCst);
            }
            let body = move || {
                Self::charge_this_thread(account);
                Worker::new(i, s).run()
            };
            // The first worker, started before work is queued for it (`bt run`), runs on a
            // thread about to end when there is one (the library thread: its stack and
            // allocator heap are made already), or on a thread of its own.
            let body: Box<dyn FnOnce() + Send> = if early && i == 0 {
                let lent = std::sync::Arc::new(LentThread::default());
                let done = lent.done_on_drop();
                match bt_base::base::spare_thread::give(Box::new(move || {
                    let _done = done;
                    body()
                })) {
                    Ok(()) => {
                        hs.push(WorkerThread::Lent(lent));
                        continue;
                    }
                    Err(job) => job,
                }
            } else {
                Box::new(body)
            };
            match std::thread::Builder::new()
                .name(format!("bt-worker-{i}"))
                .spawn(body)
            {
                Ok(h) => hs.push(WorkerThread::Own(h)),
                Err(e) => {
                    if early {
                        self.take_starting();
                    }
                    // Tried again at the next wake-up.
                    sh.log(&format!("runtime: cannot start a worker thread: {e}"));
                    return;
                }
            }
        }
        if hs.len() >= sh.cfg.workers {
            self.workers_started.store(true, Ordering::Release);
        }
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
                s.timers
                    .run_thread(|| s.clock.now_ms(), |now| s.fire_timers(now))
            }) {
            Ok(h) => {
                *t = Some(h);
                self.timer_started.store(true, Ordering::Release);
            }
            Err(e) => sh.log(&format!("runtime: cannot start the timer thread: {e}")),
        }
    }
}

impl Resume for Shared {
    fn push_resume(&self, worker: usize, slot: u32, gen: u32) {
        Shared::push_resume(self, worker, slot, gen)
    }
}

impl Shared {
    /// Writes a line to the configured sink, rate-limited per call site.
    #[track_caller]
    pub(crate) fn log(&self, line: &str) {
        self.log_limit.write(&self.cfg.log, line)
    }

    pub(crate) fn new(cfg: Config, max_cos: usize) -> Shared {
        let n = cfg.workers.clamp(1, 64);
        let clock = if cfg.sim.is_some() {
            Clock::simulated()
        } else {
            Clock::new(cfg.manual_clock)
        };
        let sim = cfg.sim.clone().map(|c| Box::new(sim::Sim::new(c)));
        Shared {
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            workers: (0..n + 1)
                .map(|_| WorkerQ {
                    q: Mutex::new(VecDeque::new()),
                    len: AtomicUsize::new(0),
                    thread: OnceLock::new(),
                    driving: AtomicU64::new(0),
                    spares: AtomicUsize::new(0),
                })
                .collect(),
            guest_thread: Mutex::new(None),
            threads: Default::default(),
            injector: Mutex::new(VecDeque::new()),
            parked: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            live_cos: AtomicUsize::new(0),
            max_cos,
            stack_waiters: Mutex::new((VecDeque::new(), VecDeque::new())),
            reserve: (max_cos / 8).max(1),
            stack_waiting: AtomicUsize::new(0),
            procs: Mutex::new(Default::default()),
            next_number: AtomicU64::new(1),
            next_service: AtomicU64::new(1),
            next_ref: AtomicU64::new(1),
            names: Mutex::new(HashMap::new()),
            clock,
            log_limit: Default::default(),
            timers: Timers::default(),
            drained: (Mutex::new(()), Condvar::new()),
            sim,
            io: Mutex::new(None),
            io_on: AtomicBool::new(false),
            io_worker: AtomicUsize::new(NO_IO_WORKER),
            cfg,
        }
    }

    /// Installs (or with None removes) the input idle workers wait on, and starts the
    /// workers (the input is read only by them).
    pub(crate) fn set_io(&self, io: Option<Arc<dyn IoWait>>) {
        if self.sim.is_some() {
            return;
        }
        let on = io.is_some();
        let old = std::mem::replace(&mut *self.io.lock(), io);
        self.io_on.store(on, Ordering::SeqCst);
        if let Some(old) = old {
            old.wake();
        }
        if on {
            self.threads.ensure_workers();
            // A worker parked before the input was there: let it wait in it instead.
            self.wake_one();
        }
    }

    /// The installed input, if worker `w` may wait in it (no other worker does): `w` is
    /// then the one [`Shared::unpark`] wakes through it until [`Shared::leave_io`].
    pub(crate) fn enter_io(&self, w: usize) -> Option<Arc<dyn IoWait>> {
        if !self.io_on.load(Ordering::Relaxed) {
            return None;
        }
        let io = self.io.lock().clone()?;
        self.io_worker
            .compare_exchange(NO_IO_WORKER, w, Ordering::SeqCst, Ordering::SeqCst)
            .ok()
            .map(|_| io)
    }

    pub(crate) fn leave_io(&self) {
        self.io_worker.store(NO_IO_WORKER, Ordering::SeqCst);
    }

    /// Handles input that is there (a busy worker between tasks, now and then).
    pub(crate) fn poll_io(&self) {
        if self.io_on.load(Ordering::Relaxed) {
            let io = self.io.lock().clone();
            if let Some(io) = io {
                io.poll();
            }
        }
    }

    /// The runtime stops: the input is told, and no worker waits in it again.
    pub(crate) fn release_io(&self) {
        self.io_on.store(false, Ordering::SeqCst);
        let io = self.io.lock().take();
        if let Some(io) = io {
            // The worker waiting in it (if any) sees the shutdown.
            io.wake();
            io.released();
        }
    }

    /// A process run's reduction budget under the simulation (1 otherwise).
    pub(crate) fn sim_budget(&self) -> u32 {
        match &self.sim {
            Some(s) => s.core.lock().budget(),
            None => 1,
        }
    }

    /// The worker index if the current thread is one of this runtime's workers.
    /// Coroutines alive and not kept as spare runners (running or suspended): what the
    /// stack cap limits and shutdown drains. `live_cos` counts the spares too, so a message
    /// that a spare runner runs touches no shared counter.
    pub(crate) fn busy_cos(&self) -> usize {
        let live = self.live_cos.load(Ordering::SeqCst);
        live.saturating_sub(self.spare_cos())
    }

    /// Spare runners kept by all workers (each worker's own count, read without locks).
    pub(crate) fn spare_cos(&self) -> usize {
        self.workers
            .iter()
            .map(|w| w.spares.load(Ordering::Relaxed))
            .sum()
    }

    pub(crate) fn current_worker(&self) -> Option<usize> {
        let (rt, w) = CURRENT_WORKER.with(Cell::get);
        (rt == self.id).then_some(w)
    }

    /// Whether the current thread is one of this runtime's pool workers (not a guest).
    pub(crate) fn on_pool_worker(&self) -> bool {
        let (rt, w) = CURRENT_WORKER.with(Cell::get);
        rt == self.id && w < self.guest_index()
    }

    /// Takes the object this pool worker thread keeps ([`Shared::worker_local_put`]) if it
    /// is a `T` for which `fits` holds; `None` on other threads.
    #[inline]
    pub(crate) fn worker_local_take<T: 'static>(
        &self,
        fits: impl FnOnce(&T) -> bool,
    ) -> Option<Box<T>> {
        if !self.on_pool_worker() {
            return None;
        }
        WORKER_LOCAL.with(|c| {
            let mut c = c.borrow_mut();
            match c.take()?.downcast::<T>() {
                Ok(t) if fits(&t) => Some(t),
                Ok(t) => {
                    *c = Some(t);
                    None
                }
                Err(other) => {
                    *c = Some(other);
                    None
                }
            }
        })
    }

    /// Keeps `v` on this pool worker thread until the next [`Shared::worker_local_take`];
    /// gives it back when the thread is no pool worker of this runtime or keeps one already.
    #[inline]
    pub(crate) fn worker_local_put<T: 'static>(&self, v: Box<T>) -> Option<Box<T>> {
        if !self.on_pool_worker() {
            return Some(v);
        }
        WORKER_LOCAL.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_some() {
                return Some(v);
            }
            *c = Some(v);
            None
        })
    }

    /// Makes a process with work runnable: on the current worker's own queue when called
    /// from a worker (locality: the sender usually suspends next), else on the injector.
    pub(crate) fn schedule(&self, p: ProcRef) {
        match self.current_worker() {
            Some(w) => {
                if self.push_task(w, Task::Run(p), false) > 1 {
                    self.wake_one();
                }
            }
            None => {
                self.injector.lock().push_back(p);
                self.wake_one();
            }
        }
    }

    /// Pushes a task on worker `w`'s queue (front or back); answers the new length.
    #[inline]
    fn push_task(&self, w: usize, t: Task, front: bool) -> usize {
        let wq = &self.workers[w];
        let mut q = wq.q.lock();
        if front {
            q.push_front(t);
        } else {
            q.push_back(t);
        }
        wq.len.store(q.len(), Ordering::Relaxed);
        q.len()
    }

    /// Like [`Shared::schedule`] for the target of a sync call whose caller is about to
    /// suspend: on a worker it goes to the *front* of the worker's own queue, so the callee
    /// runs right after the caller suspends, on the same thread (no hand-off, no wake-up; the
    /// caller's resumption then queues at the back, behind the work that was waiting). Idle
    /// workers are not woken for it: this worker takes it next. Elsewhere as `schedule`.
    pub(crate) fn schedule_next(&self, p: ProcRef) {
        match self.current_worker() {
            Some(w) => {
                self.push_task(w, Task::Run(p), true);
            }
            None => {
                self.injector.lock().push_back(p);
                self.wake_one();
            }
        }
    }

    /// Queues the resumption of a coroutine on the worker that owns it.
    /// From a coroutine running on that very pool worker while its queue is empty (a callee
    /// answering its caller on the same thread), the resumption is kept in `LOCAL_NEXT`
    /// instead: it is next either way, and this skips the queue's lock twice.
    pub(crate) fn push_resume(&self, worker: usize, slot: u32, gen: u32) {
        let wq = &self.workers[worker];
        if self.current_worker() == Some(worker)
            && worker < self.guest_index()
            && wq.driving.load(Ordering::Relaxed) != 0
            && wq.len.load(Ordering::Relaxed) == 0
            && LOCAL_NEXT.with(|c| c.get().is_none())
        {
            LOCAL_NEXT.with(|c| c.set(Some((slot, gen))));
            return;
        }
        self.push_task(worker, Task::Resume { slot, gen }, false);
        if worker == self.guest_index() {
            self.unpark_guest();
        } else if self.parked.load(Ordering::SeqCst) & (1 << worker) != 0
            // The worker itself (reading input while idle): it looks at its queue next.
            && self.current_worker() != Some(worker)
        {
            self.unpark(worker);
        }
    }

    /// The index of the guest queue (after the workers').
    pub(crate) fn guest_index(&self) -> usize {
        self.workers.len() - 1
    }

    /// Wakes the thread driving the guest queue (a resume was queued for it).
    fn unpark_guest(&self) {
        if let Some(t) = self.guest_thread.lock().as_ref() {
            t.unpark();
        }
    }

    fn unpark(&self, w: usize) {
        if self.io_worker.load(Ordering::SeqCst) == w {
            let io = self.io.lock().clone();
            if let Some(io) = io {
                io.wake();
            }
        }
        if let Some(t) = self.workers[w].thread.get() {
            t.unpark();
        }
    }

    /// Wakes one parked worker, if any, so it can steal queued work: one that sleeps
    /// rather than the one waiting for input (which then goes on reading). With no worker
    /// parked, starts the workers not running yet: the first alone when none runs (a
    /// program that never has two processes ready at once needs no second), the rest when
    /// every started one is busy. A worker looks for work when it starts.
    pub(crate) fn wake_one(&self) {
        let parked = self.parked.load(Ordering::SeqCst);
        // A worker started early (`RtHandle::start_first_worker`) and still starting finds
        // the work when it first looks: no other is started for it.
        if parked == 0 && !self.threads.take_starting() {
            self.threads.start_workers(true, false);
        }
        if parked != 0 {
            let io = self.io_worker.load(Ordering::Relaxed);
            let sleeping = if io < 64 { parked & !(1 << io) } else { parked };
            let pick = if sleeping != 0 { sleeping } else { parked };
            self.unpark(pick.trailing_zeros() as usize);
        }
    }

    pub(crate) fn wake_all(&self) {
        for w in 0..self.workers.len() {
            self.unpark(w);
        }
    }

    /// Removes an exited process from the table and the name registry.
    pub(crate) fn forget_process(&self, p: &ProcRef, name: Option<Sym>) {
        let pid = p.pid();
        self.procs.lock().remove(&(pid.service, pid.number));
        if let Some(n) = name {
            let mut names = self.names.lock();
            if names.get(&n).is_some_and(|q| q == p) {
                names.remove(&n);
            }
        }
    }

    /// Creates a process (the one place pids are numbered).
    /// `hook` runs when the process exits (installed before it can run).
    pub(crate) fn spawn_proc(
        &self,
        body: Body,
        opts: SpawnOpts,
        hook: Option<ExitHook>,
    ) -> Result<ProcRef, NameError> {
        let is_task = matches!(body, Body::Task(_));
        self.spawn_proc_with(is_task, move |_| body, opts, hook)
    }

    /// [`Shared::spawn_proc`] with the body made from the new process's handle, before the
    /// process is registered anywhere (nothing can message it yet).
    pub(crate) fn spawn_proc_with(
        &self,
        is_task: bool,
        make: impl FnOnce(&ProcRef) -> Body,
        opts: SpawnOpts,
        hook: Option<ExitHook>,
    ) -> Result<ProcRef, NameError> {
        if let Some(n) = opts.name {
            if n.as_str().starts_with("bt_") && !opts.service {
                return Err(NameError::Reserved);
            }
        }
        let mut names = opts.name.map(|_| self.names.lock());
        if let (Some(n), Some(names)) = (opts.name, names.as_ref()) {
            if names.contains_key(&n) {
                return Err(NameError::Registered);
            }
        }
        let counter = if opts.service {
            &self.next_service
        } else {
            &self.next_number
        };
        let number = counter.fetch_add(1, Ordering::Relaxed);
        let pid = Pid {
            node: self.cfg.node,
            number,
            service: opts.service,
        };
        let extra =
            (opts.trap_exits || opts.link.is_some() || hook.is_some() || opts.name.is_some()).then(
                || {
                    Box::new(Extras {
                        name: opts.name,
                        trap_exits: opts.trap_exits,
                        links: opts.link.iter().cloned().collect(),
                        exit_hooks: hook.into_iter().collect(),
                        ..Default::default()
                    })
                },
            );
        let p = ProcRef(Arc::new(Proc {
            pid,
            started_ms: self.clock.wall_ms(),
            label: opts.label,
            info: opts.info,
            exited: AtomicBool::new(false),
            lent_mail: AtomicBool::new(false),
            lent_busy: AtomicBool::new(false),
            inner: crate::runtime::spin::ProcMutex::new(Inner {
                sched: if is_task {
                    Sched::Scheduled
                } else {
                    Sched::Idle
                },
                reason: None,
                accepting: !is_task,
                mailbox: crate::runtime::mailbox::Mailbox::new(),
                body: None,
                current: None,
                waiting: Default::default(),
                extra,
            }),
        }));
        match make(&p) {
            Body::Actor(b) => p.0.inner.lock().body = Some(b),
            Body::Task(f) => p.0.inner.lock().extra().task = Some(f),
        }
        if let (Some(n), Some(names)) = (opts.name, names.as_mut()) {
            names.insert(n, p.clone());
        }
        drop(names);
        let fenced = {
            let mut t = self.procs.lock();
            t.insert((opts.service, number), p.clone());
            !opts.service && t.fence.is_some_and(|keep| keep != opts.label)
        };
        if let Some(other) = &opts.link {
            let linked = {
                let mut g = other.0.inner.lock();
                if g.reason.is_none() {
                    g.extra().links.push(p.clone());
                }
                g.exit_reason()
            };
            if let Some(r) = linked {
                p.0.inner.lock().extra().links.clear();
                crate::runtime::process::deliver_exit(self, &p, other.pid(), r);
            }
        }
        if self.stopping.load(Ordering::SeqCst) {
            finish(self, &p, ExitReason::Shutdown);
        } else if fenced {
            finish(self, &p, ExitReason::Killed);
        } else if is_task {
            self.schedule(p.clone());
        }
        Ok(p)
    }

    fn defer_for_stack(&self, p: ProcRef, serving: bool) {
        let mut q = self.stack_waiters.lock();
        if serving {
            q.0.push_back(p);
        } else {
            q.1.push_back(p);
        }
        self.stack_waiting
            .store(q.0.len() + q.1.len(), Ordering::SeqCst);
    }

    /// The next process to get a stack, given the coroutines alive now: one with blocked
    /// callers while under the cap, any other only below the reserve.
    fn next_stack_waiter(&self) -> Option<ProcRef> {
        if self.stack_waiting.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let live = self.busy_cos();
        let mut q = self.stack_waiters.lock();
        let p = if live >= self.max_cos {
            None
        } else if live + self.reserve >= self.max_cos {
            q.0.pop_front()
        } else {
            q.0.pop_front().or_else(|| q.1.pop_front())
        };
        self.stack_waiting
            .store(q.0.len() + q.1.len(), Ordering::SeqCst);
        p
    }

    /// Whether a process has someone blocked on it (a queued sync call, a stop, a signal).
    fn is_serving(p: &ProcRef) -> bool {
        let g = p.0.inner.lock();
        g.has_control()
            || match g.mailbox.front() {
                Some(crate::runtime::process::Envelope::User { reply, .. }) => reply.is_some(),
                Some(crate::runtime::process::Envelope::Stop(_)) => true,
                None => false,
            }
    }

    /// Fires every timer due at `now`, each in a fresh task process.
    pub(crate) fn fire_timers(&self, now: u64) {
        self.timers.fire_due(now, |f| match f {
            Fired::Once(f) => self.spawn_callback("timer", f),
            Fired::Every(g) => self.spawn_callback("timer", Box::new(move |cx: &mut Cx<'_>| g(cx))),
        })
    }

    /// Runs `f` in a fresh task process (monitor callbacks, timers).
    pub(crate) fn spawn_callback(&self, label: &'static str, f: TaskFn) {
        let opts = SpawnOpts {
            label,
            ..SpawnOpts::default()
        };
        let _ = self.spawn_proc(Body::Task(f), opts, None);
    }
}
