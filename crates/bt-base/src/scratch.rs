//! Scratch directories for the crate's unit tests (compiled only under `cfg(test)`).
//!
//! Every directory lives under one per-process root, `$TMPDIR/bt-test-PID`, which an `atexit`
//! hook removes when the test binary ends — also after failing tests — so `cargo test` leaves
//! nothing in the temporary directory.

// The `atexit` registration is the one unsafe call (a C function taking a callback).
#![allow(unsafe_code)]

use std::path::PathBuf;
use std::sync::Once;

fn root() -> PathBuf {
    std::env::temp_dir().join(format!("bt-test-{}", std::process::id()))
}

extern "C" fn remove_root() {
    let _ = std::fs::remove_dir_all(root());
}

/// A fresh, empty directory `NAME` under the per-process root.
pub fn dir(name: &str) -> PathBuf {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // SAFETY: `remove_root` is an `extern "C" fn()` with no preconditions; atexit only
        // stores the pointer and calls it once at process exit.
        unsafe {
            libc::atexit(remove_root);
        }
    });
    let d = root().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}
