//! The embedding examples run as tests: `examples/embed_config.rs` and
//! `examples/embed_automation.rs`, built by `cargo test` next to the test binaries.

use std::path::PathBuf;
use std::process::Command;

/// The example binary `name` of this build (`target/<profile>/examples/<name>`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    dir.join("examples").join(name)
}

fn run(name: &str) -> String {
    let out = Command::new(example(name))
        .env_remove("APP_DB_URL")
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e} (built by `cargo test`?)"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{name} failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn embed_config_loads_a_typed_config_and_renders_errors_with_spans() {
    let out = run("embed_config");
    // The good config became the struct.
    assert!(out.contains("name: \"billing\""), "{out}");
    assert!(out.contains("port: 8080"), "{out}");
    assert!(out.contains("workers: 8"), "{out}");
    assert!(
        out.contains("url: \"postgres://localhost/billing\""),
        "{out}"
    );
    // A validation error points at the line that set the port, with the hint as help.
    assert!(
        out.contains(
            "log: Error (invalid_config): port 65800 is out of range at $DIR/bad_value.bt:4:"
        ),
        "{out}"
    );
    assert!(out.contains("#port => Check port: base + 800,"), "{out}");
    assert!(out.contains("a port is between 1 and 65535"), "{out}");
    // A checker error names the code and underlines the unknown name.
    assert!(out.contains("E0201"), "{out}");
    assert!(out.contains("#port => prot + 1,"), "{out}");
    // A conversion error names the field path.
    assert!(out.contains("expected u32 at {#db}{#pool}"), "{out}");
}

#[test]
fn embed_automation_runs_supervised_rules_under_limits() {
    let out = run("embed_automation");
    assert!(out.contains("tick 1: boiler 71.5"), "{out}");
    assert!(out.contains("tick 2: boiler 93.0"), "{out}");
    assert!(out.contains("unknown sensor: not_found"), "{out}");
    assert!(out.contains("runaway rule: reduction_limit"), "{out}");
    assert!(out.contains("restarted watcher, checks so far: 0"), "{out}");
    assert!(out.contains("hoarding rule: memory_limit"), "{out}");
    assert!(out.contains("tank 40.0"), "{out}");
    assert!(out.contains("alerts: [\"boiler at 93\"]"), "{out}");
    assert!(out.contains("memory in use under the limit: true"), "{out}");
}
