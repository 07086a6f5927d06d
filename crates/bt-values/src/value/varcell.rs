//! Captured variables (`VarCell`, an [`OwnedCell`] of `Value`s): owned by one process and used
//! there without a lock, taken over soundly by any other process that meets one.
//!
//! A variable captured by a block lives in a cell shared by the declaring activation and its
//! closures. Almost every access comes from the process that made the cell (a method's
//! variables read and written by the blocks it passes to `do:`, `inject:into:`, …), so a
//! cell starts **owned** by that process, which reads and writes it with plain memory
//! accesses bracketed by a `busy` flag — no locked instruction. Any other thread of execution
//! that reaches the cell (a block sent uncopied, stored where another process reads it,
//! moved between engines by a host — no list of such paths is needed) **revokes** the
//! ownership first: it marks the cell, makes every thread of the OS process pass a full
//! memory barrier (`membarrier(2)`, the heavy side of an asymmetric fence), waits until the
//! owner is not inside an access, and turns the cell **shared**; from then on everybody,
//! the owner too, uses the cell's mutex. Nobody ever reads a stand-in value or drops a write.
//!
//! Why this is sound (the asymmetric Dekker pattern; [`OwnedCell::get_with`] and `revoke`):
//! the owner stores `busy = true`, then (compiler fence only) loads `owner` and accesses the
//! value only when it still names itself; the revoker stores `owner = REVOKING`, runs the
//! barrier, then waits for `busy == false`. The barrier orders, in every other running
//! thread, all its earlier memory operations before and all its later ones after the
//! revoker's view: either the owner's `busy = true` is visible to the revoker (which waits
//! for the access to end) or the owner's load of `owner` comes after the barrier and sees
//! `REVOKING` (and the owner takes the shared path). The owner's `busy = false` is a release
//! store and the revoker's read of it an acquire load, so the owner's last plain writes
//! happen before the revoker publishes `SHARED` (release) and everyone after it locks.
//!
//! Only the owner ever writes `busy` (a process checks that a cell names it before touching
//! the flag), and an access runs no user code and never yields, so a revoker waits a few
//! instructions at most. Where `membarrier` is not available every cell is made shared (always
//! locked), never owned.

// unsafe: the owner's plain access to the value, and the `membarrier` system call.
#![allow(unsafe_code)]

use std::sync::atomic::{compiler_fence, AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The owner word of a cell every access locks.
pub(crate) const SHARED: u64 = u64::MAX;
/// The owner word while a revoker waits for the owner to leave its access.
const REVOKING: u64 = u64::MAX - 1;

/// A captured variable: shared by the declaring activation and its closures (module notes).
/// Generic over what it holds (a `Value`; the cell's protocol never looks at it).
pub struct OwnedCell<T> {
    /// The owning process's token (never 0, [`SHARED`] or `REVOKING`), or one of those two.
    owner: AtomicU64,
    /// Set by the owner around each lock-free access (written by nobody else).
    busy: AtomicBool,
    value: parking_lot::Mutex<T>,
}

impl<T> OwnedCell<T> {
    /// A shared cell (every access locks): cells made outside any process, copies made for
    /// a block crossing processes, session bindings, decoded blocks.
    #[inline]
    pub fn new(v: T) -> OwnedCell<T> {
        OwnedCell {
            owner: AtomicU64::new(SHARED),
            busy: AtomicBool::new(false),
            value: parking_lot::Mutex::new(v),
        }
    }

    /// A cell owned by the process whose token is `me` (a shared one for 0 — no process —
    /// or where the barrier revocation needs is not available). Only code running in that
    /// process passes its token.
    #[inline]
    pub fn owned(v: T, me: u64) -> OwnedCell<T> {
        let owner = if me != 0 && me < REVOKING && fence_available() {
            me
        } else {
            SHARED
        };
        OwnedCell {
            owner: AtomicU64::new(owner),
            busy: AtomicBool::new(false),
            value: parking_lot::Mutex::new(v),
        }
    }

    /// Enters an owned access when `me` owns the cell (`o`, the owner word just loaded,
    /// names it): answers true with `busy` set, and the caller may then use the value with
    /// plain accesses until [`OwnedCell::leave`]. False: take another path (`busy` is clear).
    /// See the module notes for the protocol.
    #[inline(always)]
    fn enter(&self, me: u64, o: u64) -> bool {
        if o != me {
            return false;
        }
        // `me` owns (or owned) the cell, so `me` is the only writer of `busy`.
        self.busy.store(true, Ordering::Relaxed);
        // The store above stays before the load below in the generated code; the revoker's
        // `membarrier` orders them for the hardware (module notes).
        compiler_fence(Ordering::SeqCst);
        if self.owner.load(Ordering::Relaxed) != me {
            self.busy.store(false, Ordering::Release);
            return false;
        }
        true
    }

    /// Ends an owned access begun by a successful [`OwnedCell::enter`].
    #[inline(always)]
    fn leave(&self) {
        // Release: the access happens before a revoker's acquire load of `false`.
        self.busy.store(false, Ordering::Release);
    }

    /// The value, for the process whose token is `me` (0 outside any process); `f` makes
    /// the copy (`Value::clone` or a faster equivalent).
    #[inline(always)]
    pub fn get_with(&self, me: u64, f: impl Fn(&T) -> T) -> T {
        // Acquire: a cell seen SHARED also shows the writes its former owner made before.
        let o = self.owner.load(Ordering::Acquire);
        if self.enter(me, o) {
            // SAFETY: between `enter` and `leave` `me` owns the cell with `busy` set: no
            // other thread touches the value then (a revoker waits for `busy` to clear;
            // shared-path users lock only after the cell is `SHARED`, which follows that
            // wait), and `me` is one sequential thread of execution that runs no other
            // access to this cell inside this one (`f` clones, it does not evaluate).
            let v = f(unsafe { &*self.value.data_ptr() });
            self.leave();
            return v;
        }
        if o == SHARED {
            return f(&self.value.lock());
        }
        self.get_slow(&f)
    }

    #[inline(never)]
    fn get_slow(&self, f: &impl Fn(&T) -> T) -> T {
        f(&self.lock())
    }

    /// Replaces the value and answers the old one (for the caller to drop outside the
    /// access), for the process whose token is `me`.
    #[inline(always)]
    pub fn replace(&self, me: u64, v: T) -> T {
        let o = self.owner.load(Ordering::Acquire);
        if self.enter(me, o) {
            // SAFETY: as in `get_with`: only `me`, between `enter` and `leave`, touches the
            // value, and nothing else borrows it during this swap.
            let old = std::mem::replace(unsafe { &mut *self.value.data_ptr() }, v);
            self.leave();
            return old;
        }
        if o == SHARED {
            return std::mem::replace(&mut *self.value.lock(), v);
        }
        self.replace_slow(v)
    }

    #[inline(never)]
    fn replace_slow(&self, v: T) -> T {
        std::mem::replace(&mut *self.lock(), v)
    }

    /// The value for `me` (a clone).
    pub fn read(&self, me: u64) -> T
    where
        T: Clone,
    {
        self.get_with(me, T::clone)
    }

    /// The value under the lock, for code that runs in no particular process (session
    /// bindings, encoding, copies): a cell some process owns is taken over first
    /// (`revoke`). Never hold the guard while evaluating.
    pub fn lock(&self) -> parking_lot::MutexGuard<'_, T> {
        self.make_shared();
        self.value.lock()
    }

    /// [`OwnedCell::lock`] that does not wait for another holder of the lock (`None` then).
    pub fn try_lock(&self) -> Option<parking_lot::MutexGuard<'_, T>> {
        self.make_shared();
        self.value.try_lock()
    }

    /// Is the cell shared (every access locks)?
    #[cfg(test)]
    fn is_shared(&self) -> bool {
        self.owner.load(Ordering::Acquire) == SHARED
    }

    /// Turns the cell shared, revoking its owner if it has one (module notes).
    #[inline]
    fn make_shared(&self) {
        if self.owner.load(Ordering::Acquire) != SHARED {
            revoke(self);
        }
    }
}

/// Takes a cell away from its owner: see the module notes. Answers once the cell is
/// `SHARED`, with the owner's earlier plain writes visible to this thread.
#[cold]
#[inline(never)]
fn revoke<T>(c: &OwnedCell<T>) {
    let mut cur = c.owner.load(Ordering::Acquire);
    loop {
        match cur {
            SHARED => return,
            REVOKING => {
                // Another revoker is at work: wait for it to publish SHARED.
                let mut spins = 0u32;
                while c.owner.load(Ordering::Acquire) == REVOKING {
                    backoff(&mut spins);
                }
                return;
            }
            owner => {
                match c
                    .owner
                    .compare_exchange(owner, REVOKING, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
    }
    heavy_barrier();
    let mut spins = 0u32;
    // Acquire: pairs with the owner's release store of `false` (its writes come first).
    while c.busy.load(Ordering::Acquire) {
        backoff(&mut spins);
    }
    c.owner.store(SHARED, Ordering::Release);
}

#[inline]
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// Is the heavy barrier available (checked once per OS process: `membarrier` queried and
/// this process registered for its private expedited command)?
#[inline]
fn fence_available() -> bool {
    *FENCE.get_or_init(register_fence)
}

static FENCE: OnceLock<bool> = OnceLock::new();

#[cfg(target_os = "linux")]
mod sys {
    // From <linux/membarrier.h>.
    pub(super) const QUERY: libc::c_long = 0;
    pub(super) const GLOBAL: libc::c_long = 1;
    pub(super) const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    pub(super) const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    pub(super) fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: `membarrier` takes two integer arguments and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }
}

#[cfg(target_os = "linux")]
fn register_fence() -> bool {
    if std::env::var_os("BT_NO_OWNED_CELLS").is_some() {
        return false;
    }
    let q = sys::membarrier(sys::QUERY);
    q >= 0
        && q & sys::PRIVATE_EXPEDITED != 0
        && q & sys::REGISTER_PRIVATE_EXPEDITED != 0
        && sys::membarrier(sys::REGISTER_PRIVATE_EXPEDITED) == 0
}

#[cfg(not(target_os = "linux"))]
fn register_fence() -> bool {
    false
}

/// A full memory barrier on every running thread of this OS process.
#[cfg(target_os = "linux")]
fn heavy_barrier() {
    if sys::membarrier(sys::PRIVATE_EXPEDITED) == 0 || sys::membarrier(sys::GLOBAL) == 0 {
        return;
    }
    // Registered at the first owned cell, so the call cannot fail; if a kernel ever made
    // it, no owned cell can be taken over soundly: stop rather than race.
    eprintln!("bt: membarrier failed after registration; aborting");
    std::process::abort();
}

#[cfg(not(target_os = "linux"))]
fn heavy_barrier() {
    // No cell is ever owned here (`register_fence`), so no revocation reaches this.
    std::sync::atomic::fence(Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Value, VarCell};
    use std::sync::Arc;

    fn int(v: Value) -> i64 {
        match v {
            Value::Int(n) => n,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_owner_reads_and_writes_without_the_lock() {
        let c = VarCell::owned(Value::Int(1), 7);
        // Without `membarrier` (another OS, a sandbox refusing the call, `BT_NO_OWNED_CELLS`)
        // no cell is ever owned: the shared path is the only one, tested below.
        assert_eq!(c.is_shared(), !fence_available());
        if c.is_shared() {
            return;
        }
        let held = c.value.lock(); // the owner never takes it
        assert_eq!(int(c.get_with(7, Value::clone)), 1);
        assert_eq!(int(c.replace(7, Value::Int(2))), 1);
        assert_eq!(int(c.read(7)), 2);
        drop(held);
    }

    #[test]
    fn another_process_takes_an_owned_cell_over_and_sees_its_value() {
        let c = VarCell::owned(Value::Int(5), 7);
        assert_eq!(int(c.get_with(8, Value::clone)), 5, "never a stand-in nil");
        assert!(c.is_shared());
        assert_eq!(int(c.replace(8, Value::Int(9))), 5);
        // The former owner now goes through the lock and sees the write.
        assert_eq!(int(c.read(7)), 9);
        assert_eq!(int(c.replace(7, Value::Int(10))), 9);
        assert_eq!(int(c.lock().clone()), 10);
    }

    #[test]
    fn a_write_by_another_process_is_kept() {
        let c = VarCell::owned(Value::Int(5), 7);
        drop(c.replace(8, Value::Int(6)));
        assert_eq!(int(c.read(7)), 6);
        let d = VarCell::owned(Value::Int(1), 7);
        *d.lock() = Value::Int(3);
        assert_eq!(int(d.read(7)), 3);
        assert!(d.try_lock().is_some());
    }

    #[test]
    fn no_process_makes_shared_cells() {
        assert!(VarCell::owned(Value::Nil, 0).is_shared());
        assert!(VarCell::new(Value::Nil).is_shared());
    }

    fn text(v: &Value) -> String {
        match v {
            Value::Str(_) => format!("{v:?}"),
            other => panic!("{other:?}"),
        }
    }

    /// The owner keeps replacing heap values without the lock while other threads take
    /// the cell over, read it and write it once each: every value seen is one that was
    /// written (a race would show freed or torn values), and no write is lost — each
    /// foreign write is either answered back to the owner as the old value of a later
    /// write of its own, or is the final value.
    #[test]
    fn owner_and_foreign_threads_never_lose_or_tear_a_value() {
        for round in 0..20 {
            let c = Arc::new(VarCell::owned(Value::str("0"), 7));
            let n = 3000;
            let others: Vec<_> = (0..2)
                .map(|t| {
                    let c = c.clone();
                    std::thread::spawn(move || {
                        let mut saw_foreign = 0;
                        for k in 0..200 {
                            let seen = text(&c.read(8 + t));
                            assert!(seen.contains(char::is_numeric), "{seen}");
                            if k == 100 {
                                let old = text(&c.replace(8 + t, Value::str(format!("f{t}"))));
                                saw_foreign += usize::from(old.contains('f'));
                            }
                        }
                        saw_foreign
                    })
                })
                .collect();
            let mut foreign_seen = 0;
            for i in 1..n {
                let old = text(&c.replace(7, Value::str(i.to_string())));
                if old.contains('f') {
                    foreign_seen += 1;
                } else {
                    assert_eq!(old, format!("{:?}", Value::str((i - 1).to_string())));
                }
            }
            for t in others {
                foreign_seen += t.join().expect("thread");
            }
            let last = text(&c.read(7));
            let final_foreign = usize::from(last.contains('f'));
            assert_eq!(foreign_seen + final_foreign, 2, "round {round}: {last}");
        }
    }
}
