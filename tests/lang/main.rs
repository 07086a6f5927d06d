//! Integration tests of the language's front end and tools, one test binary (`cargo test
//! --profile ci --test lang`): the grammar file against the parser, syntax-error recovery,
//! `bt fmt`, every documentation example, the config-eval compact forms, the crate's layers,
//! the slim (no-default-features) dependency graph, the unsafe-code inventory, and the `bt`
//! command line, console, and language server driven as child processes.
//!
//! To add a test: put it in the module of its area, or add a file `tests/lang/NAME.rs` and a
//! `mod NAME;` line below. Test names are `MODULE::test_name` (`cargo test --profile ci
//! --test lang cli::` runs one module).
//!
//! Why these can share a process: each either parses and checks in memory (no global state)
//! or runs the `bt` binary (`CARGO_BIN_EXE_bt`) or `cargo tree` as a child, in a private
//! temporary directory; none sets an environment variable, the current directory, a panic
//! hook or a signal handler of the test process, and none measures the process's memory.

mod cli;
mod config_eval;
mod console;
mod docs;
mod fmt;
mod grammar;
mod layering;
mod lsp;
mod module_cycles;
mod provenance;
mod slim_build;
mod syntax_recovery;
mod unsafe_inventory;
