//! Running one test file inside one interpreter (the child side of `bt test`).
//!
//! The worker loads the file's load unit, then runs its steps in order and reports each as
//! an [`Event`]: `Start` before a step (so the parent can enforce the per-case deadline),
//! `Case` with its result. Steps are numbered; after a timeout or crash the parent starts a
//! fresh worker with `resume` (first step to report) and `skip` (steps never to run again):
//! an expression file replays the earlier steps silently to rebuild its bindings, a suite
//! simply continues with the next test.
//!
//! The interpreter is behind the [`Engine`] trait so this logic is tested without one.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::discover::{at_loads, class_headers, resolve_at_load, FileKind};
use super::doc::example_lines;
use super::expect::{escape, ErrorFacts, Expectation};
use super::report::{CaseResult, Status};
use super::split::{self, padded, split_lines, Entry};

/// What loading a unit produced.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoadOutcome {
    /// (file, text) for each file that failed to parse, check or run.
    pub(crate) warnings: Vec<(String, String)>,
    /// The first uncaught error of a top-level statement: (file if known, error).
    pub(crate) error: Option<(Option<String>, ErrorFacts)>,
}

/// The interpreter as the runner sees it.
pub(crate) trait Engine {
    /// Loads files as one unit (declarations first, then statements in order).
    fn load_unit(&mut self, files: &[(String, String)]) -> LoadOutcome;
    /// Evaluates source; answers its top-level display or the error.
    fn eval(&mut self, path: &str, src: &str) -> Result<String, Box<ErrorFacts>>;
    /// Whether a class of this name is loaded (a probe: prints nothing, checks nothing).
    fn has_class(&mut self, path: &str, name: &str) -> bool {
        self.eval(path, name).is_ok()
    }
    /// Step `index` (a case or a test) begins: under the deterministic scheduler its
    /// schedule restarts from the seed mixed with the index, so a test replays the same
    /// with or without `--filter`.
    fn begin_step(&mut self, _index: usize) {}
}

/// Where events go (stdout with a marker in the child; a Vec in tests).
pub(crate) trait Sink {
    fn emit(&mut self, ev: Event);
}

impl Sink for Vec<Event> {
    fn emit(&mut self, ev: Event) {
        self.push(ev);
    }
}

/// A replacement for a `// =>` line, for `--bless`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Bless {
    /// The `// =>` line to rewrite.
    pub(crate) line: usize,
    pub(crate) text: String,
    /// The line of the case it belongs to (for the report of what was rewritten).
    #[serde(default)]
    pub(crate) case_line: usize,
}

/// Worker → parent messages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub(crate) enum Event {
    /// Step `index` begins; `report` is false for silent replays and set-up steps.
    Start {
        index: usize,
        name: String,
        line: usize,
        report: bool,
    },
    /// The result of step `index`.
    Case {
        index: usize,
        result: CaseResult,
        bless: Option<Bless>,
    },
    /// A load problem or other note (stderr and JSON `warnings`).
    Warning {
        text: String,
    },
    /// The file cannot run at all.
    FileError {
        text: String,
    },
    /// The suite's test class (for `Class>>test` in reports).
    TestClass {
        name: String,
    },
    /// The interpreter panicked (sent by the panic hook).
    Crash {
        text: String,
    },
    Done,
}

/// What the parent asks a worker to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkerSpec {
    pub(crate) path: String,
    pub(crate) kind: FileKind,
    /// Fixture files then `--load` files: the load unit run before the file.
    pub(crate) unit: Vec<String>,
    /// First step whose result is reported; earlier steps are replayed silently.
    pub(crate) resume: usize,
    /// Steps that timed out or crashed: never run again.
    pub(crate) skip: Vec<usize>,
    /// Only report cases whose name contains this.
    pub(crate) filter: Option<String>,
    /// Run the static checker.
    pub(crate) check: bool,
    /// Checker warnings count as errors.
    #[serde(default)]
    pub(crate) warnings_as_errors: bool,
    /// Checker levels (`CATEGORY=LEVEL`: the manifest's, then the command line's), in order.
    #[serde(default)]
    pub(crate) diagnostics: Vec<String>,
    /// Per-step timeout in seconds (for messages only; the parent enforces it).
    pub(crate) timeout_secs: f64,
    /// Run under the deterministic scheduler with this seed (`--seed`, `// @seed`).
    #[serde(default)]
    pub(crate) seed: Option<u64>,
    /// Explore this many schedules (`--explore`, `// @explore`); 0: one run.
    #[serde(default)]
    pub(crate) explore: u32,
    /// Probability of an injected actor crash at each message boundary.
    #[serde(default)]
    pub(crate) inject_crashes: f64,
    /// Scheduling steps a step may take before it is a livelock (None: the default).
    #[serde(default)]
    pub(crate) step_budget: Option<u64>,
}

/// `timed out after 30 s` (whole seconds shown without a fraction).
pub(crate) fn timeout_message(secs: f64) -> String {
    if secs.fract() == 0.0 {
        format!("timed out after {} s", secs as u64)
    } else {
        format!("timed out after {secs} s")
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// Loads `files` as one unit, turning problems into warnings; answers the problems of
/// `own` (the test file itself) separately.
fn load(
    engine: &mut dyn Engine,
    files: &[String],
    own: Option<&str>,
    sink: &mut dyn Sink,
) -> Vec<String> {
    let mut unit = Vec::new();
    for f in files {
        match read(f) {
            Ok(src) => unit.push((f.clone(), src)),
            Err(e) => sink.emit(Event::Warning { text: e }),
        }
    }
    if unit.is_empty() {
        return Vec::new();
    }
    let outcome = engine.load_unit(&unit);
    let mut own_problems = Vec::new();
    let mut seen = Vec::new();
    for (file, text) in outcome.warnings {
        if seen.contains(&text) {
            continue;
        }
        seen.push(text.clone());
        if own == Some(file.as_str()) {
            own_problems.push(text);
        } else {
            sink.emit(Event::Warning {
                text: with_file(&file, &text),
            });
        }
    }
    if let Some((file, e)) = outcome.error {
        let text = e.describe();
        if !seen.iter().any(|s| s.contains(&e.message)) {
            match (&file, own) {
                (Some(f), Some(o)) if f == o => own_problems.push(text),
                (Some(f), _) => sink.emit(Event::Warning {
                    text: with_file(f, &text),
                }),
                (None, _) => sink.emit(Event::Warning { text }),
            }
        }
    }
    own_problems
}

fn with_file(file: &str, text: &str) -> String {
    if text.starts_with(file) {
        text.to_string()
    } else {
        format!("{file}: {text}")
    }
}

/// Runs the file described by `spec`, then emits `Done`.
pub(crate) fn run(engine: &mut dyn Engine, spec: &WorkerSpec, sink: &mut dyn Sink) {
    match &spec.kind {
        FileKind::Expressions | FileKind::DocExamples => run_expressions(engine, spec, sink),
        FileKind::Suite { class, ignored } => run_suite(engine, spec, class, ignored, sink),
    }
    sink.emit(Event::Done);
}

fn reportable(spec: &WorkerSpec, name: &str) -> bool {
    spec.filter.as_deref().is_none_or(|f| name.contains(f))
}

fn run_expressions(engine: &mut dyn Engine, spec: &WorkerSpec, sink: &mut dyn Sink) {
    let src = match read(&spec.path) {
        Ok(s) => s,
        Err(e) => return sink.emit(Event::FileError { text: e }),
    };
    let path = Path::new(&spec.path);
    load(engine, &spec.unit, None, sink);
    let entries = if spec.kind == FileKind::DocExamples {
        load_documented_file(engine, spec, &src, sink);
        let lines = example_lines(&src);
        let refs: Vec<(usize, &str)> = lines.iter().map(|(n, l)| (*n, l.as_str())).collect();
        split_lines(&refs)
    } else {
        split::split(&src)
    };
    // With a filter, nothing after the last matching case needs to run.
    let last_wanted = if spec.filter.is_none() {
        entries.len()
    } else {
        entries
            .iter()
            .rposition(|e| match e {
                Entry::Case(c) => reportable(spec, &c.name),
                Entry::Problem { name, .. } => reportable(spec, name),
                _ => false,
            })
            .map_or(0, |i| i + 1)
    };
    for (index, entry) in entries.iter().enumerate().take(last_wanted) {
        if spec.skip.contains(&index) {
            continue;
        }
        let replay = index < spec.resume;
        match entry {
            Entry::Load { line, path: p } => {
                sink.emit(Event::Start {
                    index,
                    name: format!("@load {p}"),
                    line: *line,
                    report: false,
                });
                match resolve_at_load(p, path) {
                    Some(f) => {
                        load(engine, &[f.display().to_string()], None, sink);
                    }
                    None if !replay => sink.emit(Event::Warning {
                        text: format!("{}:{line}: @load {p}: no such file", spec.path),
                    }),
                    None => {}
                }
            }
            Entry::Decl { line, source, name } => {
                sink.emit(Event::Start {
                    index,
                    name: name.clone(),
                    line: *line,
                    report: false,
                });
                if let Err(e) = engine.eval(&spec.path, &padded(*line, source, None)) {
                    if !replay {
                        let result = CaseResult::fail(
                            name.clone(),
                            *line,
                            format!("declaration failed: {}", e.describe()),
                        );
                        sink.emit(Event::Case {
                            index,
                            result,
                            bless: None,
                        });
                    }
                }
            }
            Entry::Problem {
                line,
                name,
                message,
            } => {
                if !replay && reportable(spec, name) {
                    let result = CaseResult::fail(name.clone(), *line, message.clone());
                    sink.emit(Event::Case {
                        index,
                        result,
                        bless: None,
                    });
                }
            }
            Entry::Case(case) => {
                let report = !replay && reportable(spec, &case.name);
                if let Expectation::Error(x) = &case.expectation {
                    if x.is_empty() {
                        if report {
                            sink.emit(Event::Warning {
                                text: format!(
                                    "{}:{}: empty `ERROR:` expectation; case skipped",
                                    spec.path, case.expect_line
                                ),
                            });
                            let mut result = CaseResult::skip(
                                case.name.clone(),
                                case.line,
                                "empty ERROR: expectation",
                            );
                            result.expected = Some(case.expectation.describe());
                            sink.emit(Event::Case {
                                index,
                                result,
                                bless: None,
                            });
                        }
                        continue;
                    }
                }
                sink.emit(Event::Start {
                    index,
                    name: case.name.clone(),
                    line: case.line,
                    report,
                });
                engine.begin_step(index);
                let outcome = engine.eval(&spec.path, &case.eval_source());
                if report {
                    let (result, bless) = judge(case, outcome);
                    sink.emit(Event::Case {
                        index,
                        result,
                        bless,
                    });
                }
            }
        }
    }
}

/// For doc examples of a file that is not already part of the library, load the file first.
fn load_documented_file(
    engine: &mut dyn Engine,
    spec: &WorkerSpec,
    src: &str,
    sink: &mut dyn Sink,
) {
    let classes = class_headers(src);
    let already_loaded = !classes.is_empty()
        && classes
            .iter()
            .all(|(_, name)| engine.has_class(&spec.path, name));
    if !already_loaded {
        for p in load(
            engine,
            std::slice::from_ref(&spec.path),
            Some(&spec.path),
            sink,
        ) {
            sink.emit(Event::Warning {
                text: with_file(&spec.path, &p),
            });
        }
    }
}

/// Compares an outcome with the case's expectation.
pub(crate) fn judge(
    case: &split::Case,
    outcome: Result<String, Box<ErrorFacts>>,
) -> (CaseResult, Option<Bless>) {
    let mut r = CaseResult::pass(case.name.clone(), case.line);
    r.expected = Some(case.expectation.describe());
    let error_text = |e: &ErrorFacts| {
        if e.compile {
            format!("ERROR: {}", e.message)
        } else {
            format!("ERROR: {} ({}): {}", e.class_name, e.kind, e.message)
        }
    };
    let bless_text = |o: &Result<String, Box<ErrorFacts>>| match o {
        Ok(d) => escape(d),
        Err(e) if e.compile => format!("ERROR: {}", escape(&e.message)),
        Err(e) => format!("ERROR: {}", e.kind),
    };
    let passed = match (&case.expectation, &outcome) {
        (Expectation::Value(pat), Ok(d)) => {
            r.actual = Some(d.clone());
            super::expect::matches(pat, d)
        }
        (Expectation::Value(_), Err(e)) => {
            r.actual = Some(error_text(e));
            r.message = error_detail(e);
            false
        }
        (Expectation::Error(x), Err(e)) => {
            r.actual = Some(error_text(e));
            r.message = error_detail(e);
            e.matches(x)
        }
        (Expectation::Error(_), Ok(d)) => {
            r.actual = Some(d.clone());
            r.message = Some("expected an error, but the expression answered a value".into());
            false
        }
    };
    if passed {
        r.message = None;
        (r, None)
    } else {
        r.status = Status::Fail;
        let bless = Bless {
            case_line: case.line,
            line: case.expect_line,
            text: bless_text(&outcome),
        };
        (r, Some(bless))
    }
}

/// The hint and the traceback of an error a case failed with.
fn error_detail(e: &ErrorFacts) -> Option<String> {
    let mut parts = Vec::new();
    parts.extend([&e.detail, &e.excerpt].into_iter().flatten().cloned());
    if let Some(h) = &e.hint {
        parts.push(format!("Hint: {h}"));
    }
    if !e.traceback.is_empty() {
        parts.push(e.traceback.trim_end().to_string());
    }
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// Line of `selector =>` (a method header) in `src`, or 0.
fn method_line(src: &str, selector: &str) -> usize {
    src.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(selector).is_some_and(|rest| {
                let rest = rest.trim_start();
                rest.starts_with("=>") || rest.starts_with("->")
            })
        })
        .map_or(0, |i| i + 1)
}

fn run_suite(
    engine: &mut dyn Engine,
    spec: &WorkerSpec,
    class: &str,
    ignored: &[String],
    sink: &mut dyn Sink,
) {
    let src = match read(&spec.path) {
        Ok(s) => s,
        Err(e) => return sink.emit(Event::FileError { text: e }),
    };
    let path = Path::new(&spec.path);
    sink.emit(Event::TestClass {
        name: class.to_string(),
    });
    if spec.resume == 0 {
        for other in ignored {
            sink.emit(Event::Warning {
                text: format!(
                    "{}: only the first TestCase class ({class}) runs; {other} is ignored",
                    spec.path
                ),
            });
        }
    }
    load(engine, &spec.unit, None, sink);
    let mut second: Vec<String> = Vec::new();
    for (line, p) in at_loads(&src) {
        match resolve_at_load(&p, path) {
            Some(f) => second.push(f.display().to_string()),
            None if spec.resume == 0 => sink.emit(Event::Warning {
                text: format!("{}:{line}: @load {p}: no such file", spec.path),
            }),
            None => {}
        }
    }
    second.push(spec.path.clone());
    let own = load(engine, &second, Some(&spec.path), sink);
    if !own.is_empty() {
        return sink.emit(Event::FileError {
            text: own.join("\n"),
        });
    }
    let selectors = match engine.eval(&spec.path, &format!("{class} testSelectors")) {
        Ok(d) => match serde_json::from_str::<Vec<String>>(&d) {
            Ok(mut v) => {
                v.retain(|s| s.starts_with("test") && !s.contains(':'));
                v.sort();
                v.dedup();
                v
            }
            Err(_) => {
                return sink.emit(Event::FileError {
                    text: format!("{class} testSelectors answered {d}"),
                });
            }
        },
        Err(e) => return sink.emit(Event::FileError { text: e.describe() }),
    };
    let wanted: Vec<(usize, &String)> = selectors
        .iter()
        .enumerate()
        .map(|(i, s)| (i + 1, s))
        .filter(|(_, s)| reportable(spec, s))
        .collect();
    if wanted.is_empty() {
        return;
    }
    // Step 0: setUpOnce; steps 1..=n: the tests; step n + 1: tearDownOnce.
    let fixture_error: Option<String> = if spec.skip.contains(&0) {
        Some(timeout_message(spec.timeout_secs))
    } else {
        sink.emit(Event::Start {
            index: 0,
            name: "setUpOnce".into(),
            line: method_line(&src, "setUpOnce"),
            report: false,
        });
        engine
            .eval(
                &spec.path,
                &format!("__btSuiteFixture := {class} new setUpOnce"),
            )
            .err()
            .map(|e| e.describe())
    };
    for (index, sel) in wanted {
        if index < spec.resume || spec.skip.contains(&index) {
            continue;
        }
        let line = method_line(&src, sel);
        if let Some(err) = &fixture_error {
            let result = CaseResult::fail(sel.clone(), line, format!("setUpOnce failed: {err}"));
            sink.emit(Event::Case {
                index,
                result,
                bless: None,
            });
            continue;
        }
        sink.emit(Event::Start {
            index,
            name: sel.clone(),
            line,
            report: true,
        });
        engine.begin_step(index);
        let outcome = engine.eval(
            &spec.path,
            &format!("{class} runTest: #{sel} fixture: __btSuiteFixture"),
        );
        let result = test_outcome(sel, line, outcome);
        sink.emit(Event::Case {
            index,
            result,
            bless: None,
        });
    }
    let last = selectors.len() + 1;
    if !spec.skip.contains(&last) {
        sink.emit(Event::Start {
            index: last,
            name: "tearDownOnce".into(),
            line: method_line(&src, "tearDownOnce"),
            report: false,
        });
        let fixture = if fixture_error.is_some() {
            "nil"
        } else {
            "__btSuiteFixture"
        };
        if let Err(e) = engine.eval(&spec.path, &format!("{class} runTearDownOnce: {fixture}")) {
            sink.emit(Event::Warning {
                text: format!("{}: tearDownOnce failed: {}", spec.path, e.describe()),
            });
        }
    }
}

/// Decodes the answer of `runTest:fixture:` (`#(#pass)`, `#(#fail, msg)`, `#(#skip, reason)`).
fn test_outcome(sel: &str, line: usize, outcome: Result<String, Box<ErrorFacts>>) -> CaseResult {
    match outcome {
        Err(e) => CaseResult::fail(sel, line, e.describe()),
        Ok(d) => match serde_json::from_str::<Vec<String>>(&d).ok().as_deref() {
            Some([s]) if s == "pass" => CaseResult::pass(sel, line),
            Some([s, m]) if s == "fail" => CaseResult::fail(sel, line, m.clone()),
            Some([s, m]) if s == "skip" => CaseResult::skip(sel, line, m.clone()),
            _ => CaseResult::fail(sel, line, format!("runTest:fixture: answered {d}")),
        },
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
