//! Limits no script escapes: memory, reductions per evaluation and per actor,
//! the engine's total budget, deadlines over parsing and in-place appends — against catch-all
//! handlers, `ensure:` blocks, spawned actors, one huge primitive and memory bombs.
//!
//! Memory tests run each bomb in a child process (this test binary re-run with
//! `BT_MEM_SCENARIO` set, see [`memory_child`]) with [`bt::CountingAlloc`] (tests/engine/main.rs), and
//! assert on the child's own peak RSS (`VmHWM`), so other tests of this binary do not disturb
//! the figure. The huge-Integer tests (end of the file) assert generous upper bounds on the
//! time from a deadline or a cancel to the end of an operation that would run for minutes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::child;
use crate::common;
use child::{run_child, status_bytes};
use common::{err, int};

use bt::engine::Capability;
use bt::{Engine, Limit};

/// The child-side test's full name in this binary (tests/engine/main.rs).
const CHILD: &str = "limits::memory_child";

/// The memory limit of the bomb scenarios.
const LIMIT: usize = 64 << 20;
/// What the host may grow beyond the limit: allocator slack (freed pages glibc keeps), one
/// check interval of growth, thread stacks touched by the run.
const SLACK: usize = 40 << 20;

const HOG: &str = r#"
Actor subclass: Hog
  state: kept = nil
  grow => s := "x". [true] whileTrue: [s := s ++ s]
  keep: x => self.kept := x

Object subclass: Deep
  class nest: n => l := nil. 1 to: n do: [:i | l := #[l, i]]. l
"#;

/// The bomb scenarios: the script each runs.
fn scenario(name: &str) -> &'static str {
    match name {
        "as_list" => "(1 to: 10 ** 9) asList size",
        "doubling" => "s := \"x\". [true] whileTrue: [s := s ++ s]",
        "doubling_copy" => "s := \"x\". t := s. [true] whileTrue: [t := s. s := s ++ s]",
        "deep" => "Deep nest: 100000000",
        "catch_all" => "[(1 to: 10 ** 9) asList] on: Error do: [:e | (1 to: 10 ** 9) asList]",
        "ensure" => {
            "[(1 to: 10 ** 9) asList] ensure: [s := \"x\". [true] whileTrue: [s := s ++ s]]"
        }
        "huge_primitive" => "(\"x\" repeat: 10 ** 10) size",
        "huge_array" => "(Array new: 100000000 withAll: \"x\") size",
        "actor" => "h := Hog spawn. h grow",
        "many_actors" => "1 to: 100000 do: [:i | (Hog spawn) keep: (\"x\" repeat: 100000)]",
        "dictionary" => "d := #{}. 1 to: 10 ** 9 do: [:i | d := d at: i put: i printString]",
        "huge_product" => "a := (1 bitShift: 100000000) - 1. (a * a) size",
        "huge_power" => "(3 ** 100000000) size",
        "huge_padding" => "(5 printPaddedWith: $0 to: 1000000000) size",
        _ => "nil",
    }
}

/// The child side: runs `BT_MEM_SCENARIO` under a 64 MiB limit and prints
/// `RESULT <kind> <peak bytes over the baseline>`. Without the variable (the normal test
/// run) it has nothing to do.
#[test]
fn memory_child() {
    let Ok(name) = std::env::var("BT_MEM_SCENARIO") else {
        return;
    };
    let e = Engine::builder().max_memory(LIMIT).try_build().unwrap();
    e.eval(HOG).unwrap();
    e.eval("(1 to: 1000) asList size").unwrap();
    let base = status_bytes("VmRSS:");
    let r = e.eval(scenario(&name));
    let peak = status_bytes("VmHWM:");
    let kind = match &r {
        Ok(_) => "ok".to_string(),
        Err(er) => {
            println!("DETAIL {er}");
            er.kind.clone()
        }
    };
    let limit = r.as_ref().err().and_then(|e| e.limit);
    // The engine still works after the limit.
    let after = e.eval("3 + 4").map(|v| v.as_i64());
    println!(
        "RESULT {kind} {} {:?} {:?}",
        peak.saturating_sub(base),
        limit,
        after.ok().flatten()
    );
}

/// A bomb in the main program ends the evaluation with the `Memory` limit; one in an actor
/// crashes the actor and the evaluation gets an error of kind `memory_limit` from it.
fn assert_bomb_contained(name: &str, expect_kind: &str) {
    assert_contained(name, expect_kind, "Some(Memory)")
}

fn assert_contained(name: &str, expect_kind: &str, expect_limit: &str) {
    let r = run_child(CHILD, "BT_MEM_SCENARIO", name);
    let (kind, peak, limit, after) = (r.kind, r.peak, r.limit, r.after);
    assert_eq!(kind, expect_kind, "{name}: {}", r.detail);
    assert!(
        peak < LIMIT + SLACK,
        "{name}: host peak RSS grew {} MiB (limit {} MiB + {} MiB)",
        peak >> 20,
        LIMIT >> 20,
        SLACK >> 20
    );
    assert_eq!(limit, expect_limit, "{name}");
    assert_eq!(
        after, "Some(7)",
        "{name}: the engine must work after the limit"
    );
}

#[test]
fn an_interval_as_list_bomb_meets_the_memory_limit() {
    assert_bomb_contained("as_list", "memory_limit");
}

#[test]
fn a_doubling_string_meets_the_memory_limit() {
    assert_bomb_contained("doubling", "memory_limit");
    assert_bomb_contained("doubling_copy", "memory_limit");
}

#[test]
fn a_deep_nested_structure_meets_the_memory_limit() {
    assert_bomb_contained("deep", "memory_limit");
}

#[test]
fn catch_all_handlers_and_ensure_blocks_do_not_escape_the_memory_limit() {
    assert_bomb_contained("catch_all", "memory_limit");
    assert_bomb_contained("ensure", "memory_limit");
}

#[test]
fn one_huge_primitive_is_refused_before_it_allocates() {
    assert_bomb_contained("huge_primitive", "memory_limit");
    assert_bomb_contained("huge_array", "memory_limit");
}

#[test]
fn a_huge_integer_result_is_refused_before_it_allocates() {
    assert_bomb_contained("huge_product", "memory_limit");
    assert_bomb_contained("huge_power", "memory_limit");
    // The padding of `printPaddedWith:to:` is paid for before it is built.
    assert_bomb_contained("huge_padding", "memory_limit");
}

#[test]
fn a_dictionary_growing_one_entry_at_a_time_meets_the_memory_limit() {
    assert_bomb_contained("dictionary", "memory_limit");
}

#[test]
fn actors_do_not_escape_the_memory_limit() {
    // One actor growing: its next doubling is refused before it allocates; it crashes with
    // #memory_limit and the caller gets that kind.
    assert_contained("actor", "memory_limit", "None");
    // Many actors each holding a little: the engine's account is shared; once it is over,
    // every process the script started stops and the evaluation ends with the limit.
    assert_contained("many_actors", "memory_limit", "Some(Memory)");
}

#[test]
fn a_memory_limit_needs_the_counting_allocator_or_try_build_says_so() {
    // This binary installs it, so try_build accepts.
    assert!(bt::memory::installed());
    let e = Engine::builder().max_memory(LIMIT).try_build().unwrap();
    assert!(e.memory_used().is_some());
    assert_eq!(int(&e, "(1 to: 1000) asList size"), 1000);
}

#[test]
fn an_in_place_append_pays_for_its_bytes() {
    // `x := x ++ x` on a local String used to append in place for free.
    let e = Engine::builder().max_reductions(1_000_000).build();
    let er = err(&e, "x := \"ab\". [true] whileTrue: [x := x ++ x]. x size");
    assert_eq!(er.limit, Some(Limit::Reductions), "{er}");
    let er = err(
        &e,
        "x := \"ab\". 1 to: 100 do: [:i | x := x ++ x ++ x]. x size",
    );
    assert_eq!(er.limit, Some(Limit::Reductions), "{er}");
}

#[test]
fn a_huge_literal_is_refused_before_parsing() {
    let e = Engine::builder().timeout(Duration::from_secs(2)).build();
    let src = format!("x := {}", "7".repeat(4_000_000));
    let er = err(&e, &src);
    assert!(er.is_compile(), "{er}");
    assert!(er.message.contains("4000000"), "{}", er.message);
    // Literals of ordinary size still parse.
    assert_eq!(
        int(&e, &format!("{} printString size", "9".repeat(5000))),
        5000
    );
    // Digits inside a String literal, a comment or a quoted Symbol are no number literal.
    let digits = "7".repeat(200_000);
    assert_eq!(int(&e, &format!("\"{digits}\" size")), 200_000);
    assert_eq!(int(&e, &format!("\"a \"\"{digits}\"\" b\" size")), 200_006);
    assert_eq!(int(&e, &format!("// {digits}\n/* {digits} */ 3")), 3);
    assert_eq!(int(&e, &format!("#'{digits}' size")), 200_000);
    assert_eq!(int(&e, &format!("$\" == $\". \"{digits}\" size")), 200_000);
    // … but one inside an interpolation is.
    let er = err(&e, &format!("\"a {{{digits}}} b\" size"));
    assert!(er.is_compile(), "{er}");
}

#[test]
fn catch_all_and_ensure_do_not_escape_reductions() {
    let e = Engine::builder().max_reductions(200_000).build();
    for src in [
        "[[true] whileTrue: [1]] on: Error do: [:x | [true] whileTrue: [2]]",
        "[[true] whileTrue: [1]] on: Exception do: [:x | x retry]",
        "[[true] whileTrue: [1]] ensure: [[true] whileTrue: [2]]",
        "[[[true] whileTrue: [1]] ensure: [[true] whileTrue: [2]]] on: Error do: [:x | [true] whileTrue: [3]]",
    ] {
        let er = err(&e, src);
        assert_eq!(er.limit, Some(Limit::Reductions), "{src}: {er}");
    }
}

#[test]
fn a_runaway_actor_crashes_into_its_supervisor() {
    let e = Engine::builder().actor_max_reductions(100_000).build();
    e.eval(
        "Actor subclass: Runaway\n  class supervisionPolicy => #permanent\n  spin => [true] whileTrue: [1]\n  ping => #pong\n\nSupervisor subclass: Sup\n  class children => #(Runaway)\n  class strategy => #oneForOne\n",
    )
    .unwrap();
    e.eval("sup := Sup supervise unwrap. r := (sup which: Runaway) unwrap")
        .unwrap();
    let er = err(&e, "r spin");
    assert_eq!(er.kind, "reduction_limit");
    assert_eq!(e.eval("r isAlive").unwrap().as_bool(), Some(false));
    // The supervisor restarted it under a new pid.
    assert_eq!(
        e.eval("[((sup which: Runaway) unwrap ifNil: [r]) =:= r] whileTrue: [Timer sleep: 1]. (sup which: Runaway) unwrap ping")
            .unwrap()
            .as_text(),
        Some("pong")
    );
}

#[test]
fn spawned_actors_and_timers_do_not_outlive_the_total_budget() {
    // A script that leaves an actor looping and a timer firing after the evaluation
    // returns: the engine's total budget ends both, and every later evaluation says so.
    let e = Engine::builder()
        .total_reductions(3_000_000)
        .grant(Capability::Timers)
        .build();
    e.eval(
        "Actor subclass: Loop\n  state: n = 0\n  go => self.n := self.n + 1. 1 to: 1000 do: [:i | i]. self go!\n",
    )
    .unwrap();
    e.eval("l := Loop spawn. l go!. Timer every: 1 do: [1 to: 1000 do: [:i | i]]")
        .unwrap();
    let er = loop {
        match e.eval("1") {
            Err(er) => break er,
            Ok(_) => std::thread::yield_now(),
        }
    };
    assert_eq!(er.limit, Some(Limit::Budget), "{er}");
    assert_eq!(er.kind, "budget_exhausted");
    // Shutdown then ends the runtime; nothing is left running.
    e.shutdown();
    assert_eq!(err(&e, "1").limit, Some(Limit::Shutdown));
}

/// Huge operands (8 MiB, 8 MiB, 4 MiB, 20 million decimal digits): each operation below
/// takes seconds to hours in one piece. Made one per evaluation (each within a 300 ms
/// deadline on a loaded machine).
const HUGE: [&str; 4] = [
    "a := (1 bitShift: 67108864) - 12345. 0",
    "b := (1 bitShift: 67000000) - 777. 0",
    "c := (1 bitShift: 33554432) + 4321. 0",
    "digits := \"7\" repeat: 20000000. 0",
];

fn make_huge(e: &Engine) {
    for src in HUGE {
        e.eval(src).unwrap();
    }
}

/// One of each interruptible huge-Integer operation (the last three print through the
/// metered radix conversion too).
const HUGE_OPS: [&str; 15] = [
    "(a * b) isNil",
    "((a * b) div: c) isNil",
    "((a * b) mod: c) isNil",
    "((a * b) rem: c) isNil",
    "(a gcd: b) isNil",
    "(a lcm: c) isNil",
    "(3 ** 60000000) isNil",
    "a printString size",
    "(a printString: 7) size",
    "digits asInteger isNil",
    "(a * a) printString size",
    "(a printShowingDecimalPlaces: 2) size",
    "(a printPaddedWith: $0 to: 10) size",
    "(Json generate: #(1, a)) size",
    "(Json parse: digits) isNil",
];

/// How long an interrupted operation may take to end: generous for a loaded machine and an
/// unoptimised build; each operation's pieces are milliseconds, the whole seconds to hours.
const PROMPT: Duration = Duration::from_secs(5);

#[test]
fn a_deadline_ends_each_huge_integer_operation_promptly() {
    let e = Engine::builder()
        .timeout(Duration::from_millis(300))
        .build();
    make_huge(&e);
    for op in HUGE_OPS {
        let t = Instant::now();
        let er = err(&e, op);
        let took = t.elapsed();
        eprintln!("{op}: {took:?}");
        assert_eq!(er.limit, Some(Limit::Deadline), "{op}: {er}");
        assert!(took < PROMPT, "{op}: ended after {took:?}");
    }
    assert_eq!(int(&e, "3 + 4"), 7);
}

/// Runs `op` on another thread and stops it with `stop` once it started; answers the error
/// and the time from `stop` to the end.
fn stopped_from_another_thread(
    e: &Arc<Engine>,
    op: &str,
    started: &Arc<AtomicUsize>,
    stop: impl FnOnce(),
) -> (bt::EngineError, Duration) {
    let before = started.load(Ordering::SeqCst);
    let e2 = e.clone();
    let src = format!("Host started. {op}");
    let t = std::thread::spawn(move || e2.eval(&src));
    while started.load(Ordering::SeqCst) == before {
        std::thread::yield_now();
    }
    let at = Instant::now();
    stop();
    let er = t.join().unwrap().unwrap_err();
    (er, at.elapsed())
}

fn engine_with_started_hook() -> (Arc<Engine>, Arc<AtomicUsize>) {
    let e = Arc::new(Engine::new());
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    e.register_fn("Host", "started", move || {
        s.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    make_huge(&e);
    (e, started)
}

#[test]
fn a_cancel_from_another_thread_ends_each_huge_integer_operation_promptly() {
    let (e, started) = engine_with_started_hook();
    let h = e.cancel_handle();
    for op in HUGE_OPS {
        let (er, took) = stopped_from_another_thread(&e, op, &started, || h.cancel());
        assert_eq!(er.limit, Some(Limit::Cancelled), "{op}: {er}");
        assert!(took < PROMPT, "{op}: ended {took:?} after the cancel");
    }
    assert_eq!(int(&e, "3 + 4"), 7);
}

#[test]
fn shutdown_ends_a_huge_integer_operation_promptly() {
    let (e, started) = engine_with_started_hook();
    let e2 = e.clone();
    let (er, took) = stopped_from_another_thread(&e, "a * b", &started, move || e2.shutdown());
    assert_eq!(er.limit, Some(Limit::Shutdown), "{er}");
    assert!(took < PROMPT, "ended {took:?} after the shutdown");
}

#[test]
fn huge_integer_results_stay_exact() {
    // Above the pieces' leaf sizes (a few hundred thousand bits), checked by identities.
    let e = Engine::new();
    e.eval("x := (7 ** 120000) + 12345. y := (3 ** 150000) - 1. p := x * y. 0")
        .unwrap();
    let t = |src: &str| e.eval(src).unwrap().as_bool();
    assert_eq!(t("(p div: y) =:= x and: [(p rem: y) =:= 0]"), Some(true));
    assert_eq!(
        t("((p + 5) mod: x) =:= 5 and: [((p negated + 5) div: x) =:= (1 - y)]"),
        Some(true)
    );
    assert_eq!(t("((x * 6) gcd: (y * 6)) =:= (6 * (x gcd: y))"), Some(true));
    assert_eq!(t("(p printString asInteger) =:= p"), Some(true));
    assert_eq!(
        t("((7 ** 120000) printString: 7) =:= (\"1\" ++ (\"0\" repeat: 120000))"),
        Some(true)
    );
    assert_eq!(
        t("((10 ** 100000) printString size) =:= 100001"),
        Some(true)
    );
    assert_eq!(t("((2 ** 300000) * (2 ** 300000)) =:= (2 ** 600000) and: [((3 ** 200000) gcd: (6 ** 100000)) =:= (3 ** 100000)]"), Some(true));
}

/// Seeded decimal digit strings of 1 to 14,000 digits (the metered printing's leaf is
/// about 4,900 digits, its parse's 4,000), some negative.
fn decimal_cases() -> Vec<String> {
    let mut x = 0x5eed_1234_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for len in [
        1, 2, 18, 19, 20, 40, 300, 4000, 4100, 4932, 5000, 9000, 14000,
    ] {
        for _ in 0..2 {
            let mut s = String::new();
            if next() % 3 == 0 {
                s.push('-');
            }
            s.push(char::from(b'1' + (next() % 9) as u8));
            for _ in 1..len {
                // Runs of zeros and nines now and then (borrows across pieces).
                let d = match next() % 8 {
                    0 => 0,
                    1 => 9,
                    _ => next() % 10,
                };
                s.push(char::from(b'0' + d as u8));
            }
            out.push(s);
        }
    }
    out
}

#[test]
fn huge_integer_printing_by_pieces_matches_the_one_call_result() {
    // The one-call result of each is the digit string itself.
    let e = Engine::new();
    let text = |src: &str| match e.eval(src) {
        Ok(v) => v.as_text().map(str::to_string).unwrap_or_default(),
        Err(er) => panic!("{src}: {er}"),
    };
    for s in decimal_cases() {
        e.eval(&format!("n := \"{s}\" asInteger. 0")).unwrap();
        let (sign, digits) = match s.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", s.as_str()),
        };
        let len = s.len();
        assert_eq!(text("n printShowingDecimalPlaces: 0"), s, "{len}");
        assert_eq!(
            text("n printShowingDecimalPlaces: 3"),
            format!("{s}.000"),
            "{len}"
        );
        let w = len + 7;
        let pad = "0".repeat(w - len);
        assert_eq!(
            text(&format!("n printPaddedWith: $0 to: {w}")),
            format!("{sign}{pad}{digits}"),
            "{len}"
        );
        assert_eq!(text("n printPaddedWith: $* to: 1"), s, "{len}");
        assert_eq!(
            text("Json generate: #{\"n\" => n}"),
            format!("{{\"n\":{s}}}"),
            "{len}"
        );
        assert_eq!(
            text(&format!(
                "((Json parse: \"[{s}]\") unwrap first =:= n) printString"
            )),
            "true",
            "{len}"
        );
    }
}

/// The child side of the memory table (tests/support/memory_rows.rs) with the counting
/// allocator: `max_memory`.
#[test]
fn memory_row_child() {
    crate::memory_rows::run_row(|| {
        Engine::builder()
            .max_memory(crate::memory_rows::LIMIT)
            .try_build()
            .unwrap()
    });
}

#[test]
fn every_step_allocating_in_proportion_to_an_argument_is_refused_before_it_allocates() {
    let bad = crate::memory_rows::failing_rows("limits::memory_row_child", true);
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// The child side of the fork bomb: `(Bunny spawn) go!` where every Bunny spawns the next
/// (and a tree where each spawns two) under `max_memory`. Prints `BOMB <ended> <peak over
/// the baseline> <3 + 4 afterwards> <processes left>`.
#[test]
fn fork_bomb_child() {
    let Ok(shape) = std::env::var("BT_FORK_BOMB") else {
        return;
    };
    let e = Engine::builder().max_memory(LIMIT).try_build().unwrap();
    let go = match shape.as_str() {
        "chain" => "go => (Bunny spawn) go!",
        // Each actor stays inside its message: it holds a coroutine and its stack, memory the
        // allocator does not see.
        "sleeper" => "go => (Bunny spawn) go!. (Bunny spawn) go!. Timer sleep: 100000",
        _ => "go => (Bunny spawn) go!. (Bunny spawn) go!",
    };
    e.eval(&format!("Actor subclass: Bunny\n  {go}\n")).unwrap();
    e.eval("(1 to: 1000) asList size").unwrap();
    let base = status_bytes("VmRSS:");
    // The evaluation answers at once; the bomb goes on in the background.
    e.eval("(Bunny spawn) go!").unwrap();
    // Ended: the limit stopped every process the script started. Polled with a generous
    // bound (the bomb reaches 64 MiB within seconds on a loaded machine).
    let start = Instant::now();
    let ended = loop {
        if e.processes() == 0 {
            break true;
        }
        if start.elapsed() > Duration::from_secs(120) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let peak = status_bytes("VmHWM:");
    let after = e.eval("3 + 4").map(|v| v.as_i64());
    println!(
        "\nBOMB {ended} {} {:?} {}",
        peak.saturating_sub(base),
        after.ok().flatten(),
        e.processes()
    );
}

/// What a fork bomb's peak RSS may exceed its engine's limit by: the account counts each
/// allocation as the system allocator's chunk and each suspended coroutine's resident stack,
/// and at the limit every process the script started stops at once, with no spawn after
/// (measured at a 64 MiB limit, on a loaded machine too: chain, tree and sleeper
/// 62.3–64.1 MiB). A process's evaluation context is allocated at its final size: one made
/// large and shrunk left a freed hole per process that the allocator could not reuse, and
/// the sleeper grew to 80–107 MiB.
const BOMB_SLACK: usize = 12 << 20;

#[test]
fn an_actor_fork_bomb_stops_at_the_memory_limit_and_the_engine_goes_on() {
    for shape in ["chain", "tree", "sleeper"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "limits::fork_bomb_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("BT_FORK_BOMB", shape)
            // One malloc arena: the bound below is about what the account lets live, not how
            // many per-thread arenas a loaded machine's scheduling happens to touch.
            .env("MALLOC_ARENA_MAX", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("BOMB "))
            .unwrap_or_else(|| {
                panic!(
                    "{shape}: no report ({:?}):\n{text}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[0], "true", "{shape}: the bomb did not end: {line}");
        // The account stops the bomb at the limit: ~120,000 small objects (process records,
        // behaviours, messages) for the tree, a few thousand suspended coroutines for the
        // sleeper.
        let peak: usize = f[1].parse().unwrap();
        assert!(
            peak < LIMIT + BOMB_SLACK,
            "{shape}: peak RSS grew {} MiB (limit {} MiB + {} MiB)",
            peak >> 20,
            LIMIT >> 20,
            BOMB_SLACK >> 20
        );
        assert_eq!(
            f[2], "Some(7)",
            "{shape}: the next evaluation failed: {line}"
        );
        assert_eq!(f[3], "0", "{shape}: processes left: {line}");
    }
}

/// The child side of the depth test: prints how `try_build` and `build` answer a depth whose
/// stacks need 32 GiB, and whether an ordinary engine evaluates (run with the address space
/// limited to 4 GiB).
#[test]
fn depth_child() {
    if std::env::var("BT_DEPTH_CHILD").is_err() {
        return;
    }
    let refused = match Engine::builder().max_depth(1_000_000_000).try_build() {
        Ok(_) => "accepted".to_string(),
        Err(e) => format!("{}: {}", e.kind, e.message),
    };
    let panicked = std::panic::catch_unwind(|| {
        Engine::builder().max_depth(1_000_000_000).build();
    })
    .is_err();
    let ok = Engine::builder()
        .max_depth(20_000)
        .build()
        .eval("3 + 4")
        .map(|v| v.as_i64());
    println!("\nDEPTH {panicked} {:?} {refused}", ok.ok().flatten());
}

#[test]
fn a_max_depth_whose_stack_cannot_be_mapped_is_refused_by_the_builder() {
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 4194304 && exec \"$0\" \"$@\""])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "limits::depth_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BT_DEPTH_CHILD", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("DEPTH "))
        .unwrap_or_else(|| panic!("no report: {text}{}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        line.starts_with("true Some(7) invalid_max_depth: max_depth 1000000000 needs"),
        "{line}"
    );
    assert!(line.contains("cannot be mapped"), "{line}");
}

/// A stop at the memory limit ends the timers the scripts made as well as their processes:
/// a timer made before the stop does not start processes again once the next evaluation
/// lifts the stop.
#[test]
fn a_memory_stop_cancels_the_timers_the_scripts_made() {
    let e = Engine::builder()
        .max_memory(LIMIT)
        .grant(Capability::Timers)
        .build();
    e.eval("Actor subclass: Bunny\n  go => (Bunny spawn) go!. (Bunny spawn) go!")
        .unwrap();
    let both = "t := Timer every: 3600000 do: [nil]. u := Timer after: 3600000 do: [nil]. \
                (t isActive and: [u isActive]) ifTrue: [1] ifFalse: [0]";
    assert_eq!(int(&e, both), 1);
    // The bomb grows until the engine stops at its limit, which also ends the waiting main
    // program with `memory_limit`.
    let er = err(&e, "(Bunny spawn) go!. Timer sleep: 3600000");
    assert_eq!(er.limit, Some(Limit::Memory), "{er}");
    assert_eq!(
        int(&e, "(t isActive or: [u isActive]) ifTrue: [1] ifFalse: [0]"),
        0,
        "a timer of the stopped scripts is still active"
    );
}

#[test]
fn growing_an_actors_collections_one_message_at_a_time_costs_each_message_the_same() {
    // The message's rollback copy of the actor's state refers to the collections and the
    // String, yet each append runs in place (an undo record is kept instead of a copy). A
    // copy of n elements costs n/4 reductions (of n bytes, n/64), so past 4,000 elements
    // (64,000 bytes) a message that copied would overrun this budget with `reduction_limit`.
    let e = Engine::builder().actor_max_reductions(1_000).build();
    e.eval(
        "Actor subclass: Grow\n  state: xs = #[]\n  state: d = #{}\n  state: text = \"\"\n  push: i =>\n    self.xs := self.xs add: i\n    self.d := self.d at: i put: i\n    self.text := self.text ++ \"abcdefghij\"\n    self.xs size + self.d size\n  textSize => self.text size\n",
    )
    .unwrap();
    assert_eq!(
        int(
            &e,
            "g := Grow spawn. 1 to: 10000 do: [:i | g push: i]. g push: 0"
        ),
        20002
    );
}
