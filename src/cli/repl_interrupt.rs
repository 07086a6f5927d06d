//! Ctrl-C during an evaluation. The SIGINT handler writes a byte to a pipe (all it may do);
//! a watcher thread reads it and, while an input is being evaluated, kills the interpreter's
//! main process (the process that runs the input), so a long loop or a blocked receive ends
//! and the session continues with a fresh main process. At the prompt the line editor reads
//! Ctrl-C itself (raw mode: no signal); outside an evaluation the byte is ignored.

#![allow(unsafe_code)] // sigaction/pipe/read/write (libc): a signal handler may only write to a pipe

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The write end of the pipe (-1 before `install`).
static PIPE_W: AtomicI32 = AtomicI32::new(-1);
/// An input is being evaluated.
pub(crate) static RUNNING: AtomicBool = AtomicBool::new(false);
/// The running evaluation was interrupted.
pub(crate) static FIRED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    let fd = PIPE_W.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: `write` is async-signal-safe; `fd` is the write end of the pipe made in
        // `install`, never closed; a full pipe just drops the byte (non-blocking).
        unsafe {
            libc::write(fd, b"!".as_ptr().cast(), 1);
        }
    }
}

/// Installs the handler and the watcher (once per process).
pub(crate) fn install(rt: crate::runtime::RtHandle) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `pipe` fills the two-element array; the flags call takes a valid fd.
    let ok = unsafe { libc::pipe(fds.as_mut_ptr()) } == 0
        && unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) } == 0;
    if !ok {
        return;
    }
    PIPE_W.store(fds[1], Ordering::Relaxed);
    let read_fd = fds[0];
    std::thread::spawn(move || loop {
        let mut b = [0u8; 16];
        // SAFETY: reads into a local buffer of the given length from the pipe's read end.
        let n = unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), b.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        if RUNNING.load(Ordering::SeqCst) {
            FIRED.store(true, Ordering::SeqCst);
            for p in rt.processes(true) {
                if p.label == "main" {
                    rt.kill(&p.proc);
                }
            }
        }
    });
    // SAFETY: a zeroed sigaction with a plain handler (no SA_SIGINFO), an empty mask and
    // SA_RESTART, installed for SIGINT only; the handler only calls `write`.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// Runs `f` as an interruptible evaluation; answers its result and whether Ctrl-C ended it.
pub(crate) fn run<R>(f: impl FnOnce() -> R) -> (R, bool) {
    FIRED.store(false, Ordering::SeqCst);
    RUNNING.store(true, Ordering::SeqCst);
    let r = f();
    RUNNING.store(false, Ordering::SeqCst);
    (r, FIRED.swap(false, Ordering::SeqCst))
}
