//! Snapshot time for supervision trees of 1,000 / 10,000 / 100,000 actors.
//!
//! `cargo run --profile dist --features bench --example snapshot_bench [-- N...]`. Each tree is one top-level
//! supervisor over dynamic pools of 100 workers; the walk uses no child cap
//! (`from:limit: #infinity`). Prints the median of 5 walks (wall time, and the walking
//! thread's CPU time, which other load on a shared machine does not inflate), the CPU time
//! per node, so linear growth is visible, the JSON serialisation CPU time, and (observer) the
//! diff of two successive snapshots and the live page's whole event (tree JSON + node
//! identities + diff JSON). `BENCH_WALKS=N` changes the number of walks (for profiling).

// unsafe: the thread CPU clock is read through libc (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::sync::Arc;
use std::time::Instant;

use bt::runtime::snapshot::{default_snapshot, SnapOptions};
use bt::runtime::supervisor::{ChildSpec, RestartType, StartFn, Supervision, SupervisorSpec};
use bt::runtime::{handler, Config, Cx, Message, Runtime};
use bt::value::Value;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    for n in sizes {
        run(n);
    }
}

fn run(n: usize) {
    let rt = Runtime::new(Config::default()).expect("runtime");
    let sup = Supervision::new(rt.handle());
    let per_pool = 100;
    let pools = n.div_ceil(per_pool);
    let worker: StartFn = Arc::new(|cx: &mut Cx<'_>, _a: &Value| {
        Ok(cx
            .rt()
            .spawn(handler(|_cx: &mut Cx<'_>, _m: Message| Ok(Value::Nil))))
    });
    let template = ChildSpec::worker("Worker", Value::sym("Worker"), worker)
        .with_restart(RestartType::Temporary);
    let children = (0..pools)
        .map(|i| {
            let pool =
                SupervisorSpec::dynamic(&format!("Pool{i}"), Value::sym("Pool"), template.clone());
            ChildSpec::supervisor(Arc::new(pool))
        })
        .collect();
    let spec = Arc::new(SupervisorSpec::new("App", Value::sym("App"), children));
    let s2 = sup.clone();
    rt.block_on(move |cx| {
        let h = s2.supervise(cx, spec, None).expect("supervise");
        let kids = h.running_children().expect("children");
        let mut left = n;
        for (_, _, p) in kids {
            let pool = s2.by_pid(p.pid()).expect("pool");
            for _ in 0..per_pool.min(left) {
                pool.start_child(cx, Value::Nil).expect("start");
            }
            left = left.saturating_sub(per_pool);
        }
    })
    .expect("build tree");
    let opts = SnapOptions {
        limit: None,
        ..SnapOptions::default()
    };
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut json_cpu = Vec::new();
    let mut diff_cpu = Vec::new();
    let mut event_cpu = Vec::new();
    let mut prev = None;
    let mut nodes = 0;
    let walks: usize = std::env::var("BENCH_WALKS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(5);
    for _ in 0..walks {
        let t = Instant::now();
        let c = thread_cpu_ms();
        let s = default_snapshot(&sup, &opts);
        cpu.push(thread_cpu_ms() - c);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        nodes = s.flat().len();
        let c = thread_cpu_ms();
        let j = s.to_json();
        json_cpu.push(thread_cpu_ms() - c);
        std::hint::black_box(j);
        if let Some(p) = &prev {
            let c = thread_cpu_ms();
            let d = bt::runtime::snapshot::diff::diff(p, &s);
            diff_cpu.push(thread_cpu_ms() - c);
            std::hint::black_box(d);
            let c = thread_cpu_ms();
            let e = bt::observe::routes::event_json(Some(p), &s);
            event_cpu.push(thread_cpu_ms() - c);
            std::hint::black_box(e);
        }
        prev = Some(s);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    cpu.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    let cpu_median = cpu[cpu.len() / 2];
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (json_ms, diff_ms, event_ms) = (med(json_cpu), med(diff_cpu), med(event_cpu));
    println!(
        "{n:>7} actors ({nodes:>7} nodes): snapshot {median:8.2} ms wall, {cpu_median:8.2} ms cpu ({:.0} ns/node), asJson {json_ms:6.2} ms cpu, diff {diff_ms:6.2} ms cpu, page event {event_ms:6.2} ms cpu",
        cpu_median * 1e6 / nodes as f64
    );
}

/// CPU time of the calling thread in ms (robust to other load on a shared machine).
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass, which lives for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}
