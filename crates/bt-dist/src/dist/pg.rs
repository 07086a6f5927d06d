//! Process groups across nodes: this node's side of Erlang's `pg` protocol (default
//! scope `pg`), so bt and Erlang nodes see each other's group members.
//!
//! Each node runs one scope process registered as `pg`; scopes talk in plain messages
//! (OTP's `pg.erl`):
//!
//! | message | meaning |
//! |---|---|
//! | `{discover, Peer}` | a scope looks for this one: answer `sync` and, if `Peer` is new, monitor it and `discover` back |
//! | `{'$gen_cast', {sync, Peer, [{Group, [Pid]}]}}` | all of `Peer`'s local members (replaces what was known) |
//! | `{join, Peer, Group, Pid \| [Pid]}` | members joined on `Peer`'s node |
//! | `{leave, Peer, Pid \| [Pid], [Group]}` | members left (one membership per pid and group) |
//!
//! A scope whose monitor fires (`noconnection` when the link drops) takes its members with
//! it. This node's scope is no bt process: its pid ([`NUMBER`]) never exits (the node
//! service answers monitors on it, [`super::service::NodeInbound`]) and messages to it or to
//! the name `pg` are handled here on the connection's task. Erlang's `pg` discovers only
//! visible nodes and bt↔Erlang links are hidden, so this node sends `discover` to `pg` on
//! every new link, bt or Erlang. The members of this node live in the actor system
//! (`actor::prims::process_group::Groups`); changes reach here through
//! `ProcessGroups::group_changed` and go to every known scope. Groups that are not atoms
//! (Erlang allows any term) are not kept.

use std::collections::HashMap;
use std::sync::Arc;

use eetf::{Atom, Pid, Term, Tuple};
use erl_dist::message::Message;
use erl_dist::term::PidOrAtom;

use super::state::Inner;
pub use super::state::Pg;
use super::state::Scope;
use super::terms::{frame, my_pid};
pub use super::terms::{PG_NAME as NAME, PG_NUMBER as NUMBER};
use crate::codec::etf::{self, atom};
use crate::interp::eval::Ctx;
use crate::value::{Sym, Value};

fn tuple(v: Vec<Term>) -> Term {
    Term::from(Tuple::from(v))
}

fn me(inner: &Inner) -> Pid {
    my_pid(inner, NUMBER)
}

fn pids(t: &Term) -> Vec<Pid> {
    match t {
        Term::Pid(p) => vec![p.clone()],
        Term::List(l) => l
            .elements
            .iter()
            .filter_map(|e| match e {
                Term::Pid(p) => Some(p.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn send(inner: &Inner, to: &Pid, msg: Term) {
    inner.send_to(&to.node.name, frame(Message::send(to.clone(), msg)));
}

/// A new link to `peer`: look for its scope.
pub(super) fn peer_up(inner: &Arc<Inner>, peer: &str) {
    let msg = tuple(vec![atom("discover"), Term::from(me(inner))]);
    let m = Message::reg_send(me(inner), Atom::from(NAME), msg);
    inner.send_to(peer, frame(m));
}

/// A message to this node's scope (by pid or by the name `pg`) from `peer`.
pub(super) fn received(inner: &Arc<Inner>, peer: &str, msg: Term) {
    let Term::Tuple(t) = &msg else { return };
    match &t.elements[..] {
        [Term::Atom(a), Term::Pid(p)] if a.name == "discover" => {
            let sync = tuple(vec![
                atom("sync"),
                Term::from(me(inner)),
                local_groups(inner),
            ]);
            send(inner, p, tuple(vec![atom("$gen_cast"), sync]));
            if add_scope(inner, peer, p) {
                send(
                    inner,
                    p,
                    tuple(vec![atom("discover"), Term::from(me(inner))]),
                );
            }
        }
        [Term::Atom(a), Term::Tuple(c)] if a.name == "$gen_cast" => {
            if let [Term::Atom(s), Term::Pid(p), groups] = &c.elements[..] {
                if s.name == "sync" {
                    add_scope(inner, peer, p);
                    sync(inner, p, groups);
                }
            }
        }
        [Term::Atom(a), Term::Pid(p), Term::Atom(g), who] if a.name == "join" => {
            let mut r = inner.pg.remote.lock();
            if let Some(s) = r.get_mut(&p.node.name).filter(|s| s.pid == *p) {
                let list = s.groups.entry(g.name.clone()).or_default();
                for (i, x) in pids(who).into_iter().enumerate() {
                    list.insert(i, x);
                }
            }
        }
        [Term::Atom(a), Term::Pid(p), who, groups] if a.name == "leave" => {
            let mut r = inner.pg.remote.lock();
            if let Some(s) = r.get_mut(&p.node.name).filter(|s| s.pid == *p) {
                let who = pids(who);
                let Term::List(gs) = groups else { return };
                for g in &gs.elements {
                    let Term::Atom(g) = g else { continue };
                    if let Some(list) = s.groups.get_mut(&g.name) {
                        for x in &who {
                            if let Some(i) = list.iter().position(|y| y == x) {
                                list.remove(i);
                            }
                        }
                        if list.is_empty() {
                            s.groups.remove(&g.name);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Records the scope `p` of `peer` (monitoring it) unless known: true if it was new.
fn add_scope(inner: &Arc<Inner>, peer: &str, p: &Pid) -> bool {
    if p.node.name != peer {
        return false;
    }
    if inner
        .pg
        .remote
        .lock()
        .get(peer)
        .is_some_and(|s| s.pid == *p)
    {
        return false;
    }
    let weak = Arc::downgrade(inner);
    let (node, pid) = (peer.to_string(), p.clone());
    // Registered before the monitor is sent: a `'DOWN'` can only come after.
    inner.pg.remote.lock().insert(
        peer.to_string(),
        Scope {
            pid: p.clone(),
            groups: HashMap::new(),
        },
    );
    super::watch::watch(
        inner,
        NUMBER,
        peer,
        PidOrAtom::Pid(p.clone()),
        Box::new(move |_reason| {
            if let Some(inner) = weak.upgrade() {
                let mut r = inner.pg.remote.lock();
                if r.get(&node).is_some_and(|s| s.pid == pid) {
                    r.remove(&node);
                }
            }
        }),
    );
    true
}

/// `sync` from scope `p`: its members are exactly `groups`.
fn sync(inner: &Inner, p: &Pid, groups: &Term) {
    let Term::List(gs) = groups else { return };
    let mut map: HashMap<String, Vec<Pid>> = HashMap::new();
    for g in &gs.elements {
        let Term::Tuple(t) = g else { continue };
        if let [Term::Atom(name), who] = &t.elements[..] {
            let list = pids(who);
            if !list.is_empty() {
                map.entry(name.name.clone()).or_default().extend(list);
            }
        }
    }
    if let Some(s) = inner
        .pg
        .remote
        .lock()
        .get_mut(&p.node.name)
        .filter(|s| s.pid == *p)
    {
        s.groups = map;
    }
}

/// `[{Group, [Pid]}]` of this node's members.
fn local_groups(inner: &Inner) -> Term {
    let snapshot = inner
        .global
        .sys()
        .map(|sys| sys.groups.snapshot())
        .unwrap_or_default();
    let groups = snapshot
        .into_iter()
        .map(|(g, ns)| {
            let ps = ns
                .into_iter()
                .map(|n| Term::from(my_pid(inner, n)))
                .collect();
            tuple(vec![atom(g.as_str()), etf::list(ps)])
        })
        .collect();
    etf::list(groups)
}

/// A local member joined or left: every known scope is told.
pub(super) fn local_changed(inner: &Inner, group: Sym, number: u64, count: usize, join: bool) {
    let pid = Term::from(my_pid(inner, number));
    let who = if count == 1 {
        pid
    } else {
        etf::list(vec![pid; count])
    };
    let g = atom(group.as_str());
    let msg = if join {
        tuple(vec![atom("join"), Term::from(me(inner)), g, who])
    } else {
        tuple(vec![
            atom("leave"),
            Term::from(me(inner)),
            who,
            etf::list(vec![g]),
        ])
    };
    let scopes: Vec<Pid> = inner
        .pg
        .remote
        .lock()
        .values()
        .map(|s| s.pid.clone())
        .collect();
    for s in scopes {
        send(inner, &s, msg.clone());
    }
}

/// The members of `group` on other nodes, as handles (ordered by node, then pid).
pub(super) fn remote_members(inner: &Inner, ctx: &mut Ctx, group: Sym) -> Vec<Value> {
    let mut all: Vec<Pid> = inner
        .pg
        .remote
        .lock()
        .values()
        .filter_map(|s| s.groups.get(group.as_str()))
        .flat_map(|l| l.iter().cloned())
        .collect();
    all.sort_by(|a, b| (&a.node.name, a.serial, a.id).cmp(&(&b.node.name, b.serial, b.id)));
    all.into_iter()
        .filter_map(|p| etf::from_term(ctx, &Term::from(p), "member").ok())
        .collect()
}

/// The groups with a member on another node (as Symbols made in `ctx`: a peer's atoms
/// count against the cap on new Symbols, `codec::etf`).
pub(super) fn remote_which(inner: &Inner, ctx: &mut Ctx) -> Vec<Sym> {
    let names: Vec<String> = {
        let r = inner.pg.remote.lock();
        r.values().flat_map(|s| s.groups.keys().cloned()).collect()
    };
    let mut v: Vec<Sym> = names
        .iter()
        .filter_map(|g| match etf::from_term(ctx, &atom(g), "group") {
            Ok(Value::Symbol(s)) => Some(s),
            _ => None,
        })
        .collect();
    v.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    v.dedup();
    v
}
