//! Plain settings of a runtime, read by the scheduler and everything below it: [`Config`],
//! the deterministic scheduler's [`SimConfig`] and [`Strategy`], and the constants they
//! default to. A leaf: it names no other module of the runtime.

pub use bt_base::base::log::LogSink;

/// Runtime configuration. `Config::default()` suits `bt run`; tests usually set
/// `manual_clock` and a small `workers`.
#[derive(Clone)]
pub struct Config {
    /// Worker threads (default: available cores).
    pub workers: usize,
    /// Usable bytes per coroutine stack: a virtual reservation, committed only as touched.
    /// Sized for 10,000 interpreter activations of up to ~3 KB (release) — larger in debug
    /// builds, whose frames are several times bigger.
    pub stack_size: usize,
    /// Most coroutines alive at once (each stack is two kernel mappings); further work waits
    /// for a free stack. Default: derived from `vm.max_map_count`.
    pub max_coroutines: usize,
    /// Stacks kept for reuse per worker.
    pub pooled_stacks_per_worker: usize,
    /// Reductions (`Cx::tick` calls, one per handled message too) before a process yields.
    pub reductions: u32,
    /// Time moves only through [`crate::runtime::RtHandle::advance`] (deterministic tests).
    pub manual_clock: bool,
    /// Node connection index printed in pids (0 = this node).
    pub node: u32,
    pub log: LogSink,
    /// Run under the deterministic scheduler (`sched/sim.rs`): one worker, every choice
    /// from a PRNG, a virtual clock. Overrides `workers`, `manual_clock` and `reductions`.
    pub sim: Option<SimConfig>,
}

/// Default usable stack size: 64 MiB in release builds, 512 MiB in debug builds.
pub const DEFAULT_STACK_SIZE: usize = if cfg!(debug_assertions) {
    512 << 20
} else {
    64 << 20
};

/// The available cores, asked once per process (it reads cgroup files: a visible part of
/// starting an embedding engine).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: cores(),
            stack_size: DEFAULT_STACK_SIZE,
            max_coroutines: 0,
            pooled_stacks_per_worker: 64,
            reductions: 2000,
            manual_clock: false,
            node: 0,
            log: bt_base::base::log::facade(),
            sim: None,
        }
    }
}

/// How the deterministic scheduler picks the next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Uniformly among the runnable steps.
    Random,
    /// Probabilistic concurrency testing: the runnable process of highest priority, with
    /// `depth - 1` priority change points.
    Pct { depth: u32 },
}

/// Settings of a deterministic run ([`crate::runtime::Config::sim`]).
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub strategy: Strategy,
    /// Steps one job may take before it is reported as a livelock.
    pub step_budget: u64,
    /// Probability that an actor crashes at a message boundary (0: never).
    pub crash_p: f64,
}

impl SimConfig {
    /// The schedule of `seed`, with the default step budget and no crashes. The seed alone
    /// decides the strategy (so a seed replays without more options): even seeds walk at
    /// random, odd ones run PCT of depth 1 to 3.
    pub fn new(seed: u64) -> SimConfig {
        let strategy = if seed & 1 == 0 {
            Strategy::Random
        } else {
            Strategy::Pct {
                depth: 1 + ((seed >> 1) % 3) as u32,
            }
        };
        SimConfig {
            seed,
            strategy,
            step_budget: 500_000,
            crash_p: 0.0,
        }
    }
}

/// The wall time a simulated clock starts at (`sched/sim.rs`): 2026-01-01T00:00:00Z.
pub(crate) const SIM_EPOCH_MS: u64 = 1_767_225_600_000;
