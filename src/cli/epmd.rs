//! `bt epmd [--port N] [-names | -kill]`: runs the EPMD-compatible port
//! mapper (`crate::dist::epmd_server`) on 127.0.0.1 — the port is `--port`, else
//! `ERL_EPMD_PORT`, else 4369 — or, like `epmd -names` / `epmd -kill`, asks the one running
//! there for its registered names or to stop. A named node starts `bt epmd` itself when no
//! port mapper answers.

const USAGE: &str = "usage: bt epmd [--port N] [-names | -kill]";

pub(crate) fn main(args: &[String]) -> i32 {
    let mut port = crate::dist::epmd::port();
    let mut action = "serve";
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" | "-port" => {
                i += 1;
                match args.get(i).and_then(|v| v.parse::<u16>().ok()) {
                    Some(p) => port = p,
                    None => {
                        eprintln!("bt epmd: --port needs a port number\n{USAGE}");
                        return 2;
                    }
                }
            }
            "-names" | "--names" => action = "names",
            "-kill" | "--kill" => action = "kill",
            other => {
                eprintln!("bt epmd: unknown option {other}\n{USAGE}");
                return 2;
            }
        }
        i += 1;
    }
    let r = match action {
        "serve" => crate::dist::epmd_server::run(port),
        "names" => crate::dist::epmd::names(port).map(|v| {
            println!("epmd: up and running on port {port} with data:");
            for (n, p) in v {
                println!("name {n} at port {p}");
            }
        }),
        _ => crate::dist::epmd::kill(port).map(|_| println!("Killed")),
    };
    match r {
        Ok(()) => 0,
        Err(m) => {
            eprintln!("{m}");
            1
        }
    }
}
