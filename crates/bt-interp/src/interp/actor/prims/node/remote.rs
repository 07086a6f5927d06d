//! Remote actors: handles of processes on other nodes and
//! the `on:` variants of spawn and lookup.
//!
//! * [`RemoteActor`] — an actor on another node (from `spawnOn:`, a lookup, or a pid that
//!   arrived in a message). Sends through it are ordinary sends: sync by default
//!   (`RemoteActors::send_remote`), `!` casts, `withTimeout:`; `stop`, `kill`, `isAlive` ask
//!   the target node's service (on an Erlang node: exit signals and `rex`,
//!   [`super::erl`]); `monitor`/`onExit:` watch the process over the link
//!   (`#noconnection` when it drops). Prints `Actor(Counter, K.7.0)`, K the peer's
//!   connection index.
//! * [`RemotePid`] (`<K.7.0>`) and [`RemoteRef`] (a monitor of a remote process).
//!   The handle types themselves (data, printing, order, constructors) are `handles.rs`;
//!   this module is what sends to them do.
//! * The primitives `spawnOn:`, `spawnWith:on:`, `spawnAs:on:`, `spawnWith:as:on:` and
//!   `allRegisteredOn:`: on `Node current` they are the local selectors answering Results;
//!   on another node they go to that node's service (`'$bt_node'`, `crate::dist::service`),
//!   which resolves the class by name there (`class_not_found`) and spawns exactly as a
//!   local spawn. Remote actors are never linked to their creator.
//!
//! The network side is the [`Distribution`](crate::interp::distribution::Distribution)
//! interface (implemented in `crate::dist`).

use crate::interp::actor::target::{target_of, SendTarget};
use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::actor::prims::actor::spawn_actor;
use crate::interp::actor::prims::node::erl::erl;
pub use crate::interp::actor::prims::node::handles::{
    remember_class, remote_actor, remote_pid, RemoteActor, RemotePid,
};
use crate::interp::actor::prims::node::handles::{remote_ref, RemoteRef};
use crate::interp::actor::prims::node::identity::{node_arg, node_value};
use crate::interp::actor::send::REFERENCE_LOCAL;
use crate::interp::distribution::{Dest, Distribution, ErlProc};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::{class_arg, sym_arg};
use crate::runtime::Timeout;
use crate::value::{ClassRef, NativeObj, Sym, Value};

fn dist(ctx: &Ctx, node: Sym) -> Result<Arc<dyn Distribution>, Unwind> {
    match ctx.prog.dist.get() {
        Some(d) => Ok(d.clone()),
        None => Err(ctx.err_hint(
            ErrorKind::NodeDown,
            format!("cannot reach {node}"),
            "start bt with --name to enable distribution",
        )),
    }
}

pub fn register(p: &mut Prims) {
    p.send_target(target_of::<RemoteActor>);
    p.send_target(target_of::<RemotePid>);
    p.send_target(target_of::<RemoteRef>);
    let a = "Actor";
    p.add_class(a, "spawnOn:", |ctx, r, a| {
        spawn_on(ctx, r, &a[0], None, None)
    });
    p.add_class(a, "spawnWith:on:", |ctx, r, a| {
        spawn_on(ctx, r, &a[1], Some(&a[0]), None)
    });
    p.add_class(a, "spawnAs:on:", |ctx, r, a| {
        let n = sym_arg(ctx, &a[0], "spawnAs:on: name")?;
        spawn_on(ctx, r, &a[1], None, Some(n))
    });
    p.add_class(a, "spawnWith:as:on:", |ctx, r, a| {
        let n = sym_arg(ctx, &a[1], "spawnWith:as:on: name")?;
        spawn_on(ctx, r, &a[2], Some(&a[0]), Some(n))
    });
    p.add_class(a, "allRegisteredOn:", all_registered_on);
}

/// The name of a Node argument, or a `type_error`.
pub fn node_of(ctx: &Ctx, v: &Value, what: &str) -> Result<Sym, Unwind> {
    node_arg(ctx, v).ok_or_else(|| {
        let n = ctx.class_name_of(v);
        ctx.type_err(format!("{what} expects a Node, not {n}"))
    })
}

/// Is `node` this node?
fn is_current(ctx: &Ctx, node: Sym) -> bool {
    node == crate::interp::actor::prims::node::current_name(ctx)
}

/// An error raised by `f` as a `Result error:`; other unwinds pass.
fn as_result(ctx: &Ctx, r: EvalResult) -> EvalResult {
    match r {
        Ok(v) => Ok(ctx.make_ok(v)),
        Err(Unwind::Error(e)) => Ok(ctx.make_error(e)),
        Err(u) => Err(u),
    }
}

fn spawn_on(
    ctx: &mut Ctx,
    r: &Value,
    node: &Value,
    init: Option<&Value>,
    name: Option<Sym>,
) -> EvalResult {
    let cls = class_arg(ctx, r, "spawn receiver")?;
    let node = node_of(ctx, node, "spawnOn:")?;
    if let Some(v) = init {
        if !matches!(v, Value::Dict(_)) {
            let n = ctx.class_name_of(v);
            return Err(ctx.type_err(format!("spawnWith: expects a Dictionary, not {n}")));
        }
    }
    if is_current(ctx, node) {
        let r = match spawn_actor(ctx, &cls, init, name) {
            Ok(Ok(h)) => Ok(h),
            Ok(Err(e)) => Err(Unwind::Error(e)),
            Err(u) => Err(u),
        };
        return as_result(ctx, r);
    }
    let args = [
        Value::Symbol(cls.name),
        init.cloned().unwrap_or(Value::Nil),
        name.map(Value::Symbol).unwrap_or(Value::Nil),
    ];
    let r = service(ctx, node, "spawn", &args).and_then(|v| found_actor(ctx, node, &v));
    as_result(ctx, r)
}

/// A node-service request that must reach a bt node.
fn service(ctx: &mut Ctx, node: Sym, op: &str, args: &[Value]) -> EvalResult {
    let d = dist(ctx, node)?;
    match d.service(ctx, node, op, args)? {
        Some(v) => Ok(v),
        None => Err(ctx.err(
            ErrorKind::ClassNotFound,
            format!("{node} is not a bt node: it has no bt classes"),
        )),
    }
}

/// `{ClassName, anActor}` from the node service → a remote actor handle of that class.
fn found_actor(ctx: &Ctx, node: Sym, v: &Value) -> EvalResult {
    let (cname, h) = match v {
        Value::Tuple(t) if t.len() == 2 => (t[0].as_sym(), &t[1]),
        _ => (None, v),
    };
    match downcast::<RemoteActor>(h) {
        Some(ra) => Ok(remote_actor(ctx, node, ra.number, ra.creation, cname)),
        None => Err(ctx.err(
            ErrorKind::RuntimeError,
            format!("unexpected answer from {node}"),
        )),
    }
}

fn all_registered_on(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let node = node_of(ctx, &a[0], "allRegisteredOn:")?;
    if is_current(ctx, node) {
        let all = ctx.send(r, Sym::new("allRegistered"), &[]);
        return as_result(ctx, all);
    }
    let r = match bt_service(ctx, node, "registered", &[]) {
        Ok(Some(v)) => Ok(v),
        // An Erlang node: `erlang:registered()`, as name proxies (`node::erl`).
        Ok(None) => {
            let r = crate::interp::actor::prims::node::erl::registered(ctx, node);
            return as_result(ctx, r);
        }
        Err(u) => Err(u),
    };
    let r = r.and_then(|v| match &v {
        Value::List(l) => {
            let mut out = Vec::with_capacity(l.len());
            for e in l.iter() {
                out.push(found_actor(ctx, node, e)?);
            }
            Ok(Value::list(out))
        }
        _ => Err(ctx.err(
            ErrorKind::RuntimeError,
            format!("unexpected answer from {node}"),
        )),
    });
    as_result(ctx, r)
}

/// `named:on:` against a bt node: checks there that the name is registered (and of the
/// class asked for); `Ok(None)` for an Erlang peer (no check: it has no bt classes).
pub(crate) fn check_name(
    ctx: &mut Ctx,
    node: Sym,
    name: Sym,
    class: &ClassRef,
) -> Result<Option<Sym>, Unwind> {
    let d = dist(ctx, node)?;
    let want = if Arc::ptr_eq(class, &ctx.prog.core.actor) {
        Value::Nil
    } else {
        Value::Symbol(class.name)
    };
    let found = d.service(ctx, node, "whereis", &[Value::Symbol(name), want])?;
    match &found {
        Some(Value::Tuple(t)) if t.len() == 2 => Ok(t[0].as_sym()),
        _ => Ok(None),
    }
}

/// Selectors a remote handle answers from the handle, without a message.
const HANDLE_LOCAL: &[&str] = &["respondsTo:"];

impl SendTarget for RemoteActor {
    fn send(&self, ctx: &mut Ctx, _recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        actor_send(ctx, self, sel, args)
    }

    fn cast(
        &self,
        ctx: &mut Ctx,
        _recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        cast_to(ctx, self.node, self.dest(), sel, args)
    }
}

impl SendTarget for RemotePid {
    /// What a Pid of another node answers: its node, liveness, `kill`, `exit:` (by the node
    /// service there, or Erlang's own operations on an Erlang node).
    fn send(&self, ctx: &mut Ctx, _recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        let p = self;
        let (node, number) = (p.node, p.number);
        let dest = Dest::Pid {
            number,
            creation: p.creation,
        };
        Some(match sel.as_str() {
            "node" => node_value(ctx, node),
            "isAlive" => alive(ctx, node, dest),
            // Booleans, as for a local Pid (an older node answers `#ok` to `kill`).
            "kill" => match bt_service(ctx, node, "kill", &[Value::Int(number as i64)]) {
                Ok(Some(v)) => Ok(Value::bool(!matches!(v, Value::False))),
                Ok(None) => erl(ctx, node, erl_stop(dest, true, Timeout::DEFAULT)),
                Err(u) => Err(u),
            },
            "exit:" => {
                let args = [Value::Int(number as i64), a0(args)];
                match bt_service(ctx, node, "exit", &args) {
                    Ok(Some(v)) => Ok(Value::bool(matches!(v, Value::True))),
                    Ok(None) => erl(ctx, node, ErlProc::Signal(dest, args[1].clone())),
                    Err(u) => Err(u),
                }
            }
            "asString" => Ok(Value::str(p.print_string())),
            _ => return None,
        })
    }
}

impl SendTarget for RemoteRef {
    /// A monitor of a process of another node: `whenDown:` starts watching, `demonitor`
    /// stops.
    fn send(&self, ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        let rr = self;
        Some(match sel.as_str() {
            "whenDown:" => {
                let (node, dest) = (rr.node, rr.dest);
                let d = match dist(ctx, node) {
                    Ok(d) => d,
                    Err(u) => return Some(Err(u)),
                };
                let block = a0(args);
                match d.watch_remote(ctx, node, dest, block) {
                    Ok(id) => {
                        *rr.watch.lock() = Some(id);
                        Ok(recv.clone())
                    }
                    Err(u) => Err(u),
                }
            }
            "demonitor" => {
                let id = rr.watch.lock().take();
                if let (Some(id), Some(d)) = (id, ctx.prog.dist.get()) {
                    d.unwatch_remote(id);
                }
                Ok(Value::True)
            }
            "asString" => Ok(Value::str(rr.print_string())),
            _ => return None,
        })
    }
}

/// `onExit:` on a process of `node`: `block` runs with its exit reason.
pub fn on_exit(ctx: &mut Ctx, node: Sym, dest: Dest, block: Value) -> EvalResult {
    let d = dist(ctx, node)?;
    d.watch_remote(ctx, node, dest, block)
        .map(|_| Value::sym("ok"))
}

fn a0(args: &[Value]) -> Value {
    args.first().cloned().unwrap_or(Value::Nil)
}

/// A node-service request; `Ok(None)` when `node` is an Erlang node.
fn bt_service(ctx: &mut Ctx, node: Sym, op: &str, args: &[Value]) -> Result<Option<Value>, Unwind> {
    let d = dist(ctx, node)?;
    d.service(ctx, node, op, args)
}

fn erl_stop(dest: Dest, kill: bool, timeout: Timeout) -> ErlProc {
    ErlProc::Stop {
        dest,
        kill,
        timeout,
    }
}

/// `isAlive` of process `dest` (a pid) of `node`: its node service, or on an Erlang node
/// `erlang:is_process_alive/1`; false when the node cannot say.
fn alive(ctx: &mut Ctx, node: Sym, dest: Dest) -> EvalResult {
    let Dest::Pid { number, .. } = dest else {
        return Ok(Value::False);
    };
    match bt_service(ctx, node, "alive", &[Value::Int(number as i64)]) {
        Ok(Some(v)) => Ok(Value::bool(matches!(v, Value::True))),
        Ok(None) => crate::interp::actor::prims::node::erl::alive(ctx, node, dest),
        Err(Unwind::Error(_)) => Ok(Value::False),
        Err(u) => Err(u),
    }
}

fn actor_send(ctx: &mut Ctx, ra: &RemoteActor, sel: Sym, args: &[Value]) -> Option<EvalResult> {
    let s = sel.as_str();
    let (node, number) = (ra.node, ra.number);
    // A method the local class of that name defines in bt runs there, whatever its name.
    let own = crate::interp::actor::behaviour::chain_defines(&ra.class, sel);
    if !own {
        match s {
            "node" => return Some(node_value(ctx, node)),
            "isRemote" => return Some(Ok(Value::True)),
            "pid" => return Some(Ok(remote_pid(ctx, node, number, ra.creation))),
            "isAlive" => return Some(alive(ctx, node, ra.dest())),
            "stop" | "kill" => {
                if ra.proxy {
                    return Some(Ok(Value::sym("ok")));
                }
                return Some(
                    match bt_service(ctx, node, s, &[Value::Int(number as i64)]) {
                        Ok(Some(_)) => Ok(Value::sym("ok")),
                        // An Erlang process: exit signals (`node::erl`).
                        Ok(None) => crate::interp::actor::prims::node::erl::stop(
                            ctx,
                            node,
                            ra.dest(),
                            s == "kill",
                            ra.timeout,
                        ),
                        Err(u) => Err(u),
                    },
                );
            }
            "monitor" => return Some(Ok(remote_ref(ctx, node, ra.dest()))),
            "onExit:" => return Some(on_exit(ctx, node, ra.dest(), a0(args))),
            "withTimeout:" => return Some(with_timeout(ctx, ra, &a0(args))),
            "asString" => return Some(Ok(Value::str(ra.print_string()))),
            _ if REFERENCE_LOCAL.contains(&s) || HANDLE_LOCAL.contains(&s) => return None,
            _ => {}
        }
    }
    let d = match dist(ctx, node) {
        Ok(d) => d,
        Err(u) => return Some(Err(u)),
    };
    Some(d.send_remote(ctx, node, ra.dest(), sel, args, ra.timeout))
}

fn with_timeout(ctx: &mut Ctx, ra: &RemoteActor, v: &Value) -> EvalResult {
    let timeout = timeout_of(ctx, v)?;
    Ok(native(RemoteActor {
        node: ra.node,
        index: ra.index,
        number: ra.number,
        creation: ra.creation,
        class: ra.class.clone(),
        class_name: ra.class_name,
        timeout,
        proxy: true,
        label: ra.label,
    }))
}

/// A `withTimeout:` argument: milliseconds, a Duration or `#infinity`.
pub(crate) fn timeout_of(ctx: &Ctx, v: &Value) -> Result<Timeout, Unwind> {
    match v.as_sym() {
        Some(_) => crate::interp::prims::duration::timeout_arg(ctx, v),
        None => Ok(Timeout::Ms(crate::interp::prims::duration::period_arg(
            ctx,
            v,
            "withTimeout:",
            false,
        )?)),
    }
}

/// A cast (`!`) to `dest` on `node` (a remote actor, or a name proxy of another node).
pub(crate) fn cast_to(
    ctx: &mut Ctx,
    node: Sym,
    dest: Dest,
    sel: Sym,
    args: &[Value],
) -> Option<Result<(), Unwind>> {
    let d = match dist(ctx, node) {
        Ok(d) => d,
        Err(u) => return Some(Err(u)),
    };
    Some(d.cast_remote(ctx, node, dest, sel, args))
}
