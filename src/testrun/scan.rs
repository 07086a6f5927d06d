//! The two questions the expression-file splitter asks the front end: is this text syntactically incomplete, and does the next line continue it? The
//! tests pin the answers the runner relies on.

/// Whether `src` is incomplete (the front end's answer).
pub(crate) fn needs_more(src: &str) -> bool {
    crate::syntax::needs_more(src)
}

/// Whether a line starting with `next` continues the statement before it (the front end's
/// answer).
pub(crate) fn line_continues(next: &str) -> bool {
    crate::syntax::line_continues(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_expressions() {
        for s in [
            "3 + 4",
            "x := 3",
            "#(1, 2) collect: [:x | x * 10]",
            "\"a string\"",
            "$( printString",
            "#foo:bar:",
            "#+",
            "#'quoted ) sym'",
            "3 - -2",
            "x foo!",
            "a := 1. b := 2.",
            "\"interp {x + 1} done\"",
            "\"nested {\"inner {y}\"} s\"",
            "\"a\"\"b\"",
            "\"a\\\"b\"",
            "x // trailing comment +",
            "/* block ( */ 3",
            "3.",
            "2.5e-3",
            "16rFF",
        ] {
            assert!(!needs_more(s), "should be complete: {s}");
        }
    }

    #[test]
    fn incomplete_expressions() {
        for s in [
            "#(1, 2",
            "[:x | x",
            "(3 +",
            "3 +",
            "x :=",
            "d at: 1 put:",
            "foo at:",
            "\"unterminated",
            "\"open {interp",
            "Transcript show: \"a\";",
            "#(1,",
            "^",
            "/* open comment",
            "#'open sym",
            "x :: ",
            "#{#a =>",
            "a =:=",
        ] {
            assert!(needs_more(s), "should be incomplete: {s}");
        }
    }

    #[test]
    fn continuation_lines() {
        for s in [
            "  ++ \"b\"",
            ") foo",
            "] value",
            "; cr",
            "withId: #x",
            "  to: 10",
            "=:= 3",
        ] {
            assert!(line_continues(s), "should continue: {s}");
        }
        for s in [
            "x foo",
            "-1",
            "// comment",
            "// => 3",
            "(3 + 4)",
            "[1] value",
            "x := 3",
            "#(1)",
            "\"s\"",
            "$a",
            "^ 3",
            "@expect dnu",
            "",
            "x::Integer := 3",
        ] {
            assert!(!line_continues(s), "should not continue: {s}");
        }
    }
}
