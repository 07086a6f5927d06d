//! Distribution (LANGUAGE.md part 8, DESIGN.md §8): a `bt` process started with
//! `--name NAME@HOST` becomes a **node** that other nodes on the same host can connect to.
//! This stage sits above the interpreter and the runtime: it implements the
//! [`Distribution`](crate::interp::prims::actor_node::Distribution) trait the Node
//! primitives call through `Program::dist`; nothing below depends on it.
//!
//! * [`registry`] — the per-host name registry: a directory of `name@host` files holding
//!   `PORT PID` (`BT_NODE_DIR` overrides the location); stale entries are ignored.
//! * [`cookie`] — the shared secret (`BT_COOKIE`, else `~/.config/bt/cookie`, created with
//!   a random value and mode 0600); never on the wire.
//! * [`frame`] — length-prefixed envelopes carrying the wire-format version.
//! * [`handshake`] — the challenge–response handshake below.
//! * [`net`] — the tokio names used here (the one module that names tokio).
//! * [`node`] — the listener (127.0.0.1, port 0), the connection table and connection
//!   indexes, `connect`/`disconnect`/`ping`.
//!
//! # Handshake
//!
//! The initiator I connects to the port the registry gives for the acceptor A's name:
//!
//! ```text
//! I → A  Hello     { name: I, to: A, hidden, versions: [1] }
//!        A refuses (Refuse, then close) if `to` is not its name, I's name is invalid, or
//!        no wire version is shared (kind wire_version_unsupported).
//! A → I  Challenge { name: A, hidden, version: chosen, nonce: nA }
//! I → A  Response  { nonce: nI, mac: HMAC(cookie, "bt-dist-1 initiator" | nA | I | A) }
//!        A checks the MAC; if wrong: Refuse { kind: "cookie" } and close.
//! A → I  Ack       { mac: HMAC(cookie, "bt-dist-1 acceptor" | nI | I | A) }
//!        I checks the MAC; if wrong it closes. The link is up on both sides.
//! ```
//! Nonces are 32 random bytes; the MAC is HMAC-SHA256 over a direction label, the nonce
//! and both length-prefixed names, so an answer cannot be replayed or reflected. A wrong
//! cookie makes `connect` answer `node_down` with a hint about the cookie.
//!
//! After the handshake, frames (in the agreed version) are `Ping`/`Pong` and `Disconnect`;
//! remote sends, spawns and queries will add kinds (see [`frame`]). A closed or lost
//! connection removes the peer; pending pings fail.
//!
//! NodeUp/NodeDown (8.9): the node reports visible peers' links coming up (`attach`) and
//! going down (`detach` with the reader's reason `connectionClosed`/`disconnect`/`protocol`,
//! or `disconnect` when this node closed it) through the `PeerEvents` callback that
//! `prims::announce` installs when `SystemAnnouncer current` is first used.

pub mod cookie;
pub mod frame;
pub mod handshake;
pub mod net;
pub mod node;
pub mod registry;

pub use node::{start, DistNode, Options};

/// Owns a started node for the length of `bt run`: shuts it down (registry entry removed,
/// connections closed) when dropped.
pub struct NodeGuard(pub std::sync::Arc<DistNode>);

impl Drop for NodeGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}
