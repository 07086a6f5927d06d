//! The handles of processes on other nodes, as values: [`RemoteActor`] (an actor there),
//! [`RemotePid`] (`<K.7.0>`), [`RemoteRef`] (a monitor of a process there) and
//! [`RemoteName`] (`Actor named: #x on: aNode`), with their identity, printing and order,
//! and the constructors the codec, the distribution layer and the node primitives use.
//! What a send to each does is elsewhere: the `SendTarget` impls in `remote.rs` and
//! `peer.rs`. This module names no other part of `node`.

use std::any::Any;

use parking_lot::Mutex;

use crate::interp::actor::handle::native;
use crate::interp::distribution::Dest;
use crate::interp::eval::Ctx;
use crate::runtime::Timeout;
use crate::value::{ClassRef, NativeObj, Sym, Value};

/// An actor process on another node.
pub struct RemoteActor {
    pub node: Sym,
    /// The peer's connection index when the handle was made (for printing).
    pub index: u32,
    pub number: u64,
    pub creation: u32,
    /// The class of that name on this node (an actor's or a supervisor's), else Actor.
    pub class: ClassRef,
    /// The actor's class name on its node.
    pub class_name: Sym,
    pub timeout: Timeout,
    /// A `withTimeout:` proxy.
    pub proxy: bool,
    /// How it prints: `Actor`, or `Supervisor`/`DynamicSupervisor` for a supervisor there
    /// whose class is loaded here (as a local supervisor handle prints).
    pub label: &'static str,
}

impl RemoteActor {
    /// `K.7.0`.
    pub(crate) fn pid_label(&self) -> String {
        format!("{}.{}.0", self.index, self.number)
    }
    pub fn dest(&self) -> Dest {
        Dest::Pid {
            number: self.number,
            creation: self.creation,
        }
    }
}

impl NativeObj for RemoteActor {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!("{}({}, {})", self.label, self.class_name, self.pid_label())
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RemoteActor>()
            .is_some_and(|o| {
                o.node == self.node && o.number == self.number && o.proxy == self.proxy
            })
    }
    fn hash_code(&self) -> u64 {
        self.number ^ ((self.node.index() as u64) << 40)
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (
            5,
            vec![self.index as u64, self.number, 0, 1 + self.proxy as u64],
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A process id on another node: `<K.7.0>`.
pub struct RemotePid {
    pub node: Sym,
    pub index: u32,
    pub number: u64,
    pub creation: u32,
    pub class: ClassRef,
}

impl NativeObj for RemotePid {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!("<{}.{}.0>", self.index, self.number)
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RemotePid>()
            .is_some_and(|o| o.node == self.node && o.number == self.number)
    }
    fn hash_code(&self) -> u64 {
        self.number ^ ((self.node.index() as u64) << 40)
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (5, vec![self.index as u64, self.number, 0, 0])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A monitor of a process on another node (`aRemoteActor monitor`): watching starts with
/// `whenDown:`.
pub(crate) struct RemoteRef {
    pub node: Sym,
    /// The monitored process: a pid there, or (an Erlang peer's) registered name.
    pub dest: Dest,
    pub id: u64,
    pub class: ClassRef,
    /// The watch of `whenDown:` (for `demonitor`).
    pub watch: Mutex<Option<u64>>,
}

impl NativeObj for RemoteRef {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!("#Ref<{}>", self.id)
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RemoteRef>()
            .is_some_and(|o| o.id == self.id)
    }
    fn hash_code(&self) -> u64 {
        self.id
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (6, vec![self.id])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `Actor named: #name on: aNode` (a proxy resolving the name on that node at each send).
pub struct RemoteName {
    pub node: Sym,
    pub name: Sym,
    pub class: ClassRef,
    /// The class name of the actor found there (the local class may not exist).
    pub class_name: Sym,
    pub timeout: Timeout,
    /// A `withTimeout:` proxy: an actor of its own, so `stop` and `kill` stop only
    /// the proxy (they answer `#ok` and leave the named process alone) and it never equals
    /// the plain name proxy.
    pub proxy: bool,
}

impl NativeObj for RemoteName {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!(
            "Actor({}, registered, {}, {})",
            self.class_name, self.name, self.node
        )
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RemoteName>()
            .is_some_and(|o| o.name == self.name && o.node == self.node && o.proxy == self.proxy)
    }
    fn hash_code(&self) -> u64 {
        (self.name.index() as u64) << 20 ^ self.node.index() as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k = vec![u64::MAX, u64::MAX, u64::MAX, u64::MAX];
        k.extend(self.node.as_str().chars().map(|c| c as u64));
        k.push(0);
        k.extend(self.name.as_str().chars().map(|c| c as u64));
        k.push(self.proxy as u64);
        (5, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Class names of remote actors this node has seen (a pid alone carries none): a pid that
/// comes back in a message is printed with its class. Bounded: cleared when full.
fn known_classes() -> &'static Mutex<std::collections::HashMap<(Sym, u64), Sym>> {
    static K: std::sync::OnceLock<Mutex<std::collections::HashMap<(Sym, u64), Sym>>> =
        std::sync::OnceLock::new();
    K.get_or_init(|| Mutex::new(std::collections::HashMap::new()))
}

const KNOWN_LIMIT: usize = 65_536;

/// Remembers that actor `number` on `node` is of class `class` (a class table from a
/// peer, `codec::etf_classes`, or a handle made with its class).
pub fn remember_class(node: Sym, number: u64, class: Sym) {
    let mut k = known_classes().lock();
    if k.len() >= KNOWN_LIMIT {
        k.clear();
    }
    k.insert((node, number), class);
}

/// A handle of actor `number` on `node` (class by name on this node, else Actor).
pub fn remote_actor(
    ctx: &Ctx,
    node: Sym,
    number: u64,
    creation: u32,
    class_name: Option<Sym>,
) -> Value {
    let class_name = match class_name {
        Some(c) if c != ctx.prog.core.actor.name => {
            remember_class(node, number, c);
            Some(c)
        }
        other => known_classes()
            .lock()
            .get(&(node, number))
            .copied()
            .or(other),
    };
    let d = ctx.prog.dist.get();
    let index = d.and_then(|d| d.index_of(node.as_str())).unwrap_or(0);
    let creation = match creation {
        0 => d.and_then(|d| d.peer_creation(node.as_str())).unwrap_or(0),
        c => c,
    };
    let named = class_name.and_then(|n| ctx.prog.class_by_sym(n));
    let label = named
        .as_ref()
        .and_then(|c| {
            c.chain().iter().find_map(|k| match k.name.as_str() {
                "Supervisor" => Some("Supervisor"),
                "DynamicSupervisor" => Some("DynamicSupervisor"),
                _ => None,
            })
        })
        .unwrap_or("Actor");
    // An actor class, or a supervisor's (its `class` answers it, as a local handle's does).
    let class = named
        .filter(|c| label != "Actor" || c.inherits_or_is(&ctx.prog.core.actor))
        .unwrap_or_else(|| ctx.prog.core.actor.clone());
    native(RemoteActor {
        node,
        index,
        number,
        creation,
        class_name: class_name.unwrap_or(class.name),
        class,
        timeout: Timeout::DEFAULT,
        proxy: false,
        label,
    })
}

/// A pid of process `number` on `node`.
pub fn remote_pid(ctx: &Ctx, node: Sym, number: u64, creation: u32) -> Value {
    let index = ctx
        .prog
        .dist
        .get()
        .and_then(|d| d.index_of(node.as_str()))
        .unwrap_or(0);
    let class = ctx
        .prog
        .class_named("Pid")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(RemotePid {
        node,
        index,
        number,
        creation,
        class,
    })
}

/// A [`RemoteName`] built by the codec (a local name proxy that crossed from `node`).
pub fn remote_name(ctx: &Ctx, node: Sym, name: Sym, class_name: Sym) -> Value {
    let actor = ctx.prog.core.actor.clone();
    remote_name_as(ctx, node, name, class_name, actor)
}

/// A [`RemoteName`] for `name` on `node` whose class is the local actor class named
/// `class_name`, or `fallback` where no such actor class is loaded.
pub(crate) fn remote_name_as(
    ctx: &Ctx,
    node: Sym,
    name: Sym,
    class_name: Sym,
    fallback: ClassRef,
) -> Value {
    let class = ctx
        .prog
        .class_by_sym(class_name)
        .filter(|c| c.inherits_or_is(&ctx.prog.core.actor))
        .unwrap_or(fallback);
    native(RemoteName {
        node,
        name,
        class,
        class_name,
        timeout: Timeout::DEFAULT,
        proxy: false,
    })
}

/// `monitor` on a process of `node` (by pid, or an Erlang peer's registered name): a
/// Reference whose `whenDown:` starts watching.
pub(crate) fn remote_ref(ctx: &Ctx, node: Sym, dest: Dest) -> Value {
    let id = ctx.proc.sys.as_ref().map(|s| s.rt.make_ref()).unwrap_or(0);
    let class = ctx
        .prog
        .class_named("Reference")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(RemoteRef {
        node,
        dest,
        id,
        class,
        watch: Mutex::new(None),
    })
}
