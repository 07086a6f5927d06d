//! Errors of the embedding API: [`EngineError`] (what an evaluation answers instead of a
//! value) and [`HostError`] (what a host function answers to raise a language exception).
//!
//! An `EngineError` is a `std::error::Error` whose `Display` is one line
//! (`TypeError (type_error): … at config.bt:3:7`; an arithmetic fault names its operation
//! there, the [`ErrorInfo::detail`] that `bt run` prints under the message) and a [`miette::Diagnostic`]: with the
//! script's source, labelled spans (each checker/parser diagnostic, or the send that raised),
//! a code (`E0201`, `bt::type_error`) and the hint as help, so `miette::Report` renders a
//! script error in the host with the source line. [`EngineErrorKind`] says what failed.

use std::fmt;
use std::sync::Arc;

use miette::{LabeledSpan, NamedSource, SourceCode};

use crate::diagnostic::{Diagnostic, Severity};
use crate::interp::BtError;

/// A limit of the engine that ended an evaluation (see `EngineBuilder`). None of them can be
/// caught by `on:do:` or swallowed by `ensure:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// `max_reductions`: the evaluation (or one actor message) counted more reductions than
    /// allowed.
    Reductions,
    /// `timeout`: the wall-clock deadline passed.
    Deadline,
    /// `max_memory`: the engine's Strings, Binaries and collections outgrew the limit.
    Memory,
    /// A [`crate::engine::CancelHandle`] cancelled the evaluation.
    Cancelled,
    /// `total_reductions`: the engine's budget over all evaluations, actor messages and timer
    /// callbacks is spent (every later evaluation fails the same way).
    Budget,
    /// [`crate::Engine::shutdown`] stopped the engine.
    Shutdown,
}

impl Limit {
    /// Every limit, for lookups by kind.
    pub const ALL: [Limit; 6] = [
        Limit::Reductions,
        Limit::Deadline,
        Limit::Memory,
        Limit::Cancelled,
        Limit::Budget,
        Limit::Shutdown,
    ];

    /// The error kind reported for this limit (`reduction_limit`, `deadline`,
    /// `memory_limit`, `cancelled`, `budget_exhausted`, `shutdown`).
    pub fn kind(self) -> &'static str {
        match self {
            Limit::Reductions => "reduction_limit",
            Limit::Deadline => "deadline",
            Limit::Memory => "memory_limit",
            Limit::Cancelled => "cancelled",
            Limit::Budget => "budget_exhausted",
            Limit::Shutdown => "shutdown",
        }
    }

    /// The limit whose kind is `kind`.
    pub fn from_kind(kind: &str) -> Option<Limit> {
        Limit::ALL.into_iter().find(|l| l.kind() == kind)
    }
}

/// What kind of failure an [`EngineError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineErrorKind {
    /// The script did not parse or check; [`ErrorInfo::diagnostics`] has the codes and spans.
    Compile,
    /// The script raised an exception nothing caught (`kind` is the exception's kind).
    Exception,
    /// An engine limit ended the evaluation.
    Limit(Limit),
    /// A file could not be read (`Engine::eval_file`).
    Io,
    /// A value did not convert to or from a Rust type (`eval_as`, typed host functions).
    Conversion,
    /// The engine was used wrongly: a bad class name or selector at registration, or a host
    /// function calling back into the engine that is running it (`reentrant_call`).
    Usage,
}

/// Why an evaluation did not answer a value. Boxed (one word in a `Result`); the fields are
/// those of [`ErrorInfo`], reached through `Deref` (`err.kind`, `err.limit`, …).
#[derive(Clone, Debug)]
pub struct EngineError(Box<ErrorInfo>);

impl std::ops::Deref for EngineError {
    type Target = ErrorInfo;
    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

/// The details of an [`EngineError`].
#[derive(Clone, Debug)]
pub struct ErrorInfo {
    /// What failed (compile error, uncaught exception, limit, …).
    pub error_kind: EngineErrorKind,
    /// The exception class (`TypeError`, `RuntimeError`, a user class), `CompileError` for a
    /// script that does not parse or check, `LimitExceeded` for a limit, `IoError` for a file
    /// that cannot be read, `ProgramExit` for `Program exit:`.
    pub class_name: String,
    /// The kind without `#`: `type_error`, `does_not_understand`, `compile_error`,
    /// `reduction_limit`, `deadline`, `memory_limit`, `io_error`, `exit`, …
    pub kind: String,
    pub message: String,
    /// The operation of an arithmetic fault, as `bt run` prints it under the message:
    /// `` `1 / 0`: division by zero ``, `` `3 + "x"`: Integer + String, and "x" is not a
    /// number ``. `None` for other errors.
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// `(file, line, column)` where the error arose, when known.
    pub location: Option<(String, usize, usize)>,
    /// The parser's or checker's diagnostics (codes and byte spans) of a compile error.
    pub diagnostics: Vec<Diagnostic>,
    /// Set when an engine limit ended the evaluation.
    pub limit: Option<Limit>,
    /// The source the spans point into, when the engine has it.
    source: Option<Src>,
    /// The text `bt run` prints for this error, when it came from the program API.
    rendered: Option<String>,
    /// The byte span of the value a conversion failed on (`EngineError::at_value`).
    value_span: Option<(usize, usize)>,
}

/// The file an error's spans point into.
#[derive(Clone)]
struct Src {
    path: String,
    text: Arc<str>,
    named: NamedSource<Arc<str>>,
}

impl fmt::Debug for Src {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Src({:?}, {} bytes)", self.path, self.text.len())
    }
}

impl EngineError {
    fn new(error_kind: EngineErrorKind, class_name: &str, kind: &str, message: String) -> Self {
        EngineError(Box::new(ErrorInfo {
            error_kind,
            class_name: class_name.to_string(),
            kind: kind.to_string(),
            message,
            detail: None,
            hint: None,
            location: None,
            diagnostics: Vec::new(),
            limit: match error_kind {
                EngineErrorKind::Limit(l) => Some(l),
                _ => None,
            },
            source: None,
            rendered: None,
            value_span: None,
        }))
    }

    /// From the program API's error. `source` is the text of the file the error points into
    /// (the evaluated input, or an earlier one the engine still has), for the labels.
    pub(crate) fn from_bt(e: BtError, source: Option<(String, Arc<str>)>) -> EngineError {
        let error_kind = if e.is_compile() {
            EngineErrorKind::Compile
        } else if let Some(l) =
            Limit::from_kind(e.kind()).filter(|_| e.class_name() == "LimitExceeded")
        {
            EngineErrorKind::Limit(l)
        } else {
            EngineErrorKind::Exception
        };
        // Compile errors render on demand (`report`): rendering a huge line is slow.
        let rendered = if e.is_compile() && !e.diagnostics().is_empty() {
            None
        } else {
            Some(e.report_with_excerpt())
        };
        let mut err = EngineError::new(error_kind, e.class_name(), e.kind(), e.message());
        let info = &mut err.0;
        info.rendered = rendered;
        info.detail = e.detail().map(str::to_string);
        info.hint = e.hint().map(str::to_string);
        info.location = e.location().cloned();
        info.diagnostics = e.diagnostics().to_vec();
        // The source only when it is the file the error points into.
        let wanted = info
            .location
            .as_ref()
            .map(|l| l.0.clone())
            .or_else(|| source.as_ref().map(|s| s.0.clone()));
        info.source = source
            .filter(|s| Some(&s.0) == wanted.as_ref())
            .map(|(path, text)| Src {
                named: NamedSource::new(&path, text.clone()),
                path,
                text,
            });
        if info.location.is_none() && info.error_kind == EngineErrorKind::Compile {
            if let (Some(d), Some(src)) = (info.diagnostics.first(), &info.source) {
                let (line, col) = line_col(&src.text, d.span.start as usize);
                info.location = Some((src.path.clone(), line, col));
            }
        }
        err
    }

    /// The error of an evaluation a limit ended.
    pub(crate) fn limit(limit: Limit, detail: String) -> EngineError {
        let message = match limit {
            Limit::Reductions => format!("reduction limit exceeded: {detail}"),
            Limit::Deadline => format!("deadline exceeded: {detail}"),
            Limit::Memory => format!("memory limit exceeded: {detail}"),
            Limit::Cancelled => format!("evaluation cancelled: {detail}"),
            Limit::Budget => format!("engine budget exhausted: {detail}"),
            Limit::Shutdown => format!("engine shut down: {detail}"),
        };
        let mut e = EngineError::new(
            EngineErrorKind::Limit(limit),
            "LimitExceeded",
            limit.kind(),
            message,
        );
        e.0.hint = match limit {
            Limit::Reductions | Limit::Deadline | Limit::Memory | Limit::Budget => Some(
                "limits are set by the host (EngineBuilder); the script cannot catch them"
                    .to_string(),
            ),
            _ => None,
        };
        e
    }

    /// An I/O error of the engine itself (a script file that cannot be read).
    pub(crate) fn io(message: String) -> EngineError {
        EngineError::new(EngineErrorKind::Io, "IoError", "io_error", message)
    }

    /// A misuse of the embedding API (`kind`: `type_error`, `class_not_found`,
    /// `reentrant_call`, …).
    pub(crate) fn usage(kind: &str, message: String) -> EngineError {
        EngineError::new(EngineErrorKind::Usage, "RuntimeError", kind, message)
    }

    /// A value that did not convert to or from a Rust type (`Engine::eval_as`, `bt::to_rust`);
    /// the message names where, as a path from the root (`{#db}{#port}`).
    pub(crate) fn from_codec(e: crate::codec::CodecError) -> EngineError {
        let message = if e.path.is_empty() || e.message.contains(&e.path) {
            e.message
        } else {
            format!("{} (at {})", e.message, e.path)
        };
        let mut err = EngineError::new(EngineErrorKind::Conversion, "TypeError", e.kind, message);
        err.0.hint = e.hint;
        err
    }

    /// A conversion error of the value written at `span` of `source` (file `path`): the error
    /// carries the source, the value's line and column, and a label under the value.
    pub(crate) fn at_value(
        mut self,
        path: &str,
        source: &str,
        span: Option<crate::base::span::Span>,
    ) -> EngineError {
        let Some(span) = span else { return self };
        let text: Arc<str> = Arc::from(source);
        let (line, col) = line_col(&text, span.start as usize);
        let info = &mut self.0;
        info.location = Some((path.to_string(), line, col));
        info.value_span = Some((span.start as usize, span.end as usize));
        info.source = Some(Src {
            named: NamedSource::new(path, text.clone()),
            path: path.to_string(),
            text,
        });
        self
    }

    /// True when the error carries the source its spans point into.
    pub fn has_source(&self) -> bool {
        self.0.source.is_some()
    }

    /// Attaches `text` as the source of `path` (the file the error's location names).
    pub(crate) fn with_source(mut self, path: String, text: Arc<str>) -> EngineError {
        self.0.source = Some(Src {
            named: NamedSource::new(&path, text.clone()),
            path,
            text,
        });
        self
    }

    /// Adds a hint (kept when one is already set).
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> EngineError {
        self.0.hint.get_or_insert_with(|| hint.into());
        self
    }

    /// True for a script that did not parse or check (see [`EngineError::codes`]).
    pub fn is_compile(&self) -> bool {
        self.error_kind == EngineErrorKind::Compile
    }

    /// The diagnostic codes of a compile error (`E0101`, `E0201`, …), in report order.
    pub fn codes(&self) -> Vec<&'static str> {
        self.diagnostics.iter().map(|d| d.code).collect()
    }

    /// The full report as `bt run` prints it (every diagnostic with its source line, or the
    /// exception with its location and hint), without colour.
    pub fn report(&self) -> String {
        if let Some(r) = &self.0.rendered {
            return r.clone();
        }
        if let (true, Some(src)) = (self.is_compile(), &self.0.source) {
            let r = crate::diagnostic::render(
                &src.path,
                &src.text,
                &self.diagnostics,
                crate::diagnostic::ColorChoice::Never,
            );
            return r.trim_end().to_string();
        }
        let mut s = self.to_string();
        if let Some(h) = &self.hint {
            s.push_str("\n  Hint: ");
            s.push_str(h);
        }
        s
    }
}

/// One line: `Class (kind): message at file:line:col` (a compile error shows its first
/// diagnostic's code and how many more there are; an arithmetic fault its operation after
/// the message: `` TypeError (type_error): bad arithmetic operation: `1 / 0`: division by zero
/// at eval:1:3 ``).
impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.0;
        let errors: Vec<&Diagnostic> = i
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        match (i.error_kind, errors.first()) {
            (EngineErrorKind::Compile, Some(d)) => {
                write!(f, "compile error {}: {}", d.code, d.message)?;
            }
            _ => write!(f, "{} ({}): {}", i.class_name, i.kind, i.message)?,
        }
        if let Some(d) = &i.detail {
            write!(f, ": {d}")?;
        }
        if let Some((file, line, col)) = &i.location {
            write!(f, " at {file}:{line}:{col}")?;
        }
        if errors.len() > 1 {
            write!(f, " (and {} more)", errors.len() - 1)?;
        }
        Ok(())
    }
}

impl std::error::Error for EngineError {}

/// A value that did not convert (`bt::to_rust` on an evaluation's result).
impl From<crate::codec::CodecError> for EngineError {
    fn from(e: crate::codec::CodecError) -> EngineError {
        EngineError::from_codec(e)
    }
}

impl miette::Diagnostic for EngineError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self.diagnostics.first() {
            Some(d) if self.is_compile() => Some(Box::new(d.code)),
            _ => Some(Box::new(format!("bt::{}", self.kind))),
        }
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let mut hints: Vec<&str> = self.hint.iter().map(String::as_str).collect();
        if self.is_compile() {
            hints.extend(self.diagnostics.iter().filter_map(|d| d.hint.as_deref()));
        }
        hints.dedup();
        if hints.is_empty() {
            None
        } else {
            Some(Box::new(hints.join("\n")))
        }
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Error)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.0.source.as_ref().map(|s| &s.named as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let src = &self.0.source.as_ref()?.text;
        let len = src.len();
        let clamp = |s: usize, e: usize| {
            let s = s.min(len);
            (s, e.clamp(s, len) - s)
        };
        let mut out = Vec::new();
        if self.is_compile() {
            for d in &self.diagnostics {
                let (s, n) = clamp(d.span.start as usize, d.span.end as usize);
                let text = if d.label.is_empty() {
                    format!("{}: {}", d.code, d.message)
                } else {
                    format!("{}: {}", d.code, d.label)
                };
                out.push(LabeledSpan::new(Some(text), s, n));
                for l in &d.secondary {
                    let (s, n) = clamp(l.span.start as usize, l.span.end as usize);
                    out.push(LabeledSpan::new(Some(l.message.clone()), s, n));
                }
            }
        } else if let Some((s, e)) = self.value_span {
            let (s, n) = clamp(s, e);
            out.push(LabeledSpan::new_primary_with_span(
                Some("this value".to_string()),
                (s, n),
            ));
        } else if let Some((_, line, col)) = &self.location {
            let start = offset_of(src, *line, *col)?;
            let n = token_len(&src[start..]);
            out.push(LabeledSpan::new_primary_with_span(
                Some(format!("{} raised here", self.class_name)),
                (start, n),
            ));
        }
        if out.is_empty() {
            None
        } else {
            Some(Box::new(out.into_iter()))
        }
    }
}

/// 1-based line and column (characters) of byte offset `pos`.
fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = src.get(..pos).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// Byte offset of 1-based `line`/`col` (characters), when inside `src`.
fn offset_of(src: &str, line: usize, col: usize) -> Option<usize> {
    let mut start = 0usize;
    for _ in 1..line {
        start += src[start..].find('\n')? + 1;
    }
    let rest = &src[start..];
    let off = match rest.char_indices().nth(col.saturating_sub(1)) {
        Some((i, _)) => i,
        None => rest.len(),
    };
    Some(start + off)
}

/// The length of the token at the start of `s` (an identifier or keyword with its colon, an
/// operator run), at least one character, never past the line.
fn token_len(s: &str) -> usize {
    let mut it = s.char_indices().peekable();
    let Some((_, c)) = it.next() else { return 0 };
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let op = |c: char| "+-*/\\<>=~%&?,|@".contains(c);
    let mut end = c.len_utf8();
    if word(c) {
        for (i, c) in it {
            if word(c) {
                end = i + c.len_utf8();
            } else {
                if c == ':' {
                    end = i + 1;
                }
                break;
            }
        }
    } else if op(c) {
        for (i, c) in it {
            if !op(c) {
                break;
            }
            end = i + c.len_utf8();
        }
    }
    end
}

/// An error answered by a host function: raised in the script as an exception of the class
/// mapped from `kind` (an unlisted kind is an `Error`), which `on:do:`
/// catches like any other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
}

impl HostError {
    /// An error of `kind` (without `#`), e.g. `HostError::new("not_found", "no such key")`.
    pub fn new(kind: &str, message: impl Into<String>) -> HostError {
        HostError {
            kind: kind.to_string(),
            message: message.into(),
            hint: None,
        }
    }

    /// Adds the `Hint:` line shown under the message.
    pub fn with_hint(mut self, hint: impl Into<String>) -> HostError {
        self.hint = Some(hint.into());
        self
    }
}

/// A plain message becomes a `host_error`.
impl From<String> for HostError {
    fn from(message: String) -> HostError {
        HostError::new("host_error", message)
    }
}

impl From<&str> for HostError {
    fn from(message: &str) -> HostError {
        HostError::new("host_error", message)
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind)
    }
}

impl std::error::Error for HostError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_tokens() {
        let src = "a := 1\nfoo bar: 2\n";
        assert_eq!(offset_of(src, 2, 5), Some(11));
        assert_eq!(token_len(&src[11..]), 4); // `bar:`
        assert_eq!(line_col(src, 11), (2, 5));
        assert_eq!(token_len("++ x"), 2);
        assert_eq!(token_len(""), 0);
        assert_eq!(offset_of(src, 9, 1), None);
    }

    #[test]
    fn limits_round_trip_their_kind() {
        for l in Limit::ALL {
            assert_eq!(Limit::from_kind(l.kind()), Some(l));
        }
        assert_eq!(Limit::from_kind("type_error"), None);
    }
}
