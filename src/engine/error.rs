//! Errors of the embedding API: [`EngineError`] (what an evaluation answers instead of a
//! value) and [`HostError`] (what a host function answers to raise a language exception).

use std::fmt;

use crate::diagnostic::{ColorChoice, Diagnostic};
use crate::interp::BtError;

/// A limit of the engine that ended an evaluation (see `EngineBuilder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `max_reductions`: the evaluation counted more reductions than allowed.
    Reductions,
    /// `timeout`: the wall-clock deadline passed.
    Deadline,
}

impl Limit {
    /// The error kind reported for this limit (`reduction_limit`, `deadline`).
    pub fn kind(self) -> &'static str {
        match self {
            Limit::Reductions => "reduction_limit",
            Limit::Deadline => "deadline",
        }
    }
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
    /// The exception class (`TypeError`, `RuntimeError`, a user class), `CompileError` for a
    /// script that does not parse or check, `LimitExceeded` for a limit, `IoError` for a file
    /// that cannot be read, `ProgramExit` for `Program exit:`.
    pub class_name: String,
    /// The kind without `#`: `type_error`, `does_not_understand`, `compile_error`,
    /// `reduction_limit`, `deadline`, `io_error`, `exit`, …
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
    /// `(file, line, column)` where the error arose, when known.
    pub location: Option<(String, usize, usize)>,
    /// The parser's or checker's diagnostics (codes and byte spans) of a compile error.
    pub diagnostics: Vec<Diagnostic>,
    /// Set when an engine limit ended the evaluation.
    pub limit: Option<Limit>,
    /// What `Display` prints (the text `bt run` would print to stderr).
    rendered: String,
}

impl EngineError {
    /// From the program API's error; `path`/`src` render the diagnostics of a compile error.
    pub(crate) fn from_bt(e: BtError, path: &str, src: &str) -> EngineError {
        let rendered = if e.is_compile() && !e.diagnostics().is_empty() {
            let r = crate::diagnostic::render(path, src, e.diagnostics(), ColorChoice::Never);
            r.trim_end().to_string()
        } else {
            e.report_with_location()
        };
        EngineError(Box::new(ErrorInfo {
            class_name: e.class_name().to_string(),
            kind: e.kind().to_string(),
            message: e.message(),
            hint: e.hint().map(str::to_string),
            location: e.location().cloned(),
            diagnostics: e.diagnostics().to_vec(),
            limit: None,
            rendered,
        }))
    }

    /// The error of an evaluation a limit ended.
    pub(crate) fn limit(limit: Limit, detail: String) -> EngineError {
        let message = match limit {
            Limit::Reductions => format!("reduction limit exceeded: {detail}"),
            Limit::Deadline => format!("deadline exceeded: {detail}"),
        };
        EngineError(Box::new(ErrorInfo {
            class_name: "LimitExceeded".to_string(),
            kind: limit.kind().to_string(),
            rendered: format!("LimitExceeded ({}): {message}", limit.kind()),
            message,
            hint: None,
            location: None,
            diagnostics: Vec::new(),
            limit: Some(limit),
        }))
    }

    /// An error outside the language (a file that cannot be read, a bad registration).
    pub(crate) fn simple(class_name: &str, kind: &str, message: String) -> EngineError {
        EngineError(Box::new(ErrorInfo {
            rendered: format!("{class_name} ({kind}): {message}"),
            class_name: class_name.to_string(),
            kind: kind.to_string(),
            message,
            hint: None,
            location: None,
            diagnostics: Vec::new(),
            limit: None,
        }))
    }

    /// A value that did not convert to or from a Rust type (`Engine::eval_as`, `bt::to_rust`);
    /// the message names where, as a path from the root (`{#db}{#port}`).
    pub(crate) fn from_codec(e: crate::codec::CodecError) -> EngineError {
        let message = if e.path.is_empty() {
            e.message
        } else {
            format!("{} (at {})", e.message, e.path)
        };
        let mut err = EngineError::simple("TypeError", e.kind, message);
        err.0.hint = e.hint;
        err
    }

    /// True for a script that did not parse or check (see [`EngineError::codes`]).
    pub fn is_compile(&self) -> bool {
        self.kind == "compile_error"
    }

    /// The diagnostic codes of a compile error (`E0101`, `E0201`, …), in report order.
    pub fn codes(&self) -> Vec<&'static str> {
        self.diagnostics.iter().map(|d| d.code).collect()
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.rendered)
    }
}

impl std::error::Error for EngineError {}

/// An error answered by a host function: raised in the script as an exception of the class
/// mapped from `kind` (LANGUAGE.md 5.10; an unlisted kind is an `Error`), which `on:do:`
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
