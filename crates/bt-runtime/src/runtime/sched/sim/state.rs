//! The deterministic scheduler's state and its choices, apart from the runtime it drives:
//! the PRNG, the strategy (random walk or PCT priorities), the step counts, the jobs the
//! gate waits for and the verdict. The runtime's state (`Shared::sim`) holds it; the
//! worker loop and the gate that use it are the parent module's.

use std::collections::HashMap;

use parking_lot::{Condvar, Mutex};

use crate::runtime::config::{SimConfig, Strategy};

/// SplitMix64: small, fast, and the same on every machine.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// True with probability `p`.
    pub(super) fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Mixes a seed with a salt (a step number): the seed of that step's schedule.
pub fn mix_seed(seed: u64, salt: u64) -> u64 {
    Rng::new(seed ^ salt.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

/// The scheduler's state (under one lock: the worker, `Cx::new` and the gate use it).
pub(crate) struct Core {
    pub(super) rng: Rng,
    pub(super) strategy: Strategy,
    /// PCT: priority of each process (key: pid number), drawn on first sight.
    pub(super) prio: HashMap<u64, u64>,
    /// PCT: the steps at which the running process's priority drops.
    pub(super) change_points: Vec<u64>,
    /// Steps since the last reseed.
    pub(super) steps: u64,
    /// Steps since the current job began (livelock budget).
    pub(super) job_steps: u64,
    /// Whether each outside thread's job is over: the worker runs while one is not.
    pub(super) jobs: Vec<Box<dyn Fn() -> bool + Send>>,
    pub(super) verdict: Option<String>,
    /// The process each coroutine slot runs (PCT keys of `Resume` tasks).
    pub(super) slot_owner: HashMap<u32, u64>,
    /// The worker stands at the gate (between steps, no job outstanding): an outside
    /// thread whose job is over may touch the runtime again only then.
    pub(super) paused: bool,
}

pub(crate) struct Sim {
    pub cfg: SimConfig,
    pub core: Mutex<Core>,
    /// Signalled when the worker stops at the gate (`Core::paused`).
    pub(super) at_gate: Condvar,
}

impl Sim {
    pub(crate) fn new(cfg: SimConfig) -> Sim {
        let mut core = Core {
            rng: Rng::new(cfg.seed),
            strategy: cfg.strategy,
            prio: HashMap::new(),
            change_points: Vec::new(),
            steps: 0,
            job_steps: 0,
            jobs: Vec::new(),
            verdict: None,
            slot_owner: HashMap::new(),
            paused: true,
        };
        core.reseed(cfg.seed);
        Sim {
            cfg,
            core: Mutex::new(core),
            at_gate: Condvar::new(),
        }
    }
}

impl Core {
    pub(super) fn reseed(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
        self.prio.clear();
        self.change_points.clear();
        self.steps = 0;
        if let Strategy::Pct { depth } = self.strategy {
            // Change points spread over a horizon that is itself random: short tests and
            // long ones both get their priorities changed somewhere inside them.
            let horizon = [64, 256, 1024, 4096][self.rng.below(4) as usize];
            for _ in 1..depth.max(1) {
                let at = 1 + self.rng.below(horizon);
                self.change_points.push(at);
            }
        }
    }

    /// A number for the program (`Random new`'s seed).
    pub(crate) fn draw(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// A process run's reduction budget: mostly small, so runs are preempted inside
    /// handlers, sometimes the ordinary one.
    pub(crate) fn budget(&mut self) -> u32 {
        match self.rng.below(8) {
            0 => 2000,
            1..=3 => 1 + self.rng.below(4) as u32,
            _ => 1 + self.rng.below(64) as u32,
        }
    }

    /// The index in `keys` of the step to run next.
    pub(super) fn pick(&mut self, keys: &[u64]) -> usize {
        self.steps += 1;
        self.job_steps += 1;
        match self.strategy {
            Strategy::Random => self.rng.below(keys.len() as u64) as usize,
            Strategy::Pct { depth } => {
                let mut best = 0;
                let mut best_p = 0;
                for (i, k) in keys.iter().enumerate() {
                    let rng = &mut self.rng;
                    let p = *self
                        .prio
                        .entry(*k)
                        .or_insert_with(|| u64::from(depth) + 1 + rng.below(1 << 40));
                    if i == 0 || p > best_p {
                        best = i;
                        best_p = p;
                    }
                }
                if let Some(at) = self.change_points.iter().position(|&c| c == self.steps) {
                    // The chosen process drops below every initial priority.
                    self.prio.insert(keys[best], u64::from(depth) - at as u64);
                }
                best
            }
        }
    }

    /// Whether an outside thread waits for a job (finished jobs are forgotten).
    pub(super) fn gate_open(&mut self) -> bool {
        self.jobs.retain(|over| !over());
        !self.jobs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_the_same_everywhere() {
        let mut r = Rng::new(0);
        // SplitMix64's published first outputs for seed 0.
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert!((0..1000).all(|_| r.below(7) < 7));
        assert_ne!(mix_seed(1, 2), mix_seed(1, 3));
    }

    #[test]
    fn pct_runs_the_highest_priority_and_changes_it() {
        let mut s = Sim::new(SimConfig {
            strategy: Strategy::Pct { depth: 3 },
            ..SimConfig::new(7)
        });
        let c = s.core.get_mut();
        let first = c.pick(&[1, 2, 3]);
        // Without a change point the same process keeps winning.
        if !c.change_points.contains(&2) {
            assert_eq!(c.pick(&[1, 2, 3]), first);
        }
        assert_eq!(c.change_points.len(), 2);
    }
}
