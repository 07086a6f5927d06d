//! `bt test`: argument parsing for the runner in [`crate::testrun`].

use std::path::PathBuf;
use std::time::Duration;

use crate::testrun::{self, Options};

/// `bt test` arguments.
///
/// Runs expression files (*.btscript, and *.bt files with `// =>` lines) and TestCase suites
/// found under each PATH (default: ./test), skipping directories named `fixtures`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = crate::cli::common::EXIT_CODES)]
pub(crate) struct TestArgs {
    /// Files or directories to test (default: ./test)
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Print one JSON document instead of the human report
    #[arg(long)]
    pub(crate) json: bool,
    /// Load PATH (a file, or a directory of *.bt) before every test file
    #[arg(long, value_name = "PATH")]
    pub(crate) load: Vec<PathBuf>,
    /// Run only files whose path contains TEXT, or cases/tests whose name does
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
    /// Limit for each expression or test, in seconds
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    pub(crate) timeout: Duration,
    #[command(flatten)]
    pub(crate) check: crate::cli::common::CheckFlags,
    /// Run the `// =>` examples inside `///` comments of the given files
    #[arg(long)]
    pub(crate) doc_examples: bool,
    /// Rewrite the `// =>` lines of failing cases with the actual results
    #[arg(long)]
    pub(crate) bless: bool,
    /// Run each file's processes on one deterministic scheduler seeded with N, under a
    /// virtual clock (same seed, same interleaving and output); with --explore, the first
    /// of the K consecutive seeds tried (default 1)
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Run each test under K deterministic schedules (PCT and random walk) and report every
    /// failure with the seed and the command that replays it
    #[arg(long, value_name = "K")]
    pub(crate) explore: Option<u32>,
    /// With --seed or --explore: crash each actor at a message boundary with probability P
    #[arg(long, value_name = "P", value_parser = probability)]
    pub(crate) inject_crashes: Option<f64>,
    /// With --seed or --explore: scheduling steps one expression or test may take before
    /// it fails as a livelock (default 500000)
    #[arg(long, value_name = "N")]
    pub(crate) step_budget: Option<u64>,
    /// Internal: run as the worker process of a parent `bt test` (JSON spec)
    #[arg(long, hide = true, value_name = "SPEC")]
    pub(crate) worker: Option<String>,
}

/// A positive, finite number of seconds.
fn seconds(v: &str) -> Result<Duration, String> {
    let secs: f64 = v
        .parse()
        .map_err(|_| format!("not a number of seconds: {v}"))?;
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(format!("must be a positive number of seconds: {v}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A probability in [0, 1].
fn probability(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("must be a probability between 0 and 1: {v}")),
    }
}

impl TestArgs {
    /// The runner's options.
    pub(crate) fn options(&self) -> Options {
        Options {
            json: self.json,
            loads: self.load.clone(),
            filter: self.filter.clone(),
            timeout: self.timeout,
            check: !self.check.no_check,
            warnings_as_errors: self.check.warnings_as_errors,
            diagnostics: self.check.diagnostics.clone(),
            doc_examples: self.doc_examples,
            bless: self.bless,
            paths: self.paths.clone(),
            seed: self.seed,
            explore: self.explore,
            inject_crashes: self.inject_crashes,
            step_budget: self.step_budget,
        }
    }
}

/// Runs `bt test`; answers the process exit status (0 all passed, 1 failures, 2 usage).
pub(crate) fn main(args: TestArgs) -> i32 {
    if let Some(spec) = &args.worker {
        return testrun::child::main(spec);
    }
    if args.paths.is_empty() && !std::path::Path::new("test").is_dir() {
        let here = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| ".".into());
        eprintln!(
            "bt test: no `test` directory here ({here}); without a PATH, bt test runs the tests \
             under ./test.\nName the files or directories to test: bt test PATH… (*.btscript, *.bt \
             files with `// =>` lines, TestCase suites)"
        );
        return 2;
    }
    match testrun::run(&args.options()) {
        Ok(code) => code,
        Err(testrun::UsageError(e)) => {
            eprintln!("bt test: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `bt test` arguments (after `test`).
    fn parse_args(args: &[String]) -> Result<Options, String> {
        match crate::cli::parse_from(
            std::iter::once("test".to_string()).chain(args.iter().cloned()),
        ) {
            Ok(crate::cli::Cli {
                command: Some(crate::cli::Command::Test(a)),
            }) => Ok(a.options()),
            Ok(_) => Err("not a test command".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn parse_from_test(a: &[&str]) -> TestArgs {
        match crate::cli::parse_from(std::iter::once("test").chain(a.iter().copied())).unwrap() {
            crate::cli::Cli {
                command: Some(crate::cli::Command::Test(t)),
            } => t,
            _ => unreachable!(),
        }
    }

    #[test]
    fn parses_every_option() {
        let o = parse_args(&args(&[
            "--json",
            "--load",
            "a.bt",
            "--load",
            "lib",
            "--filter",
            "count",
            "--timeout",
            "2.5",
            "--no-check",
            "t1",
            "t2",
        ]))
        .unwrap();
        assert!(o.json);
        assert_eq!(o.loads, vec![PathBuf::from("a.bt"), PathBuf::from("lib")]);
        assert_eq!(o.filter.as_deref(), Some("count"));
        assert_eq!(o.timeout, Duration::from_millis(2500));
        assert!(!o.check);
        assert_eq!(o.paths, vec![PathBuf::from("t1"), PathBuf::from("t2")]);
        let d = parse_args(&[]).unwrap();
        assert!(!d.json && d.check && d.paths.is_empty());
        assert_eq!(d.timeout, Duration::from_secs(30));
    }

    #[test]
    fn parses_the_schedule_options() {
        let o = parse_args(&args(&[
            "--seed",
            "81723",
            "--explore",
            "200",
            "--inject-crashes",
            "0.05",
            "--step-budget",
            "1000",
        ]))
        .unwrap();
        assert_eq!(o.seed, Some(81723));
        assert_eq!(o.explore, Some(200));
        assert_eq!(o.inject_crashes, Some(0.05));
        assert_eq!(o.step_budget, Some(1000));
        assert!(parse_args(&args(&["--inject-crashes", "1.5"])).is_err());
        assert!(parse_args(&args(&["--seed", "-1"])).is_err());
        assert!(parse_args(&args(&["--explore", "x"])).is_err());
    }

    #[test]
    fn usage_errors() {
        assert!(parse_args(&args(&["--bogus"])).is_err());
        assert!(parse_args(&args(&["--load"])).is_err());
        assert!(parse_args(&args(&["--diagnostics", "dnu=loud"])).is_err());
        assert!(parse_args(&args(&["--diagnostics"])).is_err());
        let o = parse_args(&args(&[
            "--warnings-as-errors",
            "--diagnostics",
            "dnu=error",
        ]))
        .unwrap();
        assert!(o.warnings_as_errors);
        assert_eq!(o.diagnostics, vec!["dnu=error".to_string()]);
        assert!(parse_args(&args(&["--timeout", "x"])).is_err());
        assert!(parse_args(&args(&["--timeout", "0"])).is_err());
        let p = parse_from_test(&["/definitely/not/here"]);
        assert_eq!(main(p), 2);
    }
}
