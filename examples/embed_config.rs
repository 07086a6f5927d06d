//! A typed application config loaded from a `.bt` file: the host registers typed
//! validators, evaluates the file under limits with no capabilities, converts the result
//! to a Rust struct with serde, and renders every kind of error with miette — a checker
//! error, a validation error raised at the line that set the value, a conversion error
//! naming the field.
//!
//!   cargo run --example embed_config [CONFIG.bt]
//!
//! Without an argument it writes sample configs to a temporary directory and loads those.

use std::time::Duration;

use bt::{Engine, EngineError, HostError};

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)] // the fields are what the example prints
struct AppConfig {
    name: String,
    port: u16,
    workers: u32,
    tags: Vec<String>,
    db: Db,
}

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Db {
    url: String,
    pool: u32,
}

const GOOD: &str = r#"// The application's settings: the last expression is the config.
base := 8000
#{
  #name => "billing",
  #port => Check port: base + 80,
  #workers => Check atLeast: 1 value: 2 * 4,
  #tags => #("eu", "prod"),
  #db => #{#url => Env get: "DB_URL" default: "postgres://localhost/billing", #pool => 16}
}
"#;

const BAD_VALUE: &str = r#"base := 65000
#{
  #name => "billing",
  #port => Check port: base + 800,
  #workers => 4,
  #tags => #(),
  #db => #{#url => "x", #pool => 1}
}
"#;

const BAD_NAME: &str = r#"#{
  #name => "billing",
  #port => prot + 1,
}
"#;

const BAD_SHAPE: &str = r#"#{
  #name => "billing",
  #port => 8080,
  #workers => 2,
  #tags => #("eu"),
  #db => #{#url => "postgres://db", #pool => "sixteen"}
}
"#;

/// An engine for configs: limits, no capabilities, two typed validators and an
/// environment lookup the host controls.
fn config_engine() -> Engine {
    let engine = Engine::builder()
        .max_reductions(1_000_000)
        .timeout(Duration::from_secs(2))
        .build();
    engine
        .register_fn("Check", "port:", |p: i64| -> Result<i64, HostError> {
            if (1..=65535).contains(&p) {
                Ok(p)
            } else {
                Err(
                    HostError::new("invalid_config", format!("port {p} is out of range"))
                        .with_hint("a port is between 1 and 65535"),
                )
            }
        })
        .expect("register Check port:");
    engine
        .register_fn(
            "Check",
            "atLeast:value:",
            |min: i64, v: i64| -> Result<i64, HostError> {
                if v >= min {
                    Ok(v)
                } else {
                    Err(HostError::new(
                        "invalid_config",
                        format!("{v} is below {min}"),
                    ))
                }
            },
        )
        .expect("register Check atLeast:value:");
    engine
        .register_fn("Env", "get:default:", |name: String, default: String| {
            // The host decides what scripts see of its environment.
            if name == "DB_URL" {
                std::env::var("APP_DB_URL").unwrap_or(default)
            } else {
                default
            }
        })
        .expect("register Env get:default:");
    engine
}

/// Loads one config file into an `AppConfig`.
fn load(path: &std::path::Path) -> Result<AppConfig, EngineError> {
    let engine = config_engine();
    let v = engine.eval_file(path)?;
    bt::to_rust(&v).map_err(|e| {
        // `bt::to_rust` names where the value did not fit (`{#db}{#pool}`).
        EngineError::from(e)
    })
}

/// Renders an error as a host shows it to a user: miette's graphical report, no colour.
fn render(e: EngineError) -> String {
    let mut out = String::new();
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(90);
    match handler.render_report(&mut out, &e) {
        Ok(()) => out,
        Err(_) => e.to_string(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(path) = args.first() {
        match load(std::path::Path::new(path)) {
            Ok(cfg) => println!("{cfg:#?}"),
            Err(e) => {
                eprint!("{}", render(e));
                std::process::exit(1);
            }
        }
        return;
    }
    let dir = std::env::temp_dir().join(format!("bt-embed-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (name, src) in [
        ("app.bt", GOOD),
        ("bad_value.bt", BAD_VALUE),
        ("bad_name.bt", BAD_NAME),
        ("bad_shape.bt", BAD_SHAPE),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, src).expect("write config");
        println!("== {name}");
        match load(&path) {
            Ok(cfg) => println!("{cfg:#?}"),
            Err(e) => {
                // One line for logs, the full report for people.
                println!(
                    "log: {}",
                    e.to_string().replace(&dir.display().to_string(), "$DIR")
                );
                print!("{}", render(e).replace(&dir.display().to_string(), "$DIR"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
