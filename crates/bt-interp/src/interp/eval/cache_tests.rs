//! The send-site caches added for Value classes (`compile/class_send.rs` constructor entries,
//! getter sends on a local in `compile.rs`) follow a class that is extended or redefined at
//! runtime: every such change bumps the program epoch, and a site then answers what an
//! uncached send would.

use crate::interp::{Interpreter, InterpreterOptions};

/// The printString of `src`'s value, or the error kind.
fn show(vm: &Interpreter, src: &str) -> String {
    match vm.eval("t", &format!("({src}) printString")) {
        Ok(v) => vm.display(&v),
        Err(e) => format!("ERROR {}", e.kind()),
    }
}

#[test]
fn constructor_and_getter_sites_follow_redefinition() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval(
        "t",
        "Value subclass: P\n  field: a = 0\n  field: b = 0\n\n\
         Object subclass: M\n  class make: n => P a: n b: n + 1\n  \
         class second: n =>\n    p := P a: n b: n * 10\n    p b\n",
    )
    .unwrap();
    // Filled by the first calls, hit by the later ones.
    assert_eq!(
        show(&vm, "(1 to: 3) collect: [:i | M make: i]"),
        "#(P(a: 1, b: 2), P(a: 2, b: 3), P(a: 3, b: 4))"
    );
    assert_eq!(
        show(&vm, "(1 to: 3) collect: [:i | M second: i]"),
        "#(10, 20, 30)"
    );
    // A class-side method now answers `a:b:`; an instance method replaces the getter `b`.
    vm.eval("t", "P class >> a: x b: y => x * 100\nP >> b => #mine\n")
        .unwrap();
    assert_eq!(show(&vm, "M make: 2"), "200");
    vm.eval("t", "P class >> a: x b: y => self new\n").unwrap();
    assert_eq!(show(&vm, "M second: 2"), "#mine");
    // Redefined with the fields in another order: `a:b:` is no constructor any more.
    vm.eval("t", "Value subclass: P\n  field: b = 0\n  field: a = 0\n")
        .unwrap();
    let uncached = show(&vm, "P a: 1 b: 2");
    assert!(uncached.starts_with("ERROR"), "{uncached}");
    assert_eq!(show(&vm, "M make: 1"), uncached);
    // And back to a constructor with both fields: the site refills.
    vm.eval("t", "Value subclass: P\n  field: a = 0\n  field: b = 0\n")
        .unwrap();
    assert_eq!(show(&vm, "M make: 5"), "P(a: 5, b: 6)");
    assert_eq!(show(&vm, "M second: 5"), "50");
}

#[test]
fn self_send_and_tail_setter_sites_follow_redefinition() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval(
        "t",
        "Object subclass: F\n  \
         class fib: n => n < 2 ifTrue: [n] ifFalse: [(self fib: n - 1) + (self fib: n - 2)]\n\n\
         Value subclass: C\n  field: total = 0\n  add: n => self withTotal: self.total + n\n\n\
         Object subclass: R\n  class run: k =>\n    c := C new\n    \
         1 to: k do: [:i | c := c add: i]\n    c total\n",
    )
    .unwrap();
    // The self-send sites decide the guard inline; the in-place site records the setter.
    assert_eq!(show(&vm, "F fib: 15"), "610");
    assert_eq!(show(&vm, "R run: 10"), "55");
    // A method replaces the Value-class setter: the site's recorded field is not used.
    vm.eval("t", "C >> withTotal: x => C new\n").unwrap();
    assert_eq!(show(&vm, "R run: 10"), "0");
    // Integer `-` overridden after the self-send sites filled their entries: the argument
    // `n - 1` and the guard go through the override (every argument is 0, a leaf).
    vm.eval("t", "Integer >> - other => 0\n").unwrap();
    assert_eq!(show(&vm, "F fib: 15"), "0");
}

#[test]
fn append_of_an_integer_print_string_follows_redefinition() {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.eval(
        "t",
        "Object subclass: S\n  \
         class join: n =>\n    s := \"\"\n    k := 0 - n\n    \
         1 to: n do: [:i | s := s ++ i printString ++ \",\" ++ k printString ++ \";\"]\n    s\n  \
         class mixed: x =>\n    s := \"<\"\n    s := s ++ x printString ++ \">\"\n    s\n",
    )
    .unwrap();
    // Digits written in place, with signs and the extremes of a 64-bit Integer.
    assert_eq!(show(&vm, "S join: 3"), "\"1,-3;2,-3;3,-3;\"");
    assert_eq!(
        show(&vm, "S mixed: 9223372036854775807"),
        "\"<9223372036854775807>\""
    );
    assert_eq!(
        show(&vm, "S mixed: -9223372036854775807 - 1"),
        "\"<-9223372036854775808>\""
    );
    assert_eq!(show(&vm, "S mixed: 0"), "\"<0>\"");
    // Not a small Integer: the ordinary send.
    assert_eq!(
        show(&vm, "S mixed: 2 ** 70"),
        "\"<1180591620717411303424>\""
    );
    assert_eq!(show(&vm, "S mixed: 2.5"), "\"<2.5>\"");
    assert_eq!(show(&vm, "S mixed: #(1)"), "\"<#(1)>\"");
    // Integer's printString replaced after the sites were filled.
    vm.eval("t", "Integer >> printString => \"int\"\n").unwrap();
    assert_eq!(show(&vm, "S join: 2"), "\"int,int;int,int;\"");
    assert_eq!(show(&vm, "S mixed: 7"), "\"<int>\"");
}
