//! Reliability (issue 15, finding 3): a supervisor whose child keeps failing `initialize`
//! under a very high intensity (`maxRestarts 1000000`, `restartWindow 1`) must still answer
//! `stop` promptly, log each failure with the error's class, kind and message, keep its log
//! rate-limited, and let the program exit when the script ends.
//!
//! Runs the `bt` binary as a child process (a hang becomes a failure after a generous
//! deadline instead of a stuck test run).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
Actor subclass: Flaky
  class supervisionPolicy => #permanent
  initialize =>
    (AtomicCounter named: #flaky) increment > 1 ifTrue: [
      Exception signalKind: #user_error message: "init failed again"]
  ping => 1

Supervisor subclass: Storm
  class children => #(Flaky)
  class maxRestarts => 1000000
  class restartWindow => 1

AtomicCounter new: #flaky
sup := Storm supervise unwrap
(sup which: Flaky) unwrap kill
// Let the restart storm run until a hundred starts have failed (counted, not timed).
[(AtomicCounter named: #flaky) value < 100] whileTrue: [Timer sleep: 1]
sup stop
Transcript showCr: "stopped"
Transcript showCr: sup isAlive printString
"#;

fn run_script(src: &str, name: &str) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!("bt-rely-sup-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.bt"));
    std::fs::write(&path, src).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("run")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bt");
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&dir);
            let out = t_out.join().unwrap();
            let err = t_err.join().unwrap();
            panic!(
                "bt did not exit within 60 s\nstdout:\n{out}\nstderr ({} bytes):\n{}",
                err.len(),
                &err[..err.len().min(3000)]
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = std::fs::remove_dir_all(&dir);
    (code, t_out.join().unwrap(), t_err.join().unwrap())
}

#[test]
fn stop_wins_over_a_restart_storm_and_the_program_exits() {
    let (code, out, err) = run_script(SCRIPT, "storm");
    assert_eq!(
        code,
        Some(0),
        "stdout:\n{out}\nstderr:\n{}",
        &err[..err.len().min(3000)]
    );
    assert_eq!(out, "stopped\nfalse\n");
    // Failed restarts name the error's class, kind and message.
    let first = err
        .lines()
        .find(|l| l.contains("restart failed"))
        .unwrap_or_else(|| {
            panic!(
                "no restart-failed line in:\n{}",
                &err[..err.len().min(3000)]
            )
        });
    assert!(
        // `Class (kind): message` — here the spawn's InstantiationError wrapping the
        // initialize failure's message.
        first.contains("Error (instantiation_error): ") && first.contains("init failed again"),
        "{first}"
    );
    // Rate-limited: a storm of a hundred failed starts logs a handful of lines per second.
    let lines = err.lines().count();
    assert!(
        lines <= 50,
        "{lines} log lines:\n{}",
        &err[..err.len().min(3000)]
    );
}
