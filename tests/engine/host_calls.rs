//! Host functions and class-side primitives called from a script after their send site has
//! cached them (`interp/host_cache.rs`, `interp/eval/compile/class_send.rs`): a later
//! registration, a user method replacing the primitive, or another host type with the same
//! selector is seen by the next call of the same compiled code.

use bt::{Engine, Value};

fn int(v: Result<Value, bt::EngineError>) -> i64 {
    v.unwrap().as_i64().unwrap()
}

#[test]
fn a_cached_host_function_follows_re_registration_and_redefinition() {
    let e = Engine::builder().check(false).build();
    e.register_fn("Host", "inc:", |n: i64| n + 1).unwrap();
    let f = e.compile_fn(&["x"], "Host inc: x").unwrap();
    assert_eq!(int(e.run(&f, &[Value::Int(1)])), 2);
    assert_eq!(int(e.run(&f, &[Value::Int(2)])), 3);
    // Registered again: the same site calls the new function.
    e.register_fn("Host", "inc:", |n: i64| n + 10).unwrap();
    assert_eq!(int(e.run(&f, &[Value::Int(1)])), 11);
    // A method written in bt replaces the host function at the same site.
    e.eval("Host class >> inc: n => n * 100").unwrap();
    assert_eq!(int(e.run(&f, &[Value::Int(3)])), 300);
    // A loop calls it many times through one site; errors still name the argument.
    assert_eq!(
        int(e.eval("s := 0. 1 to: 50 do: [:i | s := s + (Host inc: 1)]. s")),
        5000
    );
}

#[test]
fn cached_host_calls_keep_typed_errors_and_arity_checks() {
    let e = Engine::builder().check(false).build();
    e.register_fn("Host", "half:", |n: i64| n / 2).unwrap();
    let f = e.compile_fn(&["x"], "Host half: x").unwrap();
    assert_eq!(int(e.run(&f, &[Value::Int(8)])), 4);
    let er = e.run(&f, &[Value::str("eight")]).unwrap_err();
    assert_eq!(er.kind, "type_error", "{er}");
    assert!(er.message.contains("argument 1"), "{}", er.message);
    // Caught in the script like any exception, then the cached call works again.
    let v = e
        .eval("r := [Host half: #x] on: Error do: [:ex | ex kind]. r")
        .unwrap();
    assert_eq!(e.display(&v), "type_error");
    assert_eq!(int(e.run(&f, &[Value::Int(10)])), 5);
}

#[test]
fn instance_side_host_methods_of_two_types_stay_apart() {
    struct A(i64);
    struct B(i64);
    let e = Engine::builder().check(false).build();
    e.register_type::<A>("TypeA")
        .unwrap()
        .constructor("new:", A)
        .unwrap()
        .method("get", |a: &mut A| a.0)
        .unwrap();
    e.register_type::<B>("TypeB")
        .unwrap()
        .constructor("new:", B)
        .unwrap()
        .method("get", |b: &mut B| b.0 * 1000)
        .unwrap();
    let v = e
        .eval("a := TypeA new: 2. b := TypeB new: 3. s := 0. 1 to: 3 do: [:i | s := s + a get + b get]. s")
        .unwrap();
    assert_eq!(v.as_i64(), Some(3 * (2 + 3000)));
}

#[test]
fn class_side_primitives_through_a_cached_site_can_be_overridden() {
    let e = Engine::builder().check(false).build();
    let f = e.compile("Float pi > 3").unwrap();
    assert_eq!(e.display(&e.run(&f, &[]).unwrap()), "true");
    e.eval("Float class >> pi => 2").unwrap();
    assert_eq!(e.display(&e.run(&f, &[]).unwrap()), "false");
}
