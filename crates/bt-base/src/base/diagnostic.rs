//! Diagnostics as data, and the one place that renders them.
//!
//! Every stage (lexer, parser, checker, loader) reports problems as [`Diagnostic`] values with a
//! stable code, a severity, byte spans and an optional hint. Nothing prints
//! until [`render`] (human, via ariadne) or [`Diagnostic::to_json`] (machine) is called.

use crate::base::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Hint,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Hint => "hint",
        }
    }
}

/// A secondary label: another span with a short note.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Stable code, e.g. `E0101`.
    pub code: &'static str,
    /// Checker category (`type`, `dnu`, `unused`, …) or None for hard errors.
    pub category: Option<&'static str>,
    pub severity: Severity,
    pub message: String,
    /// The primary span.
    pub span: Span,
    /// Text for the primary label (defaults to the message when empty).
    pub label: String,
    pub secondary: Vec<Label>,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            code,
            category: None,
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            hint: None,
        }
    }
    pub fn warning(
        code: &'static str,
        category: &'static str,
        message: impl Into<String>,
        span: Span,
    ) -> Diagnostic {
        Diagnostic {
            code,
            category: Some(category),
            severity: Severity::Warning,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            hint: None,
        }
    }
    pub fn hint_diag(
        code: &'static str,
        category: &'static str,
        message: impl Into<String>,
        span: Span,
    ) -> Diagnostic {
        Diagnostic {
            severity: Severity::Hint,
            ..Diagnostic::warning(code, category, message, span)
        }
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// 1-based (line, column) of a byte offset; column counts characters. Scans the prefix: for
/// more than one offset into the same source build a [`LineIndex`] once.
pub fn line_col(src: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(src.len());
    let before = &src[..floor_char_boundary(src, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Where each line of a source starts, computed once: (line, column) of any offset in
/// O(log lines + line length) instead of a scan of everything before it.
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// The same answer as [`line_col`]`(src, offset)` (`src` is the indexed source).
    pub fn line_col(&self, src: &str, offset: u32) -> (usize, usize) {
        let offset = floor_char_boundary(src, (offset as usize).min(src.len()));
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1].min(offset);
        (line, src[start..offset].chars().count() + 1)
    }
}

/// At most this many diagnostics of one file are rendered; a closing line counts the rest.
pub const MAX_RENDERED: usize = 100;

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Whether rendered output uses ANSI colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            // https://no-color.org: a set, non-empty NO_COLOR turns colour off.
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::IsTerminal::is_terminal(&std::io::stderr())
            }
        }
    }
}

/// A message, label or hint is shown up to this many characters (a message that quotes a
/// whole input stays readable); the rest is counted.
pub(crate) const MAX_MESSAGE: usize = 400;

/// A source line in an excerpt is shown up to about this many characters around what its
/// labels point at; the rest is counted ("… N more characters").
pub(crate) const MAX_SHOWN_LINE: usize = 160;

/// How many characters of a long line are shown before the first label.
const LEAD: usize = 40;

/// The first `max` characters of `text` and how many characters follow them (0 when
/// `text` is not longer).
pub fn split_cap(text: &str, max: usize) -> (&str, usize) {
    match text.char_indices().nth(max) {
        None => (text, 0),
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
    }
}

/// `text` cut to `max` characters, the rest counted: `"abc… 1234 more characters"`.
pub fn cap_quote(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match split_cap(text, max) {
        (_, 0) => std::borrow::Cow::Borrowed(text),
        (head, more) => std::borrow::Cow::Owned(format!("{head}… {more} more characters")),
    }
}

/// `text` cut in the middle when longer than `max` characters, its start (three quarters)
/// and end kept: `"abc … 1234 more characters … xyz"` (a message's end often says what
/// went wrong).
pub fn cap_middle(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = text.chars().count();
    if n <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let head = max * 3 / 4;
    let tail = max - head;
    let start = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let end = text
        .char_indices()
        .nth(n - tail)
        .map_or(text.len(), |(i, _)| i);
    std::borrow::Cow::Owned(format!(
        "{} … {} more characters … {}",
        &text[..start],
        n - head - tail,
        &text[end..]
    ))
}

/// Shown as a picture, not as itself, in a source excerpt: a control character (a terminal
/// could act on it) or a character ariadne would take for a line end (`\n`, `\t` and the
/// `\r` of a `\r\n` stay).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

fn has_hidden(src: &str) -> bool {
    let b = src.as_bytes();
    src.char_indices()
        .any(|(i, c)| hidden(c) && !(c == '\r' && b.get(i + 1) == Some(&b'\n')))
}

/// The picture of a hidden character: `␀`…`␟` for C0 controls, `␡`, else `�`.
fn picture(c: char) -> char {
    match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
        0x7f => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// What ariadne is given instead of the whole source when a diagnostic points into a long
/// line or the source holds hidden characters: every line the labels touch, cut to a window
/// of [`MAX_SHOWN_LINE`] characters with hidden characters as pictures, and an empty line for
/// every other line (so line numbers stay right).
struct Excerpt<'a> {
    text: String,
    /// Per shown line: (source start, source end, excerpt start, excerpt end of the window).
    windows: Vec<(usize, usize, usize, usize)>,
    src: &'a str,
}

impl<'a> Excerpt<'a> {
    /// None when the whole source can be shown as it is.
    fn of(
        src: &'a str,
        lines: &LineIndex,
        spans: &[std::ops::Range<usize>],
        hidden_in_file: bool,
    ) -> Option<Excerpt<'a>> {
        let line_of = |o: usize| lines.starts.partition_point(|&s| s <= o).max(1) - 1;
        let line_range = |l: usize| {
            let a = lines.starts[l];
            let mut b = lines.starts.get(l + 1).map_or(src.len(), |&n| n - 1);
            if src[a..b].ends_with('\r') {
                b -= 1;
            }
            a..b
        };
        let mut touched: Vec<usize> = Vec::new();
        for s in spans {
            let (a, b) = (
                line_of(s.start),
                line_of(s.end.saturating_sub(1).max(s.start)),
            );
            touched.extend([a, b]);
            if b > a {
                touched.push(a + 1);
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let long = touched
            .iter()
            .any(|&l| line_range(l).len() > MAX_SHOWN_LINE);
        if !long && !hidden_in_file {
            return None;
        }
        let mut text = String::new();
        let mut windows = Vec::new();
        let mut next = 0;
        for &l in &touched {
            text.extend(std::iter::repeat_n('\n', l - next));
            next = l + 1;
            let r = line_range(l);
            let line = &src[r.clone()];
            let n = line.chars().count();
            let (ws, we) = if n <= MAX_SHOWN_LINE {
                (r.start, r.end)
            } else {
                let first = spans
                    .iter()
                    .flat_map(|s| [s.start, s.end])
                    .filter(|o| r.contains(o))
                    .min()
                    .unwrap_or(r.start);
                let first_char = src[r.start..first].chars().count();
                let skip = first_char.saturating_sub(LEAD).min(n - MAX_SHOWN_LINE);
                let at = |k: usize| {
                    line.char_indices()
                        .nth(k)
                        .map_or(r.end, |(i, _)| r.start + i)
                };
                (at(skip), at(skip + MAX_SHOWN_LINE))
            };
            if ws > r.start {
                text.push('…');
            }
            let xs = text.len();
            text.extend(
                src[ws..we]
                    .chars()
                    .map(|c| if hidden(c) { picture(c) } else { c }),
            );
            windows.push((ws, we, xs, text.len()));
            if we < r.end {
                let more = src[we..r.end].chars().count();
                text.push_str(&format!("… {more} more characters"));
            }
        }
        text.push('\n');
        Some(Excerpt { text, windows, src })
    }

    /// Where source offset `o` is in the excerpt (a point outside a window goes to its edge).
    fn map(&self, o: usize) -> usize {
        let i = self.windows.partition_point(|w| w.0 <= o).max(1) - 1;
        let Some(&(ws, we, xs, xe)) = self.windows.get(i) else {
            return 0;
        };
        if o <= ws {
            xs
        } else if o >= we {
            xe
        } else {
            xs + self.src[ws..o]
                .chars()
                .map(|c| {
                    if hidden(c) {
                        picture(c).len_utf8()
                    } else {
                        c.len_utf8()
                    }
                })
                .sum::<usize>()
        }
    }
}

/// The source line holding byte `offset` with a caret under it, as a report shows where a
/// run-time error happened (the checker's excerpts look the same):
///
/// ```text
///  2 │y := 4 + (x bar: 2)
///    │            ^
/// ```
///
/// Hidden characters show as pictures; a line longer than [`MAX_SHOWN_LINE`] characters is
/// cut to a window around the caret. `None` when `offset` is outside `src`.
pub fn caret_excerpt(src: &str, offset: usize) -> Option<String> {
    if offset > src.len() || !src.is_char_boundary(offset) {
        return None;
    }
    let start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    let line = src[start..end].trim_end_matches('\r');
    let number = src[..start].matches('\n').count() + 1;
    let chars: Vec<char> = line.chars().collect();
    let col = src[start..offset].chars().count().min(chars.len());
    let skip = if chars.len() > MAX_SHOWN_LINE {
        col.saturating_sub(LEAD).min(chars.len() - MAX_SHOWN_LINE)
    } else {
        0
    };
    let shown = &chars[skip..chars.len().min(skip + MAX_SHOWN_LINE)];
    let show = |c: char| if hidden(c) { picture(c) } else { c };
    let mut text: String = if skip > 0 {
        "…".into()
    } else {
        String::new()
    };
    text.extend(shown.iter().map(|&c| show(c)));
    let more = chars.len() - skip - shown.len();
    if more > 0 {
        text.push_str(&format!("… {more} more characters"));
    }
    // The caret's indentation copies tabs so it lines up under the same character.
    let mut pad: String = if skip > 0 { " ".into() } else { String::new() };
    pad.extend(
        shown[..col - skip]
            .iter()
            .map(|&c| if c == '\t' { '\t' } else { ' ' }),
    );
    let num = number.to_string();
    let gutter = " ".repeat(num.len() + 1);
    Some(format!(" {num} │{text}\n{gutter} │{pad}^"))
}

/// Renders diagnostics for a human: `file:line:col: severity: message`, the source snippet with
/// labels (ariadne), then `Hint: …`. Deterministic without colour, so golden files can pin it.
pub fn render(file: &str, src: &str, diags: &[Diagnostic], color: ColorChoice) -> String {
    use ariadne::{Config, Label as ALabel, Report, ReportKind, Source};
    let colored = color.enabled();
    let mut out = String::new();
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| (d.span.start, d.span.end));
    // One line index and one ariadne source per file, however many diagnostics
    // (rebuilding them per diagnostic would make many errors cost errors x file size).
    let lines = LineIndex::new(src);
    let mut cache = (file, Source::from(src));
    // A source with characters a terminal could act on, or that ariadne counts as line ends,
    // is always shown through an excerpt (pictures for them, lines numbered as here).
    let hidden_in_file = has_hidden(src);
    let rest = sorted.split_off(sorted.len().min(MAX_RENDERED));
    for d in sorted {
        let (line, col) = lines.line_col(src, d.span.start);
        out.push_str(&format!(
            "{file}:{line}:{col}: {}: {}\n",
            d.severity.as_str(),
            cap_quote(&d.message, MAX_MESSAGE)
        ));
        let kind = match d.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
            Severity::Hint => ReportKind::Advice,
        };
        let clamp = |s: Span| {
            let a = floor_char_boundary(src, (s.start as usize).min(src.len()));
            let b = floor_char_boundary(src, (s.end as usize).min(src.len())).max(a);
            a..b
        };
        let label_text = if d.label.is_empty() {
            d.message.clone()
        } else {
            d.label.clone()
        };
        let mut spans = vec![clamp(d.span)];
        spans.extend(d.secondary.iter().map(|l| clamp(l.span)));
        let excerpt = Excerpt::of(src, &lines, &spans, hidden_in_file);
        let at = |r: &std::ops::Range<usize>| match &excerpt {
            Some(e) => e.map(r.start)..e.map(r.end),
            None => r.clone(),
        };
        let mut report = Report::build(kind, file, at(&spans[0]).start)
            .with_config(
                Config::default()
                    .with_color(colored)
                    .with_index_type(ariadne::IndexType::Byte)
                    .with_compact(true),
            )
            .with_message(cap_quote(&d.message, MAX_MESSAGE))
            .with_label(
                ALabel::new((file, at(&spans[0])))
                    .with_message(cap_quote(&label_text, MAX_MESSAGE)),
            );
        for (l, span) in d.secondary.iter().zip(&spans[1..]) {
            report = report.with_label(
                ALabel::new((file, at(span))).with_message(cap_quote(&l.message, MAX_MESSAGE)),
            );
        }
        let mut buf = Vec::new();
        let _ = match &excerpt {
            Some(e) => report
                .finish()
                .write(&mut (file, Source::from(e.text.as_str())), &mut buf),
            None => report.finish().write(&mut cache, &mut buf),
        };
        let text = String::from_utf8_lossy(&buf);
        // ariadne repeats the title line; keep its snippet only. Its `[file:line:col]` counts
        // in the excerpt: say where it is in the file.
        for l in text.lines().skip(1) {
            match l.split_once("╭─[") {
                Some((margin, _)) if excerpt.is_some() => {
                    out.push_str(&format!("{margin}╭─[{file}:{line}:{col}]"));
                }
                _ => out.push_str(l.trim_end()),
            }
            out.push('\n');
        }
        if let Some(h) = &d.hint {
            out.push_str(&format!("Hint: {}\n", cap_quote(h, MAX_MESSAGE)));
        }
    }
    if !rest.is_empty() {
        let errors = rest.iter().filter(|d| d.is_error()).count();
        let what = if errors == rest.len() {
            "errors"
        } else {
            "diagnostics"
        };
        out.push_str(&format!("{file}: {} more {what}\n", rest.len()));
    }
    out
}

/// JSON object for `bt check --format json` (lines and columns 1-based).
pub fn to_json(file: &str, src: &str, d: &Diagnostic) -> serde_json::Value {
    to_json_indexed(file, src, &LineIndex::new(src), d)
}

/// [`to_json`] with the source's line index built once by the caller.
pub fn to_json_indexed(
    file: &str,
    src: &str,
    lines: &LineIndex,
    d: &Diagnostic,
) -> serde_json::Value {
    let (line, column) = lines.line_col(src, d.span.start);
    let (end_line, end_column) = lines.line_col(src, d.span.end);
    serde_json::json!({
        "code": d.code,
        "category": d.category,
        "severity": d.severity.as_str(),
        "file": file,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "message": d.message,
        "hint": d.hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_excerpt_points_at_the_offset() {
        let src = "x := 3\ny := 4 + (x bar: 2)\n";
        let at = src.find("bar").unwrap();
        assert_eq!(
            caret_excerpt(src, at).unwrap(),
            " 2 │y := 4 + (x bar: 2)\n   │            ^"
        );
        // A tab stays a tab under it; a control character shows as its picture.
        assert_eq!(
            caret_excerpt("\tx\u{1b} foo", 4).unwrap(),
            " 1 │\tx␛ foo\n   │\t   ^"
        );
        // A long line is cut to a window around the caret.
        let long = format!("{}boom{}", "a".repeat(300), "b".repeat(300));
        let x = caret_excerpt(&long, 300).unwrap();
        let (line, caret) = x.split_once('\n').unwrap();
        assert!(line.starts_with(" 1 │…") && line.ends_with("… 184 more characters"));
        let char_at = |t: &str, i: usize| t[..i].chars().count();
        assert_eq!(
            char_at(line, line.find("boom").unwrap()),
            char_at(caret, caret.find('^').unwrap())
        );
        assert!(caret_excerpt("abc", 9).is_none());
    }
}
