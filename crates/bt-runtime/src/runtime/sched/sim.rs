//! The deterministic scheduler (`bt test --seed N`, `--explore K`): one pool worker whose
//! every choice comes from a PRNG, under a virtual clock.
//!
//! * **Chosen at start, free when off.** A runtime made with [`Config::sim`] has exactly one
//!   pool worker, a manual clock and no timer thread; that worker runs [`Worker::run_sim`]
//!   instead of the ordinary loop (one test of `Shared::sim` when the thread starts). The
//!   ordinary scheduler's hot paths are unchanged: the only other test is the reduction
//!   budget of a process run (`Cx::new`), taken when `Config::reductions` is 0, which only a
//!   simulated runtime sets.
//! * **One choice per step.** A step is one coroutine resume (a process run starting, or a
//!   suspended one continuing). Before each step the worker moves everything runnable —
//!   its queue, the injector, the hand-offs of sync calls (`Handoff::next`, `LOCAL_NEXT`) — into
//!   one ready list in a fixed order and lets the strategy pick: a uniform random walk, or
//!   PCT (random priorities per process, lowered at `depth - 1` random change points).
//!   Preemption comes from the PRNG too: each process run gets a random reduction budget.
//! * **The gate.** Threads outside the runtime (the main program's caller) take part only
//!   through jobs they wait for ([`RtHandle::wait_job`]); the worker runs steps only while
//!   such a job is outstanding (or the runtime stops), so what is runnable at each choice
//!   does not depend on when the caller's thread gets to run.
//! * **Virtual time.** When nothing is runnable the clock jumps to the earliest deadline
//!   (a wait's timeout or a timer), which fires. With no deadline either, every process is
//!   blocked: a **deadlock**; with more steps than the budget for one job, a **livelock**.
//!   Both end the main process (its job fails) and leave a verdict with the processes and
//!   what each waits on ([`RtHandle::sim_take_verdict`]).
//! * **Injected crashes** (`crash_p`): a process about to start a run (a message boundary)
//!   whose label is `actor` exits with reason `#injected_crash` instead, with that
//!   probability.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{Shared, Task, Worker, CURRENT_WORKER, LOCAL_NEXT};
use crate::runtime::process::{finish, Envelope, ProcRef};
use crate::runtime::sched::GuestDone;
use crate::runtime::types::ExitReason;
use crate::value::Value;

pub use crate::runtime::config::{SimConfig, Strategy};

mod state;
pub use state::mix_seed;
pub(crate) use state::Sim;

impl Shared {
    /// Registers an outside thread's job (the worker runs while one is outstanding) and
    /// wakes the worker.
    pub(crate) fn sim_job(&self, done: &GuestDone) {
        let d = done.clone();
        self.sim_wait_for(Box::new(move || d.is_set()));
    }

    /// [`Shared::sim_job`] for any outside wait: `over` tells when it is over.
    pub(crate) fn sim_wait_for(&self, over: Box<dyn Fn() -> bool + Send>) {
        if let Some(s) = &self.sim {
            let mut c = s.core.lock();
            c.jobs.push(over);
            c.job_steps = 0;
            c.paused = false;
            drop(c);
            self.threads.ensure_workers();
            self.wake_all();
        }
    }

    /// After an outside thread's job is over: waits until the worker finished the step
    /// that ended it and stopped at the gate, so nothing the thread does next (a new job,
    /// a reseed) races with that step.
    pub(crate) fn sim_job_over(&self) {
        if let Some(s) = &self.sim {
            let mut c = s.core.lock();
            while !c.paused
                && !self.stopping.load(Ordering::SeqCst)
                && !self.shutdown.load(Ordering::SeqCst)
            {
                s.at_gate.wait_for(&mut c, Duration::from_millis(50));
            }
        }
    }

    pub(crate) fn sim_reseed(&self, salt: u64) {
        if let Some(s) = &self.sim {
            s.core.lock().reseed(mix_seed(s.cfg.seed, salt));
        }
    }

    pub(crate) fn sim_steps(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.core.lock().steps)
    }

    pub(crate) fn sim_take_verdict(&self) -> Option<String> {
        self.sim.as_ref().and_then(|s| s.core.lock().verdict.take())
    }

    /// Processes waiting on something and what (and those still runnable): the report of
    /// a deadlock or livelock.
    fn waiting_report(&self, runnable: &[String]) -> String {
        let procs: Vec<ProcRef> = {
            let t = self.procs.lock();
            let mut v: Vec<ProcRef> = t.values().cloned().collect();
            v.sort_by_key(|p| (p.0.pid.service, p.0.pid.number));
            v
        };
        let name = |p: &ProcRef| {
            let class = p.0.info.class_object_name();
            match class {
                Some(c) => format!("{} {} {}", p.0.pid, p.0.label, c.as_str()),
                None => format!("{} {}", p.0.pid, p.0.label),
            }
        };
        // Who holds each reply waiter: the process handling it, or with it queued.
        let mut holders: Vec<(usize, String)> = Vec::new();
        for p in &procs {
            let g = p.0.inner.lock();
            if let Some(w) = &g.current {
                holders.push((
                    Arc::as_ptr(w) as usize,
                    format!("{} (handling it)", name(p)),
                ));
            }
            for (i, e) in g.mailbox.iter().enumerate() {
                if let Envelope::User { reply: Some(w), .. } = e {
                    holders.push((
                        Arc::as_ptr(w) as usize,
                        format!("{} (queued, {i} messages ahead)", name(p)),
                    ));
                }
            }
        }
        let mut lines = Vec::new();
        for p in &procs {
            if p.0.pid.service {
                continue;
            }
            let g = p.0.inner.lock();
            let Some(w) = g.waiting.get() else { continue };
            if w.is_done() {
                continue;
            }
            let key = Arc::as_ptr(w) as usize;
            let on = holders
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, h)| format!("waits for a reply from {h}"))
                .unwrap_or_else(|| "waits (a sleep, a join or an outside event)".into());
            lines.push(format!("  {} {on}", name(p)));
        }
        if lines.is_empty() {
            lines.push("  (no process is waiting on another)".into());
        }
        for r in runnable {
            lines.push(format!("  {r} is runnable"));
        }
        lines.join("\n")
    }

    /// Ends the main program's process with a verdict for its caller.
    fn sim_fail_main(&self, verdict: String) {
        if let Some(s) = &self.sim {
            s.core.lock().verdict = Some(verdict);
        }
        let main: Vec<ProcRef> = self
            .procs
            .lock()
            .values()
            .filter(|p| p.0.label == "main")
            .cloned()
            .collect();
        for p in main {
            finish(self, &p, ExitReason::Killed);
        }
    }
}

impl Worker {
    /// The simulated worker loop (see the module doc); returns at shutdown.
    pub(crate) fn run_sim(mut self) {
        let _ = self.shared.workers[self.id]
            .thread
            .set(std::thread::current());
        CURRENT_WORKER.with(|c| c.set((self.shared.id, self.id)));
        let sh = self.shared.clone();
        let Some(sim) = sh.sim.as_ref() else { return };
        let mut ready: Vec<Task> = Vec::new();
        let mut keys: Vec<u64> = Vec::new();
        let mut idle_polls = 0u32;
        while !sh.shutdown.load(Ordering::Acquire) {
            // The gate: run only while an outside job is outstanding (or while stopping).
            let stopping = sh.stopping.load(Ordering::SeqCst);
            if !stopping {
                let mut c = sim.core.lock();
                if !c.gate_open() {
                    if !c.paused {
                        c.paused = true;
                        sim.at_gate.notify_all();
                    }
                    drop(c);
                    self.sim_park(Duration::from_millis(50));
                    continue;
                }
            }
            // Everything runnable, in a fixed order.
            if let Some((slot, gen)) = LOCAL_NEXT.with(std::cell::Cell::take) {
                ready.push(Task::Resume { slot, gen });
            }
            // (Never a claimed callee: `enqueue_call` does not claim under the simulation.)
            if let Some(h) = self.run_next.take() {
                ready.push(Task::Run(h.p.into_counted()));
            }
            {
                let wq = &sh.workers[self.id];
                let mut q = wq.q.lock();
                ready.extend(q.drain(..));
                wq.len.store(0, Ordering::Relaxed);
            }
            ready.extend(sh.injector.lock().drain(..).map(Task::Run));
            if ready.is_empty() {
                if let Some(p) = sh.next_stack_waiter() {
                    ready.push(Task::Run(p));
                    continue;
                }
                // Virtual time: jump to the earliest deadline of a wait still armed (the
                // cached `next_deadline` may be of a wait that has completed since) or of a
                // timer.
                let waits = self
                    .slots
                    .iter()
                    .filter_map(|s| s.timeout.as_ref().map(|(d, _)| *d))
                    .min();
                let next = waits
                    .unwrap_or(u64::MAX)
                    .min(sh.timers.next_due().unwrap_or(u64::MAX));
                if next != u64::MAX {
                    let now = sh.clock.set_at_least(next);
                    self.check_deadlines(now);
                    sh.fire_timers(now);
                    idle_polls = 0;
                    continue;
                }
                if stopping {
                    self.sim_park(Duration::from_millis(10));
                    continue;
                }
                // Nothing runnable and nothing due. An outside completion (I/O) may still
                // come: give it a moment of real time, then call it a deadlock.
                if idle_polls < 20 {
                    idle_polls += 1;
                    self.sim_park(Duration::from_millis(10));
                    continue;
                }
                idle_polls = 0;
                let report = sh.waiting_report(&[]);
                sh.sim_fail_main(format!(
                    "deadlock: every process is blocked and no timer is due (virtual time {} ms)\n{report}",
                    sh.clock.now_ms()
                ));
                continue;
            }
            idle_polls = 0;
            keys.clear();
            let (i, crash, over) = {
                let mut core = sim.core.lock();
                for t in &ready {
                    keys.push(match t {
                        Task::Run(p) => p.0.pid.number,
                        Task::Resume { slot, .. } => core
                            .slot_owner
                            .get(slot)
                            .copied()
                            .unwrap_or(1 << 40 | u64::from(*slot)),
                    });
                }
                let i = core.pick(&keys);
                let crash = matches!(&ready[i], Task::Run(p) if p.0.label == "actor")
                    && core.rng.chance(sim.cfg.crash_p);
                let over = core.job_steps > sim.cfg.step_budget && !stopping;
                if over {
                    core.job_steps = 0;
                }
                (i, crash, over)
            };
            if over {
                let mut runnable: Vec<String> = ready
                    .iter()
                    .filter_map(|t| match t {
                        Task::Run(p) => Some(p.0.pid.number),
                        Task::Resume { slot, .. } => sim.core.lock().slot_owner.get(slot).copied(),
                    })
                    .filter_map(|n| {
                        let p = sh.procs.lock().get(&(false, n)).cloned()?;
                        Some(match p.0.info.class_object_name() {
                            Some(c) => format!("{} {} {}", p.0.pid, p.0.label, c.as_str()),
                            None => format!("{} {}", p.0.pid, p.0.label),
                        })
                    })
                    .collect();
                runnable.sort();
                runnable.dedup();
                let report = sh.waiting_report(&runnable);
                sh.sim_fail_main(format!(
                    "livelock: the job took more than {} scheduling steps (virtual time {} ms)\n{report}",
                    sim.cfg.step_budget,
                    sh.clock.now_ms()
                ));
            }
            let task = ready.swap_remove(i);
            match task {
                Task::Run(p) if crash => {
                    finish(&sh, &p, ExitReason::Custom(Value::sym("injected_crash")));
                }
                Task::Run(p) => {
                    // The slot this run takes (see `start_one`): its owner for PCT.
                    let spare = self.handoff.spare.take();
                    let slot = match &spare {
                        Some(s) => s.slot,
                        None => self.free.last().copied().unwrap_or(self.slots.len() as u32),
                    };
                    self.handoff.spare.set(spare);
                    sim.core.lock().slot_owner.insert(slot, p.0.pid.number);
                    self.start_one(p, None);
                }
                Task::Resume { slot, gen } => self.resume_one(slot, gen),
            }
        }
        self.stop_sim();
    }

    fn sim_park(&self, d: Duration) {
        let sh = &self.shared;
        let bit = 1u64 << self.id;
        sh.parked.fetch_or(bit, Ordering::SeqCst);
        std::thread::park_timeout(d);
        sh.parked.fetch_and(!bit, Ordering::SeqCst);
    }

    /// As the ordinary loop's end: spare runners return, suspended coroutines are leaked.
    fn stop_sim(mut self) {
        self.finish();
    }
}
