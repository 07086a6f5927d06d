//! Reliability suite: a soak of supervised churn, casts and
//! snapshots for a fixed count of rounds, asserting that the resident set does not grow
//! between two checkpoints.
//!
//! Each round casts 200 messages to a supervised worker, waits for them (a sync send), kills
//! the worker, waits for its replacement and takes a snapshot of the tree. After a warm-up
//! (allocator pools, method caches, interned symbols settle) the RSS is read from
//! /proc/self/statm; after three times as many rounds again. The RSS is the whole process's,
//! so the rounds run in a child process — this test binary re-run with `--exact
//! soak::soak_child` and `BT_SOAK_CHILD` set — where no other test runs beside them (the
//! reliability tests share one binary, tests/reliability/main.rs). Tolerance: 4 MiB — far below
//! what a leak of one process record with its mailbox per round (over 10 KiB each, 600
//! rounds: 6 MiB and more) would add, and well above allocator noise.

#![allow(unsafe_code)] // thread CPU clock / page size (libc)

use bt::interp::{Interpreter as Vm, InterpreterOptions as VmOptions};

const FIXTURE: &str = r#"
Actor subclass: Churn
  class supervisionPolicy => #permanent
  state: n = 0
  bump: s => self.n := self.n + s size
  n => self.n

Supervisor subclass: ChurnSup
  class children => #(Churn)
  class maxRestarts => 1000000
  class restartWindow => 1

Object subclass: Soak
  class round: app =>
    w := (app which: Churn) unwrap
    1 to: 200 do: [:i | w bump: "payload {i}"!]
    w n
    w kill
    [((app which: Churn) unwrap ifNil: [w]) =:= w] whileTrue: [Timer sleep: 1]
    ((ProcessNavigation from: app) unwrap tree totals) at: #running

  class run: app rounds: k =>
    1 to: k do: [:i | self round: app]
    k
"#;

/// Resident set size of this process in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("resident pages");
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    pages * page
}

#[test]
#[cfg(target_os = "linux")]
fn supervised_churn_casts_and_snapshots_do_not_grow_memory() {
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "soak::soak_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BT_SOAK_CHILD", "1")
        .output()
        .expect("test binary runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprint!("{stderr}");
    assert!(
        out.status.success(),
        "soak child failed:\n{stdout}\n{stderr}"
    );
    // The child ran the soak (and did not just filter itself out).
    assert!(
        stderr.contains("soak: RSS "),
        "soak child did not run:\n{stdout}"
    );
}

/// The child side: the soak itself, alone in its process. Without `BT_SOAK_CHILD` (the
/// normal test run) it has nothing to do.
#[test]
#[cfg(target_os = "linux")]
fn soak_child() {
    if std::env::var_os("BT_SOAK_CHILD").is_none() {
        return;
    }
    let vm = Vm::new(VmOptions::default());
    vm.set_output(Box::new(|_| {}));
    let rep = vm.load_unit(&[("soak.bt".to_string(), FIXTURE.to_string())]);
    assert!(rep.error.is_none(), "{:?}", rep.error.map(|e| e.message()));
    vm.eval("soak", "app := ChurnSup supervise unwrap")
        .expect("supervise");
    let run = |k: usize| {
        let v = vm
            .eval("soak", &format!("Soak run: app rounds: {k}"))
            .unwrap_or_else(|e| panic!("soak round: {}", e.message()));
        assert_eq!(v.as_int(), Some(k as i64));
    };
    run(200);
    let a = rss();
    run(600);
    let b = rss();
    vm.eval("soak", "app stop").expect("stop");
    let grown = b.saturating_sub(a);
    eprintln!(
        "soak: RSS {} KiB -> {} KiB (+{} KiB)",
        a / 1024,
        b / 1024,
        grown / 1024
    );
    assert!(
        grown <= 4 << 20,
        "RSS grew by {} KiB over 600 rounds ({} -> {} KiB)",
        grown / 1024,
        a / 1024,
        b / 1024
    );
}
