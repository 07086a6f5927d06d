//! Top-level bindings kept in stack slots while an input runs (`Lowerer::toplevel`,
//! `loader::run_statements`): a binding that no block of the input captures and that no live
//! closure of an earlier input holds is loaded from the session before the input and stored
//! back after it. These tests pin down that this is invisible: bindings persist, closures
//! (also ones running in actors) see the same variable, and an input that raises or is
//! stopped by a limit leaves the bindings as they were.

use std::time::Duration;

use bt::{Engine, Limit};

fn int(e: &Engine, src: &str) -> i64 {
    match e.eval(src) {
        Ok(v) => v
            .as_i64()
            .unwrap_or_else(|| panic!("{src}: not an Integer: {v:?}")),
        Err(er) => panic!("{src}: {er}"),
    }
}

#[test]
fn bindings_written_in_a_host_call_loop_persist() {
    let e = Engine::builder().check(false).build();
    e.register_fn("Host", "inc:", |n: i64| n + 1).unwrap();
    assert_eq!(
        int(&e, "s := 0. 1 to: 1000 do: [:i | s := Host inc: s]. s"),
        1000
    );
    assert_eq!(int(&e, "s"), 1000);
    assert_eq!(int(&e, "1 to: 10 do: [:i | s := s + i]. s"), 1055);
    assert_eq!(int(&e, "s"), 1055);
    assert!(e.binding_names().contains(&"s".to_string()));
}

#[test]
fn a_closure_of_an_earlier_input_shares_the_binding() {
    let e = Engine::builder().check(false).build();
    e.eval("n := 1. get := [n]. bump := [n := n + 10]").unwrap();
    // `n` is held by the two closures: later inputs read and write the same variable.
    e.eval("n := 2").unwrap();
    assert_eq!(int(&e, "get value"), 2);
    assert_eq!(int(&e, "bump value. n"), 12);
    assert_eq!(
        int(&e, "1 to: 3 do: [:i | n := n + 1]. bump value. get value"),
        25
    );
    // Once the closures are gone the binding keeps its value.
    e.eval("get := nil. bump := nil").unwrap();
    assert_eq!(int(&e, "n := n + 1. n"), 26);
    assert_eq!(int(&e, "n"), 26);
}

#[test]
fn a_block_of_the_same_input_shares_the_binding() {
    let e = Engine::builder().check(false).build();
    assert_eq!(
        int(&e, "m := 0. 1 to: 4 do: [:i | [m := m + i] value]. m"),
        10
    );
    assert_eq!(int(&e, "m"), 10);
    assert_eq!(int(&e, "k := 5. b := [k * 2]. k := 6. b value"), 12);
    assert_eq!(int(&e, "k := 7. b value"), 14);
}

#[test]
fn actors_running_blocks_that_capture_bindings() {
    let e = Engine::builder().check(false).build();
    e.eval("Actor subclass: Runner\n  run: blk => blk value\n")
        .unwrap();
    e.eval("r := Runner spawn").unwrap();
    assert_eq!(int(&e, "k := 3. r run: [k * 2]"), 6);
    assert_eq!(int(&e, "k := 4. r run: [k * 2]"), 8);
    // A block kept by the session, sent later: it sees the binding as of the send.
    e.eval("blk := [k + 100]").unwrap();
    e.eval("k := 5").unwrap();
    assert_eq!(int(&e, "r run: blk"), 105);
    assert_eq!(int(&e, "k"), 5);
}

#[test]
fn an_input_that_raises_leaves_the_bindings_as_they_were() {
    let e = Engine::builder().check(false).build();
    e.eval("count := 10").unwrap();
    let er = e.eval("count := 99. fresh := 1. 1 / 0").unwrap_err();
    assert_eq!(er.kind, "type_error");
    assert_eq!(int(&e, "count"), 10);
    assert!(!e.binding_names().contains(&"fresh".to_string()));
    // A binding first assigned in a branch that did not run exists, as nil.
    assert!(e.eval("false ifTrue: [z := 1]. z").unwrap().is_nil());
    assert!(e.binding_names().contains(&"z".to_string()));
    assert!(e.eval("z").unwrap().is_nil());
}

#[test]
fn an_input_stopped_by_a_limit_leaves_the_bindings_as_they_were() {
    let e = Engine::builder()
        .check(false)
        .max_reductions(100_000)
        .build();
    e.eval("kept := 1").unwrap();
    let er = e
        .eval("kept := 2. [true] whileTrue: [kept := kept + 1]")
        .unwrap_err();
    assert_eq!(er.limit, Some(Limit::Reductions), "{er}");
    assert_eq!(int(&e, "kept"), 1);
    let e = Engine::builder()
        .check(false)
        .timeout(Duration::from_millis(50))
        .build();
    e.eval("kept := 1").unwrap();
    let er = e.eval("kept := 2. Timer sleep: 100000000. 3").unwrap_err();
    assert_eq!(er.limit, Some(Limit::Deadline), "{er}");
    assert_eq!(int(&e, "kept"), 1);
    assert_eq!(e.eval("kept + 1").unwrap().as_i64(), Some(2));
}
