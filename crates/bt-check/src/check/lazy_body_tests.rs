//! Library method bodies parsed on first read (`ast::Body`, `syntax/parser/lazy.rs`) give the
//! tree and the diagnostics of the whole-file parse: on every file of the built-in library and
//! on sources with syntax errors in method bodies. (Here rather than in `syntax`: the library's
//! sources belong to this layer, `check::library`.)

use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Item, Member, MethodDecl, Module};
use crate::syntax::{parse_library, parse_with, Options};

const LIB: Options = Options {
    allow_primitives: true,
};

fn methods(m: &Module) -> Vec<&MethodDecl> {
    let mut out = Vec::new();
    for item in &m.items {
        match item {
            Item::Class(c) => {
                for mem in &c.members {
                    if let Member::Method(md) = mem {
                        out.push(md);
                    }
                }
            }
            Item::Method(sm) => out.push(&sm.method),
            _ => {}
        }
    }
    out
}

fn render(diags: &[Diagnostic]) -> Vec<String> {
    diags.iter().map(|d| format!("{d:?}")).collect()
}

/// Parses `src` both ways and asserts the same tree (spans included) and the same
/// diagnostics (the file's plus every body's); answers the lazy module.
fn same_both_ways(src: &'static str, opts: Options) -> (Module, usize) {
    let (eager, eager_diags) = parse_with(src, opts);
    let (lazy, mut lazy_diags) = parse_library(src, opts);
    let pending = methods(&lazy)
        .iter()
        .filter(|m| m.body.is_pending())
        .count();
    for m in methods(&lazy) {
        lazy_diags.extend(m.body.errors().iter().cloned());
    }
    lazy_diags.sort_by_key(|d| (d.span.start, d.span.end));
    assert_eq!(format!("{eager:#?}"), format!("{lazy:#?}"), "tree of {src}");
    assert_eq!(
        render(&eager_diags),
        render(&lazy_diags),
        "diagnostics of {src}"
    );
    (lazy, pending)
}

#[test]
fn the_library_parses_the_same_lazily() {
    let (mut decls, mut lazy) = (0, 0);
    for (_, src) in crate::check::library::STDLIB {
        let (m, pending) = same_both_ways(src, LIB);
        let bodies = methods(&m).iter().filter(|m| m.primitive.is_none()).count();
        assert_eq!(
            pending, bodies,
            "every non-primitive body waits to be parsed"
        );
        decls += methods(&m).len();
        lazy += pending;
    }
    assert!(decls > 1000 && lazy > 100, "{decls} methods, {lazy} lazy");
}

#[test]
fn the_shared_library_trees_start_unparsed() {
    let parsed = crate::check::library::parsed();
    let all: Vec<&MethodDecl> = parsed.iter().flat_map(|m| methods(m)).collect();
    let lazy = all.iter().filter(|m| m.primitive.is_none()).count();
    assert!(lazy > 100, "{lazy}");
    // A body read answers statements; the declaration is whole without it.
    let m = all
        .iter()
        .find(|m| m.primitive.is_none() && !m.source.is_empty())
        .unwrap();
    assert!(!m.selector.is_empty());
    assert!(!m.body.is_empty());
    assert!(m.body.errors().is_empty());
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

#[test]
fn body_syntax_errors_are_the_eager_ones() {
    let cases = [
        // An error in the middle of a body, another member after it.
        "Object subclass: A\n  foo => 1 + + 2\n  bar => 3\n",
        // A keyword at the end of the last line before the next member: "found the end
        // of the line".
        "Object subclass: A\n  foo => self at:\n  bar => 3\n",
        // The same at the end of the file: "found end of input".
        "Object subclass: A\n  foo => self at:",
        // Tokens left in the region, a stray closing bracket.
        "Object subclass: A\n  foo =>\n    x := 1\n    )\n  bar => 2\n",
        // A body of dots only (E0305 from the body), a body that is empty (E0305 with the
        // file).
        "Object subclass: A\n  foo => .\n  bar =>\n  baz => 1\n",
        // A negative literal glued to a name on the `=>` line (the hint reads the line).
        "Object subclass: A\n  foo => x-1\n",
        "Object subclass: A\n  foo: a => a-1 foo\n",
        // Standalone methods, class side, with and without errors.
        "Integer >> double => self * 2\nInteger class >> bad => [:x | x +\nInteger >> ok => 1\n",
        // Multi-line strings and blocks inside a body, a doc comment inside a body (W0601).
        "Object subclass: A\n  foo =>\n    s := \"a\nb {1 +}\"\n    /// stray\n    [:x |\n      x ++ s]\n  bar => #(1, 2\n",
        // Lexer errors inside a body (reported with the file).
        "Object subclass: A\n  foo => 'single' + $\n  bar => 1 ~ é\n",
        // Member-level errors and nested classes of members.
        "Object subclass: A\n  field: x = 1\n  class make => self new\n  sealed internal foo :: Integer -> Integer => 1 +\n",
        "Value subclass: P\n  field: x = 0\n  + other => P new x: self x + other x\n  printString =>\n    \"P({x})\"\n",
    ];
    let mut lazy = 0;
    for src in cases {
        lazy += same_both_ways(leak(src), Options::default()).1;
        lazy += same_both_ways(leak(src), LIB).1;
    }
    // Irregular regions (stray or unclosed brackets, lexer errors) are parsed with the file.
    assert!(lazy > 20, "{lazy} lazy bodies");
}

#[test]
fn a_lazy_body_with_an_error_reports_it_when_read() {
    let src = leak("Object subclass: A\n  good => 1\n  bad => 1 + + 2\n  last => 2\n");
    let (m, diags) = parse_library(src, Options::default());
    assert!(diags.is_empty(), "{diags:?}");
    let ms = methods(&m);
    assert_eq!(ms.len(), 3, "every declaration is there");
    assert!(ms.iter().all(|m| m.body.is_pending()));
    assert!(ms[0].body.errors().is_empty());
    let errs = ms[1].body.errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].code, "E0101");
    assert_eq!(&src[errs[0].span.range()], "+");
    assert!(
        ms[2].body.is_pending(),
        "reading one body parses only that one"
    );
}
