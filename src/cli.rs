//! The `bt` command line (clap, derive): the one place that lists the subcommands.
//!
//! `main.rs` calls [`main`] through [`crate::cli_main`]; each subcommand lives in its own module with its own
//! `#[derive(clap::Args)]` struct and a `run`/`main` function taking it. Adding a subcommand is
//! one edit here: a [`Command`] variant (its doc comment is the help line) and its arm in
//! [`dispatch`]. Adding a flag is one field in the subcommand's struct.
//!
//! Conventions (tests/lang/cli.rs checks each): `-h`/`--help` on every subcommand, `bt help CMD`,
//! `-V`/`--version`, suggestions for misspelled commands and flags, usage errors exit 2, colour
//! only on a terminal and never with `NO_COLOR` set.

pub(crate) mod check;
pub(crate) mod common;
pub(crate) mod complete;
pub(crate) mod doc;
#[cfg(feature = "dist")]
pub(crate) mod epmd;
pub(crate) mod fmt;
pub(crate) mod max_memory;
pub(crate) mod parse;
#[cfg(feature = "repl")]
pub(crate) mod repl;
#[cfg(feature = "repl")]
pub(crate) mod repl_help;
#[cfg(feature = "repl")]
pub(crate) mod repl_interrupt;
pub(crate) mod run;
pub(crate) mod stderr_log;
pub(crate) mod test;

use clap::{Parser, Subcommand};

use common::EXIT_CODES;

/// bt: a Beamtalk-style language — Smalltalk message syntax, immutable values, actors,
/// supervisors.
///
/// With no command, `bt` starts the interactive session (`bt repl`).
#[derive(Parser, Debug)]
#[command(name = "bt", version, after_help = EXIT_CODES, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// The subcommands; the doc comment of each is its line in `bt --help`.
// One value per process, parsed once: the size of `bt run`'s flags costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run a program file (`-` reads standard input; `-e EXPR` runs text)
    Run(run::RunArgs),
    /// Run `// =>` expression files and TestCase suites
    Test(test::TestArgs),
    /// Parse and statically check files, print the findings
    Check(check::CheckArgs),
    /// Print the canonical AST dump of a file
    Parse(parse::ParseArgs),
    /// Rewrite files in the one canonical layout (`--check` only lists them)
    Fmt(fmt::FmtArgs),
    /// Print the class reference (Markdown or HTML) from the library's declarations
    Doc(doc::DocArgs),
    /// Start the interactive session (also plain `bt`)
    #[cfg(feature = "repl")]
    Repl(repl::ReplArgs),
    /// Serve the Language Server Protocol on standard input/output (for editors)
    Lsp(crate::lsp::LspArgs),
    /// EPMD-compatible port mapper on 127.0.0.1 (`--port N`, `-names`, `-kill`)
    #[cfg(feature = "dist")]
    Epmd(EpmdArgs),
    /// The live process tree of a program run with `bt run --observe ADDR`, in the terminal
    #[cfg(feature = "observe")]
    Top(TopArgs),
    /// Serve the live tree of another node (`bt observe NODE`), or `bt top` (`--tty ADDR`)
    #[cfg(feature = "observe")]
    Observe(ObserveArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(complete::CompletionArgs),
}

/// `bt epmd` arguments, handed as written to [`epmd::main`] (Erlang's `-names`/`-kill`
/// spelling included).
#[cfg(feature = "dist")]
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct EpmdArgs {
    /// `--port N`, `-names`, `-kill`
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub(crate) args: Vec<String>,
}

/// `bt top` / `bt observe --tty` arguments (run by [`crate::observe::top`]).
#[cfg(feature = "observe")]
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct TopArgs {
    /// The address given to `bt run --observe ADDR`
    #[arg(value_name = "ADDR")]
    pub(crate) addr: String,
    /// Print the current tree once and exit
    #[arg(long)]
    pub(crate) once: bool,
    /// Text output on the terminal (the only kind; accepted for `bt observe --tty`)
    #[arg(long)]
    pub(crate) tty: bool,
    /// HTTPS: the CA that signed the observer's certificate (PEM)
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<String>,
    /// HTTPS: a `--observe-tls`-style file (cacertfile; certfile/keyfile for mutual TLS)
    #[arg(long, value_name = "CONFIG")]
    pub(crate) tls: Option<String>,
    /// HTTPS: the name the observer's certificate must carry (default: ADDR's host)
    #[arg(long, value_name = "NAME")]
    pub(crate) server_name: Option<String>,
}

/// `bt observe NODE` / `bt observe --tty ADDR` arguments.
#[cfg(feature = "observe")]
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct ObserveArgs {
    /// The node to observe (NAME@HOST), or with `--tty` the address given to `bt run --observe`
    #[arg(value_name = "NODE|ADDR")]
    pub(crate) target: String,
    /// Where to serve the page for NODE (a loopback address; port 0 picks a free one)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) addr: String,
    /// Print the current tree once and exit (JSON for NODE, text with `--tty`)
    #[arg(long)]
    pub(crate) once: bool,
    /// Text output on the terminal: the same as `bt top ADDR`
    #[arg(long)]
    pub(crate) tty: bool,
    /// This observer's own (hidden) node name; default bt_observe_PID@HOST of NODE
    #[arg(long, value_name = "NAME@HOST")]
    pub(crate) name: Option<String>,
    /// Read the cluster cookie from this file (BT_COOKIE still wins)
    #[arg(long, value_name = "PATH")]
    pub(crate) cookie_file: Option<std::path::PathBuf>,
}

#[cfg(feature = "observe")]
fn observe_main(a: ObserveArgs) -> i32 {
    if a.tty {
        let top = TopArgs {
            addr: a.target,
            once: a.once,
            tty: true,
            ca: None,
            tls: None,
            server_name: None,
        };
        return crate::observe::top::main(&top.args());
    }
    #[cfg(feature = "dist")]
    {
        crate::observe::remote::main(crate::observe::remote::Args {
            target: a.target,
            addr: a.addr,
            once: a.once,
            name: a.name,
            cookie_file: a.cookie_file,
        })
    }
    #[cfg(not(feature = "dist"))]
    {
        eprintln!("bt observe NODE: built without distribution (cargo feature `dist`)");
        2
    }
}

#[cfg(feature = "observe")]
impl TopArgs {
    fn args(&self) -> Vec<String> {
        let mut v = vec![self.addr.clone()];
        if self.once {
            v.push("--once".into());
        }
        for (flag, val) in [
            ("--ca", &self.ca),
            ("--tls", &self.tls),
            ("--server-name", &self.server_name),
        ] {
            if let Some(x) = val {
                v.extend([flag.to_string(), x.clone()]);
            }
        }
        v
    }
}

/// Runs the `bt` command line on `args` (without the program name) and answers the exit
/// status: what the `bt` binary does.
pub fn cli_main(args: &[String]) -> i32 {
    stderr_log::install();
    crate::interp::distribution::install_term_codec(&crate::codec::etf_bytes::TERM_CODEC);
    main(args)
}

/// Parses `bt ARGS…` (without the program name) and runs the command; answers the exit
/// status.
pub(crate) fn main(args: &[String]) -> i32 {
    match parse_from(args) {
        Ok(cli) => dispatch(cli),
        Err(mut e) => {
            suggest_subcommand(&mut e);
            let code = e.exit_code();
            let _ = e.print();
            code
        }
    }
}

/// clap suggests by Jaro similarity, which misses transpositions in short names (`rnu`); add
/// the nearest subcommand within two edits when it found none.
fn suggest_subcommand(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory;
    if e.kind() != clap::error::ErrorKind::InvalidSubcommand
        || e.get(ContextKind::SuggestedSubcommand).is_some()
    {
        return;
    }
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand) else {
        return;
    };
    let typed = typed.clone();
    let best = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .map(|n| (strsim::damerau_levenshtein(&typed, &n), n))
        .filter(|(d, _)| *d <= 2)
        .min();
    if let Some((_, name)) = best {
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name]),
        );
    }
}

/// Runs a parsed command line.
fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        #[cfg(feature = "repl")]
        None => repl::main(repl::ReplArgs::default()),
        #[cfg(not(feature = "repl"))]
        None => {
            eprintln!("bt: built without the REPL (cargo feature `repl`)");
            2
        }
        Some(Command::Run(a)) => run::main(a),
        Some(Command::Test(a)) => test::main(a),
        Some(Command::Check(a)) => check::main(a),
        Some(Command::Parse(a)) => parse::main(a),
        Some(Command::Fmt(a)) => fmt::main(a),
        Some(Command::Doc(a)) => doc::main(a),
        #[cfg(feature = "repl")]
        Some(Command::Repl(a)) => repl::main(a),
        Some(Command::Lsp(a)) => crate::lsp::main(a),
        #[cfg(feature = "dist")]
        Some(Command::Epmd(a)) => epmd::main(&a.args),
        #[cfg(feature = "observe")]
        Some(Command::Top(a)) => crate::observe::top::main(&a.args()),
        #[cfg(feature = "observe")]
        Some(Command::Observe(a)) => observe_main(a),
        Some(Command::Completions(a)) => {
            complete::main(a, <Cli as clap::CommandFactory>::command())
        }
    }
}

/// Parses `bt ARGS…` (without the program name) as the binary would.
///
/// `bt run …` is parsed first by a command line that defines `run` alone: clap builds every
/// argument of every subcommand before it parses (`bt test`'s and `bt check`'s flags, their
/// help texts), which was a twentieth of `bt run`'s start-up. Only a command line that
/// parses there is taken from it (`run`'s arguments are the same definition, and nothing
/// of the whole command propagates to `run`); help, version and every error come from the
/// whole definition, parsed again, so they read the same.
pub(crate) fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = std::iter::once("bt".into())
        .chain(args.into_iter().map(Into::into))
        .collect();
    if args.get(1).is_some_and(|a| a == "run") {
        if let Some(cli) = plain_run(&args).or_else(|| parse_run(&args)) {
            return Ok(cli);
        }
    }
    Cli::try_parse_from(args)
}

/// `bt run FILE [ARGS]…` with no flag: every word after `run` is UTF-8 and none starts with
/// `-`, and neither variable that sets a flag (`BT_CONNECT`, `BT_ERLANG_PEER`) is in the
/// environment. That is the file and the program's arguments with every flag at its default,
/// made without clap (which builds each of `run`'s ~30 arguments first); anything else is
/// None, for clap to parse.
fn plain_run(args: &[std::ffi::OsString]) -> Option<Cli> {
    if std::env::var_os("BT_CONNECT").is_some() || std::env::var_os("BT_ERLANG_PEER").is_some() {
        return None;
    }
    plain_run_words(args)
}

/// [`plain_run`] of the words alone.
fn plain_run_words(args: &[std::ffi::OsString]) -> Option<Cli> {
    let mut words = args.get(2..)?.iter().map(|a| {
        a.to_str()
            .filter(|w| !w.starts_with('-'))
            .map(str::to_string)
    });
    let file = words.next()??;
    let rest = words.collect::<Option<Vec<String>>>()?;
    Some(Cli {
        command: Some(Command::Run(run::RunArgs::plain(file, rest))),
    })
}

/// `bt run …` parsed by a command line that defines `run` alone; None when it does not
/// parse (or asks for help), so the whole definition answers.
fn parse_run(args: &[std::ffi::OsString]) -> Option<Cli> {
    use clap::{Args, FromArgMatches};
    let cmd = clap::Command::new("bt")
        .args_conflicts_with_subcommands(true)
        .subcommand(run::RunArgs::augment_args(clap::Command::new("run")));
    let m = cmd.try_get_matches_from(args).ok()?;
    Cli::from_arg_matches(&m).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `bt WORDS…` as the process receives it.
    fn argv(words: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("bt")
            .chain(words.iter().copied())
            .map(Into::into)
            .collect()
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_parses_alone_as_in_the_whole_definition() {
        let lines: &[&[&str]] = &[
            &["run", "f.bt"],
            &["run", "f.bt", "a", "-b", "--c"],
            &["run", "-e", "3 + 4"],
            &["run", "-", "x"],
            &[
                "run",
                "--max-memory",
                "64M",
                "--sandbox",
                "--allow-read",
                ".",
                "f.bt",
            ],
            &["run", "--main", "Bench", "f.bt", "--", "32"],
            &["run", "--help"],
            &["run", "--nope", "f.bt"],
            &["run"],
            &["run", "-V"],
        ];
        for line in lines {
            let args = argv(line);
            let alone = parse_run(&args).map(|c| format!("{c:?}"));
            let whole = Cli::try_parse_from(&args).map(|c| format!("{c:?}"));
            assert_eq!(alone, whole.ok(), "{line:?}");
        }
    }

    #[test]
    fn a_plain_run_is_parsed_as_by_clap() {
        // clap reads `BT_CONNECT` and `BT_ERLANG_PEER` (`plain_run` leaves a run with either
        // set to clap): compared only without them.
        let env_free = std::env::var_os("BT_CONNECT").is_none()
            && std::env::var_os("BT_ERLANG_PEER").is_none();
        let plain: &[&[&str]] = &[
            &["run", "f.bt"],
            &["run", "examples/hello.bt", "a", "b c", "ü"],
            &["run", "f.bt", "run"],
            &["run", "f.bt", "x", "y"],
            &["run", "", ""],
        ];
        for line in plain {
            let args = argv(line);
            let fast = plain_run_words(&args).map(|c| format!("{c:?}"));
            assert!(fast.is_some(), "{line:?}");
            if env_free {
                let whole = Cli::try_parse_from(&args).map(|c| format!("{c:?}"));
                assert_eq!(fast, whole.ok(), "{line:?}");
            }
        }
        let not_plain: &[&[&str]] = &[
            &["run"],
            &["run", "-"],
            &["run", "-e", "3"],
            &["run", "f.bt", "-b"],
            &["run", "f.bt", "--", "x"],
            &["run", "--no-check", "f.bt"],
            &["run", "f.bt", "--max-depth", "5"],
        ];
        for line in not_plain {
            let args = argv(line);
            assert!(plain_run_words(&args).is_none(), "{line:?}");
        }
    }
}
