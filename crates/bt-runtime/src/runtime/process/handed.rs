//! The handle a process run holds on its process: counted, or lent by the sync caller that
//! claimed the process and handed it to its worker (no reference count changes per round
//! trip), counted at the run's first suspension.
//!
//! `unsafe`: a lent handle is an uncounted copy of the caller's, valid while the caller
//! stays suspended (see [`RunRef::lent`]).
#![allow(unsafe_code)]

use std::mem::ManuallyDrop;

use super::ProcRef;

/// A process run's handle on its process ([`RunRef::counted`] or [`RunRef::lent`]). A run
/// on a lent handle takes a count of its own before it suspends (`Cx::hold`), which the
/// handle adopts when the run is over ([`RunRef::adopt`]): the lent copy is relied on only
/// while the run has not suspended yet.
pub(crate) struct RunRef {
    p: ManuallyDrop<ProcRef>,
    counted: bool,
}

impl RunRef {
    #[inline(always)]
    pub(crate) fn counted(p: ProcRef) -> RunRef {
        RunRef {
            p: ManuallyDrop::new(p),
            counted: true,
        }
    }

    /// An uncounted copy of `p`.
    ///
    /// # Safety
    /// `p` must stay alive until the run this is for suspends for the first time or ends:
    /// `p` is the handle of a sync caller that suspends right after the claim and is
    /// resumed by the same worker thread, which does not resume anything before the run
    /// it was handed suspends (`Cx::call`, `Worker::run_handed_over`). A run that suspends
    /// takes a counted handle first (`Cx::hold`).
    #[inline(always)]
    pub(crate) unsafe fn lent(p: &ProcRef) -> RunRef {
        RunRef {
            // SAFETY: the copy is never dropped as a `ProcRef` (`Drop` below skips it), so
            // the count it did not take is not given back; the caller keeps `p` alive as
            // long as the copy is used (this function's contract).
            p: ManuallyDrop::new(unsafe { std::ptr::read(p) }),
            counted: false,
        }
    }

    /// Whether this handle holds a count of its own.
    #[inline(always)]
    pub(crate) fn is_counted(&self) -> bool {
        self.counted
    }

    /// A lent handle takes over a count its run took for it (`Cx::hold`, which cloned the
    /// handle and forgot the clone): it is counted from now on.
    #[inline(always)]
    pub(crate) fn adopt(&mut self) {
        self.counted = true;
    }

    /// A counted handle (a clone of a lent one), for a run that cannot start now.
    pub(crate) fn into_counted(mut self) -> ProcRef {
        let p = if self.counted {
            self.counted = false;
            // SAFETY: taken once; `counted` is cleared, so `Drop` does not drop it again.
            unsafe { ManuallyDrop::take(&mut self.p) }
        } else {
            (*self.p).clone()
        };
        drop(self);
        p
    }
}

impl std::ops::Deref for RunRef {
    type Target = ProcRef;
    #[inline(always)]
    fn deref(&self) -> &ProcRef {
        &self.p
    }
}

impl Drop for RunRef {
    #[inline(always)]
    fn drop(&mut self) {
        if self.counted {
            // SAFETY: a counted handle owns its `ProcRef`, dropped exactly once, here.
            unsafe { ManuallyDrop::drop(&mut self.p) }
        }
    }
}
