//! Command-line conventions of the `bt` binary (src/cli.rs): help on every subcommand,
//! `bt help CMD`, `-V`, suggestions, `run -e` / `run -`, exit statuses, colour rules,
//! completions. Each test runs the built binary.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn bt() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bt"));
    c.env_remove("NO_COLOR").stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    bt().args(args).output().expect("bt runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("bt-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn file(&self, name: &str, src: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, src).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SUBCOMMANDS: &[&str] = &["run", "test", "check", "parse", "repl", "completions"];

#[test]
fn every_subcommand_has_help() {
    for cmd in SUBCOMMANDS {
        for flag in ["-h", "--help"] {
            let o = run(&[cmd, flag]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "bt {cmd} {flag}: {}",
                text(&o.stderr)
            );
            let out = text(&o.stdout);
            assert!(
                out.contains(&format!("Usage: bt {cmd}")),
                "bt {cmd} {flag}: {out}"
            );
        }
    }
}

#[test]
fn help_command_shows_the_subcommand_help() {
    for cmd in SUBCOMMANDS {
        let a = run(&["help", cmd]);
        let b = run(&[cmd, "--help"]);
        assert_eq!(a.status.code(), Some(0));
        assert_eq!(text(&a.stdout), text(&b.stdout), "bt help {cmd}");
    }
}

#[test]
fn top_level_help_lists_commands_and_exit_codes() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for cmd in SUBCOMMANDS {
        assert!(
            out.contains(&format!("  {cmd} ")),
            "{cmd} missing from {out}"
        );
    }
    assert!(out.contains("Exit status:"), "{out}");
    assert!(out.contains("2    usage error"), "{out}");
    let o = run(&["run", "--help"]);
    assert!(text(&o.stdout).contains("Exit status:"));
}

#[test]
fn version_flags() {
    for flag in ["-V", "--version"] {
        let o = run(&[flag]);
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(
            text(&o.stdout),
            format!("bt {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn misspelled_commands_and_flags_get_suggestions() {
    let o = run(&["rnu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("a similar subcommand exists: 'run'"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["tset"]);
    assert!(text(&o.stderr).contains("'test'"), "{}", text(&o.stderr));
    let o = run(&["test", "--jsn"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("a similar argument exists: '--json'"));
    let o = run(&["run", "x.bt", "--mian", "X"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("'--main'"));
    let o = run(&["check", "--formt", "json"]);
    assert!(text(&o.stderr).contains("'--format'"));
}

#[test]
fn run_eval_and_stdin() {
    let o = run(&["run", "-e", "Transcript showCr: (3 + 4) printString"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout).as_str()),
        (Some(0), "7\n")
    );
    let o = run(&[
        "run",
        "-e",
        "Transcript showCr: System arguments printString",
        "a",
        "b",
    ]);
    assert_eq!(text(&o.stdout), "#(\"a\", \"b\")\n");
    let mut child = bt()
        .args(["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Object subclass: A\n  hi => \"from stdin\"\n\nTranscript showCr: A new hi\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        (o.status.code(), text(&o.stdout).as_str()),
        (Some(0), "from stdin\n")
    );
}

#[test]
fn exit_statuses_are_as_documented() {
    assert_eq!(run(&["run", "-e", "1 + 1"]).status.code(), Some(0));
    let o = run(&["run", "-e", "1 / 0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).starts_with("-e:1:3: TypeError (type_error)"));
    assert_eq!(
        run(&["run", "-e", "Program exit: 7"]).status.code(),
        Some(7)
    );
    assert_eq!(run(&["run", "--bogus", "f.bt"]).status.code(), Some(2));
    assert_eq!(run(&["run", "/no/such/file.bt"]).status.code(), Some(2));
    assert_eq!(run(&["run"]).status.code(), Some(2));
    let s = Scratch::new("exit");
    let bad = s.file("bad.bt", "x := y + 1\n");
    assert_eq!(run(&["check", &bad]).status.code(), Some(1));
    let good = s.file("good.bt", "x := 1 + 1\n");
    assert_eq!(run(&["check", &good]).status.code(), Some(0));
}

#[test]
fn existing_flags_still_work() {
    let s = Scratch::new("flags");
    let f = s.file(
        "main.bt",
        "Object subclass: Greeter\n  class main: args => Transcript showCr: \"Hello, {args first}!\"\n",
    );
    let o = run(&["run", &f, "--main", "Greeter", "--", "Ann"]);
    assert_eq!(text(&o.stdout), "Hello, Ann!\n", "{}", text(&o.stderr));
    let o = run(&["run", "--main", "Greeter", &f, "Bob"]);
    assert_eq!(text(&o.stdout), "Hello, Bob!\n");
    let o = run(&["run", "--hidden", &f]);
    assert_eq!(o.status.code(), Some(2), "--hidden needs --name");
    let o = run(&["parse", "--ast", &f]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("Greeter"));
    let o = run(&["check", "--format", "json", &f]);
    assert_eq!(text(&o.stdout).trim(), "{\"findings\":[]}");
    let t = s.file("t.btscript", "1 + 1\n// => 2\n");
    let o = run(&["test", "--json", "--filter", "t.bt", &t]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\"passed\""));
    let o = run(&["run", &f, "--diagnostics", "colour=off"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown diagnostic category 'colour'"));
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let s = Scratch::new("colour");
    let bad = s.file("bad.bt", "x := y + 1\n");
    // Piped stderr: no escape codes.
    let o = run(&["check", &bad]);
    assert!(!text(&o.stderr).contains('\x1b'), "{}", text(&o.stderr));
    let o = run(&["rnu"]);
    assert!(!text(&o.stderr).contains('\x1b'));
    // Forced: colour; NO_COLOR does not override an explicit request.
    let o = run(&["check", "--color", "always", &bad]);
    assert!(text(&o.stderr).contains('\x1b'));
    let o = bt()
        .args(["check", &bad])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!text(&o.stderr).contains('\x1b'));
}

#[test]
fn completions_are_generated_from_the_definition() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let out = text(&o.stdout);
        assert!(out.contains("bt"), "{shell}");
        assert!(
            out.contains("warnings-as-errors"),
            "{shell}: flags complete"
        );
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
}

const TRACED: &str = "Object subclass: Calc
  half: x => x / 2
  run => self half: \"ten\"

Actor subclass: Counter
  state: count = 0
  divide: n => self.count := 10 / n
  bump: n => self divide: n

Transcript showCr: ([Calc new run] on: Error do: [:e | e stackTrace]) printString
Transcript showCr: ([Calc new run] on: Error do: [:e | e stackLocations]) printString
c := Counter spawn
c bump: 0
";

#[test]
fn uncaught_errors_print_the_bt_stack_innermost_last() {
    let s = Scratch::new("trace");
    let f = s.file("t.bt", TRACED);
    let o = bt()
        .current_dir(&s.0)
        .args(["run", "t.bt"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        "#(\"Calc>>half:\", \"Calc>>run\", \"UndefinedObject>>doIt\")\n\
         #(\"t.bt:2:16\", \"t.bt:3:15\", \"t.bt:11:31\")\n"
    );
    assert_eq!(
        text(&o.stderr),
        "Traceback (innermost last):
  t.bt:13:3  UndefinedObject>>doIt
  -- in actor Counter --
  t.bt:8:19  Counter>>bump:
  t.bt:7:33  Counter>>divide:
t.bt:13:3: TypeError (type_error): Counter>>divide: bad arithmetic operation
`10 / 0`: division by zero
 13 │c bump: 0
    │  ^
Hint: Arithmetic requires numbers; check for a non-numeric operand or division by zero.
"
    );
    drop(f);
    // A method error: the report points into the method, the trace at the call that passed
    // the bad argument.
    let o = run(&[
        "run",
        "-e",
        "Object subclass: A\n  boom: x => x foo\n\nA new boom: nil\n",
    ]);
    assert_eq!(
        text(&o.stderr),
        "Traceback (innermost last):
  -e:4:7   UndefinedObject>>doIt
  -e:2:16  A>>boom:
-e:2:16: RuntimeError (does_not_understand): UndefinedObject does not understand 'foo'
 2 │  boom: x => x foo
   │               ^
Hint: Check spelling or use 'respondsTo:' to verify method exists
"
    );
    // A top-level error has no stack worth printing.
    let o = run(&["run", "-e", "nil foo"]);
    assert!(
        text(&o.stderr).starts_with("-e:1:5: RuntimeError"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn failing_tests_show_the_stack() {
    let s = Scratch::new("testtrace");
    s.file(
        "calc_test.bt",
        "Object subclass: Calc\n  half: x => x / 2\n  run => self half: \"ten\"\n\nTestCase subclass: CalcTest\n  testRun => self assert: Calc new run equals: 5\n",
    );
    s.file(
        "expr.bt",
        "Object subclass: Calc2\n  half: x => x / 2\n\nCalc2 new half: \"ten\"\n// => 5\n",
    );
    let o = bt().current_dir(&s.0).args(["test", "."]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "  Traceback (innermost last):
    ./calc_test.bt:6:36  CalcTest>>testRun
    ./calc_test.bt:3:15  Calc>>run
    ./calc_test.bt:2:16  Calc>>half:"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "  Traceback (innermost last):
    ./expr.bt:4:11  UndefinedObject>>doIt
    ./expr.bt:2:16  Calc2>>half:"
        ),
        "{out}"
    );
}

#[test]
fn test_warns_about_expectations_it_will_not_run() {
    let s = Scratch::new("lint");
    s.file(
        "taste.bt",
        "x := 3\nx + 1        // => 4\n#(1, 2) collect: [:e | e * 10]   // => [10,20]\n",
    );
    s.file(
        "suite_test.bt",
        "TestCase subclass: ATest\n  testA => self assert: true\n\n3 + 4\n// => 7\n",
    );
    let o = bt().current_dir(&s.0).args(["test", "."]).output().unwrap();
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "bt test: warning: ./taste.bt:2: `// =>` after code on the same line is a comment"
        ),
        "{err}"
    );
    assert!(err.contains("./taste.bt:3:"), "{err}");
    assert!(
        err.contains("./suite_test.bt:5: this file is a TestCase suite"),
        "{err}"
    );
}

#[test]
fn bless_reports_what_it_rewrote_and_passes() {
    let s = Scratch::new("bless");
    let f = s.file(
        "b.btscript",
        "1 + 1\n// => 3\n2 + 2\n// => 4\n\"a\" size\n// => 7\n",
    );
    let o = bt()
        .current_dir(&s.0)
        .args(["test", "--bless", "b.btscript"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(
        text(&o.stdout),
        "PASS b.btscript (3 passed, 0 failed)
  blessed 2 expectations:
    b.btscript:1: 1 + 1  // => 2
    b.btscript:5: \"a\" size  // => 1

3 passed, 0 failed
"
    );
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "1 + 1\n// => 2\n2 + 2\n// => 4\n\"a\" size\n// => 1\n"
    );
    let o = bt()
        .current_dir(&s.0)
        .args(["test", "b.btscript"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn fmt_rewrites_checks_and_reads_stdin() {
    let s = Scratch::new("fmt");
    let messy = "Object subclass: A   \n      foo => 1\n\n\n\n      bar => 2\nx := A new foo\n";
    let tidy = "Object subclass: A\n  foo => 1\n\n  bar => 2\nx := A new foo\n";
    let f = s.file("a.bt", messy);
    let o = bt()
        .current_dir(&s.0)
        .args(["fmt", "--check", "."])
        .output()
        .unwrap();
    assert_eq!(
        (o.status.code(), text(&o.stdout).as_str()),
        (Some(1), "./a.bt\n")
    );
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        messy,
        "--check writes nothing"
    );
    let o = bt()
        .current_dir(&s.0)
        .args(["fmt", "a.bt"])
        .output()
        .unwrap();
    assert_eq!(
        (o.status.code(), text(&o.stdout).as_str()),
        (Some(0), "formatted a.bt\n")
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), tidy);
    let o = bt()
        .current_dir(&s.0)
        .args(["fmt", "--check", "a.bt"])
        .output()
        .unwrap();
    assert_eq!((o.status.code(), text(&o.stdout).as_str()), (Some(0), ""));
    let mut child = bt()
        .args(["fmt", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(messy.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(text(&o.stdout), tidy);
}

/// `bt fmt` and `bt fmt --check` on a file that does not parse, or that holds NUL bytes (not
/// a text file): the diagnostics on standard error, exit status 1, the file untouched — also
/// when the layout would have changed it — and the well-formed files beside it still
/// formatted.
#[test]
fn fmt_refuses_files_that_do_not_parse_or_hold_nul_bytes() {
    let s = Scratch::new("fmt-broken");
    let broken = "x := (   \n\n\n\ny := 2\n";
    let nuls = format!("{}\n\n\n", "\0".repeat(100));
    let nul_in_string = "x := \"a\0b\"   \n\n\n";
    let b = s.file("broken.bt", broken);
    let n = s.file("nuls.bt", &nuls);
    let ns = s.file("nulstr.bt", nul_in_string);
    let ok = s.file("ok.bt", "x := 1   \n");
    for check in [true, false] {
        let mut args = vec!["fmt"];
        if check {
            args.push("--check");
        }
        args.push(".");
        let o = bt().current_dir(&s.0).args(&args).output().unwrap();
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "bt {args:?}: {out}{err}");
        assert!(
            err.contains("./broken.bt:1:6: error:") && err.contains("does not parse"),
            "bt {args:?}: {err}"
        );
        assert!(
            err.contains("./nuls.bt:1:1: error:") && err.contains("NUL"),
            "bt {args:?}: {err}"
        );
        assert!(
            err.contains("./nulstr.bt:1:8: error:"),
            "bt {args:?}: {err}"
        );
        assert!(!err.contains('\0'), "a NUL byte echoed: {err:?}");
        for f in ["broken", "nuls", "nulstr"] {
            assert!(!out.contains(f), "bt {args:?} listed {f}: {out}");
        }
        if check {
            assert_eq!(out, "./ok.bt\n");
        } else {
            assert_eq!(out, "formatted ./ok.bt\n");
        }
        assert_eq!(std::fs::read_to_string(&b).unwrap(), broken);
        assert_eq!(std::fs::read_to_string(&n).unwrap(), nuls);
        assert_eq!(std::fs::read_to_string(&ns).unwrap(), nul_in_string);
    }
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "x := 1\n");
    for check in [true, false] {
        let mut args = vec!["fmt", "-"];
        if check {
            args.push("--check");
        }
        let mut child = bt()
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(broken.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(text(&o.stdout), "", "nothing formatted is written");
        assert!(err.contains("<stdin>:1:6: error:"), "{err}");
    }
}

/// `bt repl` in `dir` with `input` piped in (no terminal), run until it ends.
fn repl_piped(dir: &std::path::Path, input: &[u8]) -> Output {
    let mut child = bt()
        .current_dir(dir)
        .arg("repl")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn repl_help_load_and_multiline_input() {
    let s = Scratch::new("repl");
    s.file(
        "lib.bt",
        "Object subclass: Greeter\n  /// Greets.\n  greet: n => \"hi {n}\"\n",
    );
    let o = repl_piped(
        &s.0,
        b":load lib.bt\n:help Greeter>>greet:\n#(1,\n  2)\n(Greeter new greet: \"ann\")\n:help Integer>>factorial\n:quit\n",
    );
    assert_eq!(
        text(&o.stdout),
        "loaded lib.bt\nGreeter >> greet: n\n\nGreets.\n#(1, 2)\n\"hi ann\"\nInteger >> factorial -> Integer\n\nA negative receiver raises type_error.\n"
    );
}

/// `bt doc | head`, `bt completions bash | head`: a reader that goes away ends the output
/// quietly (exit 0, no panic message), as for other Unix tools. The pipe's read end is closed
/// before the child starts, so every write fails with a broken pipe whatever the output size.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    let s = Scratch::new("pipe");
    let file = s.file("p.bt", "x := 1 + 2.\n");
    for args in [
        &["doc"][..],
        &["doc", "Integer"],
        &["completions", "bash"],
        &["parse", "--ast", &file],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = bt()
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("bt runs");
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "bt {args:?}: {err}");
        assert!(!err.contains("panicked"), "bt {args:?}: {err}");
    }
}

/// `bt repl` in a new pseudo-terminal (200 columns) of type `term`, its own session whose
/// controlling terminal the pty is (so `\x03` typed there is a SIGINT when the terminal is in
/// cooked mode); HOME is `home` (the history file). Answers the master side to type on, the
/// child (killed and reaped on drop) and its output.
#[allow(unsafe_code)] // openpty, and setsid/TIOCSCTTY in the child: a terminal for the REPL
fn repl_in_a_pty(term: &str, home: &Scratch) -> (std::fs::File, KillOnDrop, Term) {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let (master, slave) = {
        let (mut m, mut s) = (0, 0);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 200,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills two fds; no name or termios is passed, the size is read.
        let r = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(r, 0, "openpty");
        // SAFETY: both fds were just opened and are owned here only.
        unsafe { (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bt"));
    cmd.arg("repl")
        .env("HOME", &home.0)
        .env("TERM", term)
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    // SAFETY: between fork and exec only async-signal-safe calls: a new session whose
    // controlling terminal is the pty (so Ctrl-C on it signals the child's process group).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Killed and reaped if the test fails (a REPL left in its loop would spin).
    let child = KillOnDrop(cmd.spawn().unwrap());
    drop(cmd);
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let mut reader = master.try_clone().unwrap();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut b = [0u8; 4096];
        while let Ok(n) = reader.read(&mut b) {
            if n == 0 || tx.send(b[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    let t = Term {
        rx,
        seen: String::new(),
        at: 0,
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(120),
    };
    (master, child, t)
}

/// `bt repl` in a terminal (a pseudo-terminal, as a user has): the session survives an error
/// and a Ctrl-C that interrupts a loop which never ends, keeps its bindings, and Ctrl-D ends it
/// with status 0. Ctrl-C is sent once the loop has printed that it runs, and again while the
/// output lacks "interrupted"; each wait is a read of the terminal's output with a bound on
/// the total time.
#[test]
fn repl_in_a_terminal_survives_errors_and_ctrl_c() {
    let home = Scratch::new("repl-home");
    let (mut master, mut child, mut t) = repl_in_a_pty("dumb", &home);
    t.expect("bt> ");
    master.write_all(b"x := 40 + 1\r").unwrap();
    t.expect("41");
    master.write_all(b"1 / 0\r").unwrap();
    t.expect("arithmetic");
    // The loop announces that it runs (a Ctrl-C typed before the line is read would discard
    // the line: the terminal flushes pending input on an interrupt).
    master
        .write_all(b"Transcript showCr: \"loo\" ++ \"ping\". [true] whileTrue: [x := x]\r")
        .unwrap();
    t.expect("looping");
    loop {
        master.write_all(b"\x03").unwrap();
        if t.wait_for("interrupted") {
            break;
        }
    }
    master.write_all(b"\rx + 1\r").unwrap();
    t.expect("42");
    master.write_all(b"\x04").unwrap();
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status:?}\n{}", t.seen);
}

/// REPL input in a terminal, typed and pasted, with real key sequences: Ctrl-C at the
/// continuation prompt drops the half-typed input, as does a `:break` line (empty lines do
/// not: the input is still open); a class pasted in one piece without bracketed paste — empty
/// lines between its members, statements after it — arrives whole and in order, as do lines
/// typed ahead of the prompt and, on a terminal with bracketed paste, a bracketed paste. Each
/// in a raw-mode terminal (`TERM=xterm`: the line editor reads the keys) and a cooked one
/// (`TERM=dumb`: Ctrl-C is a SIGINT).
#[test]
fn repl_input_is_dropped_on_ctrl_c_and_kept_whole_when_pasted() {
    const PASTE: &[u8] = b"Value subclass: Pair\r  field: a = 0\r  field: b = 0\r\r  sum => self.a + self.b\r\r  twice => self sum * 2\r\r(Pair a: 40 b: 2) sum\r6 * 8\r(Pair a: 25 b: 2) twice\r";
    for term in ["xterm", "dumb"] {
        let home = Scratch::new(&format!("repl-input-{term}"));
        let (mut m, mut child, mut t) = repl_in_a_pty(term, &home);
        t.expect("bt> ");
        m.write_all(b"\"abc\" reverseDo:\r").unwrap();
        t.expect("...> ");
        m.write_all(b"\r").unwrap();
        t.expect("...> ");
        m.write_all(b"\x03").unwrap();
        t.expect("bt> ");
        m.write_all(b"20 + 22\r").unwrap();
        t.expect("42");
        t.expect("bt> ");
        m.write_all(b"#(1,\r").unwrap();
        t.expect("...> ");
        m.write_all(b":break\r").unwrap();
        t.expect("bt> ");
        m.write_all(b"30 + 13\r").unwrap();
        t.expect("43");
        t.expect("bt> ");
        m.write_all(PASTE).unwrap();
        for want in ["42", "48", "54"] {
            t.expect(want);
        }
        t.expect("bt> ");
        // Typed ahead: each line written at once, none waits for its prompt.
        for line in ["x := 5\r", "y := x * 11\r", "y + 1\r"] {
            m.write_all(line.as_bytes()).unwrap();
        }
        t.expect("56");
        if term == "xterm" {
            t.expect("bt> ");
            m.write_all(b"\x1b[200~Value subclass: Box\n  field: v = 0\n\n  doubled => self.v * 2\n\x1b[201~\r")
                .unwrap();
            t.expect("Box");
            t.expect("bt> ");
            m.write_all(b"(Box v: 31) doubled\r").unwrap();
            t.expect("62");
        }
        t.expect("bt> ");
        m.write_all(b"\x04").unwrap();
        let status = child.0.wait().unwrap();
        assert!(status.success(), "{term}: {status:?}\n{}", t.seen);
    }
}

/// The REPL in a terminal shows each value as its `printString` (`#(1, 2.5, nil)`, a String
/// quoted), not the expectation form of `// =>` lines; and Ctrl-C during an input keeps what
/// that input had assigned to the session's variables before the interrupt (as IEx and
/// Python do): the loop's counter, a new name assigned before the loop. A new name the
/// input had not reached stays undefined; an input that fails with an error still leaves
/// the variables as they were before it.
#[test]
fn repl_shows_print_strings_and_ctrl_c_keeps_what_the_input_assigned() {
    let home = Scratch::new("repl-print");
    let (mut m, mut child, mut t) = repl_in_a_pty("xterm", &home);
    t.expect("bt> ");
    m.write_all(b"#(1, 2.5, nil)\r").unwrap();
    t.expect("#(1, 2.5, nil)\r\n");
    m.write_all(b"\"ab\" ++ \"c\"\r").unwrap();
    t.expect("\"abc\"\r\n");
    m.write_all(b"#sym\r").unwrap();
    t.expect("#sym\r\n");
    m.write_all(b"n := 0\r").unwrap();
    t.expect("bt> ");
    // The loop announces itself only after it has assigned `n`, so the interrupt that
    // follows always finds `n > 0` to keep.
    m.write_all(
        b"k := 7. [true] whileTrue: [n := n + 1. n =:= 1000 ifTrue: [Transcript showCr: \"cou\" ++ \"nting\"]]. later := 1\r",
    )
    .unwrap();
    t.expect("counting");
    loop {
        m.write_all(b"\x03").unwrap();
        if t.wait_for("interrupted") {
            break;
        }
    }
    t.expect("bt> ");
    m.write_all(b"(n > 0) printString ++ \"/\" ++ k printString\r")
        .unwrap();
    t.expect("\"true/7\"");
    t.expect("bt> ");
    m.write_all(b"later\r").unwrap();
    t.expect("Undefined variable: later");
    t.expect("bt> ");
    // An error (not an interrupt) still drops what its input assigned.
    m.write_all(b"k := 8. k := k / 0\r").unwrap();
    t.expect("division by zero");
    t.expect("bt> ");
    m.write_all(b"k\r").unwrap();
    t.expect("7\r\n");
    t.expect("bt> ");
    m.write_all(b"\x04").unwrap();
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status:?}\n{}", t.seen);
}

/// The output of a terminal, read as it comes.
struct Term {
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    seen: String,
    /// Where the next search starts (after what was found last).
    at: usize,
    deadline: std::time::Instant,
}

impl Term {
    /// Reads until `what` appears (true), or until the output pauses (false).
    fn wait_for(&mut self, what: &str) -> bool {
        loop {
            if let Some(i) = self.seen[self.at..].find(what) {
                self.at += i + what.len();
                return true;
            }
            assert!(
                std::time::Instant::now() < self.deadline,
                "no {what:?} in the terminal output:\n{}",
                self.seen
            );
            match self.rx.recv_timeout(std::time::Duration::from_millis(300)) {
                Ok(b) => self.seen.push_str(&String::from_utf8_lossy(&b)),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return false,
                Err(_) => panic!("the terminal closed:\n{}", self.seen),
            }
        }
    }

    fn expect(&mut self, what: &str) {
        while !self.wait_for(what) {}
    }
}

/// `bt doc --html`: the doc comments' Markdown becomes HTML (code blocks, `code` spans — no
/// fences or backticks left), several classes make one page whose sections link to each
/// other, and `--out` writes a page per class with an index.
#[test]
fn doc_html_renders_markdown_and_makes_one_page() {
    let o = run(&["doc", "--html", "Integer", "Number"]);
    assert_eq!(o.status.code(), Some(0));
    let page = text(&o.stdout);
    assert_eq!(page.matches("<!doctype html>").count(), 1, "{page}");
    assert!(!page.contains("```"), "a code fence left as text:\n{page}");
    assert!(page.contains("<pre><code>3 ** 40\n"), "{page}");
    assert!(page.contains("<code>type_error</code>"), "{page}");
    assert!(
        page.contains("inherits from <a href=\"#Number\">Number</a>"),
        "{page}"
    );
    let s = Scratch::new("dochtml");
    let out = s.0.join("ref");
    let o = run(&["doc", "--html", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let int = std::fs::read_to_string(out.join("Integer.html")).unwrap();
    assert!(int.contains("<a href=\"Number.html\">Number</a>"), "{int}");
    assert!(std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .contains("<a href=\"Integer.html\">Integer</a>"));
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a message quotes is cut, the rest counted ("… N more characters"): an 8M-digit
/// literal's diagnostic (the source line with its underline), a 1M-character string that is
/// not a date, a 1M-character key that is not in a Dictionary, a 1M-character selector sent
/// by `perform:`, the path of a too-deep `Json generate:`.
#[test]
fn messages_cut_what_they_quote() {
    let s = Scratch::new("quote-cap");
    let lit = s.file("lit.bt", &format!("x := {}\n", "9".repeat(8_000_000)));
    let o = run(&["check", &lit]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.len() < 4_000, "{} bytes of stderr", err.len());
    assert!(
        err.contains("Integer literal too long") && err.contains("… 7999845 more characters"),
        "{err}"
    );
    let long = "x".repeat(1_000_000);
    for (what, expr, needle) in [
        (
            "a date",
            "(DateTime fromString: s) unwrap",
            "not an ISO 8601 date-time",
        ),
        ("a key", "Dictionary new at: s", "key not found"),
        ("a selector", "3 perform: s asSymbol", "does not understand"),
    ] {
        let f = s.file("q.bt", &format!("s := \"{long}\".\n{expr}\n"));
        let o = run(&["run", &f]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(err.len() < 2_000, "{what}: {} bytes of stderr", err.len());
        assert!(
            err.contains(needle) && err.contains("more characters"),
            "{what}: {err}"
        );
    }
    let f = s.file(
        "deep.bt",
        "a := #(1).\n600 timesRepeat: [a := Array with: a].\nJson generate: a\n",
    );
    let o = run(&["run", &f]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
    assert!(
        err.contains("[1][1]")
            && err.contains("more levels")
            && err.contains("nested deeper than 512"),
        "{err}"
    );
}

/// `bt test` without a PATH where there is no `test/` directory says what it looked for and
/// how to name files.
#[test]
fn test_without_a_test_directory_says_what_it_looked_for() {
    let s = Scratch::new("no-test-dir");
    let o = bt().current_dir(&s.0).arg("test").output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no `test` directory here") && err.contains("bt test PATH"),
        "{err}"
    );
}

/// `bt run -h` shows that a FILE (or `-e TEXT`, or `-`) is required.
#[test]
fn run_help_shows_the_file_as_required() {
    let o = run(&["run", "-h"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("Usage: bt run [OPTIONS] <FILE | - | -e TEXT> [ARGS]..."),
        "{out}"
    );
}

/// `:load` of a file whose statements fail inside methods shows the traceback, as `bt run`
/// does.
#[test]
fn repl_load_errors_show_the_traceback() {
    let s = Scratch::new("repl-load-tb");
    s.file(
        "boom.bt",
        "Object subclass: A\n  boom => nil foo\n  go => self boom\n\nA new go\n",
    );
    let o = repl_piped(&s.0, b":load boom.bt\n");
    let err = text(&o.stderr);
    assert!(
        err.contains("Traceback (innermost last):") && err.contains("A>>boom"),
        "{err}"
    );
    assert!(
        err.contains("boom.bt:2:15: RuntimeError (does_not_understand): UndefinedObject does not understand 'foo'\n 2 │  boom => nil foo\n   │              ^\n"),
        "{err}"
    );
}

/// `assert: 4 / 2 equals: 2` fails (strict equality) and says why: an Integer and a Float
/// are never `equals:`, `/` answers a Float.
#[test]
fn assert_equals_explains_integer_and_float() {
    let s = Scratch::new("int-float");
    let f = s.file(
        "div_test.bt",
        "TestCase subclass: DivTest\n  testHalf => self assert: 4 / 2 equals: 2\n",
    );
    let o = run(&["test", &f]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("Expected 2, got 2.0 (a Float; 2 is an Integer: `assert:equals:` is strict, so they differ; `/` always answers a Float: use `div:` for an Integer quotient)"),
        "{out}"
    );
}

/// Habits from other Smalltalks get a pointer to bt's way: `Time millisecondClock`,
/// `OrderedCollection`, `printNl`.
#[test]
fn smalltalk_habits_get_a_pointer() {
    let s = Scratch::new("habits");
    let f = s.file(
        "h.bt",
        "t := Time millisecondClock\nc := OrderedCollection new\n3 printNl\nd := Date today\n",
    );
    let o = run(&["check", &f]);
    let err = text(&o.stderr);
    for want in [
        "Hint: in bt: `Time monotonicMs` (for intervals) or `Time nowMs` (since the Unix epoch)",
        "Hint: in bt: `List` (`l := l add: x`: a List is a value; `add:` answers a new one)",
        "Hint: in bt: `Transcript showCr: x printString`",
        "Hint: in bt: `DateTime` (`DateTime now`)",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
}

/// An arithmetic fault's report names the operation: the operator, the operands' values and
/// classes, and "division by zero" when that is the cause — for `bt run`, the REPL and a
/// failing `bt test` case. The exception itself is unchanged (kind `type_error`, message
/// "bad arithmetic operation", the fixed hint).
#[test]
fn arithmetic_errors_name_the_operation() {
    let s = Scratch::new("arith-detail");
    for (src, line) in [
        ("1 / 0\n", "`1 / 0`: division by zero"),
        ("x := 7\nx rem: 0\n", "`7 rem: 0`: division by zero"),
        (
            "3 + \"x\"\n",
            "`3 + \"x\"`: Integer + String, and \"x\" is not a number",
        ),
        (
            "Object subclass: Half\n  of: n => 2 / n\n\nHalf new of: nil\n",
            "`2 / nil`: Integer / UndefinedObject, and nil is not a number",
        ),
    ] {
        let f = s.file("a.bt", src);
        let o = run(&["run", "--no-check", &f]);
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!(
                "TypeError (type_error): bad arithmetic operation\n{line}\n"
            )) && err.contains("^\nHint: Arithmetic requires numbers;"),
            "{src}: {err}"
        );
    }
    let o = repl_piped(&std::env::temp_dir(), b"10 / 0\n");
    assert!(
        text(&o.stderr).contains("bad arithmetic operation\n`10 / 0`: division by zero\n"),
        "{}",
        text(&o.stderr)
    );
    let f = s.file("t.btscript", "5 / 0\n// => 1\n");
    let o = run(&["test", &f]);
    assert!(
        text(&o.stdout).contains("`5 / 0`: division by zero"),
        "{}",
        text(&o.stdout)
    );
    // Code that inspects the exception sees what the spec fixes.
    let o = run(&[
        "run",
        "-e",
        "Transcript showCr: ([1 / 0] on: Error do: [:e | e messageText ++ \"|\" ++ e hint])",
    ]);
    assert_eq!(
        text(&o.stdout),
        "bad arithmetic operation|Arithmetic requires numbers; check for a non-numeric operand or division by zero.\n"
    );
}

/// Every arithmetic fault names its operation in `detail`, not only the binary operators:
/// the other division selectors (`\\` through `perform:`, `rem:`, `div:`, `quo:`) on small
/// and big Integers and Floats, unary functions outside their domain or range, `log:`,
/// `Float infinity` and Duration arithmetic. The REPL prints it under the message.
#[test]
fn every_arithmetic_fault_names_its_operation() {
    let cases: &[(&str, &str)] = &[
        ("7 perform: #\\\\ with: 0", "`7 \\\\ 0`: division by zero"),
        ("(2 raisedTo: 100) perform: #\\\\ with: 0", "`1267650600228229401496703205376 \\\\ 0`: division by zero"),
        ("4.5 perform: #\\\\ with: 0", "`4.5 \\\\ 0`: division by zero"),
        ("7 rem: 0", "`7 rem: 0`: division by zero"),
        ("(2 raisedTo: 100) div: 0", "`1267650600228229401496703205376 div: 0`: division by zero"),
        ("7.5 quo: 0.0", "`7.5 quo: 0.0`: division by zero"),
        ("3 mod: nil", "`3 mod: nil`: Integer mod: UndefinedObject, and nil is not a number"),
        ("-1 sqrt", "`-1 sqrt`: the square root of a negative number is not a real number"),
        ("(2 raisedTo: 100) negated sqrt", "`-1267650600228229401496703205376 sqrt`: the square root of a negative number is not a real number"),
        ("0 ln", "`0 ln`: the logarithm of zero has no value"),
        ("-2.5 log10", "`-2.5 log10`: the logarithm of a negative number has no value"),
        ("2 arcSin", "`2 arcSin`: arcSin is defined from -1 to 1 only"),
        ("1000 exp", "`1000 exp`: Integer exp has no number as its answer (beyond the range of a Float)"),
        ("8 log: 1", "`8 log: 1`: a logarithm to base 1 has no value"),
        ("0 log: 10", "`0 log: 10`: the logarithm of zero has no value"),
        ("Float infinity", "`Float infinity`: a Float is always finite (there is no infinity or NaN)"),
        ("(Duration seconds: 1) * \"a\"", "`1s * \"a\"`: Duration * String, and \"a\" is not a number"),
        ("(Duration milliseconds: 9000000000000000000) + (Duration milliseconds: 9000000000000000000)", "`104166666666d 16h + 104166666666d 16h`: the answer is beyond the range of a Duration (±2^63 ms)"),
    ];
    let s = Scratch::new("arith-all");
    let src: String = cases
        .iter()
        .map(|(e, _)| format!("Transcript showCr: ([{e}] on: Error do: [:x | x kind printString ++ \"|\" ++ x detail])\n"))
        .collect();
    let f = s.file("a.bt", &src);
    let o = run(&["run", "--no-check", &f]);
    let out = text(&o.stdout);
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), cases.len(), "{out}{}", text(&o.stderr));
    for ((e, want), line) in cases.iter().zip(got) {
        assert_eq!(line, format!("#type_error|{want}"), "{e}");
    }
    let o = repl_piped(&s.0, b"-1 sqrt\n");
    assert!(
        text(&o.stderr).contains(
            "bad arithmetic operation\n`-1 sqrt`: the square root of a negative number is not a real number\n 1 │-1 sqrt\n   │   ^\n"
        ),
        "{}",
        text(&o.stderr)
    );
}

/// A cast that fails is logged with where it failed; a call to an actor that has ended says
/// why it ended (its exit reason) in the hint; the message itself stays "… is not alive".
#[test]
fn failed_casts_and_dead_actors_say_where_and_why() {
    let s = Scratch::new("casts");
    let f = s.file(
        "c.bt",
        "Actor subclass: C\n  boom => 1 / 0\n  ok => 1\n\nc := C spawn\nc boom!\nc ok\nk := C spawn\nk kill\nk ok\n",
    );
    let o = run(&["run", "--no-check", &f]);
    let err = text(&o.stderr);
    assert!(
        err.contains("error in cast boom to Actor(C, 0.2.0) at ")
            && err.contains("c.bt:2:13: TypeError (type_error): C>>boom: bad arithmetic operation"),
        "{err}"
    );
    assert!(
        err.contains(
            "RuntimeError (actor_dead): Actor(C, 0.3.0) is not alive\n 10 │k ok\n    │  ^\nHint: it ended with reason #killed"
        ),
        "{err}"
    );
}

/// A run-time error shows the source line with a caret under the failing send (its
/// selector), for a file and for `-e` text, with the line's own column in the location.
#[test]
fn runtime_errors_show_the_line_with_a_caret() {
    let o = run(&["run", "--no-check", "-e", "x := 3. y := x foo"]);
    assert_eq!(
        text(&o.stderr),
        "-e:1:16: RuntimeError (does_not_understand): Integer does not understand 'foo'\n \
         1 │x := 3. y := x foo\n   │               ^\n\
         Hint: Check spelling or use 'respondsTo:' to verify method exists\n"
    );
    let s = Scratch::new("caret");
    let f = s.file(
        "a.bt",
        "Object subclass: Foo\n  bar: x => x / 0\n  baz => self bar: 3\n\nFoo new baz\n",
    );
    let o = run(&["run", &f]);
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "{f}:2:15: TypeError (type_error): bad arithmetic operation\n\
             `3 / 0`: division by zero\n \
             2 │  bar: x => x / 0\n   │              ^\nHint: "
        )),
        "{err}"
    );
    assert!(err.contains(&format!("  {f}:3:15  Foo>>baz\n")), "{err}");
}

/// The REPL's error report and `bt test`'s failures show the source line with a caret under
/// the failing send too: the input's line in the REPL (or the line of a method defined in an
/// earlier input), the innermost located frame of a TestCase error, the case's line of a
/// `// =>` case that raised.
#[test]
fn repl_and_test_failures_show_the_line_with_a_caret() {
    let s = Scratch::new("caret-repl");
    let o = repl_piped(
        &s.0,
        b"x := 3
x + \"a\"\nObject subclass: Foo\n  bar => 1 / 0\n\nFoo new bar\n#(1,\n 2) at: 5\n",
    );
    let err = text(&o.stderr);
    for want in [
        "`3 + \"a\"`: Integer + String, and \"a\" is not a number\n 1 │x + \"a\"\n   │  ^\nHint: ",
        "`1 / 0`: division by zero\n 2 │  bar => 1 / 0\n   │           ^\nHint: ",
        "index out of bounds: 5 (size 2)\n 2 │ 2) at: 5\n   │    ^\n",
    ] {
        assert!(err.contains(want), "{want}\n---\n{err}");
    }
    std::fs::create_dir_all(s.0.join("test")).unwrap();
    s.file(
        "test/t_test.bt",
        "Object subclass: Halver\n  half: n => n div: 0\n\nTestCase subclass: T\n  testHalf => Halver new half: 4\n  testDnu =>\n    x := 3\n    x frobnicate\n",
    );
    s.file(
        "test/c.btscript",
        "y := 2\n// => 2\n#(1, y) at: 9\n// => 1\n",
    );
    let o = bt().current_dir(&s.0).arg("test").output().unwrap();
    let out = text(&o.stdout);
    for want in [
        "  `4 div: 0`: division by zero\n   2 │  half: n => n div: 0\n     │               ^\n  Hint: ",
        "  RuntimeError (does_not_understand): Integer does not understand 'frobnicate'\n   8 │    x frobnicate\n     │      ^\n",
        "  actual:   ERROR: RuntimeError (index_out_of_bounds): index out of bounds: 9 (size 2)\n   3 │#(1, y) at: 9\n     │        ^\n",
    ] {
        assert!(out.contains(want), "{want}\n---\n{out}");
    }
}

/// A send the checker knows fails (an unknown selector sent to a literal) makes `bt check`
/// exit 1; a variable receiver stays a hint. The run-time report carries the same
/// suggestion, and a wrong number of arguments names the selector that exists.
#[test]
fn sends_known_to_fail_are_check_errors_with_a_suggestion() {
    let s = Scratch::new("known-dnu");
    let f = s.file("a.bt", "3 factorail\n");
    let o = run(&["check", "--color", "never", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error: `Integer` does not understand `factorail`"),
        "{}",
        text(&o.stderr)
    );
    let g = s.file("b.bt", "x := 3\nx factorail\n");
    assert_eq!(run(&["check", &g]).status.code(), Some(0));
    let o = run(&["run", "--no-check", &f]);
    assert!(
        text(&o.stderr)
            .contains("Integer does not understand 'factorail'\ndid you mean `factorial`?\n"),
        "{}",
        text(&o.stderr)
    );
    let h = s.file(
        "c.bt",
        "Object subclass: Foo\n  bar: a baz: b => a\n\nFoo new bar: 1\n",
    );
    let o = run(&["run", "--no-check", &h]);
    assert!(
        text(&o.stderr).contains(
            "Foo does not understand 'bar:'\nFoo has `bar:baz:`, which takes 2 arguments; this send gives 1\n"
        ),
        "{}",
        text(&o.stderr)
    );
}

/// `bt doc FILE` documents the classes of the user's own files, and `bt doc Class` finds a
/// class that is not in the library in the `.bt` files under the current directory.
#[test]
fn doc_documents_the_users_classes() {
    let s = Scratch::new("userdoc");
    s.file(
        "shapes.bt",
        "/// A square of side `side`.\nValue subclass: Square\n  /// The length of a side.\n  field: side = 1\n  /// The area, side times side.\n  area => self.side * self.side\n",
    );
    let o = bt()
        .current_dir(&s.0)
        .args(["doc", "shapes.bt"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("# Square")
            && out.contains("A square of side")
            && out.contains("The area, side times side."),
        "{out}"
    );
    let o = bt()
        .current_dir(&s.0)
        .args(["doc", "Square"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("The length of a side."));
    let o = bt()
        .current_dir(&s.0)
        .args(["doc", "Squar"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "bt doc: no class Squar in the library or the .bt files here (did you mean Square?)\n"
    );
}
