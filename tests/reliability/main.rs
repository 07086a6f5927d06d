//! The reliability suite, one test binary (`cargo test --profile ci --test
//! reliability`): values nested a million levels deep, a front end linear in its input,
//! deterministic fuzzing of the lexer and parser (`fuzz_parser`) and of the checker,
//! evaluator and wire decoder (`fuzz`), prompt program ends, supervisors under very high
//! restart intensity, `bt test` workers that die with their parent, a soak of supervised
//! churn whose resident set must not grow, and an embedded engine's memory table in a host
//! without the counting allocator (`uncounted_memory`: this binary installs no global
//! allocator; each row runs in a child process, like the soak).
//!
//! To add a test: put it in the module of its area, or add a file `tests/reliability/NAME.rs`
//! and a `mod NAME;` line below. Helpers: [`bt_run`] (a script run by the `bt` binary with a
//! deadline), [`rng`] (the fuzzers' deterministic PRNG).
//!
//! **The soak measures RSS**, which is process-wide: `soak` runs its rounds in a child
//! process (this binary re-run with `--exact soak::soak_child`), so tests running beside it
//! in this process do not move the figure. The other tests run `bt` children or keep their
//! state in their own interpreter; none sets an environment variable, the current directory,
//! a panic hook or a signal handler of the test process.

mod bt_run;
mod deep;
mod frontend;
mod fuzz;
mod fuzz_parser;
#[path = "../support/memory_rows.rs"]
mod memory_rows;
mod rng;
mod run_memory;
mod runtime;
mod sandbox;
mod schedules;
#[path = "../support/scoped_tree.rs"]
mod scoped_tree;
mod soak;
mod supervisor;
mod testrun;
mod uncounted_memory;
