//! A host application running supervised automation actors: rules written in bt
//! run in actors under a supervisor, read sensors and raise alerts through typed host
//! functions, and run under limits — a runaway rule crashes its actor with
//! `reduction_limit`, a hoarding one with `memory_limit`, the supervisor restarts it, and
//! the host keeps going. Scripts get no
//! capability but timers (no files, console input or network).
//!
//!   cargo run --example embed_automation

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bt::engine::Capability;
use bt::{Engine, HostError};

// The memory limit needs the counting allocator (see `bt::memory`).
#[global_allocator]
static ALLOC: bt::CountingAlloc = bt::CountingAlloc::system();

const RULES: &str = r#"
/// Watches one sensor; raises an alert above its threshold.
Actor subclass: Watcher
  state: checks = 0
  class supervisionPolicy => #permanent
  check: sensor above: limit =>
    self.checks := self.checks + 1
    v := Sensors read: sensor
    v > limit ifTrue: [Alerts raise: sensor value: v]
    v
  checks => self.checks
  // A rule with a bug: loops for ever. The engine's per-actor budget stops it.
  runaway => [true] whileTrue: [self.checks := self.checks + 1]
  // Another bug: keeps every reading it ever made. The per-actor memory limit stops it.
  hoard => l := #(). [true] whileTrue: [l := l add: ("reading" repeat: 100000)]

Supervisor subclass: Plant
  class children => #(Watcher)
  class strategy => #oneForOne
"#;

fn main() {
    let readings: Arc<Mutex<HashMap<String, f64>>> = Arc::new(Mutex::new(HashMap::from([
        ("boiler".to_string(), 71.5),
        ("tank".to_string(), 40.0),
    ])));
    let alerts: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));

    let engine = Engine::builder()
        .max_reductions(2_000_000) // each host call into the scripts
        .actor_max_reductions(200_000) // each message a rule handles
        .timeout(Duration::from_secs(5))
        .max_memory(64 << 20)
        .actor_max_memory(4 << 20) // the memory each rule actor may hold
        .grant(Capability::Timers)
        .try_build()
        .expect("engine");

    let r = readings.clone();
    engine
        .register_fn(
            "Sensors",
            "read:",
            move |name: String| -> Result<f64, HostError> {
                r.lock()
                    .map_err(|_| HostError::new("host_error", "sensor table poisoned"))?
                    .get(&name)
                    .copied()
                    .ok_or_else(|| HostError::new("not_found", format!("no sensor {name:?}")))
            },
        )
        .expect("Sensors read:");
    let a = alerts.clone();
    engine
        .register_fn("Alerts", "raise:value:", move |sensor: String, v: f64| {
            if let Ok(mut a) = a.lock() {
                a.push(format!("{sensor} at {v}"));
            }
        })
        .expect("Alerts raise:value:");

    engine.eval_named("rules.bt", RULES).expect("rules load");
    engine
        .eval("plant := Plant supervise unwrap. w := (plant which: Watcher) unwrap")
        .expect("plant starts");

    // The host drives the rules: one round per "tick".
    for (tick, boiler) in [(1, 71.5), (2, 93.0), (3, 88.0)] {
        readings.lock().unwrap().insert("boiler".into(), boiler);
        let v = engine.eval("w check: \"boiler\" above: 90").expect("check");
        println!("tick {tick}: boiler {}", engine.display(&v));
    }
    let missing = engine.eval("w check: \"pump\" above: 1").unwrap_err();
    println!("unknown sensor: {}", missing.kind);

    // A runaway rule: the actor crashes into its supervisor, which restarts it.
    let e = engine.eval("w runaway").unwrap_err();
    println!("runaway rule: {} ({})", e.kind, e.class_name);
    let restarted = engine
        .eval(
            "[((plant which: Watcher) unwrap ifNil: [w]) =:= w] whileTrue: [Timer sleep: 1]. \
             w := (plant which: Watcher) unwrap. w checks",
        )
        .expect("restarted");
    println!(
        "restarted watcher, checks so far: {}",
        engine.display(&restarted)
    );
    // A rule that hoards memory: the same, with `memory_limit`.
    let e = engine.eval("w hoard").unwrap_err();
    println!("hoarding rule: {} ({})", e.kind, e.class_name);
    engine
        .eval(
            "[((plant which: Watcher) unwrap ifNil: [w]) =:= w] whileTrue: [Timer sleep: 1]. \
             w := (plant which: Watcher) unwrap",
        )
        .expect("restarted");
    let v = engine.eval("w check: \"tank\" above: 50").expect("check");
    println!("tank {}", engine.display(&v));

    println!("alerts: {:?}", alerts.lock().unwrap());
    println!(
        "memory in use under the limit: {}",
        engine.memory_used().is_some_and(|m| m < 64 << 20)
    );
    engine.shutdown();
}
