//! `bt run FILE [--main Class] [--max-depth N] [--max-memory SIZE] [--no-check] [--warnings-as-errors]
//! [--diagnostics CATEGORY=LEVEL]... [--observe ADDR [--observe-tls CONFIG]]
//! [--name NAME@HOST | --sname NAME]
//! [--hidden] [--serve] [--net-tick SECONDS] [--cookie-file PATH] [--dist-tls CONFIG]
//! [--erlang-peer NODE] [-- ARGS...]`.
//!
//! `--name` (or `--sname`, host = this host's short name) makes the process an Erlang
//! distribution node (`crate::dist`) before any statement runs; `--hidden` makes it a hidden
//! node; `--serve` keeps it answering connections after its statements (and `--main`)
//! finish, until it is killed; `--net-tick` sets the tick time (default 60 s);
//! `--cookie-file` names the cookie file (`BT_COOKIE` still wins); `--dist-tls` runs TLS
//! distribution with the given configuration (`crate::dist::tls`). `--erlang-peer NODE`
//! forwards `Erlang` calls bt does not implement to that Erlang node (`prims::erlang`); alone
//! it makes the process a hidden node `bt_PID@PEERHOST` first.
//!
//! The static checker runs first (unless `--no-check`): its errors stop the file before any
//! statement runs and are printed rendered; its warnings and hints go to stderr. Category
//! levels come from the nearest `bt.toml`'s `[diagnostics]` table, then `--diagnostics`.
//!
//! Loads the file as one unit and runs its statements; with `--main Class` then sends
//! `main:` with the argument List. An uncaught error prints
//! `FILE:LINE:COL: ClassName (kind): message` (and `Hint: …`) to stderr and exits 1;
//! `Program exit: n` exits with n.

use std::io::{Read, Write};

use crate::cli::max_memory::MaxMemory;
use crate::interp::{BtError, Interpreter, InterpreterOptions};
use crate::value::Value;

/// `bt run` arguments. The usage line says a program is required: a FILE, `-` or `-e TEXT`
/// (clap would show the optional `[FILE]` of the field).
#[derive(clap::Args, Debug, Clone, Default)]
#[command(
    after_help = crate::cli::common::EXIT_CODES,
    override_usage = "bt run [OPTIONS] <FILE | - | -e TEXT> [ARGS]..."
)]
pub(crate) struct RunArgs {
    /// The program file; `-` reads the program from standard input
    #[arg(value_name = "FILE", required_unless_present = "eval")]
    pub(crate) file: Option<String>,
    /// Arguments for the program (`System arguments`, and `main:` with --main); put them
    /// after `--` when one starts with `-`
    #[arg(value_name = "ARGS")]
    pub(crate) args: Vec<String>,
    /// Run EXPR (statements and declarations, like a file) instead of a file
    #[arg(short = 'e', long = "eval", value_name = "EXPR")]
    pub(crate) eval: Option<String>,
    /// After the statements, send `main:` with the argument List to CLASS
    #[arg(long, value_name = "CLASS")]
    pub(crate) main: Option<String>,
    /// Deepest call nesting before a stack_overflow error
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = positive)]
    pub(crate) max_depth: usize,
    /// The most memory the program may hold, like 512M or 2G (default: 3/4 of the machine's
    /// or cgroup's memory; also BT_MAX_MEMORY); past it the program ends with memory_limit
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::max_memory::parse_size)]
    pub(crate) max_memory: Option<usize>,
    #[command(flatten)]
    pub(crate) check: crate::cli::common::CheckFlags,
    #[command(flatten)]
    pub(crate) sandbox: Sandbox,
    /// Serve the process snapshot as JSON at http://ADDR/runtime/processes while running
    #[arg(long, value_name = "ADDR")]
    pub(crate) observe: Option<String>,
    /// Serve --observe over HTTPS with the certificate in CONFIG (any address, not only loopback)
    #[arg(long, value_name = "CONFIG", requires = "observe")]
    pub(crate) observe_tls: Option<String>,
    /// Run as a distribution node named NAME@HOST
    #[arg(long, value_name = "NAME@HOST", value_parser = node_name)]
    pub(crate) name: Option<String>,
    /// Run as a distribution node named NAME@THIS-HOST (short host name)
    #[arg(long, value_name = "NAME", value_parser = short_name, conflicts_with = "name")]
    pub(crate) sname: Option<String>,
    /// Seconds between distribution heartbeats (1-86400; needs --name)
    #[arg(long, value_name = "SECONDS", value_parser = net_tick)]
    pub(crate) net_tick: Option<u64>,
    /// Read the cluster cookie from PATH (needs --name)
    #[arg(long, value_name = "PATH")]
    pub(crate) cookie_file: Option<String>,
    /// TLS for distribution from CONFIG (needs --name)
    #[arg(long, value_name = "CONFIG")]
    pub(crate) dist_tls: Option<String>,
    /// Make the node hidden (needs --name)
    #[arg(long)]
    pub(crate) hidden: bool,
    /// Keep the node answering connections after the program ends (needs --name)
    #[arg(long)]
    pub(crate) serve: bool,
    /// Seed nodes to keep connected: connected at start, reconnected with backoff after a
    /// NodeDown (comma-separated NAME@HOST; also BT_CONNECT; needs --name)
    #[arg(long, value_name = "NODE,...", value_delimiter = ',', value_parser = node_name, env = "BT_CONNECT")]
    pub(crate) connect: Vec<String>,
    /// Forward `Erlang` calls bt has no native implementation of to this Erlang node by rpc
    /// (also BT_ERLANG_PEER); without --name the process becomes a hidden node first
    #[arg(long, value_name = "NAME@HOST", value_parser = node_name, env = "BT_ERLANG_PEER")]
    pub(crate) erlang_peer: Option<String>,
}

impl RunArgs {
    /// `bt run FILE ARGS…` with every flag at its default (clap's `default_value_t`s):
    /// `cli::plain_run`, held to clap's parse by `a_plain_run_is_parsed_as_by_clap`.
    pub(crate) fn plain(file: String, args: Vec<String>) -> RunArgs {
        RunArgs {
            file: Some(file),
            args,
            max_depth: 10_000,
            ..RunArgs::default()
        }
    }
}

/// `--sandbox` and the `--allow-*` flags that grant capabilities back (any of them turns the
/// sandbox on).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct Sandbox {
    /// Deny the program files, environment variables, host facts and the network; the
    /// --allow-* flags grant them back
    #[arg(long)]
    pub(crate) sandbox: bool,
    /// Let the program read inside these directories (or files); alone, everywhere
    #[arg(long, value_name = "PATH,...", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', action = clap::ArgAction::Append)]
    pub(crate) allow_read: Option<Vec<String>>,
    /// Let the program write inside these directories (or files); alone, everywhere
    #[arg(long, value_name = "PATH,...", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', action = clap::ArgAction::Append)]
    pub(crate) allow_write: Option<Vec<String>>,
    /// Let the program read these environment variables; alone, all of them
    #[arg(long, value_name = "NAME,...", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', action = clap::ArgAction::Append)]
    pub(crate) allow_env: Option<Vec<String>>,
    /// Let the program use the network and distribution (Node connect, --name)
    #[arg(long)]
    pub(crate) allow_net: bool,
    /// Let the program read host facts (System hostname, System pid)
    #[arg(long)]
    pub(crate) allow_sys: bool,
}

impl Sandbox {
    /// True when the program runs sandboxed.
    fn on(&self) -> bool {
        self.sandbox
            || self.allow_read.is_some()
            || self.allow_write.is_some()
            || self.allow_env.is_some()
            || self.allow_net
            || self.allow_sys
    }

    /// Puts the sandbox in force on `grants` (when it is on).
    fn apply(&self, grants: &crate::interp::capability::Grants) {
        use crate::interp::capability::Capability;
        if !self.on() {
            return;
        }
        grants.sandbox();
        let dirs = |v: &Option<Vec<String>>| -> Vec<std::path::PathBuf> {
            match v {
                None => Vec::new(),
                Some(list) if list.iter().all(|d| d.is_empty()) => vec!["/".into()],
                Some(list) => list
                    .iter()
                    .filter(|d| !d.is_empty())
                    .map(std::path::PathBuf::from)
                    .collect(),
            }
        };
        for d in dirs(&self.allow_read) {
            grants.allow_read(&d);
        }
        for d in dirs(&self.allow_write) {
            grants.allow_write(&d);
        }
        match &self.allow_env {
            Some(names) if names.iter().all(|n| n.is_empty()) => grants.grant(Capability::Env),
            Some(names) => names
                .iter()
                .filter(|n| !n.is_empty())
                .for_each(|n| grants.allow_env(n)),
            None => {}
        }
        if self.allow_net {
            grants.grant(Capability::Distribution);
        }
        if self.allow_sys {
            grants.grant(Capability::Sys);
        }
    }
}

/// A number of at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("not a number: {s}")),
    }
}

/// A valid node name.
fn node_name(v: &str) -> Result<String, String> {
    if crate::interp::distribution::valid_node_name(v) {
        Ok(v.to_string())
    } else {
        Err(format!(
            "invalid node name '{v}' (expected name@host, characters [A-Za-z0-9_.-])"
        ))
    }
}

/// `--sname NAME` → `NAME@shorthost`.
fn short_name(v: &str) -> Result<String, String> {
    #[cfg(feature = "dist")]
    let host = crate::dist::short_host();
    #[cfg(not(feature = "dist"))]
    let host = "localhost";
    let full = format!("{v}@{host}");
    if v.contains('@') || !crate::interp::distribution::valid_node_name(&full) {
        return Err(format!(
            "invalid node name '{v}' (characters [A-Za-z0-9_.-], no host)"
        ));
    }
    Ok(full)
}

/// The `[cluster]` table of the nearest `bt.toml` (of FILE; of the current directory for
/// `-e` and `-`) fills in what neither a flag nor the environment gave: `name`/`sname`,
/// `cookie_file` (relative to the manifest) and `connect` (flag > `BT_CONNECT` > bt.toml).
/// Errors name the manifest and the position of the bad value.
fn cluster_from_manifest(o: &mut RunArgs) -> Result<(), String> {
    let anchor = match (&o.eval, o.file.as_deref()) {
        (None, Some(f)) if f != "-" => std::path::PathBuf::from(f),
        _ => std::path::PathBuf::from("-"),
    };
    let Some((dir, m)) = crate::check::manifest::Manifest::nearest(&anchor)? else {
        return Ok(());
    };
    let c = &m.cluster;
    let at = |v: &crate::check::manifest::Spanned<String>, e: String| {
        let (line, col) = m.at(v.span().start);
        format!("{}:{line}:{col}: {e}", dir.join("bt.toml").display())
    };
    if o.name.is_none() && o.sname.is_none() {
        if let Some(n) = &c.name {
            o.name = Some(node_name(n.get_ref()).map_err(|e| at(n, e))?);
        } else if let Some(n) = &c.sname {
            o.name = Some(short_name(n.get_ref()).map_err(|e| at(n, e))?);
        }
    }
    if o.cookie_file.is_none() {
        if let Some(f) = &c.cookie_file {
            o.cookie_file = Some(dir.join(f.get_ref()).display().to_string());
        }
    }
    if o.connect.is_empty() {
        for n in &c.connect {
            o.connect
                .push(node_name(n.get_ref()).map_err(|e| at(n, e))?);
        }
    }
    Ok(())
}

/// `--net-tick SECONDS`.
fn net_tick(v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if (1..=86_400).contains(&n) => Ok(n),
        _ => Err(format!("expected seconds (1-86400), not {v}")),
    }
}

/// The program text and the path it is reported under.
fn program_source(o: &mut RunArgs) -> Result<(String, String), String> {
    if let Some(expr) = &o.eval {
        // With `-e`, every positional is a program argument.
        if let Some(f) = o.file.take() {
            o.args.insert(0, f);
        }
        return Ok(("-e".to_string(), expr.clone()));
    }
    match o.file.as_deref() {
        None => Err("no FILE given".into()),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(("<stdin>".to_string(), s))
        }
        Some(f) => std::fs::read_to_string(f)
            .map(|s| (f.to_string(), s))
            .map_err(|e| format!("cannot read {f}: {e}")),
    }
}

fn report(e: &BtError, limit: &MaxMemory, err: &mut dyn Write) -> i32 {
    if let Some(code) = e.exit_code() {
        return code;
    }
    let mut e = e.clone();
    crate::cli::max_memory::explain(&mut e, limit);
    let _ = writeln!(err, "{}", e.report_with_traceback());
    1
}

/// Runs `bt run`; answers the process exit status, which the process exits with next
/// (the interpreter of a program that left nothing running is left to that exit).
pub(crate) fn main(args: RunArgs) -> i32 {
    run_with(args, None, &mut std::io::stderr(), true)
}

/// `bt run` with parsed arguments. With `exit_next` (the process exits with the answer,
/// `main`), an interpreter whose program left no process but the main one is not shut
/// down: nothing would see its shutdown (no process to be told, no node, no observer),
/// and the process's exit ends its worker thread and frees its memory without the thread
/// being joined and every object freed one by one first (~0.1–0.2 ms of each short run).
fn run_with(
    mut o: RunArgs,
    out: Option<crate::interp::program::OutputSink>,
    err: &mut dyn Write,
    exit_next: bool,
) -> i32 {
    // The library classes nearly every program reaches are taken in on a second thread
    // while this one reads the manifest, the program and the limits and makes the
    // interpreter (which would start it otherwise, later).
    crate::interp::interpreter::prepare_library(!o.check.no_check);
    if let Err(m) = cluster_from_manifest(&mut o) {
        let _ = writeln!(err, "bt run: {m}");
        return 2;
    }
    if o.name.is_none() {
        o.name = o.sname.take();
    }
    // `--erlang-peer` alone: a hidden node named after this process, on the peer's host (so
    // short and long names match, as Erlang requires).
    if let (None, Some(peer)) = (&o.name, &o.erlang_peer) {
        let host = peer.split_once('@').map_or("localhost", |(_, h)| h);
        o.name = Some(format!("bt_{}@{host}", std::process::id()));
        o.hidden = true;
    }
    if o.name.is_none() {
        let flag = [
            (o.hidden, "--hidden"),
            (o.serve, "--serve"),
            (o.net_tick.is_some(), "--net-tick"),
            (o.cookie_file.is_some(), "--cookie-file"),
            (o.dist_tls.is_some(), "--dist-tls"),
            (!o.connect.is_empty(), "--connect"),
        ]
        .into_iter()
        .find_map(|(on, f)| on.then_some(f));
        if let Some(flag) = flag {
            let _ = writeln!(err, "bt run: {flag} needs --name NAME@HOST");
            return 2;
        }
    }
    if o.sandbox.on() && !o.sandbox.allow_net && o.name.is_some() {
        let _ = writeln!(
            err,
            "bt run: --name under --sandbox needs --allow-net (a node talks to the network)"
        );
        return 2;
    }
    let (path, src) = match program_source(&mut o) {
        Ok(p) => p,
        Err(m) => {
            let _ = writeln!(err, "bt run: {m}");
            return 2;
        }
    };
    let check_options = match crate::check::manifest::options_for(
        std::path::Path::new(&path),
        o.check.warnings_as_errors,
        &o.check.diagnostics,
    ) {
        Ok(c) => c,
        Err(m) => {
            let _ = writeln!(err, "bt run: {m}");
            return 2;
        }
    };
    if let Err(m) = crate::interp::interpreter::check_max_depth(o.max_depth, "--max-depth") {
        let _ = writeln!(err, "bt run: {m}");
        return 2;
    }
    let limit = match crate::cli::max_memory::resolve(o.max_memory) {
        Ok(l) => l,
        Err(m) => {
            let _ = writeln!(err, "bt run: {m}");
            return 2;
        }
    };
    let vm = Interpreter::new(InterpreterOptions {
        max_depth: o.max_depth,
        check: !o.check.no_check,
        ..InterpreterOptions::default()
    });
    vm.set_check_options(check_options);
    o.sandbox.apply(&vm.prog.capabilities);
    // The memory limit counts from here: the program's own memory, not the library's.
    crate::cli::max_memory::install(&vm, &limit, &path);
    // The program is one long job: run it beside its actors on the pool (see the method).
    vm.run_main_on_pool(true);
    // `--name`: become a node before any statement runs (the guard unregisters on return).
    #[cfg(feature = "dist")]
    let _node = match &o.name {
        None => None,
        Some(name) => {
            let opts = crate::dist::Options {
                name: name.clone(),
                hidden: o.hidden,
                net_tick: o.net_tick.unwrap_or(0),
                cookie_file: o.cookie_file.as_ref().map(std::path::PathBuf::from),
                tls: o.dist_tls.as_ref().map(std::path::PathBuf::from),
            };
            match crate::dist::start(opts) {
                Ok(n) => {
                    let _ = vm.prog.dist.set(n.clone());
                    if let Some(peer) = &o.erlang_peer {
                        let _ = vm.prog.erlang_peer.set(crate::value::Sym::new(peer));
                    }
                    let n2 = n.clone();
                    vm.run(move |ctx, _| crate::dist::service::install(ctx, &n2));
                    n.keep_connected(o.connect.clone());
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
    vm.set_args(&path, o.args.clone());
    // `--observe ADDR`: serve the live page and `GET /runtime/processes` while it runs.
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
            let tls = match o
                .observe_tls
                .as_deref()
                .map(|p| crate::observe::ObserveTls::load(std::path::Path::new(p)))
            {
                None => None,
                Some(Ok(t)) => Some(t),
                Some(Err(e)) => {
                    let _ = writeln!(err, "bt run: {e}");
                    return 2;
                }
            };
            let scheme = if tls.is_some() { "https" } else { "http" };
            match crate::observe::ObserveServer::start_with(addr, source, cfg, tls) {
                Ok(s) => {
                    eprintln!("observing on {scheme}://{}/", s.local_addr());
                    Some(s)
                }
                Err(e) => {
                    eprintln!("bt run: cannot serve --observe {addr}: {e}");
                    return 2;
                }
            }
        }
    };
    let code = run_program(&vm, &o, path, src, &limit, err);
    if exit_next && o.name.is_none() && o.observe.is_none() && vm.only_main_process_left() {
        std::mem::forget(vm);
    }
    code
}

/// Loads and runs the program `src` (file `path`) in `vm`, and its `--main` class;
/// answers the exit status.
fn run_program(
    vm: &Interpreter,
    o: &RunArgs,
    path: String,
    src: String,
    limit: &MaxMemory,
    err: &mut dyn Write,
) -> i32 {
    let rep = vm.load_unit(&[(path.clone(), src)]);
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
        return report(e, limit, err);
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
            return report(&e, limit, err);
        }
    }
    if o.serve {
        // A serving node answers connections until it is killed.
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

    /// `bt run ARGS` (arguments after `run`) with its diagnostics written to `err`; with `out`,
    /// program output is captured there instead of going to standard output (tests).
    fn run(
        args: &[String],
        out: Option<crate::interp::program::OutputSink>,
        err: &mut dyn Write,
    ) -> i32 {
        match crate::cli::parse_from(std::iter::once("run".to_string()).chain(args.iter().cloned()))
        {
            Ok(crate::cli::Cli {
                command: Some(crate::cli::Command::Run(a)),
            }) => run_with(a, out, err, false),
            Ok(_) => 2,
            Err(e) => {
                let _ = write!(err, "{}", e.render());
                e.exit_code()
            }
        }
    }

    /// Runs `src` as a file with extra arguments; answers (status, stdout, stderr).
    fn run_src(name: &str, src: &str, extra: &[&str]) -> (i32, String, String) {
        let dir = crate::scratch::dir(&format!("run-{name}"));
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
            "FILE:3:3: TypeError (type_error): bad arithmetic operation\n`1 / 0`: division by zero\n 3 │1 / 0\n   │  ^\nHint: Arithmetic requires numbers; check for a non-numeric operand or division by zero.\n"
        );
    }

    #[test]
    fn innermost_send_is_the_location() {
        let src = "Object subclass: A\n  boom => nil foo\n\nA new boom\n";
        let (code, _, err) = run_src("dnu", src, &[]);
        assert_eq!(code, 1);
        assert!(err.contains("FILE:2:15: RuntimeError (does_not_understand): UndefinedObject does not understand 'foo'\n"), "{err}");
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
        let dir = crate::scratch::dir("run-toml");
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
        assert!(err.contains("bt.toml:2:8: unknown level"), "{err}");
    }
}
