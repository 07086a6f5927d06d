//! Outside programs some integration tests drive: `erl` (Erlang/OTP, for the interop tests)
//! and headless Chromium (the observer page test). Included by the `dist` and `runtime`
//! groups (`#[path = "../support/tools.rs"] mod tools;`); not a test binary of its own.
//!
//! The README's test command must work on a machine with only the Rust toolchain, and CI must
//! never skip these tests. So: when the program is missing, a test calling [`have`] prints
//! that it was skipped and why, and returns early — unless `BT_TEST_ALL_TOOLS` is set (as
//! `.ci/run` does after installing the programs), where a missing program fails the test.

use std::io::Write;
use std::path::PathBuf;

/// The first of `names` found as a file on `PATH`.
pub(crate) fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Is `what` (one of `names` on `PATH`) installed? Prints a skip notice when it is not, and
/// panics instead when `BT_TEST_ALL_TOOLS` is set (CI: nothing may be skipped).
pub(crate) fn have(what: &str, names: &[&str], install: &str) -> bool {
    if find(names).is_some() {
        return true;
    }
    let msg = format!("{what} is not installed ({install}; .ci/run installs it)");
    if std::env::var_os("BT_TEST_ALL_TOOLS").is_some() {
        panic!("{msg}, and BT_TEST_ALL_TOOLS asks that no test be skipped");
    }
    // Straight to the process's stderr, past the harness's capture, so the skip is seen.
    let _ = writeln!(std::io::stderr(), "skipped: {msg}");
    false
}

/// Is Erlang's `erl` on `PATH` (see [`have`])?
pub(crate) fn have_erl() -> bool {
    have(
        "Erlang (erl)",
        &["erl"],
        "apt-get install erlang-base erlang-ssl",
    )
}
