//! Fan-out and idle memory, like the Erlang fanout peer benchmark.
//!
//! `cargo run --profile dist --features bench --example runtime_fanout [N]`:
//! * fan-out: spawn N actors, send each one request (a sync call `double: i`), collect the
//!   replies (sum); prints RESULT, TIME, and µs per actor;
//! * memory: spawn N idle actors (state: one Integer) and read VmRSS from /proc/self/status
//!   before and after; prints bytes per idle actor;
//! * suspended: 10,000 task processes blocked in sync calls at once, each ~100 frames deep;
//!   prints resident KiB per suspended handler.

use std::time::Instant;

use bt::runtime::{handler, Behaviour, Config, Cx, Message, Runtime, Timeout};
use bt::value::{Sym, Value};

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

fn vm_rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn fanout(workers: usize, n: i64) {
    let rt = Runtime::new(Config {
        workers,
        ..Config::default()
    })
    .expect("runtime");
    let double = Sym::new("double:");
    let cpu0 = cpu_secs();
    let (sum, secs) = rt
        .block_on(move |cx| {
            let t = Instant::now();
            let actors: Vec<_> = (0..n)
                .map(|_| {
                    cx.rt().spawn(handler(|_cx: &mut Cx<'_>, m: Message| {
                        Ok(Value::Int(m.args[0].as_int().unwrap_or(0) * 2))
                    }))
                })
                .collect();
            let mut sum = 0i64;
            for (i, a) in actors.iter().enumerate() {
                let m = Message::new(double, vec![Value::Int(i as i64)]);
                sum += cx
                    .call(a, m, Timeout::DEFAULT)
                    .expect("reply")
                    .as_int()
                    .unwrap_or(0);
            }
            (sum, t.elapsed().as_secs_f64())
        })
        .expect("main");
    let cpu = cpu_secs() - cpu0;
    println!(
        "fanout workers={workers} RESULT {sum} TIME {secs:.4} RATE {:.0} us/actor {:.3} (cpu {cpu:.2} s => {:.3} cpu-us/actor)",
        n as f64 / secs,
        secs * 1e6 / n as f64,
        cpu * 1e6 / n as f64
    );
}

struct Idle(#[allow(dead_code)] i64);

impl Behaviour for Idle {
    fn handle(&mut self, _cx: &mut Cx<'_>, _m: Message) -> Result<Value, Value> {
        Ok(Value::Nil)
    }
}

fn memory(n: usize) {
    let rt = Runtime::new(Config::default()).expect("runtime");
    // Warm up allocator arenas and the process table outside the measurement.
    let warm: Vec<_> = (0..1000).map(|i| rt.spawn(Idle(i))).collect();
    let before = vm_rss_kib();
    let actors: Vec<_> = (0..n).map(|i| rt.spawn(Idle(i as i64))).collect();
    let after = vm_rss_kib();
    let state = std::mem::size_of::<Idle>();
    println!(
        "memory idle actors={n} RSS before {before} KiB after {after} KiB => {:.0} bytes/actor \
         (state {state} bytes; includes the handle kept by this benchmark)",
        (after.saturating_sub(before)) as f64 * 1024.0 / n as f64
    );
    drop((warm, actors));
}

/// 10,000 task processes suspended in sync calls at once, each ~100 frames deep: resident
/// memory per suspended handler (only touched stack pages count).
fn suspended(n: usize) {
    let rt = Runtime::new(Config::default()).expect("runtime");
    let before = vm_rss_kib();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let p2 = peak.clone();
    let mut released = false;
    let gate = rt.spawn(handler(move |cx: &mut Cx<'_>, _m: Message| {
        if !released {
            while cx.me().mailbox_len() < n - 1 {
                cx.yield_now().map_err(|_| Value::Nil)?;
            }
            p2.store(vm_rss_kib(), std::sync::atomic::Ordering::SeqCst);
            released = true;
        }
        Ok(Value::Int(1))
    }));
    fn deep(cx: &mut Cx<'_>, gate: &bt::runtime::ProcRef, depth: u32) -> i64 {
        let pad = std::hint::black_box([depth as u8; 64]);
        if depth == 0 {
            let m = Message::new(Sym::new("wait"), vec![]);
            return cx
                .call(gate, m, Timeout::Infinity)
                .ok()
                .and_then(|v| v.as_int())
                .unwrap_or(0);
        }
        deep(cx, gate, depth - 1) + i64::from(pad[50] > 200)
    }
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let g = gate.clone();
            rt.spawn_task(move |cx| deep(cx, &g, 100))
        })
        .collect();
    let done: i64 = tasks.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
    println!(
        "suspended handlers={n} (completed {done}) RSS before {before} KiB at peak {peak} KiB => {:.1} KiB each",
        peak.saturating_sub(before) as f64 / n as f64
    );
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let cores = std::thread::available_parallelism().map_or(2, |c| c.get());
    for _ in 0..3 {
        fanout(1, n);
        fanout(cores, n);
    }
    memory(n as usize);
    suspended(10_000);
}
