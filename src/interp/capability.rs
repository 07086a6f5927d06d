//! Capabilities: what a program may touch outside its own values (LANGUAGE.md 13, DESIGN.md
//! 9). `bt run` and `bt test` grant everything; an embedding host grants each one
//! explicitly (`bt::EngineBuilder::grant`). A send that needs a capability the program lacks
//! raises `capability_denied` naming it.
//!
//! Primitives ask with [`require`] (`capability::require(ctx, Capability::File)?`). The
//! engine also replaces the methods of the capabilities that predate this module (timers,
//! console input, distribution, `ProcessNavigation system`) with [`denied`] when it does
//! not grant them, so those primitives need no check of their own.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::value::Value;

/// Something outside the program's own values a script may be granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// `File` (reading and writing files).
    File,
    /// `Console readLine` / `readLine:` (reading the host's standard input).
    ConsoleRead,
    /// `Node connect`, `ping`, `disconnect` (talking to other nodes).
    Distribution,
    /// `ProcessNavigation system` (the whole process tree, runtime services included).
    ProcessNavigationSystem,
    /// `Timer after:do:` and `Timer every:do:` (callbacks that outlive the evaluation).
    Timers,
}

impl Capability {
    pub const ALL: [Capability; 5] = [
        Capability::File,
        Capability::ConsoleRead,
        Capability::Distribution,
        Capability::ProcessNavigationSystem,
        Capability::Timers,
    ];

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// The name in `capability_denied` messages (`File`, `Console reading`, …).
    pub fn name(self) -> &'static str {
        match self {
            Capability::File => "File",
            Capability::ConsoleRead => "Console reading",
            Capability::Distribution => "distribution",
            Capability::ProcessNavigationSystem => "ProcessNavigation system",
            Capability::Timers => "timers",
        }
    }

    /// The selectors that need this capability: (class, class side?, selectors). The engine
    /// denies them by replacing the methods; File checks in its primitives and by class.
    pub fn selectors(self) -> &'static [(&'static str, bool, &'static [&'static str])] {
        match self {
            Capability::File => &[],
            Capability::ConsoleRead => &[("Console", true, &["readLine", "readLine:"])],
            Capability::Distribution => &[("Node", false, &["connect", "ping", "disconnect"])],
            Capability::ProcessNavigationSystem => &[("ProcessNavigation", true, &["system"])],
            Capability::Timers => &[("Timer", true, &["after:do:", "every:do:"])],
        }
    }
}

/// The set of granted capabilities of a program (all by default).
#[derive(Debug)]
pub struct Grants(AtomicU32);

impl Grants {
    pub fn all() -> Grants {
        Grants(AtomicU32::new(u32::MAX))
    }
    pub fn has(&self, c: Capability) -> bool {
        self.0.load(Ordering::Relaxed) & c.bit() != 0
    }
    /// Grants exactly `cs`.
    pub fn set_only(&self, cs: &[Capability]) {
        let bits = cs.iter().fold(0, |b, c| b | c.bit());
        self.0.store(bits, Ordering::Relaxed);
    }
}

/// The `capability_denied` exception for `c`.
pub fn denial(ctx: &mut Ctx, c: Capability) -> Unwind {
    ctx.err_hint(
        "capability_denied",
        format!("{} is not granted to this program", c.name()),
        format!("the embedding host grants capabilities (EngineBuilder::grant(Capability::{c:?}))"),
    )
}

/// `Ok` when the program has `c`, else the `capability_denied` exception.
pub fn require(ctx: &mut Ctx, c: Capability) -> Result<(), Unwind> {
    if ctx.prog.caps.has(c) {
        Ok(())
    } else {
        Err(denial(ctx, c))
    }
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
    Err(denial(ctx, c))
}
