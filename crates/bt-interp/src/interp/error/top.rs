//! [`BtError`]: what reaches the top of a unit, REPL line or `eval` — the unit did not compile,
//! an exception was not caught, or the program asked to exit. The CLI, the test runner and the
//! embedding API read it through the accessors below (the same for every variant).

use crate::diagnostic::Diagnostic;

/// A report shows at most this many characters of a message (the exception keeps it whole).
pub const MAX_REPORTED: usize = 600;

/// An error that reached the top of a unit.
#[derive(Clone, Debug)]
pub enum BtError {
    /// The unit did not run: its diagnostics.
    Compile(CompileFailure),
    /// An exception (or an evaluator fault reported like one) was not caught.
    Uncaught(Uncaught),
    /// `Program exit: code` (or `Program exit`).
    Exit(i32),
}

/// The diagnostics of a unit that did not compile, and where the first error is.
#[derive(Clone, Debug)]
pub struct CompileFailure {
    pub diagnostics: Vec<Diagnostic>,
    /// `file:line:col` of the first error.
    pub location: Option<(String, usize, usize)>,
}

/// An uncaught exception, as facts read off the exception value when it reached the top.
#[derive(Clone, Debug)]
pub struct Uncaught {
    /// Exception class name (`TypeError`).
    pub class_name: String,
    /// Kind without `#` (`type_error`); arithmetic faults report `type_error` here.
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
    pub selector: Option<String>,
    /// `file:line:col` of the innermost send when raised, if known.
    pub location: Option<(String, usize, usize)>,
    /// An arithmetic fault (raw reason `badarith`): matches `badarith` in expectations.
    pub badarith: bool,
    /// The operation of an arithmetic fault, shown under the report's first line:
    /// `` `1 / 0`: division by zero `` (not part of the exception).
    pub detail: Option<String>,
    /// The bt stack when raised, innermost first.
    pub trace: Vec<TraceFrame>,
    /// The source line of [`Uncaught::location`] with a caret under the failing send
    /// (`diagnostic::caret_excerpt`), when the source is known.
    pub excerpt: Option<String>,
}

/// One frame of an uncaught error's stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFrame {
    /// `Class>>selector` (`UndefinedObject>>doIt` for top-level statements).
    pub method: String,
    /// `file:line:col`, when known.
    pub location: Option<String>,
    /// The actor class the frame ran in, when the error crossed from an actor to its caller.
    pub actor: Option<String>,
}

impl BtError {
    /// An uncaught error without a location (faults of the evaluator itself, missing classes).
    pub fn simple(class_name: &str, kind: &str, message: &str) -> BtError {
        BtError::Uncaught(Uncaught {
            class_name: class_name.to_string(),
            kind: kind.to_string(),
            message: message.to_string(),
            hint: None,
            selector: None,
            location: None,
            badarith: false,
            detail: None,
            trace: Vec::new(),
            excerpt: None,
        })
    }

    /// A compile error from diagnostics (located at the first error).
    pub fn compile(path: &str, src: &str, diagnostics: Vec<Diagnostic>) -> BtError {
        let location = first_error(&diagnostics).map(|d| {
            let (l, c) = crate::diagnostic::line_col(src, d.span.start);
            (path.to_string(), l, c)
        });
        BtError::Compile(CompileFailure {
            diagnostics,
            location,
        })
    }

    /// True when the unit did not run because of compile errors.
    pub fn is_compile(&self) -> bool {
        matches!(self, BtError::Compile(_))
    }

    /// The diagnostics of a compile error (empty otherwise).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            BtError::Compile(c) => &c.diagnostics,
            _ => &[],
        }
    }

    /// The exception class name: `CompileError` for a compile error, `ProgramExit` for an exit.
    pub fn class_name(&self) -> &str {
        match self {
            BtError::Compile(_) => "CompileError",
            BtError::Uncaught(u) => &u.class_name,
            BtError::Exit(_) => "ProgramExit",
        }
    }

    /// The kind without `#`: `compile_error`, `exit`, or the exception's kind.
    pub fn kind(&self) -> &str {
        match self {
            BtError::Compile(_) => "compile_error",
            BtError::Uncaught(u) => &u.kind,
            BtError::Exit(_) => "exit",
        }
    }

    /// The message: the first error's for a compile error, the status for an exit.
    pub fn message(&self) -> String {
        match self {
            BtError::Compile(c) => first_error(&c.diagnostics)
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "compile error".to_string()),
            BtError::Uncaught(u) => u.message.clone(),
            BtError::Exit(code) => code.to_string(),
        }
    }

    pub fn hint(&self) -> Option<&str> {
        match self {
            BtError::Compile(c) => first_error(&c.diagnostics).and_then(|d| d.hint.as_deref()),
            BtError::Uncaught(u) => u.hint.as_deref(),
            BtError::Exit(_) => None,
        }
    }

    pub fn selector(&self) -> Option<&str> {
        match self {
            BtError::Uncaught(u) => u.selector.as_deref(),
            _ => None,
        }
    }

    /// `file:line:col` of the error, if known.
    pub fn location(&self) -> Option<&(String, usize, usize)> {
        match self {
            BtError::Compile(c) => c.location.as_ref(),
            BtError::Uncaught(u) => u.location.as_ref(),
            BtError::Exit(_) => None,
        }
    }

    /// The line under the report's first line: an arithmetic fault's operation.
    pub fn detail(&self) -> Option<&str> {
        match self {
            BtError::Uncaught(u) => u.detail.as_deref(),
            _ => None,
        }
    }

    /// An arithmetic fault (raw reason `badarith`).
    pub fn is_badarith(&self) -> bool {
        matches!(self, BtError::Uncaught(u) if u.badarith)
    }

    /// `ClassName (kind): message`, the [`BtError::detail`] line of an arithmetic fault, and
    /// `Hint: …`, without the location. A message or
    /// hint longer than [`MAX_REPORTED`] characters is cut in the middle, the cut counted.
    pub fn report(&self) -> String {
        let cap = |t: &str| crate::diagnostic::cap_middle(t, MAX_REPORTED).into_owned();
        let mut s = if self.is_compile() {
            format!("error: {}", cap(&self.message()))
        } else {
            format!(
                "{} ({}): {}",
                self.class_name(),
                self.kind(),
                cap(&self.message())
            )
        };
        if let Some(d) = self.detail() {
            s.push('\n');
            s.push_str(d);
        }
        if let Some(h) = self.hint() {
            s.push_str(&format!("\nHint: {}", cap(h)));
        }
        s
    }

    /// The report with `FILE:LINE:COL: ` in front when the location is known.
    pub fn report_with_location(&self) -> String {
        match self.location() {
            Some((f, l, c)) => format!("{f}:{l}:{c}: {}", self.report()),
            None => self.report(),
        }
    }

    /// The stack of an uncaught error, innermost first (empty otherwise).
    pub fn trace(&self) -> &[TraceFrame] {
        match self {
            BtError::Uncaught(u) => &u.trace,
            _ => &[],
        }
    }

    /// The stack as Python prints it, innermost last: `Traceback (innermost last):` and one
    /// `  FILE:LINE:COL  Class>>selector` line per frame, with a line naming the actor where
    /// the error crossed from an actor to its caller. Empty when there is at most one frame
    /// (a top-level statement: the report's own location says it all).
    pub fn traceback(&self) -> String {
        let trace = self.trace();
        if trace.len() < 2 {
            return String::new();
        }
        let mut s = String::from("Traceback (innermost last):\n");
        let width = trace
            .iter()
            .map(|f| f.location.as_deref().map_or(9, |l| l.chars().count()))
            .max()
            .unwrap_or(0);
        let mut actor: Option<&str> = None;
        for f in trace.iter().rev() {
            if f.actor.as_deref() != actor {
                actor = f.actor.as_deref();
                if let Some(a) = actor {
                    s.push_str(&format!("  -- in actor {a} --\n"));
                }
            }
            let loc = f.location.as_deref().unwrap_or("(library)");
            s.push_str(&format!("  {loc:<width$}  {}\n", f.method));
        }
        s
    }

    /// The source line with a caret under the failing send, when known (uncaught errors).
    pub fn excerpt(&self) -> Option<&str> {
        match self {
            BtError::Uncaught(u) => u.excerpt.as_deref(),
            _ => None,
        }
    }

    /// [`BtError::report_with_location`] with the innermost frame's source line and a caret
    /// (the [`BtError::excerpt`]) under the first line and the detail, before the hint.
    pub fn report_with_excerpt(&self) -> String {
        self.with_excerpt(self.report_with_location())
    }

    /// [`BtError::report`] (no `file:line:col` prefix) with the [`BtError::excerpt`] placed
    /// as in [`BtError::report_with_excerpt`]: the REPL's report of an input.
    pub fn report_with_caret(&self) -> String {
        self.with_excerpt(self.report())
    }

    fn with_excerpt(&self, report: String) -> String {
        let Some(x) = self.excerpt() else {
            return report;
        };
        let head_lines = 1 + usize::from(self.detail().is_some());
        let mut lines = report.splitn(head_lines + 1, '\n');
        let mut out = String::new();
        for _ in 0..head_lines {
            if let Some(l) = lines.next() {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str(x);
        if let Some(rest) = lines.next() {
            out.push('\n');
            out.push_str(rest);
        }
        out
    }

    /// [`BtError::traceback`] followed by [`BtError::report_with_excerpt`]: the report of
    /// `bt run` and the REPL's `:load`.
    pub fn report_with_traceback(&self) -> String {
        format!("{}{}", self.traceback(), self.report_with_excerpt())
    }

    /// `Some(code)` when the error is a `Program exit:` request.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            BtError::Exit(code) => Some(*code),
            _ => None,
        }
    }
}

fn first_error(diags: &[Diagnostic]) -> Option<&Diagnostic> {
    diags.iter().find(|d| d.is_error()).or(diags.first())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Span;

    #[test]
    fn accessors_answer_for_every_variant() {
        let d = Diagnostic::error("E0101", "bad token", Span { start: 4, end: 5 });
        let c = BtError::compile("a.bt", "x := )", vec![d]);
        assert!(c.is_compile() && c.kind() == "compile_error");
        assert_eq!(c.report_with_location(), "a.bt:1:5: error: bad token");
        let e = BtError::simple("TypeError", "type_error", "nope");
        assert_eq!(e.report(), "TypeError (type_error): nope");
        assert!(!e.is_compile() && !e.is_badarith() && e.exit_code().is_none());
        let x = BtError::Exit(3);
        assert_eq!(x.exit_code(), Some(3));
        assert_eq!(x.report(), "ProgramExit (exit): 3");
    }
}
