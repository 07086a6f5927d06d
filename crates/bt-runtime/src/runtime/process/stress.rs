//! Races on the process record: many senders against an actor that keeps going idle, casts
//! and sync calls (claims) mixed, kills racing a caller's registration of its reply slot and
//! a claim of the callee. Each runs many short rounds; a lost wake-up shows as a message
//! never handled (a count that stops short, a call that times out), a double run as two
//! handlers of one actor inside at once, a broken hand-off as a message out of its sender's
//! order. The ones that need no outside thread run under the deterministic scheduler too;
//! it interleaves processes at their suspensions only, so it checks what happens between
//! them (claims, hand-offs, a late answer against a reused reply slot: a reuse that ignores
//! the slot's counts fails it at once) and not a race inside a critical section (a go-idle
//! that drops the lock before marking the process idle passes it and fails the threaded
//! tests).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::runtime::types::CallError;
use crate::runtime::{
    handler, Config, Cx, Message, ProcRef, RtHandle, Runtime, SimConfig, Timeout,
};
use crate::value::Value;

/// What a counting actor saw: messages handled, handlers found running twice, messages out
/// of their sender's order.
#[derive(Default)]
struct Seen {
    handled: AtomicU64,
    double_runs: AtomicU64,
    out_of_order: AtomicU64,
    inside: AtomicBool,
}

/// An actor that counts `add:` messages (argument: sender id × 1,000,000 + sequence number)
/// and checks that no two of its handlers overlap and each sender's numbers rise.
fn counter(h: &RtHandle, seen: &Arc<Seen>) -> ProcRef {
    let seen = seen.clone();
    let mut last: HashMap<i64, i64> = HashMap::new();
    h.spawn(handler(move |_cx: &mut Cx<'_>, m: Message| {
        if seen.inside.swap(true, Ordering::SeqCst) {
            seen.double_runs.fetch_add(1, Ordering::SeqCst);
        }
        let r = match m.selector.as_str() {
            "add:" => {
                let n = m.args[0].as_int().unwrap_or(-1);
                let (who, seq) = (n / 1_000_000, n % 1_000_000);
                if last.insert(who, seq).is_some_and(|prev| prev >= seq) {
                    seen.out_of_order.fetch_add(1, Ordering::SeqCst);
                }
                seen.handled.fetch_add(1, Ordering::SeqCst);
                Value::Int(n)
            }
            _ => Value::Int(seen.handled.load(Ordering::SeqCst) as i64),
        };
        seen.inside.store(false, Ordering::SeqCst);
        Ok(r)
    }))
}

fn add(who: i64, seq: i64) -> Message {
    Message::named("add:", vec![Value::Int(who * 1_000_000 + seq)])
}

/// Waits (without sending anything, which would wake the actor) until `seen` counted
/// `want` messages; false after a few seconds.
fn settles(seen: &Seen, want: u64) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if seen.handled.load(Ordering::SeqCst) == want {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
}

/// One round of senders racing an actor: `tasks` pool processes each send `per` messages
/// (every third a sync call, the rest casts) and `threads` OS threads cast `per` each.
/// Answers how many messages were sent.
fn race_round(h: &RtHandle, target: &ProcRef, tasks: i64, threads: i64, per: i64) -> u64 {
    let senders: Vec<_> = (0..tasks)
        .map(|who| {
            let t = target.clone();
            h.spawn_task(move |cx| {
                for seq in 1..=per {
                    if seq % 3 == 0 {
                        match cx.call(&t, add(who, seq), Timeout::Ms(20_000)) {
                            Ok(Value::Int(n)) => assert_eq!(n, who * 1_000_000 + seq),
                            other => panic!("call {who}/{seq}: {other:?}"),
                        }
                    } else {
                        assert!(cx.cast(&t, add(who, seq)));
                    }
                    if seq % 7 == 0 {
                        // Let the actor drain and go idle between bursts.
                        cx.yield_now().unwrap();
                    }
                }
            })
        })
        .collect();
    let outside: Vec<_> = (0..threads)
        .map(|k| {
            let (h, t) = (h.clone(), target.clone());
            std::thread::spawn(move || {
                for seq in 1..=per {
                    assert!(h.cast(&t, add(tasks + k, seq)));
                    if seq % 5 == 0 {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    for t in outside {
        t.join().unwrap();
    }
    ((tasks + threads) * per) as u64
}

fn assert_clean(seen: &Seen, round: usize) {
    assert_eq!(
        seen.double_runs.load(Ordering::SeqCst),
        0,
        "round {round}: double run"
    );
    assert_eq!(
        seen.out_of_order.load(Ordering::SeqCst),
        0,
        "round {round}: out of order"
    );
}

/// Pool tasks (casting and calling: claims) and OS threads (casting) against one actor that
/// goes idle between bursts: every message is handled once, in its sender's order, and the
/// actor ends idle with nothing left (no lost wake-up, no double run).
#[test]
fn many_senders_race_an_actor_going_idle() {
    let rt = Runtime::new(Config {
        workers: 2,
        ..Config::default()
    })
    .unwrap();
    let h = rt.handle();
    for round in 0..600 {
        let seen = Arc::new(Seen::default());
        let target = counter(&h, &seen);
        let sent = race_round(&h, &target, 4, 2, 24);
        assert!(
            settles(&seen, sent),
            "round {round}: {} of {sent} handled (lost wake-up)",
            seen.handled.load(Ordering::SeqCst)
        );
        assert_clean(&seen, round);
        // Idle again and answering.
        let t = target.clone();
        let n = h
            .spawn_task(move |cx| cx.call(&t, Message::named("count", vec![]), Timeout::Ms(20_000)))
            .join()
            .unwrap();
        assert!(
            matches!(n, Ok(Value::Int(c)) if c as u64 == sent),
            "round {round}: {n:?}"
        );
    }
    rt.shutdown();
}

/// Sync calls through an actor that itself calls a second actor and casts to a third, from
/// many tasks at once: each claim or queueing answers the right caller.
#[test]
fn nested_calls_and_casts_answer_the_right_caller() {
    let rt = Runtime::new(Config {
        workers: 2,
        ..Config::default()
    })
    .unwrap();
    let h = rt.handle();
    for round in 0..150 {
        let seen_b = Arc::new(Seen::default());
        let seen_c = Arc::new(Seen::default());
        let b = counter(&h, &seen_b);
        let c = counter(&h, &seen_c);
        let a = h.spawn(handler(move |cx: &mut Cx<'_>, m: Message| {
            let n = m.args[0].as_int().unwrap_or(-1);
            cx.cast(&c, add(n / 1_000_000, n % 1_000_000));
            match cx.call(&b, add(n / 1_000_000, n % 1_000_000), Timeout::Ms(20_000)) {
                Ok(Value::Int(r)) if r == n => Ok(Value::Int(r + 1)),
                _ => Ok(Value::Int(-1)),
            }
        }));
        let callers: Vec<_> = (0..6)
            .map(|who| {
                let a = a.clone();
                h.spawn_task(move |cx| {
                    for seq in 1..=15 {
                        let n = who * 1_000_000 + seq;
                        let r = cx.call(
                            &a,
                            Message::named("via:", vec![Value::Int(n)]),
                            Timeout::Ms(20_000),
                        );
                        assert!(
                            matches!(r, Ok(Value::Int(x)) if x == n + 1),
                            "{who}/{seq}: {r:?}"
                        );
                    }
                })
            })
            .collect();
        for t in callers {
            t.join().unwrap();
        }
        assert!(settles(&seen_b, 90), "round {round}: b");
        assert!(settles(&seen_c, 90), "round {round}: c (lost wake-up)");
        assert_clean(&seen_b, round);
        assert_clean(&seen_c, round);
    }
    rt.shutdown();
}

/// A caller killed while it registers its reply slot and calls: its task ends (killed),
/// never hangs, and the callee it was calling stays sound and answers the next caller. A
/// callee killed while calls claim it: each caller gets its answer or `actor_dead`.
#[test]
fn kills_race_calls_and_claims() {
    let rt = Runtime::new(Config {
        workers: 2,
        ..Config::default()
    })
    .unwrap();
    let h = rt.handle();
    for round in 0..500u64 {
        let seen = Arc::new(Seen::default());
        let callee = counter(&h, &seen);
        let t = callee.clone();
        let caller = h.spawn_task(move |cx| {
            let mut seq = 0;
            loop {
                seq += 1;
                if cx.call(&t, add(0, seq), Timeout::Ms(20_000)).is_err() {
                    return seq;
                }
            }
        });
        // Let it run a little (round-dependent), then kill the caller.
        for _ in 0..(round % 13) * 50 {
            std::hint::spin_loop();
        }
        if round % 4 == 3 {
            std::thread::yield_now();
        }
        assert!(h.kill(caller.proc()) || !caller.proc().is_alive());
        assert!(
            caller.join().is_err(),
            "round {round}: the killed caller finished"
        );
        let t = callee.clone();
        let r = h
            .spawn_task(move |cx| cx.call(&t, Message::named("count", vec![]), Timeout::Ms(20_000)))
            .join()
            .unwrap();
        assert!(
            matches!(r, Ok(Value::Int(_))),
            "round {round}: callee after kill: {r:?}"
        );
        assert_clean(&seen, round as usize);

        // Callers racing the callee's kill.
        let callers: Vec<_> = (0..3)
            .map(|who| {
                let t = callee.clone();
                h.spawn_task(move |cx| {
                    for seq in 1..=40 {
                        match cx.call(&t, add(who + 1, seq), Timeout::Ms(20_000)) {
                            Ok(_) => {}
                            Err(CallError::ActorDead) => return,
                            Err(e) => panic!("{who}/{seq}: {e:?}"),
                        }
                    }
                })
            })
            .collect();
        for _ in 0..(round % 7) * 100 {
            std::hint::spin_loop();
        }
        h.kill(&callee);
        for c in callers {
            c.join().unwrap();
        }
        assert_clean(&seen, round as usize);
    }
    rt.shutdown();
}

/// The races above that need no outside thread, under the deterministic scheduler with
/// many seeds (random walks and PCT): every message handled once and in order, callers of a
/// killed callee answered `actor_dead`, a killed caller's task ending.
#[test]
fn the_races_hold_under_the_deterministic_scheduler() {
    for seed in 0..64u64 {
        let rt = Runtime::new(Config {
            sim: Some(SimConfig::new(seed)),
            ..Config::default()
        })
        .unwrap();
        let h = rt.handle();
        let seen = Arc::new(Seen::default());
        let target = counter(&h, &seen);
        let sent = race_round(&h, &target, 4, 0, 12);
        let t = target.clone();
        let n = h
            .spawn_task(move |cx| cx.call(&t, Message::named("count", vec![]), Timeout::Infinity))
            .join()
            .unwrap();
        assert!(
            matches!(n, Ok(Value::Int(c)) if c as u64 == sent),
            "seed {seed}: {n:?}"
        );
        assert_clean(&seen, seed as usize);

        // A task kills a caller and the callee while calls are in flight.
        let t = target.clone();
        let caller = h.spawn_task(move |cx| {
            for seq in 100..400 {
                if cx.call(&t, add(0, seq), Timeout::Infinity).is_err() {
                    return;
                }
            }
        });
        let callers: Vec<_> = (0..3)
            .map(|who| {
                let t = target.clone();
                h.spawn_task(move |cx| {
                    for seq in 1..=20 {
                        match cx.call(&t, add(who + 10, seq), Timeout::Infinity) {
                            Ok(_) => {}
                            Err(CallError::ActorDead) => return,
                            Err(e) => panic!("{who}/{seq}: {e:?}"),
                        }
                    }
                })
            })
            .collect();
        let (cp, tp) = (caller.proc().clone(), target.clone());
        h.spawn_task(move |cx| {
            cx.yield_now().ok();
            cx.rt().kill(&cp);
            cx.yield_now().ok();
            cx.rt().kill(&tp);
        })
        .join()
        .unwrap();
        // Killed or done: it ends either way.
        let _ = caller.join();
        for c in callers {
            c.join().unwrap();
        }
        assert_clean(&seen, seed as usize);
        rt.shutdown();
    }
}

/// Calls that time out while their callee still handles them, then answer late, mixed with
/// calls answered in time, from several callers: a caller gets its own call's answer or a
/// timeout, never the late answer of an earlier call (the reply slot an answer hands back
/// is reused only once nobody else holds it). Answers how many calls timed out.
fn late_answers(cfg: Config, per: i64) -> i64 {
    let rt = Runtime::new(cfg).unwrap();
    let h = rt.handle();
    let callee = h.spawn(handler(|cx: &mut Cx<'_>, m: Message| {
        let n = m.args[0].as_int().unwrap_or(-1);
        match n % 4 {
            0 => cx.sleep(2).map_err(|_| Value::Nil)?,
            1 => {
                for _ in 0..(n % 1000) * 20 {
                    std::hint::spin_loop();
                }
            }
            _ => {}
        }
        Ok(Value::Int(n))
    }));
    let callers: Vec<_> = (0..4)
        .map(|who| {
            let t = callee.clone();
            h.spawn_task(move |cx| {
                let (mut answered, mut timed_out) = (0, 0);
                for seq in 0..per {
                    let n = who * 1_000_000 + seq;
                    let t_out = if seq % 3 == 0 {
                        Timeout::Ms(1)
                    } else {
                        Timeout::Ms(20_000)
                    };
                    match cx.call(&t, Message::named("echo:", vec![Value::Int(n)]), t_out) {
                        Ok(Value::Int(r)) => {
                            assert_eq!(r, n, "caller {who} got another call's answer");
                            answered += 1;
                        }
                        Err(CallError::Timeout) => timed_out += 1,
                        other => panic!("{who}/{seq}: {other:?}"),
                    }
                }
                (answered, timed_out)
            })
        })
        .collect();
    let mut late = 0;
    for c in callers {
        let (answered, timed_out) = c.join().unwrap();
        assert_eq!(answered + timed_out, per);
        assert!(
            timed_out <= (per + 2) / 3,
            "the calls with a long timeout all answer"
        );
        late += timed_out;
    }
    rt.shutdown();
    late
}

/// [`late_answers`] on two workers.
#[test]
fn late_answers_never_reach_a_later_call() {
    late_answers(
        Config {
            workers: 2,
            ..Config::default()
        },
        400,
    );
}

/// [`late_answers`] under the deterministic scheduler, whose virtual clock makes the short
/// timeouts fire while the callee sleeps: some calls time out under every seed.
#[test]
fn late_answers_never_reach_a_later_call_under_the_deterministic_scheduler() {
    for seed in 0..24u64 {
        let late = late_answers(
            Config {
                sim: Some(SimConfig::new(seed)),
                ..Config::default()
            },
            60,
        );
        assert!(late > 0, "seed {seed}: no call timed out");
    }
}
