//! Engines share what the process builds once (the primitive tables, the parsed standard
//! library) and run scripts on the calling thread when they can: these tests check that
//! neither leaks one engine's changes into another, and that actors, timers and blocking
//! calls still work when the host thread runs the main program itself.

use std::sync::Arc;

use crate::common;
use common::{err, int};

use bt::engine::Capability;
use bt::Engine;

#[test]
fn redefining_a_library_class_in_one_engine_leaves_the_others_alone() {
    let a = Engine::new();
    let b = Engine::new();
    // A new method, an overridden primitive and an overridden library (bt) method.
    a.eval("Integer >> twice => self * 2").unwrap();
    a.eval("String >> size => 42").unwrap();
    a.eval("Interval >> notEmpty => #overridden").unwrap();
    assert_eq!(int(&a, "21 twice"), 42);
    assert_eq!(int(&a, "\"abc\" size"), 42);
    assert_eq!(
        a.eval("(1 to: 3) notEmpty").unwrap().as_text(),
        Some("overridden")
    );
    // The other engine, one made before and one made after, see the library as shipped.
    let c = Engine::new();
    for e in [&b, &c] {
        assert_eq!(err(e, "21 twice").kind, "does_not_understand");
        assert_eq!(int(e, "\"abc\" size"), 3);
        assert_eq!(e.eval("(1 to: 3) notEmpty").unwrap().as_bool(), Some(true));
    }
}

#[test]
fn arithmetic_overridden_in_one_engine_stays_fast_and_exact_in_another() {
    let a = Engine::new();
    let b = Engine::new();
    a.eval("Integer >> + other => 0").unwrap();
    assert_eq!(int(&a, "1 + 1"), 0);
    assert_eq!(int(&b, "1 + 1"), 2);
    assert_eq!(
        int(&b, "s := 0. 1 to: 1000 do: [:i | s := s + i]. s"),
        500_500
    );
}

#[test]
fn classes_and_bindings_belong_to_their_engine() {
    let a = Engine::new();
    let b = Engine::new();
    a.eval("Object subclass: Only\n  class answer => 42")
        .unwrap();
    a.eval("x := 1").unwrap();
    assert_eq!(int(&a, "Only answer + x"), 43);
    assert!(b.eval("Only answer").is_err());
    assert!(b.eval("x").is_err());
}

#[test]
fn actors_spawned_by_a_script_keep_running_after_the_evaluation_returns() {
    // The evaluation runs on the host thread; its actors run on the engine's workers.
    let e = Engine::new();
    e.eval(
        "Actor subclass: Counter\n  state: n = 0\n  bump => self.n := self.n + 1\n  count => self.n",
    )
    .unwrap();
    e.eval("c := Counter spawn").unwrap();
    e.eval("1 to: 100 do: [:i | c bump!]").unwrap();
    // A synchronous call waits for the casts queued before it.
    assert_eq!(int(&e, "c count"), 100);
    // Actors spawned and called from inside one evaluation, many at once.
    assert_eq!(
        int(
            &e,
            "cs := (1 to: 20) collect: [:i | Counter spawn].\n\
             cs do: [:k | k bump. k bump].\n\
             cs inject: 0 into: [:s :k | s + k count]"
        ),
        40
    );
}

#[test]
fn timers_fire_after_the_evaluation_that_set_them_returned() {
    let e = Engine::builder().grant(Capability::Timers).build();
    e.eval("Actor subclass: Holder\n  state: v = 0\n  put: x => self.v := x\n  v => self.v")
        .unwrap();
    e.eval("b := Holder spawn. Timer after: 1 do: [b put: 7]")
        .unwrap();
    // Waiting in the script (the host thread sleeps as the main process) until it fired.
    assert_eq!(int(&e, "[b v == 0] whileTrue: [Timer sleep: 1]. b v"), 7);
}

#[test]
fn evaluations_alternate_between_host_threads() {
    let e = Arc::new(Engine::new());
    e.eval("n := 0").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let e = e.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    e.eval("n := n + 1").unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(int(&e, "n"), 200);
}

#[test]
fn compiled_scripts_run_on_the_calling_thread_with_deep_recursion() {
    // The host thread runs the script on a coroutine stack sized for the depth limit, so
    // deep recursion neither overflows the host's (smaller) stack nor escapes max_depth.
    let e = Engine::builder().max_depth(5000).build();
    e.eval(
        "Object subclass: D\n  class down: n => n == 0 ifTrue: [0] ifFalse: [1 + (D down: n - 1)]",
    )
    .unwrap();
    let s = e.compile_fn(&["n"], "D down: n").unwrap();
    let v = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let ok = e.run(&s, &[bt::Value::Int(4000)]).unwrap().as_i64();
            let over = e
                .run(&s, &[bt::Value::Int(100_000)])
                .unwrap_err()
                .kind
                .clone();
            (ok, over)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(v, (Some(4000), "stack_overflow".to_string()));
}
