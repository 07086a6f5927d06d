//! Running one huge opaque computation off the worker thread (issue 15).
//!
//! Bulk primitives pay reductions at check points (`Ctx::charge`), but a single library call
//! — a multiplication of two million-digit Integers, the decimal printing of one — has no
//! check point inside: it holds its worker for seconds, and every process scheduled on that
//! worker (coroutines never migrate) waits behind it, the main program included, so even
//! `Program exit:` could not run. [`run`] sends such a call (known to be big from the units
//! it is charged) to a fresh thread and suspends only the calling process until it answers.
//! A process killed or told to exit meanwhile leaves at once; the thread finishes on its own
//! and its answer is dropped (process exit does not wait for it).

use crate::interp::eval::{Ctx, Unwind};

/// Charge units (`interp::eval::charge`) above which a call runs on its own thread: about
/// 2^22 units is tens of milliseconds of big-Integer work.
pub const OFFLOAD_UNITS: usize = 1 << 22;

/// Answers `f()`, computed on a separate thread when `units` is large and the caller is a
/// process (the process suspends meanwhile), else inline.
pub fn run<T: Send + 'static>(
    ctx: &mut Ctx,
    units: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Unwind> {
    if units < OFFLOAD_UNITS || crate::interp::actor::cx_of(ctx).is_none() {
        return Ok(f());
    }
    type Job<T> = Box<dyn FnOnce() -> T + Send>;
    let job: std::sync::Arc<parking_lot::Mutex<Option<Job<T>>>> =
        std::sync::Arc::new(parking_lot::Mutex::new(Some(Box::new(f))));
    crate::interp::actor::await_external(ctx, "a long computation", move |done| {
        let (j, d) = (
            job.clone(),
            std::sync::Arc::new(parking_lot::Mutex::new(Some(done))),
        );
        let d2 = d.clone();
        let spawned = std::thread::Builder::new()
            .name("bt-long-op".into())
            .spawn(move || {
                let f = j.lock().take();
                if let (Some(f), Some(done)) = (f, d2.lock().take()) {
                    done(f());
                }
            });
        if spawned.is_err() {
            // No thread to be had: compute here rather than never answering.
            let f = job.lock().take();
            if let (Some(f), Some(done)) = (f, d.lock().take()) {
                done(f());
            }
        }
    })
}
