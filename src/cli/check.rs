//! `bt check [--color …] [--format json] [--warnings-as-errors] [--diagnostics CAT=LEVEL] PATH…`:
//! parses and statically checks files and prints every finding (errors, warnings, hints).
//! Exit status 1 when any error was found (or a warning, with `--warnings-as-errors`).
//!
//! Each file is its own load unit, except that the `*.bt` files of a directory holding a
//! `bt.toml` manifest form one unit (a package); the manifest's
//! `[diagnostics]` table sets category levels, which `--diagnostics` overrides.

use crate::check::{self, SourceFile};
use crate::diagnostic::{self, ColorChoice, Diagnostic, Severity};
use crate::syntax;
use std::path::Path;

// Moved down a layer (the interpreter and the test runner need them); re-exported here for the
// CLI and for one session of branches that name them here.
use crate::check::manifest::manifest_dir;
use crate::interp::checker::standard_checker;

/// Options of `bt check`.
#[derive(Clone, Debug)]
pub(crate) struct CheckOptions {
    pub(crate) color: ColorChoice,
    pub(crate) json: bool,
    pub(crate) warnings_as_errors: bool,
    /// `--diagnostics CATEGORY=LEVEL` arguments, in order.
    pub(crate) levels: Vec<String>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            color: ColorChoice::Auto,
            json: false,
            warnings_as_errors: false,
            levels: Vec::new(),
        }
    }
}

/// The findings for one file.
#[derive(Debug)]
struct FileReport {
    pub(crate) path: String,
    pub(crate) src: String,
    pub(crate) diags: Vec<Diagnostic>,
}

/// Parses and checks one load unit.
fn check_unit(files: &[(String, String)], opts: &check::CheckOptions) -> Vec<FileReport> {
    // The built-in library's own files (`stdlib/*.bt`) may use `@primitive` bodies.
    let library = files.iter().all(|(p, _)| is_library_file(p));
    let popts = syntax::Options {
        allow_primitives: library,
    };
    let parsed: Vec<(crate::syntax::ast::Module, Vec<Diagnostic>)> = files
        .iter()
        .map(|(_, src)| syntax::parse_with(src, popts))
        .collect();
    let sources: Vec<SourceFile> = files
        .iter()
        .zip(&parsed)
        .map(|((path, src), (module, _))| SourceFile { path, src, module })
        .collect();
    let mut checker = standard_checker();
    let context = context_files(files);
    if !context.is_empty() {
        let parsed_ctx: Vec<crate::syntax::ast::Module> = context
            .iter()
            .map(|(_, src)| syntax::parse(src).0)
            .collect();
        let ctx_sources: Vec<SourceFile> = context
            .iter()
            .zip(&parsed_ctx)
            .map(|((path, src), module)| SourceFile { path, src, module })
            .collect();
        checker.remember(&ctx_sources);
    }
    let findings = if library {
        checker.check_library(&sources, opts)
    } else {
        checker.check_unit(&sources, opts)
    };
    let mut reports: Vec<FileReport> = files
        .iter()
        .zip(parsed)
        .map(|((path, src), (_, diags))| FileReport {
            path: path.clone(),
            src: src.clone(),
            diags,
        })
        .collect();
    for f in findings {
        if let Some(r) = reports.get_mut(f.file) {
            r.diags.push(f.diag);
        }
    }
    for r in &mut reports {
        r.diags.sort_by_key(|d| (d.span.start, d.span.end));
        // A send to a literal that its class does not understand fails whenever it runs:
        // `bt run` shows it as a hint and runs up to it; checking reports it as an error.
        for d in &mut r.diags {
            if d.code == check::sends::KNOWN_DNU && d.severity == Severity::Hint {
                d.severity = Severity::Error;
            }
        }
    }
    reports
}

/// A file of the embedded built-in library (`…/stdlib/NAME.bt` with NAME one of its files).
fn is_library_file(path: &str) -> bool {
    let p = Path::new(path);
    let in_stdlib = p
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "stdlib");
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    in_stdlib && crate::interp::stdlib::FILES.iter().any(|(f, _)| *f == name)
}

/// What a test file is checked against, as `bt test` would load it: the
/// `*.bt` files of a `fixtures` directory next to it, then its `// @load PATH` lines (resolved
/// against the working directory, then the file's directory). Unreadable files are skipped.
fn context_files(files: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let push = |p: &Path, out: &mut Vec<(String, String)>| {
        let name = p.to_string_lossy().into_owned();
        if files.iter().any(|(f, _)| Path::new(f) == p) || out.iter().any(|(f, _)| *f == name) {
            return;
        }
        if let Ok(src) = std::fs::read_to_string(p) {
            out.push((name, src));
        }
    };
    for (path, src) in files {
        let Some(dir) = Path::new(path).parent() else {
            continue;
        };
        let in_fixtures = dir.file_name().is_some_and(|n| n == "fixtures");
        let fixtures = dir.join("fixtures");
        if !in_fixtures && fixtures.is_dir() {
            let mut fx: Vec<std::path::PathBuf> = std::fs::read_dir(&fixtures)
                .map(|rd| rd.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            fx.retain(|p| p.extension().is_some_and(|x| x == "bt"));
            fx.sort();
            for f in fx {
                push(&f, &mut out);
            }
        }
        for line in src.lines() {
            if let Some(rest) = line.trim().strip_prefix("// @load ") {
                let rest = Path::new(rest.trim());
                let p = if rest.exists() {
                    rest.to_path_buf()
                } else {
                    dir.join(rest)
                };
                push(&p, &mut out);
            }
        }
    }
    out
}

/// Checks files (directories are searched recursively for `*.bt`) with options (levels,
/// warnings-as-errors). Unreadable paths are reported as errors of their own.
fn check_files_with(paths: &[String], opts: &CheckOptions) -> Result<Vec<FileReport>, String> {
    let mut files = Vec::new();
    for p in paths {
        collect(Path::new(p), &mut files).map_err(|e| format!("cannot read {p}: {e}"))?;
    }
    // Group the files into load units: a directory with a bt.toml is one unit.
    let mut units: Vec<(Option<String>, Vec<String>)> = Vec::new();
    for f in files {
        let manifest = manifest_dir(Path::new(&f));
        match (
            &manifest,
            units
                .iter_mut()
                .find(|(m, _)| m.is_some() && *m == manifest),
        ) {
            (Some(_), Some((_, fs))) => fs.push(f),
            _ => units.push((manifest, vec![f])),
        }
    }
    let mut out = Vec::new();
    for (manifest, unit) in units {
        let mut levels = check::CheckOptions {
            warnings_as_errors: opts.warnings_as_errors,
            ..Default::default()
        };
        if let Some(dir) = &manifest {
            if let Ok(text) = std::fs::read_to_string(Path::new(dir).join("bt.toml")) {
                levels
                    .apply_manifest(&text)
                    .map_err(|e| format!("{dir}/bt.toml:{e}"))?;
            }
        }
        for l in &opts.levels {
            levels.set_level_arg(l)?;
        }
        let mut texts = Vec::new();
        for f in unit {
            let src = std::fs::read_to_string(&f).map_err(|e| format!("cannot read {f}: {e}"))?;
            texts.push((f, src));
        }
        out.extend(check_unit(&texts, &levels));
    }
    Ok(out)
}

/// The `*.bt` files of a path (a file itself; a directory searched recursively, sorted).
pub(crate) fn collect(p: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
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

/// Diagnostics for one source text checked as its own unit (parse errors, then findings);
/// what `bt lsp` publishes.
pub(crate) fn check_source(path: &str, src: &str) -> Vec<Diagnostic> {
    let reports = check_unit(
        &[(path.to_string(), src.to_string())],
        &check::CheckOptions::default(),
    );
    reports.into_iter().flat_map(|r| r.diags).collect()
}

/// `bt check` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = crate::cli::common::EXIT_CODES)]
pub(crate) struct CheckArgs {
    /// Files or directories (searched for *.bt); default: the current directory
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
    /// Same as --format json
    #[arg(long, hide = true)]
    pub(crate) json: bool,
    /// When diagnostics use colour
    #[arg(long, value_enum, default_value_t = crate::cli::common::ColorArg::Auto)]
    pub(crate) color: crate::cli::common::ColorArg,
    /// Warnings make the exit status 1
    #[arg(long)]
    pub(crate) warnings_as_errors: bool,
    /// Set a checker category to error, warning, hint or off (after bt.toml)
    #[arg(long = "diagnostics", value_name = "CATEGORY=LEVEL", value_parser = super::common::level_arg)]
    pub(crate) diagnostics: Vec<String>,
}

/// `bt check --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Format {
    /// Rendered diagnostics on standard error
    #[default]
    Human,
    /// One JSON document `{"findings": [...]}` on standard output
    Json,
}

/// Runs `bt check`; answers the process exit status.
pub(crate) fn main(a: CheckArgs) -> i32 {
    let opts = CheckOptions {
        color: a.color.into(),
        json: a.json || a.format == Format::Json,
        warnings_as_errors: a.warnings_as_errors,
        levels: a.diagnostics,
    };
    let mut paths = a.paths;
    if paths.is_empty() {
        paths.push(".".into());
    }
    let reports = match check_files_with(&paths, &opts) {
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
            let lines = diagnostic::LineIndex::new(&r.src);
            for d in &r.diags {
                failed |= failing(d);
                findings.push(diagnostic::to_json_indexed(&r.path, &r.src, &lines, d));
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
