//! A worker thread's private side of the scheduler (see the parent module's docs): its slot
//! table of pinned coroutines, the runner coroutines that run process runs (kept as spares
//! between runs), the hand-off of a sync call's callee, and the loop that takes tasks.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::{
    Co, Handoff, Parked, Resumed, Shared, Spare, Suspend, Task, CURRENT_WORKER, LOCAL_NEXT,
    SUSPEND_DEPTH, WORKER_LOCAL,
};
use crate::runtime::cx::Cx;
use crate::runtime::process::{run_body, unclaim, Claimed, Handed, ProcRef, RunRef};
use crate::runtime::sched::RtHandle;
use crate::runtime::stack::{PooledStack, KEEP_RESIDENT};
use crate::runtime::types::CallError;
use crate::runtime::waiter::{WaitRef, Wake};

pub(super) struct Slot {
    pub(super) gen: u32,
    pub(super) co: Option<Co>,
    pub(super) timeout: Option<(u64, WaitRef)>,
    /// The memory account the coroutine is charged to while suspended (per-actor limits).
    pub(super) mem: crate::memory::CoAccount,
    /// What the coroutine's stack is charged to its thread's account (see
    /// [`Worker::charge_stack`]).
    pub(super) stack: StackCharge,
}

/// Resident stack pages charged to a memory account: the counting allocator does not see a
/// coroutine's mapped stack, so a suspended coroutine (a process blocked in a call, a sleep,
/// a receive, or preempted) is charged for the pages of its stack that are resident when it
/// first suspends in a run (`mincore` over the top of the stack: the frames the interpreter
/// checks its depth in are a fraction of what deeper calls touched), and again when it
/// suspends deeper, until the run is over. The running coroutines (one per worker), the
/// spares and the pool are a constant per worker and are not charged.
#[derive(Default)]
pub(super) struct StackCharge {
    account: Option<&'static crate::memory::Account>,
    bytes: usize,
    /// The suspension depth (bytes below the top) `bytes` was last measured at, 0 before
    /// the first measure of a run.
    probed: usize,
    /// The top of the coroutine's stack (set when the slot gets a coroutine).
    top: usize,
    /// The lowest usable address of that stack.
    low: usize,
}

/// Pages below the deepest stack pointer a coroutine was seen at that its frames may have
/// touched (the frames between two checks of the interpreter).
const STACK_MARGIN: usize = 8 * 1024;

/// One worker thread's private state.
pub(crate) struct Worker {
    pub(super) id: usize,
    pub(super) shared: Arc<Shared>,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    pub(super) pool: Vec<PooledStack>,
    pub(super) next_deadline: u64,
    pub(super) ticks: u32,
    pub(super) warned_mmap: bool,
    /// Serial number of the last resume (`WorkerQ::driving`; per worker, no shared counter).
    pub(super) resumes: u64,
    /// A sync call's callee handed over with its caller's suspension, run next.
    pub(super) run_next: Option<Handed>,
    /// The hand-offs with this worker's runners (each runner holds a clone; a guest's
    /// worker gives none to its runners, which hand over nothing). Its `spare` is the idle
    /// runner kept for the next process run (pool workers only, one);
    /// counted in `live_cos` (a run on a spare changes no shared counter), mirrored in
    /// `WorkerQ::spares` (`Shared::busy_cos`).
    pub(super) handoff: std::rc::Rc<Handoff>,
}

impl Worker {
    pub(crate) fn new(id: usize, shared: Arc<Shared>) -> Worker {
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
            run_next: None,
            handoff: std::rc::Rc::new(Handoff::new(id)),
        }
    }

    /// The worker loop; returns at shutdown.
    pub(crate) fn run(mut self) {
        if self.shared.sim.is_some() {
            return self.run_sim();
        }
        let _ = self.shared.workers[self.id]
            .thread
            .set(std::thread::current());
        CURRENT_WORKER.with(|c| c.set((self.shared.id, self.id)));
        // A worker started early counts as one that will look for work until here
        // (`Threads::start_first_early`); from here work queued is for the parked or the
        // busy (`Shared::wake_one`). Only an early start leaves a look to take.
        self.shared.threads.take_starting();
        while !self.shared.shutdown.load(Ordering::Acquire) {
            self.ticks = self.ticks.wrapping_add(1);
            if self.ticks.is_multiple_of(64) {
                let now = self.shared.clock.now_ms();
                self.check_deadlines(now);
                self.shared.poll_io();
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
        self.finish();
    }

    /// The end of a worker loop (the ordinary one and the deterministic one).
    pub(super) fn finish(&mut self) {
        // Spare runners hold no process: resumed with nothing to run, they return.
        if let Some(Spare { mut co, .. }) = self.handoff.spare.take() {
            let _ = co.resume(());
            self.shared.live_cos.fetch_sub(1, Ordering::SeqCst);
        }
        self.note_spares();
        LOCAL_NEXT.with(|c| c.set(None));
        // Coroutines still suspended at shutdown ignored their kill: leak their stacks rather
        // than force-unwinding foreign frames.
        for s in &mut self.slots {
            if let Some(co) = s.co.take() {
                std::mem::forget(co);
            }
        }
        drop(WORKER_LOCAL.with(|c| c.borrow_mut().take()));
        drop(self.handoff.local.take());
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

    /// Nothing to run: sleeps until woken or until this worker's earliest wait deadline.
    /// Who wakes whom: the worker sets its `parked` bit (and, when it takes the input,
    /// `io_worker`) *before* its last look for work; whoever queues work after that look
    /// sees the bit and wakes it — `Shared::push_resume` for its own coroutines,
    /// `Shared::wake_one` for Run tasks any worker may take — through the input's wake
    /// event when it waits there (`Shared::unpark`), else by unparking its thread. Work
    /// this worker makes for itself while it waits in the input (what it reads completes a
    /// wait of one of its coroutines, or schedules a process on its queue) wakes nobody:
    /// the input's wait returns after handling anything ([`super::IoWait::wait`]) and the
    /// loop looks at the queue next. There is no periodic look on its own: a wake-up that
    /// does not come is a bug to find, not a latency to bound.
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
        // The input (a named node's connections), when no other worker waits in it: after
        // the parked bit, before the check for work, so a wake-up in between reaches it.
        let io = sh.enter_io(self.id);
        if self.has_work() || sh.shutdown.load(Ordering::SeqCst) {
            if io.is_some() {
                sh.leave_io();
            }
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
        let waited = io
            .as_ref()
            .is_some_and(|io| io.wait(wait_ms.map(Duration::from_millis)));
        if !waited {
            // Briefly when another thread had the input (it is ours again soon).
            if io.is_some() {
                wait_ms = Some(wait_ms.map_or(10, |m: u64| m.min(10)));
            }
            match wait_ms {
                Some(ms) => std::thread::park_timeout(Duration::from_millis(ms)),
                None => std::thread::park(),
            }
        }
        if io.is_some() {
            sh.leave_io();
        }
        sh.parked.fetch_and(!bit, Ordering::SeqCst);
        let now = sh.clock.now_ms();
        self.check_deadlines(now);
    }

    /// Completes every wait whose deadline has passed with `Timeout`.
    pub(super) fn check_deadlines(&mut self, now: u64) {
        if now < self.next_deadline {
            return;
        }
        let mut next = u64::MAX;
        for s in &mut self.slots {
            if let Some((d, w)) = &mut s.timeout {
                if *d <= now {
                    // Fired: the waiter stays until the coroutine is resumed (a pool
                    // runner gets it back then: `resume_one`), with no deadline left.
                    *d = u64::MAX;
                    w.get().complete(&self.shared, Err(CallError::Timeout));
                } else {
                    next = next.min(*d);
                }
            }
        }
        self.next_deadline = next;
    }

    /// Runs `p` (a Run task), then whatever that handed over (a sync call's callee).
    pub(super) fn start(&mut self, p: ProcRef) {
        self.start_one(p, None);
        self.run_handed_over();
    }

    /// Continues a suspended coroutine, then whatever that handed over.
    pub(super) fn resume(&mut self, slot: u32, gen: u32) {
        self.resume_one(slot, gen);
        self.run_handed_over();
    }

    /// Runs the callees that sync calls handed to this worker with their suspension (a
    /// loop, not recursion: a chain of calls hands over one callee after another).
    fn run_handed_over(&mut self) {
        while let Some(h) = self.run_next.take() {
            self.start_run(h.p, h.first);
        }
    }

    /// Starts a process run on a **runner** coroutine: a spare one from an earlier run when
    /// this worker keeps one (no coroutine set-up, no stack from the pool), else a new one.
    /// A runner runs one process run (`run_body`), then on a pool worker suspends with
    /// `Suspend::Idle` to be kept for the next run (`drive`); on the guest, or after a run
    /// that went deep into its stack, it returns and is retired. `first`: the behaviour and
    /// message a sync call claimed (`process::enqueue_call`).
    pub(super) fn start_one(&mut self, p: ProcRef, first: Option<Claimed>) {
        self.start_run(RunRef::counted(p), first)
    }

    /// [`Worker::start_one`] on a handle a claiming caller may have lent (`RunRef`).
    fn start_run(&mut self, p: RunRef, first: Option<Claimed>) {
        if !p.is_alive() {
            return;
        }
        let sh = &self.shared;
        if let Some(Spare { slot, gen, co }) = self.handoff.spare.take() {
            // The spare's generation moves on while a caller runs it directly
            // (`Handoff::run_callee`).
            self.slots[slot as usize].gen = gen;
            // A spare is counted in `live_cos` already: only the cap check (plain loads;
            // the busy count is at most `live_cos`, so far below the cap that is enough).
            if sh.live_cos.load(Ordering::Relaxed) + sh.reserve >= sh.max_cos {
                let busy = sh.busy_cos();
                let serving = first.is_some() || Shared::is_serving(&p);
                if busy + sh.reserve >= sh.max_cos && (busy >= sh.max_cos || !serving) {
                    self.handoff.spare.set(Some(Spare { slot, gen, co }));
                    Self::defer(sh, p.into_counted(), first, serving);
                    return;
                }
            }
            self.note_spares();
            let wake = Wake::Co {
                worker: self.id,
                slot,
                gen,
            };
            self.handoff.start.set(Some((p, wake, first)));
            self.drive(slot, co);
            return;
        }
        let live = sh.live_cos.fetch_add(1, Ordering::SeqCst);
        let busy = live.saturating_sub(sh.spare_cos());
        if busy + sh.reserve >= sh.max_cos {
            // Near the cap: the last `reserve` stacks only go to processes someone waits on.
            let serving = first.is_some() || Shared::is_serving(&p);
            if busy >= sh.max_cos || !serving {
                sh.live_cos.fetch_sub(1, Ordering::SeqCst);
                Self::defer(sh, p.into_counted(), first, serving);
                return;
            }
        }
        let sh = self.shared.clone();
        let stack = match self.pool.pop() {
            Some(s) => s,
            None => match PooledStack::new(sh.cfg.stack_size) {
                Ok(s) => s,
                Err(e) => {
                    if !self.warned_mmap {
                        self.warned_mmap = true;
                        sh.log(&format!("runtime: cannot map a coroutine stack ({e}); work is queued until a stack is free"));
                    }
                    self.retire_count();
                    let serving = first.is_some() || Shared::is_serving(&p);
                    Self::defer(&sh, p.into_counted(), first, serving);
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
                    mem: Default::default(),
                    stack: Default::default(),
                });
                (self.slots.len() - 1) as u32
            }
        };
        let wake = Wake::Co {
            worker: self.id,
            slot,
            gen: self.slots[slot as usize].gen,
        };
        let pool = self.id < sh.guest_index();
        let reusable = pool && sh.cfg.pooled_stacks_per_worker > 0;
        let rt = RtHandle(sh);
        let (low, top) = (stack.usable_low(), stack.top());
        let sc = &mut self.slots[slot as usize].stack;
        (sc.top, sc.low) = (top, low);
        let ho = self.handoff.clone();
        self.handoff.start.set(Some((p, wake, first)));
        let co = Coroutine::with_stack(stack, move |y: &Yielder<(), Suspend>, ()| {
            let mut deepest = top;
            while let Some((mut p, wake, first)) = ho.start.take() {
                // Only a pool worker's runners hand a sync call's callee over.
                let mut cx = Cx::new(y, pool.then_some(&*ho), &rt, &p, wake, low, top);
                cx.lent = !p.is_counted();
                run_body(&mut cx, first);
                deepest = deepest.min(cx.deepest());
                let held = cx.held();
                drop(cx);
                if held {
                    p.adopt();
                }
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

    /// A run that cannot start now (the stack cap): it waits for a stack, a claimed
    /// callee as an ordinary scheduled process.
    fn defer(sh: &Shared, p: ProcRef, first: Option<Claimed>, serving: bool) {
        if let Some(c) = first {
            unclaim(&p, c);
        }
        sh.defer_for_stack(p, serving);
    }

    pub(super) fn resume_one(&mut self, slot: u32, gen: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        if s.gen != gen {
            return;
        }
        let Some(co) = s.co.take() else { return };
        // The wait is over: its waiter may be replaced once the coroutine runs (`WaitRef`).
        s.timeout = None;
        self.drive(slot, co);
    }

    /// Resumes coroutine `co` of `slot` and files it by what it suspended with.
    fn drive(&mut self, slot: u32, mut co: Co) {
        self.resumes += 1;
        let me = &self.shared.workers[self.id].driving;
        me.store(self.resumes, Ordering::Relaxed);
        // Per-actor memory accounts follow their coroutine (one branch when unused).
        let r = if crate::memory::coroutine_accounts() {
            crate::memory::in_coroutine(
                &mut self.slots[slot as usize].mem,
                || catch_unwind(AssertUnwindSafe(|| co.resume(()))),
                |r| matches!(r, Ok(CoroutineResult::Yield(_))),
            )
        } else {
            catch_unwind(AssertUnwindSafe(|| co.resume(())))
        };
        self.shared.workers[self.id]
            .driving
            .store(0, Ordering::Relaxed);
        let depth = SUSPEND_DEPTH.with(|d| d.replace(0));
        self.file(slot, co, r, depth);
        // A runner the coroutine ran directly that did not end its run there.
        if let Some(Parked { spare, r, depth }) = self.handoff.parked.take() {
            self.slots[spare.slot as usize].gen = spare.gen;
            self.file(spare.slot, spare.co, r, depth);
        }
    }

    /// Files coroutine `co` of `slot` by how its resume ended (`depth`: the stack depth
    /// it suspended at).
    fn file(&mut self, slot: u32, co: Co, r: Resumed, depth: usize) {
        // A runner whose process run is over charges nothing (its run's charge is given
        // back in `runner_idle`): no stack probe per message.
        if let Ok(CoroutineResult::Yield(Suspend::Idle)) = r {
            return self.runner_idle(slot, co);
        }
        let s = &mut self.slots[slot as usize];
        if matches!(r, Ok(CoroutineResult::Yield(_))) {
            Self::charge_stack(&mut s.stack, depth);
        }
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
            Ok(CoroutineResult::Yield(Suspend::Wait { timeout })) => {
                s.co = Some(co);
                if let Some((d, _)) = &timeout {
                    self.next_deadline = self.next_deadline.min(*d);
                }
                s.timeout = timeout;
                if let Some(h) = self.handoff.next.take() {
                    self.run_next = Some(h);
                }
            }
            Ok(CoroutineResult::Yield(Suspend::Idle)) => {}
            Ok(CoroutineResult::Return(deepest)) => self.retire(slot, co, deepest),
            Err(e) => {
                let msg = crate::runtime::process::panic_message(&e);
                self.shared
                    .log(&format!("runtime: coroutine failed: {msg}"));
                self.retire(slot, co, 0);
            }
        }
    }

    /// Charges a coroutine that just suspended for the stack it used (only what is more than
    /// it is charged already: its pages stay resident until the stack is trimmed), to the
    /// account of the thread (its engine's; `StackCharge`).
    fn charge_stack(c: &mut StackCharge, depth: usize) {
        // The depth is the deepest the coroutine's stack pointer was seen at in this run
        // (it only grows): probed at that depth already, or charged for more than it plus
        // the margin, there is nothing new to charge.
        if c.top == 0
            || (c.probed != 0 && depth <= c.probed)
            || (c.bytes != 0 && depth + STACK_MARGIN <= c.bytes)
        {
            return;
        }
        if c.account.is_none() {
            c.account = crate::memory::current();
        }
        let Some(a) = c.account else { return };
        let window = (depth + STACK_MARGIN).max(KEEP_RESIDENT).min(c.top - c.low);
        c.probed = depth.max(1);
        let want = crate::runtime::stack::resident_below(c.top, window)
            .unwrap_or(window)
            .max(depth);
        if want > c.bytes {
            a.charge((want - c.bytes) as isize);
            c.bytes = want;
        }
    }

    /// Gives back what a coroutine's stack was charged (its run is over).
    fn uncharge_stack(c: &mut StackCharge) {
        if let Some(a) = c.account.take() {
            a.charge(-(c.bytes as isize));
        }
        c.bytes = 0;
        c.probed = 0;
    }

    /// A runner's process run is over (the process idle or exited): a new generation for
    /// the slot (late wake-ups of the run are ignored), and the runner is kept as a spare.
    fn runner_idle(&mut self, slot: u32, mut co: Co) {
        let s = &mut self.slots[slot as usize];
        Self::uncharge_stack(&mut s.stack);
        s.gen = s.gen.wrapping_add(1);
        s.timeout = None;
        // The next process this runner runs starts with the thread's own account.
        s.mem = Default::default();
        let kept = self.handoff.spare.take();
        if kept.is_none() && self.shared.stack_waiting.load(Ordering::Relaxed) == 0 {
            // Stays counted in `live_cos`; no longer busy.
            let gen = s.gen;
            self.handoff.spare.set(Some(Spare { slot, gen, co }));
            self.note_spares();
            self.notify_if_stopping();
        } else {
            self.handoff.spare.set(kept);
            // Nothing to pick up: it returns.
            let _ = co.resume(());
            self.free_runner(slot, co, 0);
            self.retire_count();
        }
        self.serve_stack_waiter();
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
        Self::uncharge_stack(&mut s.stack);
        s.gen = s.gen.wrapping_add(1);
        s.co = None;
        s.timeout = None;
        self.free.push(slot);
    }

    /// A coroutine ended: a process waiting for a stack may start now.
    #[inline]
    fn serve_stack_waiter(&mut self) {
        // The common case (nobody waits) without a call.
        if self.shared.stack_waiting.load(Ordering::SeqCst) == 0 {
            return;
        }
        if let Some(p) = self.shared.next_stack_waiter() {
            self.shared.push_task(self.id, Task::Run(p), false);
        }
    }

    fn retire_count(&self) {
        self.shared.live_cos.fetch_sub(1, Ordering::SeqCst);
        self.notify_if_stopping();
    }

    /// While the runtime stops, tells the drain (`Runtime::stop_threads`, which waits for
    /// `busy_cos` to reach 0) that a coroutine stopped being busy.
    fn notify_if_stopping(&self) {
        let sh = &self.shared;
        if sh.stopping.load(Ordering::SeqCst) {
            let _g = sh.drained.0.lock();
            sh.drained.1.notify_all();
        }
    }

    /// Mirrors the number of spares for `Shared::busy_cos` (only this worker writes it).
    pub(super) fn note_spares(&self) {
        let spare = self.handoff.spare.take();
        let n = usize::from(spare.is_some());
        self.handoff.spare.set(spare);
        self.shared.workers[self.id]
            .spares
            .store(n, Ordering::Relaxed);
    }
}

impl Handoff {
    /// A sync call's handed callee run at once on this worker's spare runner, switched to
    /// straight from the caller's coroutine (and back when the run suspends): two
    /// coroutine switches per round trip instead of four (caller to worker, worker to
    /// runner, runner to worker, worker to caller). The worker's loop is involved only
    /// when the run does not end idle with the caller next in line.
    ///
    /// `Err(h)` when it cannot (no spare runner, near the stack cap, a process waiting for
    /// a stack, per-actor memory accounts, which the worker switches per resume): the
    /// caller hands `h` to the worker as before (`Handoff::next`). `Ok(true)`: the run is
    /// over (the callee idle again) and the caller's resumption was the worker's next
    /// (`LOCAL_NEXT`: the reply came with nothing queued on this worker), taken back: the
    /// caller goes on without suspending, as if the worker had resumed it at once.
    /// `Ok(false)`: the caller suspends as usual; a runner whose run did not end idle (it
    /// waits, was preempted, returned, or failed) is left in `parked` for the worker to
    /// file after the caller's suspension, as if it had resumed it itself. `me`: the
    /// caller's wake-up address.
    pub(crate) fn run_callee(
        &self,
        sh: &Shared,
        h: crate::runtime::process::Handed,
        me: Wake,
    ) -> Result<bool, crate::runtime::process::Handed> {
        if crate::memory::coroutine_accounts()
            || sh.stack_waiting.load(Ordering::Relaxed) != 0
            || sh.live_cos.load(Ordering::Relaxed) + sh.reserve >= sh.max_cos
        {
            return Err(h);
        }
        let Some(Spare { slot, gen, mut co }) = self.spare.take() else {
            return Err(h);
        };
        let spares = &sh.workers[self.worker].spares;
        spares.store(0, Ordering::Relaxed);
        let wake = Wake::Co {
            worker: self.worker,
            slot,
            gen,
        };
        self.start.set(Some((h.p, wake, h.first)));
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        if let Ok(CoroutineResult::Yield(Suspend::Idle)) = r {
            if sh.stack_waiting.load(Ordering::Relaxed) == 0 {
                // Holds nothing to drop: no drop call.
                std::mem::forget(r);
                // As `Worker::runner_idle`: a new generation (late wake-ups of the run are
                // ignored) and kept as the spare. Its stack was never charged: charges
                // are made when a run suspends to the worker.
                let gen = gen.wrapping_add(1);
                // Taken above: no drop call for the `None` replaced.
                if let Some(old) = self.spare.replace(Some(Spare { slot, gen, co })) {
                    drop(old);
                }
                spares.store(1, Ordering::Relaxed);
                let Wake::Co { slot, gen, .. } = me else {
                    return Ok(false);
                };
                return Ok(LOCAL_NEXT.with(|c| {
                    let next = c.get() == Some((slot, gen));
                    if next {
                        c.set(None);
                    }
                    next
                }));
            }
        }
        let depth = SUSPEND_DEPTH.with(|d| d.replace(0));
        self.parked.set(Some(Parked {
            spare: Spare { slot, gen, co },
            r,
            depth,
        }));
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::runtime::stack::PROBES;
    use crate::runtime::{handler, Config, Message, Runtime, Timeout};
    use crate::value::Value;

    /// A sync call to an idle actor runs it on a spare runner, which goes back to the
    /// spares when the actor idles again. That suspension ends the run: it charges no
    /// stack (a charge probes the stack's resident pages with a system call, and the run's
    /// charge is given back at once), so round trips make no probe each.
    #[test]
    fn a_runner_going_idle_probes_no_stack() {
        let rt = one_worker();
        let h = rt.handle();
        h.charge_threads_to(crate::memory::new_account(1 << 40));
        let callee = h.spawn(handler(|_, _| Ok(Value::Int(1))));
        let t = h.spawn_task(move |cx| {
            let call = |cx: &mut crate::runtime::Cx<'_>| {
                cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity)
            };
            // The first calls charge the caller's own stack once.
            for _ in 0..10 {
                call(cx).unwrap();
            }
            let before = PROBES.load(Ordering::Relaxed);
            for _ in 0..200 {
                assert!(matches!(call(cx), Ok(Value::Int(1))));
            }
            PROBES.load(Ordering::Relaxed) - before
        });
        let probes = t.join().unwrap();
        assert!(probes < 20, "{probes} stack probes for 200 round trips");
        rt.shutdown();
    }

    /// A runtime of one worker: every process runs on it, in its order.
    fn one_worker() -> Runtime {
        Runtime::new(Config {
            workers: 1,
            ..Config::default()
        })
        .unwrap()
    }

    /// The worker's resume serial (`WorkerQ::driving`) as a process on worker 0 sees it.
    fn serial(cx: &crate::runtime::Cx<'_>) -> i64 {
        cx.shared().workers[0].driving.load(Ordering::Relaxed) as i64
    }

    /// A sync call to an idle callee with nothing queued on the worker switches from the
    /// caller's coroutine to the spare runner and back (`Handoff::run_callee`): the callee
    /// runs inside the caller's resume by the worker, and the caller goes on without a
    /// resume of its own, call after call.
    #[test]
    fn a_round_trip_to_an_idle_callee_needs_no_resume_by_the_worker() {
        let rt = one_worker();
        let h = rt.handle();
        let callee = h.spawn(handler(|cx, _| Ok(Value::Int(serial(cx)))));
        let t = h.spawn_task(move |cx| {
            // The first call makes the callee's runner (the worker runs it), which is the
            // spare afterwards.
            cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity)
                .unwrap();
            let before = serial(cx);
            let mut seen = Vec::new();
            for _ in 0..100 {
                match cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity) {
                    Ok(Value::Int(n)) => seen.push(n),
                    other => panic!("{other:?}"),
                }
            }
            (before, seen, serial(cx))
        });
        let (before, seen, after) = t.join().unwrap();
        assert!(before != 0);
        assert!(seen.iter().all(|&n| n == before), "{before}: {seen:?}");
        assert_eq!(after, before);
        rt.shutdown();
    }

    /// A callee run directly that then waits is filed by the worker like any waiting
    /// process: its caller waits too, its call times out on time, and the callee goes on
    /// once its own wait is over (its timer fired by the worker).
    #[test]
    fn a_callee_run_directly_that_waits_leaves_its_caller_to_the_worker() {
        let rt = one_worker();
        let h = rt.handle();
        let callee = h.spawn(handler(|cx, m| {
            if m.selector.as_str() == "nap" {
                cx.sleep(300).unwrap();
            }
            Ok(Value::Int(1))
        }));
        let t = h.spawn_task(move |cx| {
            let started = std::time::Instant::now();
            // A timeout, not the nap's answer: the caller did not wait for the nap.
            let nap = cx.call(&callee, Message::named("nap", Vec::new()), Timeout::Ms(30));
            let timed_out = matches!(nap, Err(crate::runtime::CallError::Timeout));
            // Queued behind the nap, answered once it is over.
            let next = cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity);
            (timed_out, next.ok(), started.elapsed())
        });
        let (timed_out, next, total) = t.join().unwrap();
        assert!(timed_out);
        assert!(matches!(next, Some(Value::Int(1))));
        assert!(total >= std::time::Duration::from_millis(300), "{total:?}");
        rt.shutdown();
    }

    /// A call's timeout starts when the caller starts to wait: a callee run directly that
    /// keeps the thread for a stretch before it waits does not use up its caller's time
    /// (the caller could not have timed out in that stretch: same thread).
    #[test]
    fn a_call_times_out_counting_from_its_wait() {
        let rt = one_worker();
        let h = rt.handle();
        let callee = h.spawn(handler(|cx, m| {
            if m.selector.as_str() == "hog" {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let _ = cx.sleep(60_000);
            }
            Ok(Value::Int(1))
        }));
        let t = h.spawn_task(move |cx| {
            // The callee's runner made (the worker runs the first call): the spare.
            cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity)
                .unwrap();
            let started = std::time::Instant::now();
            let r = cx.call(&callee, Message::named("hog", Vec::new()), Timeout::Ms(50));
            (r.is_err(), started.elapsed())
        });
        let (failed, took) = t.join().unwrap();
        assert!(failed);
        assert!(took >= std::time::Duration::from_millis(150), "{took:?}");
        rt.shutdown();
    }

    /// A callee run directly that kills its caller before answering: the call fails with
    /// the caller's exit, which ends the caller's run; the callee's run ends idle and it
    /// serves the next caller.
    #[test]
    fn a_callee_run_directly_may_kill_its_caller() {
        let rt = one_worker();
        let h = rt.handle();
        let victim = std::sync::Arc::new(parking_lot::Mutex::new(None));
        let v = victim.clone();
        let callee = h.spawn(handler(move |cx, _| {
            if let Some(c) = v.lock().take() {
                cx.rt().kill(&c);
            }
            Ok(Value::Int(7))
        }));
        let c2 = callee.clone();
        let t = h.spawn_task(move |cx| {
            *victim.lock() = Some(cx.me().clone());
            let r = cx.call(&c2, Message::named("kill", Vec::new()), Timeout::Infinity);
            // Only reached when the call did not fail.
            format!("{r:?}")
        });
        assert!(t.join().is_err());
        let t = h.spawn_task(move |cx| {
            cx.call(&callee, Message::named("x", Vec::new()), Timeout::Infinity)
                .ok()
        });
        assert!(matches!(t.join().unwrap(), Some(Value::Int(7))));
        rt.shutdown();
    }
}
