//! The bottom layer of bt: spans, interned symbols, diagnostics ([`base`]) and the per-engine
//! memory accounts ([`memory`]). Names nothing else of bt (docs/architecture.md, "Crates").

pub mod base;
pub mod memory;
#[cfg(any(test, feature = "test-support"))]
pub mod scratch;

pub use base::diagnostic;
