//! Capabilities an embedding host grants: what a program may touch outside its own values.
//!
//! `bt run`, `bt test` and the REPL grant everything (the program is not embedded); a program
//! run by an embedder (`Program::embedded`, set by `bt::Engine`) has only what the host
//! granted (`EngineBuilder::grant`, `Engine::grant`, on `Program::capabilities`); anything
//! else raises `capability_denied` naming the capability.
//!
//! Two ways to check: a primitive calls [`require`] first (File and Erlang do, the one check point per
//! capability); the capabilities that predate this module (timers, console input,
//! distribution, `ProcessNavigation system`) are enforced by the engine replacing their
//! methods with [`denied`] when it does not grant them ([`Capability::selectors`]), so those
//! primitives need no check of their own.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::Value;

/// What a host may grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// The `File` class: reading, writing and listing the file system.
    File,
    /// `Console readLine` / `readLine:` (reading the host's standard input).
    ConsoleRead,
    /// `Node connect`, `ping`, `disconnect` (talking to other nodes).
    Distribution,
    /// `ProcessNavigation system` (the whole process tree, runtime services included).
    ProcessNavigationSystem,
    /// `Timer after:do:` and `Timer every:do:` (callbacks that outlive the evaluation).
    Timers,
    /// The `Erlang` class: calls into Erlang modules (`timer:sleep/1`, the clocks, and with
    /// an Erlang peer named, any function on that node).
    Erlang,
}

impl Capability {
    pub const ALL: [Capability; 6] = [
        Capability::File,
        Capability::ConsoleRead,
        Capability::Distribution,
        Capability::ProcessNavigationSystem,
        Capability::Timers,
        Capability::Erlang,
    ];

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// The name used in messages and by hosts.
    pub fn name(self) -> &'static str {
        match self {
            Capability::File => "File",
            Capability::ConsoleRead => "Console reading",
            Capability::Distribution => "distribution",
            Capability::ProcessNavigationSystem => "ProcessNavigation system",
            Capability::Timers => "timers",
            Capability::Erlang => "Erlang",
        }
    }

    /// The sends the engine denies by replacing their methods: (class, class side?,
    /// selectors). File checks in its own primitives ([`require`]).
    pub fn selectors(self) -> &'static [(&'static str, bool, &'static [&'static str])] {
        match self {
            Capability::File => &[],
            Capability::ConsoleRead => &[("Console", true, &["readLine", "readLine:"])],
            Capability::Distribution => &[("Node", false, &["connect", "ping", "disconnect"])],
            Capability::ProcessNavigationSystem => &[("ProcessNavigation", true, &["system"])],
            Capability::Timers => &[("Timer", true, &["after:do:", "every:do:"])],
            Capability::Erlang => &[],
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

/// The `capability_denied` exception for `what` (the send) needing `c`.
fn denial(ctx: &Ctx, c: Capability, what: &str) -> Unwind {
    ctx.err_hint(
        ErrorKind::CapabilityDenied,
        format!("{what}: the {} capability is not granted", c.name()),
        format!("the embedding host must grant Capability::{c:?} before scripts may use it"),
    )
}

/// The check point: `Ok` when `c` is granted, else `capability_denied` naming the send.
pub fn require(ctx: &Ctx, c: Capability, what: &str) -> Result<(), Unwind> {
    if granted(ctx, c) {
        return Ok(());
    }
    Err(denial(ctx, c, what))
}

/// The primitive that replaces a method needing a capability the program lacks: finds the
/// capability from the running class and selector.
pub fn denied(ctx: &mut Ctx, _recv: &Value, _args: &[Value]) -> EvalResult {
    let (cls, sel) = (ctx.cur_cls.as_str(), ctx.cur_sel.as_str());
    let c = Capability::ALL
        .into_iter()
        .find(|c| {
            c.selectors()
                .iter()
                .any(|(k, _, sels)| *k == cls && sels.contains(&sel))
        })
        .unwrap_or(Capability::File);
    if granted(ctx, c) {
        // Granted after the engine replaced the method (`Engine::grant`): not reachable
        // through this primitive any more; the host must grant before building.
        return Err(ctx.err(
            ErrorKind::RuntimeError,
            format!("{cls} {sel}: granted after the engine started; grant it in the builder"),
        ));
    }
    Err(denial(ctx, c, &format!("{cls} {sel}")))
}
