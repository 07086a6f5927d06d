//! Embedding bt in a Rust program: a configuration script that calls a host function, read
//! back from Rust, under limits.
//!
//! `cargo run --example embed`

use std::collections::HashMap;
use std::time::Duration;

use bt::{Engine, HostError, Value};

/// The configuration script (a `.bt` file in a real program: `engine.eval_file(path)`).
const CONFIG: &str = r#"
Value subclass: ServerConfig
  field: host = "127.0.0.1"
  field: port = 8080
  field: workers = 2
  field: tags = #()

  /// Reads overrides from the host's environment.
  class load =>
    port := (Env get: "PORT") ifNil: [8080] ifNotNil: [:p | p asInteger]
    workers := (Env cpus) * 2
    Transcript showCr: "config: port " ++ port printString
    ((ServerConfig new withPort: port) withWorkers: workers) withTags: #(#web, #api)

  address => self.host ++ ":" ++ self.port printString
"#;

fn main() {
    let env: HashMap<&str, &str> = [("PORT", "9090")].into_iter().collect();

    let engine = Engine::builder()
        .max_reductions(5_000_000)
        .timeout(Duration::from_secs(2))
        .build();

    // Host functions: class-side methods of `Env`, callable from the script.
    engine
        .register_fn("Env", "get:", move |args: &[Value]| {
            let key = args[0]
                .as_text()
                .ok_or_else(|| HostError::new("type_error", "Env get: expects a String"))?;
            Ok(env.get(key).map(|v| Value::str(*v)).unwrap_or(Value::Nil))
        })
        .expect("register Env get:");
    engine
        .register_fn("Env", "cpus", |_: &[Value]| Ok(Value::Int(4)))
        .expect("register Env cpus");

    if let Err(e) = engine.eval_named("config.bt", CONFIG) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let cfg = match engine.call("ServerConfig", "load", &[]) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    print!("{}", engine.take_output());
    let port = cfg.field("port").and_then(Value::as_i64).unwrap_or(0);
    let workers = cfg.field("workers").and_then(Value::as_i64).unwrap_or(0);
    let tags: Vec<String> = cfg
        .field("tags")
        .and_then(|t| t.elements())
        .map(|it| it.filter_map(|t| t.as_text().map(str::to_string)).collect())
        .unwrap_or_default();
    println!("port = {port}, workers = {workers}, tags = {tags:?}");
    println!(
        "printString: {}",
        engine.print_string(&cfg).unwrap_or_default()
    );
    engine.eval("cfg := ServerConfig load").expect("load");
    let addr = engine.eval("cfg address").expect("address");
    println!("address: {}", addr.as_str().unwrap_or("?"));
    engine.take_output();

    // A runaway script ends with a limit error instead of hanging the host.
    match engine.eval("[[true] whileTrue: []] on: Error do: [:e | 0]") {
        Ok(_) => println!("unexpected: the loop ended"),
        Err(e) => println!("stopped: {e}"),
    }
    // A script error is data: class, kind, message, hint, location.
    match engine.eval("Env get: 42") {
        Ok(_) => println!("unexpected: no error"),
        Err(e) => println!("error: {e}"),
    }
}
