//! Cluster-wide names, the language side: `spawnAs:scope:`,
//! `spawnWith:as:scope:` and `named:scope:` with `#global` (stdlib/Actor.bt routes them
//! here), and supervision specs with `scope: #global` ([`global_start`] wraps a child's
//! start so each (re)start registers the new process).
//!
//! The registry itself is the distribution layer's (`crate::dist::global`, reached through
//! `GlobalNames::global_register` / `global_whereis`). A node started without `--name` has
//! no cluster: `#global` answers `node_down` there.

use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, ActorRef, NameRef};
use crate::interp::actor::prims::actor::error_value_hinted;
use crate::interp::actor::prims::node::handles::RemoteName;
use crate::interp::actor::prims::node::{current_name, node_value};
use crate::interp::actor::sys_of;
use crate::interp::distribution::Distribution;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::runtime::supervisor::StartFn;
use crate::value::{Sym, Value};

const NO_DIST_HINT: &str = "start bt with --name to enable distribution";

pub fn register(p: &mut Prims) {
    p.add_class("Actor", "globalName:spawning:", spawn_global);
    p.add_class("Actor", "globalNamed:", named_global);
    // The proxy of the holder's node, without the cluster-resolving wrapper: what a global
    // name proxy sends through at each send.
    p.add_class("Actor", "globalNamed:resolving:", named_global);
}

fn dist(ctx: &Ctx) -> Option<Arc<dyn Distribution>> {
    ctx.prog.dist.get().cloned()
}

fn fail(ctx: &mut Ctx, kind: ErrorKind, msg: String, hint: Option<&str>) -> EvalResult {
    let e = error_value_hinted(ctx, kind, msg, hint);
    Ok(ctx.make_error(e))
}

fn name_of(ctx: &Ctx, v: &Value) -> Result<Sym, crate::interp::eval::Unwind> {
    match v {
        Value::Symbol(s) => Ok(*s),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("a global name must be a Symbol, not {n}")))
        }
    }
}

/// The node holding the global `name`: this node's view, else the first connected visible
/// node whose view has it (announcements may still be on their way, and a node announces
/// only its own names to a newcomer).
fn holder(ctx: &mut Ctx, d: &Arc<dyn Distribution>, name: Sym) -> Option<Sym> {
    if let Some((n, _)) = d.global_whereis(name) {
        return Some(n);
    }
    for peer in d.connected() {
        let node = Sym::new(&peer);
        let asked = d.query(ctx, node, "globalWhereis", &[Value::Symbol(name)], 5000);
        if let Ok(Value::Symbol(n)) = asked {
            return Some(n);
        }
    }
    None
}

/// `Actor globalName: #name spawning: [self spawnAs: #name]` (internal): runs the local
/// named spawn when the cluster does not hold the name, then registers the new actor
/// cluster-wide; answers the spawn's Result.
fn spawn_global(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    let name = name_of(ctx, &a[0])?;
    let Some(d) = dist(ctx) else {
        return fail(
            ctx,
            ErrorKind::NodeDown,
            format!("cannot register #{name} globally: this node is not distributed"),
            Some(NO_DIST_HINT),
        );
    };
    if name.as_str().starts_with("bt_") {
        return fail(
            ctx,
            ErrorKind::ReservedName,
            format!("name #{name} is reserved: names starting with bt_ belong to the runtime"),
            None,
        );
    }
    if let Some(node) = holder(ctx, &d, name) {
        return fail(
            ctx,
            ErrorKind::NameRegistered,
            format!("#{name} is already registered globally (on {node})"),
            None,
        );
    }
    let r = ctx.call_block(&a[1], &[])?;
    let ok = matches!(ctx.send(&r, Sym::new("isOk"), &[])?, Value::True);
    if !ok {
        return Ok(r);
    }
    let h = ctx.send(&r, Sym::new("unwrap"), &[])?;
    let Some(actor) = downcast::<ActorRef>(&h) else {
        return Ok(r);
    };
    let proc = actor.proc.clone();
    match d.global_register(name, &proc) {
        Ok(()) => Ok(r),
        Err(e) => {
            // Lost a race with another registration: the new actor goes away again.
            let sys = sys_of(ctx)?;
            sys.rt.unregister(&proc);
            sys.rt.stop(&proc);
            fail(
                ctx,
                ErrorKind::from_name(e.kind),
                e.message,
                e.hint.as_deref(),
            )
        }
    }
}

/// `Foo globalNamed: #name` (internal): the actor holding the global name, as a Result — a
/// handle when it lives here, the `named:on:` proxy of its node otherwise.
fn named_global(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let name = name_of(ctx, &a[0])?;
    let Some(d) = dist(ctx) else {
        return fail(
            ctx,
            ErrorKind::NodeDown,
            format!("cannot look #{name} up globally: this node is not distributed"),
            Some(NO_DIST_HINT),
        );
    };
    let Some(node) = holder(ctx, &d, name) else {
        // Held by a node whose link is lost: it may well be alive there.
        if let Some(gone) = d.global_lost(name) {
            return fail(
                ctx,
                ErrorKind::NodeDown,
                format!("#{name} is registered globally on {gone}, which is not connected"),
                Some("the name comes back when the node reconnects; retry later"),
            );
        }
        return fail(
            ctx,
            ErrorKind::NameNotRegistered,
            format!("no actor is registered globally as #{name}"),
            None,
        );
    };
    let there = if node == current_name(ctx) {
        ctx.send(r, Sym::new("named:"), &[Value::Symbol(name)])?
    } else {
        let n = node_value(ctx, node)?;
        ctx.send(r, Sym::new("named:on:"), &[Value::Symbol(name), n])?
    };
    if matches!(a.get(1), Some(Value::False)) {
        return Ok(there);
    }
    // The proxy the language sees resolves through the cluster registry at each send; it
    // prints with the class name of the actor found now (its node's name for it, when the
    // class is not loaded here).
    let ok = matches!(ctx.send(&there, Sym::new("isOk"), &[])?, Value::True);
    if !ok {
        return Ok(there);
    }
    let proxy = ctx.send(&there, Sym::new("unwrap"), &[])?;
    let class = ctx.class_of(&proxy);
    let class_name = downcast::<RemoteName>(&proxy)
        .map(|p| p.class_name)
        .unwrap_or(class.name);
    Ok(ctx.make_ok(native(NameRef {
        name,
        class,
        class_name,
        global: true,
    })))
}

/// A supervisor child's start with `scope: #global`: after `start` made the process, it is
/// registered cluster-wide as `name` (a name the cluster holds fails the start).
pub fn global_start(start: StartFn, name: Sym, d: Arc<dyn Distribution>) -> StartFn {
    Arc::new(move |cx, args| {
        let p = start(cx, args)?;
        match d.global_register(name, &p) {
            Ok(()) => Ok(p),
            Err(e) => {
                cx.rt().kill(&p);
                Err(Value::str(format!(
                    "cannot register #{name}: {}",
                    e.message
                )))
            }
        }
    })
}
