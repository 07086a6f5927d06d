//! The runtime log under the engine: failed casts and other runtime lines are kept for the
//! host (`Engine::take_logs`), rate-limited per call site, and nothing reaches the host's
//! standard error on its own — also not the default message of a caught host-function
//! panic (checked in a child of this test binary, whose stderr is its own).

use bt::Engine;
use std::process::Command;
use std::time::Instant;

const FLOOD: &str =
    "Actor subclass: Quiet\n  state: n = 0\n  value => self.n\n  nope => self error: \"boom\"\n\
                     q := Quiet spawn.\n\
                     100000 timesRepeat: [q nope!].\n\
                     q value";

/// 100,000 failing casts: their log lines reach `take_logs`, a bounded number of them.
#[test]
fn a_flood_of_failing_casts_is_kept_rate_limited_for_the_host() {
    let e = Engine::new();
    let started = Instant::now();
    e.eval(FLOOD).unwrap();
    let secs = started.elapsed().as_secs() as usize + 1;
    let logs = e.take_logs();
    assert!(logs.iter().any(|l| l.contains("nope")), "{logs:?}");
    assert!(logs.len() <= 21 * secs, "{} lines in {secs} s", logs.len());
    assert!(e.take_logs().is_empty());
}

/// The child's part: a caught host panic and a cast flood, then `DONE`.
#[test]
fn quiet_child() {
    if std::env::var("BT_LOGS_CHILD").is_err() {
        return;
    }
    let e = Engine::new();
    e.register_fn("Host", "boom:", |n: i64| -> i64 { panic!("boom {n}") })
        .unwrap();
    let kind = e
        .eval("[Host boom: 1] on: Error do: [:x | x kind]")
        .unwrap();
    println!("KIND {}", e.display(&kind));
    e.eval(FLOOD).unwrap();
    println!("DONE {}", e.take_logs().len());
}

/// The host's stderr stays empty: no panic message, no log line.
#[test]
fn the_engine_writes_nothing_to_the_hosts_stderr() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "logs::quiet_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BT_LOGS_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("KIND host_error"), "{stdout}\n{stderr}");
    assert!(stdout.contains("DONE "), "{stdout}\n{stderr}");
    assert_eq!(stderr, "", "the host's stderr");
}
