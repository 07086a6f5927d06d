//! A one-shot reply slot that a suspended coroutine or a blocked OS thread waits on.
//!
//! A [`Waiter`] is completed exactly once (by the reply, a timeout, a death notice or a
//! kill — whichever comes first; later completions are ignored) and wakes at most one
//! waiter, so a suspended coroutine is resumed exactly once per wait.
//!
//! Reply waiters double as the links of the **waiting chain** used for deadlock detection:
//! each records the process that waits (`caller`) and the reply waiter of the message that
//! process was handling when it made the call (`parent`). A message that came from a caller
//! on another node ends its chain in a [`RemoteChain`] (deadlock detection across nodes).
//!
//! `unsafe`: the result and waker cells are guarded by one atomic state word instead of a
//! mutex (two locked instructions fewer per sync call); the protocol is at `Waiter`'s
//! `Sync` impl.
#![allow(unsafe_code)]

use std::any::Any;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::runtime::types::{CallError, Pid};
use crate::value::Value;

/// What queues a suspended coroutine's resumption on its worker: the scheduler
/// (`Shared::push_resume`), handed to [`Waiter::complete`] so this module needs nothing
/// above it.
pub(crate) trait Resume {
    /// Queues the resumption of the coroutine in `slot` (generation `gen`) on `worker`.
    fn push_resume(&self, worker: usize, slot: u32, gen: u32);
}

impl<R: Resume + ?Sized> Resume for Arc<R> {
    fn push_resume(&self, worker: usize, slot: u32, gen: u32) {
        (**self).push_resume(worker, slot, gen)
    }
}

/// Who to wake when a waiter completes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wake {
    /// A coroutine suspended on `worker` in `slot` (generation `gen`).
    Co { worker: usize, slot: u32, gen: u32 },
    /// An OS thread blocked on the condition variable.
    Thread,
}

/// `state` bits. A completion first *claims* the waiter (`CLAIMED`: only one completion
/// counts), then writes the result and publishes it (`READY`). A waker is published with
/// `TARGET` after it is written; the completion wakes it when it sees the bit as it sets
/// `READY`. The two cells are only ever touched under these rules (see `Waiter`'s `Sync`).
const CLAIMED: u8 = 1;
const READY: u8 = 2;
const TARGET: u8 = 4;
/// Set with `READY` by a sync call's answer ([`Waiter::answer`]) that left its counted
/// reference to the caller's record instead of dropping it: the record's [`Waiting`] then
/// owns two counts, and reuses the second as the next call's reply reference.
const HANDED: u8 = 8;

/// A reply slot: one state word instead of a lock (a sync call's round trip costs one
/// locked instruction here, in [`Waiter::complete`]).
pub struct Waiter {
    state: AtomicU8,
    /// Written once by the completion that claimed the waiter, before `READY`; read (taken)
    /// by the waiter after it saw `READY`.
    result: UnsafeCell<Option<Result<Value, CallError>>>,
    /// Written before `TARGET` is set (or with exclusive access in [`Waiter::reset`]),
    /// read by the completion only after it saw `TARGET`.
    target: UnsafeCell<Option<Wake>>,
    /// Only for OS-thread waits ([`Waiter::wait_thread`]): the condition variable's lock.
    thread_lock: Mutex<()>,
    cv: Condvar,
    /// The process waiting on this (for reply waiters), for deadlock detection.
    pub caller: Option<Pid>,
    /// The reply waiter of the message `caller` was handling when it made the call.
    pub parent: Option<Arc<Waiter>>,
    /// For a message from a caller on another node: the processes waiting on it there.
    pub remote: Option<Arc<RemoteChain>>,
    /// A sync call's reply slot, kept in its caller's record ([`Waiting`]), which knows
    /// about a handed count ([`Waiter::answer`]).
    call_slot: bool,
}

// SAFETY: the two `UnsafeCell`s are accessed under the `state` protocol only: `result` is
// written by the single completion that set `CLAIMED` (no other writer or reader exists
// until it sets `READY` with release ordering) and read by the waiter after an acquire load
// saw `READY` (no writer after that: every later completion fails its claim); `target` is
// written only while `TARGET` is clear by the one party waiting (or through `&mut self`)
// and read by a completion only after an acquire read-modify-write saw `TARGET`. Everything
// else is `Sync` (`Value` and `CallError` are `Send + Sync`).
unsafe impl Sync for Waiter {}

/// The end of a waiting chain that lies on other nodes: the processes (of any node) waiting
/// on a call that came from another node. The distribution layer makes it from the request
/// and sends it on with the remote calls made while that call is handled.
pub struct RemoteChain {
    /// Numbers of this node's processes on the chain (it left this node and came back).
    pub local: Vec<u64>,
    /// The whole chain in the distribution layer's form (opaque here).
    pub wire: Box<dyn Any + Send + Sync>,
}

/// A link of a waiting chain that a process hands to a task it waits for without a call
/// (a `Parallel` block, an `announceAndWait:` handler): the task's calls then see the
/// process (and whatever waits on it) as waiting on them ([`crate::runtime::Cx::waited_by_me`],
/// [`crate::runtime::Cx::set_waited_by`]).
#[derive(Clone)]
pub struct WaitedBy(pub(crate) Arc<Waiter>);

impl Waiter {
    pub(crate) fn new(caller: Option<Pid>, parent: Option<Arc<Waiter>>) -> Arc<Waiter> {
        Waiter::new_for(caller, parent, None)
    }

    fn make(
        caller: Option<Pid>,
        parent: Option<Arc<Waiter>>,
        target: Option<Wake>,
        remote: Option<Arc<RemoteChain>>,
    ) -> Waiter {
        Waiter {
            state: AtomicU8::new(if target.is_some() { TARGET } else { 0 }),
            result: UnsafeCell::new(None),
            target: UnsafeCell::new(target),
            thread_lock: Mutex::new(()),
            cv: Condvar::new(),
            caller,
            parent,
            remote,
            call_slot: false,
        }
    }

    /// A sync call's reply slot (`Cx::call`), the waker registered at once: kept in the
    /// caller's [`Waiting`], so its answer may hand the callee's count back
    /// ([`Waiter::answer`]).
    pub(crate) fn new_call(
        caller: Option<Pid>,
        parent: Option<Arc<Waiter>>,
        target: Wake,
    ) -> Arc<Waiter> {
        let mut w = Waiter::make(caller, parent, Some(target), None);
        w.call_slot = true;
        Arc::new(w)
    }

    /// [`Waiter::new`] with the waker already registered (a sync call's reply slot: the
    /// caller suspends unconditionally, see [`Waiter::reset`]).
    pub(crate) fn new_for(
        caller: Option<Pid>,
        parent: Option<Arc<Waiter>>,
        target: Option<Wake>,
    ) -> Arc<Waiter> {
        Arc::new(Waiter::make(caller, parent, target, None))
    }

    /// The reply slot of a message from a caller on another node, which nobody here waits
    /// on: it only ends the chain of whoever handles the message.
    pub(crate) fn new_remote(chain: Arc<RemoteChain>) -> Arc<Waiter> {
        Arc::new(Waiter::make(None, None, None, Some(chain)))
    }

    /// Makes a completed waiter that nobody else references ready for the next call of the
    /// same caller (`Cx::call` reuses its reply slot instead of allocating one per call).
    /// `target` is registered at once (no atomics: nobody else holds the waiter): a
    /// coroutine caller then suspends without checking for an early completion, because a
    /// completion that comes before the suspension only queues the coroutine's resumption
    /// on its own worker, which cannot run it before the suspension is done.
    /// The new `parent` is counted only when it is not the parent already (a caller making
    /// several calls while handling one message).
    #[inline]
    pub(crate) fn reset(&mut self, parent: &Option<Arc<Waiter>>, target: Option<Wake>) {
        *self.state.get_mut() = if target.is_some() { TARGET } else { 0 };
        *self.result.get_mut() = None;
        *self.target.get_mut() = target;
        let same = match (&self.parent, parent) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.parent = parent.clone();
        }
    }

    /// A callee's answer through the reference it got with the message (the reply slot
    /// was its `current`): [`Waiter::complete`], and when the slot is a sync call's
    /// (`call_slot`) whose coroutine waker was registered, the reference is not dropped but
    /// left to the caller's record, which adopts its count for the next call
    /// ([`Waiting::reuse`]): no count taken per call, none dropped per answer.
    #[inline]
    pub(crate) fn answer(self: Arc<Self>, shared: &impl Resume, r: Result<Value, CallError>) {
        if !self.call_slot {
            self.complete(shared, r);
            return;
        }
        // AcqRel: as in `complete` (acquire sees the waker written before `TARGET`; release
        // orders nothing yet: `result` is written after).
        let prev = self.state.fetch_or(CLAIMED, Ordering::AcqRel);
        if prev & CLAIMED != 0 {
            return; // a timeout or a kill answered first; `self` drops its count
        }
        // SAFETY: this call set `CLAIMED`: the only writer of `result`, read by nobody
        // before `READY` (see the `Sync` impl).
        unsafe { *self.result.get() = Some(r) };
        if prev & TARGET != 0 {
            // SAFETY: `TARGET` was seen (acquire): `target` was written before it and is
            // not written again while the slot is in use. Read before the store below,
            // after which this answer no longer touches the slot.
            if let Some(Wake::Co { worker, slot, gen }) = unsafe { *self.target.get() } {
                let p = Arc::into_raw(self);
                // Release: publishes the result and the handed count to the caller's
                // acquire load of `READY` (`take`) and of `HANDED` (`Waiting`). After this
                // store the slot may be reset or freed by its caller: `p` is not used again.
                // SAFETY: `p` is the reference this call owned (`into_raw` kept its count).
                unsafe {
                    (*p).state
                        .store(CLAIMED | READY | TARGET | HANDED, Ordering::Release)
                };
                shared.push_resume(worker, slot, gen);
                return;
            }
        }
        self.publish(shared, prev);
    }

    /// Completes the waiter with `r` unless it already completed; wakes its waiter.
    /// Answers whether this call completed it.
    pub(crate) fn complete(&self, shared: &impl Resume, r: Result<Value, CallError>) -> bool {
        let prev = self.state.fetch_or(CLAIMED, Ordering::AcqRel);
        if prev & CLAIMED != 0 {
            return false;
        }
        // SAFETY: this call set `CLAIMED`, so it is the only writer of `result`, and nobody
        // reads it before `READY` is published below (see the `Sync` impl).
        unsafe { *self.result.get() = Some(r) };
        self.publish(shared, prev);
        true
    }

    /// The end of a completion that claimed the waiter (`prev`: the state before its claim)
    /// and wrote the result: publishes `READY` and wakes the waiter.
    #[inline]
    fn publish(&self, shared: &impl Resume, prev: u8) {
        let target = if prev & TARGET != 0 {
            // The waker was published already and nothing else changes the word now (other
            // completions only re-set `CLAIMED`): a plain release store publishes the result.
            self.state
                .store(CLAIMED | READY | TARGET, Ordering::Release);
            // SAFETY: `TARGET` was seen (acquire), so the write of `target` happened before
            // and no write follows it (it is written only while `TARGET` is clear).
            unsafe { *self.target.get() }
        } else {
            // A waker may be registering concurrently: publish with a read-modify-write, and
            // wake it if it got there first.
            let before = self.state.fetch_or(READY, Ordering::AcqRel);
            if before & TARGET != 0 {
                // SAFETY: as above (`TARGET` seen by an acquire read-modify-write).
                unsafe { *self.target.get() }
            } else {
                None
            }
        };
        match target {
            Some(Wake::Co { worker, slot, gen }) => shared.push_resume(worker, slot, gen),
            Some(Wake::Thread) => {
                // Under the lock the thread checks `READY` in, so the notice is not lost.
                drop(self.thread_lock.lock());
                self.cv.notify_all();
            }
            None => {}
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLAIMED != 0
    }

    /// Registers who to wake. Answers false (and registers nothing) if already complete, in
    /// which case the waiter must not suspend. Called at most once per waiter and only by
    /// the one party waiting on it (or again with the same `Wake::Thread`).
    pub(crate) fn set_target(&self, w: Wake) -> bool {
        let s = self.state.load(Ordering::Acquire);
        if s & READY != 0 {
            return false;
        }
        if s & TARGET == 0 {
            // SAFETY: `TARGET` is clear, so no completion reads `target` yet, and only the
            // one waiting party writes it (see the `Sync` impl).
            unsafe { *self.target.get() = Some(w) };
        }
        let prev = self.state.fetch_or(TARGET, Ordering::AcqRel);
        // Claimed but not yet published: that completion sees `TARGET` and wakes us.
        prev & READY == 0
    }

    /// Takes the result after completion (`actor_dead` if there is none).
    pub(crate) fn take(&self) -> Result<Value, CallError> {
        loop {
            let s = self.state.load(Ordering::Acquire);
            if s & READY != 0 {
                // SAFETY: `READY` was seen (acquire): the claiming completion's write is
                // visible and no other write follows (see the `Sync` impl). Only the one
                // waiting party takes.
                return unsafe { (*self.result.get()).take() }.unwrap_or(Err(CallError::ActorDead));
            }
            if s & CLAIMED == 0 {
                return Err(CallError::ActorDead);
            }
            // Claimed, not yet published: the completion is between two instructions.
            std::thread::yield_now();
        }
    }

    /// Blocks the calling OS thread until completion, then takes the result.
    pub(crate) fn wait_thread(&self) -> Result<Value, CallError> {
        if self.set_target(Wake::Thread) {
            let mut g = self.thread_lock.lock();
            while self.state.load(Ordering::Acquire) & READY == 0 {
                self.cv.wait(&mut g);
            }
        }
        self.take()
    }
}

/// A process's `waiting` (`process::Inner::waiting`): what its coroutine is suspended on,
/// or was last. Owns one count of the waiter, and a second one when a sync call's answer
/// handed the callee's count back (`HANDED`, [`Waiter::answer`]), which it releases when
/// the slot is replaced or dropped and otherwise reuses as the next call's reply reference.
#[derive(Default)]
pub(crate) struct Waiting(Option<Arc<Waiter>>);

impl Waiting {
    #[inline]
    pub(crate) fn get(&self) -> Option<&Arc<Waiter>> {
        self.0.as_ref()
    }

    /// Registers `w`, releasing the slot it replaces.
    #[inline]
    pub(crate) fn set(&mut self, w: Arc<Waiter>) {
        if let Some(old) = self.0.replace(w) {
            release(old);
        }
    }

    /// The slot of `caller`'s last call made ready for the next one (its chain head
    /// `parent`, its waker `target`) when nobody else holds it, with the counted reference
    /// the callee gets: the handed count when the last answer left one, else a new count.
    /// `None` when the slot is another's or still shared (a callee that has not answered, a
    /// kill completing it): the caller then makes a new one.
    #[inline]
    pub(crate) fn reuse(
        &mut self,
        caller: Pid,
        parent: &Option<Arc<Waiter>>,
        target: Wake,
    ) -> Option<Arc<Waiter>> {
        let w = self.0.as_ref()?;
        // Acquire: pairs with the answer's release store of `HANDED`, so that count and
        // everything the answer wrote are this record's.
        let handed = w.state.load(Ordering::Acquire) & HANDED != 0;
        if Arc::strong_count(w) != 1 + usize::from(handed)
            || Arc::weak_count(w) != 0
            || w.caller != Some(caller)
        {
            return None;
        }
        // Acquire: pairs with the release decrement of any other reference dropped before
        // the count was read (as `Arc::get_mut` does).
        std::sync::atomic::fence(Ordering::Acquire);
        let p = Arc::as_ptr(w);
        // SAFETY: the counts are this record's own (one, and the handed one when `HANDED`
        // is set: its answer no longer touches the slot), there are no weak references, and
        // the record is borrowed mutably (its lock is held), so nothing else can reach the
        // slot while it is reset.
        unsafe { (*p.cast_mut()).reset(parent, Some(target)) };
        Some(if handed {
            // SAFETY: adopts the handed count (`answer` kept it with `into_raw`).
            unsafe { Arc::from_raw(p) }
        } else {
            w.clone()
        })
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(w) = self.0.take() {
            release(w);
        }
    }
}

/// Drops a process's `waiting` reference and the count an answer handed to it.
fn release(w: Arc<Waiter>) {
    // Acquire: as in `Waiting::reuse`.
    if w.state.load(Ordering::Acquire) & HANDED != 0 {
        // SAFETY: `HANDED` says the answer left its count to this record (`into_raw` in
        // `answer`); `w` keeps the waiter alive across the decrement.
        unsafe { Arc::decrement_strong_count(Arc::as_ptr(&w)) };
    }
}

/// A waiter a suspended coroutine waits on, by address, for the wait's timeout (kept by
/// the worker in the coroutine's slot and completed with `Timeout` when it fires): no
/// reference count changes per wait.
///
/// Sound because of how waits are made (`Cx::wait`, `Cx::call`): the waiter is registered
/// as the process's `waiting` before the suspension, and the record keeps that reference
/// until the process itself registers another one, which it can do only once it runs
/// again — after the worker cleared the slot's timeout (the resumption takes it; a runner
/// whose run is over or that retires clears it too). Nothing else removes `waiting` (an
/// exit completes it in place), and the record outlives the suspension: the coroutine's
/// `Cx` borrows the handle its runner owns.
#[derive(Clone, Copy)]
pub(crate) struct WaitRef(std::ptr::NonNull<Waiter>);

impl WaitRef {
    /// # Safety
    /// `w` must stay registered as the suspending process's `waiting` (or be otherwise
    /// kept alive) for as long as this reference or a copy is used: see the type's docs.
    #[inline(always)]
    pub(crate) unsafe fn new(w: &Arc<Waiter>) -> WaitRef {
        WaitRef(std::ptr::NonNull::from(&**w))
    }

    #[inline(always)]
    pub(crate) fn get(&self) -> &Waiter {
        // SAFETY: the waiter is alive while the reference is used (the contract of
        // `WaitRef::new`).
        unsafe { self.0.as_ref() }
    }
}

/// Whether `pid` is waiting somewhere along the chain starting at `w` (on this node, or
/// on the chain's part that came from other nodes).
pub(crate) fn chain_contains(mut w: Option<&Arc<Waiter>>, pid: Pid) -> bool {
    while let Some(x) = w {
        if x.caller == Some(pid) {
            return true;
        }
        if let Some(r) = &x.remote {
            return pid.node == 0 && !pid.service && r.local.contains(&pid.number);
        }
        w = x.parent.as_ref();
    }
    false
}

/// The processes waiting along the chain starting at `w`, nearest first, and the part of
/// the chain on other nodes.
pub(crate) fn chain_of(mut w: Option<&Arc<Waiter>>) -> (Vec<Pid>, Option<Arc<RemoteChain>>) {
    let mut pids = Vec::new();
    while let Some(x) = w {
        if let Some(p) = x.caller {
            pids.push(p);
        }
        if let Some(r) = &x.remote {
            return (pids, Some(r.clone()));
        }
        w = x.parent.as_ref();
    }
    (pids, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(number: u64) -> Pid {
        Pid {
            node: 0,
            number,
            service: false,
        }
    }

    /// A reply slot reused by its caller takes the chain head of the message the caller is
    /// handling now: the same one is kept without a new reference, another one replaces it,
    /// so deadlock detection sees the current chain.
    #[test]
    fn a_reset_waiter_takes_the_current_chain_head() {
        let first = Waiter::new(Some(pid(1)), None);
        let second = Waiter::new(Some(pid(2)), None);
        let mut w = Waiter::new_for(Some(pid(3)), Some(first.clone()), None);
        assert!(w.complete(&NoResume, Ok(Value::Nil)));
        let x = Arc::get_mut(&mut w).expect("unshared");
        x.reset(&Some(first.clone()), None);
        assert!(x.parent.as_ref().is_some_and(|p| Arc::ptr_eq(p, &first)));
        assert_eq!(Arc::strong_count(&first), 2);
        assert!(!x.is_done());
        x.reset(&Some(second.clone()), None);
        assert_eq!(Arc::strong_count(&first), 1);
        assert!(chain_contains(Some(&w), pid(2)));
        assert!(!chain_contains(Some(&w), pid(1)));
        Arc::get_mut(&mut w).expect("unshared").reset(&None, None);
        assert!(w.parent.is_none());
        assert_eq!(Arc::strong_count(&second), 1);
    }

    /// A sync call's answer leaves its counted reference to the caller's record (`HANDED`),
    /// which reuses it as the next call's: the slot stays counted twice while a callee
    /// holds it and once (plus the handed count) after, with no count taken or dropped per
    /// call. An answer that comes after a timeout drops its count; a replaced slot gives
    /// back both of the record's.
    #[test]
    fn an_answer_hands_its_count_back_to_the_callers_record() {
        let co = Wake::Co {
            worker: 0,
            slot: 0,
            gen: 0,
        };
        let mut rec = Waiting::default();
        let w = Waiter::new_call(Some(pid(1)), None, co);
        let reply = w.clone();
        rec.set(w);
        reply.answer(&NoResume, Ok(Value::Int(1)));
        let w = rec.get().unwrap();
        assert_eq!(Arc::strong_count(w), 2, "the record's and the handed count");
        assert!(matches!(w.take(), Ok(Value::Int(1))));
        // Another caller's slot is not reused; this caller's is, with the handed count.
        assert!(rec.reuse(pid(2), &None, co).is_none());
        let reply = rec.reuse(pid(1), &None, co).expect("reused");
        assert!(Arc::ptr_eq(&reply, rec.get().unwrap()));
        assert_eq!(Arc::strong_count(&reply), 2);
        assert!(!reply.is_done());
        // A timeout answers first: the callee's late answer drops its count.
        assert!(rec
            .get()
            .unwrap()
            .complete(&NoResume, Err(CallError::Timeout)));
        reply.answer(&NoResume, Ok(Value::Nil));
        assert_eq!(Arc::strong_count(rec.get().unwrap()), 1);
        assert!(matches!(rec.get().unwrap().take(), Err(CallError::Timeout)));
        // Handed, then replaced by another wait: the record gives back both counts.
        let reply = rec.reuse(pid(1), &None, co).expect("reused");
        reply.answer(&NoResume, Ok(Value::Nil));
        let kept = rec.get().unwrap().clone();
        assert_eq!(Arc::strong_count(&kept), 3);
        rec.set(Waiter::new(None, None));
        assert_eq!(Arc::strong_count(&kept), 1);
        // A slot that is not a call's (an OS thread's wait, a stop) is answered as before.
        let plain = Waiter::new(Some(pid(1)), None);
        let r = plain.clone();
        r.answer(&NoResume, Ok(Value::Nil));
        assert_eq!(Arc::strong_count(&plain), 1);
    }

    struct NoResume;
    impl Resume for NoResume {
        fn push_resume(&self, _: usize, _: u32, _: u32) {}
    }
}
