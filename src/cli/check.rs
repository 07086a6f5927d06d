//! `bt check [--color …] [--format json] [--warnings-as-errors] PATH…`: parses (and, once the
//! static checker is wired in, checks) files and prints their diagnostics. Exit status 1 when
//! any error was found.
//!
//! [`check_files`] is the one function that gathers findings; the checker extends
//! [`check_source`] to run after the parser.

use crate::diagnostic::{self, ColorChoice, Diagnostic, Severity};
use crate::syntax;
use std::path::Path;

const USAGE: &str =
    "usage: bt check [--color never|always|auto] [--format json] [--warnings-as-errors] PATH...";

/// Options of `bt check`.
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    pub color: ColorChoice,
    pub json: bool,
    pub warnings_as_errors: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            color: ColorChoice::Auto,
            json: false,
            warnings_as_errors: false,
        }
    }
}

/// The findings for one file.
#[derive(Debug)]
pub struct FileReport {
    pub path: String,
    pub src: String,
    pub diags: Vec<Diagnostic>,
}

/// Diagnostics for one source text (parse errors; the checker's findings will be appended).
pub fn check_source(_path: &str, src: &str) -> Vec<Diagnostic> {
    let (_module, diags) = syntax::parse(src);
    diags
}

/// Checks files (directories are searched recursively for `*.bt`). Unreadable paths are
/// reported as errors of their own.
pub fn check_files(paths: &[String]) -> Result<Vec<FileReport>, String> {
    let mut files = Vec::new();
    for p in paths {
        collect(Path::new(p), &mut files).map_err(|e| format!("cannot read {p}: {e}"))?;
    }
    let mut out = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).map_err(|e| format!("cannot read {f}: {e}"))?;
        let diags = check_source(&f, &src);
        out.push(FileReport {
            path: f,
            src,
            diags,
        });
    }
    Ok(out)
}

fn collect(p: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(p)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "bt") {
                collect(&e, out)?;
            }
        }
        Ok(())
    } else {
        std::fs::metadata(p)?;
        out.push(p.to_string_lossy().into_owned());
        Ok(())
    }
}

/// Runs `bt check ARGS`; answers the process exit status.
pub fn main(args: &[String]) -> i32 {
    let mut opts = CheckOptions::default();
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--color" => match it.next().and_then(|c| super::parse::parse_color(c)) {
                Some(c) => opts.color = c,
                None => return usage(),
            },
            "--format" => match it.next().map(String::as_str) {
                Some("json") => opts.json = true,
                Some("human") => opts.json = false,
                _ => return usage(),
            },
            "--json" => opts.json = true,
            "--warnings-as-errors" => opts.warnings_as_errors = true,
            s if s.starts_with("--color=") => match super::parse::parse_color(&s[8..]) {
                Some(c) => opts.color = c,
                None => return usage(),
            },
            s if s.starts_with('-') => {
                eprintln!("bt check: unknown option '{s}'");
                return usage();
            }
            s => paths.push(s.to_string()),
        }
    }
    if paths.is_empty() {
        paths.push(".".into());
    }
    let reports = match check_files(&paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bt check: {e}");
            return 2;
        }
    };
    let failing = |d: &Diagnostic| {
        d.severity == Severity::Error
            || (opts.warnings_as_errors && d.severity == Severity::Warning)
    };
    let mut failed = false;
    if opts.json {
        let mut findings = Vec::new();
        for r in &reports {
            for d in &r.diags {
                failed |= failing(d);
                findings.push(diagnostic::to_json(&r.path, &r.src, d));
            }
        }
        println!("{}", serde_json::json!({ "findings": findings }));
    } else {
        for r in &reports {
            failed |= r.diags.iter().any(failing);
            if !r.diags.is_empty() {
                eprint!(
                    "{}",
                    diagnostic::render(&r.path, &r.src, &r.diags, opts.color)
                );
            }
        }
    }
    i32::from(failed)
}

fn usage() -> i32 {
    eprintln!("{USAGE}");
    2
}
