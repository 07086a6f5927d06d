//! Integration tests of the embedding API (`bt::Engine`), one test binary (`cargo test
//! --profile ci --test engine`): evaluation and bindings, the API beyond evaluation,
//! reductions charged by bulk primitives, host calls, isolation between engines of one
//! process, the shared library image, bounded sources, top-level slots, script calls from the
//! host, the `File` capability, the limits no script escapes (memory, reductions, deadlines;
//! `ensure:` blocks and handlers run during their unwind in `limit_escapes`; the memory table
//! of `../support/memory_rows.rs` and the fork bomb in `limits`), per-actor memory limits,
//! and the embedding examples run as child processes.
//!
//! To add a test: put it in the module of its area, or add a file `tests/engine/NAME.rs` and
//! a `mod NAME;` line below. Helpers: [`common`] (`int`, `err`), [`child`] (re-running one
//! test of this binary as a child process).
//!
//! **The global allocator.** `max_memory` and `actor_max_memory` need [`bt::CountingAlloc`]
//! as the host's global allocator, so this binary installs it once, here, for every module.
//! It only
//! counts: the other modules behave as with the system allocator it wraps. Accounts are per
//! thread (`crates/bt-base/src/memory.rs`), so a test's engine is not charged for what neighbouring tests
//! allocate on their own threads.
//!
//! **Memory measurements.** The memory-bomb tests of `limits` and `actor_memory` assert on a
//! peak RSS (`VmHWM`), which is process-wide: each bomb runs in a child process (this binary
//! re-run with `--exact MODULE::child_test --test-threads=1` and a scenario variable, see
//! [`child::run_child`]), so the peak is the child's alone and the neighbours running in
//! the parent do not disturb it. The child-side tests (`limits::memory_child`,
//! `actor_memory::actor_memory_child`) do nothing without their variable. Nothing here sets
//! an environment variable, the current directory, a panic hook or a signal handler of the
//! test process.

mod actor_memory;
mod api;
mod captured;
mod charge;
mod child;
mod common;
mod eval;
mod examples;
mod file_capability;
mod host_calls;
mod isolation;
mod limit_escapes;
mod limits;
mod logs;
mod many_classes;
#[path = "../support/memory_rows.rs"]
mod memory_rows;
mod printing;
#[path = "../support/scoped_tree.rs"]
mod scoped_tree;
mod script_calls;
mod shared_library;
mod sources;
mod toplevel_slots;

#[global_allocator]
static ALLOC: bt::CountingAlloc = bt::CountingAlloc::system();
