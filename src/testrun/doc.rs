//! Documentation examples: the `// =>` lines inside `///` comments.
//!
//! Convention: within a run of `///` lines, paragraphs are separated by blank doc lines and by
//! Markdown fence lines (```` ``` ````). A paragraph holding a `// =>` line is an example: its
//! lines up to the last `// =>` line are an expression file, dedented by their common
//! indentation. Paragraphs without `// =>` are prose and ignored, so prose and examples must
//! be separated by a blank `///` line. All examples of one file run in order in one
//! interpreter, so bindings carry from one example to the next.

/// The example lines of `src` with their 1-based line numbers, ready for
/// [`super::split::split_lines`].
pub(crate) fn example_lines(src: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut para: Vec<(usize, &str)> = Vec::new();
    let flush = |para: &mut Vec<(usize, &str)>, out: &mut Vec<(usize, String)>| {
        let last = para
            .iter()
            .rposition(|(_, l)| l.trim().starts_with("// =>"));
        if let Some(last) = last {
            let lines = &para[..=last];
            let indent = lines
                .iter()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(_, l)| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(0);
            for (n, l) in lines {
                let cut = l
                    .char_indices()
                    .nth(indent)
                    .map(|(i, _)| i)
                    .unwrap_or(l.len());
                let cut = if l[..cut].trim().is_empty() { cut } else { 0 };
                out.push((*n, l[cut..].to_string()));
            }
        }
        para.clear();
    };
    for (i, line) in src.lines().enumerate() {
        let t = line.trim_start();
        let doc = t.strip_prefix("///").filter(|rest| !rest.starts_with('/'));
        match doc {
            Some(content) => {
                let c = content.trim();
                if c.is_empty() || c.starts_with("```") || c.starts_with("~~~") {
                    flush(&mut para, &mut out);
                } else {
                    para.push((i + 1, content.trim_end()));
                }
            }
            None => flush(&mut para, &mut out),
        }
    }
    flush(&mut para, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrun::split::{split_lines, Entry};

    #[test]
    fn paragraphs_with_expectations_only() {
        let src = "\
/// Answers the receiver doubled.
///
///   3 double
///   // => 6
///   #(1,
///     2) size
///   // => 2
///
/// More prose.
/// ```
/// x := 4
/// // => 4
/// ```
Object subclass: A
  /// Method doc with prose only.
  foo => 1
//// not a doc line
";
        let lines = example_lines(src);
        let nums: Vec<usize> = lines.iter().map(|l| l.0).collect();
        assert_eq!(nums, vec![3, 4, 5, 6, 7, 11, 12]);
        assert_eq!(lines[0].1, "3 double");
        assert_eq!(lines[3].1, "  2) size");
        let refs: Vec<(usize, &str)> = lines.iter().map(|(n, l)| (*n, l.as_str())).collect();
        let entries = split_lines(&refs);
        let cases: Vec<_> = entries
            .iter()
            .filter_map(|e| {
                if let Entry::Case(c) = e {
                    Some(c)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(cases.len(), 3);
        assert_eq!(cases[0].line, 3);
        assert_eq!(cases[0].expect_line, 4);
        assert_eq!(cases[1].source, "#(1,\n  2) size");
        assert_eq!(cases[2].line, 11);
    }

    #[test]
    fn no_examples() {
        assert!(example_lines("/// just prose\nObject subclass: A\n").is_empty());
        assert!(example_lines("3 + 4\n// => 7\n").is_empty());
    }
}
