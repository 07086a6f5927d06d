//! The `bt` command line: the subcommands of the `bt` binary ([`cli_main`]), the REPL, the
//! language server and the `bt test` runner, over the embedding crate `bt` (which re-exports
//! every layer below; docs/architecture.md, "Crates").

mod cli;
mod lsp;
mod testrun;

#[cfg(feature = "dist")]
pub(crate) use bt::dist;
#[cfg(feature = "observe")]
pub(crate) use bt::observe;
pub(crate) use bt::{base, check, codec, diagnostic, fmt, interp, runtime, syntax, value};
#[cfg(test)]
pub(crate) use bt_base::scratch;

/// What the golden harness (`tests/golden.rs`) reads from the test runner: how a `// =>` file
/// splits into cases. Not an API.
#[doc(hidden)]
pub mod test_support {
    pub use crate::testrun::expect::Expectation;
    pub use crate::testrun::split::{split, Case, Entry};
}

pub use cli::cli_main;
