//! Limits a script cannot escape: reductions and a wall-clock deadline per evaluation (and
//! per actor message), memory and a total budget per engine, cancellation and shutdown.
//!
//! * **Where they are checked.** The engine sets `Program::ctx_hook` ([`hook_factory`]): at
//!   the start of every main-program job (`MainActor`) and of every pooled-context run (an
//!   actor's message, a timer or monitor callback; `ActorSys::take_ctx`) the context gets a
//!   preemption hook (`Ctx::preempt`): a fresh [`Guard`] for an actor run; for the main
//!   program one hook per context for its life, re-armed per job ([`Shared::check_main`]:
//!   its state is in [`Shared`], so a script call allocates nothing and clones no `Arc`). The evaluator calls the hook
//!   every `step` reductions from `Ctx::tick`'s slow path, and bulk primitives reach it
//!   through `Ctx::charge`, so a limit costs nothing per reduction; a small reduction limit
//!   lowers the step to itself.
//! * **Uncatchable.** A tripped guard unwinds as `Unwind::Exit` ([`limit_unwind`]), which
//!   `on:do:` does not catch. The trip is sticky: every later hook call of the run unwinds
//!   again, and so does the run's context (`Ctx::limit_hit`: every later tick or charge),
//!   so the `ensure:` blocks of the unwind get `CLEANUP_ALLOWANCE` reductions together and
//!   cannot replace the limit (`Ctx::run_cleanup`); the engine reports the limit whatever
//!   the script answered.
//! * **Engine-wide limits** ([`Shared`]) hold across every process of the engine: the memory
//!   account (`crate::memory`; over it, every process the scripts started is killed:
//!   [`Shared::stop_for_memory`]), the total reduction budget (`total_reductions`: every run
//!   adds its steps, at least one; once spent, every run of the engine stops at its first step, timers
//!   and actors a script left running included), a [`CancelHandle`] (cancels every run that
//!   started before it fired) and [`crate::Engine::shutdown`].
//! * **Blocked evaluations.** The hook only runs while code runs. For an evaluation blocked
//!   at its deadline or cancelled while blocked (`Timer sleep:`, waiting for a reply) the
//!   [`Watchdog`] kills the main program's process once the evaluation's job has started in
//!   it: the blocked operation fails with an exit, the job unwinds as above (the session and
//!   bindings survive) and the Vm starts a fresh main process for the next job. A job that
//!   had not started yet finds the trip set and stops at its first reduction.
//! * **Actors.** Main-program jobs count against the engine's evaluation. An actor's message
//!   or callback gets its own reduction budget (`actor_max_reductions`, by default
//!   `max_reductions`) and deadline counted from its own start, plus the engine-wide limits;
//!   when one trips, the actor crashes with the limit's kind as exit reason (its supervisor
//!   restarts it as configured) and a caller waiting on the message gets an error of that
//!   kind (`actor::behaviour`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::engine::error::Limit;
use crate::interp::eval::Unwind;
use crate::memory::Account;
use crate::runtime::{ProcRef, RtHandle, TimerRef};

/// Reductions between hook calls when the reduction limit does not ask for fewer (the
/// evaluator's default budget, so preemption of other processes is unchanged).
pub const DEFAULT_STEP: u32 = 4000;

/// How long an evaluation waits for the memory of the processes stopped at the engine's
/// memory limit to come back ([`Shared::recover_memory`]).
pub const RECOVERY_WAIT: Duration = Duration::from_secs(2);

/// How long after the last stopped process is gone [`Shared::recover_memory`] still waits
/// for its memory (dropped on a runtime thread just after it left the process table).
pub const RECOVERY_SETTLE: Duration = Duration::from_millis(50);

/// The configured limits of an engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_reductions: Option<u64>,
    pub actor_max_reductions: Option<u64>,
    pub timeout: Option<Duration>,
    pub max_memory: Option<usize>,
    pub max_allocation: Option<usize>,
    pub actor_max_memory: Option<usize>,
    pub total_reductions: Option<u64>,
}

impl Limits {
    /// Reductions between hook calls: at most the reduction limit, so a small limit is
    /// enforced to within one step.
    pub fn step(&self, max: Option<u64>) -> u32 {
        let m = [max, self.total_reductions].into_iter().flatten().min();
        match m {
            Some(n) => n.clamp(1, DEFAULT_STEP as u64) as u32,
            None => DEFAULT_STEP,
        }
    }

    /// Reductions an actor message may use.
    pub fn actor_max(&self) -> Option<u64> {
        self.actor_max_reductions.or(self.max_reductions)
    }
}

/// The state every guard of one engine shares.
pub struct Shared {
    pub limits: Limits,
    /// Bumped by each cancel: a run started before the bump stops.
    pub cancel_epoch: AtomicU64,
    pub shutdown: AtomicBool,
    /// Reductions counted against `total_reductions`, over every run.
    pub total_used: AtomicU64,
    /// The engine's memory account (`max_memory`).
    pub account: Option<&'static Account>,
    /// The current evaluation: its trip, whether its job started, the main process to kill.
    pub watchdog: Watchdog,
    /// The guard state of the main program's current job (see [`MainRun`]).
    main: MainRun,
    /// Time origin of [`MainRun::deadline`].
    t0: Instant,
    /// `limits.step(limits.max_reductions)`, computed once (the hook re-arms every job).
    main_step: u32,
    /// The engine's runtime, what [`Shared::stop_for_memory`] stops (set once it exists,
    /// with `max_memory` only; taken back when the engine is dropped: the runtime's
    /// processes hold the program, which holds this).
    pub rt: Mutex<Option<RtHandle>>,
    /// Set while the engine's account is over its limit and its processes were told to
    /// stop (once per time it goes over).
    memory_stop: AtomicBool,
}

/// The guard of main-program jobs, kept in [`Shared`] rather than in the hook: the main
/// context keeps one hook for its life and each job only re-arms these (plain stores, no
/// allocation, no reference count; jobs of one engine never overlap — the engine's lock).
#[derive(Default)]
struct MainRun {
    /// Reductions between hook calls for this job.
    step: AtomicU64,
    /// Reductions counted so far by this job.
    used: AtomicU64,
    /// The job's deadline in ns after `Shared::t0`, plus one (0: none).
    deadline: AtomicU64,
    /// The cancel epoch the job started in.
    epoch: AtomicU64,
}

impl Shared {
    pub fn new(limits: Limits, account: Option<&'static Account>) -> Shared {
        Shared {
            limits,
            cancel_epoch: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            total_used: AtomicU64::new(0),
            account,
            watchdog: Watchdog::default(),
            main: MainRun::default(),
            t0: Instant::now(),
            main_step: limits.step(limits.max_reductions),
            rt: Mutex::new(None),
            memory_stop: AtomicBool::new(false),
        }
    }

    /// The engine's own account is over `max_memory`: every process the engine's scripts
    /// started is killed (oldest first, so a supervisor goes before it could restart its
    /// children; the main program's process is the evaluation's, ended by its trip) and the
    /// runtime is fenced, so a process spawned during or after the sweep dies as it is made
    /// (`RtHandle::stop_user_processes`); a running evaluation ends with `memory_limit`
    /// (`kill_main`: the watchdog's firing, for a call from another process; the main
    /// program's own check trips itself). The stop lasts until the next evaluation finds every
    /// such process gone and the account back under the limit ([`Shared::recover_memory`]):
    /// meanwhile every run of the engine stops at its first step, so what survived the sweep
    /// for a moment (a run in progress on another thread) cannot grow the bomb again.
    fn stop_for_memory(&self, kill_main: bool) {
        if self.memory_stop.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(rt) = self.rt.lock().clone() else {
            return;
        };
        // What the killed processes free here is the engine's (also on the host's thread).
        let _mem = crate::memory::Scope::enter(self.account);
        if kill_main {
            self.watchdog.fire(&rt, None, Limit::Memory);
        }
        rt.stop_user_processes("main");
    }

    /// Before an evaluation, with the engine stopped at its memory limit: stops every process
    /// the scripts started (if that has not happened yet) and waits for them to be gone and
    /// their memory to come back (they exit on the runtime's threads) — while any of them is
    /// alive, and [`RECOVERY_SETTLE`] after the last, at most [`RECOVERY_WAIT`] in all. True
    /// when the account is under its limit again with no such process left: the stop ends
    /// (spawns work again) and the evaluation may run; false when it is still over with no
    /// process to stop (the main program's own bindings hold the memory).
    pub fn recover_memory(&self) -> bool {
        let (Some(rt), Some(a)) = (self.rt.lock().clone(), self.account) else {
            return false;
        };
        let _mem = crate::memory::Scope::enter(self.account);
        let start = Instant::now();
        let mut none_since: Option<Instant> = None;
        loop {
            crate::memory::flush();
            if a.over() {
                self.stop_for_memory(false);
            }
            let alive = rt.user_processes().iter().any(|p| p.label() != "main");
            if !alive && !a.over() {
                rt.lift_spawn_fence();
                self.memory_stop.store(false, Ordering::Release);
                return true;
            }
            if alive {
                // Spawned before the fence by a run that was already past its check: the
                // fence stays, so a second sweep ends them for good.
                rt.stop_user_processes("main");
            }
            let settled = match (alive, none_since) {
                (true, _) => {
                    none_since = None;
                    false
                }
                (false, None) => {
                    none_since = Some(Instant::now());
                    false
                }
                (false, Some(t)) => t.elapsed() >= RECOVERY_SETTLE,
            };
            if settled || start.elapsed() >= RECOVERY_WAIT {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Is the engine stopped at its memory limit? Stops its processes the first time its
    /// account is over (see [`Shared::stop_for_memory`]); stays so until
    /// [`Shared::recover_memory`] ends the stop.
    #[inline]
    fn engine_memory_over(&self, kill_main: bool) -> bool {
        match self.account {
            Some(a) => self.account_over(a, kill_main),
            None => false,
        }
    }

    /// [`Shared::engine_memory_over`] for an engine with an account.
    fn account_over(&self, a: &'static Account, kill_main: bool) -> bool {
        if self.memory_stop.load(Ordering::Acquire) {
            return true;
        }
        crate::memory::flush();
        if a.over() {
            self.stop_for_memory(kill_main);
            return true;
        }
        false
    }

    /// An engine-wide limit in force for a run that started at cancel epoch `epoch`
    /// (`main`: asked by the main program's own check).
    #[inline]
    fn engine_limit(&self, epoch: u64, main: bool) -> Option<Limit> {
        if self.shutdown.load(Ordering::Relaxed) {
            return Some(Limit::Shutdown);
        }
        if self.cancel_epoch.load(Ordering::Relaxed) > epoch {
            return Some(Limit::Cancelled);
        }
        self.budget_or_memory(main)
    }

    /// The engine-wide limits but shutdown and cancel (see [`Shared::engine_limit`]).
    #[inline(always)]
    fn budget_or_memory(&self, main: bool) -> Option<Limit> {
        if self
            .limits
            .total_reductions
            .is_some_and(|m| self.total_used.load(Ordering::Relaxed) >= m)
        {
            return Some(Limit::Budget);
        }
        // The engine's account (all its processes stop), or the running actor's
        // (`actor_max_memory`: that actor crashes).
        if self.engine_memory_over(!main) || crate::memory::over(self.account) {
            return Some(Limit::Memory);
        }
        None
    }

    /// An engine-wide limit that stops an evaluation before it starts: [`Shared::exhausted`]
    /// without the cancel check (a cancel stops only the runs started before it).
    #[inline(always)]
    pub fn refuses_start(&self) -> Option<Limit> {
        if self.shutdown.load(Ordering::Relaxed) {
            return Some(Limit::Shutdown);
        }
        self.budget_or_memory(false)
    }

    /// True when any run starting now would stop at once.
    #[inline]
    pub fn exhausted(&self) -> Option<Limit> {
        self.engine_limit(self.cancel_epoch.load(Ordering::Relaxed), false)
    }

    /// The limit that ended the current evaluation, if any.
    pub fn tripped(&self) -> Option<Limit> {
        self.watchdog.tripped()
    }

    /// Re-arms the main guard for a job starting now with `step` reductions per hook call.
    #[inline(always)]
    fn arm_main(&self, step: u32) {
        let m = &self.main;
        m.step.store(step as u64, Ordering::Relaxed);
        m.used.store(0, Ordering::Relaxed);
        m.epoch
            .store(self.cancel_epoch.load(Ordering::Relaxed), Ordering::Relaxed);
        if let Some(t) = self.limits.timeout {
            let at = (Instant::now() + t).saturating_duration_since(self.t0);
            let ns = u64::try_from(at.as_nanos()).unwrap_or(u64::MAX - 1);
            m.deadline.store(ns + 1, Ordering::Relaxed);
        }
    }

    /// Arms the main guard for the job an evaluation is about to hand to the main process
    /// with pid number `pid` (`Interpreter::try_run_armed`), as the job's hook would at its
    /// start, and answers the step; 0 (nothing armed: the job calls the hook) when that
    /// process is not the one the watchdog has recorded (the hook records it) or the
    /// engine has a total budget (the hook charges each job's first step to it). Called by
    /// `Engine::limited`'s evaluation just after the watchdog's `begin`: the hook's other
    /// cases (no evaluation running, engine-wide limits) cannot hold.
    #[inline(always)]
    pub fn arm_call(&self, pid: u64) -> u32 {
        if self.watchdog.main_pid.load(Ordering::Relaxed) != pid
            || self.limits.total_reductions.is_some()
        {
            return 0;
        }
        // A firing since `begin` tripped the evaluation: its first reduction stops it.
        let step = if self.watchdog.word.load(Ordering::Acquire) & TRIP_BITS != 0 {
            1
        } else {
            self.main_step
        };
        self.arm_main(step);
        step
    }

    /// The main guard, called every step of a main-program job (the job's hook).
    pub fn check_main(&self) -> Result<(), Unwind> {
        if let Some(l) = self.tripped() {
            return Err(limit_unwind(l));
        }
        let m = &self.main;
        let step = m.step.load(Ordering::Relaxed);
        let used = m.used.load(Ordering::Relaxed).saturating_add(step);
        m.used.store(used, Ordering::Relaxed);
        if self.limits.total_reductions.is_some() {
            self.total_used.fetch_add(step, Ordering::Relaxed);
        }
        let l = self
            .engine_limit(m.epoch.load(Ordering::Relaxed), true)
            .or_else(|| {
                if self.limits.max_reductions.is_some_and(|x| used >= x) {
                    return Some(Limit::Reductions);
                }
                let d = m.deadline.load(Ordering::Relaxed);
                if d != 0 && self.t0.elapsed().as_nanos() >= (d - 1) as u128 {
                    return Some(Limit::Deadline);
                }
                None
            });
        if let Some(l) = l {
            self.watchdog.set_trip(l);
        }
        match self.tripped() {
            Some(l) => Err(limit_unwind(l)),
            None => Ok(()),
        }
    }
}

/// Cancels an engine's evaluations from any thread ([`crate::Engine::cancel_handle`]).
#[derive(Clone)]
pub struct CancelHandle {
    pub(crate) shared: Arc<Shared>,
    pub(crate) rt: RtHandle,
}

impl CancelHandle {
    /// Ends the running evaluation with kind `cancelled` (also when it is blocked), and every
    /// actor message or timer callback of the engine running now. Later evaluations run
    /// normally. Cancelling when nothing runs has no effect.
    pub fn cancel(&self) {
        self.shared.cancel_epoch.fetch_add(1, Ordering::SeqCst);
        self.shared.watchdog.fire(&self.rt, None, Limit::Cancelled);
    }
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelHandle")
    }
}

/// The unwind that ends a limited evaluation: a process exit, not an exception.
pub fn limit_unwind(l: Limit) -> Unwind {
    Unwind::limit(l.kind())
}

/// The kind (`reduction_limit`, `deadline`, …) of an unwind made by [`limit_unwind`].
pub fn limit_kind(u: &Unwind) -> Option<&'static str> {
    let k = u.limit_kind()?;
    Limit::from_kind(k.as_str()).map(Limit::kind)
}

/// The guard of one actor message or timer/monitor callback (main-program jobs use
/// [`Shared::check_main`]).
pub struct Guard {
    step: u64,
    used: u64,
    max: Option<u64>,
    deadline: Option<Instant>,
    epoch: u64,
    own: Option<Limit>,
    shared: Arc<Shared>,
}

impl Guard {
    /// A guard for an actor run starting now.
    pub fn start(shared: Arc<Shared>, step: u32) -> Guard {
        let l = &shared.limits;
        Guard {
            step: step as u64,
            used: 0,
            max: l.actor_max(),
            deadline: l.timeout.map(|t| Instant::now() + t),
            epoch: shared.cancel_epoch.load(Ordering::Relaxed),
            own: None,
            shared,
        }
    }

    /// Called every `step` reductions.
    pub fn check(&mut self) -> Result<(), Unwind> {
        if let Some(l) = self.own {
            return Err(limit_unwind(l));
        }
        self.used = self.used.saturating_add(self.step);
        if self.shared.limits.total_reductions.is_some() {
            self.shared
                .total_used
                .fetch_add(self.step, Ordering::Relaxed);
        }
        let l = self.shared.engine_limit(self.epoch, false).or_else(|| {
            if self.max.is_some_and(|m| self.used >= m) {
                Some(Limit::Reductions)
            } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
                Some(Limit::Deadline)
            } else {
                None
            }
        });
        if let Some(l) = l {
            self.own.get_or_insert(l);
        }
        match self.own {
            Some(l) => Err(limit_unwind(l)),
            None => Ok(()),
        }
    }
}

/// The current evaluation in one word, and what ends it from outside: the deadline timer,
/// a [`CancelHandle`], [`crate::Engine::shutdown`]. Per call the engine pays one store
/// ([`Watchdog::begin`]), one load when the job starts ([`Watchdog::job_started`]) and one
/// read-modify-write at the end ([`Watchdog::end`]); the locks are taken only by a firing
/// and by the first job of a new main process.
///
/// The word: bits 0–7 the trip (0 none, else 1 + the limit's index in `Limit::ALL`), bit 8
/// an evaluation runs, bit 9 a firing kills the main process (set with bit 8 by `begin`:
/// every evaluation runs its jobs there), bit 10 a firing is killing that process, bits
/// 16– the evaluation's id (to tell a late deadline timer from the evaluation it was
/// armed for). A firing during an evaluation always kills the recorded main process
/// (which fails a blocked wait; a job that had not started yet then never runs, or runs
/// in a fresh main process and finds the trip at its start and stops at its first
/// reduction). Setting bit 9 with a `fetch_or` at each job's start, so that a firing before
/// the job only tripped it, would cost one locked instruction per call, and a firing is rare.
#[derive(Default)]
pub struct Watchdog {
    word: AtomicU64,
    /// Ids of evaluations (written under the engine's lock only: a load and a store).
    next: AtomicU64,
    /// Held by a firing from its check to its kill; `end` waits on it when a firing is on.
    firing: Mutex<()>,
    /// The main process the jobs run in, recorded when it changes (its pid number first).
    main_pid: AtomicU64,
    main: Mutex<Option<ProcRef>>,
}

const TRIP_BITS: u64 = 0xff;
const RUNNING: u64 = 1 << 8;
const STARTED: u64 = 1 << 9;
const FIRING: u64 = 1 << 10;
const ID_SHIFT: u32 = 16;

fn trip_code(l: Limit) -> u64 {
    Limit::ALL.iter().position(|x| *x == l).map_or(1, |i| i + 1) as u64
}

#[inline(always)]
fn trip_of(word: u64) -> Option<Limit> {
    match word & TRIP_BITS {
        0 => None,
        n => Limit::ALL.get(n as usize - 1).copied(),
    }
}

impl Watchdog {
    /// An evaluation starts (the engine's lock held): answers its id. Clears the trip.
    pub fn begin(&self) -> u64 {
        let id = self.next.load(Ordering::Relaxed).wrapping_add(1) & (u64::MAX >> ID_SHIFT);
        self.next.store(id, Ordering::Relaxed);
        // A plain store: every other change of the word is a read-modify-write, which sees
        // either the old evaluation or this one.
        self.word
            .store((id << ID_SHIFT) | RUNNING | STARTED, Ordering::Release);
        id
    }

    /// The limit that tripped the current (or last) evaluation.
    pub fn tripped(&self) -> Option<Limit> {
        trip_of(self.word.load(Ordering::Acquire))
    }

    /// Sets the first limit that tripped the evaluation (a later one does not replace it).
    pub(crate) fn set_trip(&self, l: Limit) {
        let code = trip_code(l);
        let _ = self
            .word
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
                (w & TRIP_BITS == 0).then_some(w | code)
            });
    }

    /// Arms the deadline timer of evaluation `id` of the engine with `shared` state.
    pub fn arm(shared: &Arc<Shared>, rt: &RtHandle, id: u64, t: Duration) -> TimerRef {
        let ms = t.as_millis().min(u64::MAX as u128) as u64;
        let sh = shared.clone();
        let killer = rt.clone();
        rt.after(ms.max(1), move |_cx| {
            sh.watchdog.fire(&killer, Some(id), Limit::Deadline);
        })
    }

    /// Trips evaluation `id` (or whichever runs, for None) with `l` and kills its main process
    /// when a job of it has started.
    pub fn fire(&self, rt: &RtHandle, id: Option<u64>, l: Limit) {
        let _firing = self.firing.lock();
        let code = trip_code(l);
        let r = self
            .word
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
                let ours = w & RUNNING != 0 && id.is_none_or(|i| w >> ID_SHIFT == i);
                ours.then(|| {
                    let t = if w & TRIP_BITS == 0 { code } else { 0 };
                    w | t | FIRING
                })
            });
        let Ok(old) = r else { return };
        if old & STARTED != 0 {
            // The evaluation cannot end meanwhile: `end` waits for `firing`.
            if let Some(main) = self.main.lock().as_ref() {
                rt.kill(main);
            }
        }
        self.word.fetch_and(!FIRING, Ordering::SeqCst);
    }

    /// A main-program job started in `main`: answers the trip already set, if any, and
    /// whether an evaluation runs (`Engine::limited`, which checked the engine-wide limits
    /// just before).
    fn job_started(&self, main: &ProcRef) -> (Option<Limit>, bool) {
        let pid = main.pid().number;
        if self.main_pid.load(Ordering::Relaxed) != pid {
            *self.main.lock() = Some(main.clone());
            self.main_pid.store(pid, Ordering::Relaxed);
        }
        // A load: a firing that this misses kills `main` (recorded above, under the lock a
        // firing takes to read it when it changed), which ends this job.
        let w = self.word.load(Ordering::Acquire);
        (trip_of(w), w & RUNNING != 0)
    }

    /// The evaluation ended: answers the limit that tripped it. Inline in every call's
    /// path (the swap and a test); a timer's cancel and a firing's wait are out of line.
    #[inline(always)]
    pub fn end(&self, timer: Option<TimerRef>) -> Option<Limit> {
        if let Some(t) = timer {
            cancel_timer(t);
        }
        let old = self.word.swap(0, Ordering::SeqCst);
        if old & FIRING != 0 {
            self.wait_firing();
        }
        trip_of(old)
    }

    /// A firing is killing the main process: let it finish before the next evaluation can
    /// start in that process.
    #[cold]
    #[inline(never)]
    fn wait_firing(&self) {
        drop(self.firing.lock());
    }
}

/// Cancels an evaluation's deadline timer (out of line: most evaluations have none).
#[cold]
#[inline(never)]
fn cancel_timer(t: TimerRef) {
    t.cancel();
}

/// The hooks of an engine (`Program::ctx_hook`): a main-program job counts against the
/// engine's current evaluation (one hook per main context, re-armed per job); an actor
/// message or callback gets a guard of its own; both see the engine-wide limits. Each run
/// also charges its thread to the engine's memory account (the engine's worker threads run
/// only its processes).
pub fn hook_factory(shared: Arc<Shared>) -> crate::interp::program::CtxHookFactory {
    Arc::new(
        move |main: Option<&ProcRef>, slot: &mut Option<crate::interp::eval::PreemptHook>| {
            if let Some(a) = shared.account {
                if crate::memory::current().is_none() {
                    crate::memory::set_current(Some(a));
                }
            }
            let l = &shared.limits;
            let Some(p) = main else {
                return actor_hook(&shared, slot);
            };
            #[cfg(test)]
            MAIN_HOOK_CALLS.with(|n| n.set(n.get() + 1));
            let (trip, in_eval) = shared.watchdog.job_started(p);
            let mut step = shared.main_step;
            // Inside an evaluation `Engine::limited` checked the engine-wide limits a moment
            // ago (a shutdown or cancel since then set the trip).
            if trip.is_some() || (!in_eval && shared.exhausted().is_some()) {
                step = 1;
            }
            if l.total_reductions.is_some() {
                shared.total_used.fetch_add(step as u64, Ordering::Relaxed);
            }
            shared.arm_main(step);
            if slot.is_none() {
                main_hook(&shared, slot);
            }
            step
        },
    )
}

#[cfg(test)]
thread_local! {
    /// Main-program jobs this thread started through the hook factory (the tests tell armed
    /// calls, `Shared::arm_call`, from hooked ones by it).
    static MAIN_HOOK_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The hook of an actor message or callback run: a guard of its own (kept out of line: a
/// main-program job, the call a host makes, is the hot case).
#[inline(never)]
fn actor_hook(shared: &Arc<Shared>, slot: &mut Option<crate::interp::eval::PreemptHook>) -> u32 {
    let l = &shared.limits;
    let mut step = l.step(l.actor_max());
    // A run that would stop at once stops at its first reduction.
    if shared.exhausted().is_some() {
        step = 1;
    }
    // Every run pays one step up front against the total budget: runs shorter than a step
    // (a small message, a timer tick) never reach the hook and would be free.
    if l.total_reductions.is_some() {
        shared.total_used.fetch_add(step as u64, Ordering::Relaxed);
    }
    let mut guard = Guard::start(shared.clone(), step);
    *slot = Some(Box::new(move || guard.check()));
    step
}

/// The main context's hook, made by its first job (later jobs only re-arm `Shared::main`).
#[cold]
#[inline(never)]
fn main_hook(shared: &Arc<Shared>, slot: &mut Option<crate::interp::eval::PreemptHook>) {
    let sh = shared.clone();
    *slot = Some(Box::new(move || sh.check_main()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(l: Limits) -> Arc<Shared> {
        Arc::new(Shared::new(l, None))
    }

    #[test]
    fn reduction_guard_trips_at_the_limit_and_stays_tripped() {
        let limits = Limits {
            max_reductions: Some(10_000),
            ..Limits::default()
        };
        assert_eq!(limits.step(limits.max_reductions), 4000);
        let sh = shared(limits);
        sh.watchdog.begin();
        sh.arm_main(4000);
        assert!(sh.check_main().is_ok()); // 4000
        assert!(sh.check_main().is_ok()); // 8000
        assert!(sh.check_main().is_err()); // 12000 >= 10000
        assert_eq!(sh.tripped(), Some(Limit::Reductions));
        assert!(sh.check_main().is_err());
        assert_eq!(sh.watchdog.end(None), Some(Limit::Reductions));
        assert_eq!(sh.tripped(), None);
        // The next job counts from zero again.
        sh.watchdog.begin();
        sh.arm_main(4000);
        assert!(sh.check_main().is_ok());
        assert_eq!(sh.watchdog.end(None), None);
    }

    #[test]
    fn small_limits_use_a_small_step() {
        let limits = Limits {
            max_reductions: Some(5),
            ..Limits::default()
        };
        assert_eq!(limits.step(limits.max_reductions), 5);
        let sh = shared(limits);
        sh.watchdog.begin();
        sh.arm_main(5);
        assert!(sh.check_main().is_err());
        let l = Limits {
            actor_max_reductions: Some(3),
            ..Limits::default()
        };
        let mut g = Guard::start(shared(l), l.step(l.actor_max()));
        assert!(g.check().is_err());
    }

    #[test]
    fn a_past_deadline_trips() {
        let limits = Limits {
            timeout: Some(Duration::ZERO),
            ..Limits::default()
        };
        let sh = shared(limits);
        sh.watchdog.begin();
        sh.arm_main(4000);
        assert!(matches!(sh.check_main(), Err(Unwind::Exit(_))));
        assert_eq!(sh.tripped(), Some(Limit::Deadline));
        let mut g = Guard::start(sh.clone(), 4000);
        assert!(g.check().is_err());
    }

    #[test]
    fn a_firing_trips_only_its_own_evaluation_and_the_first_trip_stays() {
        let rt = crate::runtime::Runtime::new(crate::runtime::Config::default()).unwrap();
        let sh = shared(Limits::default());
        let w = &sh.watchdog;
        // Nothing runs: no effect.
        w.fire(&rt.handle(), None, Limit::Cancelled);
        assert_eq!(w.tripped(), None);
        let id = w.begin();
        // A late timer of an earlier evaluation: no effect.
        w.fire(&rt.handle(), Some(id.wrapping_sub(1)), Limit::Deadline);
        assert_eq!(w.tripped(), None);
        w.fire(&rt.handle(), Some(id), Limit::Deadline);
        w.set_trip(Limit::Reductions);
        assert_eq!(w.tripped(), Some(Limit::Deadline));
        assert_eq!(w.end(None), Some(Limit::Deadline));
        w.begin();
        assert_eq!(w.tripped(), None);
        assert_eq!(w.end(None), None);
    }

    #[test]
    fn the_total_budget_spans_runs_and_actor_guards_trip_on_their_own() {
        let limits = Limits {
            total_reductions: Some(10_000),
            ..Limits::default()
        };
        let sh = shared(limits);
        let mut a = Guard::start(sh.clone(), 4000);
        let mut b = Guard::start(sh.clone(), 4000);
        assert!(a.check().is_ok());
        assert!(b.check().is_ok());
        assert!(a.check().is_err()); // 12000 over both
        assert!(b.check().is_err());
        assert_eq!(sh.tripped(), None); // actors do not trip the evaluation
        assert_eq!(sh.exhausted(), Some(Limit::Budget));
    }

    #[test]
    fn cancelling_stops_runs_started_before_only() {
        let sh = shared(Limits::default());
        let mut before = Guard::start(sh.clone(), 4000);
        sh.cancel_epoch.fetch_add(1, Ordering::SeqCst);
        let mut after = Guard::start(sh.clone(), 4000);
        assert!(before.check().is_err());
        assert!(after.check().is_ok());
    }

    fn hooked_jobs() -> usize {
        MAIN_HOOK_CALLS.with(|n| n.get())
    }

    /// `Engine::run` arms the main guard itself for the main process the watchdog knows
    /// (`Shared::arm_call`): its job calls no hook factory. The first call into a main
    /// process, a call after a kill replaced it, and every call of an engine with a total
    /// budget go through the hook; every limit binds the same on both.
    #[test]
    fn script_calls_arm_their_limits_and_fall_back_to_the_hook() {
        let e = crate::Engine::builder().max_reductions(100_000).build();
        let inc = e.compile_fn(&["x"], "x + 1").unwrap();
        let spin = e.compile("[true] whileTrue: []").unwrap();
        let run = |s: &crate::engine::Script, args: &[crate::Value]| {
            let before = hooked_jobs();
            let r = e.run(s, args).map_err(|er| er.limit);
            (r.map(|v| v.as_i64()), hooked_jobs() - before)
        };
        let one = [crate::Value::Int(1)];
        // The evals above ran through the hook: the watchdog knows the main process.
        for _ in 0..3 {
            assert_eq!(run(&inc, &one), (Ok(Some(2)), 0));
        }
        assert_eq!(run(&spin, &[]), (Err(Some(Limit::Reductions)), 0));
        assert_eq!(run(&inc, &one), (Ok(Some(2)), 0));
        // A cancel kills the main process: the next call runs in a fresh one, through the
        // hook, and the calls after are armed again.
        let h = e.cancel_handle();
        e.register_fn("Host", "cancel", move || {
            h.cancel();
            0i64
        })
        .unwrap();
        let cancel = e.compile("Host cancel. [true] whileTrue: []").unwrap();
        assert_eq!(run(&cancel, &[]), (Err(Some(Limit::Cancelled)), 0));
        assert_eq!(run(&inc, &one), (Ok(Some(2)), 1));
        assert_eq!(run(&inc, &one), (Ok(Some(2)), 0));
        assert_eq!(run(&spin, &[]), (Err(Some(Limit::Reductions)), 0));

        // A total budget: each job pays its first step through the hook.
        let e = crate::Engine::builder().total_reductions(50_000).build();
        let inc = e.compile_fn(&["x"], "x + 1").unwrap();
        let spin = e.compile("[true] whileTrue: []").unwrap();
        for _ in 0..3 {
            let before = hooked_jobs();
            assert_eq!(e.run(&inc, &one).unwrap().as_i64(), Some(2));
            assert_eq!(hooked_jobs() - before, 1);
        }
        assert_eq!(e.run(&spin, &[]).unwrap_err().limit, Some(Limit::Budget));
    }

    #[test]
    fn limit_unwinds_name_their_kind() {
        for l in Limit::ALL {
            assert_eq!(limit_kind(&limit_unwind(l)), Some(l.kind()));
        }
        assert_eq!(limit_kind(&Unwind::program_exit(1)), None);
    }
}
