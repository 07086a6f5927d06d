//! Limits a script cannot escape: reductions and a wall-clock deadline per evaluation (and
//! per actor message), memory and a total budget per engine, cancellation and shutdown.
//!
//! * **Where they are checked.** The engine sets `Program::ctx_hook` ([`hook_factory`]): at
//!   the start of every main-program job (`MainActor`) and of every pooled-context run (an
//!   actor's message, a timer or monitor callback; `ActorSys::take_ctx`) the context gets a
//!   preemption hook (`Ctx::preempt`) with a fresh [`Guard`]. The evaluator calls the hook
//!   every `step` reductions from `Ctx::tick`'s slow path, and bulk primitives reach it
//!   through `Ctx::charge`, so a limit costs nothing per reduction; a small reduction limit
//!   lowers the step to itself.
//! * **Uncatchable.** A tripped guard unwinds as `Unwind::Exit` ([`limit_unwind`]), which
//!   `on:do:` does not catch. The trip is sticky: every later hook call of the run unwinds
//!   again, so an `ensure:` block gets at most one step of reductions, and the engine
//!   reports the limit whatever the script answered.
//! * **Engine-wide limits** ([`Shared`]) hold across every process of the engine: the memory
//!   account (`crate::memory`), the total reduction budget (`total_reductions`: every run
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

/// The configured limits of an engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_reductions: Option<u64>,
    pub actor_max_reductions: Option<u64>,
    pub timeout: Option<Duration>,
    pub max_memory: Option<usize>,
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

/// Which limit (if any) ended the current evaluation; shared by the engine and the hook.
/// 0 = none, else 1 + the limit's index in `Limit::ALL` (read on every run: an atomic).
#[derive(Default)]
pub struct Trip {
    tripped: std::sync::atomic::AtomicU8,
}

impl Trip {
    pub fn reset(&self) {
        self.tripped.store(0, Ordering::SeqCst);
    }
    pub fn get(&self) -> Option<Limit> {
        match self.tripped.load(Ordering::SeqCst) {
            0 => None,
            n => Limit::ALL.get(n as usize - 1).copied(),
        }
    }
    /// Sets the first limit that tripped (a later one does not replace it).
    pub(crate) fn set(&self, l: Limit) {
        let n = Limit::ALL.iter().position(|x| *x == l).map_or(1, |i| i + 1) as u8;
        let _ = self
            .tripped
            .compare_exchange(0, n, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// The state every guard of one engine shares.
pub struct Shared {
    pub limits: Limits,
    /// The current main-program evaluation's trip.
    pub trip: Trip,
    /// Bumped by each cancel: a run started before the bump stops.
    pub cancel_epoch: AtomicU64,
    pub shutdown: AtomicBool,
    /// Reductions counted against `total_reductions`, over every run.
    pub total_used: AtomicU64,
    /// The engine's memory account (`max_memory`).
    pub account: Option<&'static Account>,
    /// Set when a bulk step was refused for memory (`memory::would_exceed` ran out of room).
    pub watchdog: Watchdog,
}

impl Shared {
    pub fn new(limits: Limits, account: Option<&'static Account>) -> Shared {
        Shared {
            limits,
            trip: Trip::default(),
            cancel_epoch: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            total_used: AtomicU64::new(0),
            account,
            watchdog: Watchdog::default(),
        }
    }

    /// An engine-wide limit in force for a run that started at cancel epoch `epoch`.
    fn engine_limit(&self, epoch: u64) -> Option<Limit> {
        if self.shutdown.load(Ordering::Relaxed) {
            return Some(Limit::Shutdown);
        }
        if self.cancel_epoch.load(Ordering::Relaxed) > epoch {
            return Some(Limit::Cancelled);
        }
        if self
            .limits
            .total_reductions
            .is_some_and(|m| self.total_used.load(Ordering::Relaxed) >= m)
        {
            return Some(Limit::Budget);
        }
        // The engine's account, or the running actor's (`actor_max_memory`).
        if crate::memory::over(self.account) {
            return Some(Limit::Memory);
        }
        None
    }

    /// True when any run starting now would stop at once.
    pub fn exhausted(&self) -> Option<Limit> {
        self.engine_limit(self.cancel_epoch.load(Ordering::Relaxed))
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
        self.shared
            .watchdog
            .fire(&self.rt, None, &self.shared.trip, Limit::Cancelled);
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

/// The state of the hook for one run (a main-program job, an actor message, a callback).
pub struct Guard {
    step: u64,
    used: u64,
    max: Option<u64>,
    deadline: Option<Instant>,
    epoch: u64,
    /// A main-program job: trips the engine's current evaluation.
    main: bool,
    own: Option<Limit>,
    shared: Arc<Shared>,
}

impl Guard {
    /// A guard for a run starting now (`main`: a main-program job).
    pub fn start(shared: Arc<Shared>, main: bool, step: u32) -> Guard {
        let l = &shared.limits;
        Guard {
            step: step as u64,
            used: 0,
            max: if main {
                l.max_reductions
            } else {
                l.actor_max()
            },
            deadline: l.timeout.map(|t| Instant::now() + t),
            epoch: shared.cancel_epoch.load(Ordering::Relaxed),
            main,
            own: None,
            shared,
        }
    }

    fn tripped(&self) -> Option<Limit> {
        if self.main {
            self.shared.trip.get()
        } else {
            self.own
        }
    }

    fn trip(&mut self, l: Limit) {
        if self.main {
            self.shared.trip.set(l);
        } else {
            self.own.get_or_insert(l);
        }
    }

    /// Called every `step` reductions.
    pub fn check(&mut self) -> Result<(), Unwind> {
        if let Some(l) = self.tripped() {
            return Err(limit_unwind(l));
        }
        self.used = self.used.saturating_add(self.step);
        if self.shared.limits.total_reductions.is_some() {
            self.shared
                .total_used
                .fetch_add(self.step, Ordering::Relaxed);
        }
        let l = self.shared.engine_limit(self.epoch).or_else(|| {
            if self.max.is_some_and(|m| self.used >= m) {
                Some(Limit::Reductions)
            } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
                Some(Limit::Deadline)
            } else {
                None
            }
        });
        if let Some(l) = l {
            self.trip(l);
        }
        match self.tripped() {
            Some(l) => Err(limit_unwind(l)),
            None => Ok(()),
        }
    }
}

/// Kills a blocked evaluation when its deadline passes or it is cancelled (see the module
/// doc).
#[derive(Default)]
pub struct Watchdog {
    state: Mutex<WatchState>,
    next: AtomicU64,
}

#[derive(Default)]
struct WatchState {
    /// The evaluation running now, if any.
    eval: Option<u64>,
    /// The main process, once a job of that evaluation started in it (killing it before
    /// would drop the queued job, and the session with it).
    main: Option<ProcRef>,
}

impl Watchdog {
    /// An evaluation starts: answers its id.
    pub fn begin(&self) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        *self.state.lock() = WatchState {
            eval: Some(id),
            main: None,
        };
        id
    }

    /// Arms the deadline timer of evaluation `id` of the engine with `shared` state.
    pub fn arm(shared: &Arc<Shared>, rt: &RtHandle, id: u64, t: Duration) -> TimerRef {
        let ms = t.as_millis().min(u64::MAX as u128) as u64;
        let sh = shared.clone();
        let killer = rt.clone();
        rt.after(ms.max(1), move |_cx| {
            sh.watchdog
                .fire(&killer, Some(id), &sh.trip, Limit::Deadline);
        })
    }

    /// Trips evaluation `id` (or whichever runs, for None) with `l` and kills its main process
    /// when a job of it has started.
    pub fn fire(&self, rt: &RtHandle, id: Option<u64>, trip: &Trip, l: Limit) {
        // Holding the lock: the evaluation cannot finish and a later one cannot start
        // between the check and the kill.
        let g = self.state.lock();
        if g.eval.is_some() && (id.is_none() || g.eval == id) {
            trip.set(l);
            if let Some(main) = &g.main {
                rt.kill(main);
            }
        }
    }

    /// A main-program job started in `main`.
    fn job_started(&self, main: &ProcRef) {
        let mut g = self.state.lock();
        if g.eval.is_some() {
            g.main = Some(main.clone());
        }
    }

    /// The evaluation ended.
    pub fn end(&self, timer: Option<TimerRef>) {
        *self.state.lock() = WatchState::default();
        if let Some(t) = timer {
            t.cancel();
        }
    }
}

/// The hooks of an engine (`Program::ctx_hook`): a main-program job counts against the
/// engine's current evaluation; an actor message or callback gets limits of its own; both
/// see the engine-wide limits. Each run also charges its thread to the engine's memory
/// account (the engine's worker threads run only its processes).
pub fn hook_factory(shared: Arc<Shared>) -> crate::interp::program::CtxHookFactory {
    Arc::new(move |main: Option<&ProcRef>| {
        if let Some(a) = shared.account {
            if crate::memory::current().is_none() {
                crate::memory::set_current(Some(a));
            }
        }
        let l = &shared.limits;
        let (is_main, mut step) = match main {
            Some(p) => {
                shared.watchdog.job_started(p);
                (true, l.step(l.max_reductions))
            }
            None => (false, l.step(l.actor_max())),
        };
        // A run that would stop at once stops at its first reduction.
        let stopped = if main.is_some() {
            shared.trip.get().is_some()
        } else {
            false
        };
        if stopped || shared.exhausted().is_some() {
            step = 1;
        }
        // Every run pays one step up front against the total budget: runs shorter than a
        // step (a small message, a timer tick) never reach the hook and would be free.
        if l.total_reductions.is_some() {
            shared.total_used.fetch_add(step as u64, Ordering::Relaxed);
        }
        let mut guard = Guard::start(shared.clone(), is_main, step);
        let hook: crate::interp::eval::PreemptHook = Box::new(move || guard.check());
        (hook, step)
    })
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
        let mut g = Guard::start(sh.clone(), true, 4000);
        assert!(g.check().is_ok()); // 4000
        assert!(g.check().is_ok()); // 8000
        assert!(g.check().is_err()); // 12000 >= 10000
        assert_eq!(sh.trip.get(), Some(Limit::Reductions));
        assert!(g.check().is_err());
        sh.trip.reset();
        assert_eq!(sh.trip.get(), None);
    }

    #[test]
    fn small_limits_use_a_small_step() {
        let limits = Limits {
            max_reductions: Some(5),
            ..Limits::default()
        };
        assert_eq!(limits.step(limits.max_reductions), 5);
        let mut g = Guard::start(shared(limits), true, 5);
        assert!(g.check().is_err());
    }

    #[test]
    fn a_past_deadline_trips() {
        let limits = Limits {
            timeout: Some(Duration::ZERO),
            ..Limits::default()
        };
        let sh = shared(limits);
        let mut g = Guard::start(sh.clone(), true, 4000);
        assert!(matches!(g.check(), Err(Unwind::Exit(_))));
        assert_eq!(sh.trip.get(), Some(Limit::Deadline));
    }

    #[test]
    fn the_total_budget_spans_runs_and_actor_guards_trip_on_their_own() {
        let limits = Limits {
            total_reductions: Some(10_000),
            ..Limits::default()
        };
        let sh = shared(limits);
        let mut a = Guard::start(sh.clone(), false, 4000);
        let mut b = Guard::start(sh.clone(), false, 4000);
        assert!(a.check().is_ok());
        assert!(b.check().is_ok());
        assert!(a.check().is_err()); // 12000 over both
        assert!(b.check().is_err());
        assert_eq!(sh.trip.get(), None); // actors do not trip the evaluation
        assert_eq!(sh.exhausted(), Some(Limit::Budget));
    }

    #[test]
    fn cancelling_stops_runs_started_before_only() {
        let sh = shared(Limits::default());
        let mut before = Guard::start(sh.clone(), false, 4000);
        sh.cancel_epoch.fetch_add(1, Ordering::SeqCst);
        let mut after = Guard::start(sh.clone(), false, 4000);
        assert!(before.check().is_err());
        assert!(after.check().is_ok());
    }

    #[test]
    fn limit_unwinds_name_their_kind() {
        for l in Limit::ALL {
            assert_eq!(limit_kind(&limit_unwind(l)), Some(l.kind()));
        }
        assert_eq!(limit_kind(&Unwind::program_exit(1)), None);
    }
}
