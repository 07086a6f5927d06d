//! Ctrl-C during an evaluation. The `ctrlc` crate runs our handler on its own thread (its
//! signal handler only wakes that thread); while an input is being evaluated the handler
//! kills the interpreter's main process (the process that runs the input), so a long loop
//! or a blocked receive ends and the session continues with a fresh main process. At the
//! prompt the line editor reads Ctrl-C itself (raw mode: no signal); outside an evaluation
//! the signal is ignored (`TERM=dumb` prompts too).

use std::sync::atomic::{AtomicBool, Ordering};

/// An input is being evaluated.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// The running evaluation was interrupted.
static FIRED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process; a second call, or a platform refusing the
/// handler, leaves Ctrl-C as it was).
pub(crate) fn install(rt: crate::runtime::RtHandle) {
    let _ = ctrlc::set_handler(move || {
        if RUNNING.load(Ordering::SeqCst) {
            FIRED.store(true, Ordering::SeqCst);
            for p in rt.processes(true) {
                if p.label == "main" {
                    rt.kill(&p.proc);
                }
            }
        }
    });
}

/// Runs `f` as an interruptible evaluation; answers its result and whether Ctrl-C ended it.
pub(crate) fn run<R>(f: impl FnOnce() -> R) -> (R, bool) {
    FIRED.store(false, Ordering::SeqCst);
    RUNNING.store(true, Ordering::SeqCst);
    let r = f();
    RUNNING.store(false, Ordering::SeqCst);
    (r, FIRED.swap(false, Ordering::SeqCst))
}
