//! The embedding API beyond evaluation (`bt::Engine`): errors as `std::error::Error` and
//! `miette::Diagnostic`, capabilities, cancellation, shutdown, re-entry, typed and
//! asynchronous host functions, host types, compile once / run many.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::{err, int};

use bt::engine::{Capability, EngineErrorKind, HostError};
use bt::{Engine, Limit, Value};

/// Renders an error as a host would (`miette::Report`), without colour.
pub(crate) fn render(e: bt::EngineError) -> String {
    let mut out = String::new();
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    handler.render_report(&mut out, &e).unwrap();
    out
}

#[test]
fn errors_are_std_errors_with_one_line_display() {
    let e = Engine::new();
    let er = err(&e, "x := 1\n#(1, 2) at: 5");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(er.clone());
    let line = boxed.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.starts_with("RuntimeError (index_out_of_bounds): "),
        "{line}"
    );
    assert!(line.ends_with("at eval:2:9"), "{line}");
    assert_eq!(er.error_kind, EngineErrorKind::Exception);
    let er = err(&e, "y := nope + 1");
    assert_eq!(er.error_kind, EngineErrorKind::Compile);
    assert!(er.to_string().starts_with("compile error E0201: "), "{er}");
}

#[test]
fn miette_renders_a_runtime_error_with_its_source_line() {
    let e = Engine::new();
    let er = e
        .eval_named(
            "config.bt",
            "port := 80\nhost := \"example\"\nbad := port / 0\n",
        )
        .unwrap_err();
    let out = render(er);
    assert!(out.contains("bt::type_error"), "{out}");
    assert!(out.contains("config.bt:3:"), "{out}");
    assert!(out.contains("bad := port / 0"), "{out}");
    assert!(out.contains("TypeError raised here"), "{out}");
    assert!(out.contains("Arithmetic requires numbers"), "{out}"); // help = hint
}

/// An arithmetic fault's error names the operation as `bt run` prints it under the message —
/// the operator, the operands' values and classes, "division by zero" when that is the
/// cause — in `detail`, in the one-line `Display` and so in a `miette` report.
#[test]
fn arithmetic_faults_name_the_operation() {
    let e = Engine::new();
    for (src, detail) in [
        (
            "3 + \"x\"",
            "`3 + \"x\"`: Integer + String, and \"x\" is not a number",
        ),
        ("x := 7\nx rem: 0", "`7 rem: 0`: division by zero"),
        (
            "-1 sqrt",
            "`-1 sqrt`: the square root of a negative number is not a real number",
        ),
    ] {
        let er = err(&e, src);
        assert_eq!(er.kind, "type_error");
        assert_eq!(er.message, "bad arithmetic operation");
        assert_eq!(er.detail.as_deref(), Some(detail), "{src}");
        let line = er.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with(&format!(
                "TypeError (type_error): bad arithmetic operation: {detail} at eval:"
            )),
            "{line}"
        );
        assert!(
            er.report().contains(&format!("\n{detail}\n")),
            "{}",
            er.report()
        );
        // The report's headline is the `Display` line (wrapped at the render width).
        let out = render(er).replace("\n  │ ", " ");
        assert!(out.contains(&line), "{out}");
    }
    // Other errors have no detail.
    let er = err(&e, "#(1, 2) at: 5");
    assert_eq!(er.detail, None);
}

#[test]
fn miette_renders_compile_errors_with_codes_and_spans() {
    let e = Engine::new();
    let er = e
        .eval_named("app.bt", "a := 1\nb := missing + a\n")
        .unwrap_err();
    let d: &dyn miette::Diagnostic = &er;
    assert_eq!(d.code().unwrap().to_string(), "E0201");
    let labels: Vec<_> = d.labels().unwrap().collect();
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].offset(), 12); // `missing`
    assert_eq!(labels[0].len(), 7);
    let out = render(er);
    assert!(out.contains("b := missing + a"), "{out}");
    assert!(out.contains("app.bt:2:6"), "{out}");
}

#[test]
fn an_error_in_an_earlier_file_points_into_that_file() {
    let e = Engine::new();
    e.eval_named(
        "lib.bt",
        "Object subclass: Calc\n  class div: n => 10 / n\n",
    )
    .unwrap();
    let er = e.eval_named("main.bt", "Calc div: 0").unwrap_err();
    let out = render(er);
    assert!(out.contains("lib.bt"), "{out}");
    assert!(out.contains("class div: n => 10 / n"), "{out}");
}

#[test]
fn capabilities_are_denied_unless_granted() {
    let e = Engine::new();
    let denied = [
        ("Timer after: 10 do: [1]", "timers"),
        ("Timer every: 10 do: [1]", "timers"),
        ("Console readLine", "Console reading"),
        ("ProcessNavigation system", "ProcessNavigation system"),
        (
            "(Node named: \"x@localhost\") value connect",
            "distribution",
        ),
    ];
    for (src, name) in denied {
        let er = err(&e, src);
        assert_eq!(er.kind, "capability_denied", "{src}: {er}");
        assert!(er.message.contains(name), "{src}: {}", er.message);
        // An ordinary exception: a script may handle it.
        let caught = e
            .eval(&format!("[{src}] on: Error do: [:x | x kind]"))
            .unwrap();
        assert_eq!(caught.as_text(), Some("capability_denied"), "{src}");
    }
    // Granted: the same sends work.
    let g = Engine::builder()
        .grant(Capability::Timers)
        .grant(Capability::ProcessNavigationSystem)
        .build();
    assert!(g.eval("(Timer after: 1000 do: [1]) cancel").is_ok());
    assert!(g.eval("ProcessNavigation system").is_ok());
    assert_eq!(err(&g, "Console readLine").kind, "capability_denied");
    let all = Engine::builder().grant_all().build();
    assert!(all.eval("ProcessNavigation system").is_ok());
}

#[test]
fn a_cancel_handle_ends_a_running_evaluation_from_another_thread() {
    let e = Arc::new(Engine::new());
    let h = e.cancel_handle();
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    e.register_fn("Host", "started", move || {
        s.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let e2 = e.clone();
    let t = std::thread::spawn(move || {
        e2.eval("Host started. [[true] whileTrue: [1]] ensure: [[true] whileTrue: [2]]")
    });
    while started.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    h.cancel();
    let er = t.join().unwrap().unwrap_err();
    assert_eq!(er.limit, Some(Limit::Cancelled));
    assert_eq!(er.kind, "cancelled");
    // The next evaluation runs normally.
    assert_eq!(int(&e, "1 + 1"), 2);
}

#[test]
fn a_cancel_ends_a_blocked_evaluation() {
    let e = Arc::new(Engine::builder().grant(Capability::Timers).build());
    let h = e.cancel_handle();
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    e.register_fn("Host", "started", move || {
        s.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let e2 = e.clone();
    let t = std::thread::spawn(move || e2.eval("Host started. Timer sleep: 600000"));
    while started.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    h.cancel();
    let er = t.join().unwrap().unwrap_err();
    assert_eq!(er.limit, Some(Limit::Cancelled));
    assert_eq!(int(&e, "3"), 3);
}

#[test]
fn shutdown_stops_actors_and_timers_and_later_calls_fail() {
    let e = Engine::builder().grant(Capability::Timers).build();
    let ticks = Arc::new(AtomicUsize::new(0));
    let t = ticks.clone();
    e.register_fn("Host", "tick", move || {
        t.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    e.eval("Actor subclass: Busy\n  spin => [true] whileTrue: [1]\n")
        .unwrap();
    e.eval("b := Busy spawn. b spin!. Timer every: 1 do: [Host tick]")
        .unwrap();
    // Wait for the timer to fire at least once (it runs on the engine's runtime).
    while ticks.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    e.shutdown();
    let after = ticks.load(Ordering::SeqCst);
    let er = e.eval("1").unwrap_err();
    assert_eq!(er.limit, Some(Limit::Shutdown));
    // The runtime is gone: nothing ticks any more.
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(ticks.load(Ordering::SeqCst), after);
}

#[test]
fn a_host_function_calling_back_into_its_engine_is_an_error_not_a_deadlock() {
    let e = Arc::new(Engine::new());
    let weak = Arc::downgrade(&e);
    e.register_fn("Host", "reenter", move || -> Result<i64, HostError> {
        let e = weak.upgrade().ok_or("gone")?;
        match e.eval("1 + 1") {
            Ok(v) => Ok(v.as_i64().unwrap_or(0)),
            Err(er) => Err(HostError::new("host_error", er.kind.clone())),
        }
    })
    .unwrap();
    let er = err(&e, "Host reenter");
    assert!(er.message.contains("reentrant_call"), "{er}");
    // Another engine may be called from a host function.
    let other = Arc::new(Engine::new());
    let o = other.clone();
    e.register_fn("Host", "other", move || {
        o.eval("20 + 1").map(|v| v.as_i64()).ok().flatten()
    })
    .unwrap();
    assert_eq!(int(&e, "Host other"), 21);
}

#[derive(serde::Deserialize, serde::Serialize, Debug, PartialEq)]
struct Endpoint {
    host: String,
    port: u16,
}

#[test]
fn typed_host_functions_convert_arguments_and_results() {
    let e = Engine::new();
    e.register_fn("Host", "add:to:", |a: i64, b: i64| a + b)
        .unwrap();
    e.register_fn("Host", "scale:by:", |a: f64, b: f64| a * b)
        .unwrap();
    e.register_fn("Host", "not:", |b: bool| !b).unwrap();
    e.register_fn("Host", "shout:", |s: String| s.to_uppercase())
        .unwrap();
    e.register_fn("Host", "sum:", |v: Vec<i64>| v.iter().sum::<i64>())
        .unwrap();
    e.register_fn("Host", "keys:", |m: HashMap<String, i64>| {
        let mut k: Vec<String> = m.into_keys().collect();
        k.sort();
        k
    })
    .unwrap();
    e.register_fn("Host", "orZero:", |x: Option<i64>| x.unwrap_or(0))
        .unwrap();
    e.register_fn("Host", "url:", |ep: Endpoint| {
        format!("{}:{}", ep.host, ep.port)
    })
    .unwrap();
    e.register_fn("Host", "check:", |n: i64| -> Result<i64, HostError> {
        if n < 0 {
            Err(HostError::new("out_of_range", "negative").with_hint("pass a natural number"))
        } else {
            Ok(n)
        }
    })
    .unwrap();
    e.register_fn("Host", "name", || "bt").unwrap();
    assert_eq!(int(&e, "Host add: 2 to: 40"), 42);
    assert_eq!(e.eval("Host scale: 1.5 by: 2").unwrap().as_f64(), Some(3.0));
    assert_eq!(e.eval("Host not: false").unwrap().as_bool(), Some(true));
    assert_eq!(e.eval("Host shout: \"hi\"").unwrap().as_text(), Some("HI"));
    assert_eq!(int(&e, "Host sum: #(1, 2, 3)"), 6);
    assert_eq!(
        e.display(&e.eval("Host keys: #{\"b\" => 1, \"a\" => 2}").unwrap()),
        e.display(&e.eval("#(\"a\", \"b\")").unwrap())
    );
    assert_eq!(int(&e, "Host orZero: nil"), 0);
    assert_eq!(int(&e, "Host orZero: 5"), 5);
    assert_eq!(
        e.eval("Host url: #{#host => \"db\", #port => 5432}")
            .unwrap()
            .as_text(),
        Some("db:5432")
    );
    assert_eq!(e.eval("Host name").unwrap().as_text(), Some("bt"));
    // Conversion errors name the argument and the path inside it.
    let er = err(&e, "Host add: 1 to: \"two\"");
    assert_eq!(er.kind, "type_error");
    assert!(er.message.contains("argument 2"), "{}", er.message);
    let er = err(&e, "Host url: #{#host => \"db\", #port => \"x\"}");
    assert!(er.message.contains("argument 1"), "{}", er.message);
    assert!(er.message.contains("port"), "{}", er.message);
    // The path is named once.
    assert_eq!(er.message.matches("port").count(), 1, "{}", er.message);
    // A HostError keeps its kind and hint; scripts catch it.
    let er = err(&e, "Host check: -1");
    assert_eq!(er.kind, "out_of_range");
    assert_eq!(er.hint.as_deref(), Some("pass a natural number"));
    assert_eq!(
        e.eval("[Host check: -1] on: Error do: [:x | x kind]")
            .unwrap()
            .as_text(),
        Some("out_of_range")
    );
    // A closure whose arity does not match the selector is refused at registration.
    let er = e
        .register_fn("Host", "pair:", |a: i64, b: i64| a + b)
        .unwrap_err();
    assert_eq!(er.kind, "arity_mismatch");
}

#[test]
fn async_host_functions_suspend_only_the_calling_actor() {
    let e = Engine::new();
    e.register_async_fn("Host", "later:", Duration::from_secs(10), |args, reply| {
        std::thread::spawn(move || {
            let n = args[0].as_i64().unwrap_or(0);
            reply.ok(n * 10);
        });
    })
    .unwrap();
    e.register_async_fn(
        "Host",
        "never",
        Duration::from_millis(20),
        |_args, reply| {
            std::mem::forget(reply);
        },
    )
    .unwrap();
    e.register_async_fn("Host", "fail", Duration::from_secs(10), |_args, reply| {
        reply.send(Err(HostError::new("not_found", "no such thing")));
    })
    .unwrap();
    assert_eq!(int(&e, "Host later: 4"), 40);
    assert_eq!(err(&e, "Host never").kind, "timeout");
    assert_eq!(err(&e, "Host fail").kind, "not_found");
    // Other processes run while one waits: two actors waiting at once both finish.
    e.eval("Actor subclass: W\n  go: n => Host later: n\n")
        .unwrap();
    assert_eq!(
        int(
            &e,
            "a := W spawn. b := W spawn. rs := Parallel all: #([a go: 1], [b go: 2]). rs inject: 0 into: [:s :r | s + r value]"
        ),
        30
    );
}

#[test]
fn compile_once_run_many() {
    let e = Engine::new();
    e.eval("base := 100").unwrap();
    let s = e.compile_fn(&["x", "y"], "z := x * y\nz + base").unwrap();
    assert_eq!(s.arity(), 2);
    for i in 0..50 {
        let v = e.run(&s, &[Value::Int(i), Value::Int(2)]).unwrap();
        assert_eq!(v.as_i64(), Some(i * 2 + 100));
    }
    assert_eq!(
        e.run(&s, &[Value::Int(1)]).unwrap_err().kind,
        "arity_mismatch"
    );
    let er = e.compile("nope + 1").unwrap_err();
    assert!(er.is_compile());
    let r = e.compile("1 / 0").unwrap();
    assert_eq!(e.run(&r, &[]).unwrap_err().kind, "type_error");
}

#[derive(Default)]
struct Account {
    owner: String,
    balance: i64,
}

#[test]
fn host_types_are_classes_with_methods_and_fields_passed_by_handle() {
    let e = Engine::new();
    e.register_type::<Account>("Account")
        .unwrap()
        .constructor("owner:", |owner: String| Account { owner, balance: 0 })
        .unwrap()
        .method(
            "deposit:",
            |a: &mut Account, n: i64| -> Result<i64, HostError> {
                if n <= 0 {
                    return Err(HostError::new(
                        "invalid_amount",
                        "deposit a positive amount",
                    ));
                }
                a.balance += n;
                Ok(a.balance)
            },
        )
        .unwrap()
        .field("balance", |a: &Account| a.balance)
        .unwrap()
        .field("owner", |a: &Account| a.owner.clone())
        .unwrap();
    assert_eq!(
        int(
            &e,
            "acc := Account owner: \"ada\". acc deposit: 30. acc deposit: 12. acc balance"
        ),
        42
    );
    assert_eq!(e.eval("acc owner").unwrap().as_text(), Some("ada"));
    assert_eq!(e.display(&e.eval("acc").unwrap()), "an Account");
    // Handles are identities: the same struct through every reference.
    assert_eq!(int(&e, "other := acc. other deposit: 8. acc balance"), 50);
    assert_eq!(
        e.eval("acc =:= (Account owner: \"ada\")")
            .unwrap()
            .as_bool(),
        Some(false)
    );
    assert_eq!(err(&e, "acc deposit: -1").kind, "invalid_amount");
    assert_eq!(err(&e, "acc deposit: \"x\"").kind, "type_error");
    // A host function takes a handle back and reaches the struct.
    e.register_fn("Bank", "audit:", |a: bt::engine::HostRef<Account>| {
        a.with(|a| format!("{}: {}", a.owner, a.balance))
    })
    .unwrap();
    assert_eq!(
        e.eval("Bank audit: acc").unwrap().as_text(),
        Some("ada: 50")
    );
    assert_eq!(err(&e, "Bank audit: 3").kind, "type_error");
}

/// `Engine::display` of a List shows its elements as values (`#(1.5, nil, "s")`), not as
/// the REPL's JSON strings (`["1.5","nil","s"]`); other values display as in the REPL.
#[test]
fn display_shows_floats_and_nil_inside_collections_as_values() {
    let e = Engine::new();
    let show = |src: &str| e.display(&e.eval(src).unwrap());
    assert_eq!(
        show("#(1.5, nil, \"s\", #sym, 2)"),
        "#(1.5, nil, \"s\", #sym, 2)"
    );
    assert_eq!(show("#(#(1.5), #[nil])"), "#(#(1.5), #[nil])");
    assert_eq!(show("#{#a => 1.5}"), "#{#a => 1.5}");
    assert_eq!(show("1.5"), "1.5");
    assert_eq!(show("nil"), "nil");
    assert_eq!(show("\"text\""), "text");
}

/// What host functions capture is released by `shutdown()` (the engine value may live on).
#[test]
fn host_function_captures_are_released_at_shutdown() {
    let e = Engine::new();
    let held = std::sync::Arc::new(vec![0u8; 1024]);
    let h = held.clone();
    e.register_fn("Host", "size", move || h.len() as i64)
        .unwrap();
    assert_eq!(int(&e, "Host size"), 1024);
    // An actor and a block still alive at shutdown do not keep them either.
    e.eval("Actor subclass: Keeper\n  state: b = nil\n  keep: x => self.b := x\n\nk := Keeper spawn\nk keep: [Host size]")
        .unwrap();
    assert!(std::sync::Arc::strong_count(&held) > 1);
    e.shutdown();
    assert_eq!(std::sync::Arc::strong_count(&held), 1);
    assert!(e.eval("1").is_err());
}

/// Polls `f` to completion on this thread (parks between polls; woken by the future).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// The host calls and casts to an actor handle a script answered, also from async code.
#[test]
fn the_host_calls_and_casts_to_an_actor_handle() {
    let e = std::sync::Arc::new(Engine::new());
    let counter = e
        .eval("Actor subclass: Counter\n  state: n = 0\n  add: k => self.n := self.n + k\n  n => self.n\n  boom => nil foo\n\nCounter spawn")
        .unwrap();
    assert_eq!(
        e.send(&counter, "add:", &[bt::Value::Int(5)])
            .unwrap()
            .as_i64(),
        Some(5)
    );
    e.cast(&counter, "add:", &[bt::Value::Int(2)]).unwrap();
    // A sync call after the cast is answered after it (one mailbox, in order).
    assert_eq!(e.send(&counter, "n", &[]).unwrap().as_i64(), Some(7));
    let er = e.send(&counter, "boom", &[]).unwrap_err();
    assert_eq!(er.kind, "does_not_understand", "{er}");
    let er = e
        .send(&counter, "nosuch:", &[bt::Value::Int(1)])
        .unwrap_err();
    assert_eq!(er.kind, "does_not_understand", "{er}");
    // Any value, not only actors.
    assert_eq!(
        e.send(&bt::Value::Int(6), "*", &[bt::Value::Int(7)])
            .unwrap()
            .as_i64(),
        Some(42)
    );
    // The async variant.
    let v = block_on(e.send_async(&counter, "add:", &[bt::Value::Int(3)])).unwrap();
    assert_eq!(v.as_i64(), Some(10));
    e.shutdown();
    assert!(e.send(&counter, "n", &[]).is_err());
    assert!(block_on(e.send_async(&counter, "n", &[])).is_err());
}
