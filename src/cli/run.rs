//! `bt run FILE [--main Class] [--max-depth N] [--no-check] [-- ARGS...]` (LANGUAGE.md 3.5).
//!
//! Loads the file as one unit and runs its statements; with `--main Class` then sends
//! `main:` with the argument List. An uncaught error prints
//! `FILE:LINE:COL: ClassName (kind): message` (and `Hint: …`) to stderr and exits 1;
//! `Program exit: n` exits with n.

use bt_run_support::*;

mod bt_run_support {
    pub use crate::interp::value::Value;
    pub use crate::interp::{BtError, Vm, VmOptions};
}

const USAGE: &str =
    "usage: bt run FILE [--main Class] [--max-depth N] [--no-check] [--observe ADDR] [-- ARGS...]";

struct Opts {
    file: String,
    main: Option<String>,
    max_depth: usize,
    check: bool,
    observe: Option<String>,
    args: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        file: String::new(),
        main: None,
        max_depth: 10_000,
        check: true,
        observe: None,
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
            "--warnings-as-errors" => {}
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
    Ok(o)
}

fn report(e: &BtError) -> i32 {
    if let Some(code) = e.exit_code() {
        return code;
    }
    eprintln!("{}", e.report_with_location());
    1
}

/// Runs `bt run ARGS`; answers the process exit status.
pub fn main(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(m) => {
            eprintln!("bt run: {m}\n{USAGE}");
            return 2;
        }
    };
    let src = match std::fs::read_to_string(&o.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bt run: cannot read {}: {e}", o.file);
            return 2;
        }
    };
    let vm = Vm::new(VmOptions {
        max_depth: o.max_depth,
        check: o.check,
        ..VmOptions::default()
    });
    vm.set_args(&o.file, o.args.clone());
    // `--observe ADDR`: serve `GET /runtime/processes` (7.5) while the script runs.
    let _observer = match &o.observe {
        None => None,
        Some(addr) => {
            let sup = vm.supervision();
            let source = std::sync::Arc::new(move || {
                let opts = crate::runtime::snapshot::SnapOptions::default();
                crate::runtime::snapshot::default_snapshot(&sup, &opts).to_json()
            });
            match crate::runtime::observe::ObserveServer::start(addr, source) {
                Ok(s) => {
                    eprintln!("observing on http://{}/runtime/processes", s.local_addr());
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
        eprint!("{f}");
    }
    if let Some(e) = &rep.error {
        return report(e);
    }
    if !rep.warnings.is_empty() {
        for (_, w) in &rep.warnings {
            eprint!("{w}");
            if !w.ends_with('\n') {
                eprintln!();
            }
        }
        return 1;
    }
    if let Some(cls) = &o.main {
        let list = Value::list(o.args.iter().map(|a| Value::str(a.clone())));
        if let Err(e) = vm.send_to_class(cls, "main:", vec![list]) {
            return report(&e);
        }
    }
    0
}
