//! The process's entry point: `main` as the C runtime calls it, without the standard
//! library's start-up (`#![no_main]` in main.rs).
//!
//! The standard library's `main` wrapper (`std::rt::lang_start`) does four things before a
//! Rust `main`, of which this does the two a program sees and leaves out the one that costs:
//! - standard input, output and error are opened on `/dev/null` when closed — done here;
//! - `SIGPIPE` is ignored, so a write to a closed pipe is an error, not the end of the
//!   process — done here (child processes still start with it at its default, as before);
//! - the main thread is named `main` (panic messages name it) — left out: a panic on it
//!   reads `thread '<unnamed>' panicked`;
//! - a `SIGSEGV` handler tells a stack overflow of a standard-library thread from other
//!   faults and prints `thread … has overflowed its stack` before aborting — left out. To
//!   find the main thread's guard page it asks glibc for the main thread's stack
//!   (`pthread_getattr_np`), which reads and parses `/proc/self/maps`, and every thread then
//!   maps and unmaps a signal stack: with the threads of a `bt run`, ~0.1 ms of every start
//!   (docs/performance.md, "Start-up"). bt's programs never reach a guard page (a program's
//!   depth is bounded by `--max-depth` and by its stack's room, checked before a call), so
//!   such an overflow would be a defect of bt: it now ends the process with `SIGSEGV`
//!   instead of that message and `SIGABRT` (docs/decisions.md).
//!
//! A panic out of the command line ends the process with status 101, as the standard
//! library's wrapper does.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int};

/// The C entry point. Arguments and environment are read through `std::env` (on glibc the
/// standard library records them from its own constructor, before this runs).
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    crate::allocator::restore_environment();
    standard_fds_open();
    // SAFETY: sets the disposition of SIGPIPE to ignored, as the standard library's start-up
    // does; no handler function is involved, and no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // glibc's malloc serves only the C library's own calls here (mimalloc serves bt's), one
    // of them on every thread's start (registering its thread-local destructors): with one
    // arena, a new thread no longer reserves a 128 MiB arena of its own and faults in its
    // header.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets an integer tuning parameter of glibc's malloc; no thread exists yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let code = std::panic::catch_unwind(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        bt_cli::cli_main(&args)
    })
    .unwrap_or(101);
    // Flushes standard output, as a return from the standard library's `main` does.
    std::process::exit(code)
}

/// Opens `/dev/null` on each of descriptors 0–2 that is closed, so that a file the program
/// opens never becomes its standard input, output or error (the standard library's check).
fn standard_fds_open() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is an array of three initialised `pollfd`s that outlives the call.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } != -1;
    for pfd in &fds {
        let closed = if polled {
            pfd.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD on a descriptor number reads its flags; no memory is passed.
            let bad = unsafe { libc::fcntl(pfd.fd, libc::F_GETFD) } == -1;
            bad && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        // SAFETY: a NUL-terminated path and plain flags. The lowest free descriptor is
        // the closed one (0–2 are opened in order), which the process keeps open.
        if closed && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } == -1 {
            std::process::abort();
        }
    }
}
