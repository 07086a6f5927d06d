//! Helpers for the tests that drive `bt::runtime` directly (`lifecycle`, `sched`,
//! `supervisor`, `snapshot`, `observe_history` in `tests/runtime/`; `use crate::rt;`):
//! runtimes on the manual (test) clock, a bounded wait for a condition, the worker a
//! supervisor spec starts, snapshot options without warnings. Each module uses a subset.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use bt::runtime::snapshot::SnapOptions;
use bt::runtime::supervisor::{ChildSpec, RestartType, StartFn};
use bt::runtime::{handler, Config, Cx, Message, ProcRef, Runtime, SpawnOpts};
use bt::value::Value;

/// A runtime with `workers` workers on the manual clock (time moves only by `advance`).
pub(crate) fn manual_runtime(workers: usize) -> Runtime {
    Runtime::new(Config {
        workers,
        manual_clock: true,
        ..Config::default()
    })
    .unwrap()
}

/// Two workers on the manual clock, the runtime's log dropped (supervisor reports).
pub(crate) fn quiet_runtime() -> Runtime {
    Runtime::new(Config {
        workers: 2,
        manual_clock: true,
        log: Arc::new(|_: &str| {}),
        ..Config::default()
    })
    .unwrap()
}

/// Spins until `f` holds (bounded so a bug fails instead of hanging).
pub(crate) fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "timed out waiting for {what}"
        );
        std::thread::yield_now();
    }
}

/// A user message `sel` with `args`.
pub(crate) fn msg(sel: &str, args: Vec<Value>) -> Message {
    Message::named(sel, args)
}

/// Spawns an idle process whose snapshot shows `class`.
pub(crate) fn spawn_worker(cx: &mut Cx<'_>, class: &str) -> ProcRef {
    let opts = SpawnOpts {
        info: Value::sym(class),
        ..SpawnOpts::default()
    };
    cx.rt()
        .spawn_opts(
            Box::new(handler(|_cx: &mut Cx<'_>, _m: Message| Ok(Value::Nil))),
            opts,
        )
        .unwrap()
}

/// Starts [`spawn_worker`]`(class)`.
pub(crate) fn worker(class: &'static str) -> StartFn {
    Arc::new(move |cx: &mut Cx<'_>, _a: &Value| Ok(spawn_worker(cx, class)))
}

/// A worker child named and shown as `class`.
pub(crate) fn child(class: &'static str, r: RestartType) -> ChildSpec {
    ChildSpec::worker(class, Value::sym(class), worker(class)).with_restart(r)
}

/// Snapshot options that drop the depth/size warnings.
pub(crate) fn quiet() -> SnapOptions {
    SnapOptions {
        warn: Arc::new(|_: &str| {}),
        ..SnapOptions::default()
    }
}
