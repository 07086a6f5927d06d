//! The bottom layer: spans, interned symbols and diagnostics — what every other
//! layer may name and what names nothing above it (docs/architecture.md, "Layers").
//!
//! | module | what lives there |
//! |---|---|
//! | [`span`] | `Span`: a byte range in one source file |
//! | [`sym`] | `Sym`: interned symbols and selectors |
//! | [`diagnostic`] | diagnostics as data (code, severity, labels, notes); the one renderer |
//! | [`log`] | the runtime log: rate-limited per call site, through the `log` facade |
//! | [`spare_thread`] | a thread about to end, lent to run another thread's work (`bt run`'s library thread runs the first worker) |
//! | [`tls_files`] | the TLS configuration file of `--dist-tls`/`--observe-tls` and PEM loading |

pub mod diagnostic;
pub mod log;
pub mod span;
pub mod spare_thread;
pub mod sym;
#[cfg(feature = "tls")]
pub mod tls_files;
