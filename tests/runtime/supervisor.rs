//! Native supervisors on the runtime: strategies, restart types, intensity
//! and escalation, nested supervisors, shutdown timeouts, auto-shutdown, dynamic children,
//! restart bookkeeping. Children are `FnBehaviour` actors crashed from the test process with
//! `kill`/`exit` (delivered synchronously), then a `sync` barrier waits until the supervisor
//! has handled the exit — no sleeps as synchronisation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bt::runtime::supervisor::{
    await_exit, AutoShutdown, ChildSpec, ChildState, RestartType, Shutdown, StartFn, Strategy,
    SupError, SupHandle, Supervision, SupervisorSpec,
};
use bt::runtime::{handler, Config, Cx, ExitReason, Message, ProcRef, Runtime, Timeout};
use bt::value::{Sym, Value};

/// A worker that answers `ping` with `#pong`.
fn worker() -> StartFn {
    Arc::new(|cx: &mut Cx<'_>, _args: &Value| {
        Ok(cx.rt().spawn(handler(|_cx: &mut Cx<'_>, _m: Message| {
            Ok(Value::sym("pong"))
        })))
    })
}

fn child(id: &str, r: RestartType) -> ChildSpec {
    ChildSpec::worker(id, Value::sym(id), worker()).with_restart(r)
}

fn pid_of(h: &SupHandle, id: &str) -> ProcRef {
    h.which_id(Sym::new(id)).unwrap().expect("child running")
}

fn crash(cx: &mut Cx<'_>, p: &ProcRef) {
    cx.rt()
        .exit(p, cx.pid(), ExitReason::Custom(Value::sym("boom")));
}

/// Yields until `f` holds (other processes finish what they are doing).
fn until(cx: &mut Cx<'_>, mut f: impl FnMut() -> bool) {
    for _ in 0..1_000_000 {
        if f() {
            return;
        }
        let _ = cx.yield_now();
    }
    panic!("condition never held");
}

use RestartType::{Permanent, Temporary, Transient};

use crate::rt;
use rt::quiet_runtime as rt;

#[test]
fn one_for_one_restarts_only_the_crashed_child() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "App",
            Value::sym("App"),
            vec![
                child("a", Permanent),
                child("b", Permanent),
                child("c", Permanent),
            ],
        );
        let h = sup
            .supervise(cx, Arc::new(spec), Some(Sym::new("App")))
            .unwrap();
        assert_eq!(h.child_count().unwrap(), 3);
        let (a, b, c) = (pid_of(&h, "a"), pid_of(&h, "b"), pid_of(&h, "c"));
        crash(cx, &b);
        h.sync(cx).unwrap();
        let b2 = pid_of(&h, "b");
        assert_ne!(b.pid(), b2.pid());
        assert!(b2.is_alive());
        assert_eq!(pid_of(&h, "a").pid(), a.pid());
        assert_eq!(pid_of(&h, "c").pid(), c.pid());
        assert_eq!(h.restart_count(Sym::new("b")), Some(1));
        assert_eq!(h.restart_count(Sym::new("a")), Some(0));
        assert_eq!(h.counters(), (1, 1));
        // Registered under its name; supervise is idempotent.
        assert_eq!(cx.rt().whereis(Sym::new("App")).unwrap().pid(), h.pid());
        let again = sup.supervise(cx, h.spec(), Some(Sym::new("App"))).unwrap();
        assert_eq!(again.pid(), h.pid());
        assert_eq!(sup.current(Sym::new("App")).unwrap().pid(), h.pid());
        h.stop(cx);
        assert!(!a.is_alive() && !b2.is_alive() && !c.is_alive());
        assert!(sup.current(Sym::new("App")).is_none());
        assert!(matches!(h.child_ids(), Err(SupError::Stale(_))));
    })
    .unwrap();
}

#[test]
fn one_for_all_restarts_the_group_and_tombstones_temporaries() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "G",
            Value::Nil,
            vec![
                child("a", Permanent),
                child("t", Temporary),
                child("b", Transient),
            ],
        )
        .with_strategy(Strategy::OneForAll);
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let (a, t, b) = (pid_of(&h, "a"), pid_of(&h, "t"), pid_of(&h, "b"));
        crash(cx, &a);
        h.sync(cx).unwrap();
        assert!(!t.is_alive() && !b.is_alive());
        assert_ne!(pid_of(&h, "a").pid(), a.pid());
        assert_ne!(pid_of(&h, "b").pid(), b.pid());
        assert_eq!(h.child_state(Sym::new("t")), Some(ChildState::Exited));
        assert_eq!(h.restart_count(Sym::new("a")), Some(1));
        assert_eq!(h.restart_count(Sym::new("b")), Some(1));
        assert_eq!(h.restart_count(Sym::new("t")), Some(0));
        assert_eq!(
            h.child_ids().unwrap(),
            vec![Sym::new("a"), Sym::new("b")],
            "tombstones are not listed"
        );
        assert_eq!(h.counters().1, 1, "one group restart is one operation");
    })
    .unwrap();
}

#[test]
fn rest_for_one_restarts_the_later_children() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "R",
            Value::Nil,
            vec![
                child("a", Permanent),
                child("b", Permanent),
                child("c", Permanent),
            ],
        )
        .with_strategy(Strategy::RestForOne);
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let (a, b, c) = (pid_of(&h, "a"), pid_of(&h, "b"), pid_of(&h, "c"));
        crash(cx, &b);
        h.sync(cx).unwrap();
        assert_eq!(pid_of(&h, "a").pid(), a.pid());
        assert_ne!(pid_of(&h, "b").pid(), b.pid());
        assert_ne!(pid_of(&h, "c").pid(), c.pid());
        assert!(!c.is_alive());
    })
    .unwrap();
}

#[test]
fn transient_normal_exit_leaves_a_tombstone_temporary_crash_too() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "T",
            Value::Nil,
            vec![child("tr", Transient), child("tm", Temporary)],
        );
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let tr = pid_of(&h, "tr");
        cx.stop(&tr, Timeout::Infinity).unwrap();
        let h2 = h.clone();
        until(cx, || {
            h2.child_state(Sym::new("tr")) == Some(ChildState::Exited)
        });
        let tm = pid_of(&h, "tm");
        crash(cx, &tm);
        h.sync(cx).unwrap();
        assert_eq!(h.child_state(Sym::new("tm")), Some(ChildState::Exited));
        assert_eq!(h.child_count().unwrap(), 0);
        assert!(h.is_alive());
        // A transient child that crashes is restarted.
        let spec = SupervisorSpec::new("T2", Value::Nil, vec![child("tr", Transient)]);
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let tr = pid_of(&h, "tr");
        crash(cx, &tr);
        h.sync(cx).unwrap();
        assert_ne!(pid_of(&h, "tr").pid(), tr.pid());
    })
    .unwrap();
}

#[test]
fn intensity_exceeded_gives_up_and_the_handle_goes_stale() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec =
            SupervisorSpec::new("I", Value::Nil, vec![child("w", Permanent)]).with_intensity(2, 60);
        let h = sup
            .supervise(cx, Arc::new(spec), Some(Sym::new("I")))
            .unwrap();
        for _ in 0..2 {
            let w = pid_of(&h, "w");
            crash(cx, &w);
            h.sync(cx).unwrap();
        }
        assert_eq!(h.restart_count(Sym::new("w")), Some(2));
        let w = pid_of(&h, "w");
        crash(cx, &w);
        let reason = await_exit(cx, &h.proc, Timeout::Infinity).unwrap();
        assert!(matches!(reason, ExitReason::Shutdown), "{reason:?}");
        assert!(sup.current(Sym::new("I")).is_none());
        assert!(matches!(h.child_count(), Err(SupError::Stale(_))));
        let e = h.terminate(cx, Sym::new("w")).unwrap_err();
        assert_eq!(e.kind(), "stale_handle");
        // A later supervise starts a fresh record.
        let h2 = sup.supervise(cx, h.spec(), Some(Sym::new("I"))).unwrap();
        assert_eq!(h2.counters(), (1, 0));
        assert_eq!(h2.restart_count(Sym::new("w")), Some(0));
    })
    .unwrap();
}

#[test]
fn nested_supervisor_escalates_and_keeps_bookkeeping() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let inner = SupervisorSpec::new("Inner", Value::sym("Inner"), vec![child("w", Permanent)])
            .with_intensity(1, 60);
        let top = SupervisorSpec::new(
            "Top",
            Value::sym("Top"),
            vec![
                child("x", Permanent),
                ChildSpec::supervisor(Arc::new(inner)),
            ],
        );
        let h = sup.supervise(cx, Arc::new(top), None).unwrap();
        let inner_proc = pid_of(&h, "Inner");
        let ih = sup
            .by_pid(inner_proc.pid())
            .expect("nested supervisor handle");
        assert_eq!(ih.counters(), (1, 0));
        // First crash: the inner supervisor restarts its worker.
        let w = pid_of(&ih, "w");
        crash(cx, &w);
        ih.sync(cx).unwrap();
        assert_eq!(ih.restart_count(Sym::new("w")), Some(1));
        // Second crash: intensity exceeded, the inner supervisor gives up; Top restarts it.
        let w = pid_of(&ih, "w");
        crash(cx, &w);
        await_exit(cx, &ih.proc, Timeout::Infinity).unwrap();
        let h2 = h.clone();
        until(cx, || {
            h2.which_id(Sym::new("Inner"))
                .ok()
                .flatten()
                .is_some_and(|p| p.pid() != inner_proc.pid())
        });
        h.sync(cx).unwrap();
        assert_eq!(h.restart_count(Sym::new("Inner")), Some(1));
        assert_eq!(h.counters(), (1, 1));
        let ih2 = sup.by_pid(pid_of(&h, "Inner").pid()).unwrap();
        // Generation 2; the worker's count survived and the new generation counts as a restart.
        assert_eq!(ih2.counters(), (2, 1));
        assert_eq!(ih2.restart_count(Sym::new("w")), Some(2));
        assert!(!ih.is_alive());
        // Stopping Top stops the nested supervisor and its worker too.
        let w3 = pid_of(&ih2, "w");
        h.stop(cx);
        assert!(!ih2.is_alive() && !w3.is_alive());
    })
    .unwrap();
}

#[test]
fn failed_start_stops_started_children_and_names_the_child() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    let started: Arc<parking_lot::Mutex<Vec<ProcRef>>> = Default::default();
    let s2 = started.clone();
    rt.block_on(move |cx| {
        let tracking: StartFn = Arc::new(move |cx: &mut Cx<'_>, _a: &Value| {
            let p = cx
                .rt()
                .spawn(handler(|_cx: &mut Cx<'_>, _m: Message| Ok(Value::Nil)));
            s2.lock().push(p.clone());
            Ok(p)
        });
        let failing: StartFn = Arc::new(|_cx: &mut Cx<'_>, _a: &Value| Err(Value::str("no db")));
        let spec = SupervisorSpec::new(
            "F",
            Value::Nil,
            vec![
                ChildSpec::worker("ok", Value::Nil, tracking),
                ChildSpec::worker("db", Value::Nil, failing),
            ],
        );
        let e = sup.supervise(cx, Arc::new(spec), None).unwrap_err();
        assert_eq!(e.kind(), "supervisor_start_failed");
        assert!(e.message().contains("db"), "{}", e.message());
        assert!(e.message().contains("no db"), "{}", e.message());
        assert!(started.lock().iter().all(|p| !p.is_alive()));
        assert!(sup.current(Sym::new("F")).is_none());
    })
    .unwrap();
}

#[test]
fn dynamic_children_start_restart_and_terminate() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::dynamic("Pool", Value::sym("Pool"), child("Worker", Permanent));
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let kids: Vec<ProcRef> = (0..3)
            .map(|_| h.start_child(cx, Value::Nil).unwrap())
            .collect();
        assert_eq!(h.child_count().unwrap(), 3);
        crash(cx, &kids[1]);
        h.sync(cx).unwrap();
        let now: Vec<_> = h.running_children().unwrap();
        assert_eq!(now.len(), 3);
        assert_eq!(now[0].2.pid(), kids[0].pid());
        assert_ne!(now[1].2.pid(), kids[1].pid(), "restarted in place");
        assert_eq!(now[2].2.pid(), kids[2].pid());
        h.terminate_child(cx, &kids[0]).unwrap();
        h.terminate_child(cx, &kids[0]).unwrap(); // idempotent
        assert!(!kids[0].is_alive());
        assert_eq!(h.child_count().unwrap(), 2);
        // A failing start is child_start_failed and leaves nothing behind.
        let bad = SupervisorSpec::dynamic(
            "Bad",
            Value::Nil,
            ChildSpec::worker("W", Value::Nil, Arc::new(|_cx, _a| Err(Value::str("nope")))),
        );
        let hb = sup.supervise(cx, Arc::new(bad), None).unwrap();
        let e = hb.start_child(cx, Value::Nil).unwrap_err();
        assert_eq!(e.kind(), "child_start_failed");
        assert_eq!(hb.child_count().unwrap(), 0);
    })
    .unwrap();
}

#[test]
fn shutdown_timeout_kills_a_child_that_will_not_stop() {
    // Real clock: the grace period must actually pass.
    let rt = Runtime::new(Config {
        workers: 2,
        log: Arc::new(|_: &str| {}),
        ..Config::default()
    })
    .unwrap();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        struct Stubborn;
        impl bt::runtime::Behaviour for Stubborn {
            fn handle(&mut self, _cx: &mut Cx<'_>, _m: Message) -> Result<Value, Value> {
                Ok(Value::Nil)
            }
            fn terminate(&mut self, cx: &mut Cx<'_>, _r: &ExitReason) {
                let _ = cx.sleep(60_000);
            }
        }
        let start: StartFn = Arc::new(|cx: &mut Cx<'_>, _a: &Value| Ok(cx.rt().spawn(Stubborn)));
        let spec = SupervisorSpec::new(
            "S",
            Value::Nil,
            vec![ChildSpec::worker("s", Value::Nil, start).with_shutdown(Shutdown::Ms(30))],
        );
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let s = pid_of(&h, "s");
        h.stop(cx);
        assert!(!s.is_alive());
        assert!(matches!(s.exit_reason(), Some(ExitReason::Killed)));
    })
    .unwrap();
}

#[test]
fn graceful_child_shutdown_has_reason_shutdown() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new("S", Value::Nil, vec![child("a", Permanent)]);
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let a = pid_of(&h, "a");
        h.terminate(cx, Sym::new("a")).unwrap();
        h.terminate(cx, Sym::new("a")).unwrap(); // idempotent
        assert!(matches!(a.exit_reason(), Some(ExitReason::Shutdown)));
        assert_eq!(h.child_state(Sym::new("a")), Some(ChildState::Exited));
        h.sync(cx).unwrap();
        assert_eq!(
            h.child_count().unwrap(),
            0,
            "terminated children are not restarted"
        );
    })
    .unwrap();
}

#[test]
fn any_significant_child_ending_shuts_the_supervisor_down() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let spec = SupervisorSpec::new(
            "Job",
            Value::Nil,
            vec![
                child("keep", Permanent),
                child("job", Transient).with_significant(true),
            ],
        )
        .with_auto_shutdown(AutoShutdown::AnySignificant);
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let keep = pid_of(&h, "keep");
        let job = pid_of(&h, "job");
        cx.stop(&job, Timeout::Infinity).unwrap();
        let reason = await_exit(cx, &h.proc, Timeout::Infinity).unwrap();
        assert!(matches!(reason, ExitReason::Shutdown));
        assert!(!keep.is_alive());
    })
    .unwrap();
}

#[test]
fn a_failed_restart_is_retried_under_the_same_budget() {
    let rt = rt();
    let sup = Supervision::new(rt.handle());
    rt.block_on(move |cx| {
        let calls = Arc::new(AtomicUsize::new(0));
        let c2 = calls.clone();
        // Starts fine the first time, fails twice, then works again.
        let start: StartFn = Arc::new(move |cx: &mut Cx<'_>, _a: &Value| {
            let n = c2.fetch_add(1, Ordering::SeqCst);
            if n == 1 || n == 2 {
                return Err(Value::str("flaky"));
            }
            Ok(cx
                .rt()
                .spawn(handler(|_cx: &mut Cx<'_>, _m: Message| Ok(Value::Nil))))
        });
        let spec = SupervisorSpec::new(
            "Flaky",
            Value::Nil,
            vec![ChildSpec::worker("f", Value::Nil, start).with_restart(Permanent)],
        );
        let h = sup.supervise(cx, Arc::new(spec), None).unwrap();
        let f = pid_of(&h, "f");
        crash(cx, &f);
        h.sync(cx).unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(h.counters().1, 3, "the crash plus two failed restarts");
        assert_eq!(h.restart_count(Sym::new("f")), Some(1));
        assert!(pid_of(&h, "f").is_alive());
    })
    .unwrap();
}
