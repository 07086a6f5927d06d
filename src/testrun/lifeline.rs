//! A worker's lifeline to its `bt test` parent: a worker must not outlive the
//! process that started it (a killed `bt test` used to leave workers spinning with ppid 1).
//!
//! The parent starts each worker with a pipe as stdin that it never writes to and sets
//! [`ENV`]. The kernel closes the parent's end when the parent exits for any reason, `kill -9`
//! included, so the worker's read answers end-of-file and a watcher thread ends the worker.
//! A pipe rather than Linux's `PR_SET_PDEATHSIG`: that signal follows the parent *thread*
//! that forked, and `bt test` starts workers from short-lived threads; a pipe also works on
//! every Unix. The worker moves the pipe off fd 0 and puts `/dev/null` there, so scripts
//! still read an empty stdin as before.

// Duplicating and replacing file descriptors (libc::dup/dup2, File::from_raw_fd) and
// `_exit` need `unsafe`; each block says why it is sound.
#![allow(unsafe_code)]

/// Set (to `1`) in a worker's environment when its stdin is the lifeline.
pub(crate) const ENV: &str = "BT_TEST_LIFELINE";

/// In a worker: watch the lifeline (if the parent set one up) and exit when it breaks.
#[cfg(unix)]
pub(crate) fn watch() {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd};
    if std::env::var_os(ENV).is_none() {
        return;
    }
    // SAFETY: `dup` of fd 0 has no memory-safety preconditions; a negative answer is an error.
    let fd = unsafe { libc::dup(0) };
    if fd < 0 {
        return;
    }
    if let Ok(null) = std::fs::File::open("/dev/null") {
        // SAFETY: both descriptors are open; fd 0 is replaced atomically by `dup2`.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    // SAFETY: `fd` is a fresh descriptor from `dup` that nothing else owns.
    let mut line = unsafe { std::fs::File::from_raw_fd(fd) };
    let _ = std::thread::Builder::new()
        .name("bt-test-lifeline".into())
        .stack_size(64 << 10)
        .spawn(move || {
            let mut buf = [0u8; 64];
            loop {
                match line.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            // The parent is gone: nobody reads our results. `_exit` skips destructors and
            // atexit hooks, which could wait on locks held by the running evaluator.
            // SAFETY: `_exit` ends the process; it has no preconditions.
            unsafe { libc::_exit(3) };
        });
}

#[cfg(not(unix))]
pub(crate) fn watch() {}
