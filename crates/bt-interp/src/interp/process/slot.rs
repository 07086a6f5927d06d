//! The data of a context's process: the [`ProcSlot`] every evaluation context carries (the
//! running process's runtime context, the actor system, the lent actor handle, the relay
//! homes of the message being handled) and the [`ActorSys`] of one `Interpreter`. What runs
//! a context in a process — attaching it, the context pool, locks, waiting — is
//! `interp::process`, which re-exports these.
//!
//! Layer: the evaluator's core types (a field of `Ctx`). It names the context only as
//! `eval::context::Ctx` (the pooled contexts), never the evaluator itself.

// unsafe: a process's Cx is reached through a pointer valid for one run (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::eval::context::Ctx;
use crate::interp::program::Program;
use crate::runtime::{Cx, ProcLock, ProcRef, RtHandle};
use crate::value::block::Closure;
use crate::value::{ClassRef, Sym, Value};

/// A lifetime-erased pointer to the running process's [`Cx`].
pub(super) struct CxPtr(pub(super) NonNull<Cx<'static>>);

// SAFETY: the pointer is set by `in_process` for the duration of one run on one coroutine
// and cleared before that run returns; while it is set, the `Ctx` holding it is used only
// by that coroutine (a suspended coroutine never migrates between threads), so the pointer
// is never dereferenced on another thread or after the `Cx` is gone.
unsafe impl Send for CxPtr {}

/// Per-context process data (a field of `Ctx`).
#[derive(Default)]
pub struct ProcSlot {
    pub(super) cx: Option<CxPtr>,
    /// The actor system of the Interpreter this context belongs to.
    pub sys: Option<Arc<ActorSys>>,
    /// The actor whose handler is running (its handle value), if any: lent for one run
    /// ([`ProcSlot::actor`]).
    pub(super) actor: Option<Lent>,
    /// Relay homes live in this run: those of the blocks that came with the message being
    /// handled (`actor::relay`).
    pub relays: Relays,
    /// The last `send::goes_remote` decision for an actor handle: (class, selector,
    /// program epoch, answer). A loop of calls to one actor decides once. The class is held
    /// so its address cannot be reused by another class while remembered.
    pub(crate) remote_memo: Option<(ClassRef, Sym, u64, bool)>,
    /// The method the last actor message handled with this context ran: (the actor's
    /// class, selector, program epoch, method). Messages of one selector to actors of one
    /// class look the method up once (`behaviour::dispatch`); kept here, not per actor, so an
    /// idle actor does not grow. The class is held so its address cannot be reused.
    pub(crate) last_method: Option<(ClassRef, Sym, u64, crate::interp::eval::hit::Hit)>,
    /// What the last spawn in this context learnt of its class: (class, program epoch,
    /// facts). A loop spawning actors of one class walks its chain once
    /// (`prims::actor::spawn_actor`). The class is held so its address cannot be reused.
    pub(crate) last_spawn: Option<(ClassRef, u64, SpawnFacts)>,
}

/// A class's answers a spawn needs, fixed until the program's methods change.
#[derive(Clone, Copy)]
pub(crate) struct SpawnFacts {
    /// A TranscriptStream (or subclass): the spawn makes the built-in actor.
    pub transcript: bool,
    /// Some class of the chain defines `initialize` in bt.
    pub initialize: bool,
    /// The class answers `maxMailbox` (the spawn sends it for the limit).
    pub max_mailbox: bool,
}

impl ProcSlot {
    /// True while the context runs inside a runtime process.
    #[inline]
    pub fn in_runtime(&self) -> bool {
        self.cx.is_some()
    }

    /// The running process's runtime context, if the context runs in a process.
    #[inline]
    pub fn cx(&mut self) -> Option<&mut Cx<'_>> {
        let p = self.cx.as_ref()?.0;
        // SAFETY: `p` was made from a live `&mut Cx` by `in_process`, which is still running
        // (the pointer is cleared before it returns), and the `Cx` is used only through this
        // reborrow of the slot (exclusive for its lifetime). The erased lifetime is narrowed
        // back to the borrow of the slot.
        Some(unsafe { &mut *p.as_ptr().cast::<Cx<'_>>() })
    }

    /// The handle of the actor whose handler is running, if any.
    #[inline]
    pub fn actor(&self) -> Option<&Value> {
        self.actor.as_ref().map(|l| &*l.0)
    }
}

/// An actor's own handle lent to a context for one run: a bitwise copy that is never
/// dropped, so lending it costs no reference-count traffic (a clone and an out-of-line drop
/// per message before). Made only by `process::run_lending`, which takes it back before it returns
/// (also when the run unwinds), while the lender's reference keeps the handle alive.
pub(super) struct Lent(pub(super) std::mem::ManuallyDrop<Value>);

/// The actor system of one `Interpreter`: the runtime handle, the context pool, class locks and the
/// node-wide registries of the concurrency utilities.
pub struct ActorSys {
    pub rt: RtHandle,
    pub prog: Arc<Program>,
    /// Boxed: a context is a few hundred bytes, moved in and out of the pool per message.
    #[allow(clippy::vec_box)] // the Box is the point: contexts move in and out by pointer
    pub(super) pool: Mutex<Vec<Box<Ctx>>>,
    pub(super) class_locks: Mutex<HashMap<usize, (ClassRef, Arc<ProcLock>)>>,
    /// The current transcript (`TranscriptStream current`).
    pub transcript: Mutex<Option<ProcRef>>,
    /// The standard-output transcript.
    pub stdout_transcript: Mutex<Option<ProcRef>>,
    /// AtomicCounter values by name.
    pub counters: Mutex<HashMap<Sym, Arc<AtomicI64>>>,
    /// The supervisors of this runtime.
    pub supervision: crate::runtime::supervisor::Supervision,
    /// Whether the host granted `ProcessNavigation system`; the `bt` CLI does.
    pub privileged: std::sync::atomic::AtomicBool,
    /// This node's name: `nonode@nohost` until distribution exists.
    pub node_name: Sym,
    /// The built-in Node class (a program may declare its own class of that name).
    pub node_class: Option<ClassRef>,
    /// `SystemAnnouncer current` (made on first use; `prims::announce`).
    pub system_announcer: Mutex<Option<Value>>,
    /// This node's process-group memberships (`actor::prims::process_group`).
    pub groups: crate::interp::actor::groups::Groups,
}

// Relay homes: the part of non-local return through actor sends (`actor::relay`) that a
// context holds while it handles a message.

/// How deep inside collection arguments blocks get relay homes (as deep as
/// `actor::transfer::transfer_in` copies).
pub(crate) const RELAY_DEPTH: usize = 24;

/// The relay homes live while a message is handled: those of the blocks that arrived as
/// direct arguments, found when the message starts, and those of blocks inside its
/// collection arguments (Lists, Arrays, Queues, Tuples, Dictionary values, Value fields),
/// looked for only when a relay home is asked about (a `^` to one, or passing such a block
/// on) — so a message with a large collection argument is not walked for them.
#[derive(Default)]
pub struct Relays(pub(crate) Vec<Held>);

/// One entry of [`Relays`] (one vector: a message without blocks or collections costs what
/// a list of homes did).
pub(crate) enum Held {
    Home(u64),
    Nested(Value),
}

impl Relays {
    /// Is relay home `home` live in this message?
    pub fn contains(&self, home: &u64) -> bool {
        self.0.iter().any(|h| match h {
            Held::Home(x) => x == home,
            Held::Nested(v) => holds_relay(v, *home),
        })
    }

    /// Adds a relay home live for the whole message (a remote call's, `crate::dist::peer`).
    pub fn push(&mut self, home: u64) {
        self.0.push(Held::Home(home));
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Does `v` hold (up to [`RELAY_DEPTH`] levels down) a block for which `p` holds?
pub(crate) fn holds_block(v: &Value, d: usize, p: &dyn Fn(&Closure) -> bool) -> bool {
    if d > RELAY_DEPTH {
        return false;
    }
    let each = |x: &Value| holds_block(x, d + 1, p);
    match v {
        Value::Block(c) => p(c),
        Value::List(l) | Value::Queue(l) => l.iter().any(each),
        Value::Array(l) => l.iter().any(each),
        Value::Tuple(t) => t.iter().any(each),
        Value::Dict(m) => m.values().any(each),
        Value::Object(i) => i.fields.iter().any(each),
        _ => false,
    }
}

/// Does `v` hold a block whose home is relay home `home`?
fn holds_relay(v: &Value, home: u64) -> bool {
    holds_block(v, 0, &|c| c.home == home)
}
