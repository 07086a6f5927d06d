//! Cluster-wide names: `spawnAs: #name scope: #global`, `named: #name
//! scope: #global`, and supervision specs with `scope: #global`.
//!
//! Each named bt node keeps a replicated view of the global registry: name → the holding
//! node, process number and start time of the registrant. A node registers only its own
//! processes; it tells every connected **visible** bt peer at once (`globalAdd`, a cast to
//! the peer's query service `'$bt_node'`, [`super::service`]) and again when a peer comes up
//! (every name it holds), and withdraws a name when its process exits (`globalRemove`).
//! Names held by a node that goes down leave the view; they are remembered as lost, so that
//! a lookup answers `node_down` (the holder may well be alive) until the node reconnects —
//! then its `globalAdd` brings them back and the conflict rule settles any name registered
//! on both sides meanwhile. Hidden nodes are never told and
//! never tell.
//!
//! **Conflicts.** When a node learns of a registration of a name its view already gives to
//! another process — two partitions healing, or two nodes registering at the same moment
//! — every node applies the same rule: the registrant that started earlier keeps the name
//! (ties: the node whose name sorts first). The loser's own node stops it gracefully with
//! the exit reason `#globalNameConflict` (its `terminate:` runs).
//!
//! A globally registered process is also registered under the same name on its own node,
//! so `named: #name on: itsNode` finds it too. This is bt's own protocol between bt nodes;
//! it does not speak Erlang's `global` module (bt is a hidden node to Erlang nodes).

use std::sync::Arc;

use eetf::{Atom, FixInteger, Term, Tuple};

use super::state::Entry;
use super::state::Global;
use super::state::Inner;
use crate::codec::etf::atom;
use crate::interp::actor::ActorSys;
use crate::interp::distribution::NodeError;
use crate::runtime::{ExitReason, ProcRef};
use crate::value::{Sym, Value};

/// The exit reason of a registrant that lost its global name on a heal.
pub const CONFLICT_REASON: &str = "globalNameConflict";

impl Entry {
    fn same(&self, o: &Entry) -> bool {
        self.node == o.node && self.number == o.number
    }
    /// The conflict rule: earlier start wins, ties go to the node name that sorts first.
    fn beats(&self, o: &Entry) -> bool {
        (self.started, &self.node, self.number) < (o.started, &o.node, o.number)
    }
}

impl Global {
    /// Gives the registry the program's actor system (to watch and stop registrants).
    pub(crate) fn set_sys(&self, sys: &Arc<ActorSys>) {
        *self.sys.lock() = Arc::downgrade(sys);
    }

    pub(crate) fn sys(&self) -> Option<Arc<ActorSys>> {
        self.sys.lock().upgrade()
    }
}

fn name_err(kind: &'static str, message: String) -> NodeError {
    NodeError {
        kind,
        message,
        hint: None,
    }
}

fn int(n: u64) -> Term {
    match i32::try_from(n) {
        Ok(i) => Term::from(FixInteger::from(i)),
        Err(_) => Term::from(eetf::BigInteger::from(n as i64)),
    }
}

fn uint(t: &Term) -> Option<u64> {
    match t {
        Term::FixInteger(i) if i.value >= 0 => Some(i.value as u64),
        Term::BigInteger(b) => u64::try_from(&b.value).ok(),
        _ => None,
    }
}

fn entry_term(name: Sym, e: &Entry) -> Term {
    Term::from(Tuple::from(vec![
        Term::from(Atom::from(name.as_str())),
        Term::from(Atom::from(e.node.as_str())),
        int(e.number),
        int(e.started),
    ]))
}

/// Sends `{Query, Args}` as a cast to `peer`'s query service.
fn tell(inner: &Inner, peer: &str, q: &str, args: Vec<Term>) {
    let request = Term::from(Tuple::from(vec![atom(q), crate::codec::etf::list(args)]));
    let dest = super::state::CallDest::Name(super::terms::SERVICE.to_string());
    super::conn::cast(inner, 0, peer, &dest, request);
}

/// The visible peers (the ones that take part in the registry).
fn visible_peers(inner: &Inner) -> Vec<String> {
    inner
        .state
        .lock()
        .peers
        .iter()
        .filter(|(_, p)| p.visible && p.bt)
        .map(|(n, _)| n.clone())
        .collect()
}

/// Registers the local process `proc` as `name` cluster-wide.
pub(crate) fn register(inner: &Arc<Inner>, name: Sym, proc: &ProcRef) -> Result<(), NodeError> {
    if name.as_str().starts_with("bt_") {
        return Err(name_err(
            "reserved_name",
            format!("#{name} is reserved for the runtime's services (names starting with bt_)"),
        ));
    }
    let g = &inner.global;
    let Some(sys) = g.sys() else {
        return Err(name_err("node_down", "the node is stopping".into()));
    };
    let e = Entry {
        node: inner.me.name.clone(),
        number: proc.pid().number,
        started: proc.started_at_ms(),
        proc: Some(proc.clone()),
    };
    {
        let mut t = g.table.lock();
        if let Some(cur) = t.get(&name) {
            if cur.same(&e) {
                return Ok(());
            }
            // Ours, and its process has gone (a supervisor restarting it): take it over.
            let gone = cur.proc.as_ref().is_some_and(|p| !p.is_alive());
            if gone {
                t.remove(&name);
            }
        }
        if let Some(cur) = t.get(&name) {
            return Err(name_err(
                "name_registered",
                format!("#{name} is already registered globally (on {})", cur.node),
            ));
        }
        t.insert(name, e.clone());
    }
    g.lost.lock().remove(&name);
    // Withdraw the name when the process exits.
    let weak = Arc::downgrade(inner);
    let number = e.number;
    sys.rt.on_exit(proc, move |_, _| {
        if let Some(inner) = weak.upgrade() {
            let me = inner.me.name.clone();
            let removed = {
                let mut t = inner.global.table.lock();
                match t.get(&name) {
                    Some(cur) if cur.node == me && cur.number == number => {
                        t.remove(&name);
                        true
                    }
                    _ => false,
                }
            };
            if removed {
                for p in visible_peers(&inner) {
                    let args = vec![atom(name.as_str()), atom(&me), int(number)];
                    tell(&inner, &p, "globalRemove", args);
                }
            }
        }
    });
    if !inner.me.hidden {
        for p in visible_peers(inner) {
            tell(inner, &p, "globalAdd", vec![entry_term(name, &e)]);
        }
    }
    Ok(())
}

/// Who holds the global `name`: (node, process number there).
pub(crate) fn whereis(inner: &Inner, name: Sym) -> Option<(Sym, u64)> {
    let t = inner.global.table.lock();
    let e = t.get(&name)?;
    if let Some(p) = &e.proc {
        if !p.is_alive() {
            return None;
        }
    }
    Some((Sym::new(&e.node), e.number))
}

/// A visible peer came up (`down` None: send it every name this node holds) or went down
/// (drop the names it held).
pub(crate) fn peer_event(inner: &Inner, peer: &str, down: Option<&str>) {
    if inner.me.hidden {
        return;
    }
    match down {
        None => {
            // Back: its names come with its `globalAdd` (and `globalWhereis` answers meanwhile).
            inner.global.lost.lock().retain(|_, n| n != peer);
            let mine: Vec<Term> = {
                let t = inner.global.table.lock();
                t.iter()
                    .filter(|(_, e)| e.node == inner.me.name)
                    .map(|(n, e)| entry_term(*n, e))
                    .collect()
            };
            if !mine.is_empty() {
                tell(inner, peer, "globalAdd", mine);
            }
        }
        Some(_) => {
            let mut gone = Vec::new();
            inner.global.table.lock().retain(|n, e| {
                let keep = e.node != peer;
                if !keep {
                    gone.push(*n);
                }
                keep
            });
            let mut lost = inner.global.lost.lock();
            for n in gone {
                lost.insert(n, peer.to_string());
            }
        }
    }
}

/// The node that held `name` when its link was lost, if it has not come back since.
pub(crate) fn lost(inner: &Inner, name: Sym) -> Option<Sym> {
    inner.global.lost.lock().get(&name).map(|n| Sym::new(n))
}

/// A registry message from a peer (`globalAdd` / `globalRemove`, casts to the node
/// service).
pub(crate) fn handle(inner: &Inner, q: &str, args: &[Term]) {
    match q {
        "globalAdd" => {
            for t in args {
                if let Some((name, e)) = parse_entry(t) {
                    add(inner, name, e);
                }
            }
        }
        "globalRemove" => {
            if let [Term::Atom(n), Term::Atom(node), num] = args {
                if let (Some(name), Some(number)) = (Sym::lookup(&n.name), uint(num)) {
                    let mut t = inner.global.table.lock();
                    if t.get(&name)
                        .is_some_and(|e| e.node == node.name && e.number == number)
                    {
                        t.remove(&name);
                    }
                }
            }
        }
        _ => {}
    }
}

fn parse_entry(t: &Term) -> Option<(Sym, Entry)> {
    let Term::Tuple(tu) = t else { return None };
    let [Term::Atom(n), Term::Atom(node), num, started] = &tu.elements[..] else {
        return None;
    };
    Some((
        Sym::new(&n.name),
        Entry {
            node: node.name.clone(),
            number: uint(num)?,
            started: uint(started)?,
            proc: None,
        },
    ))
}

/// Applies a peer's registration to the view, with the conflict rule.
fn add(inner: &Inner, name: Sym, e: Entry) {
    inner.global.lost.lock().remove(&name);
    if e.node == inner.me.name {
        return; // only this node speaks for its own processes
    }
    let loser = {
        let mut t = inner.global.table.lock();
        match t.get(&name) {
            None => {
                t.insert(name, e);
                None
            }
            Some(cur) if cur.same(&e) => None,
            // A registrant of ours whose process has already gone: the newcomer takes it.
            Some(cur) if cur.proc.as_ref().is_some_and(|p| !p.is_alive()) => {
                t.insert(name, e);
                None
            }
            Some(cur) if e.beats(cur) => {
                let old = t.insert(name, e);
                old.and_then(|o| o.proc)
            }
            Some(_) => None, // ours (or a third node's) keeps it; the other side stops theirs
        }
    };
    if let Some(p) = loser {
        if let Some(sys) = inner.global.sys() {
            sys.rt
                .request_stop(&p, None, ExitReason::Custom(Value::sym(CONFLICT_REASON)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Entry;

    fn e(node: &str, number: u64, started: u64) -> Entry {
        Entry {
            node: node.into(),
            number,
            started,
            proc: None,
        }
    }

    #[test]
    fn the_earlier_registrant_wins_and_ties_go_to_the_first_node_name() {
        assert!(e("b@h", 9, 10).beats(&e("a@h", 1, 11)));
        assert!(!e("b@h", 9, 11).beats(&e("a@h", 1, 10)));
        assert!(e("a@h", 9, 10).beats(&e("b@h", 1, 10)));
        assert!(!e("b@h", 1, 10).beats(&e("a@h", 9, 10)));
        assert!(e("a@h", 1, 10).same(&e("a@h", 1, 99)));
    }
}
