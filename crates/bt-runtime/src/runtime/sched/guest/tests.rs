//! The guest's unit tests: claimed and delivered calls, lent jobs and their fallback,
//! kept processes.

use super::*;
use crate::runtime::{handler, Config, Runtime};
use crate::value::Value;
use std::sync::atomic::AtomicUsize;

/// The guest's fast path is conditional: a call claims the idle process and hands the
/// runner its message (`process::claim_idle`), and anything else delivers the message to
/// the mailbox as before. Both must give the same run.
#[test]
fn claimed_and_delivered_calls_run_the_same() {
    let rt = Runtime::new(Config::default()).unwrap();
    let h = rt.handle();
    let jobs = Arc::new(AtomicUsize::new(0));
    let extras = Arc::new(AtomicUsize::new(0));
    let done = GuestDone::new();
    let (j, x, d) = (jobs.clone(), extras.clone(), done.clone());
    let p = h.spawn(handler(move |cx, msg| {
        if msg.selector.as_str() == "extra" {
            x.fetch_add(1, Ordering::SeqCst);
            return Ok(Value::Nil);
        }
        // A message to itself arrives while the process runs: handled in the same
        // run, before the process idles again.
        let me = cx.me().clone();
        cx.cast(&me, Message::named("extra", Vec::new()));
        j.fetch_add(1, Ordering::SeqCst);
        d.set_local();
        Ok(Value::Nil)
    }));
    let mut stacks = GuestStacks::default();
    for i in 1..=3 {
        done.reset();
        // The first call starts the runner through the mailbox; later calls claim.
        let claimable = stacks.idle.as_ref().is_some_and(|w| w.1.is_some());
        assert_eq!(claimable, i > 1);
        let r = h.send_and_drive(&mut stacks, &p, Message::named("job", Vec::new()), &done);
        assert!(matches!(r, Ok(true)));
        assert!(done.is_set());
        assert_eq!(jobs.load(Ordering::SeqCst), i);
        assert_eq!(extras.load(Ordering::SeqCst), i);
        assert_eq!(p.status(), crate::runtime::ProcStatus::Idle);
    }
    // A killed process cannot be claimed and takes no message.
    h.kill(&p);
    done.reset();
    let r = h.send_and_drive(&mut stacks, &p, Message::named("job", Vec::new()), &done);
    assert!(matches!(r, Ok(false)));
    assert_eq!(jobs.load(Ordering::SeqCst), 3);
    drop(stacks);
    rt.shutdown();
}

/// A behaviour that runs lent jobs and, for the delivered path, job messages; each job
/// casts a message to its own process and signals the caller.
struct Lender {
    lent: Arc<AtomicUsize>,
    mailed: Arc<AtomicUsize>,
    extras: Arc<AtomicUsize>,
    done: GuestDone,
}

impl Lender {
    fn job(&self, cx: &mut Cx<'_>, counter: &AtomicUsize) {
        let me = cx.me().clone();
        cx.cast(&me, Message::named("extra", Vec::new()));
        counter.fetch_add(1, Ordering::SeqCst);
        self.done.set_local();
    }
}

impl Behaviour for Lender {
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        match msg.selector.as_str() {
            "extra" => {
                self.extras.fetch_add(1, Ordering::SeqCst);
            }
            _ => self.job(cx, &self.mailed),
        }
        Ok(Value::Nil)
    }

    fn run_job(&mut self, cx: &mut Cx<'_>, job: LentJob) {
        // The job is the address of `done`'s flag holder in this test: lent as is.
        assert_eq!(job.0 as usize, 0x1000);
        self.job(cx, &self.lent);
    }
}

/// `drive_job` lends the job when it can claim the process and falls back to a message
/// otherwise (the first call starts the runner through the mailbox); both run the job
/// once and handle what it sent meanwhile in the same run.
#[test]
fn lent_jobs_and_their_fallback_messages_run_the_same() {
    let rt = Runtime::new(Config::default()).unwrap();
    let h = rt.handle();
    let lent = Arc::new(AtomicUsize::new(0));
    let mailed = Arc::new(AtomicUsize::new(0));
    let extras = Arc::new(AtomicUsize::new(0));
    let done = GuestDone::new();
    let p = h.spawn(Lender {
        lent: lent.clone(),
        mailed: mailed.clone(),
        extras: extras.clone(),
        done: done.clone(),
    });
    let mut stacks = GuestStacks::default();
    let job = LentJob(0x1000 as *mut ());
    let mut fallbacks = 0;
    for i in 1..=3 {
        done.reset();
        let mut fallback = || {
            fallbacks += 1;
            Some(Message::named("job", Vec::new()))
        };
        let r = h.drive_job(&mut stacks, &p, job, &mut fallback, &done);
        assert!(matches!(r, Ok(true)));
        assert!(done.is_set());
        // The first call has no runner yet: delivered; later ones claim and lend.
        let ran = (mailed.load(Ordering::SeqCst), lent.load(Ordering::SeqCst));
        assert_eq!(ran, (1, i - 1));
        assert_eq!(extras.load(Ordering::SeqCst), i);
        assert_eq!(p.status(), crate::runtime::ProcStatus::Idle);
    }
    assert_eq!(fallbacks, 1);
    // A killed process is not claimed: the fallback's message is refused, nothing runs.
    h.kill(&p);
    done.reset();
    let mut fallback = || {
        fallbacks += 1;
        Some(Message::named("job", Vec::new()))
    };
    let r = h.drive_job(&mut stacks, &p, job, &mut fallback, &done);
    assert!(matches!(r, Ok(false)));
    assert_eq!(fallbacks, 2);
    assert_eq!(
        (mailed.load(Ordering::SeqCst), lent.load(Ordering::SeqCst)),
        (1, 2)
    );
    drop(stacks);
    rt.shutdown();
}

/// A behaviour that logs what it runs, in order; lent jobs also log the process's
/// status as seen from inside the job.
struct Keeper {
    log: Arc<parking_lot::Mutex<Vec<String>>>,
    handled: std::sync::mpsc::Sender<()>,
    done: GuestDone,
}

impl Behaviour for Keeper {
    fn handle(&mut self, _cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        let sel = msg.selector.as_str().to_string();
        self.log.lock().push(sel.clone());
        if sel == "job" {
            // `set`, not `set_local`: a delivered job may run on a pool worker.
            self.done.set();
        } else {
            let _ = self.handled.send(());
        }
        Ok(Value::Nil)
    }

    fn run_job(&mut self, cx: &mut Cx<'_>, _job: LentJob) {
        let st = cx.me().status();
        self.log.lock().push(format!("lent {st:?}"));
        self.done.set_local();
    }
}

/// Whether the parked runner keeps `p`'s behaviour (`Sched::Lent`).
fn keeps(stacks: &GuestStacks) -> bool {
    let Some(IdleWorker(_, Some(r))) = stacks.idle.as_ref() else {
        return false;
    };
    let b = r.io.kept.take();
    let has = b.is_some();
    r.io.kept.set(b);
    has
}

/// after a lent job the runner keeps the process claimed (`Sched::Lent`) and
/// the next jobs run without a claim or a release. Between calls the process reads Idle
/// (Runnable inside a job); mail queued meanwhile is handled before the next job, in
/// order; a kill between calls leaves nothing to run; `GuestStacks::release` gives the
/// behaviour back so that the pool can run the process.
#[test]
fn kept_processes_run_jobs_without_a_claim_and_give_way_to_mail_and_kills() {
    use crate::runtime::ProcStatus;
    let rt = Runtime::new(Config::default()).unwrap();
    let h = rt.handle();
    let log = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let done = GuestDone::new();
    let p = h.spawn(Keeper {
        log: log.clone(),
        handled: tx,
        done: done.clone(),
    });
    let mut stacks = GuestStacks::default();
    let job = LentJob(0x1000 as *mut ());
    let call = |stacks: &mut GuestStacks| {
        done.reset();
        let mut fallback = || Some(Message::named("job", Vec::new()));
        let r = h.drive_job(stacks, &p, job, &mut fallback, &done);
        assert!(matches!(r, Ok(true)));
        assert!(done.is_set());
    };
    // Delivered (no runner yet), then claimed and kept, then resumed with no lock.
    for _ in 0..4 {
        call(&mut stacks);
        assert_eq!(p.status(), ProcStatus::Idle);
    }
    assert!(keeps(&stacks));
    let lent = "lent Runnable".to_string();
    assert_eq!(*log.lock(), ["job", &lent, &lent, &lent]);
    // Mail between calls: the process reads Runnable (something to do), and the next
    // call handles it before its job (given back, delivered, then kept again).
    assert!(h.cast(&p, Message::named("extra", Vec::new())));
    assert_eq!(p.status(), ProcStatus::Runnable);
    assert_eq!(p.mailbox_len(), 1);
    call(&mut stacks);
    assert_eq!(p.status(), ProcStatus::Idle);
    assert_eq!(p.mailbox_len(), 0);
    assert!(!keeps(&stacks));
    call(&mut stacks);
    assert!(keeps(&stacks));
    assert_eq!(log.lock()[4..], ["extra", "job", &lent]);
    // Given back: the pool runs the process, with no guest call (a sync call from a
    // task: its reply comes once the process is idle again).
    rx.recv().unwrap(); // "extra"
    stacks.release();
    assert!(!keeps(&stacks));
    assert_eq!(p.status(), ProcStatus::Idle);
    let q = p.clone();
    let t = h.spawn_task(move |cx| {
        let m = Message::named("pooled", Vec::new());
        cx.call(&q, m, crate::runtime::Timeout::Infinity).is_ok()
    });
    assert!(t.join().unwrap());
    rx.recv().unwrap();
    assert_eq!(p.status(), ProcStatus::Idle);
    assert_eq!(log.lock()[7..], ["pooled"]);
    call(&mut stacks);
    call(&mut stacks);
    assert!(keeps(&stacks));
    // A kill between calls: nothing runs, the fallback's message is refused.
    h.kill(&p);
    assert_eq!(p.status(), ProcStatus::Dead);
    done.reset();
    let mut fallback = || Some(Message::named("job", Vec::new()));
    let r = h.drive_job(&mut stacks, &p, job, &mut fallback, &done);
    assert!(matches!(r, Ok(false)));
    assert!(!keeps(&stacks));
    assert_eq!(log.lock().len(), 10);
    drop(stacks);
    rt.shutdown();
}

/// A behaviour whose lent jobs wait for a reply from another process (the runner suspends
/// mid-job) on every other call; each job signals the caller's signal of the moment.
struct Waiter {
    echo: ProcRef,
    jobs: Arc<AtomicUsize>,
    done: Arc<parking_lot::Mutex<Option<GuestDone>>>,
}

impl Waiter {
    fn wake_caller(&self) {
        if let Some(d) = self.done.lock().as_ref() {
            d.set();
        }
    }
}

impl Behaviour for Waiter {
    fn handle(&mut self, _cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        self.jobs.fetch_add(1, Ordering::SeqCst);
        if msg.selector.as_str() == "job" {
            self.wake_caller();
        }
        Ok(Value::Nil)
    }

    fn run_job(&mut self, cx: &mut Cx<'_>, _job: LentJob) {
        let n = self.jobs.fetch_add(1, Ordering::SeqCst);
        if n % 2 == 1 {
            let m = Message::named("echo", vec![Value::Int(n as i64)]);
            let r = cx.call(&self.echo, m, crate::runtime::Timeout::Infinity);
            assert_eq!(r.ok().and_then(|v| v.as_i64()), Some(n as i64));
        }
        self.wake_caller();
    }
}

/// Calls this thread started through `call_kept`.
fn kept_entries() -> usize {
    KEPT_ENTRIES.with(|n| n.get())
}

/// The kept-process entry (`call_kept`) is taken by every call on the thread of the last
/// call once the process is kept; a job that suspends in it (a sync call) is driven to its
/// end by the guest's loop; a call from another thread goes the ordinary way (and registers
/// that thread), after which that thread's calls take the entry again; mail queued between
/// calls sends the next call the ordinary way, which handles the mail first.
#[test]
fn kept_calls_enter_the_parked_runner_and_fall_back_when_they_cannot() {
    let rt = Runtime::new(Config::default()).unwrap();
    let h = rt.handle();
    let echo = h.spawn(handler(|_cx, msg| Ok(msg.args[0].clone())));
    let jobs = Arc::new(AtomicUsize::new(0));
    let signal = Arc::new(parking_lot::Mutex::new(None));
    let p = h.spawn(Waiter {
        echo,
        jobs: jobs.clone(),
        done: signal.clone(),
    });
    let stacks = parking_lot::Mutex::new(GuestStacks::default());
    // One call from the calling thread with its own signal (a guest call's signal is the
    // calling thread's); answers whether it entered through `call_kept`.
    let call = |done: &GuestDone| {
        let before = kept_entries();
        done.reset();
        *signal.lock() = Some(done.clone());
        let job = LentJob(0x1000 as *mut ());
        let mut fallback = || Some(Message::named("job", Vec::new()));
        let r = h.drive_job(&mut stacks.lock(), &p, job, &mut fallback, done);
        assert!(matches!(r, Ok(true)));
        assert!(done.is_set());
        kept_entries() > before
    };
    let done = GuestDone::new();
    // Delivered, claimed, then kept: the entry from the third call on, also for the jobs
    // that wait for their reply (the fourth and sixth: odd job numbers).
    let entered: Vec<bool> = (0..6).map(|_| call(&done)).collect();
    assert_eq!(entered, [false, false, true, true, true, true]);
    assert_eq!(jobs.load(Ordering::SeqCst), 6);
    assert!(keeps(&stacks.lock()));
    assert_eq!(p.status(), crate::runtime::ProcStatus::Idle);
    // Another thread: the ordinary way first (the process stays kept), then the entry.
    std::thread::scope(|s| {
        s.spawn(|| {
            let mine = GuestDone::new();
            assert_eq!([call(&mine), call(&mine), call(&mine)], [false, true, true]);
        });
    });
    assert_eq!(jobs.load(Ordering::SeqCst), 9);
    // Back on this thread: ordinary once (registers it again), then the entry.
    assert_eq!([call(&done), call(&done)], [false, true]);
    // Mail queued between calls: the ordinary way gives the process back, the mail is
    // handled (by `handle`), then the job; the process is claimed, then kept again.
    assert!(h.cast(&p, Message::named("extra", Vec::new())));
    assert!(!call(&done));
    assert_eq!(jobs.load(Ordering::SeqCst), 13);
    assert!(!call(&done));
    assert!(call(&done));
    assert_eq!(jobs.load(Ordering::SeqCst), 15);
    drop(stacks);
    rt.shutdown();
}
