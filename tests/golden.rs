//! The one golden-file harness (libtest-mimic, `harness = false`).
//!
//! It discovers source files under `tests/golden/**` and `examples/**`; each becomes a trial
//! named by its path (so `cargo test --test golden -- parse/ok/cascade` filters). A [`Rule`]
//! chosen by path prefix says how to run the built `bt` binary on the file and which sibling
//! files hold the expected output. `BLESS=1 cargo test --test golden` rewrites the expected
//! files from the actual output. An expected-output file without its source fails as an orphan.
//!
//! To add a kind of golden test, add a row to [`RULES`] (first matching prefix wins).

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Which output stream an expected file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
    /// Standard output holding one JSON document, compared (and blessed) pretty-printed.
    StdoutJson,
}

/// How one kind of golden file is run and compared.
struct Rule {
    /// Path prefix relative to the crate root, with `/` separators.
    prefix: &'static str,
    /// Source file extensions (with the dot) that make a trial under this prefix.
    exts: &'static [&'static str],
    /// The `bt` arguments for a source path (relative to the crate root).
    args: fn(&str) -> Vec<String>,
    /// Expected files: the suffix replacing the source extension, and the stream it holds.
    /// A missing expected file means "this stream must be empty".
    expect: &'static [(&'static str, Stream)],
    /// Required exit status (None: any).
    exit: Option<i32>,
    /// Seconds before the run is killed and the trial fails.
    timeout: u64,
    /// For sources that hold their own expectations (`// =>` lines): the `bt` arguments that
    /// rewrite them in place under `BLESS=1` (the exit status is not checked then).
    bless_args: Option<fn(&str) -> Vec<String>>,
    /// The checker must not cry wolf: no checker error or warning on stderr, and
    /// hints only on cases that expect `ERROR:` or follow an `@expect`.
    quiet: bool,
}

fn args_parse(p: &str) -> Vec<String> {
    vec!["parse".into(), "--ast".into(), p.into()]
}

fn args_check(p: &str) -> Vec<String> {
    vec!["check".into(), "--color".into(), "never".into(), p.into()]
}

/// The rule table. Other kinds (eval through `bt test`, types through `bt check`, examples)
/// are added here as rows.
const RULES: &[Rule] = &[
    Rule {
        prefix: "tests/golden/parse/ok/",
        exts: &[".bt"],
        args: args_parse,
        expect: &[(".ast", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(0),
        timeout: 30,
        bless_args: None,
        quiet: false,
    },
    Rule {
        prefix: "tests/golden/parse/err/",
        exts: &[".bt"],
        args: args_check,
        expect: &[(".stderr", Stream::Stderr)],
        exit: Some(1),
        timeout: 30,
        bless_args: None,
        quiet: false,
    },
    // The static checker: ok files check clean; err files pin the rendered findings.
    Rule {
        prefix: "tests/golden/types/ok/",
        exts: &[".bt"],
        args: args_check,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(0),
        timeout: 30,
        bless_args: None,
        quiet: false,
    },
    Rule {
        prefix: "tests/golden/types/err/",
        exts: &[".bt"],
        args: args_check,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: None,
        timeout: 30,
        bless_args: None,
        quiet: false,
    },
    // Expression files and suites: each file passes when every case passes.
    Rule {
        prefix: "tests/golden/eval/",
        exts: &[".btscript", ".bt"],
        args: args_test,
        expect: &[],
        exit: Some(0),
        timeout: 300,
        bless_args: Some(args_test_bless),
        quiet: true,
    },
    // The runner itself: `*.cmd` holds `bt` arguments; the directory names the exit status.
    Rule {
        prefix: "tests/golden/testrun/pass/",
        exts: &[".cmd"],
        args: args_cmd,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(0),
        timeout: 300,
        bless_args: None,
        quiet: false,
    },
    Rule {
        prefix: "tests/golden/testrun/fail/",
        exts: &[".cmd"],
        args: args_cmd,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(1),
        timeout: 300,
        bless_args: None,
        quiet: false,
    },
    Rule {
        prefix: "tests/golden/testrun/usage/",
        exts: &[".cmd"],
        args: args_cmd,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(2),
        timeout: 60,
        bless_args: None,
        quiet: false,
    },
    Rule {
        prefix: "tests/golden/testrun/json/",
        exts: &[".cmd"],
        args: args_cmd,
        expect: &[(".json", Stream::StdoutJson), (".stderr", Stream::Stderr)],
        exit: None,
        timeout: 300,
        bless_args: None,
        quiet: false,
    },
    // The tests of examples/testing run on the deterministic scheduler with seed 1
    // (`bt test --seed 1`): the racy bank's failure is pinned like any output. The
    // programs beside them run as other examples do.
    Rule {
        prefix: "examples/testing/",
        exts: &[".bt"],
        args: args_seeded_test,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: None,
        timeout: 120,
        bless_args: None,
        quiet: true,
    },
    // Examples are programs: their output is pinned by `.stdout` (and `.stderr`).
    Rule {
        prefix: "examples/",
        exts: &[".bt"],
        args: args_run,
        expect: &[(".stdout", Stream::Stdout), (".stderr", Stream::Stderr)],
        exit: Some(0),
        timeout: 120,
        bless_args: None,
        quiet: true,
    },
    // The `// =>` examples inside `///` comments of the library.
    Rule {
        prefix: "stdlib/",
        exts: &[".bt"],
        args: args_doc,
        expect: &[],
        exit: Some(0),
        timeout: 300,
        bless_args: Some(args_doc_bless),
        quiet: false,
    },
];

fn args_test(p: &str) -> Vec<String> {
    vec!["test".into(), p.into()]
}

fn args_test_bless(p: &str) -> Vec<String> {
    vec!["test".into(), "--bless".into(), p.into()]
}

fn args_doc(p: &str) -> Vec<String> {
    vec!["test".into(), "--doc-examples".into(), p.into()]
}

fn args_doc_bless(p: &str) -> Vec<String> {
    vec![
        "test".into(),
        "--doc-examples".into(),
        "--bless".into(),
        p.into(),
    ]
}

fn args_run(p: &str) -> Vec<String> {
    vec!["run".into(), p.into()]
}

/// `bt test --seed 1 FILE` for a file under a `test/` directory, else `bt run FILE`.
fn args_seeded_test(p: &str) -> Vec<String> {
    if p.contains("/test/") {
        vec!["test".into(), "--seed".into(), "1".into(), p.into()]
    } else {
        args_run(p)
    }
}

/// The whitespace-separated arguments written in a `.cmd` file.
fn args_cmd(p: &str) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(p))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Roots searched for golden files.
const ROOTS: &[&str] = &["tests/golden", "examples", "stdlib"];

fn main() {
    let mut args = Arguments::from_args();
    // Colour only on a terminal and never with NO_COLOR (libtest-mimic's `auto` colours any
    // output, redirected or not).
    if args.color.is_none() {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
        args.color = Some(if tty && !no_color {
            libtest_mimic::ColorSetting::Always
        } else {
            libtest_mimic::ColorSetting::Never
        });
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for r in ROOTS {
        walk(&root.join(r), &root, &mut files);
    }
    files.sort();
    let mut trials = Vec::new();
    for rel in &files {
        // Files under a `fixtures` directory are loaded by the tests beside it, not run.
        if rel.contains("/fixtures/") {
            continue;
        }
        let Some(rule) = RULES.iter().find(|r| rel.starts_with(r.prefix)) else {
            continue;
        };
        if let Some(ext) = rule.exts.iter().find(|e| rel.ends_with(*e)) {
            let stem = rel[..rel.len() - ext.len()].to_string();
            let rel = rel.clone();
            let root = root.clone();
            trials.push(Trial::test(rel.clone(), move || {
                run_trial(rule, &root, &rel, &stem)
            }));
            continue;
        }
        // An expected file: its source must exist.
        if let Some((suffix, _)) = rule.expect.iter().find(|(s, _)| rel.ends_with(*s)) {
            let stem = rel[..rel.len() - suffix.len()].to_string();
            let has_source = rule
                .exts
                .iter()
                .any(|e| root.join(format!("{stem}{e}")).exists());
            if !has_source {
                let msg = format!(
                    "{rel} is an expected-output file without a source ({stem}{})",
                    rule.exts[0]
                );
                trials.push(Trial::test(format!("orphan: {rel}"), move || {
                    Err(Failed::from(msg))
                }));
            }
        }
    }
    let r = root.clone();
    trials.push(Trial::test("golden-harness/checker_noise", move || {
        checker_noise_self_test(&r)
    }));
    libtest_mimic::run(&args, trials).exit();
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, root, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

struct Output {
    stdout: String,
    stderr: String,
    status: Option<i32>,
}

fn run_bt(root: &Path, args: &[String], timeout: u64) -> Result<Output, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bt"));
    // The compiled closures alone unless a mode is asked for (`BT_EVAL=walk`, the tree
    // walker): under `strict` a node kind without a compiled form fails the golden.
    if std::env::var_os("BT_EVAL").is_none() {
        cmd.env("BT_EVAL", "strict");
    }
    let mut child = cmd
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run bt: {e}"))?;
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut so = child.stdout.take().ok_or("no stdout")?;
    let mut se = child.stderr.take().ok_or("no stderr")?;
    let t1 = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut so, &mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut se, &mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("bt {} timed out after {timeout}s", args.join(" ")));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for bt: {e}")),
        }
    };
    let stdout = String::from_utf8_lossy(&t1.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t2.join().unwrap_or_default()).into_owned();
    Ok(Output {
        stdout,
        stderr,
        status: status.code(),
    })
}

fn run_trial(rule: &Rule, root: &Path, rel: &str, stem: &str) -> Result<(), Failed> {
    let bless = std::env::var_os("BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let self_blessing = bless && rule.bless_args.is_some();
    let args = match rule.bless_args {
        Some(f) if bless => f(rel),
        _ => (rule.args)(rel),
    };
    let out = run_bt(root, &args, rule.timeout)?;
    let mut problems = Vec::new();
    for (suffix, stream) in rule.expect {
        let actual = match stream {
            Stream::Stdout => out.stdout.clone(),
            Stream::Stderr => out.stderr.clone(),
            Stream::StdoutJson => pretty_json(&out.stdout),
        };
        let path = root.join(format!("{stem}{suffix}"));
        if bless {
            if actual.is_empty() {
                if path.exists() {
                    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                }
            } else {
                std::fs::write(&path, &actual).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            let name = format!("{stem}{suffix}");
            problems.push(format!(
                "{name} differs (- expected, + actual):\n{}",
                diff(&expected, &actual)
            ));
        }
    }
    if rule.quiet && !bless {
        problems.extend(checker_noise(root, &out.stderr));
    }
    if let Some(code) = rule.exit {
        if out.status != Some(code) && !self_blessing {
            // The output is shown too: for `bt test` rows it lists the failing cases.
            problems.push(format!(
                "exit status {:?}, expected {code}\n--- stdout:\n{}--- stderr:\n{}",
                out.status, out.stdout, out.stderr
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        problems.push(format!(
            "command: bt {}\n(BLESS=1 rewrites the expected files)",
            args.join(" ")
        ));
        Err(problems.join("\n").into())
    }
}

/// The checker findings on `stderr` that break the "does not cry wolf" rule: any
/// error or warning, and a hint unless it is on a case expecting `ERROR:` or on a statement
/// that follows an `@expect` line.
fn checker_noise(root: &Path, stderr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Some((file, line_no, severity)) = finding_header(line) else {
            continue;
        };
        if severity == "hint" && hint_allowed(root, file, line_no) {
            continue;
        }
        out.push(format!(
            "checker {severity} on a golden (the checker must not cry wolf; add \
             `@expect CATEGORY` where the mistake is deliberate):\n  {line}"
        ));
    }
    out
}

/// `FILE:LINE:COL: SEVERITY: message` (possibly after a `warning: ` prefix of the runner):
/// the file, the line and the severity.
fn finding_header(line: &str) -> Option<(&str, usize, &str)> {
    for sev in ["error", "warning", "hint"] {
        let marker = format!(": {sev}: ");
        let Some(at) = line.find(&marker) else {
            continue;
        };
        let head = &line[..at];
        let head = head.strip_prefix("warning: ").unwrap_or(head);
        let mut parts = head.rsplitn(3, ':');
        let col = parts.next()?;
        let ln = parts.next()?;
        let file = parts.next()?;
        if col.parse::<usize>().is_err() || file.contains(' ') {
            continue;
        }
        if let Ok(n) = ln.parse::<usize>() {
            return Some((file, n, sev));
        }
    }
    None
}

fn hint_allowed(root: &Path, file: &str, line: usize) -> bool {
    let Ok(src) = std::fs::read_to_string(root.join(file)) else {
        return false;
    };
    // Expression files: the case holding the line.
    for entry in bt_cli::test_support::split(&src) {
        if let bt_cli::test_support::Entry::Case(c) = entry {
            if (c.line..=c.expect_line).contains(&line) {
                return c.expect_category.is_some()
                    || matches!(c.expectation, bt_cli::test_support::Expectation::Error(_));
            }
        }
    }
    // Elsewhere: the statement or member holding the line (continuation lines are indented
    // deeper than its first line) follows an `@expect` line.
    let lines: Vec<&str> = src.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut s = line.clamp(1, lines.len().max(1));
    while s > 1 && !lines[s - 2].trim().is_empty() && indent(lines[s - 1]) > indent(lines[s - 2]) {
        s -= 1;
    }
    s > 1 && lines[s - 2].trim().starts_with("@expect")
}

/// The rule above on made-up output (the harness checks itself).
fn checker_noise_self_test(root: &Path) -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("bt-golden-noise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let script = dir.join("x.btscript");
    std::fs::write(
        &script,
        "\"a\" + 1\n// => ERROR: does_not_understand\n3 foo: 4\n// => 7\n@expect dnu\nObject subclass: A\n  m => self zork\n    + 1\n",
    )
    .map_err(|e| e.to_string())?;
    let f = script.display().to_string();
    let stderr = format!(
        "{f}:1:5: hint: `String` does not understand `+`\n 1 | x\n{f}:3:3: hint: x\n\
         {f}:8:5: hint: y\nwarning: {f}:3:1: error: parse\n{f}:1:1: warning: w\n"
    );
    let got = checker_noise(root, &stderr);
    let _ = std::fs::remove_dir_all(&dir);
    let want = [":3:3: hint", ":3:1: error", ":1:1: warning"];
    if got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.contains(w)) {
        Ok(())
    } else {
        Err(format!("checker_noise answered {got:#?}").into())
    }
}

/// A JSON document pretty-printed with its keys in the order written (with a final line
/// end), or the text as it is when it does not parse.
fn pretty_json(text: &str) -> String {
    if serde_json::from_str::<serde_json::Value>(text).is_err() {
        return text.to_string();
    }
    let mut out = String::new();
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    let mut chars = text.trim().chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// A small line diff (longest common subsequence), enough for golden outputs.
fn diff(a: &str, b: &str) -> String {
    let x: Vec<&str> = a.lines().collect();
    let y: Vec<&str> = b.lines().collect();
    if x.len() * y.len() > 4_000_000 {
        return format!("--- expected\n{a}\n--- actual\n{b}");
    }
    let (n, m) = (x.len(), y.len());
    let mut l = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if x[i] == y[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            out.push_str(&format!("  {}\n", x[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
            out.push_str(&format!("+ {}\n", y[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", x[i]));
            i += 1;
        }
    }
    if a.ends_with('\n') != b.ends_with('\n') {
        out.push_str("(trailing newline differs)\n");
    }
    out
}
