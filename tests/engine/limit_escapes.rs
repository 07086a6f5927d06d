//! A limit survives whatever the blocks run during its unwind do: an `ensure:` or
//! `ifCurtailed:` block that raises, returns non-locally or hits a limit of its own does not
//! replace it, an `on:do:` handler around it never sees it, and after a reduction limit or a
//! deadline no statement of the evaluation (or of the actor's message) runs again. Each test
//! counts the statements that ran after the limit through a host function.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{err, int};

use bt::engine::Capability;
use bt::{Engine, EngineBuilder, Limit};

/// An engine from `b` with `Host ran` counting its calls (statements that ran after a limit).
fn counted(b: EngineBuilder) -> (Engine, Arc<AtomicUsize>) {
    let e = b.build();
    let n = Arc::new(AtomicUsize::new(0));
    let c = n.clone();
    e.register_fn("Host", "ran", move || {
        c.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    e.eval(CLASSES).unwrap();
    (e, n)
}

const CLASSES: &str = r#"
Object subclass: Escape
  class returning: aBlock => aBlock ensure: [^ 5]. 6
  class curtailedReturning: aBlock => aBlock ifCurtailed: [^ 5]. 6

Actor subclass: Worker
  run: src => (src == #spin)
      ifTrue: [[[[true] whileTrue: [1]] ensure: [nil foo]] on: Error do: [:e | Host ran. 0]]
      ifFalse: [[[s := "x". [true] whileTrue: [s := s ++ s]] ensure: [nil foo]] on: Error do: [:e | Host ran. 0]].
    Host ran.
    1
  ping => #pong
"#;

/// Ways a block run during a limit's unwind could replace the limit, each followed by
/// statements that must not run. `BODY` is the statement that hits the limit.
const ESCAPES: [&str; 7] = [
    "[[BODY] ensure: [nil foo]] on: Error do: [:e | Host ran. e kind]. Host ran. 1 to: 1000000 do: [:i | i]. Host ran",
    "[[BODY] ifCurtailed: [nil foo]] on: Error do: [:e | Host ran. e kind]. Host ran",
    "[[BODY] ensure: [Error signal: \"again\"]] on: Exception do: [:e | Host ran. e retry]. Host ran",
    "[[BODY] ensure: [nil foo]] on: nil do: [:e | Host ran. 0]. Host ran",
    "x := Escape returning: [BODY]. Host ran. x",
    "x := Escape curtailedReturning: [BODY]. Host ran. x",
    "[[[BODY] ensure: [[true] whileTrue: [nil foo]]] ensure: [nil bar]] on: Error do: [:e | Host ran]. Host ran",
];

fn assert_no_escape(b: impl Fn() -> EngineBuilder, body: &str, limit: Limit) {
    for escape in ESCAPES {
        let (e, ran) = counted(b());
        let src = escape.replace("BODY", body);
        let er = err(&e, &src);
        assert_eq!(er.limit, Some(limit), "{src}: {er}");
        assert_eq!(er.kind, limit.kind(), "{src}");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            0,
            "{src}: statements ran after the limit"
        );
        // The engine answers the next evaluation.
        assert_eq!(int(&e, "3 + 4"), 7, "{src}");
    }
}

#[test]
fn a_memory_limit_refused_up_front_survives_ensure_blocks_and_handlers() {
    // One huge primitive, refused before it allocates.
    assert_no_escape(
        || Engine::builder().max_memory(256 << 20),
        "(\"x\" repeat: 10 ** 9) size",
        Limit::Memory,
    );
}

#[test]
fn a_memory_limit_reached_by_growth_survives_ensure_blocks_and_handlers() {
    assert_no_escape(
        || Engine::builder().max_memory(32 << 20),
        "s := \"x\". [true] whileTrue: [s := s ++ s]",
        Limit::Memory,
    );
}

#[test]
fn a_reduction_limit_survives_ensure_blocks_and_handlers() {
    assert_no_escape(
        || Engine::builder().max_reductions(100_000),
        "[true] whileTrue: [1]",
        Limit::Reductions,
    );
}

#[test]
fn a_deadline_survives_ensure_blocks_and_handlers() {
    assert_no_escape(
        || Engine::builder().timeout(Duration::from_millis(50)),
        "[true] whileTrue: [1]",
        Limit::Deadline,
    );
}

#[test]
fn a_deadline_while_blocked_survives_a_blocking_ensure_block() {
    let (e, ran) = counted(
        Engine::builder()
            .timeout(Duration::from_millis(50))
            .grant(Capability::Timers),
    );
    let src = "[[Timer sleep: 600000] ensure: [Timer sleep: 600000. nil foo]] on: Error do: [:x | Host ran]. Host ran";
    let er = err(&e, src);
    assert_eq!(er.limit, Some(Limit::Deadline), "{er}");
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(int(&e, "3 + 4"), 7);
}

#[test]
fn the_limit_is_not_catchable_and_the_handler_never_sees_it() {
    let (e, ran) = counted(Engine::builder().max_reductions(100_000));
    for src in [
        "[[true] whileTrue: [1]] on: Error do: [:x | Host ran]. Host ran",
        "[[true] whileTrue: [1]] on: Exception do: [:x | Host ran]. Host ran",
        "[[true] whileTrue: [1]] on: nil do: [:x | Host ran]. Host ran",
    ] {
        let er = err(&e, src);
        assert_eq!(er.limit, Some(Limit::Reductions), "{src}: {er}");
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn ensure_blocks_in_an_actor_do_not_swallow_its_limit() {
    for (b, what, kind) in [
        (
            Engine::builder().actor_max_reductions(100_000),
            "#spin",
            "reduction_limit",
        ),
        (
            Engine::builder().max_memory(32 << 20),
            "#grow",
            "memory_limit",
        ),
    ] {
        let (e, ran) = counted(b);
        e.eval("w := Worker spawn").unwrap();
        let er = err(&e, &format!("w run: {what}"));
        assert_eq!(er.kind, kind, "{what}: {er}");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            0,
            "{what}: statements ran after the limit"
        );
        // The actor crashed with the limit as its reason; the engine goes on.
        assert_eq!(
            e.eval("w isAlive").unwrap().as_bool(),
            Some(false),
            "{what}"
        );
        assert_eq!(int(&e, "3 + 4"), 7);
    }
}

#[test]
fn ensure_blocks_still_run_during_a_limit_under_a_small_allowance() {
    // The cleanup runs (once per block), but an endless one is cut off after at most
    // `CLEANUP_ALLOWANCE` (1,000) reductions for all the blocks of the unwind together.
    let (e, ran) = counted(Engine::builder().max_reductions(100_000));
    let er = err(&e, "[[true] whileTrue: [1]] ensure: [Host ran]");
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert_eq!(ran.swap(0, Ordering::SeqCst), 1);
    let er = err(
        &e,
        "[[[true] whileTrue: [1]] ensure: [[true] whileTrue: [Host ran]]] ensure: [[true] whileTrue: [Host ran]]",
    );
    assert_eq!(er.limit, Some(Limit::Reductions));
    let n = ran.swap(0, Ordering::SeqCst);
    assert!((1..=1001).contains(&n), "{n} statements in the cleanup");
}
