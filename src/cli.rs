//! Command-line subcommands; `main.rs` only dispatches here.

pub mod check;
pub mod epmd;
pub mod parse;
pub mod repl;
pub mod run;
pub mod test;
