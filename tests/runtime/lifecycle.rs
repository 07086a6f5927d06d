//! Lifecycle, names, timers and introspection of the native runtime: kill overtakes queued messages, stop is handled after them, monitors and exit
//! callbacks run in fresh processes, links and trapped exit signals, control signals before
//! user messages, the name registry, timers on the manual clock, process snapshots.
//!
//! Deterministic: a busy actor is held by a `sleep` on the manual clock; waiting for a state
//! is a bounded spin on an observable condition.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use bt::runtime::{
    handler, Behaviour, CallError, Cx, ExitReason, JoinError, Message, NameError, ProcRef,
    ProcStatus, Runtime, Signal, SpawnOpts, Timeout,
};
use bt::value::{Sym, Value};

use crate::rt;
use rt::{manual_runtime as runtime, msg, wait_until};

type Log = Arc<Mutex<Vec<String>>>;

/// `hold: ms` sleeps (keeping the actor busy), `note: x` logs x; signals and terminate are
/// logged too.
struct Recorder {
    log: Log,
}

impl Behaviour for Recorder {
    fn handle(&mut self, cx: &mut Cx<'_>, m: Message) -> Result<Value, Value> {
        match m.selector.as_str() {
            "hold:" => {
                let ms = m.args[0].as_int().unwrap_or(0) as u64;
                cx.sleep(ms).map_err(|_| Value::sym("exiting"))?;
                self.log.lock().push("hold".into());
                Ok(Value::sym("held"))
            }
            "note:" => {
                self.log.lock().push(format!("{:?}", m.args[0]));
                Ok(Value::sym("noted"))
            }
            "quit" => {
                cx.stop_self();
                Ok(Value::sym("ok"))
            }
            _ => Err(Value::sym("dnu")),
        }
    }
    fn terminate(&mut self, _cx: &mut Cx<'_>, reason: &ExitReason) {
        self.log.lock().push(format!("terminate {reason}"));
    }
    fn signal(&mut self, _cx: &mut Cx<'_>, sig: Signal) {
        let line = match sig {
            Signal::Exit { from, reason } => format!("exit from {from}: {reason}"),
            Signal::Down {
                reference, reason, ..
            } => format!("down {reference}: {reason}"),
        };
        self.log.lock().push(line);
    }
}

fn recorder(rt: &Runtime) -> (ProcRef, Log) {
    let log: Log = Default::default();
    (rt.spawn(Recorder { log: log.clone() }), log)
}

fn call_task(
    rt: &Runtime,
    to: &ProcRef,
    m: Message,
) -> bt::runtime::TaskHandle<Result<Value, CallError>> {
    let to = to.clone();
    rt.spawn_task(move |cx| cx.call(&to, m, Timeout::Infinity))
}

#[test]
fn kill_overtakes_queued_messages() {
    let rt = runtime(2);
    let (a, log) = recorder(&rt);
    let reason: Arc<Mutex<Option<ExitReason>>> = Default::default();
    let r2 = reason.clone();
    rt.on_exit(&a, move |_cx, r| *r2.lock() = Some(r));
    let t1 = call_task(&rt, &a, msg("hold:", vec![Value::Int(1000)]));
    wait_until("a busy", || a.status() == ProcStatus::Waiting);
    let t2 = call_task(&rt, &a, msg("note:", vec![Value::Int(2)]));
    let t3 = call_task(&rt, &a, msg("note:", vec![Value::Int(3)]));
    assert!(rt.cast(&a, msg("note:", vec![Value::Int(4)])));
    wait_until("three queued", || a.mailbox_len() == 3);
    assert!(rt.kill(&a));
    assert!(!a.is_alive());
    assert!(!rt.kill(&a), "kill of a dead process answers false");
    for t in [t1, t2, t3] {
        assert!(matches!(t.join().unwrap(), Err(CallError::ActorDead)));
    }
    wait_until("exit callback", || reason.lock().is_some());
    assert!(matches!(*reason.lock(), Some(ExitReason::Killed)));
    assert!(matches!(a.exit_reason(), Some(ExitReason::Killed)));
    rt.advance(1000);
    assert!(
        log.lock().is_empty(),
        "nothing queued ran, terminate did not run: {:?}",
        log.lock()
    );
    let late = call_task(&rt, &a, msg("note:", vec![Value::Int(5)]));
    assert!(matches!(late.join().unwrap(), Err(CallError::ActorDead)));
    assert!(!rt.cast(&a, msg("note:", vec![Value::Int(6)])));
}

#[test]
fn stop_runs_after_the_queued_messages_and_refuses_later_ones() {
    let rt = runtime(2);
    let (a, log) = recorder(&rt);
    let t1 = call_task(&rt, &a, msg("hold:", vec![Value::Int(1000)]));
    wait_until("a busy", || a.status() == ProcStatus::Waiting);
    rt.cast(&a, msg("note:", vec![Value::Int(2)]));
    rt.cast(&a, msg("note:", vec![Value::Int(3)]));
    let a2 = a.clone();
    let stopper = rt.spawn_task(move |cx| cx.stop(&a2, Timeout::Infinity));
    wait_until("stop queued", || a.mailbox_len() == 3);
    assert!(
        !rt.cast(&a, msg("note:", vec![Value::Int(4)])),
        "casts after stop are dropped"
    );
    let late = call_task(&rt, &a, msg("note:", vec![Value::Int(5)]));
    assert!(matches!(late.join().unwrap(), Err(CallError::ActorDead)));
    assert!(a.is_alive(), "still working through its queue");
    rt.advance(1000);
    assert!(stopper.join().unwrap().is_ok());
    assert_eq!(
        t1.join().unwrap().unwrap().as_sym().unwrap().as_str(),
        "held"
    );
    assert_eq!(*log.lock(), ["hold", "2", "3", "terminate normal"]);
    assert!(matches!(a.exit_reason(), Some(ExitReason::Normal)));
    // Idempotent.
    let a3 = a.clone();
    assert!(rt
        .block_on(move |cx| cx.stop(&a3, Timeout::Infinity))
        .unwrap()
        .is_ok());
}

#[test]
fn stop_self_takes_effect_after_the_current_message() {
    let rt = runtime(2);
    let (a, log) = recorder(&rt);
    let t1 = call_task(&rt, &a, msg("hold:", vec![Value::Int(10)]));
    wait_until("a busy", || a.status() == ProcStatus::Waiting);
    let t2 = call_task(&rt, &a, msg("quit", vec![]));
    wait_until("quit queued", || a.mailbox_len() == 1);
    let t3 = call_task(&rt, &a, msg("note:", vec![Value::Int(3)]));
    wait_until("note queued", || a.mailbox_len() == 2);
    rt.advance(10);
    assert!(t1.join().unwrap().is_ok());
    assert_eq!(t2.join().unwrap().unwrap().as_sym().unwrap().as_str(), "ok");
    assert!(matches!(t3.join().unwrap(), Err(CallError::ActorDead)));
    assert_eq!(*log.lock(), ["hold", "terminate normal"]);
    assert!(!a.is_alive());
}

#[test]
fn killing_a_process_suspended_in_a_call_wakes_it_with_exiting() {
    let rt = runtime(2);
    let (b, _log) = recorder(&rt);
    let b2 = b.clone();
    let caller = rt.spawn_task(move |cx| {
        let r = cx.call(
            &b2,
            msg("hold:", vec![Value::Int(1_000_000)]),
            Timeout::Infinity,
        );
        matches!(r, Err(CallError::Exiting(ExitReason::Killed)))
    });
    let cp = caller.proc().clone();
    wait_until("caller waiting", || cp.status() == ProcStatus::Waiting);
    assert!(rt.kill(&cp));
    assert!(matches!(
        caller.join(),
        Err(JoinError::Exited(ExitReason::Killed))
    ));
    assert!(b.is_alive(), "the callee is not affected");
}

#[test]
fn monitors_run_callbacks_in_fresh_processes() {
    let rt = runtime(2);
    let (a, _log) = recorder(&rt);
    let seen: Arc<Mutex<Vec<(String, String)>>> = Default::default();
    let r1 = rt.make_ref();
    let r2 = rt.make_ref();
    for tag in ["first", "second"] {
        let s = seen.clone();
        rt.when_down(&a, r1, move |cx, reason| {
            s.lock()
                .push((format!("{tag} in {}", cx.pid()), reason.to_string()))
        });
    }
    let s = seen.clone();
    rt.when_down(&a, r2, move |_cx, _r| {
        s.lock().push(("cancelled".into(), String::new()))
    });
    assert!(rt.demonitor(&a, r2));
    assert!(!rt.demonitor(&a, r2));
    let a2 = a.clone();
    rt.block_on(move |cx| cx.stop(&a2, Timeout::Infinity))
        .unwrap()
        .unwrap();
    wait_until("both callbacks", || seen.lock().len() == 2);
    let v = seen.lock().clone();
    assert!(v.iter().all(|(_, r)| r == "normal"));
    assert!(
        v.iter().all(|(w, _)| !w.contains(&a.pid().to_string())),
        "not in the dead actor"
    );
    assert_ne!(
        v[0].0.split(" in ").nth(1),
        v[1].0.split(" in ").nth(1),
        "one process each"
    );
    // On a dead process: at once, with noproc.
    let s = seen.clone();
    rt.on_exit(&a, move |_cx, r| {
        s.lock().push(("late".into(), r.to_string()))
    });
    wait_until("noproc callback", || seen.lock().len() == 3);
    assert_eq!(seen.lock()[2].1, "noproc");
}

#[test]
fn links_propagate_exits_and_trapping_turns_them_into_signals() {
    let rt = runtime(2);
    let (trapper, tlog) = recorder(&rt);
    rt.set_trap_exits(&trapper, true);
    let crasher = rt.spawn(handler(
        |_cx: &mut Cx<'_>, _m: Message| -> Result<Value, Value> { panic!("linked crash") },
    ));
    rt.link(&trapper, &crasher);
    let (plain, _plog) = recorder(&rt);
    rt.link(&plain, &crasher);
    let c = crasher.clone();
    let r = rt
        .block_on(move |cx| cx.call(&c, msg("x", vec![]), Timeout::Infinity))
        .unwrap();
    assert!(matches!(r, Err(CallError::ActorDead)));
    wait_until("trapper got the signal", || !tlog.lock().is_empty());
    assert_eq!(
        tlog.lock()[0],
        format!("exit from {}: panic: linked crash", crasher.pid())
    );
    assert!(trapper.is_alive());
    assert!(
        !plain.is_alive(),
        "a non-trapping linked process dies with the same reason"
    );
    assert!(matches!(plain.exit_reason(), Some(ExitReason::Panic(_))));

    // A normal exit does not take down a non-trapping linked process.
    let (x, _) = recorder(&rt);
    let (y, _) = recorder(&rt);
    rt.link(&x, &y);
    rt.block_on({
        let x = x.clone();
        move |cx| cx.stop(&x, Timeout::Infinity)
    })
    .unwrap()
    .unwrap();
    assert!(y.is_alive());

    // Exit signals by hand: a custom reason kills a non-trapping process, is a signal for a
    // trapping one; `killed` cannot be trapped.
    let from = trapper.pid();
    assert!(rt.exit(&y, from, ExitReason::Custom(Value::sym("bye"))));
    assert!(matches!(y.exit_reason(), Some(ExitReason::Custom(_))));
    assert!(rt.exit(&trapper, from, ExitReason::Custom(Value::sym("hi"))));
    wait_until("second signal", || tlog.lock().len() == 2);
    assert!(trapper.is_alive());
    assert!(rt.exit(&trapper, from, ExitReason::Killed));
    assert!(!trapper.is_alive());
}

#[test]
fn control_signals_overtake_queued_user_messages() {
    let rt = runtime(2);
    let (a, log) = recorder(&rt);
    let t1 = call_task(&rt, &a, msg("hold:", vec![Value::Int(5)]));
    wait_until("a busy", || a.status() == ProcStatus::Waiting);
    rt.cast(&a, msg("note:", vec![Value::Int(1)]));
    rt.cast(&a, msg("note:", vec![Value::Int(2)]));
    let pid = a.pid();
    assert!(rt.signal(
        &a,
        Signal::Down {
            reference: 7,
            pid,
            reason: ExitReason::Normal
        }
    ));
    rt.advance(5);
    t1.join().unwrap().unwrap();
    let a2 = a.clone();
    rt.block_on(move |cx| cx.call(&a2, msg("note:", vec![Value::Int(3)]), Timeout::Infinity))
        .unwrap()
        .unwrap();
    assert_eq!(*log.lock(), ["hold", "down 7: normal", "1", "2", "3"]);
}

#[test]
fn the_name_registry() {
    let rt = runtime(1);
    let (a, _) = recorder(&rt);
    let (b, _) = recorder(&rt);
    let counter = Sym::new("counter");
    assert_eq!(rt.register(counter, &a), Ok(()));
    assert_eq!(
        rt.register(counter, &a),
        Ok(()),
        "same process again is fine"
    );
    assert_eq!(rt.register(counter, &b), Err(NameError::Registered));
    assert_eq!(rt.register(Sym::new("bt_x"), &b), Err(NameError::Reserved));
    assert_eq!(NameError::Reserved.kind(), "reserved_name");
    assert_eq!(rt.whereis(counter), Some(a.clone()));
    assert_eq!(a.name(), Some(counter));
    // A second name replaces the first.
    let tally = Sym::new("tally");
    assert_eq!(rt.register(tally, &a), Ok(()));
    assert_eq!(rt.whereis(counter), None);
    assert_eq!(rt.whereis(tally), Some(a.clone()));
    // Spawn-and-register is atomic; a taken name spawns nothing.
    let before = rt.process_count();
    let taken = rt.spawn_opts(
        Box::new(Recorder {
            log: Default::default(),
        }),
        SpawnOpts {
            name: Some(tally),
            ..Default::default()
        },
    );
    assert_eq!(taken.err(), Some(NameError::Registered));
    assert_eq!(rt.process_count(), before);
    let c = rt
        .spawn_opts(
            Box::new(Recorder {
                log: Default::default(),
            }),
            SpawnOpts {
                name: Some(counter),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(rt.whereis(counter), Some(c.clone()));
    // Services may use bt_ names and are listed only on request.
    let svc = rt
        .spawn_opts(
            Box::new(Recorder {
                log: Default::default(),
            }),
            SpawnOpts {
                name: Some(Sym::new("bt_transcript")),
                service: true,
                ..Default::default()
            },
        )
        .unwrap();
    let names: Vec<_> = rt
        .registered(false)
        .into_iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["tally", "counter"]);
    assert_eq!(rt.registered(true).len(), 3);
    assert_eq!(rt.whereis(Sym::new("bt_transcript")), Some(svc));
    // Unregister is idempotent; exit unregisters.
    rt.unregister(&a);
    rt.unregister(&a);
    assert_eq!(rt.whereis(tally), None);
    assert!(rt.kill(&c));
    assert_eq!(rt.whereis(counter), None);
    assert_eq!(rt.register(counter, &c), Err(NameError::NoProc));
}

#[test]
fn timers_on_the_manual_clock() {
    let rt = runtime(2);
    let once = Arc::new(AtomicU64::new(0));
    let o = once.clone();
    let t = rt.after(100, move |_cx| {
        o.fetch_add(1, Ordering::SeqCst);
    });
    assert!(t.is_active());
    rt.advance(99);
    assert_eq!(rt.pending_timers(), 1);
    rt.advance(1);
    wait_until("after fired", || once.load(Ordering::SeqCst) == 1);
    assert!(!t.is_active());
    assert!(!t.cancel(), "nothing pending to stop");

    let ticks = Arc::new(AtomicU64::new(0));
    let k = ticks.clone();
    let every = rt.every(50, move |_cx| {
        k.fetch_add(1, Ordering::SeqCst);
    });
    rt.advance(200);
    wait_until("four periodic runs", || ticks.load(Ordering::SeqCst) == 4);
    assert!(every.cancel());
    assert!(!every.is_active());
    let c = Arc::new(AtomicU64::new(0));
    let c2 = c.clone();
    let cancelled = rt.after(10, move |_cx| {
        c2.fetch_add(1, Ordering::SeqCst);
    });
    assert!(cancelled.cancel());
    // Timer runs take process numbers; a probe spawned after the clock moves shows that no
    // further run happened (deterministic numbering, no waiting on absence).
    let before = rt.block_on(|cx| cx.pid().number).unwrap();
    rt.advance(500);
    let after = rt.block_on(|cx| cx.pid().number).unwrap();
    assert_eq!(after, before + 1, "no timer process ran");
    assert_eq!(ticks.load(Ordering::SeqCst), 4);
    assert_eq!(c.load(Ordering::SeqCst), 0);
}

#[test]
fn sleep_suspends_the_process_until_the_clock_moves() {
    let rt = runtime(1);
    let sleeper = rt.spawn_task(|cx| {
        cx.sleep(1000).unwrap();
        cx.rt().now_ms()
    });
    let p = sleeper.proc().clone();
    wait_until("sleeping", || p.status() == ProcStatus::Waiting);
    // The only worker is free while the sleeper is suspended.
    assert_eq!(rt.block_on(|_cx| 5).unwrap(), 5);
    rt.advance(999);
    assert!(p.is_alive());
    rt.advance(1);
    assert_eq!(sleeper.join().unwrap(), 1000);
}

#[test]
fn process_snapshots_in_spawn_order() {
    let rt = runtime(1);
    let (a, _) = recorder(&rt);
    let (b, _) = recorder(&rt);
    rt.advance(42);
    let c = rt
        .spawn_opts(
            Box::new(Recorder {
                log: Default::default(),
            }),
            SpawnOpts {
                label: "worker",
                info: Value::sym("Pool"),
                ..Default::default()
            },
        )
        .unwrap();
    let t = call_task(&rt, &a, msg("hold:", vec![Value::Int(10)]));
    wait_until("a busy", || a.status() == ProcStatus::Waiting);
    rt.cast(&a, msg("note:", vec![Value::Int(1)]));
    let snap = rt.processes(false);
    let pids: Vec<_> = snap.iter().map(|i| i.pid).collect();
    assert_eq!(pids, [a.pid(), b.pid(), c.pid(), t.proc().pid()]);
    assert_eq!(snap[0].mailbox_len, 1);
    assert_eq!(snap[0].status, ProcStatus::Waiting);
    assert_eq!(snap[1].status, ProcStatus::Idle);
    assert_eq!(snap[2].label, "worker");
    assert_eq!(snap[2].proc.info().as_sym().unwrap().as_str(), "Pool");
    assert_eq!(snap[2].started_at_ms - snap[0].started_at_ms, 42);
    rt.advance(10);
    t.join().unwrap().unwrap();
}

#[test]
fn exit_reasons_are_data() {
    assert_eq!(
        ExitReason::Normal.to_value().as_sym().unwrap().as_str(),
        "normal"
    );
    assert_eq!(
        ExitReason::Killed.to_value().as_sym().unwrap().as_str(),
        "killed"
    );
    assert_eq!(
        ExitReason::Shutdown.to_value().as_sym().unwrap().as_str(),
        "shutdown"
    );
    assert!(matches!(
        ExitReason::from_value(Value::sym("normal")),
        ExitReason::Normal
    ));
    assert!(matches!(
        ExitReason::from_value(Value::Int(3)),
        ExitReason::Custom(_)
    ));
    assert_eq!(CallError::Timeout.kind(), Some("timeout"));
    assert_eq!(CallError::ActorDead.kind(), Some("actor_dead"));
    assert_eq!(CallError::Deadlock.kind(), Some("deadlock_detected"));
}

/// Class-side state lock: re-entrant in one process; a process waiting for it suspends (the
/// single worker keeps serving others), even while the holder is suspended in a sync call.
#[test]
fn proc_lock_suspends_waiters_instead_of_blocking_the_worker() {
    use bt::runtime::ProcLock;
    let rt = runtime(1);
    let lock = Arc::new(ProcLock::new());
    let (slow, _) = recorder(&rt);
    let (l, s) = (lock.clone(), slow.clone());
    let holder = rt.spawn_task(move |cx| {
        let _g = l.lock(cx).unwrap();
        let _again = l.lock(cx).unwrap(); // re-entrant
        cx.call(&s, msg("hold:", vec![Value::Int(100)]), Timeout::Infinity)
            .unwrap();
        cx.pid()
    });
    let hp = holder.proc().clone();
    wait_until("holder inside the lock, waiting on the call", || {
        lock.owner() == Some(hp.pid()) && slow.status() == ProcStatus::Waiting
    });
    let order: Log = Default::default();
    let waiters: Vec<_> = (0..3)
        .map(|i| {
            let (l, o) = (lock.clone(), order.clone());
            rt.spawn_task(move |cx| {
                let _g = l.lock(cx).unwrap();
                o.lock().push(format!("w{i}"));
            })
        })
        .collect();
    let wp: Vec<_> = waiters.iter().map(|t| t.proc().clone()).collect();
    wait_until("waiters suspended", || {
        wp.iter().all(|p| p.status() == ProcStatus::Waiting)
    });
    // A waiter killed while queued gives up its place.
    assert!(rt.kill(&wp[1]));
    // The only worker is not blocked.
    assert_eq!(rt.block_on(|_cx| 9).unwrap(), 9);
    rt.advance(100);
    assert_eq!(holder.join().unwrap(), hp.pid());
    for (i, t) in waiters.into_iter().enumerate() {
        let r = t.join();
        assert_eq!(r.is_ok(), i != 1);
    }
    assert_eq!(*order.lock(), ["w0", "w2"]);
    assert_eq!(lock.owner(), None);
}

/// `crash` fails its message and ends the process (what an embedder's limit does to an
/// actor); `terminate` logs, then holds on the manual clock until the test advances it.
struct Crasher {
    log: Log,
}

impl Behaviour for Crasher {
    fn handle(&mut self, cx: &mut Cx<'_>, _m: Message) -> Result<Value, Value> {
        cx.exit_self(ExitReason::Custom(Value::sym("boom")));
        Err(Value::sym("crashed"))
    }
    fn terminate(&mut self, cx: &mut Cx<'_>, _reason: &ExitReason) {
        self.log.lock().push("terminating".into());
        let _ = cx.sleep(1000);
    }
}

#[test]
fn a_caller_sees_the_process_its_failed_call_ended_dead() {
    // The caller of a message that fails and ends the process gets the error only once the
    // process has stopped (terminate included), so `isAlive` right after answers false.
    let rt = runtime(2);
    let log: Log = Default::default();
    let a = rt.spawn(Crasher { log: log.clone() });
    let a2 = a.clone();
    let caller = rt.spawn_task(move |cx| {
        let r = cx.call(&a2, msg("crash", vec![]), Timeout::Infinity);
        (r, a2.is_alive())
    });
    // Terminate has logged and is asleep on the manual clock (advancing before the sleep
    // registers would leave it asleep for good).
    wait_until("terminate asleep", || {
        log.lock().len() == 1 && a.status() == ProcStatus::Waiting
    });
    rt.advance(1000);
    let (r, alive) = caller.join().unwrap();
    match r {
        Err(CallError::Raised(v)) => assert_eq!(v.as_sym().unwrap().as_str(), "crashed"),
        other => panic!("expected the raised error, got {other:?}"),
    }
    assert!(!alive, "the caller saw the crashed process alive");
    assert!(matches!(a.exit_reason(), Some(ExitReason::Custom(_))));
}
