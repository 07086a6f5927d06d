//! Distribution: a `bt` process started with
//! `--name NAME@HOST` (or `--sname NAME`) becomes an **Erlang distribution node**, so bt
//! nodes form clusters with each other and with Erlang and Elixir nodes. This stage
//! sits above the interpreter and the runtime: it implements the
//! [`Distribution`](crate::interp::distribution::Distribution) trait the Node
//! primitives call through `Program::dist`, and calls the interpreter back through
//! [`Inbound`](crate::interp::distribution::Inbound) for what peers ask of local
//! processes. Nothing below depends on it; tokio is named only in [`net`].
//!
//! Layers, bottom to top:
//! * [`net`] — tokio under local names, and the futures-io adapter `erl_dist` needs.
//! * [`tls`] — `--dist-tls`: rustls, mutual certificates.
//! * [`epmd`] — registering with and querying the port mapper; [`epmd_server`] is `bt epmd`,
//!   started when no port mapper answers.
//! * [`cookie`] — `BT_COOKIE`, `--cookie-file`, `~/.erlang.cookie`.
//! * [`handshake`] — handshake version 6 (`erl_dist`), visibility (bt↔bt visible,
//!   bt↔Erlang hidden), simultaneous connects, TLS framing.
//! * [`state`] — the data of the node and its connections (tables, pending calls and
//!   monitors, output queues, the per-node registries), named by every layer above and
//!   naming none of them; [`terms`] — this node's pids and references, atoms, frames, the
//!   service names; [`watch`] — monitors on peer processes.
//! * [`deadline`] — the deadlines of outgoing calls (one timer task per node).
//! * [`conn_io`] — a live connection's bytes: frames, ticks, the output queue written from
//!   the sending thread; [`hub`] — the plain-TCP connections' input, read by the program's
//!   idle workers (one thread wake-up per message).
//! * [`conn`] — a live connection's control messages (ping, gen_server calls
//!   and casts, monitors, links, exits).
//! * [`node`] — the node: start, connection table and indexes, NodeUp/NodeDown;
//!   [`dial`] — dialing and accepting, hardening caps; [`node_api`] — the `Distribution`
//!   operations.
//! * [`peer`] — what peers ask of local bt processes (gen_server calls and casts, monitors,
//!   links, exits); calls to actors go straight into the actor's mailbox.
//! * [`seeds`] — `--connect`: seed nodes kept connected, reconnecting with backoff.
//! * [`pg`] — process groups: this node's side of Erlang's `pg` protocol.
//! * [`global`] — cluster-wide names: the replicated registry, the conflict rule.
//! * [`shapes`] — shape manifests exchanged with peers, NodeShapeSkew.
//! * [`service`] — the node service `'$bt_node'`: one table of operations other nodes ask
//!   of this node (remote spawn and lookups in [`service_ops`], the per-node queries of
//!   [`query`], registry and manifest casts), answered without a service process.
//! * [`query`] — the per-node queries (actors, supervisors, process trees, shape
//!   manifests, status) and the asking side of those queries.
//! * [`remote`] — the calling side of remote actors: sync sends, casts, service requests
//!   and monitors of peer processes; [`chain`] — the waiting chain bt↔bt calls
//!   carry (deadlock detection across nodes); [`erl_wait`] — cycles through Erlang
//!   processes; [`erl_proc`] — `pid`/`isAlive`/`stop`/`kill` of Erlang processes.
//! * [`rpc`] — `erpc`/`rpc`/`spawn/4` from Erlang and Elixir into bt classes (`SPAWN_REQUEST`).
//!
//! Values cross as Erlang terms through [`crate::codec::etf`].

pub mod chain;
pub mod conn;
pub mod conn_io;
pub mod cookie;
pub mod deadline;
pub mod dial;
pub mod epmd;
pub mod epmd_server;
pub mod erl_proc;
pub mod erl_wait;
pub mod frames;
pub mod global;
pub mod handshake;
pub mod hub;
pub mod net;
pub mod node;
pub mod node_api;
pub mod peer;
pub mod pg;
pub mod query;
pub mod remote;
pub mod rpc;
pub mod seeds;
pub mod service;
pub mod service_ops;
pub mod shapes;
pub mod spin;
pub mod state;
mod sys;
pub mod terms;
pub mod tls;
pub mod watch;

pub use node::{start, DistNode, Options};

/// Owns a started node for the length of `bt run`: shuts it down (name unregistered,
/// connections closed) when dropped.
pub struct NodeGuard(pub std::sync::Arc<DistNode>);

impl Drop for NodeGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

pub use sys::short_host;
