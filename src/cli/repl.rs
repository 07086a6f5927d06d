//! `bt repl` (and plain `bt`): an interactive session.
//!
//! Line editing and history (rustyline, `~/.bt_history`); input continues over several lines
//! while it is incomplete (`syntax::needs_more`) and, for a class or method definition, until
//! an empty line; indented lines right after a definition's empty line add to it (the
//! definition is evaluated again, whole: a class pasted with empty lines between members).
//! Ctrl-C or a `:break` line at the continuation prompt drops the input typed so far. Lines
//! typed or pasted ahead arrive whole and in order (rustyline's `buffer-redux` feature keeps
//! what its reader read past a line end for the next read). Each input is evaluated with
//! [`Vm::eval`]: bindings persist, the value is shown as its `printString`
//! ([`Vm::print_string`]), and an error shows its report (without location, with the source
//! line and a caret under the failing send) and the session continues. `:load FILE`,
//! `:help [Class | Class>>selector | selector]`, `:quit`.
//! Tab completes selectors by the receiver's class, class names and commands
//! ([`super::repl_help`]). Ctrl-C while an input runs ends that evaluation (its main process
//! is killed; what it assigned to the session's variables so far stays) and the session goes on
//! ([`super::repl_interrupt`]).

use std::io::{BufRead, IsTerminal, Write};

use super::repl_interrupt as interrupt;
use crate::interp::{Interpreter as Vm, InterpreterOptions as VmOptions};

const HELP: &str = "\
Enter bt expressions; the value is shown after each one.
  x := 3 + 4          bindings persist for the session
  Object subclass: Foo   (indented members follow; finish with an empty line)
Input that is not finished continues on the next line (prompt ...>); Ctrl-C or :break
there drops it.
Commands:
  :load FILE          load a .bt file (classes, methods, statements)
  :help               this text
  :help Integer       a class: its documentation and methods
  :help String>>size  one method (also `Foo class>>new`, or just a selector)
  :quit               leave (also Ctrl-D)
Tab completes selectors (for the receiver before the cursor), class names and commands;
history is kept in ~/.bt_history.";

/// The session's text so far (inputs that ran), shared with the completer.
type Session = std::rc::Rc<std::cell::RefCell<String>>;

/// rustyline helper: tab completion from [`super::repl_help::complete`].
struct Helper(Session);

impl rustyline::completion::Completer for Helper {
    type Candidate = String;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(super::repl_help::complete(&self.0.borrow(), line, pos))
    }
}

impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Helper {}
impl rustyline::validate::Validator for Helper {}
impl rustyline::Helper for Helper {}

/// A line that opens a definition whose members follow on indented lines.
fn starts_definition(line: &str) -> bool {
    let t = line.trim();
    t.contains("subclass:")
        || t.starts_with("Protocol define:")
        || (t.contains(">>") && t.contains("=>"))
}

enum Input {
    Line(String),
    /// Ctrl-C at the prompt (read by the line editor).
    Interrupted,
    Eof,
}

trait LineSource {
    fn read(&mut self, prompt: &str) -> Input;
    fn remember(&mut self, _entry: &str) {}
}

struct Plain(std::io::StdinLock<'static>);

impl LineSource for Plain {
    fn read(&mut self, _prompt: &str) -> Input {
        let mut s = String::new();
        match self.0.read_line(&mut s) {
            Ok(0) | Err(_) => Input::Eof,
            Ok(_) => Input::Line(s.trim_end_matches(['\n', '\r']).to_string()),
        }
    }
}

struct Editor {
    ed: rustyline::Editor<Helper, rustyline::history::DefaultHistory>,
    history: Option<std::path::PathBuf>,
}

impl LineSource for Editor {
    fn read(&mut self, prompt: &str) -> Input {
        match self.ed.readline(prompt) {
            Ok(l) => Input::Line(l),
            Err(rustyline::error::ReadlineError::Interrupted) => Input::Interrupted,
            Err(_) => Input::Eof,
        }
    }
    fn remember(&mut self, entry: &str) {
        let _ = self.ed.add_history_entry(entry);
        if let Some(h) = &self.history {
            let _ = self.ed.save_history(h);
        }
    }
}

/// Typed at a continuation prompt, drops the input typed so far (as Ctrl-C does).
const BREAK: &str = ":break";

/// A line that continues the definition entered just before it (an indented member after
/// the blank line that ended the definition: a pasted class with blank lines between its
/// members).
fn continues_definition(line: &str) -> bool {
    line.starts_with([' ', '\t']) && !line.trim().is_empty()
}

/// Reads one complete input (several lines when needed); None at end of input. Ctrl-C, or a
/// [`BREAK`] line, drops what was typed so far (the answer is then empty). `after_definition`:
/// the input before was a definition, so an indented first line continues it (read as a
/// definition: up to an empty line).
fn read_input(src: &mut dyn LineSource, after_definition: bool) -> Option<String> {
    let mut buf = String::new();
    let mut definition = false;
    loop {
        let prompt = if buf.is_empty() { "bt> " } else { "...> " };
        let (input, cancelled) = interrupt::prompt(|| src.read(prompt));
        if cancelled {
            // A Ctrl-C on a cooked terminal: what was typed before it is dropped; the
            // line read was typed after it.
            buf.clear();
            definition = false;
        }
        let line = match input {
            Input::Line(l) => l,
            Input::Interrupted => return Some(String::new()),
            Input::Eof if buf.is_empty() => return None,
            Input::Eof => break,
        };
        if buf.is_empty() {
            if line.trim_start().starts_with(':') || line.trim().is_empty() {
                // A command is one line (`:help Foo>>bar:` ends with a keyword, not an
                // open send).
                return Some(line);
            }
            definition =
                starts_definition(&line) || (after_definition && continues_definition(&line));
            // A pasted piece (several lines at once) that parses whole needs no empty line.
            if line.contains('\n') && !crate::syntax::needs_more(&line) {
                return Some(line);
            }
            buf = line;
        } else {
            if line.trim() == BREAK {
                return Some(String::new());
            }
            if definition && line.trim().is_empty() && !crate::syntax::needs_more(&buf) {
                break;
            }
            buf.push('\n');
            buf.push_str(&line);
        }
        if !(definition || crate::syntax::needs_more(&buf)) {
            break;
        }
    }
    Some(buf)
}

/// Prints `text`; on a terminal, a text longer than 24 lines goes through the pager
/// (`$PAGER`, else `less -FRX`, which prints a text that fits the screen and exits), as
/// IEx's `h` does; printed directly when no pager runs.
fn show_long(text: &str, interactive: bool) {
    let long = interactive && std::io::stdout().is_terminal() && text.lines().count() > 24;
    if long {
        let pager = std::env::var("PAGER")
            .ok()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| "less -FRX".to_string());
        let mut words = pager.split_whitespace();
        if let Some(cmd) = words.next() {
            let child = std::process::Command::new(cmd)
                .args(words)
                .stdin(std::process::Stdio::piped())
                .spawn();
            if let Ok(mut child) = child {
                if let Some(mut stdin) = child.stdin.take() {
                    let _ = stdin.write_all(text.as_bytes());
                    let _ = stdin.write_all(b"\n");
                }
                let _ = child.wait();
                return;
            }
        }
    }
    println!("{text}");
}

fn load(vm: &Vm, path: &str) {
    match std::fs::read_to_string(path) {
        Ok(src) => {
            let rep = vm.load_unit(&[(path.to_string(), src)]);
            for f in &rep.findings {
                eprint!("{f}");
            }
            if let Some(e) = &rep.error {
                // As `bt run` shows it: the stack (when inside methods) and the location.
                eprintln!("{}", e.report_with_traceback());
            } else {
                for (_, w) in &rep.warnings {
                    eprintln!("{}", w.trim_end());
                }
                if rep.warnings.is_empty() {
                    println!("loaded {path}");
                }
            }
        }
        Err(e) => eprintln!("cannot read {path}: {e}"),
    }
}

/// `bt repl` arguments.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct ReplArgs {
    /// Deepest call nesting before a stack_overflow error
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) max_depth: usize,
}

impl Default for ReplArgs {
    fn default() -> Self {
        ReplArgs { max_depth: 10_000 }
    }
}

/// Runs `bt repl`; answers the process exit status.
pub(crate) fn main(args: ReplArgs) -> i32 {
    let max_depth = args.max_depth.max(1);
    if let Err(m) = crate::interp::interpreter::check_max_depth(max_depth, "--max-depth") {
        eprintln!("bt repl: {m}");
        return 2;
    }
    let vm = Vm::new(VmOptions {
        max_depth,
        ..VmOptions::default()
    });
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        interrupt::install(vm.runtime());
    }
    let session: Session = Default::default();
    let mut source: Box<dyn LineSource> = if interactive {
        match rustyline::Editor::<Helper, rustyline::history::DefaultHistory>::new() {
            Ok(mut ed) => {
                ed.set_helper(Some(Helper(session.clone())));
                let history = std::env::var_os("HOME")
                    .map(|h| std::path::PathBuf::from(h).join(".bt_history"));
                if let Some(h) = &history {
                    let _ = ed.load_history(h);
                }
                println!(
                    "bt {} — :help for help, :quit to leave",
                    env!("CARGO_PKG_VERSION")
                );
                Box::new(Editor { ed, history })
            }
            Err(_) => Box::new(Plain(std::io::stdin().lock())),
        }
    } else {
        Box::new(Plain(std::io::stdin().lock()))
    };
    // The last input when it was a definition (the next may add indented members to it).
    let mut last_definition: Option<String> = None;
    while let Some(mut input) = read_input(source.as_mut(), last_definition.is_some()) {
        if input.trim().is_empty() {
            continue;
        }
        source.remember(&input);
        match last_definition.take() {
            Some(before) if continues_definition(&input) => {
                input = format!("{before}\n\n{input}");
                last_definition = Some(input.clone());
            }
            _ if starts_definition(&input) => last_definition = Some(input.clone()),
            _ => {}
        }
        let t = input.trim();
        match t {
            ":quit" | ":q" | ":exit" => break,
            ":help" | ":h" => {
                println!("{HELP}");
                continue;
            }
            _ => {}
        }
        if let Some(topic) = t.strip_prefix(":help ").or_else(|| t.strip_prefix(":h ")) {
            let text = super::repl_help::help(&session.borrow(), topic);
            show_long(&super::repl_help::terminal_text(&text), interactive);
            continue;
        }
        if let Some(path) = t.strip_prefix(":load") {
            let path = path.trim();
            if interrupt::run(|| load(&vm, path)).1 {
                eprintln!("interrupted");
            }
            if let Ok(src) = std::fs::read_to_string(path) {
                let mut s = session.borrow_mut();
                s.push_str(&src);
                s.push('\n');
            }
            continue;
        }
        if t.starts_with(':') {
            eprintln!("unknown command {t} (try :help)");
            continue;
        }
        let mut result = Ok(crate::value::Value::Nil);
        let ((), interrupted) = interrupt::run(|| result = vm.eval("repl", &input));
        if interrupted {
            eprintln!("interrupted");
            let _ = std::io::stdout().flush();
            continue;
        }
        for f in vm.last_findings() {
            eprint!("{f}");
        }
        if result.is_ok() {
            let mut s = session.borrow_mut();
            s.push_str(&input);
            s.push('\n');
        }
        match result {
            Ok(v) => println!("{}", vm.print_string(&v)),
            Err(e) => {
                if let Some(code) = e.exit_code() {
                    return code;
                }
                eprintln!("{}", e.report_with_caret());
            }
        }
        let _ = std::io::stdout().flush();
    }
    0
}
