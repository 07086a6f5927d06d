//! The `bt` command line: [`main`] dispatches to one module per subcommand (`src/main.rs`
//! calls it through [`crate::cli_main`]).

pub mod check;
pub mod parse;
#[cfg(feature = "repl")]
pub mod repl;
pub mod run;
pub mod test;

const USAGE: &str = "usage: bt <command> [options]

commands:
  run FILE [--main Class] [-- ARGS...]   run a program
  test [--json] [PATH...]                run golden expression files and TestCase suites
  check [--format json] FILE...          parse and check files, print diagnostics
  parse --ast FILE                       print the canonical AST dump
  repl                                   interactive session (also plain `bt`)
";

/// Runs the `bt` command line on its arguments (without the program name); answers the exit
/// status.
pub fn main(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        None => repl_main(&[]),
        Some("run") => run::main(&args[1..]),
        Some("test") => test::main(&args[1..]),
        Some("check") => check::main(&args[1..]),
        Some("parse") => parse::main(&args[1..]),
        Some("repl") => repl_main(&args[1..]),
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
