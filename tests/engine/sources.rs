//! The engine's table of loaded sources stays bounded: every `eval` used to keep its source
//! for the engine's life (memory grew with the number of evaluations). A source is kept
//! while code made from it can still run (declarations, blocks held by bindings or by the
//! host), so errors raised by that code still point into it.

use bt::{Engine, Value};

#[test]
fn many_evals_keep_the_source_table_bounded() {
    let e = Engine::builder().check(false).build();
    let base = e.loaded_sources();
    for i in 0..2000 {
        let v = e.eval(&format!("x := {i} + 1. x * 2")).unwrap();
        assert_eq!(v.as_i64(), Some((i + 1) * 2));
    }
    // Statements with blocks that do not outlive the evaluation are released too.
    for _ in 0..500 {
        e.eval("#(1, 2, 3) inject: 0 into: [:a :b | a + b]")
            .unwrap();
        e.eval("y := 0. #(1, 2) do: [:k | y := y + k]. y").unwrap();
    }
    let n = e.loaded_sources();
    assert!(n <= base + 4, "{base} sources before, {n} after 3000 evals");
}

#[test]
fn checked_evals_and_failing_evals_stay_bounded() {
    let e = Engine::new();
    let base = e.loaded_sources();
    for i in 0..300 {
        e.eval(&format!("z := {i}")).unwrap();
        assert!(e.eval("z / 0").is_err());
    }
    let n = e.loaded_sources();
    assert!(n <= base + 4, "{base} sources before, {n} after 600 evals");
}

#[test]
fn errors_from_live_code_still_point_into_its_source() {
    let e = Engine::builder().check(false).build();
    e.eval_named("lib.bt", "Object subclass: Lib\n  class boom => 1 / 0\n")
        .unwrap();
    e.eval_named("blocks.bt", "b := [:n |\n  n / 0]").unwrap();
    let script = e.compile_fn(&["n"], "n + 1\nn / 0").unwrap();
    for i in 0..500 {
        e.eval(&format!("q := {i}")).unwrap();
    }
    let er = e.eval("Lib boom").unwrap_err();
    let loc = er.location.clone().expect("a location");
    assert_eq!((loc.0.as_str(), loc.1), ("lib.bt", 2), "{er}");
    assert!(er.to_string().contains("lib.bt:2"), "{er}");
    let er = e.eval("b value: 3").unwrap_err();
    let loc = er.location.clone().expect("a location");
    assert_eq!((loc.0.as_str(), loc.1), ("blocks.bt", 2), "{er}");
    let er = e.run(&script, &[Value::Int(1)]).unwrap_err();
    let loc = er.location.clone().expect("a location");
    assert_eq!((loc.0.as_str(), loc.1), ("script", 3), "{er}");
    // Once the block is gone, its source goes too (on a later evaluation).
    let held = e.loaded_sources();
    e.eval("b := nil").unwrap();
    drop(script);
    for _ in 0..10 {
        e.eval("q := 0").unwrap();
    }
    assert!(
        e.loaded_sources() < held,
        "{held} sources while the block lived, {} after",
        e.loaded_sources()
    );
    // The declaration's source stays: its code can still raise.
    let er = e.eval("Lib boom").unwrap_err();
    assert_eq!(er.location.clone().unwrap().0, "lib.bt");
}

#[test]
fn concurrent_jobs_on_one_interpreter_each_get_their_own_answer() {
    // Jobs borrow from their caller (`interp::main_job`): callers that do not hold the
    // guest get a job slot of their own.
    let vm = std::sync::Arc::new(bt::interp::interpreter::Interpreter::new(Default::default()));
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let vm = vm.clone();
            std::thread::spawn(move || {
                for i in 0..100i64 {
                    let n = t * 1000 + i;
                    let v = vm.eval("t", &format!("{n} * 2")).unwrap();
                    assert_eq!(v.as_i64(), Some(n * 2));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
