//! The classes of actors that cross between bt nodes as pids.
//!
//! An actor crosses as a plain Erlang pid, which names no class, so an actor a bt node
//! meets for the first time would print as `Actor(Actor, K.N.0)`. Between bt nodes a
//! request `{Selector, Args, Classes}` and a reply `{ok, Value, Classes}` carry a class
//! table: `Classes` is a list of `{Pid, ClassName}` for the actors the payload holds
//! ([`collect`] gathers it while encoding, [`remember`] records it before decoding), so
//! those actors print with their class (`Actor(Counter, 1.7.0)`). Erlang peers never see
//! the table: a bt node adds it only for a bt peer, and answers with one only when asked
//! with one.

use std::cell::RefCell;

use eetf::{Atom, List, Pid, Term, Tuple};

use crate::value::Sym;

thread_local! {
    static TABLE: RefCell<Option<Vec<(Pid, Sym)>>> = const { RefCell::new(None) };
}

/// Runs `f` (which encodes values), answering its result and the class table of the actors
/// it encoded as pids.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Term) {
    let outer = TABLE.with(|t| t.borrow_mut().replace(Vec::new()));
    let r = f();
    let found = TABLE.with(|t| std::mem::replace(&mut *t.borrow_mut(), outer));
    let items: Vec<Term> = found
        .unwrap_or_default()
        .into_iter()
        .map(|(p, c)| {
            Term::from(Tuple::from(vec![
                Term::from(p),
                Term::from(Atom::from(c.as_str())),
            ]))
        })
        .collect();
    (r, Term::from(List::from(items)))
}

/// Notes that the actor with pid `p` is of class `class` (while [`collect`] runs).
pub(crate) fn note(p: &Pid, class: Sym) {
    TABLE.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            if v.len() < 4096 && !v.iter().any(|(q, _)| q == p) {
                v.push((p.clone(), class));
            }
        }
    });
}

/// Records a peer's class table: actors of other nodes listed there print with their
/// class when their pids are decoded. Names count against the cap on peer atoms
/// (`etf::peer_symbol`).
pub fn remember(me: &str, table: &Term) {
    let Term::List(l) = table else { return };
    for e in l.elements.iter().take(4096) {
        let Term::Tuple(t) = e else { continue };
        let [Term::Pid(p), Term::Atom(c)] = &t.elements[..] else {
            continue;
        };
        if p.node.name == me {
            continue; // this node's own actors decode as themselves
        }
        let peer = super::etf::peer_symbol;
        let (Some(node), Some(class)) = (peer(&p.node.name), peer(&c.name)) else {
            continue;
        };
        let number = (p.id as u64) | ((p.serial as u64) << 32);
        crate::interp::prims::actor_node_remote::remember_class(node, number, class);
    }
}
