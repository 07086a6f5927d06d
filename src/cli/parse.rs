//! `bt parse --ast [--allow-primitives] FILE`: prints the canonical AST dump (src/syntax/dump.rs) to standard
//! output and any diagnostics to standard error; exit status 1 on a syntax error.

use crate::diagnostic::{self, ColorChoice};
use crate::syntax;

const USAGE: &str = "usage: bt parse --ast [--color never|always|auto] [--allow-primitives] FILE";

/// Runs `bt parse ARGS`; answers the process exit status.
pub(crate) fn main(args: &[String]) -> i32 {
    let mut file = None;
    let mut color = ColorChoice::Auto;
    let mut opts = syntax::Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--ast" => {}
            // Built-in library files (`stdlib/*.bt`) may use `=> @primitive` bodies.
            "--allow-primitives" | "--stdlib" => opts.allow_primitives = true,
            "--color" => match it.next().and_then(|c| parse_color(c)) {
                Some(c) => color = c,
                None => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            s if s.starts_with("--color=") => match parse_color(&s[8..]) {
                Some(c) => color = c,
                None => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            s if s.starts_with('-') && s != "-" => {
                eprintln!("bt parse: unknown option '{s}'\n{USAGE}");
                return 2;
            }
            s => file = Some(s.to_string()),
        }
    }
    let Some(file) = file else {
        eprintln!("{USAGE}");
        return 2;
    };
    let src = match std::fs::read_to_string(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bt parse: cannot read {file}: {e}");
            return 2;
        }
    };
    let (module, diags) = syntax::parse_with(&src, opts);
    if !diags.is_empty() {
        eprint!("{}", diagnostic::render(&file, &src, &diags, color));
    }
    if diags.iter().any(|d| d.is_error()) {
        return 1;
    }
    print!("{}", syntax::dump::dump_module(&module));
    0
}

/// `never` / `always` / `auto`.
pub(crate) fn parse_color(s: &str) -> Option<ColorChoice> {
    match s {
        "never" => Some(ColorChoice::Never),
        "always" => Some(ColorChoice::Always),
        "auto" => Some(ColorChoice::Auto),
        _ => None,
    }
}
