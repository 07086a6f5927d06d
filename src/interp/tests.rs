//! Interpreter self-checks: runs the `// =>` files of `tests/golden/eval/core` through
//! [`Interpreter::eval`] (a small reader of the LANGUAGE.md 11.1 format, so the interpreter can be
//! checked on its own), plus a few internal invariants.

use crate::interp::{BtError, Interpreter, InterpreterOptions};

// The 11.1 expectation rules are the test runner's; this reader only reuses them.
use crate::testrun::expect::{matches as wildcard_match, unescape};

fn error_matches(e: &BtError, want: &str) -> bool {
    e.kind == want
        || (e.badarith && (want == "badarith" || want == "type_error"))
        || e.class_name == want
        || e.message.contains(want)
}

/// Runs one expression file; answers (passed, failures).
pub fn run_script(path: &std::path::Path) -> (usize, Vec<String>) {
    let src = std::fs::read_to_string(path).unwrap_or_default();
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.set_output(Box::new(|_| {}));
    let mut fails = Vec::new();
    let name = path.display().to_string();
    let mut load = Vec::new();
    if let Some(dir) = path.parent().map(|d| d.join("fixtures")) {
        let mut fx: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        fx.retain(|p| p.extension().is_some_and(|e| e == "bt"));
        fx.sort();
        for f in fx {
            load.push((
                f.display().to_string(),
                std::fs::read_to_string(&f).unwrap_or_default(),
            ));
        }
    }
    for l in src.lines() {
        if let Some(p) = l.trim().strip_prefix("// @load ") {
            let p = path.parent().map(|d| d.join(p.trim())).unwrap_or_default();
            load.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap_or_default(),
            ));
        }
    }
    if !load.is_empty() {
        let rep = vm.load_unit(&load);
        for (f, w) in rep.warnings {
            fails.push(format!("{name}: loading {f}: {w}"));
        }
    }
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    let mut passed = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.is_empty()
            || t.starts_with("@expect")
            || (t.starts_with("//") && !t.starts_with("// =>"))
        {
            i += 1;
            continue;
        }
        if t.starts_with("// =>") {
            fails.push(format!("{name}:{}: expectation without expression", i + 1));
            i += 1;
            continue;
        }
        let start = i;
        let mut expr = lines[i].to_string();
        i += 1;
        while i < lines.len() {
            let n = lines[i].trim();
            if n.starts_with("// =>") {
                break;
            }
            if crate::syntax::needs_more(&expr)
                || (!n.is_empty()
                    && !n.starts_with("//")
                    && crate::syntax::line_continues(lines[i]))
            {
                expr.push('\n');
                expr.push_str(lines[i]);
                i += 1;
            } else {
                break;
            }
        }
        while i < lines.len() && lines[i].trim().is_empty() {
            i += 1;
        }
        let Some(exp_line) = lines
            .get(i)
            .map(|l| l.trim())
            .filter(|l| l.starts_with("// =>"))
        else {
            fails.push(format!(
                "{name}:{}: expression has no expectation",
                start + 1
            ));
            continue;
        };
        i += 1;
        let raw = exp_line["// =>".len()..].trim();
        let want = unescape(raw);
        let got = vm.eval(&name, &expr);
        let ok = match (&got, want.strip_prefix("ERROR:")) {
            (Err(e), Some(k)) => error_matches(e, k.trim()),
            (Ok(_), Some(_)) => false,
            (Ok(v), None) => wildcard_match(raw, vm.display(v).trim()),
            (Err(_), None) => false,
        };
        if ok {
            passed += 1;
        } else {
            let shown = match &got {
                Ok(v) => vm.display(v),
                Err(e) => format!("ERROR {} ({}): {}", e.class_name, e.kind, e.message),
            };
            fails.push(format!(
                "{name}:{}: `{}`\n    expected: {want}\n    got:      {shown}",
                start + 1,
                expr.trim()
            ));
        }
    }
    (passed, fails)
}

#[test]
fn golden_eval_core() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/eval/core");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "btscript"));
    files.sort();
    let filter = std::env::var("CORE_FILTER").unwrap_or_default();
    let mut total = 0;
    let mut all_fails = Vec::new();
    for f in files {
        if !f.display().to_string().contains(&filter) {
            continue;
        }
        let (p, fails) = run_script(&f);
        total += p;
        all_fails.extend(fails);
    }
    for f in &all_fails {
        eprintln!("FAIL {f}");
    }
    eprintln!("{total} passed, {} failed", all_fails.len());
    assert!(all_fails.is_empty());
}

#[test]
fn wildcard_rule() {
    assert!(wildcard_match("_", "anything"));
    assert!(wildcard_match("does_not_understand", "does_not_understand"));
    assert!(!wildcard_match(
        "does_not_understand",
        "doesXnot_understand"
    ));
    assert!(wildcard_match("Actor(Counter, _)", "Actor(Counter, 0.3.0)"));
    assert!(wildcard_match("a_c", "a_c"));
    assert!(wildcard_match("#(_)", "#(1, 2)"));
}

#[test]
fn stdlib_loads_cleanly() {
    let vm = Interpreter::new(InterpreterOptions::default());
    assert!(vm.stdlib_warnings.is_empty(), "{:?}", vm.stdlib_warnings);
}

#[test]
fn redefined_class_updates_existing_instances() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval("t", "Object subclass: Foo\n  hi => 1\n").unwrap();
    vm.eval("t", "f := Foo new").unwrap();
    let v = vm.eval("t", "f hi").unwrap();
    assert_eq!(vm.display(&v), "1");
    vm.eval("t", "Object subclass: Foo\n  hi => 2\n  bye => 3\n")
        .unwrap();
    assert_eq!(vm.display(&vm.eval("t", "f hi").unwrap()), "2");
    assert_eq!(vm.display(&vm.eval("t", "f bye").unwrap()), "3");
    assert_eq!(vm.display(&vm.eval("t", "Foo new hi").unwrap()), "2");
}

#[test]
fn repl_bindings_persist_and_errors_roll_back() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval("t", "a := 1").unwrap();
    assert!(vm.eval("t", "a := 2. b := 3. nil foo").is_err());
    assert_eq!(vm.display(&vm.eval("t", "a").unwrap()), "1");
    assert!(vm.eval("t", "b").is_err());
    let e = vm.eval("t", "1 / 0").unwrap_err();
    assert!(e.badarith && e.kind == "type_error" && e.class_name == "TypeError");
    let e = vm.eval("t", "zork").unwrap_err();
    assert!(e.compile);
}

#[test]
fn stdlib_loads_fast() {
    let t = std::time::Instant::now();
    let _vm = Interpreter::new(InterpreterOptions::default());
    // Generous for a debug build on a loaded machine; release is a few milliseconds.
    assert!(t.elapsed().as_millis() < 2000, "{:?}", t.elapsed());
}

#[test]
fn value_and_results_stay_small() {
    assert_eq!(std::mem::size_of::<crate::value::Value>(), 16);
    assert_eq!(std::mem::size_of::<crate::interp::eval::Flow>(), 16);
    assert!(
        std::mem::size_of::<crate::interp::eval::code::Node>() <= 32,
        "{}",
        std::mem::size_of::<crate::interp::eval::code::Node>()
    );
}

#[test]
fn load_unit_resolves_superclasses_across_files_and_skips_broken_ones() {
    let vm = Interpreter::new(InterpreterOptions::default());
    let files = vec![
        ("a.bt".to_string(), "Base subclass: Derived\n  who => \"derived of \" ++ super who\nlog := Derived new who\n".to_string()),
        ("b.bt".to_string(), "Object subclass: Base\n  who => \"base\"\n".to_string()),
        ("c.bt".to_string(), "Object subclass: Broken\n  oops => (1 +\n".to_string()),
    ];
    let rep = vm.load_unit(&files);
    assert!(rep.error.is_none(), "{:?}", rep.error);
    assert_eq!(rep.warnings.len(), 1, "{:?}", rep.warnings);
    assert_eq!(rep.warnings[0].0, "c.bt");
    assert_eq!(vm.display(&vm.eval("t", "log").unwrap()), "derived of base");
    assert!(vm.eval("t", "Broken").is_err());
}

#[test]
fn a_runtime_error_in_one_file_does_not_stop_the_others() {
    let vm = Interpreter::new(InterpreterOptions::default());
    let files = vec![
        ("a.bt".to_string(), "x := 1 / 0\n".to_string()),
        ("b.bt".to_string(), "y := 2\n".to_string()),
    ];
    let rep = vm.load_unit(&files);
    let e = rep.error.expect("the division raises");
    assert_eq!(e.kind, "type_error");
    assert_eq!(e.location, Some(("a.bt".to_string(), 1, 6)));
    assert_eq!(vm.display(&vm.eval("t", "y").unwrap()), "2");
}

/// Odd inputs must answer values or language errors, never panic the evaluator.
#[test]
fn odd_inputs_never_panic() {
    let vm = Interpreter::new(InterpreterOptions::default());
    let inputs = [
        "[:x | ^ x] value: 1",
        "[^ 3] value",
        "b := [:v | ^ v]. b value: 4",
        "nil foo: 1 bar: 2",
        "3 perform: #between:and: withArguments: #(1)",
        "3 perform: #between:and: withArguments: 5",
        "[:a :b :c :d :e | a] valueWithArguments: #(1, 2, 3, 4, 5)",
        "1 to: 3 by: 0.5 do: [:i | i]",
        "1.5 to: 3 do: [:i | i]",
        "$a to: $c do: [:c | c]",
        "Result new unwrap",
        "(Result error: nil) unwrap",
        "Exception new signal",
        "Exception new signal: nil",
        "Error signal: #sym",
        "3 timesRepeat: nil",
        "nil ifTrue: nil",
        "Integer class class class new",
        "Metaclass new",
        "Class new",
        "ProtoObject new",
        "Object class superclass superclass superclass",
        "3 class class class class class",
        "(Object >> #printString) source",
        "Object removeSelector: #nope",
        "#(1, 2) do: [:e | ^ e]",
        "x := 0. [x < 3] whileTrue: [x := x + 1. x = 2 ifTrue: [^ x]]",
        "3 doesNotUnderstand: #foo args: #()",
        "3 doesNotUnderstand: 4 args: 5",
        "3 fieldAt: nil",
        "Point3D",
        "Exception signalKind: 3 class: 4 selector: 5 hint: 6",
        "Exception signalKind: #x class: #Y selector: nil hint: nil",
        "[:e | e] on: Error do: [:e | e]",
        "[1 / 0] ensure: [2 / 0]",
        "[Error signal: \"a\"] on: Error do: [:e | e signal: 3]",
        "Result fromTuple: nil",
        "(Result ok: 1) ifOk: 1 ifError: 2",
        "Object new fieldNames",
        "Object new fieldAt: #x put: 1",
        "\"{nil foo}\"",
        "#{#a => [:x | x]} printString",
        "Protocol requiredMethods: 3",
        "Integer conformsTo: 3",
        "Integer >> 3",
        "1 to: 3 do: [:i | ^ i]",
        "Transcript show: 3; cr",
        "Program exit: 256",
    ];
    for src in inputs {
        match vm.eval("odd", src) {
            Ok(v) => {
                let _ = vm.display(&v);
            }
            Err(e) => assert_ne!(e.kind, "internal_error", "{src}: {}", e.message),
        }
    }
}
