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
//!
//! A Pid (`anActor pid`) is an Erlang pid on the wire as well, so between bt nodes the table
//! also lists the pids that stand for Pids rather than actors: one element
//! `{'$bt_pids', [Pid, …]}` (left out when there are none; an older bt node skips it),
//! and the receiver decodes those as Pids ([`with_pids`]).

use std::cell::RefCell;

use eetf::{Atom, List, Pid, Term, Tuple};

use crate::value::Sym;

thread_local! {
    /// While [`collect`] runs: the actors met, with their classes (`Sym::NONE`: a Pid).
    static TABLE: RefCell<Option<Vec<(Pid, Sym)>>> = const { RefCell::new(None) };
    /// While [`with_pids`] runs: the pids a peer's table marks as Pids.
    static PIDS: RefCell<Vec<Pid>> = const { RefCell::new(Vec::new()) };
}

/// The tag of the table element listing the pids that are Pids, not actors.
const PIDS_TAG: &str = "$bt_pids";

/// Runs `f` (which encodes values), answering its result and the class table of the actors
/// it encoded as pids.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Term) {
    let outer = TABLE.with(|t| t.borrow_mut().replace(Vec::new()));
    let r = f();
    let found = TABLE.with(|t| std::mem::replace(&mut *t.borrow_mut(), outer));
    let found = found.unwrap_or_default();
    let mut pids = Vec::new();
    let mut items: Vec<Term> = Vec::new();
    for (p, c) in &found {
        let (p, c) = (p.clone(), *c);
        if c == Sym::NONE {
            // A pid met as an actor too is sent as the actor (the more able handle).
            if !found.iter().any(|(q, k)| *q == p && *k != Sym::NONE) {
                pids.push(Term::from(p));
            }
        } else {
            items.push(Term::from(Tuple::from(vec![
                Term::from(p),
                Term::from(Atom::from(c.as_str())),
            ])));
        }
    }
    if !pids.is_empty() {
        items.push(Term::from(Tuple::from(vec![
            Term::from(Atom::from(PIDS_TAG)),
            Term::from(List::from(pids)),
        ])));
    }
    (r, Term::from(List::from(items)))
}

/// Notes that `p` stands for a Pid, not an actor (while [`collect`] runs).
pub(crate) fn note_pid(p: &Pid) {
    note(p, Sym::NONE);
}

/// The pids a peer's class table marks as Pids (`{'$bt_pids', […]}`).
pub fn pids_of(table: &Term) -> Vec<Pid> {
    let Term::List(l) = table else {
        return Vec::new();
    };
    for e in &l.elements {
        if let Term::Tuple(t) = e {
            if let [Term::Atom(a), Term::List(ps)] = &t.elements[..] {
                if a.name == PIDS_TAG {
                    return ps
                        .elements
                        .iter()
                        .take(4096)
                        .filter_map(|x| match x {
                            Term::Pid(p) => Some(p.clone()),
                            _ => None,
                        })
                        .collect();
                }
            }
        }
    }
    Vec::new()
}

/// Runs `f` (which decodes a peer's payload) with `pids` decoding as Pids.
pub fn with_pids<R>(pids: Vec<Pid>, f: impl FnOnce() -> R) -> R {
    if pids.is_empty() {
        return f();
    }
    let outer = PIDS.with(|t| std::mem::replace(&mut *t.borrow_mut(), pids));
    let r = f();
    PIDS.with(|t| *t.borrow_mut() = outer);
    r
}

/// Does the payload being decoded mark `p` as a Pid?
pub(crate) fn is_pid(p: &Pid) -> bool {
    PIDS.with(|t| t.borrow().iter().any(|q| q == p))
}

/// Notes that the actor with pid `p` is of class `class` (while [`collect`] runs).
pub(crate) fn note(p: &Pid, class: Sym) {
    TABLE.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            let pid = class == Sym::NONE;
            if v.len() < 4096 && !v.iter().any(|(q, c)| q == p && (*c == Sym::NONE) == pid) {
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
        crate::interp::actor::prims::node::remote::remember_class(node, number, class);
    }
}
