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
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
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

/// Renders diagnostics for a human: `file:line:col: severity: message`, the source snippet with
/// labels (ariadne), then `Hint: …`. Deterministic without colour, so golden files can pin it.
pub fn render(file: &str, src: &str, diags: &[Diagnostic], color: ColorChoice) -> String {
    use ariadne::{Config, Label as ALabel, Report, ReportKind, Source};
    let colored = color.enabled();
    let mut out = String::new();
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| (d.span.start, d.span.end));
    // One line index and one ariadne source per file, however many diagnostics (issue 15:
    // rebuilding them per diagnostic made many errors cost errors x file size).
    let lines = LineIndex::new(src);
    let mut cache = (file, Source::from(src));
    let rest = sorted.split_off(sorted.len().min(MAX_RENDERED));
    for d in sorted {
        let (line, col) = lines.line_col(src, d.span.start);
        out.push_str(&format!(
            "{file}:{line}:{col}: {}: {}\n",
            d.severity.as_str(),
            d.message
        ));
        let kind = match d.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
            Severity::Hint => ReportKind::Advice,
        };
        let clamp = |s: Span| {
            let a = (s.start as usize).min(src.len());
            let b = (s.end as usize).min(src.len()).max(a);
            a..b
        };
        let label_text = if d.label.is_empty() {
            d.message.clone()
        } else {
            d.label.clone()
        };
        let mut report = Report::build(kind, file, clamp(d.span).start)
            .with_config(
                Config::default()
                    .with_color(colored)
                    .with_index_type(ariadne::IndexType::Byte)
                    .with_compact(true),
            )
            .with_message(&d.message)
            .with_label(ALabel::new((file, clamp(d.span))).with_message(label_text));
        for l in &d.secondary {
            report = report.with_label(ALabel::new((file, clamp(l.span))).with_message(&l.message));
        }
        let mut buf = Vec::new();
        let _ = report.finish().write(&mut cache, &mut buf);
        let text = String::from_utf8_lossy(&buf);
        // ariadne repeats the title line; keep its snippet only.
        for l in text.lines().skip(1) {
            out.push_str(l.trim_end());
            out.push('\n');
        }
        if let Some(h) = &d.hint {
            out.push_str(&format!("Hint: {h}\n"));
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
