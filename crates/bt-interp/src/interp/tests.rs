//! Interpreter invariants: the stdlib loads, redefinition, REPL bindings, sizes, odd inputs.
//! (The `tests/golden/eval/core` runner is `testrun::core_golden`.)

use crate::interp::class::ClassExt;
use crate::interp::{Interpreter, InterpreterOptions};

#[test]
fn stdlib_loads_cleanly() {
    let vm = Interpreter::loading_library(InterpreterOptions::default());
    assert!(vm.stdlib_warnings.is_empty(), "{:?}", vm.stdlib_warnings);
    // Every library class taken in, one unit each and all at once, reports nothing.
    for name in crate::check::library::index().class_names() {
        let one = Interpreter::loading_library(InterpreterOptions::default());
        assert!(one.prog.class_named(name).is_some(), "{name}");
        let p = one.library_problems(false);
        assert!(p.is_empty(), "{name}: {p:?}");
    }
    let p = vm.library_problems(true);
    assert!(p.is_empty(), "{p:?}");
    let img = Interpreter::library_image().expect("the library image");
    assert!(img.warnings.is_empty(), "{:?}", img.warnings);
}

/// A class taken in from the library is marked complete only once its install is over: the
/// files being installed look their own classes up (a take-in nested in the install, which
/// finds the files already taken), and a process on another thread that saw the class
/// complete then read its method table half filled (`Result does not understand 'unwrap'`
/// with two processes using Result for the first time at once).
#[test]
fn a_class_is_marked_complete_only_once_its_library_methods_are_in() {
    use std::sync::atomic::Ordering;
    let unwrap = crate::value::Sym::new("unwrap");
    for _ in 0..20 {
        let vm = Interpreter::loading_library(InterpreterOptions::default());
        let result = vm.prog.core.result.clone();
        assert!(result.rt().pending.load(Ordering::Acquire));
        let ready = std::sync::Arc::new(std::sync::Barrier::new(2));
        let watcher = {
            let (r, ready) = (result.clone(), ready.clone());
            std::thread::spawn(move || {
                ready.wait();
                // Reads the table itself (not `methods()`, which would take the class in).
                while r.rt().pending.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                r.rt().methods.read().get(&unwrap).is_some()
            })
        };
        ready.wait();
        let _ = result.methods();
        assert!(
            watcher.join().unwrap(),
            "Result was marked complete before its library methods were in"
        );
    }
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
    assert!(e.is_badarith() && e.kind() == "type_error" && e.class_name() == "TypeError");
    let e = vm.eval("t", "zork").unwrap_err();
    assert!(e.is_compile());
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
    assert_eq!(e.kind(), "type_error");
    assert_eq!(e.location(), Some(&("a.bt".to_string(), 1, 8)));
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
            Err(e) => assert_ne!(e.kind(), "internal_error", "{src}: {}", e.message()),
        }
    }
}

/// Dropping values (`value::deep_drop`): a chain of instances (each the only holder of the next) and a List of leaf-only
/// instances both drop on a small stack.
#[test]
fn instance_chains_and_lists_of_instances_drop_on_a_small_stack() {
    use crate::value::Value;
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let class: crate::value::ClassRef =
                crate::value::Ref::new(crate::interp::class::Class::new(
                    crate::value::Sym::new("DeepDropNode"),
                    None,
                    crate::interp::class::ClassKind::Value,
                    &[],
                    false,
                    false,
                    crate::interp::class::Builtin::None,
                ));
            let make = |fields: Vec<Value>| {
                Value::Object(crate::value::Ref::new(crate::value::Instance {
                    class: class.clone(),
                    fields: fields.into(),
                }))
            };
            let mut x = make(vec![Value::Int(0), Value::Nil]);
            for i in 0..300_000 {
                x = make(vec![Value::Int(i), x]);
            }
            drop(x);
            let pts = Value::list((0..100_000).map(|i| make(vec![Value::Int(i), Value::str("p")])));
            drop(pts);
        })
        .expect("thread");
    t.join()
        .expect("dropping deep values must not overflow the stack");
}

/// Fused Integer loops (`eval::compile::fused`, method locals only): an overflow in the
/// middle of an iteration finishes on the general path (LargeInteger), non-Integer locals run
/// the general loop, and the variables hold the final values afterwards.
#[test]
fn fused_integer_loops_promote_on_overflow_and_fall_back() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval(
        "t",
        "Object subclass: FuseT
  class big =>
    i := 0
    s := 4611686018427387904
    [i < 3] whileTrue: [
      s := s + s
      i := i + 1]
    s printString ++ \" \" ++ i printString
  class float =>
    j := 0.5
    [j < 3] whileTrue: [j := j + 1]
    j
  class down =>
    k := 10
    m := 0
    [k > 0] whileTrue: [
      m := m + k
      k := k - 1]
    m * 100 + k
",
    )
    .unwrap();
    let v = vm.eval("t", "FuseT big").unwrap();
    assert_eq!(vm.display(&v), "36893488147419103232 3");
    let v = vm.eval("t", "FuseT float").unwrap();
    assert_eq!(vm.display(&v), "3.5");
    let v = vm.eval("t", "FuseT down").unwrap();
    assert_eq!(vm.display(&v), "5500");
}

/// A job's panic is the caller's error, on the calling thread's runner and on a pool
/// worker alike; the main process and its bindings stay, and the next job runs.
#[test]
fn a_panicking_job_is_an_error_and_the_main_process_stays() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval("t", "x := 41").unwrap();
    for on_pool in [false, false, true, false] {
        vm.run_main_on_pool(on_pool);
        let r = vm.try_run(|_, _| -> i64 { panic!("job bug") });
        assert_eq!(r, Err("job bug".to_string()), "on_pool {on_pool}");
        assert_eq!(vm.try_run(|_, _| 7), Ok(7));
        let v = vm.eval("t", "x + 1").unwrap();
        assert_eq!(v.as_i64(), Some(42), "on_pool {on_pool}");
    }
}
