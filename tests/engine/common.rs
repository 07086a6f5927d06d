//! Helpers shared by the embedding-API tests (the modules of `tests/engine/`).

use bt::{Engine, EngineError};

/// The Integer `src` evaluates to (panics with the source otherwise).
pub(crate) fn int(e: &Engine, src: &str) -> i64 {
    match e.eval(src) {
        Ok(v) => v
            .as_i64()
            .unwrap_or_else(|| panic!("{src}: not an Integer: {}", e.display(&v))),
        Err(err) => panic!("{src}: {err}"),
    }
}

/// The error `src` raises (panics if it answers a value).
pub(crate) fn err(e: &Engine, src: &str) -> EngineError {
    match e.eval(src) {
        Ok(v) => panic!("{src}: expected an error, got {}", e.display(&v)),
        Err(err) => err,
    }
}
