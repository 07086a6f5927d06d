//! `bt top ADDR --once` against a running `bt run examples/observer.bt --observe`: the text
//! tree shows the supervisors and workers with their strategies and restart counts, and
//! after a crash the restart and its history.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

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

/// `bt run examples/observer.bt --observe` once its tree is built: the observer's address,
/// the program's stdin and stdout, and the guard that ends it.
struct Observed {
    addr: String,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
    _guard: Kill,
}

fn observed() -> Observed {
    let mut bt = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["run", "examples/observer.bt", "--observe", "127.0.0.1:0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = bt.stdin.take().unwrap();
    let mut err = BufReader::new(bt.stderr.take().unwrap());
    let mut out = BufReader::new(bt.stdout.take().unwrap());
    let guard = Kill(bt);
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
    Observed {
        addr,
        stdin,
        out,
        _guard: guard,
    }
}

#[test]
fn bt_top_prints_the_tree_of_a_running_program() {
    let Observed {
        addr,
        mut stdin,
        mut out,
        _guard,
    } = observed();
    let mut said = String::new();

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

/// `bt top ADDR` (following, not `--once`) when the observed program ends: it says so,
/// shows the tree as it was at the end, and exits with status 0.
#[test]
fn bt_top_says_when_the_program_ended() {
    let Observed {
        addr,
        mut stdin,
        out: _out,
        _guard,
    } = observed();
    let top = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["top", &addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut top = Kill(top);
    let mut top_out = BufReader::new(top.0.stdout.take().unwrap());
    // The first frame is drawn: top follows the program.
    let mut first = String::new();
    top_out.read_line(&mut first).unwrap();
    assert!(first.starts_with("bt top · "), "{first}");
    writeln!(stdin, "quit").unwrap();
    stdin.flush().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut top_out, &mut rest).unwrap();
    let status = top.0.wait().unwrap();
    let mut top_err = String::new();
    std::io::Read::read_to_string(&mut top.0.stderr.take().unwrap(), &mut top_err).unwrap();
    assert!(status.success(), "{status:?} {top_err}\n{rest}");
    let last = rest.rsplit_once("bt top · ").map_or("", |(_, frame)| frame);
    assert!(
        last.contains("3 supervisors, 6 workers") && last.contains("App <0.2.0>"),
        "the final tree:\n{rest}"
    );
    assert!(
        last.trim_end()
            .ends_with("the program ended; these are its processes' last states"),
        "{rest}"
    );
}
