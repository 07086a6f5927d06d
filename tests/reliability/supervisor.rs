//! Reliability: a supervisor whose child keeps failing `initialize`
//! under a very high intensity (`maxRestarts 1000000`, `restartWindow 1`) must still answer
//! `stop` promptly, log each failure with the error's class, kind and message, keep its log
//! rate-limited, and let the program exit when the script ends.
//!
//! Runs the `bt` binary as a child process (a hang becomes a failure after a generous
//! deadline instead of a stuck test run).

use std::time::Duration;

use crate::bt_run;

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
    let r = bt_run::bt_script("rely-sup", &["run"], name, src, Duration::from_secs(60));
    (r.code(), r.stdout, r.stderr)
}

#[test]
fn stop_wins_over_a_restart_storm_and_the_program_exits() {
    let (code, out, err) = run_script(SCRIPT, "storm");
    assert_eq!(
        code,
        Some(0),
        "stdout:\n{out}\nstderr:\n{}",
        bt_run::head(&err)
    );
    assert_eq!(out, "stopped\nfalse\n");
    // Failed restarts name the error's class, kind and message.
    let first = err
        .lines()
        .find(|l| l.contains("restart failed"))
        .unwrap_or_else(|| panic!("no restart-failed line in:\n{}", bt_run::head(&err)));
    assert!(
        // `Class (kind): message` — here the spawn's InstantiationError wrapping the
        // initialize failure's message.
        first.contains("Error (instantiation_error): ") && first.contains("init failed again"),
        "{first}"
    );
    // Rate-limited: a storm of a hundred failed starts logs a handful of lines per second.
    let lines = err.lines().count();
    assert!(lines <= 50, "{lines} log lines:\n{}", bt_run::head(&err));
}
