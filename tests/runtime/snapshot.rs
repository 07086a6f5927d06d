//! Process snapshots: scopes, `from:` outcomes, `#restarting` nodes,
//! tombstones, the child cap, lazy status, the JSON schema (pinned by a golden file), the
//! `--observe` HTTP responder, and snapshots racing with crashing children.

use std::sync::Arc;

use bt::observe::client::http_get;
use bt::observe::{ObserveConfig, ObserveServer, SupervisionSource};
use bt::runtime::snapshot::{
    default_snapshot, from_pid, status, system_snapshot, FromError, NodeKind, NodeState, SnapNode,
    SnapOptions, Snapshot,
};
use bt::runtime::supervisor::{
    await_exit, ChildSpec, RestartType, StartFn, SupHandle, Supervision, SupervisorSpec,
};
use bt::runtime::{handler, Config, Cx, ExitReason, Message, Runtime, SpawnOpts, Timeout};
use bt::value::{Sym, Value};

use crate::rt;
use rt::{child, quiet, quiet_runtime as rt, spawn_worker};

fn app(sup: &Supervision, cx: &mut Cx<'_>) -> SupHandle {
    let pool = SupervisorSpec::dynamic(
        "Pool",
        Value::sym("Pool"),
        child("Task", RestartType::Temporary),
    );
    let spec = SupervisorSpec::new(
        "App",
        Value::sym("App"),
        vec![
            child("Logger", RestartType::Permanent).with_name("logger"),
            ChildSpec::supervisor(Arc::new(pool)),
            child("Once", RestartType::Temporary),
        ],
    );
    sup.supervise(cx, Arc::new(spec), Some(Sym::new("App")))
        .unwrap()
}

fn pids(s: &Snapshot) -> Vec<String> {
    s.flat()
        .iter()
        .filter_map(|n| n.pid.map(|p| p.to_string()))
        .collect()
}

#[test]
fn default_scope_shows_supervisors_then_loose_actors() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        // Loose actors on both sides of the supervised ones in the process table.
        let early = spawn_worker(cx, "Counter");
        let h = app(&sup, cx);
        let pool = sup
            .by_pid(h.which_id(Sym::new("Pool")).unwrap().unwrap().pid())
            .unwrap();
        pool.start_child(cx, Value::Nil).unwrap();
        let loose = spawn_worker(cx, "Counter");
        // A runtime service and a bt_ name are hidden from default.
        let svc = cx
            .rt()
            .spawn_opts(
                Box::new(handler(|_cx: &mut Cx<'_>, _m: Message| Ok(Value::Nil))),
                SpawnOpts {
                    service: true,
                    name: Some(Sym::new("bt_transcript")),
                    ..SpawnOpts::default()
                },
            )
            .unwrap();
        let s = default_snapshot(&sup, &quiet());
        assert_eq!(
            s.roots.len(),
            3,
            "{:?}",
            s.roots.iter().map(|r| r.kind).collect::<Vec<_>>()
        );
        let root = &s.roots[0];
        assert_eq!(root.kind, NodeKind::BeamtalkSupervisor);
        assert_eq!(root.pid, Some(h.pid()));
        assert_eq!(root.registered_name, Some(Sym::new("App")));
        assert_eq!(root.child_count, 3);
        let kinds: Vec<_> = root.children.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            vec![
                NodeKind::BeamtalkActor,
                NodeKind::BeamtalkSupervisor,
                NodeKind::BeamtalkActor
            ]
        );
        assert_eq!(root.children[0].registered_name, Some(Sym::new("logger")));
        assert_eq!(root.children[1].children.len(), 1);
        let sup_info = root.children[1].supervision.as_ref().unwrap();
        assert_eq!(sup_info.strategy.as_str(), "simpleOneForOne");
        assert_eq!(s.roots[1].pid, Some(early.pid()));
        assert_eq!(s.roots[2].pid, Some(loose.pid()));
        let t = s.totals();
        assert_eq!(
            (t.supervisors, t.workers, t.running, t.max_depth),
            (2, 5, 7, 3)
        );
        // system: the runtime root first, then exactly default's nodes; default ⊆ system.
        let sys = system_snapshot(&sup, &quiet());
        assert_eq!(sys.roots[0].kind, NodeKind::OtpSupervisor);
        assert_eq!(sys.roots[0].registered_name, Some(Sym::new("bt_runtime")));
        // The root is a live service process registered under that name.
        let root_pid = sys.roots[0].pid.unwrap();
        assert!(root_pid.service);
        let root_proc = cx.rt().whereis(Sym::new("bt_runtime")).unwrap();
        assert_eq!(root_proc.pid(), root_pid);
        assert!(sys.roots[0]
            .children
            .iter()
            .all(|c| c.pid != Some(root_pid)));
        let sys_pids = pids(&sys);
        for p in pids(&s) {
            assert!(sys_pids.contains(&p), "{p} missing from system");
        }
        let svc_pid = svc.pid().to_string();
        assert!(svc_pid.ends_with(".1>"));
        assert!(sys_pids.contains(&svc_pid));
        assert!(!pids(&s).contains(&svc_pid));
        // The main task process is not an actor: system only.
        let me = cx.pid().to_string();
        assert!(sys_pids.contains(&me) && !pids(&s).contains(&me));
    })
    .unwrap();
}

#[test]
fn from_supervisor_pid_worker_pid_and_dead_root() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let h = app(&sup, cx);
        let s = from_pid(&sup, h.pid(), &quiet()).unwrap();
        assert_eq!(s.roots.len(), 1);
        assert_eq!(s.roots[0].children.len(), 3);
        let logger = h.which_id(Sym::new("Logger")).unwrap().unwrap();
        let one = from_pid(&sup, logger.pid(), &quiet()).unwrap();
        assert_eq!(one.flat().len(), 1);
        assert_eq!(one.roots[0].kind, NodeKind::BeamtalkActor);
        h.stop(cx);
        let e = from_pid(&sup, h.pid(), &quiet()).unwrap_err();
        assert_eq!(e, FromError::Stale(h.pid()));
        assert_eq!(e.kind(), "stale_handle");
        assert_eq!(e.message(), format!("supervisor {} is not alive", h.pid()));
        // Lazy status of a dead process is None; of a live one, its class and queue.
        assert_eq!(status(cx.rt(), logger.pid()), None);
        let live = spawn_worker(cx, "Counter");
        let st = status(cx.rt(), live.pid()).unwrap();
        assert_eq!((st.module.as_str(), st.queue_length), ("Counter", 0));
    })
    .unwrap();
}

#[test]
fn tombstones_and_restart_counts_appear_in_the_tree() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let h = app(&sup, cx);
        let once = h.which_id(Sym::new("Once")).unwrap().unwrap();
        cx.rt()
            .exit(&once, cx.pid(), ExitReason::Custom(Value::sym("boom")));
        for _ in 0..3 {
            let l = h.which_id(Sym::new("Logger")).unwrap().unwrap();
            cx.rt().kill(&l);
            h.sync(cx).unwrap();
        }
        let s = default_snapshot(&sup, &quiet());
        let kids = &s.roots[0].children;
        assert_eq!(kids[0].restart_count, 3);
        assert_eq!(
            kids[0].registered_name,
            Some(Sym::new("logger")),
            "re-registered"
        );
        let tomb = &kids[2];
        assert_eq!(tomb.state, NodeState::Exited);
        assert_eq!(tomb.pid, Some(once.pid()));
        // The record keeps the dead process's handle, so its Pid outlives the process table.
        let last = tomb.proc.as_ref().expect("a tombstone keeps its process");
        assert!(!last.is_alive() && last.pid() == once.pid());
        assert!(tomb.exited_at.is_some() && tomb.uptime_ms.is_none());
        assert_eq!(s.roots[0].child_count, 2);
        let t = s.totals();
        assert_eq!((t.exited, t.restarts), (1, 3));
        assert_eq!(
            s.roots[0].supervision.as_ref().unwrap().restarts_performed,
            3
        );
    })
    .unwrap();
}

#[test]
fn a_child_caught_mid_restart_is_a_restarting_node() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    let rth = rt.handle();
    rt.block_on(move |cx| {
        let starts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s2 = starts.clone();
        // The restart sleeps (manual clock) before spawning: the child stays restarting.
        let slow: StartFn = Arc::new(move |cx: &mut Cx<'_>, _a: &Value| {
            if s2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 0 {
                cx.sleep(1000).map_err(|_| Value::str("exiting"))?;
            }
            Ok(spawn_worker(cx, "Slow"))
        });
        let spec = SupervisorSpec::new(
            "R",
            Value::sym("R"),
            vec![ChildSpec::worker("Slow", Value::sym("Slow"), slow)
                .with_restart(RestartType::Permanent)],
        );
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let w = h.which_id(Sym::new("Slow")).unwrap().unwrap();
        cx.rt().kill(&w);
        let sup2 = sup.clone();
        let mut snap = None;
        for _ in 0..1_000_000 {
            let s = default_snapshot(&sup2, &quiet());
            if s.roots[0].children[0].kind == NodeKind::Restarting {
                snap = Some(s);
                break;
            }
            let _ = cx.yield_now();
        }
        let s = snap.expect("saw the restarting child");
        let n: &SnapNode = &s.roots[0].children[0];
        assert_eq!((n.pid, n.state), (None, NodeState::Restarting));
        assert_eq!(s.roots[0].child_count, 0);
        // The child shows as restarting before its start function reaches `sleep`, so one
        // `advance` could come before the sleep's deadline exists (and leave it asleep for
        // good). Advance until the restart has finished: the sleep ends at the first advance
        // after it began.
        let mut running = false;
        for _ in 0..1_000_000 {
            rth.advance(1000);
            let s = default_snapshot(&sup, &quiet());
            if s.roots[0].children[0].state == NodeState::Running {
                running = true;
                break;
            }
            let _ = cx.yield_now();
        }
        assert!(running, "the restart finished");
        h.sync(cx).unwrap();
        let s = default_snapshot(&sup, &quiet());
        assert_eq!(s.roots[0].children[0].state, NodeState::Running);
        assert_eq!(s.roots[0].children[0].restart_count, 1);
    })
    .unwrap();
}

#[test]
fn the_child_cap_truncates_but_counts_every_child() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec =
            SupervisorSpec::dynamic("Big", Value::sym("Big"), child("W", RestartType::Temporary));
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        for _ in 0..1000 {
            h.start_child(cx, Value::Nil).unwrap();
        }
        let s = default_snapshot(&sup, &quiet());
        assert_eq!(s.roots.len(), 1, "supervised actors are not loose roots");
        assert!(s.roots[0].truncated);
        assert_eq!(s.roots[0].child_count, 1000);
        assert!(s.roots[0].children.is_empty());
        let all = from_pid(
            &sup,
            h.pid(),
            &SnapOptions {
                limit: None,
                ..quiet()
            },
        )
        .unwrap();
        assert_eq!(all.roots[0].children.len(), 1000);
        assert!(!all.roots[0].truncated);
        let s500 = from_pid(
            &sup,
            h.pid(),
            &SnapOptions {
                limit: Some(1000),
                ..quiet()
            },
        )
        .unwrap();
        assert_eq!(s500.flat().len(), 1001);
    })
    .unwrap();
}

#[test]
fn depth_guard_stops_at_64_with_one_warning() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let mut spec = SupervisorSpec::new(
            "L70",
            Value::sym("L70"),
            vec![child("Leaf", RestartType::Permanent)],
        );
        for i in (1..70).rev() {
            let name = format!("L{i}");
            spec = SupervisorSpec::new(
                &name,
                Value::Nil,
                vec![ChildSpec::supervisor(Arc::new(spec))],
            );
        }
        sup.supervise(cx, Arc::new(spec), None).unwrap();
        let lines = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        let opts = SnapOptions {
            warn: Arc::new(move |s: &str| l2.lock().push(s.to_string())),
            ..SnapOptions::default()
        };
        let s = default_snapshot(&sup, &opts);
        assert_eq!(s.totals().max_depth, 64);
        let lines = lines.lock();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("warning: supervision tree deeper than 64 levels; subtree below "),
            "{}",
            lines[0]
        );
        let deepest = s.flat().into_iter().find(|n| n.truncated).unwrap();
        assert!(deepest.children.is_empty());
    })
    .unwrap();
}

/// Replaces the time-dependent numbers so the JSON (compact, keys in schema order) can be
/// compared with a golden file.
fn normalise(json: &str) -> String {
    let re = regex::Regex::new(r#""(capturedAt|startedAt|exitedAt|uptimeMs)":\d+"#).unwrap();
    re.replace_all(json, "\"$1\":0").into_owned() + "\n"
}

#[test]
fn json_schema_is_pinned_by_a_golden_file() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    let json = rt
        .block_on(move |cx| {
            let h = app(&sup, cx);
            let once = h.which_id(Sym::new("Once")).unwrap().unwrap();
            cx.rt().kill(&once);
            h.sync(cx).unwrap();
            default_snapshot(&sup, &quiet()).to_json()
        })
        .unwrap();
    assert!(json
        .starts_with("{\"schema\":\"bt.processes/1\",\"node\":\"nonode@nohost\",\"capturedAt\":"));
    assert!(!json.contains('\n') && !json.contains(": "));
    let got = normalise(&json);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/eval/supervision/processes.json"
    );
    if std::env::var("BLESS").is_ok() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file (BLESS=1 to create)");
    assert_eq!(got, want);
}

#[test]
fn observe_serves_the_default_tree_over_http() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    let sup2 = sup.clone();
    rt.block_on(move |cx| {
        app(&sup2, cx);
    })
    .unwrap();
    let source = Arc::new(SupervisionSource { sup, opts: quiet() });
    let server =
        ObserveServer::start("127.0.0.1:0", source.clone(), ObserveConfig::default()).unwrap();
    let (status, body) = http_get(server.local_addr(), "/runtime/processes").unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["schema"], "bt.processes/1");
    assert_eq!(v["roots"][0]["class"], "App");
    let (status, _) = http_get(server.local_addr(), "/nope").unwrap();
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert!(ObserveServer::start("0.0.0.0:0", source, ObserveConfig::default()).is_err());
}

#[test]
fn snapshots_while_children_crash_in_a_loop_never_fail_or_hang() {
    let rt = Runtime::new(Config {
        workers: 2,
        log: Arc::new(|_: &str| {}),
        ..Config::default()
    })
    .unwrap();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "Churn",
            Value::sym("Churn"),
            (0..5).map(|_| child("W", RestartType::Permanent)).collect(),
        )
        .with_intensity(1_000_000, 1);
        let spec = SupervisorSpec {
            strategy: bt::runtime::supervisor::Strategy::OneForAll,
            ..spec
        };
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let h2 = h.clone();
        let crasher = cx.rt().spawn_task(move |cx: &mut Cx<'_>| {
            for _ in 0..300 {
                if let Ok(kids) = h2.running_children() {
                    if let Some((_, _, p)) = kids.first() {
                        cx.rt().kill(p);
                    }
                }
                let _ = cx.yield_now();
            }
        });
        let mut seen_restarting = 0;
        for _ in 0..300 {
            let s = default_snapshot(&sup, &quiet());
            seen_restarting += s
                .flat()
                .iter()
                .filter(|n| n.kind == NodeKind::Restarting)
                .count();
            let _ = s.to_json();
            let _ = cx.yield_now();
        }
        crasher.join_in(cx).unwrap();
        h.sync(cx).unwrap();
        assert!(h.is_alive());
        let _ = seen_restarting;
        h.stop(cx);
        let _ = await_exit(cx, &h.proc, Timeout::Ms(1000));
    })
    .unwrap();
}
