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
//! * Wake-ups for guest coroutines unpark the registered guest thread
//!   (`Shared::guest_thread`: set by a call from a thread other than the last one, left in
//!   place after the call); the guest never appears in the `parked` mask, so `wake_one`
//!   never picks it to steal work.
//! * **In place**. The worker of the last call stays in its `GuestStacks` and
//!   is used there (no move of the worker and its runner per call); a call that unwinds
//!   with a coroutine still in a slot leaks the worker (`InPlace`) instead of keeping one
//!   that must not change threads.
//! * **The resident runner**. Starting a coroutine per call (a stack from the
//!   pool, a slot, the coroutine's set-up, its retirement) and passing the process through
//!   the guest queue was most of a small script call's cost. So the guest keeps one
//!   coroutine parked between calls, the [`Runner`]: when the message finds the process
//!   idle, [`drive`] marks it scheduled itself (no queue) and resumes the runner, which runs
//!   the process's ordinary body (`run_body`: the message, then whatever queued meanwhile)
//!   and parks again. The process is unchanged between calls — idle, its behaviour in its
//!   record — so anything else may message, stop or kill it; the runner only lends it a
//!   stack. It has a slot of its own in the guest worker (its wake-ups come back as
//!   `Resume` tasks like any coroutine's), is not counted in `live_cos` (it never holds a
//!   process between calls, so shutdown need not wait for it), and ends when the process it
//!   served is replaced, when a call used its stack deeper than the resident part
//!   (`KEEP_RESIDENT`: the stack is trimmed back into the pool), or with its owner.
//! * **Lent jobs**. A caller that has a job rather than a
//!   message (the Interpreter's main-program jobs) lends it: when the runner is parked and
//!   the process can be claimed, the runner hands the job to the process's behaviour
//!   (`Behaviour::run_job`) with no message and no job slot; otherwise the caller's
//!   fallback makes the message that carries the job and the call goes on as [`drive`].
//!   The lent job's run and the process's release are one function of the
//!   runner (`run_once`, with the job and its release inlined).
//! * **Kept**. A process claimed for a job stays claimed after it
//!   (`Sched::Lent`, `process::lent`): the runner keeps its behaviour in `RunnerIo::kept`
//!   while parked, and the next [`drive_job`] resumes it with no lock
//!   (`process::resume_kept`) unless something was queued for it or it exited; then, and
//!   whenever the runner ends or its owner needs the process another way
//!   ([`GuestStacks::release`]), the behaviour goes back to the process record
//!   (`process::unlend`). A kept process's queued mail is handled at the next call, before
//!   its job (or at the end of a running job, as before).
//! * **The kept-process entry**. A job for the kept process from the thread of the last
//!   call, with nothing queued for the process, goes straight into the parked runner
//!   ([`call_kept`]): no worker set-up, claim or loop; the loop ([`drive_loop`]) only when
//!   the run suspends or queues work for the guest. Anything else goes the ordinary way
//!   ([`drive_work`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::worker::Slot;
use super::{Shared, Suspend, Task, Worker, CURRENT_WORKER};
use crate::runtime::cx::Cx;
use crate::runtime::process::{
    claim_idle, note_queued, resume_kept, run_body, run_kept_job, run_lent, unlend, Behaviour,
    Envelope, LentJob, ProcRef, Sched,
};
use crate::runtime::sched::RtHandle;
use crate::runtime::stack::{PooledStack, KEEP_RESIDENT};
use crate::runtime::types::Message;
use crate::runtime::waiter::Wake;

/// What a guest keeps between calls (owned by the caller, e.g. an Interpreter): the
/// worker state of its last call — its coroutine slots, pooled stacks and parked runner —
/// so a call neither maps a fresh stack nor allocates a worker (a script function called
/// from the host is a couple of hundred nanoseconds, and the worker's allocations were a
/// visible part of it), and the thread it registered as the guest.
#[derive(Default)]
pub struct GuestStacks {
    idle: Option<IdleWorker>,
    /// The thread registered as the runtime's guest thread by the last call (runtime id,
    /// thread): registered again only when it changes.
    registered: Option<(usize, u64)>,
}

impl GuestStacks {
    /// Gives the behaviour of the process the parked runner keeps claimed (`Sched::Lent`)
    /// back to it: before its owner reaches the process any other way than a guest call
    /// (a job message for the pool), which a kept process would never run.
    pub fn release(&mut self) {
        if let Some(IdleWorker(_, Some(r))) = self.idle.as_mut() {
            r.release();
        }
    }
}

thread_local! {
    /// This thread's number ([`this_thread`]; 0 until drawn). A constant-initialised cell
    /// with nothing to drop: reading it is one load, with no lazy-initialisation state.
    static ME: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The next thread number [`this_thread`] draws.
static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

/// A number for the calling thread, unique for the process's life (a `ThreadId` would do,
/// but `std::thread::current()` behind a lazily initialised thread-local costs a call and
/// its state check on every read; a call reads it twice).
#[inline]
fn this_thread() -> u64 {
    // `try_with`: inlined where `with` may not be (an out-of-line call); it cannot fail for
    // a cell with nothing to drop, and 0 would match no signal's thread.
    ME.try_with(|t| match t.get() {
        0 => draw_thread_number(t),
        n => n,
    })
    .unwrap_or(0)
}

#[cold]
#[inline(never)]
fn draw_thread_number(t: &std::cell::Cell<u64>) -> u64 {
    let n = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
    t.set(n);
    n
}

/// A guest's worker between calls: no coroutine in any slot, and its resident runner (if
/// any) parked at its idle point.
struct IdleWorker(Worker, Option<Runner>);

// SAFETY: a Worker is not Send only because its slots may hold coroutines (stackful, pinned
// to the thread that started them). A `GuestStacks` keeps its IdleWorker between calls only
// with no coroutine in any slot (`drive` returns only then, and `InPlace` drops a worker
// left otherwise by an unwinding call); what is left (slot generations, free list, pooled
// stacks, the runtime's `Arc<Shared>`) is plain data that may move threads, and so is its
// hand-off record: an `Rc` that only runner coroutines of the worker clone, so with no
// coroutine left the worker holds the only reference (a guest's runners never stay as
// spares: they return after their run). The runner is `Send` on its own terms (see its
// impl).
#[allow(unsafe_code)]
unsafe impl Send for IdleWorker {}

type RunnerCo = Coroutine<(), Suspend, (), PooledStack>;

/// What the guest and its runner tell each other (same thread; plain loads and stores).
#[derive(Default)]
struct RunnerIo {
    /// Set before a resume that should run the process (it was marked scheduled for us).
    go: AtomicBool,
    /// With `go`: the process was claimed for us (`process::claim_idle`) and this is its
    /// behaviour and the message to hand it (no mailbox round trip).
    lent: std::cell::Cell<Option<(Box<dyn Behaviour>, Message)>>,
    /// With `go`: the behaviour of a process claimed with `keep` (or kept from the last
    /// call, `Sched::Lent`) and the job to hand it (`process::run_kept_job`); a cell of its
    /// own, three words, so a call moves no message-sized record in and out.
    job: std::cell::Cell<Option<(Box<dyn Behaviour>, LentJob)>>,
    /// The behaviour of the process the runner keeps claimed between calls (`Sched::Lent`,
    /// `process::run_kept_job` answered it), set only while parked.
    kept: std::cell::Cell<Option<Box<dyn Behaviour>>>,
    /// Set before the resume that ends the runner.
    quit: AtomicBool,
    /// True while parked between runs (a `Wait` suspension mid-run leaves it false).
    idle: AtomicBool,
    /// Lowest stack pointer any run reached (the stack is trimmed when it is too deep).
    deepest: AtomicUsize,
    /// The runtime is the deterministic one (no fixed reduction budget: each run draws its
    /// budget), read once at the runner's start.
    sim: bool,
}

/// The coroutine the guest keeps parked between calls (see the module doc).
struct Runner {
    co: Option<RunnerCo>,
    /// The process it runs (the runner ends when its owner's main process is replaced).
    proc: ProcRef,
    /// Its runtime (a kept behaviour is given back to `proc` when the runner ends).
    shared: Arc<Shared>,
    /// Its own slot in the guest worker: wake-ups arrive as `Resume { slot, gen }`.
    slot: u32,
    gen: u32,
    /// The lowest stack address a run may reach without the stack being trimmed when the
    /// runner ends (`KEEP_RESIDENT` below its top).
    trim_below: usize,
    /// Shared with the coroutine only (`Rc`: both move together; see the Send impl).
    io: std::rc::Rc<RunnerIo>,
}

// SAFETY: a Runner is only moved between threads while parked at its idle point (an
// `IdleWorker` holds it only then: `drive` returns only once the runner is idle, and ends it
// otherwise). Its frames there are corosensei's entry and the loop in `Runner::start`,
// which holds only `Send` data (the runtime handle, the process handle, the `RunnerIo`) and
// the runner's `Cx` (references to those and to the coroutine's yielder, plain numbers and
// no exit reason between runs: nothing of a thread), and reads no thread-local (the run
// itself is in `run_once`, never inlined, whose frames are gone while parked), so resuming
// it on another thread reads nothing of the old one. The
// `RunnerIo` (not `Sync`: its `lent` cell) is shared by this struct and the coroutine only,
// which move together; its `Rc` count is touched only by the thread holding the Runner.
#[allow(unsafe_code)]
unsafe impl Send for Runner {}

/// One run of the process on the runner's stack (never inlined: see `Runner`'s Send), with
/// the runner's context renewed for it: what `Cx::new` would make, without remaking the
/// parts that stay (the yielder, runtime, process, wake-up address and stack bounds).
#[inline(never)]
fn run_once(cx: &mut Cx<'_>, io: &RunnerIo) {
    cx.reductions = 0;
    if io.sim {
        cx.budget = cx.rt.0.sim_budget();
    }
    cx.deepest.set(cx.top);
    if cx.exit.is_some() {
        cx.exit = None;
    }
    if let Some((b, job)) = io.job.take() {
        if let Some(b) = run_kept_job(cx, b, job) {
            // Empty here (the call took it): no drop call for the old value.
            if let Some(was) = io.kept.replace(Some(b)) {
                drop(was);
            }
        }
    } else {
        match io.lent.take() {
            Some((b, msg)) => run_lent(cx, b, msg),
            None => run_body(cx, None),
        }
    }
    let d = cx.deepest();
    if d < io.deepest.load(Ordering::Relaxed) {
        io.deepest.store(d, Ordering::Relaxed);
    }
}

impl Runner {
    /// A runner for `p` on a stack of `w`'s pool, in a new slot of `w`; None when no stack
    /// can be mapped (the caller starts the process the ordinary way, which reports it).
    fn start(w: &mut Worker, p: &ProcRef) -> Option<Runner> {
        let stack = match w.pool.pop() {
            Some(s) => s,
            None => PooledStack::new(w.shared.cfg.stack_size).ok()?,
        };
        w.slots.push(Slot {
            gen: 0,
            co: None,
            timeout: None,
            mem: Default::default(),
            stack: Default::default(),
        });
        let slot = (w.slots.len() - 1) as u32;
        let gen = w.slots[slot as usize].gen;
        let wake = Wake::Co {
            worker: w.id,
            slot,
            gen,
        };
        let (low, top) = (stack.usable_low(), stack.top());
        let io = std::rc::Rc::new(RunnerIo {
            deepest: AtomicUsize::new(top),
            sim: w.shared.cfg.reductions == 0,
            ..RunnerIo::default()
        });
        let (rt, me, io2) = (RtHandle(w.shared.clone()), p.clone(), io.clone());
        let co = Coroutine::with_stack(stack, move |y: &Yielder<(), Suspend>, ()| {
            // One context for all the runner's runs (`run_once` renews it per run).
            let mut cx = Cx::new(y, None, &rt, &me, wake, low, top);
            loop {
                if io2.quit.load(Ordering::Relaxed) {
                    return;
                }
                // Same thread as the guest: a load and a store, no read-modify-write.
                if io2.go.load(Ordering::Relaxed) {
                    io2.go.store(false, Ordering::Relaxed);
                    run_once(&mut cx, &io2);
                }
                io2.idle.store(true, Ordering::Relaxed);
                y.suspend(Suspend::Wait { timeout: None });
                io2.idle.store(false, Ordering::Relaxed);
            }
        });
        Some(Runner {
            co: Some(co),
            proc: p.clone(),
            shared: w.shared.clone(),
            slot,
            gen,
            trim_below: top.saturating_sub(KEEP_RESIDENT),
            io,
        })
    }

    fn is_idle(&self) -> bool {
        self.io.idle.load(Ordering::Relaxed)
    }

    /// Whether a run went deeper than the part of a stack kept resident.
    fn too_deep(&self) -> bool {
        self.io.deepest.load(Ordering::Relaxed) < self.trim_below
    }

    /// Resumes the runner on `w` (a job, or a wake-up of a run suspended in a wait).
    /// False when the coroutine is over (it panicked outside the process's own handlers).
    fn resume(&mut self, w: &mut Worker) -> bool {
        match self.switch_in(w) {
            Some(r) => self.resumed(w, r),
            None => false,
        }
    }

    /// Switches to the runner on `w` until it yields or ends (the worker marked as driving
    /// meanwhile); none when the coroutine is over.
    #[inline(always)]
    fn switch_in(
        &mut self,
        w: &mut Worker,
    ) -> Option<std::thread::Result<CoroutineResult<Suspend, ()>>> {
        let co = self.co.as_mut()?;
        w.resumes += 1;
        let me = &w.shared.workers[w.id].driving;
        me.store(w.resumes, Ordering::Relaxed);
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        me.store(0, Ordering::Relaxed);
        Some(r)
    }

    /// [`Runner::resume`] from the runner's idle point for [`call_kept`]: the usual answer,
    /// a wait with no deadline (parked again, or waiting for a wake-up), needs nothing of
    /// the runner's slot — its timeout is already none: every call leaves it so
    /// (`drive_loop` clears the slots' timeouts at its end, and `call_kept` returns by
    /// itself only after this answer) — so the slot is only looked at for the others.
    #[inline(never)]
    fn resume_parked(&mut self, w: &mut Worker) -> bool {
        let Some(r) = self.switch_in(w) else {
            return false;
        };
        if let Ok(CoroutineResult::Yield(Suspend::Wait { timeout: None })) = &r {
            // Holds nothing: no drop call for it.
            std::mem::forget(r);
            return true;
        }
        self.resumed(w, r)
    }

    /// What a resume answered, for the runner's slot and the guest worker: true while the
    /// coroutine lives.
    #[inline(never)]
    fn resumed(
        &mut self,
        w: &mut Worker,
        r: std::thread::Result<CoroutineResult<Suspend, ()>>,
    ) -> bool {
        let s = &mut w.slots[self.slot as usize];
        match r {
            Ok(CoroutineResult::Yield(Suspend::Yield)) => {
                let (slot, gen) = (self.slot, self.gen);
                w.shared.push_task(w.id, Task::Resume { slot, gen }, false);
                true
            }
            Ok(CoroutineResult::Yield(Suspend::Wait { timeout })) => {
                if let Some((d, _)) = &timeout {
                    w.next_deadline = w.next_deadline.min(*d);
                }
                s.timeout = timeout;
                true
            }
            // Not a spare runner: a guest's runner parks with `Wait`.
            Ok(CoroutineResult::Yield(Suspend::Idle)) => true,
            Ok(CoroutineResult::Return(())) => false,
            Err(e) => {
                let msg = crate::runtime::process::panic_message(&e);
                w.shared.log(&format!("runtime: coroutine failed: {msg}"));
                self.co = None;
                false
            }
        }
    }

    /// Ends a parked runner; its stack (None if it was not parked: then it is leaked, like a
    /// worker's coroutines left at shutdown, rather than unwound on foreign frames).
    fn finish(&mut self) -> Option<PooledStack> {
        let mut co = self.co.take()?;
        if !self.is_idle() {
            std::mem::forget(co);
            return None;
        }
        self.io.quit.store(true, Ordering::Relaxed);
        match catch_unwind(AssertUnwindSafe(|| co.resume(()))) {
            Ok(CoroutineResult::Return(())) if co.done() => Some(co.into_stack()),
            _ => {
                std::mem::forget(co);
                None
            }
        }
    }

    /// Gives the behaviour of the process it keeps claimed (if any) back to that process.
    fn release(&mut self) {
        if let Some(b) = self.io.kept.take() {
            unlend(&self.shared, &self.proc, b);
        }
    }

    /// Ends the runner and gives its stack (trimmed) and slot back to `w`.
    fn end(mut self, w: &mut Worker) {
        self.release();
        let deepest = self.io.deepest.load(Ordering::Relaxed);
        if let Some(mut stack) = self.finish() {
            stack.trim(deepest);
            if w.pool.len() < w.shared.cfg.pooled_stacks_per_worker {
                w.pool.push(stack);
            }
        }
        if let Some(s) = w.slots.get_mut(self.slot as usize) {
            s.gen = s.gen.wrapping_add(1);
            s.co = None;
            s.timeout = None;
            w.free.push(self.slot);
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.release();
        drop(self.finish());
    }
}

/// Puts the job message in `p`'s mailbox; `Ok(true)` when `p` was idle and is now marked
/// scheduled for the caller to run (no queue), `Ok(false)` when it is already scheduled or
/// running elsewhere (its runner takes the message). No mailbox limit: the caller waits for
/// this job, which must not be dropped like an excess cast.
fn deliver(p: &ProcRef, msg: Message) -> Result<bool, Message> {
    let mut g = p.0.inner.lock();
    if !g.accepting {
        return Err(msg);
    }
    g.mailbox.push_back(Envelope::User { msg, reply: None });
    if g.sched == Sched::Idle {
        g.sched = Sched::Scheduled;
        Ok(true)
    } else {
        note_queued(p, &g);
        Ok(false)
    }
}

/// Set once when the caller's job is over (it answered, or it was dropped unrun); wakes the
/// thread that made it.
#[derive(Clone)]
pub struct GuestDone(Arc<DoneState>);

struct DoneState {
    set: AtomicBool,
    thread: Thread,
    /// `thread`'s [`this_thread`] number.
    number: u64,
}

impl Default for GuestDone {
    fn default() -> Self {
        GuestDone::new()
    }
}

impl GuestDone {
    /// A signal for the calling thread.
    pub fn new() -> GuestDone {
        GuestDone(Arc::new(DoneState {
            set: AtomicBool::new(false),
            thread: std::thread::current(),
            number: this_thread(),
        }))
    }

    /// Marks the job over and wakes its thread.
    pub fn set(&self) {
        self.0.set.store(true, Ordering::Release);
        self.0.thread.unpark();
    }

    /// Marks the job over, from the thread that waits for it (its guest loop checks the
    /// flag after each resume: no wake-up needed).
    pub fn set_local(&self) {
        self.0.set.store(true, Ordering::Release);
    }

    /// Clears the signal for another call (nothing may set it late).
    pub fn reset(&self) {
        self.0.set.store(false, Ordering::Relaxed);
    }

    /// Whether the calling thread is the one this signal wakes.
    #[inline]
    pub fn is_this_thread(&self) -> bool {
        self.0.number == this_thread()
    }

    pub fn is_set(&self) -> bool {
        self.0.set.load(Ordering::Acquire)
    }

    /// Parks the calling thread (the one that made the signal) until it is set.
    pub fn wait(&self) {
        while !self.is_set() {
            std::thread::park();
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
    let mut msg = Some(msg);
    let r = drive_work(sh, stacks, p, None, &mut || msg.take(), done);
    // `Err`: nothing was taken, the message is still here.
    r.map_err(|()| msg.take().unwrap_or_else(Message::job))
}

/// [`drive`] for a job: when the runner is parked and `p` can be claimed, the runner hands
/// `job` to `p`'s behaviour directly (`Behaviour::run_job`: no message, no job slot); else
/// `fallback` makes the message that carries it and the call goes on as [`drive`]. `Err`,
/// having called nothing, as for [`drive`].
///
/// The usual call — the runner keeps `p` claimed from the last call on this thread and
/// nothing was queued for it — is [`call_kept`]: straight into the parked runner.
#[inline(always)]
pub(crate) fn drive_job(
    sh: &Arc<Shared>,
    stacks: &mut GuestStacks,
    p: &ProcRef,
    job: LentJob,
    fallback: &mut dyn FnMut() -> Option<Message>,
    done: &GuestDone,
) -> Result<bool, ()> {
    if call_kept(sh, stacks, p, job, done) {
        return Ok(true);
    }
    drive_work(sh, stacks, p, Some(job), fallback, done)
}

/// A job for the process the parked runner keeps claimed (`Sched::Lent`), called from the
/// thread registered as the guest by the last call: no worker set-up, no claim, no loop —
/// the identity, the kept-process check ([`resume_kept`]), one resume. True when the job
/// was handed over: the call is over when this returns (the job ran, or a run it started
/// was finished by [`drive_loop`] when it suspended, queued work for the guest or ended the
/// runner). False, having touched nothing, when the call cannot start this way (first
/// call, another thread or runtime, the process given back or something queued for it,
/// a runtime stopping, a thread that is a worker of this runtime): the caller goes the
/// ordinary way ([`drive_work`]), which checks all of it again. `done` was made by the
/// calling thread (`main_job::run_in_main` checks it before each call).
#[inline(always)]
fn call_kept(
    sh: &Arc<Shared>,
    stacks: &mut GuestStacks,
    p: &ProcRef,
    job: LentJob,
    done: &GuestDone,
) -> bool {
    let Some(IdleWorker(w, runner)) = stacks.idle.as_mut() else {
        return false;
    };
    let Some(r) = runner.as_mut() else {
        return false;
    };
    // `done` is the calling thread's (see the function's doc): its number, not a read of
    // the thread-local. The process by its record (one compare; a record is one pid's).
    if !Arc::ptr_eq(&r.proc.0, &p.0)
        || !Arc::ptr_eq(&w.shared, sh)
        || stacks.registered != Some((sh.id, done.0.number))
        || sh.stopping.load(Ordering::SeqCst)
    {
        return false;
    }
    // `try_with`: inlined where `with` was not (an out-of-line call through the key's
    // accessor); a thread whose locals are gone goes the ordinary way.
    let Ok(prev) = CURRENT_WORKER.try_with(|c| c.replace((sh.id, w.id))) else {
        return false;
    };
    let _identity = Identity(prev);
    if prev.0 == sh.id {
        return false; // a worker of this runtime (or its guest already): not a guest call
    }
    // Empty unless the last call kept the process; `resume_kept` reads what was queued.
    let Some(b) = r.io.kept.take() else {
        return false;
    };
    if !resume_kept(p) {
        r.io.kept.set(Some(b));
        return false;
    }
    w.next_deadline = u64::MAX;
    // Empty here (`run_once` takes it): no drop call for the old value.
    if let Some(was) = r.io.job.replace(Some((b, job))) {
        drop(was);
    }
    r.io.go.store(true, Ordering::Relaxed);
    let alive = r.resume_parked(w);
    // Over when the runner parked again with the job done and nothing queued for the
    // guest (no other coroutine can be in a slot: only `drive_loop` starts them).
    #[cfg(test)]
    KEPT_ENTRIES.with(|n| n.set(n.get() + 1));
    if alive && r.is_idle() && done.is_set() && sh.workers[w.id].len.load(Ordering::Acquire) == 0 {
        if r.too_deep() {
            if let Some(r) = runner.take() {
                r.end(w);
            }
        }
        return true;
    }
    if !alive {
        *runner = None;
    }
    // The run suspended or queued work for the guest: drive it on.
    let keep = InPlace(&mut stacks.idle);
    let Some(IdleWorker(w, runner)) = keep.0.as_mut() else {
        unreachable!("checked above")
    };
    drive_loop(sh, w, runner, p, done);
    keep.disarm();
    true
}

#[cfg(test)]
thread_local! {
    /// Calls this thread started through [`call_kept`] (the unit tests tell the two entries
    /// apart by it).
    static KEPT_ENTRIES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The ordinary guest call (see the module doc); out of line, so the kept-process call
/// inlined into [`drive_job`] keeps a small frame.
#[inline(never)]
fn drive_work(
    sh: &Arc<Shared>,
    stacks: &mut GuestStacks,
    p: &ProcRef,
    job: Option<LentJob>,
    msg: &mut dyn FnMut() -> Option<Message>,
    done: &GuestDone,
) -> Result<bool, ()> {
    if sh.current_worker().is_some() || sh.stopping.load(Ordering::SeqCst) {
        return Err(());
    }
    let g = sh.guest_index();
    let _identity = Identity(CURRENT_WORKER.with(|c| c.replace((sh.id, g))));
    // Wake-ups for guest coroutines unpark this thread. It stays registered after the
    // call (a late wake-up is a spurious unpark, which every park loop tolerates), so a
    // host calling from one thread registers once.
    let me = (sh.id, this_thread());
    if stacks.registered != Some(me) {
        *sh.guest_thread.lock() = Some(std::thread::current());
        stacks.registered = Some(me);
    }
    // The worker of the previous call on this runtime, used in place (its slots are all
    // free: the loop below only ends when no coroutine started here is left) and its
    // parked runner.
    if !stacks
        .idle
        .as_ref()
        .is_some_and(|i| Arc::ptr_eq(&i.0.shared, sh) && i.0.id == g)
    {
        stacks.idle = Some(IdleWorker(Worker::new(g, sh.clone()), None));
    }
    let keep = InPlace(&mut stacks.idle);
    let Some(IdleWorker(w, runner)) = keep.0.as_mut() else {
        unreachable!("set above")
    };
    if let Some(r) = runner.take_if(|r| r.proc != *p) {
        r.end(w);
    }
    // Before the first resume: a wait it starts may set a deadline.
    w.next_deadline = u64::MAX;
    // A kept process (`Sched::Lent`) with nothing queued since takes the job with no lock
    // at all (the same case as `call_kept`, reached here after a change of thread). Else
    // the runner is parked and the process idle with nothing queued: one lock claims it
    // (and, for a job, keeps it claimed after) and the runner gets the job or message by
    // hand (`process::run_lent`). Whatever else gives a kept process back first.
    let claimed = match runner.as_mut() {
        Some(r) => match r.io.kept.take() {
            Some(b) if job.is_some() && resume_kept(p) => Some((r, b)),
            Some(b) => {
                unlend(sh, p, b);
                claim_idle(p, job.is_some()).map(|b| (r, b))
            }
            None => claim_idle(p, job.is_some()).map(|b| (r, b)),
        },
        None => None,
    };
    if let Some((r, b)) = claimed {
        // `replace`, not `set`: the cells are always empty here (`run_once` takes them), so
        // no drop of an old value is called.
        let was = match job {
            Some(j) => r.io.job.replace(Some((b, j))).map(|(b, _)| b),
            None => match msg() {
                Some(m) => r.io.lent.replace(Some((b, m))).map(|(b, _)| b),
                None => unreachable!("drive passes its message"),
            },
        };
        if let Some(was) = was {
            drop(was);
        }
        r.io.go.store(true, Ordering::Relaxed);
        if !r.resume(w) {
            *runner = None;
        }
    } else {
        let Some(m) = msg() else {
            unreachable!("the job's fallback makes its message")
        };
        if !deliver_and_start(w, runner, p, m) {
            return Ok(false);
        }
    }
    drive_loop(sh, w, runner, p, done);
    keep.disarm();
    Ok(true)
}

/// The guest's loop after the first resume of a call: runs what lands on the guest queue
/// until the job is over (or can no longer run: the process exited) and no coroutine
/// started here is left; then ends a runner whose stack went too deep.
#[inline(never)]
fn drive_loop(
    sh: &Arc<Shared>,
    w: &mut Worker,
    runner: &mut Option<Runner>,
    p: &ProcRef,
    done: &GuestDone,
) {
    let g = w.id;
    loop {
        let task = pop_guest(&sh.workers[g]);
        match task {
            Some(Task::Run(q)) if q == *p => w.start(q),
            Some(Task::Run(q)) => {
                sh.injector.lock().push_back(q);
                sh.wake_one();
            }
            Some(Task::Resume { slot, gen })
                if runner
                    .as_ref()
                    .is_some_and(|r| r.slot == slot && r.gen == gen) =>
            {
                w.slots[slot as usize].timeout = None;
                if let Some(r) = runner.as_mut() {
                    if !r.resume(w) {
                        *runner = None;
                    }
                }
            }
            Some(Task::Resume { slot, gen }) => w.resume(slot, gen),
            None => {
                // Over when the job is (or can no longer run: the process exited).
                let runner_idle = runner.as_ref().is_none_or(Runner::is_idle);
                if (done.is_set() || !p.is_alive())
                    && runner_idle
                    && w.slots.iter().all(|s| s.co.is_none())
                {
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
    if let Some(r) = runner.take_if(|r| r.too_deep()) {
        r.end(w);
    }
    for s in &mut w.slots {
        if s.timeout.is_some() {
            s.timeout = None;
        }
    }
}

/// The ordinary start of a guest call: the message goes into `p`'s mailbox and, when that
/// makes `p` runnable, the runner (started if need be) runs `run_body`. False when `p` no
/// longer accepts messages.
fn deliver_and_start(
    w: &mut Worker,
    runner: &mut Option<Runner>,
    p: &ProcRef,
    msg: Message,
) -> bool {
    match deliver(p, msg) {
        Err(_) => return false,
        Ok(false) => {}
        Ok(true) => {
            if runner.is_none() {
                *runner = Runner::start(w, p);
            }
            match runner.as_mut() {
                Some(r) => {
                    r.io.go.store(true, Ordering::Relaxed);
                    if !r.resume(w) {
                        *runner = None;
                    }
                }
                None => w.start(p.clone()),
            }
        }
    }
    true
}

/// The next task on the guest queue. Its length is kept exact under its lock (every push
/// goes through `Shared::push_task`, every pop through here), so an empty queue — the usual
/// case once the job is over — is seen without taking the lock. A task pushed by another
/// thread just after the check is seen by the locked check before the guest parks (or, if
/// the call is over, is a late wake-up of the idle runner, as it could be before).
fn pop_guest(wq: &super::WorkerQ) -> Option<Task> {
    if wq.len.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut q = wq.q.lock();
    let t = q.pop_front();
    wq.len.store(q.len(), Ordering::Relaxed);
    t
}

/// The guest worker while a call uses it in place. An `IdleWorker` may move between threads
/// only with no coroutine in a slot: should a call unwind with one still there (a panic
/// the runtime did not catch), the worker is leaked rather than kept.
struct InPlace<'a>(&'a mut Option<IdleWorker>);

impl InPlace<'_> {
    fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for InPlace<'_> {
    fn drop(&mut self) {
        let busy = self.0.as_ref().is_some_and(|IdleWorker(w, r)| {
            w.slots.iter().any(|s| s.co.is_some()) || r.as_ref().is_some_and(|r| !r.is_idle())
        });
        if busy {
            if let Some(w) = self.0.take() {
                std::mem::forget(w);
            }
        }
    }
}

#[cfg(test)]
mod tests;
