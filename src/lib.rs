//! bt — a Beamtalk-style language: Smalltalk message syntax, immutable values, actors,
//! OTP-style supervisors and a live view of the supervision tree.
//!
//! # Embedding
//!
//! [`Engine`] runs bt code inside a Rust program: evaluate source, call bt from Rust, register
//! Rust functions bt can call, bound a run ([`Limit`]), and convert values with serde
//! ([`to_rust`], [`from_rust`]). Errors are [`EngineError`] (a compile error with its
//! [`diagnostic::Diagnostic`]s, or an uncaught exception with class, kind and message).
//!
//! # Layers
//!
//! Bottom to top; each imports only from below (enforced by `tests/lang/layering.rs`; see
//! docs/architecture.md):
//!
//! | layer | modules | what lives there |
//! |---|---|---|
//! | base | [`base`] ([`diagnostic`]) | spans, interned symbols, diagnostics as data + the renderer |
//! | values | [`value`] | `Value`, Array/Dictionary storage, term order and equality |
//! | runtime | [`runtime`] | actor scheduler, mailboxes, timers, registry, supervisors, snapshots |
//! | syntax | [`syntax`] | tokens, parser with recovery, AST with byte spans, AST dump |
//! | check | [`check`] | the static checker |
//! | interp | [`interp`] | classes, lowering, evaluator, primitives, printing, the `Interpreter` |
//! | codec | [`codec`] | the one value codec: walker, binary wire format v1, serde to/from Rust |
//! | dist | [`dist`] | distribution: named nodes, name registry, cookie handshake, connect/ping |
//! | observe | [`observe`] | the observer: HTTP server of `bt run --observe`, live page, `bt top` |
//! | engine | [`engine`] | the embedding API: [`Engine`], limits, host functions |
//! | testrun | (private) | the `bt test` runner |
//! | cli | (private) | the subcommands of the `bt` binary, reached through [`cli_main`] |
//!
//! The modules below `engine` are public for the integration tests, benchmarks and tools
//! built on one layer (a runtime-only program, a parser-only tool); an embedder needs only
//! the items re-exported here.

pub mod base;
pub mod check;
mod cli;
pub mod codec;
#[cfg(feature = "dist")]
pub mod dist;
pub mod engine;
pub mod fmt;
pub mod interp;
mod lsp;
pub mod memory;
#[cfg(feature = "observe")]
pub mod observe;
pub mod runtime;
pub mod syntax;
mod testrun;
pub mod value;

#[cfg(test)]
mod scratch;

pub use base::diagnostic;
pub use codec::{from_rust, to_rust, CodecError};
pub use engine::{Engine, EngineBuilder, EngineError, HostError, Limit};
pub use memory::CountingAlloc;
pub use value::Value;

/// What this crate's own golden harness (`tests/golden.rs`) reads from the test runner: how a
/// `// =>` file splits into cases. Not an API.
#[doc(hidden)]
pub mod test_support {
    pub use crate::testrun::expect::Expectation;
    pub use crate::testrun::split::{split, Case, Entry};
}

/// Runs the `bt` command line on `args` (without the program name) and answers the exit
/// status: what the `bt` binary does.
pub fn cli_main(args: &[String]) -> i32 {
    cli::main(args)
}
