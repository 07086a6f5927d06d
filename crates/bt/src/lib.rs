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
//! Bottom to top; each is a crate of the workspace that depends only on crates below it
//! (cargo enforces it; `tests/lang/layering.rs` checks the graph; see docs/architecture.md):
//!
//! | layer | crate | modules | what lives there |
//! |---|---|---|---|
//! | base | `bt-base` | [`base`] ([`diagnostic`]), [`memory`] | spans, interned symbols, diagnostics as data + the renderer, memory accounts |
//! | values | `bt-values` | [`value`] | `Value`, Array/Dictionary storage, term order and equality |
//! | runtime | `bt-runtime` | [`runtime`] | actor scheduler, mailboxes, timers, registry, supervisors, snapshots |
//! | syntax | `bt-syntax` | [`syntax`], [`fmt`] | tokens, parser with recovery, AST with byte spans, AST dump, formatter |
//! | check | `bt-check` | [`check`] | the static checker |
//! | interp | `bt-interp` | [`interp`] | classes, lowering, evaluator, primitives, printing, the `Interpreter` |
//! | codec | `bt-codec` | [`codec`] | the one value codec: walker, binary wire format v1, serde to/from Rust |
//! | dist | `bt-dist` | `dist` (feature `dist`) | distribution: named nodes, name registry, cookie handshake, connect/ping |
//! | observe | `bt-observe` | `observe` (feature `observe`) | the observer: HTTP server of `bt run --observe`, live page, `bt top` |
//! | engine | `bt` (this crate) | [`engine`] | the embedding API: [`Engine`], limits, host functions |
//! | cli | `bt-cli` (the workspace root) | | the `bt` binary: subcommands, REPL, LSP, the `bt test` runner |
//!
//! The modules below `engine` are re-exported for the integration tests, benchmarks and tools
//! built on one layer (a runtime-only program, a parser-only tool); an embedder needs only
//! the items re-exported here.

pub mod engine;

pub use bt_base::{base, diagnostic, memory};
pub use bt_check::check;
pub use bt_codec::codec;
#[cfg(feature = "dist")]
pub use bt_dist::dist;
pub use bt_interp::interp;
#[cfg(feature = "observe")]
pub use bt_observe::observe;
pub use bt_runtime::runtime;
pub use bt_syntax::{fmt, syntax};
pub use bt_values::value;

pub use codec::{from_rust, to_rust, CodecError};
pub use engine::{Engine, EngineBuilder, EngineError, HostError, Limit};
pub use memory::CountingAlloc;
pub use value::Value;
