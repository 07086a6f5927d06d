//! The scheduler: a small pool of worker threads, each driving coroutines from its own run
//! queue.
//!
//! * A **Run** task starts a coroutine (on a pooled stack) for a process that has work; any
//!   worker may run it, so idle workers steal Run tasks. A process runs on at most one
//!   coroutine at a time (its `sched` flag), so handlers of one actor never overlap.
//! * A **Resume** task continues a suspended coroutine. Suspended coroutines are **pinned**
//!   to the worker that created them (kept in that worker's slot table, never shared), so a
//!   coroutine never changes threads and needs no `unsafe impl Send`. A wake-up for it is
//!   pushed to its owner's queue.
//! * A sync call to an idle process puts its Run task at the *front* of the caller's worker
//!   queue (`schedule_next`): the caller suspends next, so the callee runs at once on the
//!   same thread, and the caller's resumption queues at the back like any wake-up.
//! * Preemption: a coroutine that uses its reduction budget yields and goes to the back of
//!   its worker's queue behind whatever became runnable meanwhile.
//! * Timeouts of waits are kept in the worker's slots (O(1) to arm and disarm); the worker
//!   scans them only when the earliest known deadline has passed.
//! * Stack cap: at most `max_coroutines` coroutines exist (each stack is two kernel
//!   mappings); a Run task that finds the cap reached (or cannot map a stack) waits in a
//!   queue until a coroutine finishes. The last eighth is reserved for processes someone is
//!   blocked on, which are also served first.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use corosensei::{Coroutine, CoroutineResult, Yielder};
use parking_lot::{Condvar, Mutex};

use crate::runtime::api::{Config, RtHandle, SpawnOpts};
use crate::runtime::clock::{Clock, Timers};
use crate::runtime::cx::Cx;
use crate::runtime::process::{
    finish, run_body, Body, ExitHook, Extras, Inner, Proc, ProcRef, Sched, TaskFn,
};
use crate::runtime::stack::{PooledStack, KEEP_RESIDENT};
use crate::runtime::types::{CallError, ExitReason, NameError, Pid};
use crate::runtime::waiter::{Waiter, Wake};
use crate::value::Sym;

mod guest;
pub(crate) use guest::drive as drive_guest;
pub use guest::{GuestDone, GuestStacks};

/// What a coroutine tells its worker when it suspends.
pub(crate) enum Suspend {
    /// Preempted (or `yield_now`): run again after the others queued.
    Yield,
    /// Waiting on a waiter; with a deadline at which the worker completes it with `Timeout`.
    /// `next`: a sync call's idle callee, which the worker runs at once (the hand-off that
    /// replaces a trip through the queue).
    Wait {
        timeout: Option<(u64, Arc<Waiter>)>,
        next: Option<ProcRef>,
    },
    /// A runner finished its process's run and can run another one (see [`Worker::start`]).
    Idle,
}

pub(crate) enum Task {
    Run(ProcRef),
    Resume { slot: u32, gen: u32 },
}

pub(crate) struct WorkerQ {
    q: Mutex<VecDeque<Task>>,
    /// `q`'s length, written under its lock and read without it (pool workers only: the
    /// guest loop pops without updating it).
    len: AtomicUsize,
    thread: OnceLock<Thread>,
    /// A number for the coroutine resume this worker is inside, 0 when it is between
    /// resumes: shutdown tells a worker stuck in one long resume (an opaque library call)
    /// from one that keeps yielding, and does not wait for the former (issue 15).
    pub driving: AtomicU64,
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
    /// The process (and its wake-up address) a runner coroutine picks up when it is started
    /// or resumed from the spares (`Worker::start_one`); empty when a spare is retired.
    static HANDOFF: RefCell<Option<(ProcRef, Wake)>> = const { RefCell::new(None) };
}

/// Idle runner coroutines a pool worker keeps for the next process run (each holds one
/// stack, like a pooled stack; more would only pin memory).
const MAX_SPARES: usize = 1;

pub(crate) struct Shared {
    pub cfg: Config,
    id: usize,
    /// The workers' queues, then the guest queue (`guest`: a caller running one process).
    pub workers: Box<[WorkerQ]>,
    /// The thread driving the guest queue now, if any.
    guest_thread: Mutex<Option<Thread>>,
    /// The worker and timer threads, started on first need (`runtime::threads`).
    pub(crate) threads: crate::runtime::threads::Threads,
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
    pub procs: Mutex<crate::runtime::proctable::ProcTable>,
    next_number: AtomicU64,
    next_service: AtomicU64,
    pub next_ref: AtomicU64,
    pub names: Mutex<HashMap<Sym, ProcRef>>,
    pub clock: Clock,
    pub timers: Timers,
    pub drained: (Mutex<()>, Condvar),
}

impl Shared {
    pub(crate) fn new(cfg: Config, max_cos: usize) -> Shared {
        let n = cfg.workers.clamp(1, 64);
        let clock = Clock::new(cfg.manual_clock);
        Shared {
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            workers: (0..n + 1)
                .map(|_| WorkerQ {
                    q: Mutex::new(VecDeque::new()),
                    len: AtomicUsize::new(0),
                    thread: OnceLock::new(),
                    driving: AtomicU64::new(0),
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
            timers: Timers::default(),
            drained: (Mutex::new(()), Condvar::new()),
            cfg,
        }
    }

    /// The worker index if the current thread is one of this runtime's workers.
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
        } else if self.parked.load(Ordering::SeqCst) & (1 << worker) != 0 {
            self.unpark(worker);
        }
    }

    fn unpark(&self, w: usize) {
        if let Some(t) = self.workers[w].thread.get() {
            t.unpark();
        }
    }

    /// Wakes one parked worker, if any, so it can steal queued work.
    pub(crate) fn wake_one(&self) {
        self.threads.ensure_workers();
        let parked = self.parked.load(Ordering::SeqCst);
        if parked != 0 {
            self.unpark(parked.trailing_zeros() as usize);
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
        let extra = (opts.trap_exits || opts.link.is_some() || hook.is_some()).then(|| {
            Box::new(Extras {
                trap_exits: opts.trap_exits,
                links: opts.link.iter().cloned().collect(),
                exit_hooks: hook.into_iter().collect(),
                ..Default::default()
            })
        });
        let p = ProcRef(Arc::new(Proc {
            pid,
            started_ms: self.clock.wall_ms(),
            label: opts.label,
            info: opts.info,
            exited: AtomicBool::new(false),
            inner: Mutex::new(Inner {
                sched: if is_task {
                    Sched::Scheduled
                } else {
                    Sched::Idle
                },
                reason: None,
                accepting: !is_task,
                mailbox: crate::runtime::mailbox::Mailbox::new(),
                control: None,
                body: None,
                current: None,
                waiting: None,
                name: opts.name,
                extra,
            }),
        }));
        let body = make(&p);
        p.0.inner.lock().body = Some(body);
        if let (Some(n), Some(names)) = (opts.name, names.as_mut()) {
            names.insert(n, p.clone());
        }
        drop(names);
        self.procs.lock().insert((opts.service, number), p.clone());
        if let Some(other) = &opts.link {
            let linked = {
                let mut g = other.0.inner.lock();
                if g.reason.is_none() {
                    g.extra().links.push(p.clone());
                }
                g.reason.clone()
            };
            if let Some(r) = linked {
                p.0.inner.lock().extra().links.clear();
                crate::runtime::process::deliver_exit(self, &p, other.pid(), r);
            }
        }
        if self.stopping.load(Ordering::SeqCst) {
            finish(self, &p, ExitReason::Shutdown);
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
        let live = self.live_cos.load(Ordering::SeqCst);
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

    /// Runs `f` in a fresh task process (monitor callbacks, timers).
    pub(crate) fn spawn_callback(&self, label: &'static str, f: TaskFn) {
        let opts = SpawnOpts {
            label,
            ..SpawnOpts::default()
        };
        let _ = self.spawn_proc(Body::Task(f), opts, None);
    }
}

type Co = Coroutine<(), Suspend, usize, PooledStack>;

struct Slot {
    gen: u32,
    co: Option<Co>,
    timeout: Option<(u64, Arc<Waiter>)>,
}

/// One worker thread's private state.
pub(crate) struct Worker {
    id: usize,
    shared: Arc<Shared>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    pool: Vec<PooledStack>,
    next_deadline: u64,
    ticks: u32,
    warned_mmap: bool,
    /// Serial number of the last resume (`WorkerQ::driving`; per worker, no shared counter).
    resumes: u64,
    /// Idle runner coroutines (slot, coroutine) kept for the next process run (pool workers
    /// only, at most [`MAX_SPARES`]); not counted in `live_cos`.
    spares: Vec<(u32, Co)>,
    /// A sync call's callee handed over with its caller's suspension, run next.
    run_next: Option<ProcRef>,
}

impl Worker {
    pub(super) fn new(id: usize, shared: Arc<Shared>) -> Worker {
        Worker {
            id,
            shared,
            slots: Vec::new(),
            free: Vec::new(),
            pool: Vec::new(),
            next_deadline: u64::MAX,
            ticks: 0,
            warned_mmap: false,
            resumes: 0,
            spares: Vec::new(),
            run_next: None,
        }
    }

    /// The worker loop; returns at shutdown.
    pub(super) fn run(mut self) {
        let _ = self.shared.workers[self.id]
            .thread
            .set(std::thread::current());
        CURRENT_WORKER.with(|c| c.set((self.shared.id, self.id)));
        while !self.shared.shutdown.load(Ordering::Acquire) {
            self.ticks = self.ticks.wrapping_add(1);
            if self.ticks.is_multiple_of(64) {
                let now = self.shared.clock.now_ms();
                self.check_deadlines(now);
            }
            if let Some((slot, gen)) = LOCAL_NEXT.with(Cell::take) {
                self.resume(slot, gen);
                continue;
            }
            match self.next_task() {
                Some(Task::Run(p)) => self.start(p),
                Some(Task::Resume { slot, gen }) => self.resume(slot, gen),
                None => self.idle(),
            }
        }
        // Spare runners hold no process: resumed with nothing to run, they return.
        for (_, mut co) in std::mem::take(&mut self.spares) {
            let _ = co.resume(());
        }
        LOCAL_NEXT.with(|c| c.set(None));
        // Coroutines still suspended at shutdown ignored their kill: leak their stacks rather
        // than force-unwinding foreign frames.
        for s in &mut self.slots {
            if let Some(co) = s.co.take() {
                std::mem::forget(co);
            }
        }
        drop(WORKER_LOCAL.with(|c| c.borrow_mut().take()));
        CURRENT_WORKER.with(|c| c.set((0, 0)));
    }

    fn next_task(&mut self) -> Option<Task> {
        let sh = &self.shared;
        if self.ticks.is_multiple_of(61) {
            if let Some(p) = sh.injector.lock().pop_front() {
                return Some(Task::Run(p));
            }
        }
        let wq = &sh.workers[self.id];
        if wq.len.load(Ordering::Relaxed) != 0 {
            let mut q = wq.q.lock();
            let t = q.pop_front();
            wq.len.store(q.len(), Ordering::Relaxed);
            if t.is_some() {
                return t;
            }
        }
        if let Some(p) = sh.injector.lock().pop_front() {
            return Some(Task::Run(p));
        }
        self.steal().map(Task::Run)
    }

    fn steal(&self) -> Option<ProcRef> {
        let n = self.shared.workers.len();
        for i in 1..n {
            let v = (self.id + i) % n;
            let wq = &self.shared.workers[v];
            let mut q = wq.q.lock();
            if let Some(pos) = q.iter().position(|t| matches!(t, Task::Run(_))) {
                let t = q.remove(pos);
                wq.len.store(q.len(), Ordering::Relaxed);
                if let Some(Task::Run(p)) = t {
                    return Some(p);
                }
            }
        }
        None
    }

    fn has_work(&self) -> bool {
        let sh = &self.shared;
        !sh.workers[self.id].q.lock().is_empty()
            || !sh.injector.lock().is_empty()
            || sh
                .workers
                .iter()
                .any(|w| w.q.lock().iter().any(|t| matches!(t, Task::Run(_))))
    }

    fn idle(&mut self) {
        let sh = self.shared.clone();
        let now = sh.clock.now_ms();
        self.check_deadlines(now);
        let waiting_for_stack = sh.stack_waiting.load(Ordering::SeqCst) > 0;
        if waiting_for_stack {
            if let Some(p) = sh.next_stack_waiter() {
                self.start(p);
                return;
            }
        }
        let bit = 1u64 << self.id;
        sh.parked.fetch_or(bit, Ordering::SeqCst);
        if self.has_work() || sh.shutdown.load(Ordering::SeqCst) {
            sh.parked.fetch_and(!bit, Ordering::SeqCst);
            return;
        }
        let mut wait_ms = None;
        if !sh.clock.is_manual() && self.next_deadline != u64::MAX {
            wait_ms = Some(self.next_deadline.saturating_sub(now).max(1));
        }
        if waiting_for_stack {
            wait_ms = Some(wait_ms.map_or(10, |m: u64| m.min(10)));
        }
        match wait_ms {
            Some(ms) => std::thread::park_timeout(Duration::from_millis(ms)),
            None => std::thread::park(),
        }
        sh.parked.fetch_and(!bit, Ordering::SeqCst);
        let now = sh.clock.now_ms();
        self.check_deadlines(now);
    }

    /// Completes every wait whose deadline has passed with `Timeout`.
    fn check_deadlines(&mut self, now: u64) {
        if now < self.next_deadline {
            return;
        }
        let mut next = u64::MAX;
        for s in &mut self.slots {
            if let Some((d, _)) = &s.timeout {
                if *d <= now {
                    if let Some((_, w)) = s.timeout.take() {
                        w.complete(&self.shared, Err(CallError::Timeout));
                    }
                } else {
                    next = next.min(*d);
                }
            }
        }
        self.next_deadline = next;
    }

    /// Runs `p` (a Run task), then whatever that handed over (a sync call's callee).
    fn start(&mut self, p: ProcRef) {
        self.start_one(p);
        self.run_handed_over();
    }

    /// Continues a suspended coroutine, then whatever that handed over.
    fn resume(&mut self, slot: u32, gen: u32) {
        self.resume_one(slot, gen);
        self.run_handed_over();
    }

    /// Runs the callees that sync calls handed to this worker with their suspension (a
    /// loop, not recursion: a chain of calls hands over one callee after another).
    fn run_handed_over(&mut self) {
        while let Some(p) = self.run_next.take() {
            self.start_one(p);
        }
    }

    /// Starts a process run on a **runner** coroutine: a spare one from an earlier run when
    /// this worker keeps one (no coroutine set-up, no stack from the pool), else a new one.
    /// A runner runs one process run (`run_body`), then on a pool worker suspends with
    /// `Suspend::Idle` to be kept for the next run (`drive`); on the guest, or after a run
    /// that went deep into its stack, it returns and is retired.
    fn start_one(&mut self, p: ProcRef) {
        if !p.is_alive() {
            return;
        }
        let sh = &self.shared;
        let live = sh.live_cos.fetch_add(1, Ordering::SeqCst);
        if live + sh.reserve >= sh.max_cos {
            // Near the cap: the last `reserve` stacks only go to processes someone waits on.
            let serving = Shared::is_serving(&p);
            if live >= sh.max_cos || !serving {
                sh.live_cos.fetch_sub(1, Ordering::SeqCst);
                sh.defer_for_stack(p, serving);
                return;
            }
        }
        if let Some((slot, co)) = self.spares.pop() {
            let wake = Wake::Co {
                worker: self.id,
                slot,
                gen: self.slots[slot as usize].gen,
            };
            HANDOFF.with(|h| *h.borrow_mut() = Some((p, wake)));
            self.drive(slot, co);
            return;
        }
        let sh = self.shared.clone();
        let stack = match self.pool.pop() {
            Some(s) => s,
            None => match PooledStack::new(sh.cfg.stack_size) {
                Ok(s) => s,
                Err(e) => {
                    if !self.warned_mmap {
                        self.warned_mmap = true;
                        (sh.cfg.log)(&format!("runtime: cannot map a coroutine stack ({e}); work is queued until a stack is free"));
                    }
                    self.retire_count();
                    let serving = Shared::is_serving(&p);
                    sh.defer_for_stack(p, serving);
                    return;
                }
            },
        };
        let slot = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    gen: 0,
                    co: None,
                    timeout: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let wake = Wake::Co {
            worker: self.id,
            slot,
            gen: self.slots[slot as usize].gen,
        };
        let reusable = self.id < sh.guest_index() && sh.cfg.pooled_stacks_per_worker > 0;
        let rt = RtHandle(sh);
        let (low, top) = (stack.usable_low(), stack.top());
        HANDOFF.with(|h| *h.borrow_mut() = Some((p, wake)));
        let co = Coroutine::with_stack(stack, move |y: &Yielder<(), Suspend>, ()| {
            let mut deepest = top;
            while let Some((p, wake)) = HANDOFF.with(|h| h.borrow_mut().take()) {
                let mut cx = Cx::new(y, &rt, &p, wake, low, top);
                run_body(&mut cx);
                deepest = deepest.min(cx.deepest());
                drop(cx);
                drop(p);
                // Deep use: return, so `retire` trims the stack before pooling it.
                if !reusable || top - deepest > KEEP_RESIDENT {
                    break;
                }
                y.suspend(Suspend::Idle);
            }
            deepest
        });
        self.drive(slot, co);
    }

    fn resume_one(&mut self, slot: u32, gen: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        if s.gen != gen {
            return;
        }
        let Some(co) = s.co.take() else { return };
        s.timeout = None;
        self.drive(slot, co);
    }

    fn drive(&mut self, slot: u32, mut co: Co) {
        self.resumes += 1;
        let me = &self.shared.workers[self.id].driving;
        me.store(self.resumes, Ordering::Relaxed);
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        self.shared.workers[self.id]
            .driving
            .store(0, Ordering::Relaxed);
        let s = &mut self.slots[slot as usize];
        match r {
            Ok(CoroutineResult::Yield(Suspend::Yield)) => {
                s.co = Some(co);
                let gen = s.gen;
                if self
                    .shared
                    .push_task(self.id, Task::Resume { slot, gen }, false)
                    > 1
                {
                    self.shared.wake_one();
                }
            }
            Ok(CoroutineResult::Yield(Suspend::Wait { timeout, next })) => {
                s.co = Some(co);
                if let Some((d, _)) = &timeout {
                    self.next_deadline = self.next_deadline.min(*d);
                }
                s.timeout = timeout;
                if next.is_some() {
                    self.run_next = next;
                }
            }
            Ok(CoroutineResult::Yield(Suspend::Idle)) => {
                // The run is over (the process is idle or exited): a new generation for the
                // slot (late wake-ups of the run are ignored), and the runner is kept.
                s.gen = s.gen.wrapping_add(1);
                s.timeout = None;
                self.retire_count();
                if self.spares.len() < MAX_SPARES
                    && self.shared.stack_waiting.load(Ordering::Relaxed) == 0
                {
                    self.spares.push((slot, co));
                } else {
                    // Nothing to pick up: it returns.
                    let _ = co.resume(());
                    self.free_runner(slot, co, 0);
                }
                self.serve_stack_waiter();
            }
            Ok(CoroutineResult::Return(deepest)) => self.retire(slot, co, deepest),
            Err(e) => {
                let msg = crate::runtime::process::panic_message(&e);
                (self.shared.cfg.log)(&format!("runtime: coroutine failed: {msg}"));
                self.retire(slot, co, 0);
            }
        }
    }

    fn retire(&mut self, slot: u32, co: Co, deepest: usize) {
        self.free_runner(slot, co, deepest);
        self.retire_count();
        self.serve_stack_waiter();
    }

    /// Gives a finished coroutine's stack to the pool (trimmed after deep use) and frees its
    /// slot.
    fn free_runner(&mut self, slot: u32, co: Co, deepest: usize) {
        if co.done() {
            let mut stack = co.into_stack();
            if deepest != 0 {
                stack.trim(deepest);
            }
            if self.pool.len() < self.shared.cfg.pooled_stacks_per_worker {
                self.pool.push(stack);
            }
        } else {
            std::mem::forget(co);
        }
        let s = &mut self.slots[slot as usize];
        s.gen = s.gen.wrapping_add(1);
        s.co = None;
        s.timeout = None;
        self.free.push(slot);
    }

    /// A coroutine ended: a process waiting for a stack may start now.
    fn serve_stack_waiter(&mut self) {
        if let Some(p) = self.shared.next_stack_waiter() {
            self.shared.push_task(self.id, Task::Run(p), false);
        }
    }

    fn retire_count(&self) {
        let sh = &self.shared;
        if sh.live_cos.fetch_sub(1, Ordering::SeqCst) == 1 && sh.stopping.load(Ordering::SeqCst) {
            let _g = sh.drained.0.lock();
            sh.drained.1.notify_all();
        }
    }
}
