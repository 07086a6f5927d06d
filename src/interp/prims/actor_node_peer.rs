//! `Actor named: #name on: aNode` (LANGUAGE.md 8.3, 8.12): a proxy ([`RemoteName`]) whose
//! every send is a synchronous call to the actor registered as `name` on that node — to a bt
//! node it runs the actor's method there and re-raises its errors here; to an Erlang node it
//! is a `gen_server:call({name, node}, {Selector, Args})` answering the reply term as a value.
//! The network side is `Distribution::remote_call` (implemented in `crate::dist::peer`).

use std::any::Any;

use crate::interp::actor_handle::native;
use crate::interp::eval::{Ctx, EvalResult};
use crate::interp::value::{ClassRef, NativeObj, Sym, Value};

/// `Actor named: #name on: aNode` (a proxy resolving the name on that node at each send).
pub struct RemoteName {
    pub node: Sym,
    pub name: Sym,
    pub class: ClassRef,
}

impl NativeObj for RemoteName {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!(
            "Actor({}, registered, {} on {})",
            self.class.name, self.name, self.node
        )
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RemoteName>()
            .is_some_and(|o| o.name == self.name && o.node == self.node)
    }
    fn hash_code(&self) -> u64 {
        (self.name.index() as u64) << 20 ^ self.node.index() as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k = vec![u64::MAX, u64::MAX, u64::MAX, u64::MAX];
        k.extend(self.node.as_str().chars().map(|c| c as u64));
        k.push(0);
        k.extend(self.name.as_str().chars().map(|c| c as u64));
        (5, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

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
    "isRemote",
    "node",
    "unwrap",
    "isNil",
    "notNil",
    "respondsTo:",
    "isKindOf:",
];

/// `Actor named: #name on: aNode`: `Result(proxy, Error)`; no network until a send.
pub fn named_on(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
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
    let node = match crate::interp::prims::actor_node::node_arg(ctx, &a[1]) {
        Some(n) => n,
        None => {
            let n = ctx.class_name_of(&a[1]);
            return Err(ctx.type_err(format!("named:on: expects a Node, not {n}")));
        }
    };
    Ok(ctx.make_ok(native(RemoteName { node, name, class })))
}

/// Intercepts sends to a [`RemoteName`] (called from `actor_send::intercept`).
pub fn intercept(ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
    let rn = crate::interp::actor_handle::downcast::<RemoteName>(recv)?;
    let s = sel.as_str();
    match s {
        "isRemote" => return Some(Ok(Value::True)),
        "node" => return Some(crate::interp::prims::actor_node::node_value(ctx, rn.node)),
        _ if LOCAL_SELECTORS.contains(&s) => return None,
        _ => {}
    }
    let (node, name) = (rn.node, rn.name);
    Some(call_remote(ctx, node, name, sel, args))
}

/// A sync send through the node's distribution layer.
fn call_remote(ctx: &mut Ctx, node: Sym, name: Sym, sel: Sym, args: &[Value]) -> EvalResult {
    let Some(d) = ctx.prog.dist.get().cloned() else {
        return Err(ctx.err_hint(
            "node_down",
            format!("cannot reach {node}"),
            "start bt with --name to enable distribution",
        ));
    };
    if node == d.node_name() {
        let actor = ctx.prog.core.actor.clone();
        let h = crate::interp::actor_send::resolve_name(ctx, name, &actor)?;
        return ctx.send(&h, sel, args);
    }
    d.remote_call(ctx, node, name, sel, args)
}
