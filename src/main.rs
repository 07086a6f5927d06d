//! The `bt` binary: a thin dispatcher over `bt::cli`.

use bt::cli;

/// Faster small allocations (value instances, closures) than the system allocator, and
/// per-thread heaps for the worker threads every actor runs on (glibc grows a thread arena one
/// `mprotect` at a time).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: bt <command> [options]

commands:
  run FILE [--main Class] [-- ARGS...]   run a program
  test [--json] [PATH...]                run golden expression files and TestCase suites
  check [--format json] FILE...          parse and check files, print diagnostics
  parse --ast FILE                       print the canonical AST dump
  repl                                   interactive session (also plain `bt`)
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        None => cli::repl::main(&[]),
        Some("run") => cli::run::main(&args[1..]),
        Some("test") => cli::test::main(&args[1..]),
        Some("check") => cli::check::main(&args[1..]),
        Some("parse") => cli::parse::main(&args[1..]),
        Some("repl") => cli::repl::main(&args[1..]),
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
    };
    std::process::exit(code);
}
