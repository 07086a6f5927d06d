//! The embedding API (`bt::Engine`): evaluation, persistent bindings, classes and calls,
//! limits a script cannot escape, host functions, transcript capture, threads, errors.

use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::{err, int};

use bt::{Engine, EngineError, HostError, Limit, Value};

const CONFIG: &str = r#"
Value subclass: Config
  field: name = "app"
  field: port = 80

  class build: p => self new withPort: p

  url => "http://" ++ self.name ++ ":" ++ self.port printString
"#;

const SPIN: &str = r#"
Object subclass: Spin
  class go: n => [self go: n + 1] on: Error do: [:x | self go: 0]
"#;

const SPINNER: &str = r#"
Actor subclass: Spinner
  state: n = 0
  spin => [true] whileTrue: [self.n := self.n + 1]
  ping => #pong
  count => self.n
"#;

const DEEP: &str = r#"
Object subclass: Deep
  class down: n => n == 0 ifTrue: [0] ifFalse: [1 + (self down: n - 1)]
"#;

const SETTINGS: &str = r#"
Value subclass: Settings
  field: level = 1
  class make => self new withLevel: (self hostLevel)
"#;

#[test]
fn engine_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
    assert_send_sync::<EngineError>();
    assert_send_sync::<Value>();
}

#[test]
fn eval_answers_the_last_statement() {
    let e = Engine::new();
    assert_eq!(int(&e, "3 + 4"), 7);
    assert_eq!(int(&e, "x := 2\ny := x * 10\ny + 1"), 21);
    let v = e.eval("\"hello\" ++ \" world\"").unwrap();
    assert_eq!(v.as_str(), Some("hello world"));
    assert_eq!(e.eval("3 > 2").unwrap().as_bool(), Some(true));
    assert!(e.eval("nil").unwrap().is_nil());
    assert_eq!(e.eval("1.5 * 2").unwrap().as_f64(), Some(3.0));
}

#[test]
fn bindings_persist_between_evals() {
    let e = Engine::new();
    e.eval("count := 10").unwrap();
    e.eval("count := count + 5").unwrap();
    assert_eq!(int(&e, "count"), 15);
    assert!(e.binding_names().contains(&"count".to_string()));
    // An input that raises leaves the bindings as they were.
    let er = err(&e, "count := 99\n1 / 0");
    assert_eq!(er.kind, "type_error");
    assert_eq!(int(&e, "count"), 15);
}

#[test]
fn classes_defined_then_called_from_the_host() {
    let e = Engine::new();
    e.eval(CONFIG).unwrap();
    let c = e.call("Config", "build:", &[Value::Int(8080)]).unwrap();
    assert_eq!(c.field("port").and_then(Value::as_i64), Some(8080));
    assert_eq!(c.field("name").and_then(Value::as_str), Some("app"));
    assert_eq!(c.instance_class_name(), Some("Config"));
    e.eval("cfg := Config build: 9000").unwrap();
    assert_eq!(e.eval("cfg url").unwrap().as_str(), Some("http://app:9000"));
    assert_eq!(
        e.print_string(&c).unwrap(),
        "Config(name: \"app\", port: 8080)"
    );
    // Wrong arity and unknown classes are errors, not panics.
    let er = e.call("Config", "build:", &[]).unwrap_err();
    assert_eq!(er.kind, "arity_mismatch");
    let er = e.call("Nope", "new", &[]).unwrap_err();
    assert_eq!(er.kind, "class_not_found");
}

#[test]
fn dictionaries_and_lists_are_readable_from_rust() {
    let e = Engine::new();
    let v = e
        .eval("#{#host => \"localhost\", #ports => #(80, 443), #debug => true}")
        .unwrap();
    assert_eq!(
        v.dict_get("host").and_then(Value::as_str),
        Some("localhost")
    );
    assert_eq!(v.dict_get("debug").and_then(Value::as_bool), Some(true));
    let ports: Vec<i64> = v
        .dict_get("ports")
        .and_then(|p| p.elements())
        .map(|it| it.filter_map(|x| x.as_i64()).collect())
        .unwrap();
    assert_eq!(ports, vec![80, 443]);
    let keys: Vec<String> = v
        .entries()
        .unwrap()
        .map(|(k, _)| k.as_text().unwrap().to_string())
        .collect();
    assert_eq!(keys, vec!["debug", "host", "ports"]);
}

#[test]
fn reduction_limit_stops_an_infinite_loop() {
    let e = Engine::builder().max_reductions(200_000).build();
    let er = err(&e, "[true] whileTrue: []");
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert_eq!(er.kind, "reduction_limit");
    assert!(er.to_string().contains("reduction_limit"), "{er}");
    // Ordinary work under the limit runs, and the engine is usable after a hit.
    assert_eq!(int(&e, "(1 to: 100) inject: 0 into: [:a :b | a + b]"), 5050);
}

#[test]
fn reduction_limit_escapes_neither_on_do_nor_ensure() {
    let e = Engine::builder().max_reductions(100_000).build();
    e.eval("cleaned := 0").unwrap();
    let er = err(&e, "[[true] whileTrue: []] on: Error do: [:x | 42]");
    assert_eq!(er.limit, Some(Limit::Reductions));
    let er = err(&e, "[[true] whileTrue: []] on: nil do: [:x | 42]");
    assert_eq!(er.limit, Some(Limit::Reductions));
    // The ensure block runs but the evaluation still ends with the limit error.
    let er = err(
        &e,
        "[[true] whileTrue: []] ensure: [Transcript showCr: \"cleanup\"]\n42",
    );
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert_eq!(e.take_output(), "cleanup\n");
    // An ensure block that raises, caught outside, still does not end the limit.
    let er = err(
        &e,
        "r := [[[true] whileTrue: []] ensure: [1 / 0]] on: Error do: [:x | 7]\nr",
    );
    assert_eq!(er.limit, Some(Limit::Reductions));
    // An ensure block that loops forever is stopped too.
    let er = err(&e, "[[true] whileTrue: []] ensure: [[true] whileTrue: []]");
    assert_eq!(er.limit, Some(Limit::Reductions));
    // A handler that retries forever is stopped.
    let er = err(
        &e,
        "[true] whileTrue: [[[true] whileTrue: []] on: nil do: [:x | 0]]",
    );
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert_eq!(int(&e, "6 * 7"), 42);
}

/// A deadline short enough to make the tests quick. Only evaluations that can never finish
/// (so trip whatever the machine's load) run under it.
const TRIP: Duration = Duration::from_millis(50);

/// A deadline for engines whose evaluations must also *succeed*: a few ms of work each, so
/// they finish within it on a loaded machine too; each evaluation expected to trip costs it.
const ROOMY: Duration = Duration::from_secs(1);

#[test]
fn deadline_stops_an_infinite_loop() {
    let e = Engine::builder().timeout(TRIP).build();
    let er = err(&e, "[true] whileTrue: []");
    assert_eq!(er.limit, Some(Limit::Deadline));
    assert_eq!(er.kind, "deadline");
    let er = err(&e, "[[true] whileTrue: []] on: Error do: [:x | 1]");
    assert_eq!(er.limit, Some(Limit::Deadline));
    let er = err(&e, "[[true] whileTrue: []] ensure: [2]");
    assert_eq!(er.limit, Some(Limit::Deadline));
    // Recursion that never ends (caught stack overflows, retried) is stopped as well, and the
    // engine goes on.
    let e = Engine::builder().timeout(ROOMY).build();
    e.eval(SPIN).unwrap();
    let er = err(&e, "Spin go: 0");
    assert_eq!(er.limit, Some(Limit::Deadline));
    assert_eq!(int(&e, "1 + 1"), 2);
}

#[test]
fn deadline_stops_a_blocked_evaluation() {
    let e = Engine::builder().timeout(TRIP).build();
    let er = err(&e, "Timer sleep: 100000000\n1");
    assert_eq!(er.limit, Some(Limit::Deadline));
    let er = err(
        &e,
        "[[true] whileTrue: []] ensure: [Timer sleep: 100000000]",
    );
    assert_eq!(er.limit, Some(Limit::Deadline));
    let er = err(
        &e,
        "[Timer sleep: 100000000] on: nil do: [:x | Timer sleep: 100000000]",
    );
    assert_eq!(er.limit, Some(Limit::Deadline));
    // The bindings survive a blocked evaluation's deadline and the engine goes on.
    let e = Engine::builder().timeout(ROOMY).build();
    e.eval("kept := 5").unwrap();
    let er = err(&e, "Timer sleep: 100000000\n1");
    assert_eq!(er.limit, Some(Limit::Deadline));
    assert_eq!(int(&e, "kept + 1"), 6);
    e.eval("Transcript showCr: \"after\"").unwrap();
    assert_eq!(e.take_output(), "after\n");
}

#[test]
fn actors_run_under_the_limits_too() {
    // Each message an actor handles is limited like an evaluation; the actor crashes with
    // the limit's kind as its exit reason and the caller gets an error of that kind.
    let spinner = SPINNER;
    let e = Engine::builder().max_reductions(100_000).build();
    e.eval(spinner).unwrap();
    e.eval("s := Spinner spawn").unwrap();
    let er = err(&e, "s spin");
    assert_eq!(er.kind, "reduction_limit");
    assert_eq!(er.limit, None);
    assert!(er.message.contains("Spinner>>spin"), "{}", er.message);
    assert_eq!(e.eval("s isAlive").unwrap().as_bool(), Some(false));
    e.eval("t := Spinner spawn").unwrap();
    assert_eq!(
        e.eval("[t spin] on: Error do: [:x | x kind]")
            .unwrap()
            .as_text(),
        Some("reduction_limit")
    );
    // Under a deadline the waiting evaluation ends, and so does the actor's message.
    let e = Engine::builder().timeout(ROOMY).build();
    e.eval(spinner).unwrap();
    e.eval("s := Spinner spawn").unwrap();
    let er = err(&e, "s spin");
    assert_eq!(er.kind, "deadline");
}

#[test]
fn a_deadline_that_passes_before_the_job_starts_still_stops_it() {
    let e = Engine::builder().timeout(Duration::ZERO).build();
    for _ in 0..5 {
        let er = err(&e, "Timer sleep: 100000000\n1");
        assert_eq!(er.limit, Some(Limit::Deadline));
    }
    let e = Engine::builder().timeout(Duration::from_secs(60)).build();
    e.eval("kept := 1").unwrap();
    assert_eq!(int(&e, "kept"), 1);
}

#[test]
fn a_blocked_script_call_ended_by_its_deadline_keeps_the_bindings_and_the_next_calls_run() {
    // The watchdog kills the main process of a blocked call (one word per evaluation,
    // engine/limits.rs); the bindings live with the Interpreter, not in the killed job, and
    // the next calls get a fresh main process and an untripped evaluation.
    let e = Engine::builder().timeout(TRIP).build();
    e.eval("keep := 41").unwrap();
    let blocked = e.compile_fn(&["x"], "Timer sleep: 100000000. x").unwrap();
    let quick = e.compile_fn(&["x"], "keep + x").unwrap();
    for _ in 0..3 {
        let er = e.run(&blocked, &[Value::Int(1)]).unwrap_err();
        assert_eq!(er.limit, Some(Limit::Deadline));
        assert_eq!(e.run(&quick, &[Value::Int(1)]).unwrap().as_i64(), Some(42));
    }
    assert_eq!(int(&e, "keep"), 41);
}

#[test]
fn a_cancel_before_a_call_does_not_stop_it_and_a_trip_does_not_outlive_its_call() {
    let e = Engine::builder().max_reductions(10_000).build();
    let f = e.compile_fn(&["x"], "x + 1").unwrap();
    let spin = e.compile_fn(&[], "[true] whileTrue: []").unwrap();
    e.cancel_handle().cancel();
    assert_eq!(e.run(&f, &[Value::Int(1)]).unwrap().as_i64(), Some(2));
    let er = e.run(&spin, &[]).unwrap_err();
    assert_eq!(er.limit, Some(Limit::Reductions));
    for i in 0..3 {
        assert_eq!(e.run(&f, &[Value::Int(i)]).unwrap().as_i64(), Some(i + 1));
    }
}

#[test]
fn printing_runs_under_the_limits() {
    let e = Engine::builder().max_reductions(100_000).build();
    e.eval("Value subclass: Loud\n  printString => [true] whileTrue: []. \"never\"\n")
        .unwrap();
    let v = e.eval("Loud new").unwrap();
    let er = e.print_string(&v).unwrap_err();
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert!(e.display(&v).contains("reduction_limit"));
    assert_eq!(int(&e, "3"), 3);
}

#[test]
fn limits_apply_to_calls() {
    let e = Engine::builder().max_reductions(50_000).build();
    e.eval("Object subclass: Forever\n  class run => [true] whileTrue: []\n  class ok => 5\n")
        .unwrap();
    let er = e.call("Forever", "run", &[]).unwrap_err();
    assert_eq!(er.limit, Some(Limit::Reductions));
    assert_eq!(e.call("Forever", "ok", &[]).unwrap().as_i64(), Some(5));
}

#[test]
fn max_depth_raises_a_catchable_stack_overflow() {
    let e = Engine::builder().max_depth(200).build();
    e.eval(DEEP).unwrap();
    assert_eq!(int(&e, "Deep down: 150"), 150);
    let er = err(&e, "Deep down: 1000");
    assert_eq!(er.kind, "stack_overflow");
    assert!(
        er.message.contains("200 nested activations"),
        "{}",
        er.message
    );
    assert_eq!(er.limit, None);
    let caught = concat!(
        "[Deep down: 1000] on: Error do: [:x |\n",
        "  x kind == #stack_overflow ifTrue: [-1] ifFalse: [0]]"
    );
    assert_eq!(int(&e, caught), -1);
}

#[test]
fn host_functions_are_callable_and_checked() {
    let e = Engine::new();
    e.register_fn("Host", "double:", |args: &[Value]| {
        let n = args[0]
            .as_i64()
            .ok_or_else(|| HostError::new("type_error", "double: expects an Integer"))?;
        Ok(Value::Int(n * 2))
    })
    .unwrap();
    e.register_fn("Host", "greet:and:", |args: &[Value]| {
        Ok(Value::str(format!(
            "{} & {}",
            args[0].as_text().unwrap_or("?"),
            args[1].as_text().unwrap_or("?")
        )))
    })
    .unwrap();
    e.register_fn("Host", "answer", |_: &[Value]| Ok(Value::Int(42)))
        .unwrap();
    assert_eq!(int(&e, "Host double: 21"), 42);
    assert_eq!(int(&e, "(Host double: Host answer) + 1"), 85);
    assert_eq!(
        e.eval("Host greet: \"a\" and: #b").unwrap().as_str(),
        Some("a & b")
    );
    // A host error is an exception of its kind that the script can catch.
    let er = err(&e, "Host double: \"x\"");
    assert_eq!(er.kind, "type_error");
    assert_eq!(er.class_name, "TypeError");
    assert!(er.message.contains("double: expects an Integer"));
    assert_eq!(
        e.eval("[Host double: nil] on: TypeError do: [:x | x message]")
            .unwrap()
            .as_str(),
        Some("double: expects an Integer")
    );
    // Wrong arity (through perform:, since the checker rejects it statically).
    let er = err(&e, "Host perform: #double: withArguments: #(1, 2)");
    assert_eq!(er.kind, "arity_mismatch");
    let er = e.call("Host", "double:", &[]).unwrap_err();
    assert_eq!(er.kind, "arity_mismatch");
    // A binary selector.
    e.register_fn("Host", "+", |args: &[Value]| {
        Ok(Value::Int(args[0].as_i64().unwrap_or(0) + 100))
    })
    .unwrap();
    assert_eq!(int(&e, "Host + 1"), 101);
    // Host functions may be called from the host too, and from methods.
    assert_eq!(
        e.call("Host", "double:", &[Value::Int(5)])
            .unwrap()
            .as_i64(),
        Some(10)
    );
    e.eval("Object subclass: User\n  class quad: n => Host double: (Host double: n)\n")
        .unwrap();
    assert_eq!(int(&e, "User quad: 3"), 12);
}

#[test]
fn host_errors_with_custom_kinds_and_panics() {
    let e = Engine::new();
    e.register_fn("Store", "fetch:", |args: &[Value]| {
        match args[0].as_text() {
            Some("k") => Ok(Value::Int(1)),
            _ => Err(HostError::new("not_found", "no such key").with_hint("try k")),
        }
    })
    .unwrap();
    e.register_fn("Store", "boom", |_: &[Value]| -> Result<Value, HostError> {
        panic!("host bug")
    })
    .unwrap();
    let er = err(&e, "Store fetch: #z");
    assert_eq!(er.kind, "not_found");
    assert_eq!(er.hint.as_deref(), Some("try k"));
    assert_eq!(
        e.eval("[Store fetch: #z] on: Error do: [:x | x kind]")
            .unwrap()
            .as_text(),
        Some("not_found")
    );
    let er = err(&e, "Store boom");
    assert_eq!(er.kind, "host_error");
    assert!(er.message.contains("host bug"), "{}", er.message);
    assert_eq!(int(&e, "Store fetch: #k"), 1);
    // Bad registrations are errors.
    assert!(e
        .register_fn("lower", "x", |_: &[Value]| Ok(Value::Nil))
        .is_err());
    assert!(e
        .register_fn("Host", "at:put", |_: &[Value]| Ok(Value::Nil))
        .is_err());
}

#[test]
fn host_functions_on_a_script_class() {
    let e = Engine::new();
    e.eval(SETTINGS).unwrap_or_else(|er| panic!("{er}"));
    e.register_fn("Settings", "hostLevel", |_: &[Value]| Ok(Value::Int(7)))
        .unwrap();
    let v = e.eval("(Settings make) level").unwrap();
    assert_eq!(v.as_i64(), Some(7));
    // Registering the selector again replaces the function.
    e.register_fn("Settings", "hostLevel", |_: &[Value]| Ok(Value::Int(8)))
        .unwrap();
    assert_eq!(int(&e, "Settings hostLevel"), 8);
}

#[test]
fn host_functions_are_per_engine() {
    let a = Engine::new();
    let b = Engine::new();
    a.register_fn("Host", "which", |_: &[Value]| Ok(Value::Int(1)))
        .unwrap();
    b.register_fn("Host", "which", |_: &[Value]| Ok(Value::Int(2)))
        .unwrap();
    assert_eq!(int(&a, "Host which"), 1);
    assert_eq!(int(&b, "Host which"), 2);
}

#[test]
fn transcript_output_is_captured() {
    let e = Engine::new();
    e.eval("Transcript show: \"a\"; show: 1 + 1; cr\nTranscript showCr: \"line\"")
        .unwrap();
    assert_eq!(e.take_output(), "a2\nline\n");
    assert_eq!(e.take_output(), "");
    e.eval("\"direct\" showCr: \"x\"").unwrap();
    assert_eq!(e.take_output(), "x\n");
}

#[test]
fn an_engine_is_shared_between_threads() {
    let e = Arc::new(Engine::builder().max_reductions(10_000_000).build());
    e.eval("Object subclass: Counter\n  class twice: n => n * 2\n")
        .unwrap();
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                let name = format!("v{t}");
                e.eval(&format!("{name} := 0")).unwrap();
                for _ in 0..50 {
                    e.eval(&format!("{name} := {name} + (Counter twice: 1)"))
                        .unwrap();
                }
                e.eval(&name).unwrap().as_i64()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Some(100));
    }
    assert_eq!(int(&e, "v0 + v1"), 200);
}

#[test]
fn syntax_and_checker_errors_carry_codes() {
    let e = Engine::new();
    let er = err(&e, "x := (1 + ");
    assert!(er.is_compile());
    assert_eq!(er.class_name, "CompileError");
    assert!(er.codes().contains(&"E0101"), "{:?}", er.codes());
    let er = err(&e, "undefinedThing + 1");
    assert!(er.is_compile());
    assert!(er.codes().contains(&"E0201"), "{:?}", er.codes());
    assert!(
        er.to_string()
            .contains("Undefined variable: undefinedThing"),
        "{er}"
    );
    assert!(er.diagnostics[0].span.start <= er.diagnostics[0].span.end);
    // A runtime error renders like `bt run`: location, class, kind, message, hint.
    let er = err(&e, "1 / 0");
    assert_eq!(er.kind, "type_error");
    assert!(er
        .to_string()
        .contains("TypeError (type_error): bad arithmetic operation"));
    assert!(er.report().contains("Hint: "), "{er}");
    assert!(!er.to_string().contains('\n'), "{er}");
    assert!(er.location.is_some());
}

#[test]
fn program_exit_never_ends_the_host() {
    let e = Engine::new();
    let er = err(&e, "Program exit: 3");
    assert_eq!(er.kind, "exit");
    assert_eq!(er.class_name, "ProgramExit");
    assert_eq!(er.message, "3");
    e.eval("Actor subclass: Quitter\n  quit => Program exit: 4\n  ok => 1\n")
        .unwrap();
    e.eval("q := Quitter spawn").unwrap();
    let er = err(&e, "q quit");
    assert_eq!(er.kind, "runtime_error");
    assert!(er.message.contains("Program exit: 4"), "{}", er.message);
    assert_eq!(int(&e, "q ok"), 1);
}

#[test]
fn eval_file_runs_a_script() {
    let dir = std::env::temp_dir().join(format!("bt-engine-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.bt");
    std::fs::write(
        &path,
        "Object subclass: Limits\n  class max => 3\n\nLimits max * 2\n",
    )
    .unwrap();
    let e = Engine::new();
    assert_eq!(e.eval_file(&path).unwrap().as_i64(), Some(6));
    let er = e.eval_file(dir.join("missing.bt")).unwrap_err();
    assert_eq!(er.kind, "io_error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_display_like_bt_run() {
    let dir = std::env::temp_dir().join(format!("bt-engine-display-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("runtime.bt", "x := 1\n#(1, 2) at: 5\n"),
        ("compile.bt", "x := 1\ny := nope + 1\n"),
        ("syntax.bt", "x := (1 +\n"),
    ];
    for (name, src) in cases {
        let path = dir.join(name);
        std::fs::write(&path, src).unwrap();
        let p = path.display().to_string();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bt"))
            .args(["run", &p])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        let bt_run = String::from_utf8_lossy(&out.stderr).to_string();
        let e = Engine::new();
        let er = e.eval_file(&path).unwrap_err();
        assert_eq!(format!("{}\n", er.report()), bt_run, "{name}");
        // Display is one line naming the file and position.
        let line = er.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains(&format!("{p}:")), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[derive(serde::Deserialize, serde::Serialize, Debug, PartialEq)]
struct ServerCfg {
    name: String,
    port: u16,
    tags: Vec<String>,
    tls: Option<bool>,
}

#[test]
fn eval_as_turns_a_dictionary_into_a_config_struct() {
    let e = Engine::new();
    let cfg: ServerCfg = e
        .eval_as(r#"#{#name => "api", #port => 8080, #tags => #("a", "b"), #tls => nil}"#)
        .unwrap();
    assert_eq!(
        cfg,
        ServerCfg {
            name: "api".into(),
            port: 8080,
            tags: vec!["a".into(), "b".into()],
            tls: None
        }
    );
    // Out of range for u16: a TypeError naming where.
    let err = e
        .eval_as::<ServerCfg>(r#"#{#name => "api", #port => 70000, #tags => #(), #tls => true}"#)
        .unwrap_err();
    assert_eq!(err.class_name, "TypeError");
    assert!(err.message.contains("port"), "{}", err.message);
    // And back: a Rust value becomes a Dictionary a script can use.
    let v = bt::from_rust(&cfg).unwrap();
    e.eval("Object subclass: Probe\n  class portOf: d => d at: #port")
        .unwrap();
    let port = e
        .call("Probe", "portOf:", std::slice::from_ref(&v))
        .unwrap();
    assert_eq!(port.as_i64(), Some(8080));
    assert_eq!(bt::to_rust::<ServerCfg>(&v).unwrap(), cfg);
}

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)] // read through Deserialize only
struct AppCfg {
    name: String,
    server: ServerCfg,
}

#[test]
fn a_config_value_of_the_wrong_type_is_reported_at_its_place_in_the_file() {
    let e = Engine::new();
    let src = "base := 8000.\n\
               cfg := #{#name => \"api\",\n\
               \x20 #server => #{#name => \"web\", #port => \"eighty\", #tags => #(), #tls => nil}}.\n\
               cfg\n";
    let err = e.eval_named_as::<AppCfg>("app.bt", src).unwrap_err();
    assert_eq!(err.class_name, "TypeError");
    // The path of the value, and the place of its literal: line 3, column 41 (`"eighty"`).
    assert!(err.message.contains("{#server}{#port}"), "{}", err.message);
    assert_eq!(err.location, Some(("app.bt".to_string(), 3, 41)));
    let out = crate::api::render(err);
    assert!(out.contains("app.bt:3:41"), "{out}");
    let line = out
        .lines()
        .position(|l| l.contains("#port => \"eighty\""))
        .unwrap_or_else(|| panic!("{out}"));
    let caret = out.lines().nth(line + 1).unwrap_or("");
    assert!(
        caret.contains('┬') || caret.contains('^'),
        "no caret under the value:\n{out}"
    );
    // A value the script computed: the error points at the expression that made it.
    let err = e
        .eval_named_as::<AppCfg>("computed.bt", "#{#name => 3 + 4, #server => nil}")
        .unwrap_err();
    assert_eq!(
        err.location,
        Some(("computed.bt".to_string(), 1, 12)),
        "{}",
        err.message
    );
}

#[test]
fn script_calls_wait_and_resume_on_any_host_thread() {
    // The guest's resident runner (runtime/sched/guest.rs) lends the main process its stack
    // between calls: a call whose first step is a timed wait wakes at its deadline, a reply
    // from an actor resumes it, a deep call gives its stack back, and calls from another
    // host thread use the same runner.
    let e = Arc::new(Engine::new());
    assert_eq!(int(&e, "Timer sleep: 1. 7"), 7);
    e.eval(SPINNER).unwrap();
    e.eval(DEEP).unwrap();
    e.eval("a := Spinner spawn").unwrap();
    let f = e
        .compile_fn(
            &["x"],
            "Timer sleep: 1. (a ping) == #pong ifTrue: [x + 1] ifFalse: [0]",
        )
        .unwrap();
    assert_eq!(e.run(&f, &[Value::Int(1)]).unwrap().as_i64(), Some(2));
    assert_eq!(int(&e, "Deep down: 3000"), 3000);
    let (e2, f2) = (e.clone(), f.clone());
    let other = std::thread::spawn(move || {
        (0..3)
            .map(|i| e2.run(&f2, &[Value::Int(i)]).unwrap().as_i64())
            .collect::<Vec<_>>()
    });
    assert_eq!(other.join().unwrap(), vec![Some(1), Some(2), Some(3)]);
    assert_eq!(e.run(&f, &[Value::Int(9)]).unwrap().as_i64(), Some(10));
}
