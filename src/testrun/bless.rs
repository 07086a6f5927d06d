//! `--bless`: rewrites the `// =>` lines of failing cases with what the expressions actually
//! produced. Only the text after `// =>` changes; indentation and any `///` prefix stay.

use super::worker::Bless;

/// Applies `blesses` to `src`; answers the new text (line ends preserved).
pub(crate) fn apply(src: &str, blesses: &[Bless]) -> String {
    let mut lines: Vec<String> = src.split_inclusive('\n').map(str::to_string).collect();
    for b in blesses {
        let Some(line) = b.line.checked_sub(1).and_then(|i| lines.get_mut(i)) else {
            continue;
        };
        let Some(at) = line.find("// =>") else {
            continue;
        };
        let ending = if line.ends_with("\r\n") {
            "\r\n"
        } else if line.ends_with('\n') {
            "\n"
        } else {
            ""
        };
        let mut new = line[..at + "// =>".len()].to_string();
        if !b.text.is_empty() {
            new.push(' ');
            new.push_str(&b.text);
        }
        new.push_str(ending);
        *line = new;
    }
    lines.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_expectation_text() {
        let src = "1 + 1\n// => 3\n  /// x\n  ///   // => old\n\"\"\n// => x\r\nlast\n// => 9";
        let out = apply(
            src,
            &[
                Bless {
                    case_line: 0,
                    line: 2,
                    text: "2".into(),
                },
                Bless {
                    case_line: 0,
                    line: 4,
                    text: "new".into(),
                },
                Bless {
                    case_line: 0,
                    line: 6,
                    text: String::new(),
                },
                Bless {
                    case_line: 0,
                    line: 8,
                    text: "ERROR: type_error".into(),
                },
                Bless {
                    case_line: 0,
                    line: 1,
                    text: "ignored: not an expectation".into(),
                },
                Bless {
                    case_line: 0,
                    line: 99,
                    text: "out of range".into(),
                },
            ],
        );
        assert_eq!(out, "1 + 1\n// => 2\n  /// x\n  ///   // => new\n\"\"\n// =>\r\nlast\n// => ERROR: type_error");
    }
}
