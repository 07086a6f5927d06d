//! Limits a script cannot escape: a reduction budget and a wall-clock deadline per
//! evaluation.
//!
//! * **Where they are checked.** The engine sets `Program::ctx_hook` ([`hook_factory`]): at
//!   the start of every main-program job (`MainActor`) and of every pooled-context run (an
//!   actor's message, a timer or monitor callback; `ActorSys::take_ctx`) the context gets a
//!   preemption hook (`Ctx::preempt`) with a fresh [`Guard`]. The evaluator calls the hook
//!   every `budget` reductions from `Ctx::tick`'s slow path, so a limit costs nothing per
//!   reduction; a small reduction limit lowers the step (the budget) to itself.
//! * **Uncatchable.** A tripped guard unwinds as `Unwind::Exit` ([`limit_unwind`]), which
//!   `on:do:` does not catch. The trip is sticky: every later hook call of the run unwinds
//!   again, so an `ensure:` block gets at most one step of reductions and cannot keep the
//!   evaluation alive, and the engine reports the limit whatever the script answered.
//! * **Blocked evaluations.** The hook only runs while code runs. For an evaluation blocked
//!   at its deadline (`Timer sleep:`, waiting for a reply) a runtime timer ([`Watchdog`])
//!   kills the main program's process once the evaluation's job has started in it: the
//!   blocked operation fails with an exit, the job unwinds as above (the session and
//!   bindings survive) and the Interpreter starts a fresh main process for the next job. A job that
//!   had not started yet finds the trip set and stops at its first reduction.
//! * **Actors.** Main-program jobs count against the engine's evaluation ([`Trip`] shared
//!   with the engine). An actor's message or callback gets the same limits counted from its
//!   own start; when one trips, the message ends and its caller gets an ordinary error of
//!   the limit's kind (`interp::actor::behaviour`); the actor survives (5.6).

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::engine::error::Limit;
use crate::interp::eval::Unwind;
use crate::interp::Interpreter;
use crate::runtime::{ProcRef, TimerRef};

/// Reductions between hook calls when the reduction limit does not ask for fewer (the
/// evaluator's default budget, so preemption of other processes is unchanged).
pub const DEFAULT_STEP: u32 = 4000;

/// The configured limits of an engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_reductions: Option<u64>,
    pub timeout: Option<Duration>,
}

impl Limits {
    pub fn any(&self) -> bool {
        self.max_reductions.is_some() || self.timeout.is_some()
    }

    /// Reductions between hook calls: at most the reduction limit, so a small limit is
    /// enforced to within one step.
    pub fn step(&self) -> u32 {
        match self.max_reductions {
            Some(n) => n.clamp(1, DEFAULT_STEP as u64) as u32,
            None => DEFAULT_STEP,
        }
    }
}

/// Which limit (if any) ended the current evaluation; shared by the engine and the hook.
#[derive(Default)]
pub struct Trip {
    tripped: Mutex<Option<Limit>>,
}

impl Trip {
    pub fn reset(&self) {
        *self.tripped.lock() = None;
    }
    pub fn get(&self) -> Option<Limit> {
        *self.tripped.lock()
    }
    pub(crate) fn set(&self, l: Limit) {
        self.tripped.lock().get_or_insert(l);
    }
}

/// The unwind that ends a limited evaluation: a process exit, not an exception.
pub fn limit_unwind(l: Limit) -> Unwind {
    Unwind::limit(l.kind())
}

/// The kind (`reduction_limit`, `deadline`) of an unwind made by [`limit_unwind`].
pub fn limit_kind(u: &Unwind) -> Option<&'static str> {
    let k = u.limit_kind()?;
    [Limit::Reductions, Limit::Deadline]
        .into_iter()
        .map(Limit::kind)
        .find(|kind| k.as_str() == *kind)
}

/// The state of the hook for one evaluation.
pub struct Guard {
    step: u64,
    used: u64,
    max: Option<u64>,
    deadline: Option<Instant>,
    trip: Arc<Trip>,
}

impl Guard {
    /// A guard for an evaluation starting now.
    pub fn start(limits: &Limits, trip: Arc<Trip>) -> Guard {
        Guard {
            step: limits.step() as u64,
            used: 0,
            max: limits.max_reductions,
            deadline: limits.timeout.map(|t| Instant::now() + t),
            trip,
        }
    }

    /// Called every `step` reductions.
    pub fn check(&mut self) -> Result<(), Unwind> {
        if let Some(l) = self.trip.get() {
            return Err(limit_unwind(l));
        }
        self.used = self.used.saturating_add(self.step);
        if self.max.is_some_and(|m| self.used >= m) {
            self.trip.set(Limit::Reductions);
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.trip.set(Limit::Deadline);
        }
        match self.trip.get() {
            Some(l) => Err(limit_unwind(l)),
            None => Ok(()),
        }
    }
}

/// The deadline timer of the running evaluation (see the module doc).
#[derive(Default)]
pub struct Watchdog {
    state: Arc<Mutex<WatchState>>,
    next: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct WatchState {
    /// The evaluation the armed timer belongs to, while it runs.
    eval: Option<u64>,
    /// The main process, once a job of that evaluation started in it (killing it before
    /// would drop the queued job, and the session with it).
    main: Option<ProcRef>,
}

impl Watchdog {
    /// Arms the timer for an evaluation starting now with deadline `t`.
    pub fn arm(&self, vm: &Interpreter, t: Duration, trip: &Arc<Trip>) -> TimerRef {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *self.state.lock() = WatchState {
            eval: Some(id),
            main: None,
        };
        let state = self.state.clone();
        let trip = trip.clone();
        let rt = vm.runtime();
        let ms = t.as_millis().min(u64::MAX as u128) as u64;
        let killer = rt.clone();
        rt.after(ms.max(1), move |_cx| {
            // Holding the lock: the evaluation cannot finish and a later one cannot start
            // between the check and the kill.
            let g = state.lock();
            if g.eval == Some(id) {
                trip.set(Limit::Deadline);
                // A job that has not started yet stops at its first reduction (the trip is
                // sticky and makes the step 1, see `hook_factory`).
                if let Some(main) = &g.main {
                    killer.kill(main);
                }
            }
        })
    }

    /// A main-program job started in `main`.
    fn job_started(&self, main: &ProcRef) {
        let mut g = self.state.lock();
        if g.eval.is_some() {
            g.main = Some(main.clone());
        }
    }

    /// The evaluation ended: the timer no longer applies.
    pub fn disarm(&self, timer: TimerRef) {
        *self.state.lock() = WatchState::default();
        timer.cancel();
    }
}

/// The hooks of an engine with limits (`Program::ctx_hook`): a main-program job counts
/// against the engine's current evaluation (`trip`, watched by `watchdog`); an actor message
/// or callback gets limits of its own.
pub fn hook_factory(
    limits: Limits,
    trip: Arc<Trip>,
    watchdog: Arc<Watchdog>,
) -> crate::interp::program::CtxHookFactory {
    Arc::new(move |main: Option<&ProcRef>| {
        let (guard, step) = match main {
            Some(p) => {
                watchdog.job_started(p);
                let step = if trip.get().is_some() {
                    1
                } else {
                    limits.step()
                };
                (Guard::start(&limits, trip.clone()), step)
            }
            None => (
                Guard::start(&limits, Arc::new(Trip::default())),
                limits.step(),
            ),
        };
        let mut guard = guard;
        let hook: crate::interp::eval::PreemptHook = Box::new(move || guard.check());
        (hook, step)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_guard_trips_at_the_limit_and_stays_tripped() {
        let trip = Arc::new(Trip::default());
        let limits = Limits {
            max_reductions: Some(10_000),
            timeout: None,
        };
        assert_eq!(limits.step(), 4000);
        let mut g = Guard::start(&limits, trip.clone());
        assert!(g.check().is_ok()); // 4000
        assert!(g.check().is_ok()); // 8000
        assert!(g.check().is_err()); // 12000 >= 10000
        assert_eq!(trip.get(), Some(Limit::Reductions));
        assert!(g.check().is_err());
        trip.reset();
        assert_eq!(trip.get(), None);
    }

    #[test]
    fn small_limits_use_a_small_step() {
        let limits = Limits {
            max_reductions: Some(5),
            timeout: None,
        };
        assert_eq!(limits.step(), 5);
        let mut g = Guard::start(&limits, Arc::new(Trip::default()));
        assert!(g.check().is_err());
    }

    #[test]
    fn a_past_deadline_trips() {
        let trip = Arc::new(Trip::default());
        let limits = Limits {
            max_reductions: None,
            timeout: Some(Duration::ZERO),
        };
        let mut g = Guard::start(&limits, trip.clone());
        assert!(matches!(g.check(), Err(Unwind::Exit(_))));
        assert_eq!(trip.get(), Some(Limit::Deadline));
    }

    #[test]
    fn limit_unwinds_name_their_kind() {
        assert_eq!(
            limit_kind(&limit_unwind(Limit::Reductions)),
            Some("reduction_limit")
        );
        assert_eq!(limit_kind(&limit_unwind(Limit::Deadline)), Some("deadline"));
        assert_eq!(limit_kind(&Unwind::program_exit(1)), None);
    }
}
