//! `Actor named: #name on: aNode`: a proxy ([`RemoteName`])
//! resolving the name on that node at each send — to a bt node a send runs the actor's
//! method there and re-raises its errors here; to an Erlang node it is a
//! `gen_server:call({name, node}, {Selector, Args})` answering the reply term as a value.
//! Against a bt node `named:on:` first checks there that the name is registered (and of the
//! class asked for), as `named:` does locally. A local name proxy sent to another node
//! arrives as a `RemoteName` of its origin node (the codec's resolver), so it keeps resolving
//! there. The network side is `RemoteActors::send_remote` (implemented in `crate::dist`).

use crate::interp::actor::target::SendTarget;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::actor::prims::node::erl::{alive, erl, stop};
pub use crate::interp::actor::prims::node::handles::{remote_name, RemoteName};
use crate::interp::actor::prims::node::handles::{remote_name_as, RemotePid};
use crate::interp::actor::prims::node::remote::{check_name, node_of, timeout_of};
use crate::interp::distribution::{Dest, ErlProc};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::runtime::Timeout;
use crate::value::{Sym, Value};

/// Selectors a [`RemoteName`] answers itself instead of forwarding.
const LOCAL_SELECTORS: &[&str] = &[
    "printString",
    "displayString",
    "=",
    "==",
    "=:=",
    "~=",
    "hash",
    "class",
    "unwrap",
    "isNil",
    "notNil",
    "respondsTo:",
    "isKindOf:",
];

/// Handle selectors a [`RemoteName`] applies to the actor the name denotes now.
const RESOLVED: &[&str] = &["pid", "isAlive", "stop", "kill", "monitor", "onExit:"];

/// `Actor named: #name on: aNode`: `Result(proxy, Error)`. On the current node it is
/// `named:`; on a bt node the name is checked there (`name_not_registered`, `wrong_class`,
/// `node_down`); an Erlang peer is not asked.
pub(crate) fn named_on(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let class = match r {
        Value::Class(c) => c.clone(),
        _ => return Err(ctx.type_err("named:on: is sent to an actor class")),
    };
    let name = match &a[0] {
        Value::Symbol(s) => *s,
        other => {
            let n = ctx.class_name_of(other);
            return Err(ctx.type_err(format!("named:on: expects a Symbol name, not {n}")));
        }
    };
    let node = node_of(ctx, &a[1], "named:on:")?;
    if node == crate::interp::actor::prims::node::identity::current_name(ctx) {
        return ctx.send(r, Sym::new("named:"), &a[..1]);
    }
    let class_name = match check_name(ctx, node, name, &class) {
        Ok(found) => found.unwrap_or(class.name),
        Err(crate::interp::eval::Unwind::Error(e)) => return Ok(ctx.make_error(e)),
        Err(u) => return Err(u),
    };
    Ok(ctx.make_ok(remote_name_as(ctx, node, name, class_name, class)))
}

impl SendTarget for RemoteName {
    /// A send to the actor registered under a name on another node: the proxy's own
    /// protocol here, the rest as a call there.
    fn send(&self, ctx: &mut Ctx, _recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        let rn = self;
        let s = sel.as_str();
        let own = crate::interp::actor::behaviour::chain_defines(&rn.class, sel);
        if !own {
            match s {
                "isRemote" => return Some(Ok(Value::True)),
                "node" => return Some(crate::interp::actor::prims::node::node_value(ctx, rn.node)),
                "registeredName" => return Some(Ok(Value::Symbol(rn.name))),
                "withTimeout:" => {
                    let t = match timeout_of(ctx, args.first().unwrap_or(&Value::Nil)) {
                        Ok(t) => t,
                        Err(u) => return Some(Err(u)),
                    };
                    return Some(Ok(native(RemoteName {
                        node: rn.node,
                        name: rn.name,
                        class: rn.class.clone(),
                        class_name: rn.class_name,
                        timeout: t,
                        proxy: true,
                    })));
                }
                // 5.8: `stop` on a timeout proxy stops only the proxy (as a local one does).
                "stop" | "kill" if rn.proxy => return Some(Ok(Value::sym("ok"))),
                _ if RESOLVED.contains(&s) => {
                    let (node, name) = (rn.node, rn.name);
                    let timeout = rn.timeout;
                    let r = match resolve_opt(ctx, node, name) {
                        Ok(Some(h)) => ctx.send(&h, sel, args),
                        // An Erlang peer: monitors by name, as `erlang:monitor(process, {Name,
                        // Node})` (the process registered under the name when it arrives).
                        Ok(None) if s == "monitor" => {
                            Ok(crate::interp::actor::prims::node::handles::remote_ref(
                                ctx,
                                node,
                                Dest::Name(name),
                            ))
                        }
                        Ok(None) if s == "onExit:" => {
                            let block = args.first().cloned().unwrap_or(Value::Nil);
                            crate::interp::actor::prims::node::remote::on_exit(
                                ctx,
                                node,
                                Dest::Name(name),
                                block,
                            )
                        }
                        // An Erlang peer: `erlang:whereis/1`, exit signals (`node::erl`).
                        Ok(None) => name_op(ctx, node, name, s, timeout),
                        Err(u) => Err(u),
                    };
                    return Some(r);
                }
                _ if LOCAL_SELECTORS.contains(&s) => return None,
                _ => {}
            }
        }
        let (node, name, t) = (rn.node, rn.name, rn.timeout);
        Some(call_remote(ctx, node, name, sel, args, t))
    }

    fn cast(
        &self,
        ctx: &mut Ctx,
        _recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        crate::interp::actor::prims::node::remote::cast_to(
            ctx,
            self.node,
            Dest::Name(self.name),
            sel,
            args,
        )
    }
}

/// The actor registered as `name` on bt node `node` now (`no_such_process` if none);
/// `None` when `node` is not a bt node.
fn resolve_opt(ctx: &mut Ctx, node: Sym, name: Sym) -> Result<Option<Value>, Unwind> {
    let Some(d) = ctx.prog.dist.get().cloned() else {
        return Err(ctx.err(ErrorKind::NodeDown, format!("cannot reach {node}")));
    };
    let r = d.service(ctx, node, "whereis", &[Value::Symbol(name), Value::Nil]);
    match r {
        Ok(None) => Ok(None),
        r => resolved(ctx, node, name, r).map(Some),
    }
}

fn resolved(ctx: &mut Ctx, node: Sym, name: Sym, r: Result<Option<Value>, Unwind>) -> EvalResult {
    match r {
        Ok(Some(v)) => match &v {
            Value::Tuple(t) if t.len() == 2 => {
                let cname = t[0].as_sym();
                match crate::interp::actor::handle::downcast::<
                    crate::interp::actor::prims::node::remote::RemoteActor,
                >(&t[1])
                {
                    Some(ra) => Ok(crate::interp::actor::prims::node::remote::remote_actor(
                        ctx,
                        node,
                        ra.number,
                        ra.creation,
                        cname,
                    )),
                    None => Err(ctx.err(ErrorKind::RuntimeError, "unexpected answer")),
                }
            }
            _ => Err(ctx.err(ErrorKind::RuntimeError, "unexpected answer")),
        },
        Ok(None) => Err(ctx.err(ErrorKind::RuntimeError, format!("{node} is not a bt node"))),
        Err(crate::interp::eval::Unwind::Error(e))
            if crate::interp::error::exc_field(&e, crate::interp::error::F_KIND)
                .as_sym()
                .is_some_and(|k| k.as_str() == "name_not_registered") =>
        {
            Err(ctx.err(
                ErrorKind::NoSuchProcess,
                format!("no process is registered as #{name} on {node}"),
            ))
        }
        Err(u) => Err(u),
    }
}

/// A sync send through the node's distribution layer.
fn call_remote(
    ctx: &mut Ctx,
    node: Sym,
    name: Sym,
    sel: Sym,
    args: &[Value],
    t: Timeout,
) -> EvalResult {
    let Some(d) = ctx.prog.dist.get().cloned() else {
        return Err(ctx.err_hint(
            ErrorKind::NodeDown,
            format!("cannot reach {node}"),
            "start bt with --name to enable distribution",
        ));
    };
    if node == d.node_name() {
        let actor = ctx.prog.core.actor.clone();
        let h = crate::interp::actor::send::resolve_name(ctx, name, &actor)?;
        return ctx.send(&h, sel, args);
    }
    d.send_remote(ctx, node, Dest::Name(name), sel, args, t)
}

/// `pid`, `isAlive`, `stop` or `kill` sent to the name proxy of `name` on Erlang node
/// `node`: the process registered under the name now (`no_such_process` when nobody holds
/// it; `isAlive` answers false then).
pub(crate) fn name_op(
    ctx: &mut Ctx,
    node: Sym,
    name: Sym,
    sel: &str,
    timeout: Timeout,
) -> EvalResult {
    if sel == "isAlive" {
        return alive(ctx, node, Dest::Name(name));
    }
    let pid = erl(ctx, node, ErlProc::Whereis(name))?;
    let Some(dest) = downcast::<RemotePid>(&pid).map(|p| Dest::Pid {
        number: p.number,
        creation: p.creation,
    }) else {
        return Err(ctx.err(
            ErrorKind::NoSuchProcess,
            format!("no process is registered as #{name} on {node}"),
        ));
    };
    match sel {
        "stop" | "kill" => stop(ctx, node, dest, sel == "kill", timeout),
        _ => Ok(pid),
    }
}
