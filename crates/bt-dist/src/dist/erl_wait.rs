//! Deadlock detection through Erlang processes: a call from an
//! Erlang process that bt processes are waiting on.
//!
//! Erlang peers carry no waiting chain ([`super::chain`] is bt↔bt only), but this node knows
//! its own side of a cycle: a bt process B that sync-calls an Erlang process E waits on E,
//! and so does everything waiting on B (B's waiting chain, kept with the pending call,
//! `PendingCall::waiting`). When E (the `gen_server:call`'s `From`) then calls a process of
//! this node, the call carries that list as E's waiting chain ([`Inbound::call_waited`]):
//! a target on it closes a cycle and the call is answered `deadlock_detected` at once (the
//! Erlang caller gets `{error, Exception}`); otherwise the target handles the call with the
//! chain as the end of its own, so that a call it makes back to B fails as a local cycle.
//!
//! B may have called E by pid (compared with `From` directly) or by registered name
//! (`Actor named: #e on: erlNode`): then this node asks E's node who `From` is
//! (`rpc`: `erlang:process_info(From, registered_name)` to its `rex` server) before the
//! call is handed on — only when such a call is pending to that peer, so the usual call
//! pays one atomic load ([`Counted`]). The answer is remembered with each pending call it
//! was asked for (`PendingCall::probed`), so further calls from the same process while
//! that call is pending cost no more questions. Only `From` itself is recognised, not a
//! process E spawned or called in turn (docs/remote-actors.md "Deadlocks" says why).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use eetf::{Atom, List, Pid, Term, Tuple};

use super::state::{CallDest, Counted, Inner, Once};
use super::terms::atom;
use crate::interp::actor::Done;
use crate::interp::distribution::{CallReply, Inbound, NodeError, Target};

/// How long the question to the peer's `rex` may take before the call is handed on as
/// if nobody waited on its caller.
const PROBE_TIMEOUT: Duration = Duration::from_millis(2000);

impl Counted {
    pub(crate) fn new(inner: &Inner) -> Counted {
        inner.erl_calls.fetch_add(1, Ordering::Relaxed);
        Counted(inner.erl_calls.clone())
    }
}

/// At most this many peer processes are remembered per pending call (`PendingCall`'s
/// `probed`); more are asked about again.
const PROBED_LIMIT: usize = 16;

/// What this node's pending calls to `peer` say about the processes waiting on `from`:
/// the chain of the calls made to `from` by pid, or by a name `from` was seen to hold while
/// the call is pending, and (call number, name, chain) of those made by a name `from` has
/// not been asked about yet.
#[allow(clippy::type_complexity)]
fn scan(inner: &Inner, peer: &str, from: &Pid) -> (Vec<Pid>, Vec<(u64, String, Vec<Pid>)>) {
    let mut direct = Vec::new();
    let mut named = Vec::new();
    for (n, c) in inner.calls.lock().iter() {
        let Some((waiting, _)) = &c.waiting else {
            continue;
        };
        if c.peer != peer {
            continue;
        }
        let chain = || std::iter::once(c.from.clone()).chain(waiting.iter().cloned());
        match &c.dest {
            CallDest::Pid(p) if p == from => direct.extend(chain()),
            CallDest::Pid(_) => {}
            CallDest::Name(name) => match known(&c.probed, from) {
                Some(held) if held == Some(name.as_str()) => direct.extend(chain()),
                Some(_) => {}
                None => named.push((*n, name.clone(), chain().collect())),
            },
        }
    }
    (direct, named)
}

/// What an earlier question about `from` answered during this call: `Some(name held)`.
fn known<'a>(probed: &'a [(Pid, Option<String>)], from: &Pid) -> Option<Option<&'a str>> {
    probed
        .iter()
        .find(|(p, _)| p == from)
        .map(|(_, n)| n.as_deref())
}

/// Remembers in each still-pending call of `numbers` that `from` holds `name` (None: no
/// name), so a later call from `from` while they are pending is not asked about again.
/// Sound as the question itself: the callee of a pending call is fixed, and a process
/// can hold the callee's name only once the callee gave it up.
fn remember(inner: &Inner, numbers: &[u64], from: &Pid, name: &Option<String>) {
    let mut calls = inner.calls.lock();
    for n in numbers {
        if let Some(c) = calls.get_mut(n) {
            if c.probed.len() < PROBED_LIMIT {
                c.probed.push((from.clone(), name.clone()));
            }
        }
    }
}

/// Starts an outgoing call (the connection layer's `super::conn::start_call`, handed in
/// by its caller so this module names no layer above it).
pub(super) type StartCall = fn(
    &Arc<Inner>,
    u64,
    &str,
    &CallDest,
    Term,
    Option<Duration>,
    Once<Result<CallReply, NodeError>>,
    Option<Vec<Pid>>,
) -> bool;

/// Hands a `gen_server:call` from `from` (a process of `peer`) to `target` with the
/// processes of this node waiting on `from`, asking `from`'s node for its registered name
/// first (a call through `start_call`) when calls to a name there are pending.
#[allow(clippy::too_many_arguments)]
pub(super) fn call(
    inner: &Arc<Inner>,
    peer: &str,
    ib: Arc<dyn Inbound>,
    target: Target,
    from: Pid,
    req: Term,
    reply: Done<Term>,
    start_call: StartCall,
) {
    if inner.erl_calls.load(Ordering::Relaxed) == 0 {
        return ib.call(target, from, req, reply);
    }
    let (mut chain, named) = scan(inner, peer, &from);
    if named.is_empty() {
        return ib.call_waited(target, from, req, chain, reply);
    }
    // `rpc:call(Node, erlang, process_info, [From, registered_name])` through `rex`.
    let request = Term::from(Tuple::from(vec![
        atom("call"),
        atom("erlang"),
        atom("process_info"),
        Term::from(List::from(vec![
            Term::from(from.clone()),
            atom("registered_name"),
        ])),
        atom("user"),
    ]));
    let caller = named[0].2[0].clone();
    let number = (caller.id as u64) | ((caller.serial as u64) << 32);
    let f2 = from.clone();
    let weak = Arc::downgrade(inner);
    let done: Done<Result<_, _>> = Box::new(move |r| {
        // `{registered_name, Name}`; `[]` (no name) and `undefined` (exited) are answers
        // too. A failed question (timeout, `badrpc`) is not remembered: asked again later.
        let (name, answered) = match r {
            Ok(CallReply { term, .. }) => match &term {
                Term::Tuple(t) => match &t.elements[..] {
                    [Term::Atom(k), Term::Atom(Atom { name })] if k.name == "registered_name" => {
                        (Some(name.clone()), true)
                    }
                    _ => (None, false),
                },
                Term::List(l) => (None, l.elements.is_empty()),
                Term::Atom(a) => (None, a.name == "undefined"),
                _ => (None, false),
            },
            Err(_) => (None, false),
        };
        if let (true, Some(inner)) = (answered, weak.upgrade()) {
            let numbers: Vec<u64> = named.iter().map(|(n, _, _)| *n).collect();
            remember(&inner, &numbers, &f2, &name);
        }
        for (_, n, c) in named {
            if Some(&n) == name.as_ref() {
                chain.extend(c);
            }
        }
        ib.call_waited(target, f2, req, chain, reply);
    });
    let done = Once::new(done, Err(super::state::stopped(peer)));
    let rex = CallDest::Name("rex".to_string());
    start_call(
        inner,
        number,
        peer,
        &rex,
        request,
        Some(PROBE_TIMEOUT),
        done,
        None,
    );
}
