//! bt — a Beamtalk-style language: Smalltalk message syntax, immutable values, actors,
//! OTP-style supervisors and a live view of the supervision tree.
//!
//! ```text
//! source ─▶ syntax (lexer → parser → AST) ─▶ check (types, DNU, findings)
//!        ─▶ interp (evaluator, classes, primitives) ⇄ runtime (actors, supervisors)
//! ```
//!
//! | module | what lives there |
//! |---|---|
//! | [`syntax`] | tokens, parser with recovery, AST with byte spans, AST dump |
//! | [`diagnostic`] | diagnostics as data; the one renderer |
//! | [`check`] | the static checker |
//! | [`engine`] | the embedding API: [`Engine`], limits, host functions |
//! | [`interp`] | values, classes, evaluator, primitives, printing, term order |
//! | [`runtime`] | actor scheduler, mailboxes, timers, registry, supervisors |
//! | [`codec`] | the one value codec: walker, binary wire format v1, serde to/from Rust |
//! | [`dist`] | distribution: named nodes, name registry, cookie handshake, connect/ping |
//! | [`testrun`] | the `bt test` runner |
//! | [`cli`] | the subcommands of the `bt` binary |

pub mod check;
pub mod cli;
pub mod codec;
pub mod diagnostic;
pub mod dist;
pub mod engine;
pub mod fmt;
pub mod interp;
pub mod lsp;
pub mod runtime;
pub mod syntax;
pub mod testrun;

#[cfg(test)]
pub(crate) mod scratch;

pub use codec::{from_rust, to_rust, CodecError};
pub use engine::{Engine, EngineBuilder, EngineError, HostError, Limit};
pub use interp::value::Value;
