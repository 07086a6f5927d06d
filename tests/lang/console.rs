//! Console: standard output and error, and reading lines from standard
//! input — run through the `bt` binary with piped streams.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `bt run` on `src` (written to a temp file) with `input` on standard input.
fn run(src: &str, input: &str) -> (String, String, Option<i32>) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("bt-console-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.bt");
    std::fs::write(&file, src).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("run")
        .arg(&file)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bt runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn print_and_error_write_display_strings_to_their_streams() {
    let (out, err, code) = run(
        r#"
Console print: "a"
Console print: #b
Console printLine: 42
Console error: $c
Console errorLine: 1.5
Console flush
Console printLine: (Console printLine: "x") printString
"#,
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "ab42\nx\nConsole\n");
    assert_eq!(err, "$c1.5\n");
}

#[test]
fn read_line_answers_lines_without_their_ends_then_nil() {
    let (out, err, code) = run(
        r#"
a := Console readLine
b := Console readLine: "name? "
c := Console readLine
d := Console readLine
Console printLine: #(a, b, c, d) printString
"#,
        "first\r\nsecond\nlast",
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "name? #(\"first\", \"second\", \"last\", nil)\n");
}

#[test]
fn an_actor_reads_a_line_for_its_caller() {
    // The reading actor is suspended while a helper thread reads; its caller gets the line.
    let (out, err, code) = run(
        r#"
Actor subclass: Reader
  next => Console readLine
r := Reader spawn
Console printLine: r next
Console printLine: r next printString
"#,
        "hello\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "hello\nnil\n");
}
