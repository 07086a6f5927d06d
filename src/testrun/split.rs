//! Splits an expression file into cases, `@load` lines, declarations and
//! problems, keeping line numbers so reports and blessing point at the source.
//!
//! Rules: lines are trimmed for classification; blank lines and `//` comments are skipped
//! except `// =>` and `// @load PATH`; `@expect CAT` applies to the next expression; an
//! expression extends while it is incomplete or the next line continues it. A class
//! definition, standalone method, protocol or type alias starting in column 0 also takes the
//! indented lines below it (its members) and needs no expectation.

use super::expect::Expectation;
use super::scan::{line_continues, needs_more};

/// One entry of an expression file, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `// @load PATH` on `line`.
    Load { line: usize, path: String },
    /// An expression with its expectation.
    Case(Case),
    /// A declaration with no expectation: loaded, not a case.
    Decl {
        line: usize,
        source: String,
        name: String,
    },
    /// An expression that will not run, with the reason.
    Problem {
        line: usize,
        name: String,
        message: String,
    },
}

/// An expression and the `// =>` line after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// 1-based first line of the expression.
    pub line: usize,
    /// The expression's lines as written (comments included), joined with `\n`.
    pub(crate) source: String,
    /// The expression for reports: its non-blank lines, trimmed, joined with `\n`.
    pub(crate) name: String,
    /// `@expect` category applying to it, with the line of the directive.
    pub expect_category: Option<(usize, String)>,
    /// 1-based line of the `// =>` line.
    pub expect_line: usize,
    pub expectation: Expectation,
}

impl Case {
    /// The source to evaluate: blank lines in front so positions match the file, the
    /// `@expect` directive (if any) on the line before the expression.
    pub(crate) fn eval_source(&self) -> String {
        padded(
            self.line,
            &self.source,
            self.expect_category.as_ref().map(|c| c.1.as_str()),
        )
    }
}

/// `source` preceded by enough line ends that it starts on `line`, with an optional
/// `@expect CAT` directive on the line just before.
pub(crate) fn padded(line: usize, source: &str, expect: Option<&str>) -> String {
    let mut s = String::new();
    let blank = line.saturating_sub(1);
    match expect {
        Some(cat) if blank >= 1 => {
            s.push_str(&"\n".repeat(blank - 1));
            s.push_str("@expect ");
            s.push_str(cat);
            s.push('\n');
        }
        Some(cat) => {
            s.push_str("@expect ");
            s.push_str(cat);
            s.push('\n');
        }
        None => s.push_str(&"\n".repeat(blank)),
    }
    s.push_str(source);
    s
}

fn is_expectation(t: &str) -> bool {
    t.starts_with("// =>")
}

fn is_load(t: &str) -> Option<String> {
    let rest = t.strip_prefix("//")?.trim_start();
    let path = rest.strip_prefix("@load")?;
    if !path.starts_with(char::is_whitespace) {
        return None;
    }
    let path = path.trim();
    (!path.is_empty()).then(|| path.to_string())
}

/// A `//` comment that is neither an expectation nor a `@load` line.
fn is_plain_comment(t: &str) -> bool {
    t.starts_with("//") && !is_expectation(t) && is_load(t).is_none()
}

fn is_skippable(t: &str) -> bool {
    t.is_empty() || is_plain_comment(t)
}

/// True when a line (as written, untrimmed) starts a declaration: a class header, a
/// standalone method, a protocol or a type alias, in column 0.
fn is_decl_header(raw: &str) -> bool {
    if raw.starts_with(char::is_whitespace) {
        return false;
    }
    class_header(raw).is_some()
        || standalone_method(raw)
        || raw.starts_with("Protocol define:")
        || type_alias(raw)
}

/// `[modifiers] Super[(Args)] subclass: Name` → (superclass, name).
fn class_header(raw: &str) -> Option<(String, String)> {
    if raw.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = raw;
    loop {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if matches!(word.as_str(), "abstract" | "sealed" | "typed" | "internal")
            && rest[word.len()..].starts_with(char::is_whitespace)
        {
            rest = rest[word.len()..].trim_start();
            continue;
        }
        break;
    }
    let sup: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '@')
        .collect();
    if sup.is_empty() || !sup.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    rest = &rest[sup.len()..];
    if rest.starts_with('(') {
        let mut depth = 0;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end?..];
    }
    let rest = rest.trim_start().strip_prefix("subclass:")?.trim_start();
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let sup = sup.rsplit('@').next().unwrap_or(&sup).to_string();
    Some((sup, name))
}

/// `Name >> header => …` or `Name class >> header => …` (not `Foo >> #sel`).
fn standalone_method(raw: &str) -> bool {
    let name: String = raw
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return false;
    }
    let mut rest = raw[name.len()..].trim_start();
    if let Some(r) = rest.strip_prefix("class") {
        if r.starts_with(char::is_whitespace) {
            rest = r.trim_start();
        }
    }
    let Some(rest) = rest.strip_prefix(">>") else {
        return false;
    };
    let rest = rest.trim_start();
    !rest.starts_with('#') && rest.contains("=>")
}

fn type_alias(raw: &str) -> bool {
    let rest = raw
        .strip_prefix("internal ")
        .map(str::trim_start)
        .unwrap_or(raw);
    let Some(rest) = rest.strip_prefix("type ") else {
        return false;
    };
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    name.starts_with(|c: char| c.is_ascii_uppercase()) && rest.contains('=')
}

/// Splits `src` into entries. Line numbers are 1-based and count from `first_line`.
pub fn split(src: &str) -> Vec<Entry> {
    let lines: Vec<&str> = src.lines().map(|l| l.trim_end_matches('\r')).collect();
    split_lines(
        &lines
            .iter()
            .enumerate()
            .map(|(i, l)| (i + 1, *l))
            .collect::<Vec<_>>(),
    )
}

/// Splits numbered lines (the numbering need not be contiguous: doc examples).
pub(crate) fn split_lines(lines: &[(usize, &str)]) -> Vec<Entry> {
    let mut out = Vec::new();
    let n = lines.len();
    let mut i = 0;
    let mut pending_expect: Option<(usize, String)> = None;
    while i < n {
        let (lno, raw) = lines[i];
        let t = raw.trim();
        if t.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = is_load(t) {
            out.push(Entry::Load { line: lno, path });
            i += 1;
            continue;
        }
        if is_expectation(t) {
            out.push(Entry::Problem {
                line: lno,
                name: t.to_string(),
                message: "expectation has no expression before it".into(),
            });
            i += 1;
            continue;
        }
        if t.starts_with("//") {
            i += 1;
            continue;
        }
        if t.starts_with("/*") && !t.contains("*/") {
            // A block comment on its own lines.
            i += 1;
            while i < n && !lines[i].1.contains("*/") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some(cat) = t.strip_prefix("@expect") {
            if cat.starts_with(char::is_whitespace) || cat.is_empty() {
                pending_expect = Some((lno, cat.trim().to_string()));
                i += 1;
                continue;
            }
        }
        // An expression or a declaration starts here.
        let start = i;
        let decl = is_decl_header(raw);
        let mut j = i + 1;
        if decl {
            let mut last_content = i;
            while j < n {
                let (_, r) = lines[j];
                let tt = r.trim();
                if is_expectation(tt) {
                    break;
                }
                if tt.is_empty() {
                    j += 1;
                    continue;
                }
                if !r.starts_with(char::is_whitespace) {
                    break;
                }
                last_content = j;
                j += 1;
            }
            j = last_content + 1;
        } else {
            let mut acc = raw.to_string();
            loop {
                if needs_more(&acc) {
                    if j >= n || is_expectation(lines[j].1.trim()) {
                        break;
                    }
                    acc.push('\n');
                    acc.push_str(lines[j].1);
                    j += 1;
                    continue;
                }
                let mut k = j;
                while k < n && is_skippable(lines[k].1.trim()) {
                    k += 1;
                }
                if k < n && line_continues(lines[k].1) {
                    for l in &lines[j..=k] {
                        acc.push('\n');
                        acc.push_str(l.1);
                    }
                    j = k + 1;
                    continue;
                }
                break;
            }
        }
        let body = &lines[start..j];
        let source = join_numbered(body);
        let name = body
            .iter()
            .map(|l| l.1.trim())
            .filter(|l| !l.is_empty() && !is_plain_comment(l))
            .collect::<Vec<_>>()
            .join("\n");
        let mut k = j;
        while k < n && is_skippable(lines[k].1.trim()) {
            k += 1;
        }
        let expect_category = pending_expect.take();
        if k < n && is_expectation(lines[k].1.trim()) {
            let expectation = Expectation::parse_line(lines[k].1).expect("checked prefix");
            out.push(Entry::Case(Case {
                line: lines[start].0,
                source,
                name,
                expect_category,
                expect_line: lines[k].0,
                expectation,
            }));
            i = k + 1;
        } else if decl {
            let name = body[0].1.trim().to_string();
            out.push(Entry::Decl {
                line: lines[start].0,
                source,
                name,
            });
            i = j;
        } else {
            out.push(Entry::Problem {
                line: lines[start].0,
                name,
                message: "expression has no expectation and will not be run".into(),
            });
            i = j;
        }
    }
    out
}

/// Joins numbered lines, inserting blank lines where the numbering skips (so a source built
/// from doc-comment lines keeps relative positions).
fn join_numbered(lines: &[(usize, &str)]) -> String {
    let mut s = String::new();
    let mut prev: Option<usize> = None;
    for &(n, l) in lines {
        if let Some(p) = prev {
            for _ in p..n {
                s.push('\n');
            }
        }
        s.push_str(l);
        prev = Some(n);
    }
    s
}

/// True when a `.bt` file is an expression file: some line outside `///` comments is a
/// `// =>` expectation.
pub(crate) fn has_expectations(src: &str) -> bool {
    src.lines().any(|l| is_expectation(l.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cases(src: &str) -> Vec<Case> {
        split(src)
            .into_iter()
            .filter_map(|e| match e {
                Entry::Case(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_spec_example() {
        let src = "// @load fixtures/counter.bt\nc := Counter spawn\n// => _\nc increment\n// => 1\n#(1, 2) collect: [:x | x * 10]\n// => [10,20]\n\"a\" + 1\n// => ERROR: does_not_understand\nc\n// => Actor(Counter, _)\n";
        let entries = split(src);
        assert_eq!(
            entries[0],
            Entry::Load {
                line: 1,
                path: "fixtures/counter.bt".into()
            }
        );
        let cs = cases(src);
        assert_eq!(cs.len(), 5);
        assert_eq!(cs[0].source, "c := Counter spawn");
        assert_eq!(cs[0].line, 2);
        assert_eq!(cs[0].expect_line, 3);
        assert_eq!(
            cs[3].expectation,
            Expectation::Error("does_not_understand".into())
        );
        assert_eq!(
            cs[4].expectation,
            Expectation::Value("Actor(Counter, _)".into())
        );
    }

    #[test]
    fn multi_line_expressions() {
        let src = "x := #(1,\n  2,\n  3)\n// => [1,2,3]\n\"a\"\n  ++ \"b\"\n// => ab\nSupervisionSpec new\n  withId: #r\n  // a comment inside\n  withRestart: #t\n// => _\n1 to: 3 do: [:i |\n\n  i]\n// => nil\n";
        let cs = cases(src);
        assert_eq!(cs.len(), 4);
        assert_eq!(cs[0].source, "x := #(1,\n  2,\n  3)");
        assert_eq!(cs[1].name, "\"a\"\n++ \"b\"");
        assert_eq!(
            cs[2].name,
            "SupervisionSpec new\nwithId: #r\nwithRestart: #t"
        );
        assert_eq!(cs[2].expect_line, 12);
        assert_eq!(cs[3].source, "1 to: 3 do: [:i |\n\n  i]");
    }

    #[test]
    fn several_statements_one_expression() {
        let cs = cases("a := 1. b := 2. a + b\n// => 3\n");
        assert_eq!(cs[0].source, "a := 1. b := 2. a + b");
    }

    #[test]
    fn missing_expectation_and_incomplete() {
        let entries = split("x := 3\ny := 4\n// => 4\n(1 +\n// => ERROR: parse\n");
        assert!(
            matches!(&entries[0], Entry::Problem { line: 1, message, .. } if message.contains("no expectation"))
        );
        assert!(matches!(&entries[1], Entry::Case(c) if c.source == "y := 4"));
        // An expectation reached while incomplete still makes a case (it fails to parse).
        assert!(matches!(&entries[2], Entry::Case(c) if c.source == "(1 +" && c.expect_line == 5));
    }

    #[test]
    fn expect_directive_and_padding() {
        let cs = cases("\n@expect dnu\n3 foo\n// => ERROR: does_not_understand\n");
        assert_eq!(cs[0].expect_category, Some((2, "dnu".into())));
        assert_eq!(cs[0].eval_source(), "\n@expect dnu\n3 foo");
        let cs = cases("@expect dnu\n3 foo\n// => _\n");
        assert_eq!(cs[0].eval_source(), "@expect dnu\n3 foo");
        let cs = cases("\n\n\n3\n// => 3\n");
        assert_eq!(cs[0].eval_source(), "\n\n\n3");
    }

    #[test]
    fn declarations() {
        let src = "/// A counter.\nActor subclass: Counter\n  state: n = 0\n\n  increment =>\n    self.n := self.n + 1\n\nc := Counter spawn\n// => _\nCounter >> twice => self increment. self increment\n(Counter >> #twice) selector\n// => twice\nObject subclass: Foo\n  bar => 1\n// => Foo\n";
        let entries = split(src);
        match &entries[0] {
            Entry::Decl { line, source, name } => {
                assert_eq!(*line, 2);
                assert_eq!(name, "Actor subclass: Counter");
                assert!(source.ends_with("self.n := self.n + 1"));
            }
            e => panic!("unexpected {e:?}"),
        }
        assert!(matches!(&entries[1], Entry::Case(c) if c.source == "c := Counter spawn"));
        assert!(matches!(&entries[2], Entry::Decl { line: 10, .. }));
        assert!(
            matches!(&entries[3], Entry::Case(c) if c.source == "(Counter >> #twice) selector")
        );
        assert!(
            matches!(&entries[4], Entry::Case(c) if c.source == "Object subclass: Foo\n  bar => 1")
        );
    }

    #[test]
    fn class_headers() {
        assert_eq!(
            class_header("TestCase subclass: CounterTest"),
            Some(("TestCase".into(), "CounterTest".into()))
        );
        assert_eq!(
            class_header("abstract sealed Collection(E) subclass: Bag(E)"),
            Some(("Collection".into(), "Bag".into()))
        );
        assert_eq!(
            class_header("pkg@Base subclass: X"),
            Some(("Base".into(), "X".into()))
        );
        assert_eq!(class_header("  TestCase subclass: Nope"), None);
        assert_eq!(class_header("x := 3"), None);
        assert!(is_decl_header("Foo class >> make: x => self new"));
        assert!(!is_decl_header("Foo >> #bar"));
        assert!(is_decl_header("type Strategy = #a | #b"));
        assert!(is_decl_header("Protocol define: Comparable"));
    }

    #[test]
    fn comments_and_blank_lines_between() {
        let cs = cases("3 + 4\n\n// the answer\n// => 7\n/* block\ncomment */\n5\n// => 5\n");
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0].expect_line, 4);
        assert_eq!(cs[1].line, 7);
    }

    #[test]
    fn detection_ignores_doc_comments() {
        assert!(!has_expectations(
            "/// 3 + 4\n/// // => 7\nObject subclass: A\n"
        ));
        assert!(has_expectations("3 + 4\n// => 7\n"));
    }
}
