//! `bt run FILE [--main Class] [--max-depth N] [--no-check] [--warnings-as-errors]
//! [--diagnostics CATEGORY=LEVEL]... [--observe ADDR] [--name NAME@HOST | --sname NAME]
//! [--hidden] [--serve] [--net-tick SECONDS] [--cookie-file PATH] [--dist-tls CONFIG]
//! [-- ARGS...]` (LANGUAGE.md 3.5, 8.1, 8.12).
//!
//! `--name` (or `--sname`, host = this host's short name) makes the process an Erlang
//! distribution node (`crate::dist`) before any statement runs; `--hidden` makes it a hidden
//! node; `--serve` keeps it answering connections after its statements (and `--main`)
//! finish, until it is killed; `--net-tick` sets the tick time (default 60 s);
//! `--cookie-file` names the cookie file (`BT_COOKIE` still wins); `--dist-tls` runs TLS
//! distribution with the given configuration (`crate::dist::tls`).
//!
//! The static checker runs first (unless `--no-check`): its errors stop the file before any
//! statement runs and are printed rendered; its warnings and hints go to stderr. Category
//! levels come from the nearest `bt.toml`'s `[diagnostics]` table, then `--diagnostics`.
//!
//! Loads the file as one unit and runs its statements; with `--main Class` then sends
//! `main:` with the argument List. An uncaught error prints
//! `FILE:LINE:COL: ClassName (kind): message` (and `Hint: …`) to stderr and exits 1;
//! `Program exit: n` exits with n.

use std::io::Write;

use crate::interp::{BtError, Interpreter, InterpreterOptions};
use crate::value::Value;

const USAGE: &str = "usage: bt run FILE [--main Class] [--max-depth N] [--no-check]
              [--warnings-as-errors] [--diagnostics CATEGORY=error|warning|hint|off]...
              [--observe ADDR] [--name NAME@HOST | --sname NAME] [--hidden] [--serve]
              [--net-tick SECONDS] [--cookie-file PATH] [--dist-tls CONFIG] [-- ARGS...]";

struct Opts {
    file: String,
    main: Option<String>,
    max_depth: usize,
    check: bool,
    warnings_as_errors: bool,
    /// `--diagnostics CATEGORY=LEVEL` arguments, in order.
    levels: Vec<String>,
    observe: Option<String>,
    /// `--name NAME@HOST` (8.1), `--hidden`, `--serve`.
    name: Option<String>,
    hidden: bool,
    serve: bool,
    net_tick: u64,
    cookie_file: Option<String>,
    dist_tls: Option<String>,
    args: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        file: String::new(),
        main: None,
        max_depth: 10_000,
        check: true,
        warnings_as_errors: false,
        levels: Vec::new(),
        observe: None,
        name: None,
        hidden: false,
        serve: false,
        net_tick: 0,
        cookie_file: None,
        dist_tls: None,
        args: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--" => {
                o.args = args[i + 1..].to_vec();
                break;
            }
            "--main" => {
                i += 1;
                o.main = Some(args.get(i).ok_or("--main needs a class name")?.clone());
            }
            "--max-depth" => {
                i += 1;
                let v = args.get(i).ok_or("--max-depth needs a number")?;
                o.max_depth = v
                    .parse()
                    .map_err(|_| format!("--max-depth: not a number: {v}"))?;
                if o.max_depth == 0 {
                    return Err("--max-depth must be at least 1".into());
                }
            }
            "--no-check" => o.check = false,
            "--observe" => {
                i += 1;
                o.observe = Some(args.get(i).ok_or("--observe needs an address")?.clone());
            }
            "--warnings-as-errors" => o.warnings_as_errors = true,
            "--name" => {
                i += 1;
                let v = args.get(i).ok_or("--name needs NAME@HOST")?;
                if !crate::interp::prims::actor_node::valid_node_name(v) {
                    return Err(format!(
                        "--name: invalid node name '{v}' (expected name@host, characters [A-Za-z0-9_.-])"
                    ));
                }
                o.name = Some(v.clone());
            }
            "--sname" => {
                i += 1;
                let v = args.get(i).ok_or("--sname needs NAME")?;
                #[cfg(feature = "dist")]
                let host = crate::dist::short_host();
                #[cfg(not(feature = "dist"))]
                let host = "localhost";
                let full = format!("{v}@{host}");
                if v.contains('@') || !crate::interp::prims::actor_node::valid_node_name(&full) {
                    return Err(format!(
                        "--sname: invalid node name '{v}' (characters [A-Za-z0-9_.-], no host)"
                    ));
                }
                o.name = Some(full);
            }
            "--net-tick" => {
                i += 1;
                let v = args.get(i).ok_or("--net-tick needs SECONDS")?;
                o.net_tick = match v.parse::<u64>() {
                    Ok(n) if (1..=86_400).contains(&n) => n,
                    _ => return Err(format!("--net-tick: expected seconds (1-86400), not {v}")),
                };
            }
            "--cookie-file" => {
                i += 1;
                o.cookie_file = Some(args.get(i).ok_or("--cookie-file needs PATH")?.clone());
            }
            "--dist-tls" => {
                i += 1;
                o.dist_tls = Some(args.get(i).ok_or("--dist-tls needs CONFIG")?.clone());
            }
            "--hidden" => o.hidden = true,
            "--serve" => o.serve = true,
            "--diagnostics" => {
                i += 1;
                let v = args.get(i).ok_or("--diagnostics needs CATEGORY=LEVEL")?;
                crate::check::CheckOptions::default()
                    .set_level_arg(v)
                    .map_err(|e| format!("--diagnostics {v}: {e}"))?;
                o.levels.push(v.clone());
            }
            a if a.starts_with("--") => return Err(format!("unknown option {a}")),
            a => {
                if o.file.is_empty() {
                    o.file = a.to_string();
                } else {
                    // Arguments after the file without `--` are passed through too.
                    o.args.push(a.to_string());
                }
            }
        }
        i += 1;
    }
    if o.file.is_empty() {
        return Err("no FILE given".into());
    }
    if o.name.is_none() {
        let flag = [
            (o.hidden, "--hidden"),
            (o.serve, "--serve"),
            (o.net_tick != 0, "--net-tick"),
            (o.cookie_file.is_some(), "--cookie-file"),
            (o.dist_tls.is_some(), "--dist-tls"),
        ]
        .into_iter()
        .find_map(|(on, f)| on.then_some(f));
        if let Some(flag) = flag {
            return Err(format!("{flag} needs --name NAME@HOST"));
        }
    }
    Ok(o)
}

fn report(e: &BtError, err: &mut dyn Write) -> i32 {
    if let Some(code) = e.exit_code() {
        return code;
    }
    let _ = writeln!(err, "{}", e.report_with_location());
    1
}

/// Runs `bt run ARGS`; answers the process exit status.
pub(crate) fn main(args: &[String]) -> i32 {
    run(args, None, &mut std::io::stderr())
}

/// `bt run` with its diagnostics written to `err`; with `out`, program output is captured
/// there instead of going to standard output (tests).
pub(crate) fn run(
    args: &[String],
    out: Option<crate::interp::program::OutputSink>,
    err: &mut dyn Write,
) -> i32 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(m) => {
            let _ = writeln!(err, "bt run: {m}\n{USAGE}");
            return 2;
        }
    };
    let src = match std::fs::read_to_string(&o.file) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "bt run: cannot read {}: {e}", o.file);
            return 2;
        }
    };
    let check_options = match crate::check::manifest::options_for(
        std::path::Path::new(&o.file),
        o.warnings_as_errors,
        &o.levels,
    ) {
        Ok(c) => c,
        Err(m) => {
            let _ = writeln!(err, "bt run: {m}");
            return 2;
        }
    };
    let vm = Interpreter::new(InterpreterOptions {
        max_depth: o.max_depth,
        check: o.check,
        ..InterpreterOptions::default()
    });
    vm.set_check_options(check_options);
    // `--name`: become a node before any statement runs (the guard unregisters on return).
    #[cfg(feature = "dist")]
    let _node = match &o.name {
        None => None,
        Some(name) => {
            let opts = crate::dist::Options {
                name: name.clone(),
                hidden: o.hidden,
                net_tick: o.net_tick,
                cookie_file: o.cookie_file.as_ref().map(std::path::PathBuf::from),
                tls: o.dist_tls.as_ref().map(std::path::PathBuf::from),
            };
            match crate::dist::start(opts) {
                Ok(n) => {
                    let _ = vm.prog.dist.set(n.clone());
                    vm.run(|ctx, _| crate::dist::peer::install(ctx));
                    Some(crate::dist::NodeGuard(n))
                }
                Err(m) => {
                    let _ = writeln!(err, "bt run: {m}");
                    return 2;
                }
            }
        }
    };
    #[cfg(not(feature = "dist"))]
    if o.name.is_some() || o.hidden {
        let _ = writeln!(
            err,
            "bt run: --name: built without distribution (cargo feature `dist`)"
        );
        return 2;
    }
    if let Some(sink) = out {
        vm.set_output(sink);
    }
    vm.set_args(&o.file, o.args.clone());
    // `--observe ADDR`: serve the live page and `GET /runtime/processes` (7.5) while it runs.
    #[cfg(not(feature = "observe"))]
    if o.observe.is_some() {
        let _ = writeln!(
            err,
            "bt run: --observe: built without the observer (cargo feature `observe`)"
        );
        return 2;
    }
    #[cfg(feature = "observe")]
    let _observer = match &o.observe {
        None => None,
        Some(addr) => {
            let source =
                std::sync::Arc::new(crate::observe::SupervisionSource::new(vm.supervision()));
            let cfg = crate::observe::ObserveConfig::default();
            match crate::observe::ObserveServer::start(addr, source, cfg) {
                Ok(s) => {
                    eprintln!("observing on http://{}/", s.local_addr());
                    Some(s)
                }
                Err(e) => {
                    eprintln!("bt run: cannot serve --observe {addr}: {e}");
                    return 2;
                }
            }
        }
    };
    let rep = vm.load_unit(&[(o.file.clone(), src)]);
    for f in &rep.findings {
        let _ = write!(err, "{f}");
    }
    if let Some(e) = &rep.error {
        if e.is_compile() {
            for (_, w) in &rep.warnings {
                let _ = writeln!(err, "{}", w.trim_end());
            }
            return 1;
        }
        return report(e, err);
    }
    if !rep.warnings.is_empty() {
        for (_, w) in &rep.warnings {
            let _ = writeln!(err, "{}", w.trim_end());
        }
        return 1;
    }
    if let Some(cls) = &o.main {
        let list = Value::list(o.args.iter().map(|a| Value::str(a.clone())));
        if let Err(e) = vm.send_to_class(cls, "main:", vec![list]) {
            return report(&e, err);
        }
    }
    if o.serve {
        // A serving node answers connections until it is killed (8.1).
        let _ = err.flush();
        loop {
            std::thread::park();
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Runs `src` as a file with extra arguments; answers (status, stdout, stderr).
    fn run_src(name: &str, src: &str, extra: &[&str]) -> (i32, String, String) {
        let dir = std::env::temp_dir().join(format!("bt-run-test-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.bt"));
        std::fs::write(&path, src).unwrap();
        let mut args = vec![path.display().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = Arc::new(Mutex::new(String::new()));
        let o2 = out.clone();
        let mut err = Vec::new();
        let code = run(
            &args,
            Some(Box::new(move |s: &str| o2.lock().unwrap().push_str(s))),
            &mut err,
        );
        let stdout = out.lock().unwrap().clone();
        (
            code,
            stdout,
            String::from_utf8_lossy(&err).replace(&format!("{}", path.display()), "FILE"),
        )
    }

    #[test]
    fn uncaught_error_reports_location_kind_and_hint() {
        let (code, out, err) = run_src(
            "arith",
            "x := 1\nTranscript showCr: \"before\"\n1 / 0\n",
            &[],
        );
        assert_eq!(code, 1);
        assert_eq!(out, "before\n");
        assert_eq!(
            err,
            "FILE:3:1: TypeError (type_error): bad arithmetic operation\nHint: Arithmetic requires numbers; check for a non-numeric operand or division by zero.\n"
        );
    }

    #[test]
    fn innermost_send_is_the_location() {
        let src = "Object subclass: A\n  boom => nil foo\n\nA new boom\n";
        let (code, _, err) = run_src("dnu", src, &[]);
        assert_eq!(code, 1);
        assert!(err.contains("FILE:2:11: RuntimeError (does_not_understand): UndefinedObject does not understand 'foo'\n"), "{err}");
    }

    #[test]
    fn main_class_gets_the_arguments() {
        let src = "Object subclass: Greeter\n  class main: args => Transcript showCr: \"Hello, {args first}! {System arguments size}\"\n";
        let (code, out, err) = run_src("main", src, &["--main", "Greeter", "--", "Alice", "x"]);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "Hello, Alice! 2\n", "")
        );
    }

    #[test]
    fn program_exit_sets_the_status() {
        let (code, out, _) = run_src(
            "exit",
            "Transcript showCr: 1\nProgram exit: 3\nTranscript showCr: 2\n",
            &[],
        );
        assert_eq!((code, out.as_str()), (3, "1\n"));
        let (code, _, _) = run_src("exit0", "Program exit\n", &[]);
        assert_eq!(code, 0);
        let (code, _, err) = run_src("exitbad", "Program exit: 300\n", &[]);
        assert_eq!(code, 1);
        assert!(err.contains("type_error"), "{err}");
    }

    #[test]
    fn compile_errors_stop_the_run() {
        let (code, out, err) = run_src("compile", "Transcript showCr: 1\nx := y + 1\n", &[]);
        assert_eq!(code, 1);
        assert_eq!(out, "");
        assert!(err.contains("Undefined variable: y"), "{err}");
    }

    #[test]
    fn statements_run_after_all_declarations() {
        let src = "Transcript showCr: B new hi\nA subclass: B\n  hi => \"hi from B\"\nObject subclass: A\n";
        let (code, out, err) = run_src("order", src, &[]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "hi from B\n", ""));
    }

    #[test]
    fn usage_errors() {
        let mut err = Vec::new();
        assert_eq!(run(&[], None, &mut err), 2);
        assert_eq!(run(&["--max-depth".into()], None, &mut err), 2);
        assert_eq!(
            run(&["f.bt".into(), "--diagnostics".into()], None, &mut err),
            2
        );
        let bad = ["f.bt".into(), "--diagnostics".into(), "dnu=loud".into()];
        assert_eq!(run(&bad, None, &mut err), 2);
        let bad = ["f.bt".into(), "--diagnostics".into(), "colour=off".into()];
        assert_eq!(run(&bad, None, &mut err), 2);
        assert!(String::from_utf8_lossy(&err).contains("unknown diagnostic category 'colour'"));
    }

    const WARNS: &str = "Transcript showCr: 1\nx := [3 + \"a\"] on: Error do: [:e | e kind]\nTranscript showCr: x printString\n";

    #[test]
    fn checker_error_stops_before_any_statement() {
        let src = "Transcript showCr: 1\n(3 > 4) matchExhaustive: [x :: True -> 1]\n";
        let (code, out, err) = run_src("refused", src, &[]);
        assert_eq!((code, out.as_str()), (1, ""));
        assert!(
            err.starts_with("FILE:2:1: error: matchExhaustive: is not provably exhaustive"),
            "{err}"
        );
        // `--no-check` runs it (and the run-time error is the match failure).
        let (code, out, _) = run_src("refused2", src, &["--no-check"]);
        assert_eq!((code, out.as_str()), (1, "1\n"));
    }

    #[test]
    fn checker_warnings_go_to_stderr_and_the_file_runs() {
        let (code, out, err) = run_src("warns", WARNS, &[]);
        assert_eq!((code, out.as_str()), (0, "1\n#type_error\n"));
        assert!(err.contains("warning: Argument 1 of '+'"), "{err}");
        let (code, out, err) = run_src("warns2", WARNS, &["--warnings-as-errors"]);
        assert_eq!((code, out.as_str()), (1, ""));
        assert!(err.contains("error: Argument 1 of '+'"), "{err}");
        let (code, out, err) = run_src("warns3", WARNS, &["--diagnostics", "type=off"]);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "1\n#type_error\n", "")
        );
        let (code, _, err) = run_src("warns4", WARNS, &["--diagnostics", "type=error"]);
        assert_eq!(code, 1);
        assert!(err.contains("error: Argument 1 of '+'"), "{err}");
    }

    #[test]
    fn bt_toml_sets_levels_and_flags_override_it() {
        let dir = std::env::temp_dir().join(format!("bt-run-toml-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("bt.toml"),
            "[package]\nname = \"p\"\n[diagnostics]\ntype = \"off\"\n",
        )
        .unwrap();
        let file = dir.join("src/main.bt");
        std::fs::write(&file, WARNS).unwrap();
        let run1 = |extra: &[&str]| {
            let mut args = vec![file.display().to_string()];
            args.extend(extra.iter().map(|s| s.to_string()));
            let mut err = Vec::new();
            let code = run(&args, Some(Box::new(|_: &str| {})), &mut err);
            (code, String::from_utf8_lossy(&err).into_owned())
        };
        assert_eq!(run1(&[]), (0, String::new()));
        let (code, err) = run1(&["--diagnostics", "type=error"]);
        assert_eq!(code, 1);
        assert!(err.contains("error: Argument 1 of '+'"), "{err}");
        std::fs::write(dir.join("bt.toml"), "[diagnostics]\ntype = \"loud\"\n").unwrap();
        let (code, err) = run1(&[]);
        assert_eq!(code, 2);
        assert!(err.contains("bt.toml: unknown level"), "{err}");
    }
}
