//! Integration tests of the native runtime and its observer, one test binary (`cargo test
//! --profile ci --test runtime`): process lifecycle, names, timers and introspection; the
//! scheduler (suspended sync calls, deep recursion, preemption, deadlock detection);
//! supervisors; process snapshots; restart history on the manual clock; and the observer's
//! HTTP(S) endpoint, live page (headless Chromium) and `bt top`, run against `bt` children.
//!
//! To add a test: put it in the module of its area, or add a file `tests/runtime/NAME.rs`
//! and a `mod NAME;` line below. Helpers: [`rt`] (manual-clock runtimes, bounded waits,
//! supervisor children).
//!
//! Why these can share a process: every test makes its own `Runtime` (its own workers and
//! clock; the manual clock is per runtime) or its own `bt` child on port 0, and waits on
//! conditions with a bound, never on a sleep; none measures the process's memory or counts
//! its threads, and none sets an environment variable, the current directory, a panic hook
//! or a signal handler of the test process.

mod lifecycle;
mod observe_history;
mod observe_http;
mod observe_page;
mod observe_tls;
mod observe_top;
mod rt;
mod sched;
mod sim;
mod snapshot;
mod supervisor;
#[allow(dead_code)] // `have_erl` is for the dist group
#[path = "../support/tools.rs"]
mod tools;
