//! `bt top ADDR --once` against a running `bt run examples/observer.bt --observe`: the text
//! tree shows the supervisors and workers with their strategies and restart counts, and
//! after a crash the restart and its history.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn top(addr: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["top", addr, "--once"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bt_top_prints_the_tree_of_a_running_program() {
    let mut bt = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["run", "examples/observer.bt", "--observe", "127.0.0.1:0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = bt.stdin.take().unwrap();
    let mut err = BufReader::new(bt.stderr.take().unwrap());
    let mut out = BufReader::new(bt.stdout.take().unwrap());
    let _guard = Kill(bt);
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("observing on http://")
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    // The program has built its tree once it says so on stdout.
    let mut said = String::new();
    out.read_line(&mut said).unwrap();
    assert!(said.starts_with("App is running"), "{said}");

    let text = top(&addr);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("3 supervisors, 6 workers, 9 running, 0 exited, 0 restarts"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("  App <0.2.0> [oneForOne · 3 children] running ↻0"),
        "{text}"
    );
    assert!(
        text.contains("├─ Storage <0.4.0> [oneForAll · 2 children] running ↻0"),
        "{text}"
    );
    assert!(text.contains("│  ├─ Cache"), "{text}");
    assert_eq!(text.matches("Worker <").count(), 3, "{text}");

    // Crash the logger; once the program has answered, the restart is in the tree.
    writeln!(stdin, "crash").unwrap();
    stdin.flush().unwrap();
    said.clear();
    out.read_line(&mut said).unwrap();
    assert_eq!(said.trim(), "ok: crash");
    // The restart is handled by the supervisor after the kill; top shows it once done.
    let mut text = top(&addr);
    let mut tries = 0;
    while !text.contains("Logger") || !text.contains("(last: exit killed)") {
        tries += 1;
        assert!(tries < 1000, "{text}");
        text = top(&addr);
    }
    assert!(text.contains("1 restarts"), "{text}");
    writeln!(stdin, "quit").unwrap();
}
