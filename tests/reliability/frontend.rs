//! Reliability: the front end stays linear in its input. Inputs that
//! used to take seconds to minutes (a 4M-digit Integer literal; 16,000 lines with an error
//! each; 3,000 lines each indented one more space with an error each) are checked here for
//! what the fixes guarantee: the literal is a prompt compile error, at most
//! `diagnostic::MAX_RENDERED` diagnostics are rendered per file with a closing "N more
//! errors" line, and line/column mapping agrees with the one-offset scan everywhere.
//! Timing is `bench/frontend_scaling.rs`'s job; the deadline here only turns a hang into a
//! failure.

use std::time::Duration;

use crate::bt_run;

use bt::diagnostic::{line_col, LineIndex, MAX_RENDERED};

/// Runs `bt ARGS FILE` on `src` with a generous deadline; answers (exit code, stdout, stderr).
fn bt_on(args: &[&str], name: &str, src: &str) -> (i32, String, String) {
    let r = bt_run::bt_script("rely-fe", args, name, src, Duration::from_secs(300));
    (r.code().unwrap_or(-1), r.stdout, r.stderr)
}

fn error_headers(stderr: &str) -> usize {
    stderr.lines().filter(|l| l.contains(": error: ")).count()
}

#[test]
fn many_errors_render_a_capped_report() {
    let n = 16_000;
    let (code, _, err) = bt_on(&["check"], "many", &"x := )\n".repeat(n));
    assert_eq!(code, 1);
    assert_eq!(
        error_headers(&err),
        MAX_RENDERED,
        "{}",
        &err[..err.len().min(2000)]
    );
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(&format!("many.bt: {} more errors", n - MAX_RENDERED)),
        "{last}"
    );
}

#[test]
fn growing_indentation_with_an_error_per_line() {
    let n = 3_000;
    let src: String = (0..n)
        .map(|i| format!("{}x := )\n", " ".repeat(i)))
        .collect();
    let (code, _, err) = bt_on(&["check"], "indent", &src);
    assert_eq!(code, 1);
    assert_eq!(error_headers(&err), MAX_RENDERED);
    // The 100th error is on line 100, column 100 + 5.
    assert!(
        err.contains("indent.bt:100:105: error:"),
        "{}",
        &err[..2000]
    );
    assert!(err
        .trim_end()
        .ends_with(&format!("{} more errors", n - MAX_RENDERED)));
}

#[test]
fn json_reports_every_error_with_its_position() {
    let n = 16_000;
    let (code, out, _) = bt_on(
        &["check", "--format", "json"],
        "json",
        &"x := )\n".repeat(n),
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let f = v["findings"].as_array().expect("findings");
    assert_eq!(f.len(), n);
    assert_eq!(f[n - 1]["line"], n);
    assert_eq!(f[n - 1]["column"], 6);
}

#[test]
fn a_four_million_digit_literal_is_a_prompt_error() {
    // Unoptimised builds: logos's generated lexer recurses once per character of a token
    // (no tail calls at opt-level 0), so a debug `bt` cannot lex a token of millions of
    // characters on the main thread's 8 MB stack; optimised builds (`--profile ci`) loop.
    let (dec, hex) = if cfg!(debug_assertions) {
        (20_000, 20_000)
    } else {
        (4_000_000, 1_000_000)
    };
    let src = format!("x := {}\n", "7".repeat(dec));
    let (code, _, err) = bt_on(&["check"], "lit", &src);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("Integer literal too long: {dec} digits")),
        "{}",
        &err[..err.len().min(500)]
    );
    // Power-of-two radixes convert in linear time: no limit.
    let src = format!("x := 16r{}\nx printString size\n", "F".repeat(hex));
    let (code, _, err) = bt_on(&["check"], "hex", &src);
    assert_eq!(code, 0, "{}", &err[..err.len().min(500)]);
}

#[test]
fn line_index_agrees_with_the_scan() {
    let src = "ab\ncé\n\n  x := )\r\nlast";
    let idx = LineIndex::new(src);
    for off in 0..=src.len() as u32 + 3 {
        assert_eq!(idx.line_col(src, off), line_col(src, off), "offset {off}");
    }
}
