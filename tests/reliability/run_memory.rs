//! `bt run --max-memory SIZE` (and `BT_MAX_MEMORY`): runaway growth ends the program with a
//! `memory_limit` error naming the limit and the flag, exit status 1 — never an abort — and
//! the child's peak resident set stays under the limit plus a small constant.
//!
//! Each row runs the `bt` binary as a child (its peak RSS sampled from `/proc`), with a deadline
//! that only turns a hang into a failure.

use crate::bt_run::{drain_output, script_file, wait_until};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of `bt` did, with the child's peak resident set.
struct Run {
    /// Exit code; None when a signal ended it.
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    peak_rss: u64,
}

/// Runs `bt run ARGS FILE` (FILE holds `src`) with the environment variables `env` set.
fn run(name: &str, args: &[&str], env: &[(&str, &str)], src: &str) -> Run {
    let (dir, path) = script_file("runmem", name, src);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bt"));
    cmd.arg("run").args(args).arg(&path);
    cmd.env_remove("BT_MAX_MEMORY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bt");
    let (t_out, t_err) = drain_output(&mut child);
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    // The high-water mark only grows; sampled until the child exits (after its last sample
    // it only reports and exits).
    let deadline = Instant::now() + Duration::from_secs(120);
    let Some(status) = wait_until(&mut child, deadline, || peak = peak.max(hwm(&status_file)))
    else {
        let _ = std::fs::remove_dir_all(&dir);
        panic!("bt run {name} did not exit in time");
    };
    let _ = std::fs::remove_dir_all(&dir);
    Run {
        code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        peak_rss: peak,
    }
}

/// `VmHWM` (peak resident set) of the process whose `/proc/PID/status` is `file`, in bytes.
fn hwm(file: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

const MIB: u64 = 1 << 20;

/// What the bt process holds besides the program's own values (the loaded library, thread
/// stacks, the allocator's pages) — the "small constant" over the limit. A block that
/// doubles its way up (a String, a List, a printString) must not leave its earlier copies
/// resident: printing an Array of long Strings under 64M peaked at ~160 MiB while the
/// allocator kept them.
const OVERHEAD: u64 = 40 * MIB;

/// Every way a program grows without bound.
const RUNAWAYS: &[(&str, &str)] = &[
    (
        "doubling",
        "x := \"abcdefgh\"\n[true] whileTrue: [x := x ++ x]\n",
    ),
    (
        "mailbox",
        "Actor subclass: Sink\n  block => [true] whileTrue: [Timer sleep: 1000]\n  put: x => x\n\n\
         s := Sink spawn\ns block!\n1 to: 40000000 do: [:i | s put: \"message {i}\"!]\n",
    ),
    ("interval", "Transcript showCr: (1 to: 10 ** 12) asList size printString\n"),
    (
        "list_growth",
        "xs := #()\n[true] whileTrue: [xs := xs add: \"an element of some length\" copy]\n",
    ),
    (
        "actor_growth",
        "Actor subclass: Hoard\n  grow =>\n    xs := #()\n    [true] whileTrue: [xs := xs add: \"one more element\" copy]\n\n\
         h := Hoard spawn\nh grow\n",
    ),
    (
        "actor_field_doubling",
        "Actor subclass: Hoard\n  state: s = \"abcdefgh\"\n  grow => [true] whileTrue: [self.s := self.s ++ self.s]\n\n\
         h := Hoard spawn\nh grow\n",
    ),
    (
        "print_long_strings",
        "b := Array new: 1000 withAll: (\"x\" repeat: 100000)\nTranscript showCr: b printString size printString\n",
    ),
    (
        "json_long_strings",
        "b := Array new: 1000 withAll: (\"x\" repeat: 100000)\nTranscript showCr: (Json generate: b) size printString\n",
    ),
    (
        "erlang_results_held",
        "l := (1 to: 1000000) asList\nacc := List new.\n[true] whileTrue: [acc := acc add: (Erlang lists reverse: l)]\n",
    ),
    (
        "fork_bomb",
        "Actor subclass: Bunny\n  go => (Bunny spawn) go!. (Bunny spawn) go!\n\n\
         (Bunny spawn) go!\n[true] whileTrue: [Timer sleep: 100]\n",
    ),
];

fn assert_memory_limit(name: &str, r: &Run, limit_text: &str, limit: u64) {
    let all = format!(
        "{name}: status {:?} signal {:?}\nstdout: {}\nstderr: {}",
        r.code, r.signal, r.stdout, r.stderr
    );
    assert_eq!(r.signal, None, "{all}");
    assert_eq!(r.code, Some(1), "{all}");
    assert!(r.stderr.contains("memory_limit"), "{all}");
    assert!(r.stderr.contains(limit_text), "{all}");
    assert!(r.stderr.contains("--max-memory"), "{all}");
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("abort"),
        "{all}"
    );
    assert!(
        r.peak_rss < limit + OVERHEAD,
        "{name}: peak RSS {} MiB over a {} MiB limit",
        r.peak_rss / MIB,
        limit / MIB
    );
}

#[test]
fn runaway_growth_ends_with_memory_limit_under_max_memory() {
    for (name, src) in RUNAWAYS {
        let r = run(name, &["--max-memory", "64M"], &[], src);
        assert_memory_limit(name, &r, "64 MiB", 64 * MIB);
    }
}

#[test]
fn bt_max_memory_sets_the_limit_and_the_flag_wins() {
    let (name, src) = RUNAWAYS[0];
    let r = run("env", &[], &[("BT_MAX_MEMORY", "48M")], src);
    assert_memory_limit(name, &r, "48 MiB", 48 * MIB);
    let r = run(
        "env_flag",
        &["--max-memory", "32M"],
        &[("BT_MAX_MEMORY", "48M")],
        src,
    );
    assert_memory_limit(name, &r, "32 MiB", 32 * MIB);
}

/// Without a flag the limit is a share of the machine's (or cgroup's) memory: the program
/// still ends with `memory_limit` — here a single step larger than that share.
#[test]
fn the_default_limit_is_a_share_of_the_machine() {
    let src =
        "x := \"x\" repeat: 1000000\nTranscript showCr: (x repeat: 1000000) size printString\n";
    let r = run("default", &[], &[], src);
    assert_eq!(r.signal, None, "{}", r.stderr);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("memory_limit"), "{}", r.stderr);
    assert!(r.stderr.contains("--max-memory"), "{}", r.stderr);
}

#[test]
fn a_program_under_the_limit_runs_and_bad_sizes_are_usage_errors() {
    let src = "x := \"x\" repeat: 1000000\nTranscript showCr: (x ++ x) size printString\n";
    let r = run("fits", &["--max-memory", "64M"], &[], src);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (Some(0), "2000000\n"),
        "{}",
        r.stderr
    );
    for bad in ["lots", "0", "12Q", "-5M"] {
        let r = run("bad", &[&format!("--max-memory={bad}")], &[], src);
        assert_eq!(r.code, Some(2), "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("--max-memory"), "{bad}: {}", r.stderr);
    }
    let r = run("bad_env", &[], &[("BT_MAX_MEMORY", "lots")], src);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

/// Runs `src` under `--max-memory 64M`: it must exit 0 printing `out`, its peak resident
/// set under `peak`.
fn runs_within(name: &str, src: &str, out: &str, peak: u64) {
    let r = run(name, &["--max-memory", "64M"], &[], src);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), out), "{}", r.stderr);
    assert!(r.peak_rss < peak, "peak {} MiB", r.peak_rss / MIB);
}

/// Walking a String an element at a time holds no list of its elements: an 8 MB String is
/// read by `do:`, `reverseDo:`, `inject:into:`, `count:`, `select:` and a Stream over it
/// under a 64 MB limit, and the peak stays near the String's own size (each used to
/// gather every grapheme first: 275 MB, and a Stream 744 MB, then `memory_limit`).
#[test]
fn iterating_a_long_string_takes_no_memory_in_proportion_to_it() {
    let src = "s := \"x\" repeat: 8000000\n\
               n := 0\n\
               s do: [:c | n := n + 1]\n\
               s reverseDo: [:c | n := n + 1]\n\
               n := n + (s inject: 0 into: [:a :c | a + 1])\n\
               n := n + (s count: [:c | c == \"x\"])\n\
               n := n + (s select: [:c | c == \"x\"]) size\n\
               n := n + ((s stream select: [:c | c == \"x\"]) inject: 0 into: [:a :c | a + 1])\n\
               Transcript showCr: n printString\n";
    runs_within("walk_string", src, "48000000\n", 64 * MIB);
}

/// A conversion that stops early in a long List answers the List's rest without copying it:
/// `unicode:characters_to_binary` of 1,500,000 code points that meets a surrogate early
/// answers `{error, Done, Rest}` with Rest 1,444,801 elements long, under a 64 MB limit, and
/// the peak stays near the List's own size (the List was copied for the walk and its rest
/// copied twice more: 117 MB).
#[test]
fn a_conversion_error_answers_the_rest_of_a_long_list_without_copying_it() {
    let src = "l := Erlang lists seq: 97 with: 1500096\n\
               r := Erlang unicode characters_to_binary: l\n\
               Transcript showCr: (r at: 1) printString\n\
               Transcript showCr: (r at: 3) size printString\n";
    runs_within("conversion_rest", src, "#error\n1444801\n", 96 * MIB);
}

/// A native call that answers a long List holds one copy of it while it becomes the List:
/// `lists:seq` of 3,000,000 Integers (48 MB) under a 64 MB limit answers, and the peak stays
/// near the List's own size (the elements were gathered in a vector, then copied into the
/// List while the vector was still held: 118 MB).
#[test]
fn a_native_call_answering_a_long_list_holds_one_copy_of_it() {
    let src = "l := Erlang lists seq: 1 with: 3000000\n\
               Transcript showCr: l size printString\n";
    runs_within("long_native_list", src, "3000000\n", 96 * MIB);
}
