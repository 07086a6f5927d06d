//! `bt test --seed` / `--explore`: the deterministic scheduler finds the lost update of
//! examples/testing/bank_race, replays it from its seed, passes the fixed bank under 1000
//! schedules; its virtual clock runs a minute of timeouts at once; deadlocks and livelocks
//! are failures that name what each process waits on; a file can pin its seed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::bt_run::bt_script;

/// examples/testing/bank_race (the tests run there, so paths in reports are short).
fn bank_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/testing/bank_race")
}

/// `bt test ARGS` in the bank example's directory: (exit code, stdout, stderr).
fn bt_test(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("test")
        .args(args)
        .current_dir(bank_dir())
        .output()
        .expect("run bt test");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn explore_finds_the_lost_deposit_and_its_seed_replays_it() {
    let (code, out, err) = bt_test(&["--explore", "200", "--json", "test/racy_test.bt"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let doc = json(&out);
    let case = &doc["files"][0]["cases"][0];
    assert_eq!(case["status"], "fail", "{out}");
    assert_eq!(case["name"], "testTwoTellersDepositEverything");
    let sched = &case["schedule"];
    let seed = sched["seed"].as_u64().expect("a seed");
    assert!(sched["steps"].as_u64().unwrap_or(0) > 0, "{out}");
    let replay = sched["replay"].as_str().expect("a replay command");
    assert_eq!(
        replay,
        format!("bt test --seed {seed} test/racy_test.bt --filter testTwoTellersDepositEverything")
    );
    let msg = case["message"].as_str().unwrap_or("");
    assert!(msg.contains("Expected 20, got 10"), "{msg}");
    // The human report prints the same command.
    let (_, human, _) = bt_test(&["--explore", "200", "test/racy_test.bt"]);
    assert!(human.contains(replay), "{human}");

    // Replayed three times: the same failure, byte for byte.
    let seed = seed.to_string();
    let args = [
        "--seed",
        seed.as_str(),
        "test/racy_test.bt",
        "--filter",
        "testTwoTellersDepositEverything",
    ];
    let runs: Vec<_> = (0..3).map(|_| bt_test(&args)).collect();
    for r in &runs {
        assert_eq!(r.0, Some(1), "{}{}", r.1, r.2);
        assert!(r.1.contains("Expected 20, got 10"), "{}", r.1);
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[1], runs[2]);
}

#[test]
fn the_same_seed_gives_the_same_schedule_every_time() {
    for seed in ["0", "7", "12"] {
        let a = bt_test(&["--seed", seed, "--json", "test/"]);
        for _ in 0..2 {
            assert_eq!(
                bt_test(&["--seed", seed, "--json", "test/"]),
                a,
                "seed {seed}"
            );
        }
    }
}

#[test]
fn the_fixed_bank_passes_a_thousand_schedules() {
    let (code, out, err) = bt_test(&["--explore", "1000", "--json", "test/fixed_test.bt"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let doc = json(&out);
    let case = &doc["files"][0]["cases"][0];
    assert_eq!(case["status"], "pass", "{out}");
    assert_eq!(case["schedule"]["schedules"], 1000, "{out}");
}

const TIMEOUTS: &str = r#"
Actor subclass: Slow
  answer => Timer sleep: 20000. #late

TestCase subclass: VirtualTimeTest
  testAMinuteOfTimeouts =>
    t0 := Time monotonicMs
    w0 := Time nowMs
    s := Slow spawn
    1 to: 4 do: [:i | self should: [(s withTimeout: 15000) answer] raise: #timeout]
    fired := #no
    Timer after: 5000 do: [fired := #yes]
    Timer sleep: 10000
    elapsed := Time monotonicMs - t0
    self assert: elapsed equals: 70000
    self assert: Time nowMs - w0 equals: elapsed
    self assert: DateTime now year equals: 2026
"#;

#[test]
fn timeouts_run_on_the_virtual_clock() {
    // 70 s of timeouts and sleeps under a 5 s per-test limit: the virtual clock jumps to
    // each deadline when every process waits (the test itself checks the clocks).
    let r = bt_script(
        "sched-vt",
        &["test", "--seed", "5", "--timeout", "5", "--json"],
        "timeouts_test",
        TIMEOUTS,
        Duration::from_secs(60),
    );
    let doc = json(&r.stdout);
    assert_eq!(doc["passed"], 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.code(), Some(0));
}

const CROSS_CALLS: &str = r#"
Actor subclass: Peer
  state: other = nil
  other: p => self.other := p
  poke => (self.other withTimeout: #infinity) ping
  ping => 1

TestCase subclass: CrossCallTest
  testCrossCalls =>
    a := Peer spawn
    b := Peer spawn
    a other: b
    b other: a
    a poke!
    b poke!
    self assert: ((a withTimeout: #infinity) ping) equals: 1
"#;

#[test]
fn a_deadlock_fails_with_the_waiting_chain() {
    let r = bt_script(
        "sched-dl",
        &["test", "--explore", "20"],
        "cross_test",
        CROSS_CALLS,
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(1), "{}{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains(
            "SchedulerError (deadlock): every process is blocked and no timer is due (virtual time 0 ms)"
        ),
        "{out}"
    );
    assert!(
        out.contains("<0.2.0> actor Peer waits for a reply from <0.3.0> actor Peer"),
        "{out}"
    );
    assert!(
        out.contains("<0.3.0> actor Peer waits for a reply from <0.2.0> actor Peer"),
        "{out}"
    );
    assert!(out.contains("bt test --seed "), "{out}");
}

const SPIN: &str = r#"
Actor subclass: Spinner
  spin => self spin!

TestCase subclass: SpinTest
  testSpins =>
    s := Spinner spawn
    s spin!
    Timer sleep: 1000
    self assert: true
"#;

#[test]
fn a_livelock_fails_after_the_step_budget() {
    let r = bt_script(
        "sched-ll",
        &["test", "--seed", "2", "--step-budget", "5000"],
        "spin_test",
        SPIN,
        Duration::from_secs(60),
    );
    assert_eq!(r.code(), Some(1), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("SchedulerError (livelock): the job took more than 5000 scheduling steps"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("actor Spinner is runnable"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_file_pins_its_seed_and_exploration() {
    let pinned = format!("// @seed 41\n{TIMEOUTS}");
    let r = bt_script(
        "sched-pin",
        &["test", "--timeout", "5", "--json"],
        "pinned_test",
        &pinned,
        Duration::from_secs(60),
    );
    let doc = json(&r.stdout);
    assert_eq!(doc["passed"], 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(doc["files"][0]["cases"][0]["schedule"]["seed"], 41);

    let explored = format!("// @explore 20\n{CROSS_CALLS}");
    let r = bt_script(
        "sched-pin",
        &["test", "--json"],
        "explored_test",
        &explored,
        Duration::from_secs(60),
    );
    let doc = json(&r.stdout);
    let case = &doc["files"][0]["cases"][0];
    assert_eq!(case["status"], "fail", "{}", r.stdout);
    assert!(case["schedule"]["replay"].is_string(), "{}", r.stdout);
}

#[test]
fn injected_crashes_come_from_the_seed_and_replay() {
    let (code, out, err) = bt_test(&[
        "--explore",
        "30",
        "--inject-crashes",
        "0.3",
        "--json",
        "test/fixed_test.bt",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    let doc = json(&out);
    let case = &doc["files"][0]["cases"][0];
    assert!(
        case["message"]
            .as_str()
            .unwrap_or("")
            .contains("injected_crash"),
        "{out}"
    );
    let replay = case["schedule"]["replay"].as_str().expect("replay");
    assert!(replay.ends_with("--inject-crashes 0.3"), "{replay}");
    // The replay (its arguments after `bt test`) fails the same way twice.
    let args: Vec<&str> = replay.split_whitespace().skip(2).collect();
    let a = bt_test(&args);
    assert_eq!(a.0, Some(1), "{}{}", a.1, a.2);
    assert!(a.1.contains("injected_crash"), "{}", a.1);
    assert_eq!(bt_test(&args), a);
}
