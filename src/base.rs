//! The bottom layer: spans, interned symbols and diagnostics — what every other
//! layer may name and what names nothing above it (docs/architecture.md, "Layers").
//!
//! | module | what lives there |
//! |---|---|
//! | [`span`] | `Span`: a byte range in one source file |
//! | [`sym`] | `Sym`: interned symbols and selectors |
//! | [`diagnostic`] | diagnostics as data (code, severity, labels, notes); the one renderer |

pub mod diagnostic;
pub mod span;
pub mod sym;
