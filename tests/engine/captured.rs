//! Captured variables met by a process other than the one that made them, through the
//! embedding API: a cell is owned by its process and used without a
//! lock there; any other process that reaches it must see its value and keep its writes
//! (the cell is taken over, never answered as `nil`). The in-language paths are in
//! `tests/golden/eval/actors/captured.btscript`.
//!
//! Each test here fails on an implementation whose cells read `nil` (and drop writes) when
//! another process meets them.

use std::sync::Arc;

use bt::{Engine, Value};

const COUNTER: &str = r#"
Object subclass: Counter
  class make =>
    n := 0
    [n := n + 1]
  class make: k =>
    n := k
    [:d | n := n + d]
  class holder =>
    n := 100
    Array with: [n] with: [:v | n := v]
"#;

fn engine() -> Engine {
    let e = Engine::new();
    e.eval(COUNTER).expect("classes");
    e
}

fn int(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("not an Integer: {v:?}"))
}

/// A block made by one engine's process, moved by the host into another engine and run
/// there, then run again by the first: one variable throughout.
#[test]
fn a_block_moved_to_another_engine_keeps_its_variable() {
    let a = engine();
    let b = engine();
    let counter = a.eval("Counter make").expect("block");
    let run_a = a.compile_fn(&["c"], "c value").expect("fn");
    let run_b = b.compile_fn(&["c"], "c value").expect("fn");
    assert_eq!(
        int(&a.run(&run_a, std::slice::from_ref(&counter)).expect("a")),
        1
    );
    assert_eq!(
        int(&b.run(&run_b, std::slice::from_ref(&counter)).expect("b")),
        2
    );
    assert_eq!(
        int(&b.run(&run_b, std::slice::from_ref(&counter)).expect("b")),
        3
    );
    assert_eq!(int(&a.run(&run_a, &[counter]).expect("a")), 4);
}

/// A write made by the other engine is the value the first engine reads.
#[test]
fn a_write_from_another_engine_is_kept() {
    let a = engine();
    let b = engine();
    let pair = a.eval("Counter holder").expect("pair");
    let set = b
        .compile_fn(&["p", "v"], "(p at: 2) value: v. (p at: 1) value")
        .expect("fn");
    let get = a.compile_fn(&["p"], "(p at: 1) value").expect("fn");
    assert_eq!(
        int(&b.run(&set, &[pair.clone(), Value::Int(7)]).expect("set")),
        7
    );
    assert_eq!(int(&a.run(&get, &[pair]).expect("get")), 7);
}

/// Host threads run one block in two engines at the same time: every call reads an
/// Integer (a lost value would make `nil + d` fail), and with one adder per thread that
/// writes only its own variable the totals are exact.
#[test]
fn blocks_of_one_engine_run_concurrently_in_two_others() {
    let maker = engine();
    let shared = maker.eval("Counter make: 0").expect("block");
    let mine: Vec<Value> = (0..2)
        .map(|_| maker.eval("Counter make: 0").expect("block"))
        .collect();
    let threads: Vec<_> = mine
        .into_iter()
        .map(|own| {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let e = engine();
                let f = e
                    .compile_fn(&["s", "o"], "s value: 1. o value: 1")
                    .expect("fn");
                let mut last = 0;
                for _ in 0..300 {
                    last = int(&e.run(&f, &[shared.clone(), own.clone()]).expect("call"));
                }
                (last, own)
            })
        })
        .collect();
    for t in threads {
        let (last, own) = t.join().expect("thread");
        assert_eq!(last, 300);
        let read = maker.compile_fn(&["o"], "o value: 0").expect("fn");
        assert_eq!(int(&maker.run(&read, &[own]).expect("read")), 300);
    }
    // The shared adder saw 600 additions, some of which may overlap (`n := n + d` reads and
    // writes in two steps): what it holds is an Integer no larger than 600.
    let read = maker.compile_fn(&["s"], "s value: 0").expect("fn");
    let total = int(&maker.run(&read, &[shared]).expect("read"));
    assert!((1..=600).contains(&total), "{total}");
}

/// The engine's main process is replaced after a cancel: blocks made by the old one still
/// hold their variables for the new one.
#[test]
fn a_block_outlives_the_process_that_made_it() {
    let e = Arc::new(engine());
    let h = e.cancel_handle();
    e.register_fn("Host", "cancel", move || {
        h.cancel();
        0i64
    })
    .expect("fn");
    let counter = e.eval("Counter make").expect("block");
    let run = e.compile_fn(&["c"], "c value").expect("fn");
    assert_eq!(
        int(&e.run(&run, std::slice::from_ref(&counter)).expect("run")),
        1
    );
    let killed = e
        .compile_fn(&[], "Host cancel. [true] whileTrue: []")
        .expect("fn");
    assert!(e.run(&killed, &[]).is_err());
    assert_eq!(
        int(&e.run(&run, std::slice::from_ref(&counter)).expect("run")),
        2
    );
    assert_eq!(int(&e.run(&run, &[counter]).expect("run")), 3);
}
