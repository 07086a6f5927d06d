//! Shape manifests between nodes: each bt node tells a visible bt
//! peer the shape version of every Value class it has loaded when the link comes up, and
//! tells its peers again after it loads code (a class may have been reloaded at another
//! version). A node compares each manifest it receives with its own and announces one
//! NodeShapeSkew on `SystemAnnouncer current` per shared class whose versions differ; after
//! a load it compares its new manifest with the ones its peers sent. A skew is announced
//! once for each (peer, class, local version, remote version); it is a warning, never a
//! refusal.
//!
//! Manifests travel as casts to the peer's query service (`{shapes, [Node, #{Class =>
//! Version}]}`, [`super::query`]).

use std::collections::HashMap;

use eetf::{Atom, FixInteger, List, Map, Term, Tuple};

use super::state::Inner;
use crate::codec::etf::atom;
use crate::interp::actor::prims::node_query::shape_manifest;
use crate::value::Sym;

fn manifest_term(inner: &Inner) -> Option<Term> {
    let sys = inner.global.sys()?;
    let m = shape_manifest(&sys.prog);
    Some(Term::from(Map::from(
        m.iter()
            .map(|(n, v)| {
                let v = i32::try_from(*v).unwrap_or(i32::MAX);
                (atom(n.as_str()), Term::from(FixInteger::from(v)))
            })
            .collect::<HashMap<_, _>>(),
    )))
}

fn send_manifest(inner: &Inner, peer: &str, m: Term) {
    let request = Term::from(Tuple::from(vec![
        atom("shapes"),
        Term::from(List::from(vec![
            Term::from(Atom::from(inner.me.name.as_str())),
            m,
        ])),
    ]));
    let dest = super::state::CallDest::Name(super::terms::SERVICE.to_string());
    super::conn::cast(inner, 0, peer, &dest, request);
}

/// A visible bt peer came up: send it this node's manifest; forget a peer that went down.
pub(crate) fn peer_event(inner: &Inner, peer: &str, down: Option<&str>) {
    if down.is_some() {
        inner.shapes.peers.lock().remove(peer);
        inner.shapes.announced.lock().retain(|(p, ..)| p != peer);
        return;
    }
    let bt = inner.state.lock().peers.get(peer).is_some_and(|p| p.bt);
    if bt {
        if let Some(m) = manifest_term(inner) {
            send_manifest(inner, peer, m);
        }
    }
}

/// This node loaded code: compare its manifest with the peers' again and send it to them.
pub(crate) fn reloaded(inner: &Inner) {
    let peers: Vec<String> = inner.shapes.peers.lock().keys().cloned().collect();
    if peers.is_empty() {
        return;
    }
    for p in &peers {
        compare(inner, p);
    }
    if let Some(m) = manifest_term(inner) {
        for p in &peers {
            send_manifest(inner, p, m.clone());
        }
    }
}

/// A peer's manifest arrived (`{shapes, [Node, Map]}`, a cast to the node service).
pub(crate) fn received(inner: &Inner, _op: &str, args: &[Term]) {
    let [Term::Atom(node), Term::Map(m)] = args else {
        return;
    };
    let theirs: HashMap<Sym, i64> = m
        .map
        .iter()
        .filter_map(|(k, v)| match (k, v) {
            (Term::Atom(a), Term::FixInteger(i)) => Some((Sym::new(&a.name), i.value as i64)),
            _ => None,
        })
        .collect();
    inner.shapes.peers.lock().insert(node.name.clone(), theirs);
    compare(inner, &node.name);
}

/// Announces the skews with `peer` not announced yet.
fn compare(inner: &Inner, peer: &str) {
    let Some(sys) = inner.global.sys() else {
        return;
    };
    let mine = shape_manifest(&sys.prog);
    let fresh: Vec<(Sym, i64, i64)> = {
        let peers = inner.shapes.peers.lock();
        let Some(theirs) = peers.get(peer) else {
            return;
        };
        let mut announced = inner.shapes.announced.lock();
        mine.iter()
            .filter_map(|(name, local)| {
                let remote = *theirs.get(name)?;
                (remote != *local).then_some((*name, *local, remote))
            })
            .filter(|(n, l, r)| announced.insert((peer.to_string(), *n, *l, *r)))
            .collect()
    };
    if !fresh.is_empty() {
        crate::interp::prims::announce::announce_shape_skew(&sys, Sym::new(peer), fresh);
    }
}
