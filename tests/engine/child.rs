//! Helpers for the memory-limit tests that run each scenario in a child process of the test
//! binary itself (`limits`, `actor_memory`; `use crate::child;`): the child's peak RSS is its
//! own, not disturbed by the tests running beside it in the parent, and a bomb that escaped
//! its limit shows as a high peak instead of taking the test runner down.

use std::process::Command;

pub(crate) use crate::memory_rows::status_bytes;

/// What a child reported: its `RESULT kind peak limit after` line and its `DETAIL …` line
/// (the error's text, empty when it printed none).
pub(crate) struct ChildResult {
    pub kind: String,
    pub peak: usize,
    pub limit: String,
    pub after: String,
    pub detail: String,
}

/// Runs the test `child_test` of this binary alone with `env_var=scenario` and parses its
/// report (panics with the child's output when it did not report). `child_test` is the
/// test's full name in this binary, `MODULE::test_name`.
pub(crate) fn run_child(child_test: &str, env_var: &str, scenario: &str) -> ChildResult {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
        .env(env_var, scenario)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let Some(line) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
        panic!(
            "{scenario}: child did not report (status {:?}):\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let detail = text
        .lines()
        .find_map(|l| l.strip_prefix("DETAIL "))
        .unwrap_or("")
        .to_string();
    let mut it = line.split_whitespace();
    let kind = it.next().unwrap_or("").to_string();
    let peak = it.next().and_then(|p| p.parse().ok()).unwrap_or(usize::MAX);
    let limit = it.next().unwrap_or("").to_string();
    let after = it.next().unwrap_or("").to_string();
    ChildResult {
        kind,
        peak,
        limit,
        after,
        detail,
    }
}
