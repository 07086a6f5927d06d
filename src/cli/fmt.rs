//! `bt fmt [--check] [PATH...]`: rewrites `.bt`/`.btscript` files in the canonical layout of
//! [`crate::fmt`] (directories are searched; `-` formats standard input to standard output).
//! With `--check` nothing is written: the files that would change are listed and the exit
//! status is 1 when there are any. A file that does not parse, or that holds a NUL byte (not
//! a text file), is refused with its diagnostics and never rewritten, with or without
//! `--check`; so is a file the formatter cannot lay out without changing how it parses
//! (exit status 1 in both cases; the other files are still formatted).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::base::span::Span;
use crate::diagnostic::{self, Diagnostic};

/// `bt fmt` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = crate::cli::common::EXIT_CODES)]
pub(crate) struct FmtArgs {
    /// Files or directories (searched for *.bt and *.btscript); `-` reads standard input;
    /// default: the current directory
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// Write nothing: list the files that are not formatted, exit 1 if any
    #[arg(long)]
    pub(crate) check: bool,
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let name = e.file_name().map(|n| n.to_string_lossy().into_owned());
            if e.is_dir() {
                if !name.is_some_and(|n| n.starts_with('.') || n == "target") {
                    collect(&e, out)?;
                }
            } else if e.extension().is_some_and(|x| x == "bt" || x == "btscript") {
                out.push(e);
            }
        }
        Ok(())
    } else {
        std::fs::metadata(p)?;
        out.push(p.to_path_buf());
        Ok(())
    }
}

/// A built-in library file (may use `=> @primitive`).
fn is_library(p: &Path) -> bool {
    p.parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "stdlib")
}

/// Why `src` is not laid out at all: a NUL byte (the file is not text) or a syntax error.
/// Empty when it may be formatted. Only the parser's errors count, not the checker's.
pub(crate) fn refusal(src: &str, library: bool) -> Vec<Diagnostic> {
    if let Some(at) = src.find('\0') {
        let d = Diagnostic::error(
            "E0101",
            "a NUL byte: this is not a bt source file",
            Span::new(at, at + 1),
        )
        .with_hint("bt fmt rewrites text files only; this one is left as it is");
        return vec![d];
    }
    let opts = crate::syntax::Options {
        allow_primitives: library,
    };
    let (_, diags) = crate::syntax::parse_with(src, opts);
    diags.into_iter().filter(Diagnostic::is_error).collect()
}

/// Prints why `name` is left as it is; answers the exit status (1).
fn refuse(name: &str, src: &str, errors: &[Diagnostic]) -> i32 {
    eprint!(
        "{}",
        diagnostic::render(name, src, errors, diagnostic::ColorChoice::Auto)
    );
    let why = if src.contains('\0') {
        "is not a text file"
    } else {
        "does not parse"
    };
    eprintln!("bt fmt: {name} {why}; left as it is");
    1
}

/// Runs `bt fmt`; answers the exit status.
pub(crate) fn main(a: FmtArgs) -> i32 {
    if a.paths.iter().any(|p| p == "-") {
        let mut src = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut src) {
            eprintln!("bt fmt: cannot read standard input: {e}");
            return 2;
        }
        let errors = refusal(&src, false);
        if !errors.is_empty() {
            return refuse("<stdin>", &src, &errors);
        }
        return match crate::fmt::format_source(&src, false) {
            Ok(s) if a.check => i32::from(s != src),
            Ok(s) => {
                let _ = std::io::stdout().write_all(s.as_bytes());
                0
            }
            Err(e) => {
                eprintln!("bt fmt: <stdin>:{}", e.0);
                1
            }
        };
    }
    let paths = if a.paths.is_empty() {
        vec![".".to_string()]
    } else {
        a.paths
    };
    let mut files = Vec::new();
    for p in &paths {
        if let Err(e) = collect(Path::new(p), &mut files) {
            eprintln!("bt fmt: cannot read {p}: {e}");
            return 2;
        }
    }
    let mut status = 0;
    for f in &files {
        let src = match std::fs::read_to_string(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("bt fmt: cannot read {}: {e}", f.display());
                status = 1;
                continue;
            }
        };
        let errors = refusal(&src, is_library(f));
        if !errors.is_empty() {
            status = refuse(&f.display().to_string(), &src, &errors);
            continue;
        }
        match crate::fmt::format_source(&src, is_library(f)) {
            Ok(s) if s == src => {}
            Ok(_) if a.check => {
                println!("{}", f.display());
                status = 1;
            }
            Ok(s) => match std::fs::write(f, s) {
                Ok(()) => println!("formatted {}", f.display()),
                Err(e) => {
                    eprintln!("bt fmt: cannot write {}: {e}", f.display());
                    status = 1;
                }
            },
            Err(e) => {
                eprintln!("bt fmt: {}:{}", f.display(), e.0);
                status = 1;
            }
        }
    }
    status
}
