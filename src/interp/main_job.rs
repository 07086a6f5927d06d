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

use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::eval::Ctx;

/// A borrowed job: `call(data, ctx)` runs it (see the module doc).
struct RawJob {
    data: *mut (),
    call: unsafe fn(*mut (), &mut Ctx),
}

// SAFETY: a RawJob points at a `Frame` on the stack of a thread blocked in
// `Interpreter::try_run` until the job is over; the frame's closure and result are `Send`
// (bounds of `JobSlot::put`), so running it on another thread is what a boxed `Send` job
// did.
#[allow(unsafe_code)]
unsafe impl Send for RawJob {}

/// The main process's next job, shared by the Interpreter and its `MainActor`.
#[derive(Default)]
pub struct JobSlot(Mutex<Option<RawJob>>);

/// A job and its result, on the calling thread's stack.
pub struct Frame<F, R> {
    f: Option<F>,
    pub out: Option<R>,
    done: crate::runtime::GuestDone,
}

impl<F: FnOnce(&mut Ctx) -> R + Send, R: Send> Frame<F, R> {
    pub fn new(f: F, done: crate::runtime::GuestDone) -> Frame<F, R> {
        Frame {
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
        *self.0.lock() = Some(RawJob {
            data: frame as *mut Frame<F, R> as *mut (),
            call: trampoline::<F, R>,
        });
    }

    /// Removes a job that did not start; answers whether there was one.
    pub fn take_back(&self) -> bool {
        self.0.lock().take().is_some()
    }

    /// Runs the job in the slot, if any (the main process).
    pub fn run(&self, ctx: &mut Ctx) {
        let job = self.0.lock().take();
        if let Some(j) = job {
            // SAFETY: `put`'s contract keeps the frame alive and untouched until the job is
            // over, which `call` signals last.
            #[allow(unsafe_code)]
            unsafe {
                (j.call)(j.data, ctx)
            }
        }
    }
}
