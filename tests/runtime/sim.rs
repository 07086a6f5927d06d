//! The deterministic scheduler (`Config::sim`) driven directly: the same seed gives the same
//! interleaving, different seeds give different ones, and the virtual clock jumps over waits.

use std::sync::{Arc, Mutex};

use bt::runtime::{handler, Config, Cx, Message, Runtime, SimConfig, Timeout};
use bt::value::Value;

/// The order in which a collector receives the messages of four senders racing to it, each
/// sending three (every sender's own three stay in order: FIFO per sender).
fn interleaving(seed: u64) -> Vec<i64> {
    let rt = Runtime::new(Config {
        sim: Some(SimConfig::new(seed)),
        ..Config::default()
    })
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let collector = rt.spawn(handler(move |_cx: &mut Cx<'_>, m: Message| {
        s2.lock().unwrap().push(m.args[0].as_int().unwrap_or(-1));
        Ok(Value::Nil)
    }));
    let senders: Vec<_> = (0..4)
        .map(|k| {
            let c = collector.clone();
            rt.spawn(handler(move |cx: &mut Cx<'_>, _m: Message| {
                for i in 0..3 {
                    cx.call(
                        &c,
                        Message::named("take:", vec![Value::Int(k * 10 + i)]),
                        Timeout::Infinity,
                    )
                    .ok();
                }
                Ok(Value::Nil)
            }))
        })
        .collect();
    rt.block_on(move |cx| {
        for s in &senders {
            cx.cast(s, Message::named("go", vec![]));
        }
        for s in &senders {
            cx.call(s, Message::named("go", vec![]), Timeout::Infinity)
                .ok();
        }
    })
    .unwrap();
    let v = seen.lock().unwrap().clone();
    v
}

#[test]
fn a_seed_fixes_the_interleaving() {
    let runs: Vec<Vec<i64>> = (0..6).map(interleaving).collect();
    for (seed, r) in runs.iter().enumerate() {
        assert_eq!(r.len(), 24, "seed {seed}: {r:?}");
        assert_eq!(&interleaving(seed as u64), r, "seed {seed} replayed");
    }
    let distinct: std::collections::HashSet<_> = runs.iter().collect();
    assert!(distinct.len() > 1, "every seed gave {:?}", runs[0]);
}

#[test]
fn the_virtual_clock_jumps_to_the_next_deadline() {
    let rt = Runtime::new(Config {
        sim: Some(SimConfig::new(3)),
        ..Config::default()
    })
    .unwrap();
    let fired = Arc::new(Mutex::new(None));
    let f2 = fired.clone();
    let h = rt.handle();
    let t = rt
        .block_on(move |cx| {
            let h2 = h.clone();
            h.after(45_000, move |_cx| *f2.lock().unwrap() = Some(h2.now_ms()));
            cx.sleep(60_000).ok();
            cx.rt().now_ms()
        })
        .unwrap();
    assert_eq!(t, 60_000);
    assert_eq!(*fired.lock().unwrap(), Some(45_000));
    assert_eq!(rt.wall_ms(), 1_767_225_600_000 + 60_000);
}
