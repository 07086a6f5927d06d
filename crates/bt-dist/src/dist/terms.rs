//! The names this node puts on the wire: its pids and references (and the numbers they
//! carry back), peers' pids, atoms, the registered names of its own services, and control
//! messages framed for a connection. Leaf helpers for every layer of the distribution.

use eetf::{Atom, Pid, Reference, Term};
use erl_dist::message::Message;

use super::state::Inner;

/// An atom as a term.
pub fn atom(s: &str) -> Term {
    Term::from(Atom::from(s))
}

/// Is `p` a pid of this node (this incarnation)? Its process number.
pub(super) fn local_number(inner: &Inner, p: &Pid) -> Option<u64> {
    (p.node.name == inner.me.name && p.creation == inner.me.creation)
        .then_some((p.id as u64) | ((p.serial as u64) << 32))
}

/// The pid of local process `number` in this incarnation.
pub(super) fn my_pid(inner: &Inner, number: u64) -> Pid {
    Pid::new(
        inner.me.name.as_str(),
        (number & 0xffff_ffff) as u32,
        (number >> 32) as u32,
        inner.me.creation,
    )
}

/// The reference of this node's call or monitor `n`.
pub(super) fn my_ref(inner: &Inner, n: u64) -> Reference {
    Reference {
        node: Atom::from(inner.me.name.as_str()),
        id: vec![(n & 0x3ffff) as u32, (n >> 18) as u32, 0xb7],
        creation: inner.me.creation,
    }
}

/// The call number of a reference this node made.
pub(super) fn call_number(inner: &Inner, r: &Reference) -> Option<u64> {
    if r.node.name != inner.me.name
        || r.creation != inner.me.creation
        || r.id.len() != 3
        || r.id[2] != 0xb7
    {
        return None;
    }
    Some(r.id[0] as u64 | ((r.id[1] as u64) << 18))
}

/// A pid of process `number` on peer `node` of incarnation `creation`.
pub fn peer_pid(node: &str, number: u64, creation: u32) -> Pid {
    Pid::new(
        node,
        (number & 0xffff_ffff) as u32,
        (number >> 32) as u32,
        creation,
    )
}

/// A control message (with its payload) as a frame.
pub fn frame(m: Message) -> Vec<u8> {
    let mut b = Vec::with_capacity(192);
    b.extend_from_slice(&[0, 0, 0, 0, 112]);
    // Encoding to a Vec fails only for atoms over 255 characters: send nothing then.
    if !super::frames::write(&m, &mut b) && m.write_into(&mut b).is_err() {
        return Vec::new();
    }
    let n = (b.len() - 4) as u32;
    b[..4].copy_from_slice(&n.to_be_bytes());
    b
}

/// The reserved registered name of every bt node's service.
pub const SERVICE: &str = "$bt_node";

/// The process number of this node's process-group scope (no bt process has it).
pub const PG_NUMBER: u64 = (0x7fff_fff0 << 32) | 1;

/// The registered name of the default process-group scope.
pub const PG_NAME: &str = "pg";
