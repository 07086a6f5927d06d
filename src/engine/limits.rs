//! Limits a script cannot escape: a reduction budget and a wall-clock deadline per
//! evaluation.
//!
//! Both are checked by the main context's preemption hook (`Ctx::preempt`), which the
//! evaluator calls every `budget` reductions from `Ctx::tick`'s slow path — so a limit costs
//! nothing per reduction. A tripped limit unwinds as `Unwind::Exit`, which `on:do:` does not
//! catch; the trip is sticky for the rest of the evaluation (every later hook call unwinds
//! again, so an `ensure:` block gets at most one budget of reductions and cannot keep the
//! evaluation alive), and the engine reports the limit whatever the script's last statement
//! answered.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::engine::error::Limit;
use crate::interp::eval::Unwind;
use crate::interp::value::Value;
use crate::interp::Vm;
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
    Unwind::Exit(Value::tuple(vec![
        Value::sym("engine_limit"),
        Value::sym(l.kind()),
    ]))
}

/// The kind (`reduction_limit`, `deadline`) of an unwind made by [`limit_unwind`].
pub fn limit_kind(u: &Unwind) -> Option<&'static str> {
    let Unwind::Exit(Value::Tuple(t)) = u else {
        return None;
    };
    if t.len() != 2 || t[0].as_sym().map(|s| s.as_str()) != Some("engine_limit") {
        return None;
    }
    [Limit::Reductions, Limit::Deadline]
        .into_iter()
        .map(Limit::kind)
        .find(|k| t[1].as_sym().map(|s| s.as_str()) == Some(*k))
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
    /// The evaluation the armed timer belongs to, while it runs.
    running: Arc<Mutex<Option<u64>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Watchdog {
    /// Arms the timer for an evaluation running in `main` with deadline `t` from now.
    pub fn arm(&self, vm: &Vm, t: Duration, main: ProcRef, trip: &Arc<Trip>) -> TimerRef {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *self.running.lock() = Some(id);
        let running = self.running.clone();
        let trip = trip.clone();
        let rt = vm.runtime();
        let ms = t.as_millis().min(u64::MAX as u128) as u64;
        let killer = rt.clone();
        rt.after(ms.max(1), move |_cx| {
            // Holding the lock: the evaluation cannot finish and a later one cannot start
            // between the check and the kill.
            let g = running.lock();
            if *g == Some(id) {
                trip.set(Limit::Deadline);
                killer.kill(&main);
            }
        })
    }

    /// The evaluation ended: the timer no longer applies.
    pub fn disarm(&self, timer: TimerRef) {
        *self.running.lock() = None;
        timer.cancel();
    }
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
