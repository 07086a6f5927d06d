//! The `bt` command line: [`main`] dispatches to one module per subcommand (`src/main.rs`
//! calls it through [`crate::cli_main`]).

pub(crate) mod check;
#[cfg(feature = "dist")]
pub(crate) mod epmd;
pub(crate) mod parse;
#[cfg(feature = "repl")]
pub(crate) mod repl;
pub(crate) mod run;
pub(crate) mod test;

const USAGE: &str = "usage: bt <command> [options]

commands:
  run FILE [--main Class] [-- ARGS...]   run a program
  test [--json] [PATH...]                run golden expression files and TestCase suites
  check [--format json] FILE...          parse and check files, print diagnostics
  parse --ast FILE                       print the canonical AST dump
  repl                                   interactive session (also plain `bt`)
  epmd [--port N] [-names | -kill]       EPMD-compatible port mapper on 127.0.0.1
  top ADDR [--once]                      the live process tree of `bt run --observe ADDR`
                                         (also `bt observe --tty ADDR`)
";

/// Runs the `bt` command line on its arguments (without the program name); answers the exit
/// status.
pub(crate) fn main(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        None => repl_main(&[]),
        Some("run") => run::main(&args[1..]),
        Some("test") => test::main(&args[1..]),
        Some("check") => check::main(&args[1..]),
        Some("parse") => parse::main(&args[1..]),
        Some("repl") => repl_main(&args[1..]),
        #[cfg(feature = "dist")]
        Some("epmd") => epmd::main(&args[1..]),
        #[cfg(feature = "observe")]
        Some("top") | Some("observe") => crate::observe::top::main(&args[1..]),
        Some("-h") | Some("--help") | Some("help") => {
            print!("{USAGE}");
            0
        }
        Some("--version") => {
            println!("bt {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some(other) => {
            eprintln!("bt: unknown command '{other}'\n\n{USAGE}");
            2
        }
    }
}

/// The REPL, when built with it (feature `repl`, on by default).
fn repl_main(args: &[String]) -> i32 {
    #[cfg(feature = "repl")]
    {
        repl::main(args)
    }
    #[cfg(not(feature = "repl"))]
    {
        let _ = args;
        eprintln!("bt: built without the REPL (cargo feature `repl`)");
        2
    }
}
