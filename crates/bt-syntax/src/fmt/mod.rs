//! `bt fmt`: the one canonical layout of a bt source file.
//!
//! The grammar is newline- and column-sensitive, so the formatter works on
//! lines and never moves a token to another line or changes the relative indentation of a
//! declaration's lines. What it does:
//!
//! 1. line ends become `\n`; trailing whitespace goes (not on `// =>` lines, whose text is an
//!    expectation, nor where a line ends inside a string or block comment);
//! 2. runs of blank lines become one; no blank lines at the start; one `\n` at the end;
//! 3. the body of every top-level declaration is shifted as a whole so that its members start
//!    in column 3 (two spaces), comment lines with it;
//! 4. a top-level class declaration (with the comments directly above it) is separated from
//!    what precedes it by one blank line.
//!
//! Lines that start inside a multi-line string or block comment are never touched. The result
//! is idempotent and parses to the same AST with the same diagnostics, which
//! [`format_source`] verifies before answering (tests/lang/fmt.rs checks both on every golden
//! file, example and library file).

use crate::syntax::scan::Scanner;
use crate::syntax::token::Tok;

/// Why a source was not formatted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FmtError(pub String);

/// Member indentation inside a declaration.
const INDENT: usize = 2;

/// Formats `src`; `allow_primitives` for built-in library files (`=> @primitive` bodies).
///
/// The result is checked: it must parse to the same AST with the same diagnostics (a file
/// with syntax errors — an expression file with error cases — is laid out too, its errors
/// unchanged). When that fails the file is refused rather than changed.
pub fn format_source(src: &str, allow_primitives: bool) -> Result<String, FmtError> {
    let out = layout(src);
    if out == src {
        return Ok(out);
    }
    let opts = crate::syntax::Options { allow_primitives };
    let (before, d1) = crate::syntax::parse_with(src, opts);
    let (after, d2) = crate::syntax::parse_with(&out, opts);
    let msgs = |d: &[crate::diagnostic::Diagnostic]| -> Vec<String> {
        d.iter().map(|d| d.message.clone()).collect()
    };
    let dump = crate::syntax::dump::dump_module;
    if dump(&before) != dump(&after) || msgs(&d1) != msgs(&d2) {
        return Err(FmtError(
            "the layout would change how the file parses; left as it is".to_string(),
        ));
    }
    Ok(out)
}

/// One source line and what may be changed about it.
struct Line<'a> {
    text: &'a str,
    /// Starts inside a multi-line string or block comment: leave it exactly as it is.
    frozen_start: bool,
    /// Ends inside a multi-line token: keep its trailing whitespace and line end.
    frozen_end: bool,
}

impl Line<'_> {
    fn blank(&self) -> bool {
        !self.frozen_start && !self.frozen_end && self.text.trim().is_empty()
    }
    /// Leading blanks (a tab counts as one column, as the lexer counts it).
    fn indent(&self) -> usize {
        self.text.len() - self.text.trim_start_matches([' ', '\t']).len()
    }
    fn comment_only(&self) -> bool {
        let t = self.text.trim_start();
        t.starts_with("//") || t.starts_with("/*")
    }
}

/// Byte ranges of tokens that span line ends (strings, block comments, quoted symbols), and
/// the end offsets of character literals of a blank (`$ ` is not trailing whitespace).
fn multiline_spans(src: &str) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut out = Vec::new();
    let mut blank_chars = Vec::new();
    let mut lx = Scanner::new(src);
    while let Some(t) = lx.next() {
        let r = lx.span();
        if t == Ok(Tok::Char) && src[r.clone()].ends_with(char::is_whitespace) {
            blank_chars.push(r.end);
        }
        let kind_spans = matches!(
            t,
            Ok(Tok::Str | Tok::BlockComment | Tok::QuotedSymbol) | Err(_)
        );
        if kind_spans && src[r.clone()].contains('\n') {
            out.push((r.start, r.end));
        }
    }
    (out, blank_chars)
}

fn split_lines(src: &str) -> Vec<Line<'_>> {
    let (spans, blank_chars) = multiline_spans(src);
    let inside = |pos: usize| spans.iter().any(|&(s, e)| s < pos && pos < e);
    let mut lines = Vec::new();
    let mut start = 0;
    for piece in src.split_inclusive('\n') {
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        let end = start + body.len();
        let frozen_end = inside(end) || blank_chars.iter().any(|&c| start < c && c <= end);
        let body = if frozen_end {
            body
        } else {
            body.strip_suffix('\r').unwrap_or(body)
        };
        lines.push(Line {
            text: body,
            frozen_start: inside(start),
            frozen_end,
        });
        start += piece.len();
    }
    lines
}

/// A class declaration header at column 0 (`Foo subclass: Bar`, `sealed Value subclass: X`).
fn class_header(text: &str) -> bool {
    let first = text.chars().next();
    first.is_some_and(|c| c.is_ascii_alphabetic()) && text.contains(" subclass: ")
}

fn layout(src: &str) -> String {
    let lines = split_lines(src);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    // Per line: the shift of its declaration body (computed per top-level region).
    let shifts = body_shifts(&lines);
    for (i, l) in lines.iter().enumerate() {
        if l.frozen_start {
            out.push(l.text.to_string());
            continue;
        }
        let mut text = if l.frozen_end || l.text.contains("// =>") {
            l.text.to_string()
        } else {
            l.text.trim_end().to_string()
        };
        if !text.trim().is_empty() && l.indent() > 0 {
            // Leading tabs become spaces (column for column); the body shift applies.
            let ind = l.indent() as isize;
            let new = (ind + shifts[i]).max(if l.comment_only() { 0 } else { 1 }) as usize;
            text = format!("{}{}", " ".repeat(new), &text[ind as usize..]);
        }
        out.push(text);
    }
    // Blank lines: one blank line before a class declaration (and the comments right above
    // it), runs collapsed, none at the start.
    let blank = |s: &String, i: usize| {
        !lines[i].frozen_start && !lines[i].frozen_end && s.trim().is_empty()
    };
    let mut want_blank_before = vec![false; out.len()];
    for i in 0..out.len() {
        if !lines[i].frozen_start && class_header(&out[i]) {
            let mut j = i;
            while j > 0 && !lines[j - 1].frozen_start && out[j - 1].starts_with("//") {
                j -= 1;
            }
            want_blank_before[j] = true;
        }
    }
    let mut result = String::with_capacity(src.len() + 16);
    let mut pending_blank = false;
    let mut any = false;
    for (i, s) in out.iter().enumerate() {
        if blank(s, i) {
            pending_blank = true;
            continue;
        }
        if any && (pending_blank || want_blank_before[i]) {
            result.push('\n');
        }
        pending_blank = false;
        any = true;
        result.push_str(s);
        result.push('\n');
    }
    result
}

/// For each line, how far its declaration body moves so that members start at [`INDENT`].
fn body_shifts(lines: &[Line]) -> Vec<isize> {
    let mut shifts = vec![0isize; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        let top = !l.frozen_start && !l.blank() && l.indent() == 0 && !l.comment_only();
        if !top || !class_header(l.text) {
            i += 1;
            continue;
        }
        // The body: following lines up to the next column-0 code line.
        let mut j = i + 1;
        let mut member_col: Option<usize> = None;
        while j < lines.len() {
            let m = &lines[j];
            if !m.frozen_start && !m.blank() {
                if m.indent() == 0 && !m.comment_only() {
                    break;
                }
                if !m.comment_only() {
                    member_col = Some(member_col.map_or(m.indent(), |c| c.min(m.indent())));
                }
            }
            j += 1;
        }
        if let Some(c) = member_col {
            let d = INDENT as isize - c as isize;
            for s in shifts.iter_mut().take(j).skip(i + 1) {
                *s = d;
            }
        }
        i = j;
    }
    shifts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(s: &str) -> String {
        format_source(s, false).unwrap()
    }

    #[test]
    fn canonical_layout() {
        let src = "\n\n// a counter\r\nValue subclass: A  \r\n    field: x = 0\n\n\n\n    foo =>\n        x + 1   \nx := 3\n// the second\nA subclass: B\n\tbar => 1\n";
        assert_eq!(
            fmt(src),
            "// a counter\nValue subclass: A\n  field: x = 0\n\n  foo =>\n      x + 1\nx := 3\n\n// the second\nA subclass: B\n  bar => 1\n"
        );
    }

    #[test]
    fn strings_and_expectations_are_kept() {
        let src = "x := \"two   \n      lines  \"\nx size\n// => 17 \n";
        assert_eq!(fmt(src), src);
        let src = "Object subclass: A\n    m => \"a\n  b\"\n    n => 1\n";
        assert_eq!(
            fmt(src),
            "Object subclass: A\n  m => \"a\n  b\"\n  n => 1\n"
        );
    }

    #[test]
    fn syntax_errors_stay_as_they_are() {
        let src = "x := (1 +\n\n\n\ny := 2   \n";
        assert_eq!(fmt(src), "x := (1 +\n\ny := 2\n");
    }

    #[test]
    fn idempotent() {
        let src = "Object subclass: A\n      a => 1\n\n\n      b => 2\n";
        let once = fmt(src);
        assert_eq!(fmt(&once), once);
    }
}
