//! Script calls from the host (`Engine::run`) on both of the guest's paths
//! (docs/internals/embedding.md "Speed"): a call that finds the main process idle lends
//! it the job directly (`Behaviour::run_job`, the usual case), and the first call into a
//! fresh main process — after a limit or a cancel killed the last one — delivers the job as
//! a message that starts the guest's runner. Every case runs on both paths and must end the
//! same: results, errors and their kinds, limits, depth, host functions, re-entry, panics,
//! actors the call spawns.

use std::sync::Arc;

use bt::engine::Script;
use bt::{Engine, HostError, Value};

const CLASSES: &str = r#"
Actor subclass: Tally
  state: n = 0
  add: k => self.n := self.n + k
  total => self.n

Object subclass: Deep
  class down: n => n == 0 ifTrue: [0] ifFalse: [1 + (self down: n - 1)]
"#;

/// One call's outcome, comparable across paths.
fn outcome(e: &Engine, s: &Script, args: &[Value]) -> String {
    match e.run(s, args) {
        Ok(v) => format!("ok {}", e.display(&v)),
        Err(er) => format!("error {} {:?}", er.kind, er.limit),
    }
}

struct Fixture {
    e: Arc<Engine>,
    cases: Vec<(Script, Vec<Value>)>,
    /// A call the host cancels from inside (a host function): it kills the main process,
    /// so the next call goes to a fresh one (the delivered path).
    killed: Script,
}

fn fixture() -> Fixture {
    let e = Arc::new(
        Engine::builder()
            .max_reductions(1_000_000)
            .max_depth(300)
            .build(),
    );
    e.eval(CLASSES).unwrap();
    e.register_fn("Host", "inc:", |n: i64| n + 1).unwrap();
    e.register_fn("Host", "boom", || -> i64 { panic!("host bug") })
        .unwrap();
    let weak = Arc::downgrade(&e);
    e.register_fn("Host", "reenter", move || -> Result<i64, HostError> {
        let e = weak.upgrade().ok_or("gone")?;
        let f = e
            .compile("1")
            .map_err(|er| HostError::new("host_error", er.kind.clone()))?;
        match e.run(&f, &[]) {
            Ok(v) => Ok(v.as_i64().unwrap_or(0)),
            Err(er) => Err(HostError::new("host_error", er.kind.clone())),
        }
    })
    .unwrap();
    let h = e.cancel_handle();
    e.register_fn("Host", "cancel", move || {
        h.cancel();
        0i64
    })
    .unwrap();
    let fun = |params: &[&str], src: &str| e.compile_fn(params, src).unwrap();
    let cases = vec![
        (fun(&["x"], "x + 1"), vec![Value::Int(41)]),
        (
            fun(&["x", "y"], "x ++ y"),
            vec![Value::str("a"), Value::str("b")],
        ),
        (fun(&["x"], "x foo"), vec![Value::Int(1)]),
        (fun(&["x"], "1 / x"), vec![Value::Int(0)]),
        (
            fun(&["x"], "[1 / x] on: Error do: [:er | er kind]"),
            vec![Value::Int(0)],
        ),
        (fun(&[], "[true] whileTrue: []"), vec![]),
        (fun(&[], "[[true] whileTrue: []] ensure: [1]"), vec![]),
        (fun(&["x"], "Deep down: x"), vec![Value::Int(100)]),
        (fun(&["x"], "Deep down: x"), vec![Value::Int(100_000)]),
        (fun(&["x"], "Host inc: (Host inc: x)"), vec![Value::Int(1)]),
        (fun(&[], "Host boom"), vec![]),
        (
            fun(&[], "[Host boom] on: Error do: [:er | er kind]"),
            vec![],
        ),
        (fun(&[], "Host reenter"), vec![]),
        (
            fun(&["x"], "t := Tally spawn. t add: x. t add: x. t total"),
            vec![Value::Int(21)],
        ),
        (
            fun(&["x"], "(1 to: x) inject: 0 into: [:a :b | a + b]"),
            vec![Value::Int(100)],
        ),
        (fun(&["x"], "x"), vec![]),
    ];
    let killed = fun(&[], "Host cancel. [true] whileTrue: []");
    Fixture { e, cases, killed }
}

#[test]
fn lent_and_delivered_calls_end_the_same() {
    let f = fixture();
    let e = &f.e;
    // Claimed path: the runner is warm and the main process idle before each call.
    let claimed: Vec<String> = f.cases.iter().map(|(s, a)| outcome(e, s, a)).collect();
    let again: Vec<String> = f.cases.iter().map(|(s, a)| outcome(e, s, a)).collect();
    assert_eq!(claimed, again);
    // Delivered path: a cancelled call kills the main process before each case.
    let mut delivered = Vec::new();
    for (s, a) in &f.cases {
        assert_eq!(
            outcome(e, &f.killed, &[]),
            "error cancelled Some(Cancelled)"
        );
        delivered.push(outcome(e, s, a));
    }
    assert_eq!(claimed, delivered);
    // What the cases answer (so that "the same" is not "the same failure").
    let expect = [
        "ok 42",
        "ok ab",
        "error does_not_understand None",
        "error type_error None",
        "ok type_error",
        "error reduction_limit Some(Reductions)",
        "error reduction_limit Some(Reductions)",
        "ok 100",
        "error stack_overflow None",
        "ok 3",
        "error host_error None",
        "ok host_error",
        "error host_error None",
        "ok 42",
        "ok 5050",
        "error arity_mismatch None",
    ];
    assert_eq!(claimed, expect);
    // The host function calling back into its engine got `reentrant_call` on both paths.
    let reenter = &f.cases[12].0;
    for kill_first in [false, true] {
        if kill_first {
            assert_eq!(
                outcome(e, &f.killed, &[]),
                "error cancelled Some(Cancelled)"
            );
        }
        let er = e.run(reenter, &[]).unwrap_err();
        assert!(er.message.contains("reentrant_call"), "{er}");
    }
}

#[test]
fn calls_after_a_kill_run_on_a_fresh_main_process_and_keep_the_bindings() {
    let f = fixture();
    let e = &f.e;
    e.eval("kept := 1").unwrap();
    let read = e.compile_fn(&["x"], "kept + x").unwrap();
    for i in 0..4 {
        assert_eq!(
            outcome(e, &f.killed, &[]),
            "error cancelled Some(Cancelled)"
        );
        // Delivered, then claimed, then claimed.
        for _ in 0..3 {
            assert_eq!(
                e.run(&read, &[Value::Int(i)]).unwrap().as_i64(),
                Some(1 + i)
            );
        }
    }
    assert_eq!(e.eval("kept").unwrap().as_i64(), Some(1));
}

/// Calls that suspend mid-way (sync calls to an actor the call spawned, a timer sleep)
/// resume on the guest's runner and release the main process like a call that never
/// suspends: on the lent path, on the delivered path after a kill,
/// and the calls after them are lent again.
#[test]
fn calls_that_suspend_mid_way_resume_and_release_the_main_process() {
    let f = fixture();
    let e = &f.e;
    let s = e
        .compile_fn(
            &["x"],
            "t := Tally spawn. t add: x. Timer sleep: 1. t add: x. t total",
        )
        .unwrap();
    let plain = &f.cases[0];
    for kill_first in [false, true, false] {
        if kill_first {
            assert_eq!(
                outcome(e, &f.killed, &[]),
                "error cancelled Some(Cancelled)"
            );
        }
        for _ in 0..3 {
            assert_eq!(outcome(e, &s, &[Value::Int(4)]), "ok 8");
            assert_eq!(outcome(e, &plain.0, &plain.1), "ok 42");
        }
    }
}

/// A cancel from another thread while a call runs (spinning or blocked in a wait) ends it
/// with `cancelled`; its `ensure:` block runs first (uncatchable: the result is still the
/// limit), and the calls after it work — on the lent path and after a kill.
#[test]
fn a_cancel_from_another_thread_ends_a_running_call_after_its_ensure_block() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    let e = Arc::new(Engine::builder().build());
    e.eval(CLASSES).unwrap();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let started_tx = std::sync::Mutex::new(started_tx);
    e.register_fn("Host", "started", move || {
        let _ = started_tx.lock().unwrap().send(());
        0i64
    })
    .unwrap();
    let cleaned = Arc::new(AtomicUsize::new(0));
    let c = cleaned.clone();
    e.register_fn("Host", "cleaned", move || {
        c.fetch_add(1, Ordering::SeqCst);
        0i64
    })
    .unwrap();
    let spin = e
        .compile("[Host started. [true] whileTrue: []] ensure: [Host cleaned]")
        .unwrap();
    let blocked = e
        .compile("[Host started. Timer sleep: 100000000] ensure: [Host cleaned]")
        .unwrap();
    let plain = e.compile_fn(&["x"], "x + 1").unwrap();
    let h = e.cancel_handle();
    let calls = 4;
    let canceller = std::thread::spawn(move || {
        // One cancel per call, once it reports it started.
        for _ in 0..calls {
            if started_rx.recv().is_err() {
                return;
            }
            h.cancel();
        }
    });
    let mut runs = 0;
    for s in [&spin, &blocked, &spin, &blocked] {
        // Warm: the call before is lent the main process (or, after a cancel, delivered).
        assert_eq!(outcome(&e, &plain, &[Value::Int(1)]), "ok 2");
        assert_eq!(outcome(&e, s, &[]), "error cancelled Some(Cancelled)");
        runs += 1;
        assert_eq!(cleaned.load(Ordering::SeqCst), runs);
    }
    assert_eq!(runs, calls);
    assert_eq!(outcome(&e, &plain, &[Value::Int(1)]), "ok 2");
    canceller.join().unwrap();
}

/// A deadline firing on the lent path (a call that spins, one blocked in a wait) ends the
/// call with `deadline`, and the calls after it answer (1 s: roomy enough for the calls that
/// must answer on a loaded machine; only the three that never finish wait for it).
#[test]
fn a_deadline_on_the_lent_path_ends_the_call_and_the_next_calls_answer() {
    let e = Engine::builder()
        .timeout(std::time::Duration::from_secs(1))
        .build();
    let plain = e.compile_fn(&["x"], "x + 1").unwrap();
    let spin = e.compile("[true] whileTrue: []").unwrap();
    let blocked = e.compile("Timer sleep: 100000000").unwrap();
    for s in [&spin, &blocked, &spin] {
        assert_eq!(outcome(&e, &plain, &[Value::Int(1)]), "ok 2");
        assert_eq!(outcome(&e, s, &[]), "error deadline Some(Deadline)");
    }
    assert_eq!(outcome(&e, &plain, &[Value::Int(1)]), "ok 2");
}

/// between calls the main process stays claimed by the guest's runner
/// (`Sched::Lent`, internals/embedding.md "Speed"). What the rest of the runtime sees
/// must not change: the main process reads Idle between calls and Runnable inside one, a
/// message queued for it between calls is handled (the next call answers and the mailbox
/// is empty after it), and a kill between calls leaves the next call a fresh main process.
#[test]
fn the_kept_main_process_reads_idle_between_calls_and_takes_mail_and_kills() {
    use bt::runtime::{Message, ProcStatus, ProcessInfo, RtHandle};
    let vm = bt::interp::interpreter::Interpreter::new(Default::default());
    let rt = vm.runtime();
    let main = |rt: &RtHandle| -> ProcessInfo {
        let mut all = rt
            .processes(false)
            .into_iter()
            .filter(|i| i.label == "main");
        let m = all.next().expect("a main process");
        assert!(all.next().is_none(), "one main process");
        m
    };
    let call = |n: i64| {
        let rt = rt.clone();
        let (v, inside) = vm.try_run(move |_, _| (n + 1, main(&rt).status)).unwrap();
        assert_eq!(v, n + 1);
        assert_eq!(inside, ProcStatus::Runnable);
    };
    for n in 0..4 {
        call(n);
        assert_eq!(main(&rt).status, ProcStatus::Idle);
        assert_eq!(
            vm.eval("t", &format!("{n} * 2")).unwrap().as_i64(),
            Some(n * 2)
        );
    }
    // Mail between calls: waiting for the next call, then handled.
    let m = main(&rt);
    assert!(rt.cast(&m.proc, Message::named("hello", Vec::new())));
    assert_eq!(main(&rt).mailbox_len, 1);
    assert_eq!(main(&rt).status, ProcStatus::Runnable);
    for n in 0..3 {
        call(n);
        let m = main(&rt);
        assert_eq!((m.status, m.mailbox_len), (ProcStatus::Idle, 0));
    }
    // A kill between calls: the next call runs in a fresh main process.
    let old = main(&rt);
    assert!(rt.kill(&old.proc));
    assert_eq!(old.proc.status(), ProcStatus::Dead);
    for n in 0..3 {
        call(n);
    }
    let new = main(&rt);
    assert_ne!(new.pid, old.pid);
    assert_eq!(new.status, ProcStatus::Idle);
}

/// Actors a script spawned keep running between calls (on the pool, calling a host
/// function) while the host goes on calling scripts on the kept main process; the calls
/// answer, sync calls to the actor from a call get its state, a cancel between calls (no
/// evaluation runs) changes nothing, and `shutdown` from another thread between calls
/// ends the engine: later calls answer `shutdown`.
#[test]
fn calls_answer_while_actors_the_script_spawned_run_and_after_a_cancel_or_shutdown() {
    use std::sync::mpsc;
    let e = Arc::new(Engine::builder().build());
    let (tx, rx) = mpsc::channel::<i64>();
    let tx = std::sync::Mutex::new(tx);
    e.register_fn("Host", "tick:", move |n: i64| {
        let _ = tx.lock().unwrap().send(n);
        0i64
    })
    .unwrap();
    e.eval(
        "Actor subclass: Ticker\n  state: n = 0\n  go: k => k > 0 ifTrue: [\n    self.n := self.n + 1.\n    Host tick: self.n.\n    self go: k - 1!]\n  count => self.n\n",
    )
    .unwrap();
    e.eval("t := Ticker spawn").unwrap();
    let start = e.compile_fn(&["k"], "t go: k!. k").unwrap();
    let count = e.compile("t count").unwrap();
    let plain = e.compile_fn(&["x"], "x + 1").unwrap();
    assert_eq!(outcome(&e, &start, &[Value::Int(30)]), "ok 30");
    // Each tick comes from the actor while no call runs; a call follows each.
    for i in 1..=30 {
        assert_eq!(rx.recv().unwrap(), i);
        assert_eq!(
            outcome(&e, &plain, &[Value::Int(i)]),
            format!("ok {}", i + 1)
        );
    }
    assert_eq!(outcome(&e, &count, &[]), "ok 30");
    // A cancel while nothing runs has no effect on later calls.
    e.cancel_handle().cancel();
    assert_eq!(outcome(&e, &plain, &[Value::Int(1)]), "ok 2");
    assert_eq!(outcome(&e, &count, &[]), "ok 30");
    // Shutdown from another thread while the main process is kept between calls.
    let e2 = e.clone();
    std::thread::spawn(move || e2.shutdown()).join().unwrap();
    assert_eq!(
        outcome(&e, &plain, &[Value::Int(1)]),
        "error shutdown Some(Shutdown)"
    );
}

/// What `bt run` asks before it leaves an interpreter to the process's exit: after a
/// program that wrote to the Transcript and spawned nothing, only the main process (and
/// the idle standard-output transcript) is left; once an actor is alive, it is not.
#[test]
fn only_the_main_process_is_left_after_a_program_that_spawned_nothing() {
    let vm = bt::interp::interpreter::Interpreter::new(Default::default());
    let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let o2 = out.clone();
    vm.set_output(Box::new(move |s: &str| o2.lock().unwrap().push_str(s)));
    vm.run_main_on_pool(true);
    let rep = vm.load_unit(&[(
        "hello.bt".to_string(),
        "Transcript showCr: \"hello\"\nTranscript show: \"no end of line\"\n".to_string(),
    )]);
    assert!(rep.error.is_none(), "{:?}", rep.error);
    assert_eq!(out.lock().unwrap().as_str(), "hello\nno end of line");
    assert!(vm.only_main_process_left());
    let rep = vm.load_unit(&[(
        "keeper.bt".to_string(),
        "Actor subclass: Keeper\n  state: n = 0\n  n => self.n\n\nk := Keeper spawn\nk n\n"
            .to_string(),
    )]);
    assert!(rep.error.is_none(), "{:?}", rep.error);
    assert!(!vm.only_main_process_left());
}
