//! Restart history and snapshot diffs (the observer) on a manual test clock, so
//! every time stamp is deterministic: the JSON of a tree with histories and of a diff are
//! pinned by golden files under tests/golden/observe/ (`BLESS=1` rewrites them).

use std::sync::Arc;

use bt::runtime::snapshot::default_snapshot;
use bt::runtime::snapshot::diff::{diff, to_json};
use bt::runtime::supervisor::Strategy;
use bt::runtime::supervisor::{
    ChildSpec, RestartKind, RestartType, SupHandle, Supervision, SupervisorSpec,
};
use bt::runtime::{Cx, ExitReason, ProcRef, Timeout};
use bt::value::{Sym, Value};

use crate::rt;
use rt::{child, quiet, quiet_runtime as rt};

/// App (oneForOne): Logger (permanent, `logger`), Workers (oneForAll: A, B permanent, C
/// temporary), Once (temporary).
fn app(sup: &Supervision, cx: &mut Cx<'_>, history: usize) -> SupHandle {
    let workers = SupervisorSpec::new(
        "Workers",
        Value::sym("Workers"),
        vec![
            child("A", RestartType::Permanent),
            child("B", RestartType::Permanent),
            child("C", RestartType::Temporary),
        ],
    )
    .with_strategy(Strategy::OneForAll)
    .with_history_limit(history);
    let spec = SupervisorSpec::new(
        "App",
        Value::sym("App"),
        vec![
            child("Logger", RestartType::Permanent).with_name("logger"),
            ChildSpec::supervisor(Arc::new(workers)),
            child("Once", RestartType::Temporary),
        ],
    )
    .with_history_limit(history);
    sup.supervise(cx, Arc::new(spec), Some(Sym::new("App")))
        .unwrap()
}

fn id(h: &SupHandle, name: &str) -> ProcRef {
    h.which_id(Sym::new(name)).unwrap().unwrap()
}

/// `uptimeMs` is measured on a monotonic clock even under the manual one: zero it.
fn normalise(json: &str) -> String {
    let re = regex::Regex::new(r#""uptimeMs":\d+"#).unwrap();
    re.replace_all(json, "\"uptimeMs\":0").into_owned() + "\n"
}

fn golden(name: &str, got: &str) {
    let path = format!("{}/tests/golden/observe/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("BLESS").is_ok() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).expect("golden file (BLESS=1 to create)");
    assert_eq!(got, want, "{name}");
}

#[test]
fn restart_history_and_diff_are_pinned_on_the_test_clock() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    let (tree, diff_json) = rt
        .block_on(move |cx| {
            let h = app(&sup, cx, 20);
            let workers = sup.by_pid(id(&h, "Workers").pid()).unwrap();
            let s0 = default_snapshot(&sup, &quiet());
            // t = 1000: Logger killed, restarted.
            cx.rt().advance(1000);
            cx.rt().kill(&id(&h, "Logger"));
            h.sync(cx).unwrap();
            // t = 1500: A fails; oneForAll takes B along and drops the temporary C.
            cx.rt().advance(500);
            cx.rt().exit(
                &id(&workers, "A"),
                cx.pid(),
                ExitReason::Custom(Value::sym("badState")),
            );
            workers.sync(cx).unwrap();
            // t = 1750: the Workers supervisor is killed; App starts it again (generation 2).
            cx.rt().advance(250);
            cx.rt().kill(&id(&h, "Workers"));
            h.sync(cx).unwrap();
            // t = 2000: Once ends normally (temporary: a tombstone).
            cx.rt().advance(250);
            cx.stop(&id(&h, "Once"), Timeout::Infinity).unwrap();
            h.sync(cx).unwrap();
            let s1 = default_snapshot(&sup, &quiet());
            let d = diff(&s0, &s1);
            (s1.to_json(), to_json(&d, &s0, &s1))
        })
        .unwrap();
    golden("history.json", &normalise(&tree));
    golden("diff.json", &(diff_json + "\n"));
}

#[test]
fn history_is_bounded_and_records_kinds_and_generations() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let h = app(&sup, cx, 2);
        for _ in 0..5 {
            cx.rt().advance(10);
            cx.rt().kill(&id(&h, "Logger"));
            h.sync(cx).unwrap();
        }
        cx.rt().kill(&id(&h, "Workers"));
        h.sync(cx).unwrap();
        let s = default_snapshot(&sup, &quiet());
        let root = &s.roots[0];
        let logger = &root.children[0];
        assert_eq!(logger.restart_count, 5);
        let at: Vec<u64> = logger.history.iter().map(|e| e.at_ms).collect();
        assert_eq!(at, vec![40, 50], "only the last two are kept");
        assert!(logger.history.iter().all(|e| e.kind == RestartKind::Exit));
        assert_eq!(&*logger.history[0].reason_text, "killed");
        let workers = &root.children[1];
        assert_eq!(workers.history[0].kind, RestartKind::Exit);
        assert_eq!(workers.history[0].generation, 1);
        let a = &workers.children[0];
        assert_eq!(a.history.len(), 1);
        assert_eq!(a.history[0].kind, RestartKind::Parent);
        assert_eq!(a.history[0].generation, 2);
        assert_eq!(workers.supervision.as_ref().unwrap().generation, 2);
    })
    .unwrap();
}
