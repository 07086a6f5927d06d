//! Ctrl-C during an evaluation. The `ctrlc` crate runs our handler on its own thread (its
//! signal handler only wakes that thread); while an input is being evaluated the handler
//! ends the interpreter's main process (the process that runs the input) with the exit
//! reason `#interrupted`, so a long loop
//! or a blocked receive ends and the session continues with a fresh main process. At the
//! prompt the line editor reads Ctrl-C itself (raw mode: no signal). On a terminal the line
//! editor does not drive (`TERM=dumb`: cooked lines) a Ctrl-C at a prompt is a signal: the
//! terminal has dropped the line being typed, the handler prints a fresh prompt and marks
//! the half-typed input as dropped ([`prompt`] tells the REPL); elsewhere it is ignored.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// An input is being evaluated.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// The running evaluation was interrupted.
static FIRED: AtomicBool = AtomicBool::new(false);
/// The REPL waits for a line at a prompt.
static AT_PROMPT: AtomicBool = AtomicBool::new(false);
/// A Ctrl-C came (as a signal) while the REPL waited at a prompt.
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process; a second call, or a platform refusing the
/// handler, leaves Ctrl-C as it was).
pub(crate) fn install(rt: crate::runtime::RtHandle) {
    let _ = ctrlc::set_handler(move || {
        if RUNNING.load(Ordering::SeqCst) {
            FIRED.store(true, Ordering::SeqCst);
            // Ended with the reason `#interrupted` (untrapped, so as final as `kill`): the
            // input's statements then keep what they assigned (`loader::run_statements`),
            // where another end (a kill, an embedder's deadline) rolls them back.
            let reason =
                crate::runtime::ExitReason::Custom(crate::value::Value::sym("interrupted"));
            for p in rt.processes(true) {
                if p.label == "main" {
                    rt.exit(&p.proc, p.proc.pid(), reason.clone());
                }
            }
        } else if AT_PROMPT.load(Ordering::SeqCst) {
            CANCELLED.store(true, Ordering::SeqCst);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\nbt> ");
            let _ = out.flush();
        }
    });
}

/// Reads a line at a prompt with `read`; answers it and whether a Ctrl-C (a signal, on a
/// cooked terminal) came while waiting: the input typed before it is to be dropped.
pub(crate) fn prompt<R>(read: impl FnOnce() -> R) -> (R, bool) {
    CANCELLED.store(false, Ordering::SeqCst);
    AT_PROMPT.store(true, Ordering::SeqCst);
    let r = read();
    AT_PROMPT.store(false, Ordering::SeqCst);
    (r, CANCELLED.swap(false, Ordering::SeqCst))
}

/// Runs `f` as an interruptible evaluation; answers its result and whether Ctrl-C ended it.
pub(crate) fn run<R>(f: impl FnOnce() -> R) -> (R, bool) {
    FIRED.store(false, Ordering::SeqCst);
    RUNNING.store(true, Ordering::SeqCst);
    let r = f();
    RUNNING.store(false, Ordering::SeqCst);
    (r, FIRED.swap(false, Ordering::SeqCst))
}
