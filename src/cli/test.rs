//! `bt test`: argument parsing for the runner in [`crate::testrun`].

use std::path::PathBuf;
use std::time::Duration;

use crate::testrun::{self, Options};

const USAGE: &str = "usage: bt test [--json] [--load PATH]... [--filter TEXT] [--timeout SECS]
               [--no-check] [--warnings-as-errors] [--diagnostics CATEGORY=LEVEL]...
               [--doc-examples] [--bless] [PATH...]

Runs expression files (*.btscript, and *.bt files with `// =>` lines) and TestCase suites
found under each PATH (default: ./test), skipping directories named `fixtures`.

  --json          print one JSON document instead of the human report
  --load PATH     load PATH (a file, or a directory of *.bt) before every test file
  --filter TEXT   run only files whose path contains TEXT, or cases/tests whose name does
  --timeout SECS  limit for each expression or test (default 30)
  --no-check      do not run the static checker
  --warnings-as-errors
                  checker warnings stop a file / expression like errors
  --diagnostics CATEGORY=LEVEL
                  set a checker category (dnu, type, unused, type_annotation,
                  inheritance, sendability) to error, warning, hint or off; the
                  nearest bt.toml's [diagnostics] table applies first
  --doc-examples  run the `// =>` examples inside `///` comments of the given files
  --bless         rewrite the `// =>` lines of failing cases with the actual results
";

/// Parses `bt test` arguments.
pub(crate) fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--json" => opts.json = true,
            "--no-check" => opts.check = false,
            "--warnings-as-errors" => opts.warnings_as_errors = true,
            "--diagnostics" => {
                let v = value(&mut i, a)?;
                crate::check::CheckOptions::default()
                    .set_level_arg(&v)
                    .map_err(|e| format!("--diagnostics {v}: {e}"))?;
                opts.diagnostics.push(v);
            }
            "--doc-examples" => opts.doc_examples = true,
            "--bless" => opts.bless = true,
            "--load" => opts.loads.push(PathBuf::from(value(&mut i, a)?)),
            "--filter" => opts.filter = Some(value(&mut i, a)?),
            "--timeout" => {
                let v = value(&mut i, a)?;
                let secs: f64 = v
                    .parse()
                    .map_err(|_| format!("--timeout: not a number of seconds: {v}"))?;
                if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
                    return Err(format!(
                        "--timeout: must be a positive number of seconds: {v}"
                    ));
                }
                opts.timeout = Duration::from_secs_f64(secs);
            }
            "--" => {
                opts.paths.extend(args[i + 1..].iter().map(PathBuf::from));
                break;
            }
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => opts.paths.push(PathBuf::from(s)),
        }
        i += 1;
    }
    Ok(opts)
}

/// Runs `bt test ARGS`; answers the process exit status (0 all passed, 1 failures, 2 usage).
pub(crate) fn main(args: &[String]) -> i32 {
    if args.first().map(String::as_str) == Some("--worker") {
        return match args.get(1) {
            Some(spec) => testrun::child::main(spec),
            None => {
                eprintln!("bt test --worker: missing spec");
                2
            }
        };
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return 0;
    }
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            let synopsis: Vec<&str> = USAGE.lines().take(2).collect();
            eprintln!(
                "bt test: {e}\n{}\n(bt test --help explains each option)",
                synopsis.join("\n")
            );
            return 2;
        }
    };
    match testrun::run(&opts) {
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

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
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
        assert_eq!(main(&args(&["--bogus"])), 2);
        assert_eq!(main(&args(&["/definitely/not/here"])), 2);
    }
}
