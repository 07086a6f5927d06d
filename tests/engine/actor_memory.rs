//! Per-actor memory limits (`EngineBuilder::actor_max_memory`): an actor that
//! outgrows its limit crashes with `#memory_limit` into its supervisor — against catch-all
//! handlers, `ensure:` blocks, spawned actors, one huge primitive, memory bombs and state that
//! grows message by message — while the host, the calling script and other actors go on.
//!
//! The bombs run in a child process (this test binary re-run with `BT_ACTOR_MEM` set, see
//! [`actor_memory_child`]) with [`bt::CountingAlloc`] (tests/engine/main.rs); the child reports its own peak
//! RSS (`VmHWM`) over its baseline, which must stay under the *actor's* limit plus a constant:
//! the engine's own limit is set four times higher, so a bomb that escaped the actor's limit
//! would show there. Nothing here asserts a time.

use crate::child;
use crate::common;
use child::{run_child, status_bytes};
use common::{err, int};

use bt::Engine;

/// The child-side test's full name in this binary (tests/engine/main.rs).
const CHILD: &str = "actor_memory::actor_memory_child";

/// Each actor's limit in the child.
const ACTOR_LIMIT: usize = 24 << 20;
/// The engine's limit in the child (over all actors together).
const ENGINE_LIMIT: usize = 4 * ACTOR_LIMIT;
/// What the host may grow beyond the actor's limit: allocator slack, one check interval of
/// growth, thread stacks touched by the run.
const SLACK: usize = 40 << 20;

const SETUP: &str = r#"
Actor subclass: Bomb
  class supervisionPolicy => #permanent
  state: kept = nil
  ping => #pong
  asList => (1 to: 10 ** 9) asList size
  doubling => s := "x". [true] whileTrue: [s := s ++ s]
  deep => l := nil. 1 to: 100000000 do: [:i | l := #[l, i]]. l size
  catchAll => [(1 to: 10 ** 9) asList] on: Error do: [:e | (1 to: 10 ** 9) asList]
  ensure => [(1 to: 10 ** 9) asList] ensure: [s := "x". [true] whileTrue: [s := s ++ s]]
  catchEverything => [[true] whileTrue: [(1 to: 10 ** 9) asList]] on: Exception do: [:e | e retry]
  huge => ("x" repeat: 10 ** 10) size
  hugeArray => (Array new: 100000000 withAll: "x") size
  keep: n => self.kept := (self.kept ifNil: [#()]) add: ("x" repeat: n). self.kept size
  child => (Bomb spawn) doubling
  children => 1 to: 100 do: [:i | (Bomb spawn) keep: 8000000]
  hoard: s => self.kept := (self.kept ifNil: [#()]) add: s. self.kept size
  capture: n => s := "x" repeat: n. self.kept := (self.kept ifNil: [#()]) add: [s size]. self.kept size
  keys: n => d := self.kept ifNil: [#{}]. self.kept := d at: d size printString ++ ("x" repeat: n) put: 1. self.kept size
  repliesIn: m => l := #(). 1 to: 100 do: [:i | l := l add: (m make: 3000000)]. l size
  keepReply: m => self.kept := (self.kept ifNil: [#()]) add: (m make: 3000000). self.kept size

Actor subclass: Maker
  make: n => "x" repeat: n

Actor subclass: Other
  state: n = 0
  bump => self.n := self.n + 1
  n => self.n

Supervisor subclass: Sup
  class children => #(Bomb)
  class strategy => #oneForOne
"#;

/// The script of each scenario (run with `b` the supervised Bomb, `other` an Other).
fn scenario(name: &str) -> &'static str {
    match name {
        "as_list" => "b asList",
        "doubling" => "b doubling",
        "deep" => "b deep",
        "catch_all" => "b catchAll",
        "ensure" => "b ensure",
        "catch_everything" => "b catchEverything",
        "huge_primitive" => "b huge",
        "huge_array" => "b hugeArray",
        "state_growth" => "1 to: 100 do: [:i | b keep: 3000000]",
        "spawned_child" => "b child",
        "many_children" => "b children",
        "hoard" => "1 to: 100 do: [:i | b hoard: (\"x\" repeat: 3000000)]",
        "capture" => "1 to: 100 do: [:i | b capture: 3000000]",
        "keys" => "1 to: 100 do: [:i | b keys: 3000000]",
        "replies_in_a_message" => "b repliesIn: maker",
        "replies_kept" => "1 to: 100 do: [:i | b keepReply: maker]",
        _ => "nil",
    }
}

/// The child side: runs `BT_ACTOR_MEM` and prints `RESULT <kind> <peak growth> <limit>
/// <after>`, where `after` says whether `b` is alive, what the (restarted) Bomb answers to
/// `ping` and the other actor's count. Without the variable it has nothing to do.
#[test]
fn actor_memory_child() {
    let Ok(name) = std::env::var("BT_ACTOR_MEM") else {
        return;
    };
    let e = Engine::builder()
        .actor_max_memory(ACTOR_LIMIT)
        .max_memory(ENGINE_LIMIT)
        .try_build()
        .unwrap();
    e.eval(SETUP).unwrap();
    e.eval("sup := Sup supervise unwrap. b := (sup which: Bomb) unwrap. other := Other spawn. other bump. maker := Maker spawn. b ping")
        .unwrap();
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
    // The script goes on: b crashed (or not), the supervisor restarts it, other is intact.
    let after = e
        .eval(
            "alive := b isAlive. [b isAlive not and: [((sup which: Bomb) unwrap ifNil: [b]) =:= b]] whileTrue: [Timer sleep: 1]. alive printString ++ \"/\" ++ ((sup which: Bomb) unwrap ping) printString ++ \"/\" ++ other n printString",
        )
        .map(|v| v.as_text().map(str::to_string));
    println!(
        "RESULT {kind} {} {:?} {}",
        peak.saturating_sub(base),
        limit,
        match after {
            Ok(Some(s)) => s,
            Ok(None) => "not-a-string".to_string(),
            Err(er) => format!("error:{}", er.kind),
        }
    );
}

/// The scenario's actor crashed with `memory_limit` (the caller got that kind, not an
/// engine limit), the host stayed under the actor's limit plus a constant, the supervisor
/// restarted it and the other actor kept its state.
fn assert_actor_contained(name: &str, after: &str) {
    let r = run_child(CHILD, "BT_ACTOR_MEM", name);
    let (kind, peak, limit, got_after) = (r.kind, r.peak, r.limit, r.after);
    assert_eq!(kind, "memory_limit", "{name}: {}", r.detail);
    assert_eq!(
        limit, "None",
        "{name}: the evaluation itself is not over any limit"
    );
    assert!(
        peak < ACTOR_LIMIT + SLACK,
        "{name}: host peak RSS grew {} MiB (actor limit {} MiB + {} MiB)",
        peak >> 20,
        ACTOR_LIMIT >> 20,
        SLACK >> 20
    );
    assert_eq!(got_after, after, "{name}");
}

const CRASHED: &str = "false/#pong/1";

#[test]
fn memory_bombs_in_an_actor_crash_it_into_its_supervisor() {
    assert_actor_contained("as_list", CRASHED);
    assert_actor_contained("doubling", CRASHED);
    assert_actor_contained("deep", CRASHED);
}

#[test]
fn catch_all_handlers_and_ensure_blocks_in_an_actor_do_not_escape_its_limit() {
    assert_actor_contained("catch_all", CRASHED);
    assert_actor_contained("ensure", CRASHED);
    assert_actor_contained("catch_everything", CRASHED);
}

#[test]
fn one_huge_primitive_in_an_actor_is_refused_before_it_allocates() {
    assert_actor_contained("huge_primitive", CRASHED);
    assert_actor_contained("huge_array", CRASHED);
}

#[test]
fn state_growing_message_by_message_meets_the_actor_limit() {
    assert_actor_contained("state_growth", CRASHED);
}

#[test]
fn an_actor_hoarding_what_it_is_sent_meets_its_limit() {
    // The Strings are allocated by the calling script (the engine's account); the actor
    // only keeps them. They count for it from delivery on.
    assert_actor_contained("hoard", CRASHED);
}

#[test]
fn block_captures_and_string_keys_count_in_the_state() {
    // Each message keeps a block capturing a fresh 3 MB String, or a 3 MB String key: the
    // re-base after a message measures both.
    assert_actor_contained("capture", CRASHED);
    assert_actor_contained("keys", CRASHED);
}

#[test]
fn replies_to_an_actors_own_calls_count_for_it_when_received() {
    // The Strings are allocated by another actor (`Maker`) and answered to the Bomb's sync
    // calls: kept in a local during one message, or in the state across messages.
    assert_actor_contained("replies_in_a_message", CRASHED);
    assert_actor_contained("replies_kept", CRASHED);
}

#[test]
fn an_actor_cannot_continue_in_an_actor_it_spawns() {
    // The child has its own account and crashes; its parent gets the error (and lives).
    assert_actor_contained("spawned_child", "true/#pong/1");
}

#[test]
fn the_engine_limit_holds_over_all_actors_together() {
    // 100 children keeping 8 MB each: every one is under its own limit, together they
    // pass the engine's. The failing child crashes; the engine's account stays over while
    // the others live, so no "after" is asserted.
    let r = run_child(CHILD, "BT_ACTOR_MEM", "many_children");
    let (kind, peak) = (r.kind, r.peak);
    assert_eq!(kind, "memory_limit", "{}", r.detail);
    assert!(
        peak < ENGINE_LIMIT + SLACK,
        "host peak RSS grew {} MiB (engine limit {} MiB + {} MiB)",
        peak >> 20,
        ENGINE_LIMIT >> 20,
        SLACK >> 20
    );
}

#[test]
fn values_an_actor_gives_away_do_not_count_against_it() {
    // Each answer is a fresh 1 MB String the caller frees: 200 MB given away in all, the
    // actor never holds more than one.
    let e = Engine::builder()
        .actor_max_memory(8 << 20)
        .try_build()
        .unwrap();
    e.eval(
        "Actor subclass: Maker\n  state: n = 0\n  make => self.n := self.n + 1. \"x\" repeat: 1000000\n  n => self.n\n\nActor subclass: Eater\n  state: last = nil\n  eat: s => self.last := s. nil\n  forget => self.last := nil\n  hog => l := #(). [true] whileTrue: [l := l add: (\"y\" repeat: 100000)]\n",
    )
    .unwrap();
    assert_eq!(
        int(&e, "m := Maker spawn. 1 to: 200 do: [:i | m make]. m n"),
        200
    );
    // An actor freeing what others allocated gains no room from it: it still cannot keep
    // more than its limit of its own.
    assert_eq!(
        int(
            &e,
            "ea := Eater spawn. 1 to: 100 do: [:i | ea eat: (m make). ea forget]. m n"
        ),
        300
    );
    let er = err(&e, "ea hog");
    assert_eq!(er.kind, "memory_limit", "{er}");
    // The host and the other actor go on.
    assert_eq!(int(&e, "m make size"), 1_000_000);
}
