//! The program-level API: one `Vm` is one running program (class table, runtime, bindings).
//! The CLI, the REPL and the test runner use only this. (Skeleton with the contract of
//! NOTES.md — interp-core owns this file and fills it in.)

use crate::diagnostic::Diagnostic;
use crate::interp::value::Value;

#[derive(Clone, Debug)]
pub struct VmOptions {
    /// Nested activations before `stack_overflow` (LANGUAGE.md 5.10).
    pub max_depth: usize,
    /// Pid numbers restart per Vm (golden tests).
    pub deterministic_pids: bool,
    /// `ProcessNavigation system` allowed (true under the command line).
    pub privileged: bool,
    /// Run the static checker before each unit.
    pub check: bool,
}

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions {
            max_depth: 10_000,
            deterministic_pids: true,
            privileged: true,
            check: true,
        }
    }
}

/// An error that reached the top of a unit: a compile error or an uncaught exception.
#[derive(Clone, Debug)]
pub struct BtError {
    /// Exception class name (`TypeError`), or `CompileError` for diagnostics.
    pub class_name: String,
    /// Kind without `#` (`type_error`); `badarith` faults also report `type_error` here.
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
    pub selector: Option<String>,
    /// `file:line:col` of the innermost send when raised (3.5), if known.
    pub location: Option<(String, usize, usize)>,
    /// True when the unit did not run because of compile errors.
    pub compile: bool,
    /// The diagnostics of a compile error (empty otherwise).
    pub diagnostics: Vec<Diagnostic>,
    /// Arithmetic fault (`badarith` raw reason) — matches `badarith` in expectations.
    pub badarith: bool,
}

/// What loading a set of files produced.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Per file: warnings (parse/check/run failures, already rendered as text).
    pub warnings: Vec<(String, String)>,
    /// Diagnostics of severity warning/hint to print (rendered text).
    pub findings: Vec<String>,
    /// The first uncaught error raised by a top-level statement, if any.
    pub error: Option<BtError>,
}

pub struct Vm {}

impl Vm {
    pub fn new(_opts: VmOptions) -> Vm {
        todo!()
    }
    /// Loads files as one unit: all declarations first, then statements in the order given.
    pub fn load_unit(&self, _files: &[(String, String)]) -> LoadReport {
        todo!()
    }
    /// Evaluates one REPL input / btscript expression; top-level bindings persist.
    pub fn eval(&self, _path: &str, _src: &str) -> Result<Value, BtError> {
        todo!()
    }
    /// Top-level display (LANGUAGE.md 10.3).
    pub fn display(&self, _v: &Value) -> String {
        todo!()
    }
}
