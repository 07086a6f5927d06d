//! `Parser::lone_atom` (the short cut for a literal or variable nothing continues) against
//! the full descent: the same tree (`Debug`, spans included) and the same diagnostics on
//! every parse golden, example, test and library file, and on snippets at its edges.

use std::cell::Cell;

thread_local! {
    /// Turns the short cut off on this thread.
    pub(crate) static OFF: Cell<bool> = const { Cell::new(false) };
}

fn both_ways(src: &str) {
    let fast = crate::syntax::parse(src);
    OFF.with(|o| o.set(true));
    let slow = crate::syntax::parse(src);
    OFF.with(|o| o.set(false));
    assert_eq!(
        format!("{:?}", fast.0),
        format!("{:?}", slow.0),
        "tree of {src:?}"
    );
    assert_eq!(
        format!("{:?}", fast.1),
        format!("{:?}", slow.1),
        "diagnostics of {src:?}"
    );
}

fn visit(dir: &std::path::Path, f: &mut dyn FnMut(&str)) {
    crate::syntax::visit_sources(dir, &["bt", "btscript"], f)
}

#[test]
fn the_short_cut_gives_the_descents_trees_and_diagnostics() {
    let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut n = 0;
    for d in ["tests", "examples", "bench", "stdlib"] {
        visit(&root.join(d), &mut |s| {
            both_ways(s);
            n += 1;
        });
    }
    assert!(n > 100, "only {n} files");
    for s in [
        "x",
        "x y",
        "x\ny",
        "3 foo",
        "3\nfoo",
        "x := 3",
        "x :: Integer := 3",
        "3 := x",
        "#(1, x, \"a\", $c, #s, 2.5)",
        "x; y",
        "3; foo",
        "x foo; bar",
        "nil",
        "self",
        "self.x",
        "self.x := 1",
        "super",
        "x + 1",
        "x\n  + 1",
        "x at: 1",
        "x\n  at: 1",
        "#{#a => b, #c => 1}",
        "[:a | a]",
        "(x)",
        "f := [x]",
        "x.",
        "x!",
        "3 4",
        "\"a {x} b\"",
        "x -> y",
        "x >> y",
        "x << y",
        "#[1, 2]",
        "{a, b} := t",
        "x match: [1 -> 2]",
        "Object subclass: A\n  foo => x\n  bar => 3\n",
        "x\nFoo >> bar => 1",
    ] {
        both_ways(s);
    }
}
