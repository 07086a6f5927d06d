//! Handing one job at a time to the main program's process without allocating: the
//! `Interpreter` puts a borrowed job (a pointer to a closure on the calling thread's stack
//! and its trampoline) in the [`JobSlot`] it shares with the main process's `MainActor`,
//! sends the process an argument-less `Request::Job` message and waits until the job is
//! over. Otherwise an embedder's `Engine::run` of a small script would be mostly
//! allocations: a boxed job, an answer slot, a done signal, a job object and its message.
//!
//! * **Why borrowing is sound.** `Interpreter::try_run` does not return before the job
//!   either ran (the trampoline sets the done signal last) or can no longer run: the main
//!   process exited, or the job was taken back out of the slot. Only one job is in flight
//!   per Interpreter: the caller holds the lock of its [`MainState`] (main process,
//!   session, guest worker) for the length of the job, one lock per call.
//! * **Lent, usually**. On the guest's claimed path (the main process idle,
//!   the runner parked: every call but the first into a fresh main process) the job is not
//!   put in the slot and no message is sent: the guest hands `MainActor::run_job` a pointer
//!   to the frame's `RawJob` (`Frame::lend`, [`run_lent`]); the slot and the message are
//!   the fallback (`RtHandle::drive_job`). The guest keeps the main process
//!   claimed between calls (`runtime::process::lent`), so a call takes no lock of the
//!   process record; before a job goes to the pool instead, [`run_in_main`] gives the
//!   process back (`GuestStacks::release`), or its job message would never run.
//! * **Who runs it** ([`run_in_main`]). The calling thread as the guest worker
//!   (`runtime::sched::guest`; the job signals it with a plain store), or a pool worker
//!   when the Interpreter runs its main program on the pool (`bt run`) or the caller is a
//!   worker of the same runtime: then the message carries a `JobBox` as before, so a
//!   message dropped unrun still sets the done signal (`DoneOnDrop` in the interpreter).

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use crate::interp::eval::{Closure, Ctx, Unwind};
use crate::interp::interpreter::BtError;
use crate::runtime::GuestDone;
use crate::value::Value;

/// What the main program's jobs share, behind one lock of the Interpreter held for the
/// length of a job (one lock per call, not one per part): the main process, the top-level
/// bindings, and the calling thread's guest worker and done signal.
pub struct MainState {
    pub main: crate::runtime::ProcRef,
    pub session: crate::interp::loader::Session,
    pub guest: Guest,
}

/// The calling thread's guest worker and done signal (kept between calls).
#[derive(Default)]
pub struct Guest {
    pub stacks: crate::runtime::GuestStacks,
    pub signal: Option<GuestDone>,
}

/// A borrowed job: `ops.call(data, ctx)` runs it (see the module doc). It lives in its
/// [`Frame`], so the slot holds one pointer (an atomic swap to take, no lock).
struct RawJob {
    data: *mut (),
    /// What runs the frame's job (one static table per frame type: a frame made per call
    /// stores one pointer, not three).
    ops: &'static JobOps,
    /// The main guard armed by the caller for this job ([`Armed`]): the job's hook need not
    /// be called when it runs in that process.
    armed: Armed,
}

/// The functions of one frame type.
struct JobOps {
    call: unsafe fn(*mut (), &mut Ctx),
    /// `call` for a run known to be on the caller's thread (the guest's runner: [`run_lent`]),
    /// which signals the caller with a plain store and no check of the thread.
    call_here: unsafe fn(*mut (), &mut Ctx),
    /// After a panic out of `call`/`call_here` (the job's result not stored): stores the
    /// panic as the job's result and signals the caller (`true`: on the caller's thread).
    fail: unsafe fn(*mut (), String, bool),
    /// `data` is a [`BlockFrame`]: the main process's behaviour runs the block itself
    /// ([`run_lent_here`]), with no call through `call_here`.
    block: bool,
}

/// [`JobOps`] of a [`BlockFrame`].
static BLOCK_OPS: JobOps = JobOps {
    call: block_trampoline::<false>,
    call_here: block_trampoline::<true>,
    fail: block_fail,
    block: true,
};

/// A main-program job whose limits the caller armed before handing it over (an engine's
/// evaluation: `Engine::run` re-arms the main guard itself), for the main process with
/// pid number `pid` (`step` 0: not armed): run there by a context that has its hook, the job
/// restarts the context's budget with `step` and does not call the hook factory
/// (`MainActor::run_job`). A job that runs in another process (the main process was
/// replaced) or in a context without its hook yet calls the factory as any job does.
#[derive(Clone, Copy, Default)]
pub struct Armed {
    pub pid: u64,
    pub step: u32,
}

/// A job's result type that can carry a panic of the job (answered as an error).
pub trait FromPanic {
    fn from_panic(msg: String) -> Self;
}

impl<T> FromPanic for Result<T, String> {
    fn from_panic(msg: String) -> Self {
        Err(msg)
    }
}

/// A panic's payload as text.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".to_string())
}

/// The main process's next job, shared by the Interpreter and its `MainActor`: a pointer to
/// the `RawJob` inside the caller's [`Frame`], or null.
#[derive(Default)]
pub struct JobSlot(AtomicPtr<RawJob>);

/// How a job tells its caller it is over.
enum Signal {
    /// The caller drives the main process itself (`runtime::sched::guest`) and checks this
    /// signal after each resume: when the job runs on the caller's thread (the usual case)
    /// a plain store, no wake-up and no reference count. The signal is the caller's (its
    /// per-Interpreter cache) and outlives the job: the caller cannot return before the
    /// signal is set. A job that ran on a pool worker instead (the process was already
    /// scheduled there) signals through a clone, which also wakes the caller.
    Local(*const GuestDone),
    /// The caller sleeps until a pool worker ran the job.
    Remote(GuestDone),
}

/// A job and its result, on the calling thread's stack.
pub struct Frame<F, R> {
    raw: RawJob,
    f: Option<F>,
    pub out: Option<R>,
    done: Signal,
}

impl<F: FnOnce(&mut Ctx) -> R + Send, R: Send + FromPanic> Frame<F, R> {
    /// The frame's job as the main process's behaviour gets it on the claimed path
    /// (`MainActor::run_job` → [`run_lent`]): a pointer to its `RawJob`. The frame must stay
    /// where it is and untouched until the job is over or can no longer run.
    fn lend(&mut self) -> crate::runtime::LentJob {
        self.raw.data = self as *mut Frame<F, R> as *mut ();
        crate::runtime::LentJob(&mut self.raw as *mut RawJob as *mut ())
    }

    fn new(f: F, done: Signal, armed: Armed) -> Frame<F, R> {
        Frame {
            raw: RawJob {
                data: std::ptr::null_mut(),
                ops: const {
                    &JobOps {
                        call: trampoline::<F, R, false>,
                        call_here: trampoline::<F, R, true>,
                        fail: fail::<F, R>,
                        block: false,
                    }
                },
                armed,
            },
            f: Some(f),
            out: None,
            done,
        }
    }
}

/// What a block call answers: the block's value, its error as the caller gets it (made
/// in the process: `to_bt_error` needs the context), or the text of a panic (or of the
/// main process's exit). One flat enum of two words (the other variants in the Value's
/// spare tags), so the caller reads the value out with one test.
pub enum BlockOut {
    Value(Value),
    Error(Box<BtError>),
    Failed(Box<String>),
}

impl FromPanic for BlockOut {
    fn from_panic(msg: String) -> Self {
        BlockOut::Failed(Box::new(msg))
    }
}

/// A block call as the main process's job ([`call_block_in_main`]; an engine's script call):
/// the block and its arguments borrowed from the caller, no closure and no result nested in
/// the closure's own. On the guest's runner the main process's behaviour runs the block
/// itself ([`run_lent_here`]); anywhere else (the job slot's message) its `RawJob`
/// trampolines do the same.
pub struct BlockFrame {
    raw: RawJob,
    block: *const Arc<Closure>,
    args: *const [Value],
    out: Option<BlockOut>,
    done: Signal,
}

impl BlockFrame {
    fn new(block: &Arc<Closure>, args: &[Value], done: Signal, armed: Armed) -> BlockFrame {
        BlockFrame {
            raw: RawJob {
                data: std::ptr::null_mut(),
                ops: &BLOCK_OPS,
                armed,
            },
            block,
            args,
            out: None,
            done,
        }
    }

    /// As [`Frame::lend`].
    fn lend(&mut self) -> crate::runtime::LentJob {
        self.raw.data = self as *mut BlockFrame as *mut ();
        crate::runtime::LentJob(&mut self.raw as *mut RawJob as *mut ())
    }
}

/// Runs a [`BlockFrame`]'s block, stores its result and signals the caller (`here`: on the
/// caller's thread).
///
/// # Safety
/// As for [`trampoline`], with `data` a live `BlockFrame` whose block and arguments are
/// alive (its caller borrows them for the call).
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn run_block(data: *mut (), ctx: &mut Ctx, here: bool) {
    // SAFETY: see the function's contract; nothing else touches the frame meanwhile.
    let frame = unsafe { &mut *(data as *mut BlockFrame) };
    // SAFETY: the caller borrows the block and the arguments until the job is over.
    let (block, args) = unsafe { (&*frame.block, &*frame.args) };
    let r = match ctx.invoke_block(block, args) {
        Ok(v) => BlockOut::Value(v),
        Err(u) => BlockOut::Error(block_error(ctx, u)),
    };
    // Empty until now (the job runs once): no drop call for the old value.
    if let Some(was) = frame.out.replace(r) {
        drop(was);
    }
    signal(&frame.done, here);
}

/// A block call's error as its caller gets it.
#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)] // the block's own box, opened here, off the hot path
fn block_error(ctx: &mut Ctx, u: Box<Unwind>) -> Box<BtError> {
    Box::new(crate::interp::error::to_bt_error(ctx, *u))
}

/// [`run_block`] as a `RawJob` trampoline.
///
/// # Safety
/// As for [`run_block`].
#[allow(unsafe_code)]
unsafe fn block_trampoline<const HERE: bool>(data: *mut (), ctx: &mut Ctx) {
    // SAFETY: see the function's contract.
    unsafe { run_block(data, ctx, HERE) }
}

/// [`fail`] for a [`BlockFrame`].
///
/// # Safety
/// As for [`fail`].
#[allow(unsafe_code)]
unsafe fn block_fail(data: *mut (), msg: String, here: bool) {
    // SAFETY: see the function's contract.
    let frame = unsafe { &mut *(data as *mut BlockFrame) };
    frame.out = Some(BlockOut::from_panic(msg));
    signal(&frame.done, here);
}

/// Runs the frame's closure once, stores its result and signals the caller (`HERE`: on the
/// caller's thread, known without asking).
///
/// # Safety
/// `data` is a live `Frame<F, R>` whose owner waits for the done signal; with `HERE`, on
/// the owner's thread.
#[allow(unsafe_code)]
unsafe fn trampoline<F: FnOnce(&mut Ctx) -> R, R, const HERE: bool>(data: *mut (), ctx: &mut Ctx) {
    // SAFETY: see the function's contract; nothing else touches the frame meanwhile.
    let frame = unsafe { &mut *(data as *mut Frame<F, R>) };
    if let Some(f) = frame.f.take() {
        frame.out = Some(f(ctx));
    }
    signal(&frame.done, HERE);
}

/// Stores `msg` as the result of a job whose run panicked and signals its caller.
///
/// # Safety
/// As for [`trampoline`]: the job's panic came before it signalled its caller.
#[allow(unsafe_code)]
unsafe fn fail<F, R: FromPanic>(data: *mut (), msg: String, here: bool) {
    // SAFETY: see the function's contract.
    let frame = unsafe { &mut *(data as *mut Frame<F, R>) };
    drop(frame.f.take());
    frame.out = Some(R::from_panic(msg));
    signal(&frame.done, here);
}

/// Tells a job's caller the job is over (`here`: on the caller's thread, known without
/// asking).
#[inline(always)]
#[allow(unsafe_code)]
fn signal(done: &Signal, here: bool) {
    match done {
        Signal::Local(d) => {
            // SAFETY: see `Signal::Local`: the caller waits for this signal.
            let d = unsafe { &**d };
            if here || d.is_this_thread() {
                d.set_local();
            } else {
                // The caller may return (and reuse the signal) once it is set: a copy.
                let done = d.clone();
                done.set();
            }
        }
        Signal::Remote(d) => {
            // The caller may free the frame as soon as the flag is set: signal through a copy.
            let done = d.clone();
            done.set();
        }
    }
}

/// Runs `job` as the main process's next job and answers its result, or None when it
/// never ran or did not finish (the main process exited). The calling thread runs the main
/// process itself when it can (`on_pool` false; `RtHandle::send_and_drive`), else `to_pool`
/// sends the job in `slot` to it as a message a pool worker runs. The caller holds the lock
/// that makes it the only user of `slot` and `stacks`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the job and what the call needs of the Interpreter
pub fn run_in_main<F, R>(
    rt: &crate::runtime::RtHandle,
    slot: &JobSlot,
    guest: &mut Guest,
    main: &crate::runtime::ProcRef,
    on_pool: bool,
    armed: Armed,
    job: F,
    to_pool: impl FnOnce(&GuestDone),
) -> Option<R>
where
    F: FnOnce(&mut Ctx) -> R + Send,
    R: Send + FromPanic,
{
    if !on_pool {
        let Guest { stacks, signal } = guest;
        let done = reset_signal(signal);
        let mut frame = Frame::new(job, Signal::Local(done), armed);
        let lent = frame.lend();
        // Only when the main process cannot be claimed: the job goes in the slot and an
        // argument-less job message to the mailbox (`MainActor::handle` takes it).
        let mut fallback = || {
            // SAFETY: as for `lend`: the frame outlives the call, and `take_back` below
            // removes a job that did not run before the frame goes.
            #[allow(unsafe_code)]
            unsafe {
                slot.put_lent(lent)
            };
            Some(job_message_in_slot())
        };
        // Ok: the job is over, or it never runs (the main process exited).
        match rt.drive_job(stacks, main, lent, &mut fallback, done) {
            Ok(_) => {
                if frame.out.is_none() {
                    slot.take_back();
                }
                let out = frame.out.take();
                // The usual end: the job ran (its closure is gone) and the signal is a
                // pointer, so the frame holds nothing to drop; no drop call for it.
                if frame.f.is_none() {
                    std::mem::forget(frame);
                }
                return out;
            }
            Err(()) => {
                // This thread cannot be the guest (a worker of this runtime): a pool worker
                // runs the job (the process must have its behaviour back for that).
                let job = frame.f.take()?;
                stacks.release();
                return run_on_pool(rt, slot, job, to_pool);
            }
        }
    }
    // A guest call may have left the main process kept claimed (`Sched::Lent`): give it
    // back, so the job message below is run.
    guest.stacks.release();
    run_on_pool(rt, slot, job, to_pool)
}

/// The signal of this thread's previous guest call, reset (nothing sets it late: a guest
/// job's message carries no `DoneOnDrop`), or a new one for a thread's first call.
#[inline(always)]
fn reset_signal(signal: &mut Option<GuestDone>) -> &GuestDone {
    if !signal.as_ref().is_some_and(GuestDone::is_this_thread) {
        *signal = Some(GuestDone::new());
    }
    let done = signal.as_ref().unwrap_or_else(|| unreachable!());
    done.reset();
    done
}

/// [`run_in_main`] for a block call ([`BlockFrame`]): on the guest's runner the main
/// process's behaviour runs the block itself; where the job must go to the pool, it goes
/// as a closure as any job does.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the call and what it needs of the Interpreter
pub fn call_block_in_main(
    rt: &crate::runtime::RtHandle,
    slot: &JobSlot,
    guest: &mut Guest,
    main: &crate::runtime::ProcRef,
    on_pool: bool,
    armed: Armed,
    block: &Arc<Closure>,
    args: &[Value],
    to_pool: impl FnOnce(&GuestDone),
) -> Option<BlockOut> {
    let job = move |ctx: &mut Ctx| -> BlockOut {
        match ctx.invoke_block(block, args) {
            Ok(v) => BlockOut::Value(v),
            Err(u) => BlockOut::Error(block_error(ctx, u)),
        }
    };
    if !on_pool {
        let Guest { stacks, signal } = guest;
        let done = reset_signal(signal);
        let mut frame = BlockFrame::new(block, args, Signal::Local(done), armed);
        let lent = frame.lend();
        let mut fallback = || {
            // SAFETY: as in `run_in_main`: the frame outlives the call, and `take_back`
            // below removes a job that did not run before the frame goes.
            #[allow(unsafe_code)]
            unsafe {
                slot.put_lent(lent)
            };
            Some(job_message_in_slot())
        };
        match rt.drive_job(stacks, main, lent, &mut fallback, done) {
            Ok(_) => {
                if frame.out.is_none() {
                    slot.take_back();
                }
                let out = frame.out.take();
                // The frame holds nothing else to drop (pointers, a `Signal::Local`): no
                // drop call for it.
                std::mem::forget(frame);
                return out;
            }
            Err(()) => {
                stacks.release();
                return run_on_pool(rt, slot, job, to_pool);
            }
        }
    }
    guest.stacks.release();
    run_on_pool(rt, slot, job, to_pool)
}

/// The job as a message a pool worker runs; this thread sleeps until it is over.
fn run_on_pool<F, R>(
    rt: &crate::runtime::RtHandle,
    slot: &JobSlot,
    job: F,
    to_pool: impl FnOnce(&GuestDone),
) -> Option<R>
where
    F: FnOnce(&mut Ctx) -> R + Send,
    R: Send + FromPanic,
{
    let done = GuestDone::new();
    let mut frame = Frame::new(job, Signal::Remote(done.clone()), Armed::default());
    // SAFETY: `frame` lives to the end of this function; this thread waits on `done` (set
    // when the job is over or its message dropped) before touching it.
    #[allow(unsafe_code)]
    unsafe {
        slot.put(&mut frame)
    };
    to_pool(&done);
    rt.wait_job(&done);
    // Not started (the main process no longer accepts messages): take it back before
    // `frame` goes.
    slot.take_back();
    frame.out.take()
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
    pub unsafe fn put<F: FnOnce(&mut Ctx) -> R + Send, R: Send + FromPanic>(
        &self,
        frame: &mut Frame<F, R>,
    ) {
        frame.raw.data = frame as *mut Frame<F, R> as *mut ();
        self.0.store(&mut frame.raw, Ordering::Release);
    }

    /// Puts a job lent by [`Frame::lend`] in the slot.
    ///
    /// # Safety
    /// As for [`JobSlot::put`].
    #[allow(unsafe_code)]
    unsafe fn put_lent(&self, job: crate::runtime::LentJob) {
        self.0.store(job.0 as *mut RawJob, Ordering::Release);
    }

    /// Removes a job that did not start; answers whether there was one.
    pub fn take_back(&self) -> bool {
        !self
            .0
            .swap(std::ptr::null_mut(), Ordering::AcqRel)
            .is_null()
    }

    /// Runs the job in the slot, if any (the main process).
    #[allow(unsafe_code)]
    pub fn run(&self, ctx: &mut Ctx) {
        let job = self.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if job.is_null() {
            return;
        }
        // A panic of the job is answered as its result.
        let job = crate::runtime::LentJob(job as *mut ());
        let run = || {
            // SAFETY: `put`'s contract keeps the frame (and the `RawJob` in it) alive and
            // untouched until the job is over, which `call` signals last; the swap above
            // made this the only run of it.
            unsafe { run_lent(job, ctx) }
        };
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            ctx.reset_after_panic();
            // SAFETY: the job panicked before it signalled its caller, which still waits.
            unsafe { fail_lent(job, panic_text(&*p), false) }
        }
    }
}

/// Runs a job lent by [`Frame::lend`] (the claimed path: the main process's behaviour got
/// it from the guest directly, no slot).
///
/// # Safety
/// `job` comes from [`Frame::lend`] of a frame whose owner waits for its done signal, and
/// this is the job's only run. The fields are copied out before the call, which may end
/// the frame's life.
#[allow(unsafe_code)]
pub unsafe fn run_lent(job: crate::runtime::LentJob, ctx: &mut Ctx) {
    let job = job.0 as *mut RawJob;
    // SAFETY: see the function's contract.
    let (call, data) = unsafe { ((*job).ops.call, (*job).data) };
    // SAFETY: `call` is the trampoline made for `data`'s frame type.
    unsafe { call(data, ctx) }
}

/// [`run_lent`] on the caller's own thread: the guest's runner, which runs the main
/// process's lent jobs (`MainActor::run_job`) only for the thread that drives it.
///
/// # Safety
/// As for [`run_lent`], and the calling thread is the job's owner's.
#[allow(unsafe_code)]
#[inline(always)]
pub unsafe fn run_lent_here(job: crate::runtime::LentJob, ctx: &mut Ctx) {
    let job = job.0 as *mut RawJob;
    // SAFETY: see the function's contract.
    let (ops, data) = unsafe { ((*job).ops, (*job).data) };
    if ops.block {
        // SAFETY: a block job's `data` is its `BlockFrame` (`BlockFrame::lend`).
        return unsafe { run_block(data, ctx, true) };
    }
    // SAFETY: `call_here` is the trampoline made for `data`'s frame type.
    unsafe { (ops.call_here)(data, ctx) }
}

/// The step the caller armed for a lent job running in the main process with pid number
/// `pid` ([`Armed`]), or None when it armed nothing for that process.
///
/// # Safety
/// As for [`run_lent`], before the job's run.
#[inline(always)]
#[allow(unsafe_code)]
pub unsafe fn armed_step(job: crate::runtime::LentJob, pid: u64) -> Option<u32> {
    let job = job.0 as *const RawJob;
    // SAFETY: see the function's contract.
    let a = unsafe { (*job).armed };
    (a.step != 0 && a.pid == pid).then_some(a.step)
}

/// Answers a panic of a lent job's run as its result and signals its caller (`here`: on
/// the caller's thread).
///
/// # Safety
/// As for [`run_lent`]; the job's run panicked before it signalled its caller.
#[allow(unsafe_code)]
pub unsafe fn fail_lent(job: crate::runtime::LentJob, msg: String, here: bool) {
    let job = job.0 as *mut RawJob;
    // SAFETY: see the function's contract.
    let (fail, data) = unsafe { ((*job).ops.fail, (*job).data) };
    // SAFETY: `fail` was made for `data`'s frame type.
    unsafe { fail(data, msg, here) }
}

/// The message that runs the job in the main process's [`JobSlot`] (an argument-less job
/// request; `MainActor::handle` takes the job from the slot).
fn job_message_in_slot() -> crate::runtime::Message {
    crate::runtime::Message::job()
}
