//! Lending a process to the guest thread that drives it (`sched::guest`): the guest
//! claims an idle process in one lock and runs one message or job on its runner's stack
//! with the behaviour in hand ([`claim_idle`], [`run_lent`], [`run_kept_job`]), then
//! releases it the way `actor_loop` would.
//!
//! **Kept**. A process claimed for a job is marked `Sched::Lent` instead of
//! `Running`: after the job the runner keeps its behaviour (parked with the runner between
//! its owner's calls) and the next call's job runs with no lock at all ([`resume_kept`]:
//! two loads and a store) — until something is queued for the process (`Proc::lent_mail`,
//! set by `process::note_queued` under the lock by whoever queues mail, a signal or a
//! stop), it exits, or the guest gives it back ([`unlend`]: the runner ends, or its owner
//! reaches the process another way). The case this serves is an embedder's script call:
//! the main process receives nothing but its owner's jobs, so the claim and the release
//! (four locked read-modify-writes per call) are paid once, not per call. To the rest of
//! the runtime a kept process is a running one (senders queue and do not schedule it)
//! whose status reads Idle between calls (`Proc::lent_busy`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::runtime::spin::ProcGuard;

use super::run::{actor_loop, stop_after_message};
use super::{finish, panic_message, Behaviour, Inner, LentJob, ProcRef, Sched};
use crate::runtime::cx::Cx;
use crate::runtime::sched::Shared;
use crate::runtime::types::{ExitReason, Message};

/// Claims an idle actor process with nothing queued for the calling thread's guest runner
/// (`sched::guest`), in one lock: marks it running and lends its behaviour out, so the
/// guest hands it one message directly ([`run_lent`]) instead of queueing the message and
/// scheduling the process (the lock that delivers it and the lock in which `run_body` takes
/// it back out become this one). `None` when the process is not idle, has mail or control
/// signals, or no longer accepts messages: the caller delivers the ordinary way.
///
/// With `keep` (a lent job) the process is marked `Sched::Lent` and busy: the guest keeps
/// it claimed after the job ([`run_kept_job`]) and runs the next calls' jobs without a lock
/// ([`resume_kept`]) until something is queued for it, it exits, or the guest gives it back
/// ([`unlend`]).
#[inline]
pub(crate) fn claim_idle(p: &ProcRef, keep: bool) -> Option<Box<dyn Behaviour>> {
    let mut g = p.0.inner.lock();
    if !g.accepting
        || g.reason.is_some()
        || g.sched != Sched::Idle
        || g.mailbox.len() != 0
        || g.has_control()
        || g.body.is_none()
    {
        return None;
    }
    let b = g.body.take()?;
    if keep {
        p.0.lent_busy.store(true, Ordering::Relaxed);
        g.sched = Sched::Lent;
    } else {
        g.sched = Sched::Running;
    }
    // Always empty for an idle actor (its last run cleared it); no drop when it is.
    if g.current.is_some() {
        g.current = None;
    }
    Some(b)
}

/// The start of a call on a process its guest kept claimed (`Sched::Lent`, the behaviour in
/// the guest's hands): true, with the process marked busy, when nothing was queued for it
/// since and it is alive — the call then runs its job with no lock at all. False: the guest
/// gives the behaviour back first ([`unlend`]) and the call goes the ordinary way.
#[inline(always)]
pub(crate) fn resume_kept(p: &ProcRef) -> bool {
    if p.0.lent_mail.load(Ordering::Acquire) || !p.is_alive() {
        return false;
    }
    p.0.lent_busy.store(true, Ordering::Relaxed);
    true
}

/// Gives a kept process (`Sched::Lent`) its behaviour back: it becomes idle, or scheduled
/// when something was queued for it meanwhile (its Run task goes on the guest queue when
/// this runs inside a guest call); a process that exited meanwhile just drops it.
pub(crate) fn unlend(shared: &Shared, p: &ProcRef, b: Box<dyn Behaviour>) {
    let schedule = {
        let mut g = p.0.inner.lock();
        p.0.lent_mail.store(false, Ordering::Relaxed);
        p.0.lent_busy.store(false, Ordering::Relaxed);
        if g.reason.is_some() || g.sched != Sched::Lent {
            drop(g);
            drop(b);
            return;
        }
        g.body = Some(b);
        if g.mailbox.len() != 0 || g.has_control() {
            g.sched = Sched::Scheduled;
            true
        } else {
            g.mailbox.release();
            g.sched = Sched::Idle;
            false
        }
    };
    if schedule {
        shared.schedule(p.clone());
    }
}

/// The run of a process claimed by [`claim_idle`]: `msg` (a cast: no reply) is handled as
/// the first message, then the run goes on as `run_body`'s would (control signals and
/// whatever arrived meanwhile, then the process idles with its behaviour back in its record,
/// or it exits). A kill while the message runs finds no behaviour in the record; the run
/// ends at the next lock, dropping it.
pub(crate) fn run_lent(cx: &mut Cx<'_>, mut b: Box<dyn Behaviour>, msg: Message) {
    let p = cx.me();
    let shared = cx.shared();
    // `actor_loop`'s handling of a cast, without building a `Next`.
    let selector = msg.selector;
    match catch_unwind(AssertUnwindSafe(|| b.handle(cx, msg))) {
        Err(e) => {
            finish(shared, p, ExitReason::Panic(panic_message(&e).into()));
            return;
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            if catch_unwind(AssertUnwindSafe(|| b.cast_failed(cx, selector, e))).is_err() {
                cx.log("cast_failed hook panicked");
            }
        }
    }
    after_lent(cx, b);
}

/// [`run_lent`] for a job instead of a message ([`Behaviour::run_job`]), for a process
/// claimed with `keep` or resumed kept (`Sched::Lent`): the job runs as a cast carrying it
/// would (a panic crashes the process unless [`Behaviour::job_panicked`] answered it, a
/// requested exit stops it); then, when nothing was
/// queued for the process meanwhile and it is alive, there is no release at all — the
/// behaviour is answered, and the guest keeps the process claimed for the next call.
/// Otherwise the process is released the ordinary way ([`after_lent`]'s tail: what arrived
/// is handled, then it idles) and None is answered. Inlined into the guest runner's run
/// (`sched::guest::run_once`).
#[inline(always)]
pub(crate) fn run_kept_job(
    cx: &mut Cx<'_>,
    mut b: Box<dyn Behaviour>,
    job: LentJob,
) -> Option<Box<dyn Behaviour>> {
    let p = cx.me();
    if let Err(e) = catch_unwind(AssertUnwindSafe(|| b.run_job(cx, job))) {
        if !b.job_panicked(cx, job, &*e) {
            p.0.lent_busy.store(false, Ordering::Relaxed);
            finish(cx.shared(), p, ExitReason::Panic(panic_message(&e).into()));
            return None;
        }
    }
    let shared = cx.shared();
    if let Some(reason) = cx.requested_exit() {
        p.0.lent_busy.store(false, Ordering::Relaxed);
        stop_after_message(cx, shared, p, &mut b, reason);
        return None;
    }
    if cx.tick().is_err() {
        p.0.lent_busy.store(false, Ordering::Relaxed);
        return None; // killed while preempted: finish already ran
    }
    // Two loads and a store: a sender that queues after the load sets `lent_mail` under
    // the lock, and the next call's `resume_kept` sees it.
    if !p.0.lent_mail.load(Ordering::Acquire) && p.is_alive() {
        p.0.lent_busy.store(false, Ordering::Release);
        return Some(b);
    }
    let mut g = p.0.inner.lock();
    p.0.lent_mail.store(false, Ordering::Relaxed);
    p.0.lent_busy.store(false, Ordering::Relaxed);
    if g.sched == Sched::Lent {
        g.sched = Sched::Running;
    }
    release_or_loop(cx, shared, p, b, g);
    None
}

/// What follows the lent message: a requested exit, the reduction tick, then the release
/// ([`release_or_loop`]).
#[inline(always)]
fn after_lent(cx: &mut Cx<'_>, mut b: Box<dyn Behaviour>) {
    let p = cx.me();
    let shared = cx.shared();
    if let Some(reason) = cx.requested_exit() {
        stop_after_message(cx, shared, p, &mut b, reason);
        return;
    }
    if cx.tick().is_err() {
        return; // killed while preempted: finish already ran
    }
    let g = p.0.inner.lock();
    release_or_loop(cx, shared, p, b, g);
}

/// The release of a lent process under its lock `g`: `actor_loop` (what arrived meanwhile,
/// then idle with the behaviour back in the record). The usual case — nothing arrived, no
/// signal, not killed — is the idle step alone, in this one lock (`actor_loop` gets the
/// lock when there is more to do).
#[inline(always)]
fn release_or_loop(
    cx: &mut Cx<'_>,
    shared: &Arc<Shared>,
    p: &ProcRef,
    b: Box<dyn Behaviour>,
    mut g: ProcGuard<'_, Inner>,
) {
    if g.reason.is_none() && !g.has_control() && g.mailbox.len() == 0 {
        // `actor_loop`'s idle step (`next_of` found nothing).
        if g.current.is_some() {
            g.current = None;
        }
        g.mailbox.release();
        g.sched = Sched::Idle;
        // The body is empty while lent (nothing else puts one back): no drop call for it.
        if let Some(old) = g.body.replace(b) {
            drop(old);
        }
        return;
    }
    actor_loop(cx, shared, p, b, Some(g), None);
}
