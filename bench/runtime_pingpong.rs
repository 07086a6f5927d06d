//! Sync round trips between two processes: the main program calls a counter actor
//! (`add: 1`) N times, like the Erlang gen_server peer benchmark (pingpong).
//!
//! `cargo run --profile dist --features bench --example runtime_pingpong [N]` prints, per worker count, RESULT,
//! TIME (s, measured inside the process) and RATE (round trips/s), plus round trips per CPU
//! second of the whole process.

use std::time::Instant;

use bt::runtime::{Behaviour, Config, Cx, Message, Runtime, Timeout};
use bt::value::{Sym, Value};

struct Counter(i64);

impl Behaviour for Counter {
    fn handle(&mut self, _cx: &mut Cx<'_>, m: Message) -> Result<Value, Value> {
        self.0 += m.args[0].as_int().unwrap_or(0);
        Ok(Value::Int(self.0))
    }
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat: on a shared,
/// loaded machine, work per CPU-second is steadier than work per wall-second.
fn cpu_secs() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields 14 and 15 of the file (utime, stime) are 12 and 13 after the command name.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

fn run(workers: usize, n: i64) {
    let rt = Runtime::new(Config {
        workers,
        ..Config::default()
    })
    .expect("runtime");
    let counter = rt.spawn(Counter(0));
    let add = Sym::new("add:");
    let cpu0 = cpu_secs();
    let (result, secs) = rt
        .block_on(move |cx| {
            let t = Instant::now();
            let mut last = Value::Nil;
            for _ in 0..n {
                let m = Message::new(add, vec![Value::Int(1)]);
                last = cx.call(&counter, m, Timeout::DEFAULT).expect("reply");
            }
            (last.as_int().unwrap_or(-1), t.elapsed().as_secs_f64())
        })
        .expect("main");
    let cpu = cpu_secs() - cpu0;
    println!(
        "workers={workers} RESULT {result} TIME {secs:.4} RATE {:.0} (cpu {cpu:.2} s => {:.0} per cpu-second)",
        n as f64 / secs,
        n as f64 / cpu.max(0.01)
    );
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let cores = std::thread::available_parallelism().map_or(2, |c| c.get());
    for _ in 0..3 {
        run(1, n);
        run(cores, n);
    }
}
