//! Scheduler requirements, shown on the native runtime: thousands of sync
//! calls suspended at once, deep native recursion in a handler, preemption, deadlock
//! detection, timeouts, FIFO order, panics as crashes, the stack cap.
//!
//! Deterministic: no sleeps as synchronisation; time-dependent tests use the manual clock,
//! and waiting for a state is a bounded spin on an observable condition.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use bt::runtime::{
    handler, Behaviour, CallError, Config, Cx, ExitReason, JoinError, Message, ProcStatus, Runtime,
    Timeout,
};
use bt::value::Value;

use crate::rt;
use rt::{manual_runtime as runtime, msg, wait_until};

fn int(v: &Value) -> i64 {
    v.as_int().expect("an Integer")
}

struct Counter(i64);

impl Behaviour for Counter {
    fn handle(&mut self, _cx: &mut Cx<'_>, m: Message) -> Result<Value, Value> {
        match m.selector.as_str() {
            "add:" => {
                self.0 += m.args[0].as_int().unwrap_or(0);
                Ok(Value::Int(self.0))
            }
            "get" => Ok(Value::Int(self.0)),
            "fail" => Err(Value::str("boom")),
            _ => Err(Value::str("doesNotUnderstand")),
        }
    }
}

#[test]
fn pids_are_numbered_per_runtime_from_the_main_program() {
    let rt = runtime(1);
    let (main, actor) = rt
        .block_on(|cx| {
            let a = cx.rt().spawn(Counter(0));
            (cx.pid(), a.pid())
        })
        .unwrap();
    assert_eq!(main.to_string(), "<0.1.0>");
    assert_eq!(actor.to_string(), "<0.2.0>");
    let svc = rt
        .spawn_opts(
            Box::new(Counter(0)),
            bt::runtime::SpawnOpts {
                service: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(svc.pid().to_string(), "<0.1.1>");
    let next = rt.block_on(|cx| cx.pid()).unwrap();
    assert_eq!(next.to_string(), "<0.3.0>");
}

#[test]
fn sync_calls_reply_and_errors_keep_the_actor_alive() {
    let rt = runtime(2);
    let c = rt.spawn(Counter(0));
    let c2 = c.clone();
    let r = rt
        .block_on(move |cx| {
            let a = cx.call(&c2, msg("add:", vec![Value::Int(5)]), Timeout::DEFAULT);
            let e = cx.call(&c2, msg("fail", vec![]), Timeout::DEFAULT);
            let b = cx.call(&c2, msg("add:", vec![Value::Int(1)]), Timeout::DEFAULT);
            (int(&a.unwrap()), e, int(&b.unwrap()))
        })
        .unwrap();
    assert_eq!(r.0, 5);
    assert!(matches!(r.1, Err(CallError::Raised(ref v)) if v.as_str() == Some("boom")));
    assert_eq!(r.2, 6);
    assert!(c.is_alive());
}

/// Requirement 1: 10,000 processes suspended in sync calls at once, each ~100 frames deep,
/// all complete; no thread is blocked (2 workers).
#[test]
fn ten_thousand_processes_blocked_in_sync_calls_complete() {
    const N: usize = 10_000;
    let rt = runtime(2);
    let peak = Arc::new(AtomicU64::new(0));
    let peak2 = peak.clone();
    let mut released = false;
    let server = rt.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
        if !released {
            // Hold the first call until every other caller is queued behind it.
            while cx.me().mailbox_len() < N - 1 {
                cx.yield_now().map_err(|_| Value::Nil)?;
            }
            peak2.store(cx.rt().coroutines().0 as u64, Ordering::SeqCst);
            released = true;
        }
        Ok(Value::Int(m.args[0].as_int().unwrap_or(0) * 2))
    }));
    fn deep(cx: &mut Cx<'_>, server: &bt::runtime::ProcRef, i: i64, depth: u32) -> i64 {
        let pad = std::hint::black_box([0u8; 128]);
        if depth == 0 {
            let r = cx.call(
                server,
                msg("double:", vec![Value::Int(i)]),
                Timeout::Infinity,
            );
            return int(&r.unwrap()) + i64::from(pad[0]);
        }
        deep(cx, server, i, depth - 1)
    }
    let tasks: Vec<_> = (0..N as i64)
        .map(|i| {
            let s = server.clone();
            rt.spawn_task(move |cx| deep(cx, &s, i, 100))
        })
        .collect();
    let sum: i64 = tasks.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(sum, (0..N as i64).map(|i| i * 2).sum::<i64>());
    // Every caller held a suspended coroutine at the same moment, plus the server's own.
    assert!(
        peak.load(Ordering::SeqCst) > N as u64,
        "peak {}",
        peak.load(Ordering::SeqCst)
    );
    wait_until("all coroutines retired", || rt.coroutines().0 == 0);
}

fn recurse(cx: &mut Cx<'_>, depth: u32) -> Result<u64, String> {
    // ~2 KB of frame, like a bt activation of the tree-walker.
    let frame = std::hint::black_box([depth as u8; 2048]);
    if cx.stack_remaining() < 16 * 1024 {
        return Err(format!("stack_overflow at depth {depth}"));
    }
    if depth == 0 {
        return Ok(u64::from(frame[1]));
    }
    Ok(recurse(cx, depth - 1)? + u64::from(frame[0] & 1))
}

/// Requirement 4: 10,000 nested ~2 KB frames inside a handler, on the default stack size.
#[test]
fn deep_native_recursion_inside_a_handler() {
    let rt = runtime(1);
    let a = rt.spawn(handler(|cx: &mut Cx<'_>, m: Message| {
        let depth = m.args[0].as_int().unwrap_or(0) as u32;
        recurse(cx, depth)
            .map(|n| Value::Int(n as i64))
            .map_err(Value::str)
    }));
    let a2 = a.clone();
    let r = rt
        .block_on(move |cx| {
            cx.call(
                &a2,
                msg("depth:", vec![Value::Int(10_000)]),
                Timeout::Infinity,
            )
        })
        .unwrap();
    // 5,000 of the 10,000 frames have an odd depth.
    assert_eq!(int(&r.unwrap()), 5_000);
    // The main program (a task process) gets the same depth.
    let r = rt.block_on(|cx| recurse(cx, 10_000)).unwrap();
    assert_eq!(r, Ok(5_000));
}

/// The stack check fires before the guard page: on a 1 MiB stack a deeper recursion reports
/// an error instead of crashing the process, and the actor keeps serving.
#[test]
fn stack_check_stops_recursion_before_the_guard_page() {
    let rt = Runtime::new(Config {
        workers: 1,
        manual_clock: true,
        stack_size: 1 << 20,
        ..Config::default()
    })
    .unwrap();
    let a = rt.spawn(handler(|cx: &mut Cx<'_>, m: Message| {
        let depth = m.args[0].as_int().unwrap_or(0) as u32;
        recurse(cx, depth)
            .map(|n| Value::Int(n as i64))
            .map_err(Value::str)
    }));
    let a2 = a.clone();
    let (deep, shallow) = rt
        .block_on(move |cx| {
            let d = cx.call(
                &a2,
                msg("depth:", vec![Value::Int(100_000)]),
                Timeout::Infinity,
            );
            let s = cx.call(&a2, msg("depth:", vec![Value::Int(10)]), Timeout::Infinity);
            (d, s)
        })
        .unwrap();
    match deep {
        Err(CallError::Raised(v)) => assert!(v.as_str().unwrap().starts_with("stack_overflow")),
        other => panic!("expected a raised stack_overflow, got {other:?}"),
    }
    assert_eq!(int(&shallow.unwrap()), 5);
    assert!(a.is_alive());
}

/// Requirement 3: on ONE worker, a process looping forever (calling the reduction hook)
/// does not starve another: the other answers 100 calls while the busy one keeps looping.
#[test]
fn busy_process_yielding_does_not_starve_another() {
    let rt = Runtime::new(Config {
        workers: 1,
        ..Config::default()
    })
    .unwrap();
    let spins = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (spins2, stop2) = (spins.clone(), stop.clone());
    let busy = rt.spawn(handler(move |cx: &mut Cx<'_>, _m: Message| {
        while !stop2.load(Ordering::SeqCst) {
            spins2.fetch_add(1, Ordering::SeqCst);
            cx.tick().map_err(|_| Value::Nil)?;
        }
        Ok(Value::Int(spins2.load(Ordering::SeqCst) as i64))
    }));
    let other = rt.spawn(Counter(0));
    let (busy2, spins3) = (busy.clone(), spins.clone());
    let (answers, spins_during) = rt
        .block_on(move |cx| {
            cx.cast(&busy2, msg("spin", vec![]));
            let before = spins3.load(Ordering::SeqCst);
            let mut last = 0;
            for _ in 0..100 {
                // 5 s (real clock) only matters if starvation made the test fail.
                let r = cx.call(&other, msg("add:", vec![Value::Int(1)]), Timeout::Ms(5000));
                last = int(&r.unwrap());
            }
            (last, spins3.load(Ordering::SeqCst) - before)
        })
        .unwrap();
    assert_eq!(answers, 100);
    assert!(spins_during > 0, "the busy process ran meanwhile");
    assert_eq!(busy.status(), ProcStatus::Runnable, "still looping");
    stop.store(true, Ordering::SeqCst);
    let b = busy.clone();
    let total = rt
        .block_on(move |cx| cx.call(&b, msg("get", vec![]), Timeout::Ms(5000)))
        .unwrap();
    assert!(int(&total.unwrap()) >= spins_during as i64);
}

/// Requirement 5: A -> B -> A fails with deadlock_detected in B at once (also longer cycles
/// and a call to self); nothing hangs.
#[test]
fn cyclic_sync_calls_are_detected() {
    let rt = runtime(2);
    let slot: Arc<parking_lot::Mutex<Vec<bt::runtime::ProcRef>>> = Default::default();
    let make = |idx: usize, slot: Arc<parking_lot::Mutex<Vec<bt::runtime::ProcRef>>>| {
        handler(move |cx: &mut Cx<'_>, m: Message| {
            // `hop: n` calls the next actor (index+1 mod len) with n-1; at 0 it answers.
            let n = m.args[0].as_int().unwrap_or(0);
            if n == 0 {
                return Ok(Value::sym("done"));
            }
            let next = {
                let v = slot.lock();
                v[(idx + 1) % v.len()].clone()
            };
            match cx.call(
                &next,
                msg("hop:", vec![Value::Int(n - 1)]),
                Timeout::Infinity,
            ) {
                Err(CallError::Deadlock) => Ok(Value::sym("deadlock_detected")),
                Err(CallError::Raised(e)) => Err(e),
                Err(e) => Err(Value::str(format!("{e:?}"))),
                Ok(v) => Ok(v),
            }
        })
    };
    let a = rt.spawn(make(0, slot.clone()));
    let b = rt.spawn(make(1, slot.clone()));
    slot.lock().extend([a.clone(), b.clone()]);
    let a2 = a.clone();
    let r = rt
        .block_on(move |cx| cx.call(&a2, msg("hop:", vec![Value::Int(5)]), Timeout::Infinity))
        .unwrap()
        .unwrap();
    assert_eq!(r.as_sym().unwrap().as_str(), "deadlock_detected");

    // A three-actor cycle.
    let c = rt.spawn(make(2, slot.clone()));
    slot.lock().push(c);
    let a3 = a.clone();
    let r = rt
        .block_on(move |cx| cx.call(&a3, msg("hop:", vec![Value::Int(10)]), Timeout::Infinity))
        .unwrap()
        .unwrap();
    assert_eq!(r.as_sym().unwrap().as_str(), "deadlock_detected");

    // A chain that ends before cycling back is fine.
    let a4 = a.clone();
    let r = rt
        .block_on(move |cx| cx.call(&a4, msg("hop:", vec![Value::Int(2)]), Timeout::Infinity))
        .unwrap()
        .unwrap();
    assert_eq!(r.as_sym().unwrap().as_str(), "done");

    // A call to self through the runtime is a deadlock too (the interpreter runs self-sends
    // directly instead).
    let me = rt
        .block_on(|cx| {
            let me = cx.me().clone();
            matches!(
                cx.call(&me, msg("x", vec![]), Timeout::Infinity),
                Err(CallError::Deadlock)
            )
        })
        .unwrap();
    assert!(me);
}

/// A call times out on the manual clock; the target survives, and its late reply is dropped.
#[test]
fn calls_time_out_and_late_replies_are_dropped() {
    let rt = runtime(2);
    // Counts the naps begun, so the test can tell the second nap from the end of the first.
    let naps = Arc::new(AtomicUsize::new(0));
    let n = naps.clone();
    let slow = rt.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
        n.fetch_add(1, Ordering::SeqCst);
        let ms = m.args[0].as_int().unwrap_or(0) as u64;
        cx.sleep(ms).map_err(|_| Value::Nil)?;
        Ok(Value::sym("late"))
    }));
    let s = slow.clone();
    let caller = rt
        .spawn_task(move |cx| cx.call(&s, msg("nap:", vec![Value::Int(10_000)]), Timeout::Ms(100)));
    let cp = caller.proc().clone();
    wait_until("caller and target waiting", || {
        cp.status() == ProcStatus::Waiting && slow.status() == ProcStatus::Waiting
    });
    rt.advance(99);
    assert_eq!(cp.status(), ProcStatus::Waiting, "not yet at 99 ms");
    rt.advance(1);
    assert!(matches!(caller.join().unwrap(), Err(CallError::Timeout)));
    assert!(slow.is_alive());
    rt.advance(10_000);
    let s = slow.clone();
    let r = rt.spawn_task(move |cx| cx.call(&s, msg("nap:", vec![Value::Int(1)]), Timeout::Ms(50)));
    let rp = r.proc().clone();
    // The target must be asleep in the second nap (not still waking from the first) before
    // the clock moves, or the 1 ms deadline is set after the advance and never reached.
    wait_until("second caller and target waiting", || {
        rp.status() == ProcStatus::Waiting
            && naps.load(Ordering::SeqCst) == 2
            && slow.status() == ProcStatus::Waiting
    });
    rt.advance(1);
    assert_eq!(
        r.join().unwrap().unwrap().as_sym().unwrap().as_str(),
        "late"
    );
}

/// A caller whose call timed out goes on calling: the fired timeout keeps the reply slot
/// until the caller resumes (a pool worker's caller lends its own reference to the timeout
/// and gets it back then), and the next calls get their replies, with and without a
/// deadline; the late reply of the timed-out call reaches nobody.
#[test]
fn a_caller_calls_again_after_a_timeout() {
    let rt = runtime(1);
    let slow = rt.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
        let ms = m.args[0].as_int().unwrap_or(0) as u64;
        cx.sleep(ms).map_err(|_| Value::Nil)?;
        Ok(Value::Int(ms as i64))
    }));
    let fast = rt.spawn(Counter(0));
    let (s, f) = (slow.clone(), fast.clone());
    let caller = rt.spawn_task(move |cx| {
        let first = cx.call(&s, msg("nap:", vec![Value::Int(10_000)]), Timeout::Ms(100));
        let mut rest = Vec::new();
        for i in 0..20 {
            let t = if i % 2 == 0 {
                Timeout::Ms(60_000)
            } else {
                Timeout::Infinity
            };
            rest.push(int(&cx
                .call(&f, msg("add:", vec![Value::Int(1)]), t)
                .unwrap()));
        }
        (first, rest)
    });
    let cp = caller.proc().clone();
    wait_until("caller and target waiting", || {
        cp.status() == ProcStatus::Waiting && slow.status() == ProcStatus::Waiting
    });
    rt.advance(100);
    let (first, rest) = caller.join().unwrap();
    assert!(matches!(first, Err(CallError::Timeout)), "{first:?}");
    assert_eq!(rest, (1..=20).collect::<Vec<i64>>());
    rt.advance(10_000);
    let s = slow.clone();
    let r = rt.block_on(move |cx| cx.call(&s, msg("nap:", vec![Value::Int(0)]), Timeout::Infinity));
    assert_eq!(int(&r.unwrap().unwrap()), 0);
}

/// Requirement 6: FIFO per sender; a sync call after casts is a barrier.
#[test]
fn casts_are_fifo_per_sender_and_a_call_is_a_barrier() {
    let rt = runtime(2);
    let log = rt.spawn(handler({
        let mut seen: Vec<(i64, i64)> = Vec::new();
        move |_cx: &mut Cx<'_>, m: Message| match m.selector.as_str() {
            "note:from:" => {
                seen.push((int(&m.args[1]), int(&m.args[0])));
                Ok(Value::Nil)
            }
            _ => Ok(Value::list(
                seen.iter().map(|(s, i)| Value::Int(s * 1_000_000 + i)),
            )),
        }
    }));
    let senders: Vec<_> = (0..4)
        .map(|s| {
            let l = log.clone();
            rt.spawn_task(move |cx| {
                for i in 0..2000 {
                    cx.cast(&l, msg("note:from:", vec![Value::Int(i), Value::Int(s)]));
                }
                // The barrier: answered only after this sender's casts were handled.
                let all = cx.call(&l, msg("seen", vec![]), Timeout::Infinity).unwrap();
                let Value::List(ref items) = all else {
                    panic!("a list")
                };
                items.iter().filter(|v| int(v) / 1_000_000 == s).count()
            })
        })
        .collect();
    for t in senders {
        assert_eq!(t.join().unwrap(), 2000);
    }
    let l = log.clone();
    let all = rt
        .block_on(move |cx| cx.call(&l, msg("seen", vec![]), Timeout::Infinity))
        .unwrap();
    let Value::List(ref items) = all.unwrap() else {
        panic!("a list")
    };
    assert_eq!(items.len(), 8000);
    for s in 0..4 {
        let mine: Vec<i64> = items
            .iter()
            .map(int)
            .filter(|v| v / 1_000_000 == s)
            .map(|v| v % 1_000_000)
            .collect();
        assert_eq!(mine, (0..2000).collect::<Vec<_>>(), "sender {s} in order");
    }
}

/// A sync call hands the worker to the idle callee at once (it runs next, on the caller's
/// worker), ahead of work queued before the call; the caller's resumption queues behind that
/// work. One worker, so the order is deterministic.
#[test]
fn a_sync_call_runs_the_idle_callee_next_on_the_same_worker() {
    let rt = runtime(1);
    let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let recorder = |name: &'static str| {
        let order = order.clone();
        handler(move |_cx: &mut Cx<'_>, _m: Message| {
            order.lock().push(name);
            Ok(Value::Nil)
        })
    };
    let queued = rt.spawn(recorder("queued"));
    let callee = rt.spawn(recorder("callee"));
    let o = order.clone();
    rt.block_on(move |cx| {
        cx.cast(&queued, msg("note", vec![]));
        cx.call(&callee, msg("note", vec![]), Timeout::Infinity)
            .unwrap();
        o.lock().push("caller");
    })
    .unwrap();
    assert_eq!(*order.lock(), vec!["callee", "queued", "caller"]);
}

/// Sync round trips on one worker: the caller hands its idle callee to the worker (which
/// runs it at once on a kept runner coroutine) and the reply resumes the caller next. A chain
/// caller -> front -> back uses three coroutines at most, every call answers in order, and
/// none is left live afterwards (kept runners do not count as live).
#[test]
fn chained_round_trips_on_one_worker_reuse_runners_and_retire_them() {
    let rt = runtime(1);
    let peak = Arc::new(AtomicUsize::new(0));
    let p = peak.clone();
    let back = rt.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
        p.fetch_max(cx.rt().coroutines().0, Ordering::SeqCst);
        Ok(Value::Int(int(&m.args[0]) * 2))
    }));
    let front = rt.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
        let v = cx
            .call(&back, msg("double:", m.args.clone()), Timeout::Infinity)
            .map_err(|_| Value::Nil)?;
        Ok(Value::Int(int(&v) + 1))
    }));
    let sum = rt
        .block_on(move |cx| {
            (0..500)
                .map(|i| {
                    let v = cx.call(&front, msg("f:", vec![Value::Int(i)]), Timeout::Infinity);
                    int(&v.unwrap())
                })
                .sum::<i64>()
        })
        .unwrap();
    assert_eq!(sum, (0..500).map(|i| 2 * i + 1).sum::<i64>());
    assert_eq!(peak.load(Ordering::SeqCst), 3, "caller, front and back");
    wait_until("all coroutines retired", || rt.coroutines().0 == 0);
}

/// A panic in a handler is an actor crash: the caller gets actor_dead, the reason is data,
/// and the runtime goes on.
#[test]
fn a_panicking_handler_crashes_only_its_actor() {
    let rt = runtime(2);
    let bad = rt.spawn(handler(
        |_cx: &mut Cx<'_>, _m: Message| -> Result<Value, Value> { panic!("native bug") },
    ));
    let b = bad.clone();
    let r = rt
        .block_on(move |cx| cx.call(&b, msg("x", vec![]), Timeout::Infinity))
        .unwrap();
    assert!(matches!(r, Err(CallError::ActorDead)));
    assert!(!bad.is_alive());
    assert!(matches!(bad.exit_reason(), Some(ExitReason::Panic(ref m)) if &**m == "native bug"));
    // A panicking task reports its exit reason to the joiner.
    let j = rt.block_on(|_cx| -> i32 { panic!("task bug") });
    assert!(matches!(j, Err(JoinError::Exited(ExitReason::Panic(_)))));
    assert_eq!(rt.block_on(|_cx| 42).unwrap(), 42);
}

/// The stack cap: with room for 4 coroutines (one kept in reserve for processes someone is
/// blocked on), 30 processes that each stay suspended for a while all complete, 3 at a time
/// (work waits for a free stack; never more than the cap exist).
#[test]
fn work_waits_for_a_stack_when_the_cap_is_reached() {
    let rt = Runtime::new(Config {
        workers: 2,
        manual_clock: true,
        max_coroutines: 4,
        ..Config::default()
    })
    .unwrap();
    let over = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let (over, done) = (over.clone(), done.clone());
            rt.spawn_task(move |cx| {
                let (live, cap) = cx.rt().coroutines();
                if live > cap {
                    over.store(true, Ordering::SeqCst);
                }
                cx.sleep(10).unwrap();
                done.fetch_add(1, Ordering::SeqCst);
                i
            })
        })
        .collect();
    let procs: Vec<_> = tasks.iter().map(|t| t.proc().clone()).collect();
    let mut rounds = 0;
    for round in 1..=10u64 {
        wait_until("a full round of sleepers", || {
            procs
                .iter()
                .filter(|p| p.status() == ProcStatus::Waiting)
                .count()
                == 3
        });
        // Exactly three sleepers hold stacks (a fourth would be a fourth Waiting process). The
        // busy count is a snapshot of two counters (live minus spares): a runner that just
        // became a spare is subtracted a moment after its run ended, so wait for it to settle
        // instead of reading it once.
        wait_until("the busy count to settle at the three sleepers", || {
            rt.coroutines().0 <= 3
        });
        rt.advance(10);
        rounds += 1;
        wait_until("the round to finish", || {
            done.load(Ordering::SeqCst) >= 3 * round
        });
    }
    assert_eq!(rounds, 10);
    assert!(!over.load(Ordering::SeqCst));
    let total: i32 = tasks.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(total, (0..30).sum::<i32>());
}

/// At the cap, callers suspended on a server must not starve the server of a stack: the
/// reserve (1/8 of the cap) goes to processes someone is blocked on. 100 callers, room for 16
/// coroutines (2 in reserve: enough for the relay -> server chain), no timeouts and no clock
/// movement: everything completes.
#[test]
fn a_server_gets_a_stack_even_when_its_callers_hold_the_others() {
    let rt = Runtime::new(Config {
        workers: 2,
        manual_clock: true,
        max_coroutines: 16,
        ..Config::default()
    })
    .unwrap();
    let server = rt.spawn(Counter(0));
    let relay = rt.spawn(handler({
        let server = server.clone();
        move |cx: &mut Cx<'_>, m: Message| match cx.call(&server, m, Timeout::Infinity) {
            Ok(v) => Ok(v),
            Err(e) => Err(Value::str(format!("{e:?}"))),
        }
    }));
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            // Half call the server directly, half through a relay (a chain of two servers).
            let to = if i % 2 == 0 {
                server.clone()
            } else {
                relay.clone()
            };
            rt.spawn_task(move |cx| {
                cx.call(&to, msg("add:", vec![Value::Int(1)]), Timeout::Infinity)
                    .is_ok()
            })
        })
        .collect();
    let procs: Vec<_> = tasks.iter().map(|t| t.proc().clone()).collect();
    wait_until("every caller done", || procs.iter().all(|p| !p.is_alive()));
    assert!(tasks.into_iter().all(|t| t.join().unwrap()));
    let s = server.clone();
    let n = rt
        .block_on(move |cx| cx.call(&s, msg("get", vec![]), Timeout::Infinity))
        .unwrap();
    assert_eq!(int(&n.unwrap()), 100);
}

/// A blocking join on a worker thread is refused instead of stalling the worker.
#[test]
fn block_on_inside_a_process_is_refused() {
    let rt = runtime(1);
    let r = rt
        .block_on(|cx| {
            let inner = cx.rt().block_on(|_cx| 1);
            matches!(inner, Err(JoinError::OnWorkerThread))
        })
        .unwrap();
    assert!(r);
    // join_in suspends instead.
    let r = rt
        .block_on(|cx| {
            let t = cx.rt().spawn_task(|_cx| 7);
            t.join_in(cx).unwrap()
        })
        .unwrap();
    assert_eq!(r, 7);
}

/// Dropping the runtime while processes are suspended in calls does not hang.
#[test]
fn shutdown_with_suspended_processes_completes() {
    let rt = runtime(2);
    let silent = rt.spawn(handler(|cx: &mut Cx<'_>, _m: Message| {
        cx.sleep(1_000_000).map_err(|_| Value::Nil)?;
        Ok(Value::Nil)
    }));
    let callers: Vec<_> = (0..50)
        .map(|_| {
            let s = silent.clone();
            rt.spawn_task(move |cx| cx.call(&s, msg("x", vec![]), Timeout::Infinity))
        })
        .collect();
    wait_until("callers waiting", || {
        callers
            .iter()
            .all(|t| t.proc().status() == ProcStatus::Waiting)
    });
    rt.shutdown();
    for t in callers {
        // Either the caller is shut down first, or it first sees its callee die: both end it.
        let r = t.join();
        assert!(
            matches!(r, Err(JoinError::Exited(ExitReason::Shutdown)) | Ok(Err(_))),
            "caller neither shut down nor told its callee died"
        );
    }
}

/// Races between calls, casts, kills and stops on two workers: every call ends with a reply
/// or `actor_dead`, nothing hangs, and every process is gone at the end.
#[test]
fn kills_and_stops_racing_with_calls_never_hang() {
    let rt = runtime(2);
    for round in 0..5u64 {
        let actors: Vec<_> = (0..50).map(|_| rt.spawn(Counter(0))).collect();
        let callers: Vec<_> = (0..200u64)
            .map(|i| {
                let targets = actors.clone();
                rt.spawn_task(move |cx| {
                    let mut outcomes = (0u32, 0u32);
                    let mut x = i * 7919 + round;
                    for _ in 0..20 {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let t = &targets[(x >> 33) as usize % targets.len()];
                        if x % 3 == 0 {
                            cx.cast(t, msg("add:", vec![Value::Int(1)]));
                        }
                        match cx.call(t, msg("add:", vec![Value::Int(1)]), Timeout::Infinity) {
                            Ok(_) => outcomes.0 += 1,
                            Err(CallError::ActorDead) => outcomes.1 += 1,
                            Err(e) => panic!("unexpected {e:?}"),
                        }
                    }
                    outcomes
                })
            })
            .collect();
        // Kill or stop every other actor while the calls are in flight.
        for (k, a) in actors.iter().enumerate().filter(|(k, _)| k % 2 == 0) {
            if k % 4 == 0 {
                rt.kill(a);
            } else {
                rt.stop(a);
            }
        }
        let procs: Vec<_> = callers.iter().map(|t| t.proc().clone()).collect();
        wait_until("callers done", || procs.iter().all(|p| !p.is_alive()));
        let (ok, dead) = callers
            .into_iter()
            .map(|t| t.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        assert_eq!(ok + dead, 200 * 20);
        for a in actors.iter().skip(1).step_by(2) {
            assert!(a.is_alive(), "untouched actors survive");
            rt.kill(a);
        }
    }
    wait_until("all processes gone", || rt.process_count() == 0);
    wait_until("all coroutines retired", || rt.coroutines().0 == 0);
}

/// A runtime starts no worker thread until it is asked to or work is queued; a first
/// worker started early (`start_first_worker`, what `bt run` does before its program's
/// job is queued) takes the first work, and no second one starts for it.
#[test]
fn an_early_first_worker_takes_the_first_work() {
    let rt = runtime(2);
    assert_eq!(rt.started_workers(), 0);
    rt.start_first_worker();
    assert_eq!(rt.started_workers(), 1);
    let t = rt.spawn_task(|_| 7);
    assert_eq!(t.join().unwrap(), 7);
    assert_eq!(rt.started_workers(), 1);
    rt.start_first_worker();
    assert_eq!(rt.started_workers(), 1);
}

/// Work queued while the early first worker is busy starts the second, as work queued
/// while every started worker is busy does: the two tasks run at once (the first, running,
/// waits without yielding its worker for the second to run).
#[test]
fn work_queued_while_the_early_worker_is_busy_starts_another() {
    let rt = runtime(2);
    rt.start_first_worker();
    let running = Arc::new(AtomicBool::new(false));
    let flag = Arc::new(AtomicBool::new(false));
    let (r2, f2) = (running.clone(), flag.clone());
    let a = rt.spawn_task(move |_| {
        r2.store(true, Ordering::SeqCst);
        let start = std::time::Instant::now();
        while !f2.load(Ordering::SeqCst) {
            if start.elapsed() > std::time::Duration::from_secs(60) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    });
    wait_until("the first task runs", || running.load(Ordering::SeqCst));
    let f3 = flag.clone();
    let b = rt.spawn_task(move |_| f3.store(true, Ordering::SeqCst));
    b.join().unwrap();
    assert!(a.join().unwrap(), "the second task ran beside the first");
    assert_eq!(rt.started_workers(), 2);
}
