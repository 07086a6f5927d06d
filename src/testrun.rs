//! `bt test`: expression files and TestCase suites.
//!
//! ```text
//! discover ─▶ for each file: supervise ══(process)══▶ child ─▶ worker ─▶ Interpreter
//!                  ▲  deadline, restart after a hang/crash        │
//!                  └──────────── events (start, case, warning) ◀──┘
//! report (human / --json) ◀── results            bless ◀── proposed `// =>` texts
//! ```
//!
//! | module | what lives there |
//! |---|---|
//! | [`discover`] | finding test files, fixtures, `--load`/`@load` files; suite or expression file |
//! | [`scan`] | "is this text incomplete?" and "does the next line continue it?" |
//! | [`split`] | an expression file as cases, declarations, `@load` lines and problems |
//! | [`expect`] | `// =>` parsing, unescaping, `_` wildcards, `ERROR:` matching |
//! | [`lint`] | warnings about `// =>` lines that will not run |
//! | [`doc`] | `// =>` examples inside `///` comments |
//! | [`worker`] | running one file's steps on an [`worker::Engine`] and reporting events |
//! | [`child`] | the worker process (`bt test --worker`) over the real `Interpreter` |
//! | [`supervise`] | the parent: one worker process per file, per-step deadline, restarts |
//! | [`report`] | results, the human report and the JSON document |
//! | [`bless`] | rewriting `// =>` lines in place |
//!
//! Every file runs in its own process and interpreter, so nothing leaks between files and a
//! hanging or crashing case costs only itself: the parent kills the worker, fails the case and
//! starts a new worker that resumes after it.

pub(crate) mod bless;
pub(crate) mod child;
pub(crate) mod discover;
pub(crate) mod doc;
pub(crate) mod expect;
pub(crate) mod lifeline;
pub(crate) mod lint;
pub(crate) mod report;
pub(crate) mod scan;
pub(crate) mod split;
pub(crate) mod supervise;
pub(crate) mod worker;

#[cfg(test)]
mod core_golden;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) use report::{FileResult, Summary};

use discover::FileKind;
use worker::WorkerSpec;

/// Everything `bt test` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) json: bool,
    pub(crate) loads: Vec<PathBuf>,
    pub(crate) filter: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) check: bool,
    /// Checker warnings count as errors (`--warnings-as-errors`).
    pub(crate) warnings_as_errors: bool,
    /// `--diagnostics CATEGORY=LEVEL` arguments, in order (after the nearest `bt.toml`).
    pub(crate) diagnostics: Vec<String>,
    /// Run the `///` examples of the given files instead of their tests.
    pub(crate) doc_examples: bool,
    /// Rewrite the `// =>` lines of failing cases.
    pub(crate) bless: bool,
    pub(crate) paths: Vec<PathBuf>,
    /// `--seed N`: the deterministic scheduler (overrides a file's `// @seed`).
    pub(crate) seed: Option<u64>,
    /// `--explore K`: K deterministic schedules per file (overrides `// @explore`).
    pub(crate) explore: Option<u32>,
    /// `--inject-crashes P` (with a seed or exploration).
    pub(crate) inject_crashes: Option<f64>,
    /// `--step-budget N`: the livelock limit (with a seed or exploration).
    pub(crate) step_budget: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            json: false,
            loads: Vec::new(),
            filter: None,
            timeout: Duration::from_secs(30),
            check: true,
            warnings_as_errors: false,
            diagnostics: Vec::new(),
            doc_examples: false,
            bless: false,
            paths: Vec::new(),
            seed: None,
            explore: None,
            inject_crashes: None,
            step_budget: None,
        }
    }
}

/// A usage problem (exit status 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

/// Plans one file: what it is and what loads with it; None when it is not a test file.
fn plan(file: &Path, loads: &[PathBuf], opts: &Options) -> Result<Option<WorkerSpec>, String> {
    let src = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let fixtures = discover::fixtures_for(file);
    let unit: Vec<PathBuf> = fixtures
        .iter()
        .chain(loads.iter())
        .filter(|p| !same_file(p, file))
        .cloned()
        .collect();
    let kind = if opts.doc_examples {
        if doc::example_lines(&src).is_empty() {
            return Ok(None);
        }
        FileKind::DocExamples
    } else {
        let mut context: Vec<String> = unit
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        for (_, p) in discover::at_loads(&src) {
            if let Some(f) = discover::resolve_at_load(&p, file) {
                context.extend(std::fs::read_to_string(f).ok());
            }
        }
        let kind = discover::classify(file, &src, &context);
        if file.extension().is_some_and(|e| e == "bt") {
            for (line, m) in lint::unrun_expectations(&src, kind.as_ref()) {
                eprintln!("bt test: warning: {}:{line}: {m}", file.display());
            }
        }
        match kind {
            Some(k) => k,
            None => return Ok(None),
        }
    };
    // Checker levels: the nearest bt.toml's `[diagnostics]` (as `bt check` reads it), then
    // the command line's.
    let levels =
        crate::check::manifest::options_for(file, opts.warnings_as_errors, &opts.diagnostics)?;
    let path = file.display().to_string();
    let filter = opts.filter.clone().filter(|f| !path.contains(f.as_str()));
    // Schedules: the command line's, else the file's `// @seed N` / `// @explore K`.
    let pins = discover::schedule_pins(&src);
    let seed = opts.seed.or(pins.seed);
    let explore = opts.explore.or(pins.explore).unwrap_or(0);
    let inject_crashes = opts.inject_crashes.unwrap_or(0.0);
    Ok(Some(WorkerSpec {
        path,
        kind,
        unit: unit.iter().map(|p| p.display().to_string()).collect(),
        resume: 0,
        skip: Vec::new(),
        filter,
        check: opts.check,
        warnings_as_errors: opts.warnings_as_errors,
        diagnostics: levels.level_args(),
        timeout_secs: opts.timeout.as_secs_f64(),
        seed,
        explore,
        inject_crashes,
        step_budget: opts.step_budget,
    }))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Runs `bt test` with `opts`, printing the report; answers the exit status.
pub(crate) fn run(opts: &Options) -> Result<i32, UsageError> {
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from("test")]
    } else {
        opts.paths.clone()
    };
    let files = discover::test_files(&paths).map_err(UsageError)?;
    let loads = discover::expand_loads(&opts.loads).map_err(UsageError)?;
    let exe = std::env::current_exe()
        .map_err(|e| UsageError(format!("cannot find the bt executable: {e}")))?;
    let sup = supervise::Supervisor::new(exe, opts.timeout, opts.json);
    let mut results = Vec::new();
    for file in &files {
        let spec = match plan(file, &loads, opts) {
            Ok(Some(s)) => s,
            Ok(None) => continue,
            Err(e) => {
                let mut r = FileResult::new(file.display().to_string());
                r.error = Some(e);
                results.push(r);
                continue;
            }
        };
        let filtered = spec.filter.is_some();
        let run = sup.run_file(spec);
        let mut r = run.result;
        if filtered && r.cases.is_empty() && r.error.is_none() {
            continue;
        }
        if opts.bless && !run.blesses.is_empty() && bless_file(file, &run.blesses) {
            mark_blessed(&mut r, &run.blesses);
        }
        r.tally();
        if !opts.json {
            print!("{}", report::file_line(&r));
        }
        results.push(r);
    }
    let summary = Summary::new(results);
    if opts.json {
        println!("{}", summary.to_json());
    } else {
        print!("{}", summary.failures_and_total());
    }
    Ok(summary.exit_code())
}

/// Rewrites the file's `// =>` lines; answers whether the file now holds them.
fn bless_file(file: &Path, blesses: &[worker::Bless]) -> bool {
    match std::fs::read_to_string(file) {
        Ok(src) => {
            let new = bless::apply(&src, blesses);
            if new != src {
                if let Err(e) = std::fs::write(file, new) {
                    eprintln!("bt test --bless: {}: {e}", file.display());
                    return false;
                }
            }
            true
        }
        Err(e) => {
            eprintln!("bt test --bless: {}: {e}", file.display());
            false
        }
    }
}

/// The failing cases whose expectations `--bless` rewrote now pass; the file result lists
/// them (`LINE: expression  // => new`).
fn mark_blessed(r: &mut FileResult, blesses: &[worker::Bless]) {
    for c in r
        .cases
        .iter_mut()
        .filter(|c| c.status == report::Status::Fail)
    {
        let Some(b) = blesses.iter().find(|b| b.case_line == c.line && c.line > 0) else {
            continue;
        };
        let first = c.name.lines().next().unwrap_or("");
        r.blessed
            .push(format!("{}: {first}  // => {}", c.line, b.text));
        c.status = report::Status::Pass;
        c.message = None;
    }
}
