//! Capabilities an embedding host grants (LANGUAGE.md 13: "File is a capability").
//!
//! Every primitive that reaches outside the interpreter calls [`require`] first — the one check
//! point per capability. `bt run`, `bt test` and the REPL grant everything (the program is
//! not embedded); a program run by an embedder (`Program::embedded`, set by `bt::Engine`) has
//! only what the host granted with [`Grants::grant`] on `Program::capabilities`; anything else
//! raises `capability_denied`.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::interp::eval::{Ctx, Unwind};

/// What a host may grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// The `File` class: reading, writing and listing the file system.
    File,
}

impl Capability {
    fn bit(self) -> u32 {
        match self {
            Capability::File => 1,
        }
    }

    /// The name used in messages and by hosts.
    pub fn name(self) -> &'static str {
        match self {
            Capability::File => "File",
        }
    }
}

/// The capabilities an embedding host granted (ignored when the program is not embedded).
#[derive(Default, Debug)]
pub struct Grants(AtomicU32);

impl Grants {
    pub fn grant(&self, c: Capability) {
        self.0.fetch_or(c.bit(), Ordering::Relaxed);
    }
    pub fn revoke(&self, c: Capability) {
        self.0.fetch_and(!c.bit(), Ordering::Relaxed);
    }
    pub fn has(&self, c: Capability) -> bool {
        self.0.load(Ordering::Relaxed) & c.bit() != 0
    }
}

/// Whether the running program may use `c`.
pub fn granted(ctx: &Ctx, c: Capability) -> bool {
    !ctx.prog.embedded.load(Ordering::Relaxed) || ctx.prog.capabilities.has(c)
}

/// The check point: `Ok` when `c` is granted, else `capability_denied` naming the send.
pub fn require(ctx: &Ctx, c: Capability, what: &str) -> Result<(), Unwind> {
    if granted(ctx, c) {
        return Ok(());
    }
    Err(ctx.err_hint(
        "capability_denied",
        format!("{what}: the {} capability is not granted", c.name()),
        format!(
            "the embedding host must grant Capability::{} before scripts may use it",
            c.name()
        ),
    ))
}
