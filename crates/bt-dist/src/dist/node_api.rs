//! The [`Distribution`](crate::interp::distribution::Distribution) operations of a named
//! node, one impl per concept trait: what the Node and remote-actor primitives call through
//! `Program::dist`. Connection work runs on the
//! node's network runtime ([`super::dial`], [`super::conn`]); sends and service requests
//! are in [`super::remote`], queries in [`super::query`], global names in [`super::global`].

use std::sync::Arc;
use std::time::Duration;

use eetf::Term;

use super::conn;
use super::node::{DistNode, PING_TIMEOUT};
use super::state::CallDest;
use super::state::{stopped, Once};
use crate::interp::actor::Done;
use crate::interp::distribution::{
    CallReply, Dest, ErlProc, ErlangInterop, GlobalNames, Inbound, NodeError, NodeLinks,
    NodeServices, PeerEvents, ProcessGroups, RemoteActors,
};
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::{Sym, Value};

impl NodeLinks for DistNode {
    fn node_name(&self) -> Sym {
        self.inner.sym
    }

    fn creation(&self) -> u32 {
        self.inner.me.creation
    }

    fn connect(&self, node: &str, done: Done<Result<(), NodeError>>) {
        let done = Once::new(done, Err(stopped(node)));
        let inner = self.inner.clone();
        let to = node.to_string();
        self.spawn(async move { done.call(inner.ensure(&to).await) });
    }

    fn disconnect(&self, node: &str) -> bool {
        let peer = {
            let mut st = self.inner.state.lock();
            st.peers.remove(node).map(|p| {
                let seq = p.visible.then(|| st.next_link_seq());
                (p, seq)
            })
        };
        match peer {
            Some((p, seq)) => {
                p.out.close();
                self.inner.forget(node, p);
                if let Some(seq) = seq {
                    self.inner.link_event(seq, node, Some("disconnect"));
                }
                self.inner.downs.send_modify(|n| *n += 1);
                true
            }
            None => false,
        }
    }

    fn is_connected(&self, node: &str) -> bool {
        self.inner.state.lock().peers.contains_key(node)
    }

    fn ping(&self, node: &str, done: Done<bool>) {
        if node == self.inner.me.name {
            return done(true);
        }
        let request = Term::from(eetf::Tuple::from(vec![
            super::terms::atom("is_auth"),
            super::terms::atom(&self.inner.me.name),
        ]));
        self.call_name(
            0,
            node,
            "net_kernel",
            request,
            Some(PING_TIMEOUT),
            Box::new(move |r| {
                done(matches!(r, Ok(CallReply { term: Term::Atom(a), .. }) if a.name == "yes"))
            }),
        );
    }

    fn connected(&self) -> Vec<String> {
        let st = self.inner.state.lock();
        let mut v: Vec<(u32, &String)> = st
            .peers
            .iter()
            .filter(|(_, p)| p.visible)
            .map(|(n, p)| (p.index, n))
            .collect();
        v.sort();
        v.into_iter().map(|(_, n)| n.clone()).collect()
    }

    fn index_of(&self, node: &str) -> Option<u32> {
        self.inner.index_of(node)
    }

    fn peer_creation(&self, node: &str) -> Option<u32> {
        self.inner.state.lock().peers.get(node).map(|p| p.creation)
    }

    fn set_peer_events(&self, events: PeerEvents) {
        *self.inner.events.lock() = Some(events);
    }

    fn set_inbound(&self, inbound: Arc<dyn Inbound>) {
        *self.inner.inbound.lock() = Some(inbound);
    }
}

impl RemoteActors for DistNode {
    fn send_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
        timeout: crate::runtime::Timeout,
    ) -> EvalResult {
        super::remote::send(self, ctx, node, dest, sel, args, timeout)
    }

    fn cast_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
    ) -> Result<(), Unwind> {
        super::remote::cast(self, ctx, node, dest, sel, args)
    }

    fn remote_call(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        name: Sym,
        sel: Sym,
        args: &[Value],
    ) -> EvalResult {
        let t = crate::runtime::Timeout::DEFAULT;
        super::remote::send(self, ctx, node, Dest::Name(name), sel, args, t)
    }

    fn watch_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        block: Value,
    ) -> Result<u64, Unwind> {
        super::remote::watch(self, ctx, node, dest, block)
    }

    fn unwatch_remote(&self, id: u64) -> bool {
        super::watch::unwatch(&self.inner, id)
    }
}

impl NodeServices for DistNode {
    fn service(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        op: &str,
        args: &[Value],
    ) -> Result<Option<Value>, Unwind> {
        super::remote::service(self, ctx, node, op, args)
    }

    fn query(
        &self,
        ctx: &mut crate::interp::eval::Ctx,
        node: Sym,
        sel: &str,
        args: &[crate::value::Value],
        timeout_ms: u64,
    ) -> crate::interp::eval::EvalResult {
        super::query::query(self, ctx, node, sel, args, timeout_ms)
    }

    fn classes_reloaded(&self) {
        super::shapes::reloaded(&self.inner);
    }
}

impl GlobalNames for DistNode {
    fn global_register(&self, name: Sym, proc: &crate::runtime::ProcRef) -> Result<(), NodeError> {
        super::global::register(&self.inner, name, proc)
    }

    fn global_whereis(&self, name: Sym) -> Option<(Sym, u64)> {
        super::global::whereis(&self.inner, name)
    }

    fn global_lost(&self, name: Sym) -> Option<Sym> {
        super::global::lost(&self.inner, name)
    }
}

impl ProcessGroups for DistNode {
    fn group_changed(&self, group: Sym, number: u64, count: usize, join: bool) {
        super::pg::local_changed(&self.inner, group, number, count, join);
    }

    fn group_remote_members(
        &self,
        ctx: &mut crate::interp::eval::Ctx,
        group: Sym,
    ) -> Vec<crate::value::Value> {
        super::pg::remote_members(&self.inner, ctx, group)
    }

    fn group_remote_which(&self, ctx: &mut crate::interp::eval::Ctx) -> Vec<Sym> {
        super::pg::remote_which(&self.inner, ctx)
    }
}

impl ErlangInterop for DistNode {
    fn call_name(
        &self,
        from: u64,
        node: &str,
        name: &str,
        request: Term,
        timeout: Option<Duration>,
        done: Done<Result<CallReply, NodeError>>,
    ) {
        let done = Once::new(done, Err(stopped(node)));
        let inner = self.inner.clone();
        let (to, name) = (node.to_string(), name.to_string());
        self.spawn(async move {
            if let Err(e) = inner.ensure(&to).await {
                return done.call(Err(e));
            }
            conn::call(
                inner,
                from,
                to,
                CallDest::Name(name),
                request,
                timeout,
                done,
                None,
            )
            .await;
        });
    }

    fn cast_name(&self, from: u64, node: &str, name: &str, request: Term) {
        let inner = self.inner.clone();
        let (to, name) = (node.to_string(), name.to_string());
        self.spawn(async move {
            if inner.ensure(&to).await.is_ok() {
                conn::cast(&inner, from, &to, &CallDest::Name(name), request);
            }
        });
    }

    fn erl_process(&self, ctx: &mut Ctx, node: Sym, op: ErlProc) -> EvalResult {
        super::erl_proc::run(self, ctx, node, op)
    }
}
