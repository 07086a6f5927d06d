//! The front end: tokens (a hand-written scanner checked against a logos automaton), the parser (hand-written recursive descent with recovery),
//! the AST with byte spans, and a canonical AST dump for golden tests.
//!
//! ```text
//! source ─▶ lexer::lex (tokens with line/column, doc comments aside)
//!        ─▶ parser (fenced recursive descent; one run reports every syntax error)
//!        ─▶ ast::Module + Vec<Diagnostic>
//! ```
//!
//! Entry points: [`parse`] (user code), [`parse_with`] (options such as `@primitive` bodies for
//! the built-in library), [`needs_more`] and [`line_continues`] (multi-line input gathering
//! for the REPL and the test runner), [`dump::dump_module`] (`bt parse --ast`).

pub mod ast;
pub mod dump;
pub mod image;
pub mod lexer;
mod parser;
pub(crate) mod scan;
pub mod token;

/// For the front end's tests: calls `f` with the text of every file below `dir` whose
/// extension is one of `exts` (the project's sources as a corpus).
#[cfg(test)]
pub(crate) fn visit_sources(dir: &std::path::Path, exts: &[&str], f: &mut dyn FnMut(&str)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit_sources(&p, exts, f);
        } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            if let Ok(s) = std::fs::read_to_string(&p) {
                f(&s);
            }
        }
    }
}

pub use parser::Options;

use crate::diagnostic::Diagnostic;
use token::Tok;

/// Parses a user source file: `@primitive`/`@intrinsic` bodies are errors (E0308).
pub fn parse(src: &str) -> (ast::Module, Vec<Diagnostic>) {
    parser::parse_module(src, Options::default())
}

/// Parses with explicit options (the built-in library sets `allow_primitives`).
pub fn parse_with(src: &str, opts: Options) -> (ast::Module, Vec<Diagnostic>) {
    parser::parse_module(src, opts)
}

/// Parses a file of the built-in library (`check::library::parsed`): like [`parse_with`],
/// but each method body is parsed on first read ([`ast::Body`]); the answered diagnostics
/// leave out those of method bodies, which [`ast::Body::errors`] gives.
pub fn parse_library(src: &'static str, opts: Options) -> (ast::Module, Vec<Diagnostic>) {
    parser::parse_library(src, opts)
}

/// Whether `src` is syntactically incomplete: an open bracket, an unterminated string,
/// comment or quoted symbol, or a last token that needs a continuation (a binary operator, a
/// keyword, `:=`, `::`, `=>`, `->`, `,`, `;` or `^`). Used to gather multi-line input.
pub fn needs_more(src: &str) -> bool {
    let lexed = lexer::lex(src);
    for d in &lexed.diags {
        if d.message.starts_with("unterminated") {
            return true;
        }
    }
    let mut depth: i64 = 0;
    let mut last = Tok::Eof;
    for t in &lexed.tokens {
        match t.kind {
            Tok::Eof => break,
            k if k.is_open() || k == Tok::ShiftLeft => depth += 1,
            k if k.is_close() => depth -= 1,
            Tok::ShiftRight if depth > 0 => depth -= 1,
            _ => {}
        }
        last = t.kind;
    }
    if depth > 0 {
        return true;
    }
    // A string whose interpolation never closed was lexed as plain text: re-check.
    if last == Tok::Str {
        let t = lexed.tokens[lexed.tokens.len() - 2];
        if lexer::scan_string(src.as_bytes(), t.start as usize + 1, true).is_err() {
            return true;
        }
    }
    matches!(
        last,
        Tok::BinOp
            | Tok::Keyword
            | Tok::Assign
            | Tok::ColonColon
            | Tok::FatArrow
            | Tok::Arrow
            | Tok::ShiftRight
            | Tok::Comma
            | Tok::Semi
            | Tok::Caret
    )
}

/// Whether a line starting with `next_line` continues the previous expression: it starts with a binary operator, a keyword, `;`, or a closing bracket.
pub fn line_continues(next_line: &str) -> bool {
    let lexed = lexer::lex(next_line);
    match lexed.tokens.first().map(|t| t.kind) {
        Some(Tok::BinOp | Tok::Arrow | Tok::ShiftRight | Tok::Keyword | Tok::Semi) => true,
        Some(k) => k.is_close(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_more_cases() {
        assert!(needs_more("x := #(1,"));
        assert!(needs_more("\"abc"));
        assert!(needs_more("/* open"));
        assert!(needs_more("3 +"));
        assert!(needs_more("d at: 1 put:"));
        assert!(needs_more("x :="));
        assert!(needs_more("foo => "));
        assert!(needs_more("a foo;"));
        assert!(needs_more("[:x |"));
        assert!(!needs_more("3 + 4"));
        assert!(!needs_more("x := #(1, 2)"));
        assert!(!needs_more("\"a {x} b\""));
        assert!(!needs_more(""));
    }

    #[test]
    fn line_continues_cases() {
        assert!(line_continues("  ++ \"b\""));
        assert!(line_continues("withId: #x"));
        assert!(line_continues("; cr"));
        assert!(line_continues(") foo"));
        assert!(!line_continues("foo bar"));
        assert!(!line_continues("-1"));
        assert!(!line_continues("^ x"));
        assert!(!line_continues(""));
    }
}

#[cfg(test)]
mod decl_tests {
    use super::ast::*;
    use super::*;

    fn class(src: &str, opts: Options) -> (ClassDecl, Vec<Diagnostic>) {
        let (m, d) = parse_with(src, opts);
        match m.items.into_iter().next() {
            Some(Item::Class(c)) => (c, d),
            other => panic!("expected a class, got {other:?}"),
        }
    }

    fn method(c: &ClassDecl, i: usize) -> &MethodDecl {
        match &c.members[i] {
            Member::Method(m) => m,
            other => panic!("expected a method, got {other:?}"),
        }
    }

    #[test]
    fn primitive_bodies_in_the_builtin_library() {
        let src = "Object subclass: I\n  + other => @primitive intAdd\n  class new => @primitive\n  size => @intrinsic \"size\"\n";
        let (c, d) = class(
            src,
            Options {
                allow_primitives: true,
            },
        );
        assert!(d.is_empty(), "{d:?}");
        let names: Vec<_> = (0..3)
            .map(|i| method(&c, i).primitive.as_ref().map(|p| p.name.clone()))
            .collect();
        assert_eq!(
            names,
            vec![
                Some("intAdd".into()),
                Some("new".into()),
                Some("size".into())
            ]
        );
        assert!(method(&c, 0).body.is_empty());
        // In user code the same file is an E0308 per primitive.
        let (_, d) = class(src, Options::default());
        assert_eq!(d.iter().filter(|d| d.code == "E0308").count(), 3, "{d:?}");
    }

    #[test]
    fn method_source_and_spans() {
        let src = "Object subclass: A\n  foo: x =>\n    y := x + 1\n    y\n  bar => 2\n";
        let (c, d) = class(src, Options::default());
        assert!(d.is_empty(), "{d:?}");
        let m = method(&c, 0);
        assert_eq!(m.source, "foo: x =>\n    y := x + 1\n    y");
        assert_eq!(&src[m.span.range()], m.source);
        assert_eq!(&src[m.selector_span.range()], "foo:");
        assert_eq!(&src[m.params[0].name.span.range()], "x");
        assert_eq!(method(&c, 1).source, "bar => 2");
        assert_eq!(&src[c.name.span.range()], "A");
        let Some(Stmt {
            kind: StmtKind::Expr(e),
            ..
        }) = m.body.first()
        else {
            panic!()
        };
        assert_eq!(&src[e.span.range()], "y := x + 1");
    }

    #[test]
    fn expression_spans_cover_their_text() {
        let src = "r := d at: 1 + 2 put: #(3, 4)\n";
        let (m, d) = parse(src);
        assert!(d.is_empty());
        let Item::Stmt(Stmt {
            kind: StmtKind::Expr(e),
            ..
        }) = &m.items[0]
        else {
            panic!()
        };
        assert_eq!(&src[e.span.range()], "r := d at: 1 + 2 put: #(3, 4)");
        let ExprKind::Assign { value, .. } = &e.kind else {
            panic!()
        };
        let ExprKind::Send {
            selector,
            selector_span,
            args,
            ..
        } = &value.kind
        else {
            panic!()
        };
        assert_eq!(selector, "at:put:");
        assert_eq!(&src[selector_span.range()], "at: 1 + 2 put:");
        assert_eq!(&src[args[0].span.range()], "1 + 2");
        assert_eq!(&src[args[1].span.range()], "#(3, 4)");
    }
}
