//! Printing nested values: the text of a deeply nested container is exact (printed in one
//! pass, linear in its size), and user `printString` overrides still apply at every depth.

use bt::Engine;

/// `#(#(#(… #() …)))` nested `n` deep.
fn nested_text(n: usize, open: &str, close: &str) -> String {
    format!("{}{}", open.repeat(n + 1), close.repeat(n + 1))
}

#[test]
fn deeply_nested_containers_print_exactly() {
    let e = Engine::builder().max_depth(100_000).build();
    for (make, open, close) in [("#(x)", "#(", ")"), ("#[x]", "#[", "]")] {
        let src = format!("x := {open}{close}\n1 to: 3000 do: [:i | x := {make}]\nx printString");
        let v = e.eval(&src).unwrap_or_else(|err| panic!("{make}: {err}"));
        assert_eq!(
            v.as_str(),
            Some(nested_text(3000, open, close).as_str()),
            "{make}"
        );
    }
    let v = e
        .eval("d := #{}\n1 to: 2000 do: [:i | d := #{#k => d}]\nd printString size")
        .unwrap();
    assert_eq!(v.as_i64(), Some(3 + 2000 * 9));
}

#[test]
fn overrides_apply_inside_nested_containers() {
    let e = Engine::new();
    let src = "Value subclass: P\n  field: n = 0\n  printString => \"P{self n}\"\n\n\
               x := #(P new)\n1 to: 50 do: [:i | x := #(x, (P n: i), #[i])]\nx printString";
    let v = e.eval(src).unwrap();
    let s = v.as_str().unwrap().to_string();
    assert!(s.starts_with("#(#(#("), "{s}");
    assert!(s.contains("#(#(P0), P1, #[1])"), "{s}");
    assert!(s.ends_with(", P50, #[50])"), "{s}");
    assert!(!s.contains("n:"), "{s}");
}
