//! What the subcommands share and the dispatcher in `cli.rs` does not own: the exit-status
//! text of every `--help`, writing a command's output ([`emit`]), the checker flags of `bt run`
//! and `bt test` ([`CheckFlags`]) and `--color` ([`ColorArg`]). A leaf: it names no other
//! module of the command line, so each subcommand can use it without depending on the list
//! of subcommands.

/// Exit statuses, shown at the end of `bt --help` (and in docs/guide/cli.md).
pub(crate) const EXIT_CODES: &str = "\
Exit status:
  0    success (all tests passed, no errors found)
  1    the program raised an uncaught error, a test failed, or the checker found an error
  2    usage error (unknown option, missing file, bad argument)
  N    the program called `Program exit: N`";

/// Writes a command's text output to standard output. A reader that went away (`bt doc |
/// head`) ends the output quietly, as for other Unix tools; another write error is reported.
/// Answers the exit code.
pub(crate) fn emit(text: &str) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("bt: cannot write to standard output: {e}");
            1
        }
    }
}

/// The checker flags `bt run` and `bt test` share.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct CheckFlags {
    /// Do not run the static checker before running
    #[arg(long)]
    pub(crate) no_check: bool,
    /// Checker warnings stop the file like errors
    #[arg(long)]
    pub(crate) warnings_as_errors: bool,
    /// Set a checker category (dnu, type, unused, type_annotation, inheritance, sendability)
    /// to error, warning, hint or off; the nearest bt.toml's [diagnostics] table applies first
    #[arg(long = "diagnostics", value_name = "CATEGORY=LEVEL", value_parser = level_arg)]
    pub(crate) diagnostics: Vec<String>,
}

/// Validates a `--diagnostics CATEGORY=LEVEL` argument.
pub(crate) fn level_arg(s: &str) -> Result<String, String> {
    crate::check::CheckOptions::default()
        .set_level_arg(s)
        .map(|_| s.to_string())
}

/// `--color`: when rendered diagnostics use ANSI colour.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ColorArg {
    /// Colour when standard error is a terminal and NO_COLOR is not set
    #[default]
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for crate::diagnostic::ColorChoice {
    fn from(c: ColorArg) -> Self {
        match c {
            ColorArg::Auto => crate::diagnostic::ColorChoice::Auto,
            ColorArg::Always => crate::diagnostic::ColorChoice::Always,
            ColorArg::Never => crate::diagnostic::ColorChoice::Never,
        }
    }
}
