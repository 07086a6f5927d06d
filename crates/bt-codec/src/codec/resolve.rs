//! Turning decoded references back into values: the [`RefResolver`] trait and
//! [`LocalResolver`], which resolves references to this node's processes; on a named node a
//! reference to another node's process becomes a remote handle of that node, without
//! distribution it is `node_down`.

use std::sync::Arc;

use crate::interp::actor::handle::{native, ActorRef, NameRef, PidVal, RefVal};
use crate::interp::actor::prims::supervision::SupRef;
use crate::interp::actor::ActorSys;
use crate::interp::eval::Ctx;
use crate::runtime::{Pid, ProcRef, Timeout};
use crate::value::{ClassRef, Sym, Value};

use super::error::{kind, CodecError};
use super::walk::{RefKind, WireRef, NO_NODE};

/// Resolves a decoded reference (actor, pid, name proxy, supervisor handle, monitor ref).
/// Errors leave `path` empty; the decoder fills it in.
pub trait RefResolver {
    /// The name of this node (references naming it are local).
    fn node_name(&self) -> Sym;
    fn resolve(&self, ctx: &mut Ctx, r: &WireRef) -> Result<Value, CodecError>;
}

/// References to this node's own processes; every other node is `node_down` (there is no
/// distribution yet).
pub struct LocalResolver {
    sys: Option<Arc<ActorSys>>,
    node: Sym,
}

impl LocalResolver {
    /// The resolver of the actor system `ctx` runs in.
    pub fn new(ctx: &Ctx) -> LocalResolver {
        let sys = ctx.proc.sys.clone();
        let node = match (ctx.prog.dist.get(), sys.as_ref()) {
            (Some(d), _) => d.node_name(),
            (None, Some(s)) => s.node_name,
            (None, None) => Sym::new(NO_NODE),
        };
        LocalResolver { sys, node }
    }
}

fn class_named(ctx: &Ctx, name: Sym) -> Result<ClassRef, CodecError> {
    ctx.prog.class_by_sym(name).ok_or_else(|| {
        CodecError::new(
            kind::CLASS_NOT_FOUND,
            format!("class {name} is not loaded on this node"),
            "",
        )
    })
}

fn builtin_class(ctx: &Ctx, name: &str) -> ClassRef {
    ctx.prog
        .class_named(name)
        .unwrap_or_else(|| ctx.prog.core.object.clone())
}

impl RefResolver for LocalResolver {
    fn node_name(&self) -> Sym {
        self.node
    }

    fn resolve(&self, ctx: &mut Ctx, r: &WireRef) -> Result<Value, CodecError> {
        // A global name proxy names the cluster registry, not a node: it stays one on every
        // node (printed with the holder's class name; its class is the class of that name
        // here, else Actor).
        if r.kind == RefKind::Name && r.extra == 1 {
            return Ok(native(NameRef {
                name: r.name.unwrap_or_else(|| Sym::new("")),
                class: ctx
                    .prog
                    .class_by_sym(r.class)
                    .filter(|c| c.inherits_or_is(&ctx.prog.core.actor))
                    .unwrap_or_else(|| ctx.prog.core.actor.clone()),
                class_name: r.class,
                global: true,
            }));
        }
        if r.node != self.node {
            if ctx.prog.dist.get().is_some() {
                if let Some(v) = remote(ctx, r) {
                    return Ok(v);
                }
            }
            return Err(CodecError::new(
                kind::NODE_DOWN,
                format!("node {} is not connected", r.node),
                "",
            ));
        }
        let Some(sys) = &self.sys else {
            return Err(CodecError::new(
                kind::NODE_DOWN,
                "no actor system to resolve references in",
                "",
            ));
        };
        let pid = Pid {
            node: 0,
            number: r.number,
            service: r.service,
        };
        let live = |what: &str| -> Result<ProcRef, CodecError> {
            sys.rt.lookup(pid).ok_or_else(|| {
                CodecError::new(
                    kind::ACTOR_DEAD,
                    format!("{what} {pid} is not running on this node"),
                    "",
                )
            })
        };
        Ok(match r.kind {
            RefKind::Actor | RefKind::Proxy => {
                let class = class_named(ctx, r.class)?;
                let proc = live("process")?;
                let timeout = match r.extra {
                    u64::MAX => Timeout::Infinity,
                    ms => Timeout::Ms(ms),
                };
                native(ActorRef {
                    proc,
                    class,
                    timeout: if r.kind == RefKind::Proxy {
                        timeout
                    } else {
                        Timeout::DEFAULT
                    },
                    proxy: r.kind == RefKind::Proxy,
                    own: None,
                    state: None,
                })
            }
            RefKind::Pid => native(PidVal {
                proc: live("process")?,
                class: builtin_class(ctx, "Pid"),
            }),
            RefKind::Name => {
                let class = class_named(ctx, r.class)?;
                native(NameRef {
                    name: r.name.unwrap_or_else(|| Sym::new("")),
                    class_name: class.name,
                    class,
                    global: false,
                })
            }
            RefKind::Supervisor => {
                let class = class_named(ctx, r.class)?;
                let h = sys.supervision.by_pid(pid).ok_or_else(|| {
                    CodecError::new(
                        kind::ACTOR_DEAD,
                        format!("supervisor {pid} is not running on this node"),
                        "",
                    )
                })?;
                native(SupRef {
                    h,
                    class,
                    dynamic: r.extra == 1,
                })
            }
            RefKind::Monitor => native(RefVal {
                id: r.extra,
                target: live("monitored process")?,
                class: builtin_class(ctx, "Reference"),
            }),
        })
    }
}

/// A reference to another node's process on a named node: a remote actor, pid or name
/// proxy of that node (a name proxy keeps resolving there). None for supervisor handles and
/// monitor references, which do not cross to third nodes.
fn remote(ctx: &Ctx, r: &WireRef) -> Option<Value> {
    use crate::interp::actor::prims::node::{peer, remote};
    Some(match r.kind {
        RefKind::Actor | RefKind::Proxy => {
            let v = remote::remote_actor(ctx, r.node, r.number, 0, Some(r.class));
            if r.kind == RefKind::Proxy {
                let a = crate::interp::actor::handle::downcast::<remote::RemoteActor>(&v)?;
                native(remote::RemoteActor {
                    node: a.node,
                    index: a.index,
                    number: a.number,
                    creation: a.creation,
                    class: a.class.clone(),
                    class_name: a.class_name,
                    timeout: match r.extra {
                        u64::MAX => Timeout::Infinity,
                        ms => Timeout::Ms(ms),
                    },
                    proxy: true,
                    label: a.label,
                })
            } else {
                v
            }
        }
        RefKind::Pid => remote::remote_pid(ctx, r.node, r.number, 0),
        RefKind::Name => peer::remote_name(ctx, r.node, r.name?, r.class),
        RefKind::Supervisor | RefKind::Monitor => return None,
    })
}
