//! A context's one-entry cache of the host function it called last (`engine::host`).
//!
//! Host functions live in `Program::host_fns` behind a lock, keyed by (class, selector);
//! looking one up per call cost a lock, a hash and an `Arc` clone and drop — four atomic
//! read-modify-writes per call. A [`Ctx`](crate::interp::eval::Ctx) keeps the function it
//! called last with the program epoch it was looked up at. Every registration installs a
//! method (`Program::set_method` bumps the epoch), so an entry of the current epoch is what the
//! table holds. A call moves the function out of the entry while it runs and back after it
//! (no reference counting), so a nested host call through the same context cannot drop a
//! running function.

use crate::interp::program::HostFn;
use crate::value::Sym;

/// A host function's identity in a send: the defining class, the selector, and whether it
/// is an instance-side method (`engine::host_type`).
pub(crate) type HostKey = (Sym, Sym, bool);

/// The last host function a context called, with the program epoch it was looked up at.
pub(crate) struct HostCache {
    epoch: u64,
    key: HostKey,
    f: Option<HostFn>,
}

impl Default for HostCache {
    fn default() -> Self {
        HostCache {
            epoch: 0,
            key: (Sym::NONE, Sym::NONE, false),
            f: None,
        }
    }
}

impl HostCache {
    /// Takes the cached function for `key` when it was looked up at `epoch`.
    #[inline(always)]
    pub(crate) fn take(&mut self, epoch: u64, key: HostKey) -> Option<HostFn> {
        if self.epoch == epoch && self.key == key {
            self.f.take()
        } else {
            None
        }
    }

    /// Keeps `f` for the next call of `key` at `epoch` (replacing whatever is there).
    #[inline(always)]
    pub(crate) fn put(&mut self, epoch: u64, key: HostKey, f: HostFn) {
        self.epoch = epoch;
        self.key = key;
        self.f = Some(f);
    }
}
