//! Warnings about `// =>` lines that `bt test` will not run: an expectation written
//! after code on the same line (`x foo   // => 3`) is a plain comment in a `.bt` file, and a
//! TestCase suite runs its test methods, not its `// =>` lines. Without a warning such a file
//! reports `0 passed, 0 failed` and looks green.

use super::discover::FileKind;

/// Where the first `//` comment outside a string or character literal starts.
fn comment_start(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut in_str = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => in_str = !in_str,
            b'$' if !in_str => i += 1, // a character literal: `$"`, `$/`
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `(line, message)` for each `// =>` line of a `.bt` file that will not run, given how the
/// file is run (`None`: not a test file at all).
pub(crate) fn unrun_expectations(src: &str, kind: Option<&FileKind>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let suite = matches!(kind, Some(FileKind::Suite { .. }));
    for (i, line) in src.lines().enumerate() {
        let Some(at) = comment_start(line) else {
            continue;
        };
        let rest = &line[at..];
        if !rest.starts_with("// =>") {
            continue;
        }
        if !line[..at].trim().is_empty() {
            out.push((
                i + 1,
                "`// =>` after code on the same line is a comment, not an expectation; put it \
                 on its own line below the expression"
                    .to_string(),
            ));
        } else if suite {
            out.push((
                i + 1,
                "this file is a TestCase suite: its test methods run, its `// =>` lines do not"
                    .to_string(),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_expectations_are_found() {
        let src =
            "c increment        // => 2\nx := \"a // => b\"\ny := $/ // not one\n3 + 4\n// => 7\n";
        let w = unrun_expectations(src, Some(&FileKind::Expressions));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].0, 1);
        assert!(unrun_expectations(src, None).len() == 1);
    }

    #[test]
    fn suites_do_not_run_expectation_lines() {
        let src = "TestCase subclass: T\n  testA => self assert: true\n\n3 + 4\n// => 7\n/// 1\n/// // => 1\n";
        let kind = FileKind::Suite {
            class: "T".into(),
            ignored: vec![],
        };
        let w = unrun_expectations(src, Some(&kind));
        assert_eq!(w.iter().map(|w| w.0).collect::<Vec<_>>(), vec![5]);
        assert!(unrun_expectations(src, Some(&FileKind::Expressions)).is_empty());
    }
}
