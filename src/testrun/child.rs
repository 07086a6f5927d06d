//! The worker process: `bt test --worker SPEC` runs one file in a fresh interpreter and
//! writes [`Event`]s to standard output, each framed by [`MARKER`] and a line end, so they
//! can share the stream with whatever the tests print.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Write;
use std::rc::Rc;

use super::expect::ErrorFacts;
use super::report::{CaseResult, Schedule, Status};
use super::worker::{self, Bless, Engine, Event, LoadOutcome, Sink, WorkerSpec};
use crate::interp::{BtError, Interpreter, InterpreterOptions};
use crate::runtime::SimConfig;

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
struct VmEngine {
    vm: Interpreter,
    /// Under the deterministic scheduler: (step index, scheduling steps) of the last step.
    steps: Rc<Cell<(usize, u64)>>,
}

impl VmEngine {
    /// An interpreter for `spec`, under the deterministic scheduler when `seed` is given.
    pub(crate) fn new(spec: &WorkerSpec, seed: Option<u64>) -> VmEngine {
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
            sim: seed.map(|s| {
                let d = SimConfig::new(s);
                SimConfig {
                    crash_p: spec.inject_crashes,
                    step_budget: spec.step_budget.unwrap_or(d.step_budget),
                    ..d
                }
            }),
            // Exploring runs the file many times: its runtime log (failed casts …) too.
            log: (spec.explore > 0)
                .then(|| crate::base::log::LogTarget(std::sync::Arc::new(|_: &str| {}))),
            ..InterpreterOptions::default()
        };
        let vm = Interpreter::new(opts);
        vm.set_check_options(levels);
        VmEngine {
            vm,
            steps: Rc::new(Cell::new((usize::MAX, 0))),
        }
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
        excerpt: e.excerpt().map(str::to_string),
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
        let rt = self.vm.runtime();
        if rt.is_simulated() {
            let (index, _) = self.steps.get();
            self.steps.set((index, rt.sim_steps()));
            // A deadlock or livelock ended the main process: say so instead.
            if let Some(v) = rt.sim_take_verdict() {
                let (kind, text) = v.split_once(": ").unwrap_or(("deadlock", &v));
                let (kind, v) = (kind.to_string(), text.to_string());
                let mut f = match &r {
                    Err(e) => facts(e),
                    Ok(_) => ErrorFacts::default(),
                };
                f.class_name = "SchedulerError".into();
                f.kind = kind;
                f.message = v;
                f.traceback = String::new();
                return Err(Box::new(f));
            }
        }
        match r {
            Ok(v) => Ok(self.vm.display(&v)),
            Err(e) => Err(Box::new(facts(&e))),
        }
    }
    fn begin_step(&mut self, index: usize) {
        let rt = self.vm.runtime();
        if rt.is_simulated() {
            rt.sim_reseed(index as u64);
            self.steps.set((index, 0));
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
            if spec.explore > 0 {
                explore(&spec);
            } else if let Some(seed) = spec.seed {
                let mut engine = VmEngine::new(&spec, Some(seed));
                let mut sink = ScheduleSink {
                    seed,
                    steps: engine.steps.clone(),
                };
                worker::run(&mut engine, &spec, &mut sink);
            } else {
                let mut engine = VmEngine::new(&spec, None);
                worker::run(&mut engine, &spec, &mut StdoutSink);
            }
        });
    match handle.map(|h| h.join()) {
        Ok(Ok(())) => 0,
        _ => 101,
    }
}

/// `--seed`: each case result carries its schedule (seed and length).
struct ScheduleSink {
    seed: u64,
    steps: Rc<Cell<(usize, u64)>>,
}

impl Sink for ScheduleSink {
    fn emit(&mut self, mut ev: Event) {
        if let Event::Case { index, result, .. } = &mut ev {
            let (i, steps) = self.steps.get();
            result.schedule = Some(Schedule {
                seed: self.seed,
                steps: if i == *index { steps } else { 0 },
                schedules: 1,
                replay: None,
            });
        }
        emit(&ev);
    }
}

/// One schedule's events under `--explore`: steps are passed on (the parent's deadline
/// runs per step), results are kept for the verdict at the end, notes are passed on once.
struct ExploreSink {
    first: bool,
    cases: Vec<(usize, CaseResult, Option<Bless>)>,
    file_error: bool,
}

impl Sink for ExploreSink {
    fn emit(&mut self, ev: Event) {
        match ev {
            Event::Case {
                index,
                result,
                bless,
            } => self.cases.push((index, result, bless)),
            Event::Done => {}
            Event::FileError { .. } => {
                self.file_error = true;
                if self.first {
                    emit(&ev);
                }
            }
            Event::Start { .. } | Event::Crash { .. } => emit(&ev),
            Event::Warning { .. } | Event::TestClass { .. } => {
                if self.first {
                    emit(&ev);
                }
            }
        }
    }
}

/// A shell word: as it is when it is plain, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command that replays `name` of `spec` under `seed`.
fn replay_command(spec: &WorkerSpec, seed: u64, name: &str) -> String {
    let first = name.lines().next().unwrap_or(name).trim();
    let mut cmd = format!(
        "bt test --seed {seed} {} --filter {}",
        shell_word(&spec.path),
        shell_word(first)
    );
    if spec.inject_crashes > 0.0 {
        cmd.push_str(&format!(" --inject-crashes {}", spec.inject_crashes));
    }
    if let Some(n) = spec.step_budget {
        cmd.push_str(&format!(" --step-budget {n}"));
    }
    cmd
}

/// Schedules tried after every case has failed, looking for shorter failing ones.
const SHRINK_WINDOW: u32 = 32;

/// What `--explore` keeps of one case: its last pass, or its shortest failure.
struct Found {
    result: CaseResult,
    bless: Option<Bless>,
    seed: u64,
    steps: u64,
    /// The schedule (1-based) it came from.
    at: u32,
    /// Failing schedules seen for this case.
    fails: u32,
}

/// `--explore K`: runs the file under K schedules (seeds `--seed`, default 1, and the next
/// K - 1 numbers), each in a fresh interpreter with the program's output discarded, and
/// reports per case its pass, or its failure under the shortest failing schedule found (the
/// fewest scheduling steps) with the command that replays it. Once every case has failed,
/// [`SHRINK_WINDOW`] more schedules are tried for shorter failures, then it stops.
fn explore(spec: &WorkerSpec) {
    let base = spec.seed.unwrap_or(1);
    let k = spec.explore;
    let mut found: BTreeMap<usize, Found> = BTreeMap::new();
    let mut all_failed_at: Option<u32> = None;
    for i in 0..k {
        let seed = base.wrapping_add(u64::from(i));
        let mut engine = VmEngine::new(spec, Some(seed));
        engine.vm.set_output(Box::new(|_| {}));
        let steps = engine.steps.clone();
        let mut sink = ExploreSink {
            first: i == 0,
            cases: Vec::new(),
            file_error: false,
        };
        let mut per_case = Vec::new();
        {
            // Record each case's schedule length as its result arrives.
            struct Tap<'a> {
                inner: &'a mut ExploreSink,
                steps: Rc<Cell<(usize, u64)>>,
                out: &'a mut Vec<(usize, u64)>,
            }
            impl Sink for Tap<'_> {
                fn emit(&mut self, ev: Event) {
                    if let Event::Case { index, .. } = &ev {
                        let (i, s) = self.steps.get();
                        self.out.push((*index, if i == *index { s } else { 0 }));
                    }
                    self.inner.emit(ev);
                }
            }
            let mut tap = Tap {
                inner: &mut sink,
                steps,
                out: &mut per_case,
            };
            worker::run(&mut engine, spec, &mut tap);
        }
        drop(engine);
        for (index, result, bless) in sink.cases {
            let steps = per_case
                .iter()
                .find(|(x, _)| *x == index)
                .map_or(0, |(_, s)| *s);
            let failed = result.status == Status::Fail;
            let fails = found.get(&index).map_or(0, |f| f.fails) + u32::from(failed);
            match found.get_mut(&index) {
                Some(f) if f.result.status == Status::Fail => {
                    f.fails = fails;
                    if !failed || steps >= f.steps {
                        continue;
                    }
                }
                _ => {}
            }
            found.insert(
                index,
                Found {
                    result,
                    bless,
                    seed,
                    steps,
                    at: i + 1,
                    fails,
                },
            );
        }
        if sink.file_error {
            break;
        }
        let all_failed =
            !found.is_empty() && found.values().all(|f| f.result.status != Status::Pass);
        if all_failed && all_failed_at.is_none() {
            all_failed_at = Some(i);
        }
        if all_failed_at.is_some_and(|a| i >= a + SHRINK_WINDOW) {
            break;
        }
    }
    let tried = |f: &Found| {
        f.at.max(all_failed_at.map_or(k, |a| (a + SHRINK_WINDOW + 1).min(k)))
    };
    for (index, f) in &found {
        let mut result = f.result.clone();
        let mut schedule = Schedule {
            seed: f.seed,
            steps: f.steps,
            schedules: if result.status == Status::Fail {
                tried(f)
            } else {
                k
            },
            replay: None,
        };
        if result.status == Status::Fail {
            let cmd = replay_command(spec, f.seed, &result.name);
            let why = result.message.take().unwrap_or_default();
            let shortest = if f.fails > 1 {
                format!("; the shortest of {} failing", f.fails)
            } else {
                String::new()
            };
            result.message = Some(format!(
                "failed under schedule {} of {} (seed {}, {} steps{shortest}); replay:\n  {cmd}{}{why}",
                f.at,
                schedule.schedules,
                f.seed,
                f.steps,
                if why.is_empty() { "" } else { "\n" }
            ));
            schedule.replay = Some(cmd);
        }
        result.schedule = Some(schedule);
        emit(&Event::Case {
            index: *index,
            result,
            bless: f.bless.clone(),
        });
    }
    emit(&Event::Done);
}
