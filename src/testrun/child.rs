//! The worker process: `bt test --worker SPEC` runs one file in a fresh interpreter and
//! writes [`Event`]s to standard output, each framed by [`MARKER`] and a line end, so they
//! can share the stream with whatever the tests print.

use std::io::Write;

use super::expect::ErrorFacts;
use super::worker::{self, Engine, Event, LoadOutcome, Sink, WorkerSpec};
use crate::interp::{BtError, Interpreter, InterpreterOptions};

/// Starts an event on the worker's standard output.
pub(crate) const MARKER: &[u8] = b"\x1eBT-EVENT\x1f";

/// Writes one event atomically with respect to other users of `std::io::stdout`.
pub(crate) fn emit(ev: &Event) {
    let mut buf = MARKER.to_vec();
    buf.extend(serde_json::to_vec(ev).expect("plain data serialises"));
    buf.push(b'\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&buf);
    let _ = out.flush();
}

struct StdoutSink;

impl Sink for StdoutSink {
    fn emit(&mut self, ev: Event) {
        emit(&ev);
    }
}

/// The real interpreter behind [`Engine`].
pub(crate) struct VmEngine {
    vm: Interpreter,
}

impl VmEngine {
    pub(crate) fn new(spec: &WorkerSpec) -> VmEngine {
        let mut levels = crate::check::CheckOptions {
            warnings_as_errors: spec.warnings_as_errors,
            ..Default::default()
        };
        for l in &spec.diagnostics {
            // Validated by the parent (`bt test` argument parsing and the manifest).
            let _ = levels.set_level_arg(l);
        }
        let opts = InterpreterOptions {
            deterministic_pids: true,
            check: spec.check,
            ..InterpreterOptions::default()
        };
        let vm = Interpreter::new(opts);
        vm.set_check_options(levels);
        VmEngine { vm }
    }
}

/// The parts of a [`BtError`] that expectations look at.
pub(crate) fn facts(e: &BtError) -> ErrorFacts {
    ErrorFacts {
        class_name: e.class_name().to_string(),
        kind: e.kind().to_string(),
        message: e.message(),
        hint: e.hint().map(str::to_string),
        badarith: e.is_badarith(),
        compile: e.is_compile(),
        messages: e.diagnostics().iter().map(|d| d.message.clone()).collect(),
        traceback: e.traceback(),
        detail: e.detail().map(str::to_string),
    }
}

impl Engine for VmEngine {
    fn load_unit(&mut self, files: &[(String, String)]) -> LoadOutcome {
        let report = self.vm.load_unit(files);
        for f in &report.findings {
            eprint!("{f}");
            if !f.ends_with('\n') {
                eprintln!();
            }
        }
        let error = report
            .error
            .as_ref()
            .map(|e| (e.location().map(|l| l.0.clone()), facts(e)));
        LoadOutcome {
            warnings: report.warnings,
            error,
        }
    }
    fn eval(&mut self, path: &str, src: &str) -> Result<String, Box<ErrorFacts>> {
        let r = self.vm.eval(path, src);
        // The checker's warnings and hints for this input (its errors are the result).
        for f in self.vm.last_findings() {
            eprint!("{f}");
            if !f.ends_with('\n') {
                eprintln!();
            }
        }
        match r {
            Ok(v) => Ok(self.vm.display(&v)),
            Err(e) => Err(Box::new(facts(&e))),
        }
    }
    fn has_class(&mut self, _path: &str, name: &str) -> bool {
        self.vm.prog.class_named(name).is_some()
    }
}

/// Entry point of `bt test --worker SPEC`: answers the exit status.
pub(crate) fn main(spec_json: &str) -> i32 {
    let spec: WorkerSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bt test --worker: bad spec: {e}");
            return 2;
        }
    };
    // Exit when the parent `bt test` does (testrun/lifeline.rs).
    super::lifeline::watch();
    // A panic anywhere ends this worker; tell the parent what happened first.
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "panic".to_string()
        };
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        emit(&Event::Crash {
            text: format!("interpreter panicked: {msg}{place}"),
        });
    }));
    // The evaluator recurses on the native stack: give it room (reserved, committed lazily).
    let handle = std::thread::Builder::new()
        .name("bt-test-worker".into())
        .stack_size(512 << 20)
        .spawn(move || {
            let mut engine = VmEngine::new(&spec);
            worker::run(&mut engine, &spec, &mut StdoutSink);
        });
    match handle.map(|h| h.join()) {
        Ok(Ok(())) => 0,
        _ => 101,
    }
}
