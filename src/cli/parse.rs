//! `bt parse --ast [--allow-primitives] FILE`: prints the canonical AST dump (crates/bt-syntax/src/syntax/dump.rs) to standard
//! output and any diagnostics to standard error; exit status 1 on a syntax error.

use crate::cli::common::ColorArg;
use crate::diagnostic::{self, ColorChoice};
use crate::syntax;

/// `bt parse` arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct ParseArgs {
    /// The file to parse
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// Print the AST dump (the default and only output)
    #[arg(long)]
    pub(crate) ast: bool,
    /// Accept `=> @primitive` bodies (built-in library files)
    #[arg(long, alias = "stdlib")]
    pub(crate) allow_primitives: bool,
    /// When diagnostics use colour
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
}

/// Runs `bt parse`; answers the process exit status.
pub(crate) fn main(a: ParseArgs) -> i32 {
    let file = a.file;
    let color: ColorChoice = a.color.into();
    let opts = syntax::Options {
        allow_primitives: a.allow_primitives,
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
    crate::cli::common::emit(&syntax::dump::dump_module(&module))
}
