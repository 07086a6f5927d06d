//! Handing one job at a time to the main program's process without allocating: the
//! `Interpreter` puts a borrowed job (a pointer to a closure on the calling thread's stack
//! and its trampoline) in the [`JobSlot`] it shares with the main process's `MainActor`,
//! sends the process an argument-less `Request::Job` message and waits until the job is
//! over. An embedder's `Engine::run` of a small script was mostly allocations before: a
//! boxed job, an answer slot, a done signal, a job object and its message, per call.
//!
//! * **Why borrowing is sound.** `Interpreter::try_run` does not return before the job
//!   either ran (the trampoline sets the done signal last) or can no longer run: the main
//!   process exited, or the job was taken back out of the slot. Only one job is in flight
//!   per Interpreter (the guest lock and the session hand-over serialise callers).
//! * **Who runs it.** The calling thread as the guest worker (`runtime::sched::guest`), or a
//!   pool worker when the guest is busy: then the message carries a `JobBox` as before, so a
//!   message dropped unrun still sets the done signal (`DoneOnDrop` in the interpreter).

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use crate::interp::eval::Ctx;

/// A borrowed job: `call(data, ctx)` runs it (see the module doc). It lives in its
/// [`Frame`], so the slot holds one pointer (an atomic swap to take, no lock).
struct RawJob {
    data: *mut (),
    call: unsafe fn(*mut (), &mut Ctx),
}

/// The main process's next job, shared by the Interpreter and its `MainActor`: a pointer to
/// the `RawJob` inside the caller's [`Frame`], or null.
#[derive(Default)]
pub struct JobSlot(AtomicPtr<RawJob>);

/// A job and its result, on the calling thread's stack.
pub struct Frame<F, R> {
    raw: RawJob,
    f: Option<F>,
    pub out: Option<R>,
    done: crate::runtime::GuestDone,
}

impl<F: FnOnce(&mut Ctx) -> R + Send, R: Send> Frame<F, R> {
    pub fn new(f: F, done: crate::runtime::GuestDone) -> Frame<F, R> {
        Frame {
            raw: RawJob {
                data: std::ptr::null_mut(),
                call: trampoline::<F, R>,
            },
            f: Some(f),
            out: None,
            done,
        }
    }

    /// Replaces the signal set when the job is over (before the job is put in a slot).
    pub fn set_done(&mut self, done: crate::runtime::GuestDone) {
        self.done = done;
    }
}

/// Runs the frame's closure once, stores its result and signals the caller.
///
/// # Safety
/// `data` is a live `Frame<F, R>` whose owner waits for the done signal.
#[allow(unsafe_code)]
unsafe fn trampoline<F: FnOnce(&mut Ctx) -> R, R>(data: *mut (), ctx: &mut Ctx) {
    // SAFETY: see the function's contract; nothing else touches the frame meanwhile.
    let frame = unsafe { &mut *(data as *mut Frame<F, R>) };
    if let Some(f) = frame.f.take() {
        frame.out = Some(f(ctx));
    }
    // The caller may free the frame as soon as the flag is set: signal through a copy.
    let done = frame.done.clone();
    done.set();
}

impl JobSlot {
    pub fn new() -> Arc<JobSlot> {
        Arc::new(JobSlot::default())
    }

    /// Puts `frame`'s job in the slot.
    ///
    /// # Safety
    /// The caller must keep `frame` alive and must not touch it until the job is over (its
    /// done signal is set) or [`JobSlot::take_back`] answered true.
    #[allow(unsafe_code)]
    pub unsafe fn put<F: FnOnce(&mut Ctx) -> R + Send, R: Send>(&self, frame: &mut Frame<F, R>) {
        frame.raw.data = frame as *mut Frame<F, R> as *mut ();
        self.0.store(&mut frame.raw, Ordering::Release);
    }

    /// Removes a job that did not start; answers whether there was one.
    pub fn take_back(&self) -> bool {
        !self
            .0
            .swap(std::ptr::null_mut(), Ordering::AcqRel)
            .is_null()
    }

    /// Runs the job in the slot, if any (the main process).
    pub fn run(&self, ctx: &mut Ctx) {
        let job = self.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if job.is_null() {
            return;
        }
        // SAFETY: `put`'s contract keeps the frame (and the `RawJob` in it) alive and
        // untouched until the job is over, which `call` signals last; the swap above made
        // this the only run of it. The fields are copied out before the call, which may
        // end the frame's life.
        #[allow(unsafe_code)]
        unsafe {
            let (call, data) = ((*job).call, (*job).data);
            call(data, ctx)
        }
    }
}
