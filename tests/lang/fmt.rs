//! `bt fmt` over every golden source, example and built-in library file: formatting twice
//! changes nothing, the formatted text parses to the same AST (the `bt parse --ast` dump),
//! and every line keeps its text and comments (only indentation and blank lines change).
//! (Files with syntax errors — parse/err goldens, expression files with error cases — are laid
//! out too; their diagnostics must not change.)

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "bt" || x == "btscript") {
            out.push(p);
        }
    }
}

#[test]
fn formatting_is_idempotent_and_keeps_the_ast() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["tests/golden", "examples", "stdlib", "docs", "bench"] {
        walk(&root.join(d), &mut files);
    }
    files.sort();
    assert!(files.len() > 300, "found only {} files", files.len());
    let (mut formatted, mut refused, mut changed, mut with_errors) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let library = f.parent().is_some_and(|d| d.ends_with("stdlib"));
        let opts = bt::syntax::Options {
            allow_primitives: library,
        };
        let (before, diags) = bt::syntax::parse_with(&src, opts);
        let once = match bt::fmt::format_source(&src, library) {
            Ok(s) => s,
            Err(e) => {
                refused += 1;
                problems.push(format!("{}: refused: {}", f.display(), e.0));
                continue;
            }
        };
        with_errors += usize::from(diags.iter().any(|d| d.is_error()));
        formatted += 1;
        changed += usize::from(once != src);
        let twice = match bt::fmt::format_source(&once, library) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!(
                    "{}: the formatted text is refused: {}",
                    f.display(),
                    e.0
                ));
                continue;
            }
        };
        if twice != once {
            problems.push(format!("{}: not idempotent", f.display()));
        }
        // Tokens never move between lines and comments stay: the non-blank lines, without
        // their leading and trailing blanks, are the same lines in the same order.
        let words = |t: &str| -> Vec<String> {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        };
        if words(&src) != words(&once) {
            problems.push(format!(
                "{}: a line's text or a comment changed",
                f.display()
            ));
        }
        let (after, diags2) = bt::syntax::parse_with(&once, opts);
        if bt::syntax::dump::dump_module(&before) != bt::syntax::dump::dump_module(&after) {
            problems.push(format!("{}: the AST changed", f.display()));
        }
        let msgs = |d: &[bt::diagnostic::Diagnostic]| -> Vec<String> {
            d.iter().map(|d| d.message.clone()).collect()
        };
        if msgs(&diags) != msgs(&diags2) {
            problems.push(format!("{}: the diagnostics changed", f.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(formatted > 400, "{formatted} formatted");
    eprintln!(
        "{formatted} formatted ({changed} would change, {with_errors} with syntax errors), {refused} refused"
    );
}
