//! Deadlock detection across nodes: the waiting chain travels with
//! bt↔bt sync calls.
//!
//! Locally a sync call fails with `deadlock_detected` when its target is already waiting
//! (directly or transitively) on the caller (`runtime::waiter`). Across nodes the chain is
//! carried by the requests: a bt caller's `gen_server:call` names the calling process as
//! `From`, and its request's class table (`codec::etf_classes`) holds one more element,
//! `{'$bt_waiting', [Pid, …]}`, the processes (of any node) waiting on the caller, nearest
//! first — left out when there are none, so a plain call costs nothing more on the wire.
//! The receiving node
//!
//! * answers `deadlock_detected` at once when the call's target is on the chain (`From`
//!   included) — a call through a name proxy, whose target only that node knows;
//! * else hands the chain to the target with the message ([`RemoteChain`], ending the
//!   target's local waiting chain while it handles the call), so that a local call back
//!   to one of this node's processes on it fails as a local cycle does, and a remote call
//!   made meanwhile carries the chain on ([`outgoing`]), where the sender checks a target
//!   pid against it before sending ([`holds`]).
//!
//! Erlang peers never see the element (bt adds a class table only for bt peers) and send
//! none: a call from an Erlang process starts no chain. An older bt node skips the element
//! (it reads only `{Pid, ClassName}` entries) and starts its chains afresh.

use eetf::{Atom, List, Pid, Term, Tuple};

use super::state::Inner;
use super::terms::my_pid;
use crate::interp::eval::Ctx;
use crate::runtime::RemoteChain;
use crate::value::Sym;

/// The tag of the chain's element in a request's class table.
pub const TAG: &str = "$bt_waiting";
/// Chains longer than this are cut (a peer cannot make a node scan without end).
const MAX: usize = 1024;

/// A pid's process number on its node (`id` low 32 bits, `serial` high 32, as bt maps them).
fn number(p: &Pid) -> u64 {
    (p.id as u64) | ((p.serial as u64) << 32)
}

/// The processes waiting on the process running `ctx`, as pids of their nodes (this node's
/// first, nearest first, then the part that came from other nodes): what a sync call from
/// it to a bt peer carries after `From`.
pub(crate) fn outgoing(inner: &Inner, ctx: &mut Ctx) -> Vec<Pid> {
    let Some(cx) = crate::interp::actor::cx_of(ctx) else {
        return Vec::new();
    };
    let (local, remote) = cx.waiting_chain();
    let mut out: Vec<Pid> = local
        .iter()
        .filter(|p| p.node == 0 && !p.service)
        .map(|p| my_pid(inner, p.number))
        .collect();
    if let Some(w) = remote
        .as_ref()
        .and_then(|r| r.wire.downcast_ref::<Vec<Pid>>())
    {
        out.extend(w.iter().cloned());
    }
    out.truncate(MAX);
    out
}

/// Is process `number` of `node` on `chain`? (The sender's check before it sends.)
pub(crate) fn holds(chain: &[Pid], node: Sym, number: u64) -> bool {
    chain
        .iter()
        .any(|p| p.node.name == node.as_str() && self::number(p) == number)
}

/// `table` (a request's class table, a list) with the chain's element added when there is
/// a chain.
pub(crate) fn attach(table: Term, chain: Vec<Pid>) -> Term {
    if chain.is_empty() {
        return table;
    }
    let Term::List(mut l) = table else {
        return table;
    };
    let pids = chain.into_iter().map(Term::from).collect::<Vec<_>>();
    l.elements.push(Term::from(Tuple::from(vec![
        Term::from(Atom::from(TAG)),
        Term::from(List::from(pids)),
    ])));
    Term::from(l)
}

/// The chain of a request from a bt peer: its caller `from`, then the chain its class table
/// carries. `me` is this node's name: its processes on the chain are listed by number.
pub(crate) fn incoming(me: &str, from: Pid, table: &Term) -> RemoteChain {
    let mut wire = vec![from];
    if let Term::List(l) = table {
        let found = l.elements.iter().rev().find_map(|e| match e {
            Term::Tuple(t) => match &t.elements[..] {
                [Term::Atom(a), Term::List(pids)] if a.name == TAG => Some(pids),
                _ => None,
            },
            _ => None,
        });
        if let Some(pids) = found {
            wire.extend(
                pids.elements
                    .iter()
                    .filter_map(|t| match t {
                        Term::Pid(p) => Some(p.clone()),
                        _ => None,
                    })
                    .take(MAX - 1),
            );
        }
    }
    made(me, wire)
}

/// The chain of a call from a process `from` of an Erlang peer that the processes `waits`
/// wait on (`super::erl_wait`): `from`, then `waits`.
pub(crate) fn from_erlang(me: &str, from: Pid, waits: Vec<Pid>) -> RemoteChain {
    let mut wire = Vec::with_capacity(waits.len() + 1);
    wire.push(from);
    wire.extend(waits.into_iter().take(MAX - 1));
    made(me, wire)
}

fn made(me: &str, wire: Vec<Pid>) -> RemoteChain {
    let local = wire
        .iter()
        .filter(|p| p.node.name == me)
        .map(number)
        .collect();
    RemoteChain {
        local,
        wire: Box::new(wire),
    }
}

/// The `deadlock_detected` message for a call whose target `who` is waiting on the caller
/// (as the local one reads).
pub(crate) fn message(who: &str, sel: &str) -> String {
    format!("deadlock: {who} is already waiting on this process ('{sel}')")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(node: &str, n: u32) -> Pid {
        Pid::new(node, n, 0, 1)
    }

    #[test]
    fn a_chain_rides_in_the_class_table_and_comes_back_out() {
        let table = Term::from(List::from(vec![Term::from(Tuple::from(vec![
            Term::from(pid("b@h", 9)),
            Term::from(Atom::from("Counter")),
        ]))]));
        let t = attach(table.clone(), vec![pid("a@h", 5), pid("c@h", 6)]);
        let c = incoming("a@h", pid("b@h", 7), &t);
        let wire = c.wire.downcast_ref::<Vec<Pid>>().unwrap();
        assert_eq!(wire, &vec![pid("b@h", 7), pid("a@h", 5), pid("c@h", 6)]);
        assert_eq!(c.local, vec![5]);
        assert!(holds(wire, Sym::new("c@h"), 6));
        assert!(!holds(wire, Sym::new("c@h"), 5));
        // No chain: the table is unchanged (nothing more on the wire).
        assert_eq!(attach(table.clone(), Vec::new()), table);
        let c = incoming("a@h", pid("b@h", 7), &table);
        assert_eq!(c.wire.downcast_ref::<Vec<Pid>>().unwrap().len(), 1);
    }

    #[test]
    fn a_peer_cannot_send_an_endless_chain() {
        let many = (0..5000).map(|i| pid("x@h", i)).collect();
        let t = attach(Term::from(List::nil()), many);
        let c = incoming("x@h", pid("b@h", 1), &t);
        assert_eq!(c.local.len(), MAX - 1);
        let junk = Term::from(List::from(vec![Term::from(Tuple::from(vec![
            Term::from(Atom::from(TAG)),
            Term::from(List::from(vec![Term::from(Atom::from("notapid"))])),
        ]))]));
        assert!(incoming("x@h", pid("b@h", 1), &junk).local.is_empty());
    }
}
