//! The memory limit of an embedded engine (`EngineBuilder::max_memory`): a counting global
//! allocator, scoped per engine through a thread-local "current account".
//!
//! **Why an allocator, not counts at growth sites.** A limit must hold for every way a script
//! grows memory: primitives, the evaluator's in-place fast paths (`x := x ++ x`,
//! `x := x add: e`), collections built element by element, actor mailboxes and states,
//! deep structures made of many small values. Counting at growth sites needs a matching
//! release at every drop of every value (values are `Arc`s dropped anywhere); a missed site
//! is an escape and a missed release is a false limit. The allocator sees both sides of
//! every allocation, so what it counts is the live heap the engine's threads made.
//!
//! **Attribution.** [`CountingAlloc`] adds the cost of each allocation (its size as the
//! system allocator's chunk, header and rounding included: [`cost`]) to the [`Account`] the
//! current thread is charged to, and subtracts it at each free. Memory the allocator does not
//! see is charged explicitly ([`Account::charge`]: the runtime's coroutine stacks). An engine with a memory limit
//! charges its runtime's worker threads (set at the start of every run, see
//! `limits::hook_factory`; those threads run only that engine's processes) and the host
//! thread for the length of each engine call (parsing, checking, conversions). Counts are
//! batched per thread (flushed every [`FLUSH`] bytes), so the account is exact to within
//! `FLUSH` bytes per thread. Memory freed on a thread charged to no account (a value the
//! engine answered, dropped later by the host) is not credited back: the count can only
//! overstate such values, never understate what the script holds.
//!
//! **Enforcement.** The allocator never fails an allocation (a null answer aborts a Rust
//! process). The engine's preemption hook (every step of reductions, and at every charge of
//! a bulk primitive: `Ctx::charge`) compares the account with the limit and ends the run
//! with the uncatchable `memory_limit`; and a single bulk step that would take the account
//! past the limit is refused *before* it allocates ([`would_exceed`], called by
//! `Ctx::reserve` before every step that allocates in proportion to an argument, and by
//! `Ctx::charge` for steps of 1 MiB and more), so one huge primitive (`'x' repeat: 10**10`)
//! never reaches the allocator. Over the engine's limit every process its scripts started
//! stops (`engine::limits::Shared::stop_for_memory`). Between two checks a script allocates at most one step's
//! worth: a few hundred KiB.
//!
//! **Per actor.** With `EngineBuilder::actor_max_memory` each actor has an account of its
//! own whose counts also go to its engine's ([`new_child_account`]); the thread is charged to
//! it while the actor's message runs, and [`in_coroutine`] (the runtime's one hook, at every
//! coroutine resume) keeps that per coroutine, so a suspended actor's account is not charged
//! for what other processes allocate on the thread meanwhile. What an actor's memory is, and
//! the re-base that corrects drift from values moving between actors:
//! `interp::actor::memlimit`.
//!
//! **Installing.** A Rust program chooses its global allocator, so the host installs it:
//! `#[global_allocator] static A: bt::CountingAlloc = bt::CountingAlloc::system();` (or
//! wrapping another allocator with [`CountingAlloc::new`]). Without it a memory limit cannot
//! see gradual growth: [`installed`] tells, `EngineBuilder::try_build` refuses such a limit and
//! `EngineBuilder::build` panics with the same explanation; `EngineBuilder::max_allocation`
//! (the largest single step, enforced by the pre-charges alone) needs no allocator.

// The counting allocator implements `GlobalAlloc` (an unsafe trait): the one use of unsafe here.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicPtr, Ordering};

/// Bytes a thread accumulates before adding them to its account.
pub(crate) const FLUSH: isize = 32 * 1024;

/// A global allocator that counts live bytes per engine (see the module doc). Wraps `A`
/// (the system allocator by default).
pub struct CountingAlloc<A = System> {
    inner: A,
}

impl CountingAlloc<System> {
    /// Counting over the system allocator.
    pub const fn system() -> CountingAlloc<System> {
        CountingAlloc { inner: System }
    }
}

impl<A> CountingAlloc<A> {
    /// Counting over `inner` (e.g. mimalloc).
    pub const fn new(inner: A) -> CountingAlloc<A> {
        CountingAlloc { inner }
    }
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// True once a [`CountingAlloc`] has served an allocation in this process.
pub fn installed() -> bool {
    if !INSTALLED.load(Ordering::Relaxed) {
        // Allocate once: an installed counting allocator marks itself.
        drop(std::hint::black_box(Box::new(0u64)));
    }
    INSTALLED.load(Ordering::Relaxed)
}

/// The live bytes charged to one engine (or one actor of it), and its limit.
#[derive(Debug)]
pub struct Account {
    used: AtomicIsize,
    limit: AtomicIsize,
    /// An actor's account adds every count to its engine's account too (`None` for an
    /// engine's own account, or an actor of an engine without `max_memory`).
    parent: AtomicPtr<Account>,
    /// True for an actor's account ([`new_actor_account`]): values its sync calls answer
    /// count for it when received (`interp::actor::memlimit::count_reply`).
    actor: AtomicBool,
}

impl Account {
    /// Bytes currently counted (never below zero).
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed).max(0) as usize
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed).max(0) as usize
    }

    /// True when the account is over its limit.
    pub fn over(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.limit.load(Ordering::Relaxed)
    }

    /// The engine account an actor's account also counts into.
    pub fn parent(&self) -> Option<&'static Account> {
        let p = self.parent.load(Ordering::Relaxed);
        // SAFETY: `parent` is null or points at an account leaked by `new_account` (never
        // freed).
        unsafe { p.as_ref() }
    }

    /// True when this account or the one it counts into is over its limit.
    pub fn over_any(&self) -> bool {
        self.over() || self.parent().is_some_and(Account::over)
    }

    /// Re-bases the count to `bytes` (an actor's state measured by a deep size, see
    /// `interp::actor::memlimit`); the parent's count is the allocator's and stays.
    pub fn set_used(&self, bytes: usize) {
        flush();
        self.used
            .store(bytes.min(isize::MAX as usize) as isize, Ordering::Relaxed);
    }

    /// Adds `bytes` to this account's own count only (values an actor received: the parent
    /// counted them when they were allocated; `interp::actor::memlimit`).
    pub fn count_received(&self, bytes: usize) {
        self.used
            .fetch_add(bytes.min(isize::MAX as usize) as isize, Ordering::Relaxed);
    }

    /// True for an actor's account (see [`new_actor_account`]).
    pub fn is_actor(&self) -> bool {
        self.actor.load(Ordering::Relaxed)
    }

    /// The count, negative when this account freed more than it allocated.
    pub fn used_signed(&self) -> isize {
        self.used.load(Ordering::Relaxed)
    }

    /// Adds `bytes` (negative: takes them back) to this account and the one it counts into:
    /// memory the allocator does not see (coroutine stacks, mapped by the runtime).
    pub fn charge(&self, bytes: isize) {
        self.add(bytes);
    }

    fn add(&self, n: isize) {
        self.used.fetch_add(n, Ordering::Relaxed);
        if let Some(p) = self.parent() {
            p.add(n);
        }
    }
}

/// Accounts are never freed (the allocator may run on a thread still pointing at one after
/// its engine is gone); a dropped engine returns its account here for the next one.
static FREE: parking_lot::Mutex<Vec<&'static Account>> = parking_lot::Mutex::new(Vec::new());

/// An engine's account (reused from a dropped engine when one is free).
pub fn new_account(limit: usize) -> &'static Account {
    new_child_account(limit, None)
}

/// An account that also counts into `parent`.
pub(crate) fn new_child_account(
    limit: usize,
    parent: Option<&'static Account>,
) -> &'static Account {
    make_account(limit, parent, false)
}

/// An actor's account, counting into its engine's `parent` when the engine has a limit.
pub fn new_actor_account(limit: usize, parent: Option<&'static Account>) -> &'static Account {
    make_account(limit, parent, true)
}

fn make_account(limit: usize, parent: Option<&'static Account>, actor: bool) -> &'static Account {
    let a = FREE.lock().pop().unwrap_or_else(|| {
        Box::leak(Box::new(Account {
            used: AtomicIsize::new(0),
            limit: AtomicIsize::new(0),
            parent: AtomicPtr::new(std::ptr::null_mut()),
            actor: AtomicBool::new(false),
        }))
    });
    a.actor.store(actor, Ordering::Relaxed);
    let p = parent.map_or(std::ptr::null_mut(), |p| {
        p as *const Account as *mut Account
    });
    a.parent.store(p, Ordering::Relaxed);
    a.used.store(0, Ordering::Relaxed);
    a.limit
        .store(limit.min(isize::MAX as usize) as isize, Ordering::Relaxed);
    a
}

/// Gives an account back (its engine and the engine's threads are gone).
pub fn release_account(a: &'static Account) {
    a.limit.store(isize::MAX, Ordering::Relaxed);
    a.parent.store(std::ptr::null_mut(), Ordering::Relaxed);
    a.actor.store(false, Ordering::Relaxed);
    FREE.lock().push(a);
}

thread_local! {
    /// The account this thread is charged to, and bytes not yet added to it.
    static CURRENT: Cell<Option<&'static Account>> = const { Cell::new(None) };
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// The account the current thread is charged to.
#[inline]
pub fn current() -> Option<&'static Account> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// Charges the current thread to `a` from now on (answers the previous account). The
/// pending count goes to the previous account first.
pub fn set_current(a: Option<&'static Account>) -> Option<&'static Account> {
    flush();
    CURRENT.try_with(|c| c.replace(a)).ok().flatten()
}

/// Adds this thread's pending count to its account.
pub fn flush() {
    let _ = PENDING.try_with(|p| {
        let n = p.replace(0);
        if n != 0 {
            if let Some(a) = current() {
                a.add(n);
            }
        }
    });
}

/// Charges the current thread to `a` until dropped (then to the previous account).
pub struct Scope {
    prev: Option<&'static Account>,
}

impl Scope {
    /// Charges the thread to `a` until the scope ends. Entering the account the thread is
    /// already charged to (an engine called again from the same thread) changes nothing and
    /// flushes nothing: the pending count already belongs to it.
    #[inline]
    pub fn enter(a: Option<&'static Account>) -> Scope {
        let prev = current();
        if !same(prev, a) {
            set_current(a);
        }
        Scope { prev }
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        if !same(current(), self.prev) {
            set_current(self.prev);
        }
    }
}

/// The machine's physical memory in bytes (asked once; `usize::MAX` when unknown): no single
/// step larger than this can succeed, limit or not (`Ctx::reserve`).
pub fn machine_memory() -> usize {
    static MEM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MEM.get_or_init(|| {
        // SAFETY: sysconf has no memory-safety preconditions.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages <= 0 || size <= 0 {
            usize::MAX
        } else {
            (pages as usize).saturating_mul(size as usize)
        }
    })
}

/// Would `bytes` more take the current thread's account past its limit? Asked before a bulk
/// step allocates (`Ctx::charge`).
pub fn would_exceed(bytes: usize) -> bool {
    match current() {
        Some(a) => {
            flush();
            let past = |a: &Account| a.used().saturating_add(bytes) > a.limit();
            past(a) || a.parent().is_some_and(past)
        }
        None => false,
    }
}

/// Is the account the current thread is charged to (or the engine's it counts into) over
/// its limit? Asked before a step whose memory the allocator counts but the engine's hook
/// may not see for a while (a spawn: `Ctx::memory_check`).
pub fn current_over() -> bool {
    match current() {
        Some(a) => {
            flush();
            a.over_any()
        }
        None => false,
    }
}

/// Is `engine`'s account, or the account the current thread is charged to (an actor's, see
/// [`in_coroutine`]), over its limit? Asked by the engine's preemption hook.
#[inline]
pub fn over(engine: Option<&Account>) -> bool {
    if engine.is_none() && !CO_ACCOUNTS.load(Ordering::Relaxed) {
        return false;
    }
    flush();
    engine.is_some_and(Account::over) || current().is_some_and(Account::over_any)
}

/// Set once an engine with per-actor memory limits exists: from then on every coroutine
/// resume switches the thread's account ([`in_coroutine`]).
static CO_ACCOUNTS: AtomicBool = AtomicBool::new(false);

/// Turns on the per-coroutine account switch (an engine with `actor_max_memory` calls it;
/// it stays on for the process).
pub fn enable_coroutine_accounts() {
    CO_ACCOUNTS.store(true, Ordering::Relaxed);
}

/// The account a suspended coroutine was charged to (the runtime keeps one per coroutine
/// slot; see [`in_coroutine`]).
#[derive(Default, Debug)]
pub struct CoAccount(Option<&'static Account>);

/// True once per-actor memory limits exist in this process (see [`in_coroutine`]): the
/// runtime's one predictable branch per resume.
#[inline(always)]
pub fn coroutine_accounts() -> bool {
    CO_ACCOUNTS.load(Ordering::Relaxed)
}

/// The runtime's one hook (`runtime::sched::Worker::drive`, taken when
/// [`coroutine_accounts`]): runs `resume` (one resume of a coroutine) charged to the account
/// the coroutine was charged to when it last suspended, and gives the thread its own account
/// back afterwards, so an actor's account follows its coroutine across suspensions (a sync
/// call, `Timer sleep:`, preemption) while other coroutines run on the thread in between.
/// `suspended` tells from the result whether the coroutine will be resumed again (else its
/// account is forgotten).
#[inline(never)]
pub fn in_coroutine<R>(
    saved: &mut CoAccount,
    resume: impl FnOnce() -> R,
    suspended: impl FnOnce(&R) -> bool,
) -> R {
    let outer = current();
    let inner = saved.0.take().or(outer);
    if !same(inner, outer) {
        set_current(inner);
    }
    let r = resume();
    let left = current();
    if suspended(&r) && !same(left, outer) {
        saved.0 = left;
    }
    if !same(left, outer) {
        set_current(outer);
    }
    r
}

#[inline]
fn same(a: Option<&'static Account>, b: Option<&'static Account>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        (None, None) => true,
        _ => false,
    }
}

/// What an allocation of `size` bytes costs the process: the system allocator's chunk
/// (the size plus an 8-byte header, rounded up to 16 bytes, at least 32). An engine's live
/// heap is mostly small objects (process records, messages, boxed values), for which the
/// header and the rounding add a quarter or more to the requested sizes: counting requested
/// sizes alone let the resident memory run that far past the limit.
#[inline(always)]
fn cost(size: usize) -> isize {
    (((size + 8 + 15) & !15).max(32)) as isize
}

#[inline]
fn count(delta: isize) {
    let _ = CURRENT.try_with(|c| {
        if let Some(a) = c.get() {
            let _ = PENDING.try_with(|p| {
                let n = p.get() + delta;
                if n >= FLUSH || n <= -FLUSH {
                    p.set(0);
                    a.add(n);
                } else {
                    p.set(n);
                }
            });
        }
    });
}

// SAFETY: every method forwards to the inner allocator with the caller's arguments unchanged
// and only adds bookkeeping on thread-locals and atomics (which never allocate), so the
// inner allocator's guarantees carry over.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { self.inner.alloc(layout) };
        if !p.is_null() {
            if !INSTALLED.load(Ordering::Relaxed) {
                INSTALLED.store(true, Ordering::Relaxed);
            }
            count(cost(layout.size()));
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if !p.is_null() {
            count(cost(layout.size()));
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { self.inner.dealloc(ptr, layout) };
        count(-cost(layout.size()));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(cost(new_size) - cost(layout.size()));
        }
        p
    }
}
