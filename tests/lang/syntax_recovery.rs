//! Recovery: one run reports every independent syntax error, each once, with its own span,
//! and no follow-on noise.

use bt::diagnostic::line_col;
use bt::syntax;

/// The text under a diagnostic's span.
fn under<'a>(src: &'a str, d: &bt::diagnostic::Diagnostic) -> &'a str {
    &src[d.span.range()]
}

#[test]
fn five_independent_errors_are_all_reported_with_spans() {
    let src = "\
Object subclass: Broken
  one => #(1 2)
  two: a : Integer => a
  three => 'single'

x := y-1
z := a = b
ok := 1 + 2
";
    let (module, diags) = syntax::parse(src);
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 5, "{diags:#?}");
    let got: Vec<(usize, usize, &str, &str)> = errors
        .iter()
        .map(|d| {
            let (l, c) = line_col(src, d.span.start);
            (l, c, under(src, d), d.code)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (2, 14, "2", "E0101"),
            (3, 10, ":", "E0101"),
            (4, 12, "'single'", "E0101"),
            (6, 7, "-1", "E0101"),
            (7, 8, "=", "E0101"),
        ]
    );
    // The good parts survive: the class with its three methods and the last statement.
    assert_eq!(module.items.len(), 4, "{:#?}", module.items);
    match &module.items[0] {
        syntax::ast::Item::Class(c) => assert_eq!(c.members.len(), 3),
        other => panic!("expected the class, got {other:?}"),
    }
}

#[test]
fn errors_in_every_member_are_reported_once_each() {
    let src = "\
Object subclass: A
  a => (1 +
  b => #(1 2 3)
  c => [:x | x
  d => 'q'
  e => 5
";
    let (module, diags) = syntax::parse(src);
    let lines: Vec<usize> = diags
        .iter()
        .map(|d| line_col(src, d.span.start).0)
        .collect();
    assert_eq!(lines, vec![2, 3, 4, 5], "{diags:#?}");
    let syntax::ast::Item::Class(c) = &module.items[0] else {
        panic!()
    };
    // b, d, e and the recovered members keep their selectors.
    let sels: Vec<&str> = c
        .members
        .iter()
        .filter_map(|m| match m {
            syntax::ast::Member::Method(m) => Some(m.selector.as_str()),
            _ => None,
        })
        .collect();
    assert!(sels.contains(&"e"), "{sels:?}");
}

#[test]
fn top_level_statements_resynchronise_at_line_ends() {
    let src = "x := 1 + * 2\ny := 2\nz := (3\nw := 4\nv := #(1 2)\nu := 5\n";
    let (module, diags) = syntax::parse(src);
    let lines: Vec<usize> = diags
        .iter()
        .map(|d| line_col(src, d.span.start).0)
        .collect();
    assert_eq!(lines, vec![1, 3, 5], "{diags:#?}");
    let dump = syntax::dump::dump_module(&module);
    assert!(
        dump.contains("(:= y 2)") && dump.contains("(:= w 4)") && dump.contains("(:= u 5)"),
        "{dump}"
    );
}
