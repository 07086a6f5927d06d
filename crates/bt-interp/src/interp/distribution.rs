//! The distribution interface: what the interpreter asks of the network side (implemented
//! above it by `bt-dist`, installed once in `Program::dist` by a named node) and what the
//! network side asks of local processes ([`Inbound`]). Without an installed implementation
//! (no `--name`) the node is [`NO_NODE`] and every operation answers `node_down`.
//!
//! The interface is a set of small traits, one per concept — [`NodeLinks`] (name and
//! links), [`RemoteActors`] (send, monitor), [`NodeServices`] (remote spawn and queries),
//! [`GlobalNames`], [`ProcessGroups`], [`ErlangInterop`] (Erlang terms appear only there and
//! in [`Inbound`]) — and [`Distribution`], the one object that is all of them. Network
//! operations answer through a [`Done`] callback (always called, within their own
//! timeouts); the primitives suspend the calling process meanwhile
//! ([`await_external`](crate::interp::actor::await_external)), so no worker thread blocks.
//! The operations that run in a process take its context, named here as
//! `eval::context::Ctx`: this file never reads it, so it does not name the evaluator.

use std::sync::Arc;

use crate::interp::eval::context::{Ctx, EvalResult, Unwind};
use crate::value::{Sym, Value};

/// Receives the outcome of an external operation exactly once, on any thread.
pub type Done<T> = Box<dyn FnOnce(T) + Send>;

/// The name of a node that was not started with `--name`.
pub const NO_NODE: &str = "nonode@nohost";

/// `name@host`: exactly one `@`, both parts non-empty, characters `[A-Za-z0-9_.-]`.
pub fn valid_node_name(s: &str) -> bool {
    let Some((name, host)) = s.split_once('@') else {
        return false;
    };
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    ok(name) && ok(host)
}

/// Why a link operation failed: an error kind (`node_down`, `insecure_distribution`,
/// `wire_version_unsupported`), a message and an optional hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeError {
    pub kind: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

/// Told when a visible peer's link comes up (`None`) or goes down (`Some(reason)`:
/// `connectionClosed`, `disconnect`, …), on any thread (`prims::announce` turns it into
/// NodeUp/NodeDown on `SystemAnnouncer current`). Called without any lock held.
pub type PeerEvents = std::sync::Arc<dyn Fn(&str, Option<&str>) + Send + Sync>;

/// A local process a peer addresses: by registered name or by process number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Name(Sym),
    Number(u64),
}

/// Where a message for another node goes: the actor registered under a name there,
/// or a process by number (with the creation of the node incarnation it belongs to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    Name(Sym),
    Pid { number: u64, creation: u32 },
}

/// A process operation on an Erlang node ([`ErlangInterop::erl_process`]).
#[derive(Clone, Debug)]
pub enum ErlProc {
    /// `erlang:whereis(Name)` there: a Pid, or nil when nobody holds the name.
    Whereis(Sym),
    /// `erlang:registered()` there: a List of Symbols.
    Registered,
    /// `erlang:is_process_alive(Pid)` there: a Boolean.
    Alive(Dest),
    /// `exit(Pid, Reason)` (an `EXIT2` signal from the caller): a Boolean, whether the
    /// process was alive just before.
    Signal(Dest, Value),
    /// `exit(Pid, kill)`, or with `kill` false a supervisor's shutdown: `exit(Pid,
    /// shutdown)`, then `exit(Pid, kill)` if it is still running after `timeout`. Answers
    /// (a Boolean, whether it was alive) once the process has exited; `timeout` when it
    /// has not after the last signal.
    Stop {
        dest: Dest,
        kill: bool,
        timeout: crate::runtime::Timeout,
    },
    /// `Module:Function(Args…)` there, as `rpc:call/4` runs it: the result as a value; a
    /// failure answers `{badrpc, Reason}` (Erlang's own shape, read by `prims::erlang`).
    Apply {
        module: Sym,
        function: Sym,
        args: Vec<Value>,
    },
}

/// What `call_name` answers: the reply term, and whether the peer is a bt node (whose
/// replies are `{ok, Value}` / `{error, Exception}`).
#[derive(Clone, Debug)]
pub struct CallReply {
    pub term: eetf::Term,
    pub bt_peer: bool,
}

/// The interpreter side of a named node (implemented by `crate::dist::peer`): what the
/// distribution layer asks of local processes when a peer addresses them. Every method
/// returns at once; work runs in bt processes.
pub trait Inbound: Send + Sync {
    /// A `gen_server:call` request (`{Selector, Args}`) from the peer process `from` to
    /// `target`; `reply` gets the reply term (`{ok, Value}` or `{error, Exception}`),
    /// exactly once.
    fn call(&self, target: Target, from: eetf::Pid, request: eetf::Term, reply: Done<eetf::Term>);
    /// [`Inbound::call`] from a process of an Erlang peer that the processes `waits` (of
    /// this node first, nearest first) are waiting on through their calls to it: a target
    /// among them closes a cycle (`deadlock_detected`, `crate::dist::erl_wait`).
    fn call_waited(
        &self,
        target: Target,
        from: eetf::Pid,
        request: eetf::Term,
        waits: Vec<eetf::Pid>,
        reply: Done<eetf::Term>,
    ) {
        let _ = waits;
        self.call(target, from, request, reply)
    }
    /// A `gen_server:cast` request (`{cast, Selector, Args}`) to `target`.
    fn cast(&self, target: Target, request: eetf::Term);
    /// The process number of `target` if it is alive.
    fn resolve(&self, target: Target) -> Option<u64>;
    /// Calls `down` with the exit reason term when process `number` exits (at once with
    /// `noproc` if it is not alive); answers an id for [`Inbound::unwatch`].
    fn watch(&self, number: u64, down: Done<eetf::Term>) -> u64;
    /// Cancels a [`Inbound::watch`]; true if it had not fired.
    fn unwatch(&self, id: u64) -> bool;
    /// An exit signal from a linked or exiting peer process (`reason` not `normal`).
    fn exit(&self, number: u64, reason: eetf::Term);
}

/// This node and its links to other nodes: the name, connecting, pinging, who is connected,
/// and where link events and inbound requests go.
pub trait NodeLinks: Send + Sync {
    /// This node's name (`name@host`).
    fn node_name(&self) -> Sym;
    /// This node's creation (incarnation) number, which its pids carry.
    fn creation(&self) -> u32 {
        0
    }
    /// Connects to `node` (ok if already connected or if it is this node).
    fn connect(&self, node: &str, done: Done<Result<(), NodeError>>);
    /// Closes the connection to `node`; true if there was one.
    fn disconnect(&self, node: &str) -> bool;
    fn is_connected(&self, node: &str) -> bool;
    /// Connects if needed and round-trips a ping; true iff `node` answered.
    fn ping(&self, node: &str, done: Done<bool>);
    /// The connected visible nodes, by connection index.
    fn connected(&self) -> Vec<String>;
    /// The connection index of `node`, if this node ever connected to it.
    fn index_of(&self, _node: &str) -> Option<u32> {
        None
    }
    /// The creation (incarnation) of connected peer `node`.
    fn peer_creation(&self, _node: &str) -> Option<u32> {
        None
    }
    /// Installs the receiver of link changes of visible peers (replacing any earlier one).
    fn set_peer_events(&self, _events: PeerEvents) {}
    /// Installs the handler of terms addressed to local processes.
    fn set_inbound(&self, _inbound: Arc<dyn Inbound>) {}
}

/// Messages to and monitors of processes on other nodes (by pid or registered name): sync
/// sends, casts, calls of a named actor, watching an exit.
pub trait RemoteActors: Send + Sync {
    /// A sync send `sel` with `args` to `dest` on `node` (another node), from the process
    /// `ctx` runs in: arguments are encoded first (`not_serialisable` before anything is
    /// sent), the caller is suspended until the reply or `timeout`, errors are raised here
    /// with their kind.
    fn send_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
        timeout: crate::runtime::Timeout,
    ) -> EvalResult;
    /// A cast (`!`) to `dest` on `node`: encoded here, then fire and forget.
    fn cast_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
    ) -> Result<(), Unwind>;
    /// A sync send `sel` with `args` to the actor registered as `name` on `node` (another
    /// node), from the process `ctx` runs in: the values cross as terms, the caller is
    /// suspended until the reply, errors are raised here (`Actor named:on:`).
    fn remote_call(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        name: Sym,
        sel: Sym,
        args: &[Value],
    ) -> EvalResult;
    /// Monitors process `dest` on `node` (a pid, or a registered name on an Erlang peer):
    /// `block` runs (in a fresh process) with the exit reason when it exits, `#noproc` if
    /// it is not running, `#noconnection` when the link is lost. Answers an id for
    /// [`RemoteActors::unwatch_remote`].
    fn watch_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        block: Value,
    ) -> Result<u64, Unwind>;
    /// Cancels a [`RemoteActors::watch_remote`]; true if it had not fired.
    fn unwatch_remote(&self, _id: u64) -> bool {
        false
    }
}

/// The node service and query service of other bt nodes (remote spawn, stop, liveness,
/// per-node queries), and telling peers this node's classes changed.
pub trait NodeServices: Send + Sync {
    /// A request `op` with `args` to the node service (`'$bt_node'`) of bt node `node`
    /// (connecting if needed): its answer, or the error it raised. `Ok(None)` when `node` is
    /// not a bt node (an Erlang peer has no such service).
    fn service(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        op: &str,
        args: &[Value],
    ) -> Result<Option<Value>, Unwind>;
    /// A per-node query (`actor::prims::node_query`) answered by `node`'s query service,
    /// from the process `ctx` runs in (suspended meanwhile, at most `timeout_ms`): the ok
    /// value, or the error to put in the Result (`node_down`, `timeout`, …) as an
    /// `Unwind::Error`.
    fn query(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        sel: &str,
        args: &[Value],
        timeout_ms: u64,
    ) -> EvalResult;
    /// This node loaded code: compare shape manifests with the peers again.
    fn classes_reloaded(&self) {}
}

/// The cluster-wide name registry.
pub trait GlobalNames: Send + Sync {
    /// Registers the live local process `proc` under the cluster-wide name `name` and
    /// tells the connected visible bt nodes: `name_registered` when the cluster's registry
    /// already holds it, `reserved_name` for `bt_` names.
    fn global_register(&self, name: Sym, _proc: &crate::runtime::ProcRef) -> Result<(), NodeError> {
        Err(NodeError {
            kind: "node_down",
            message: format!("cannot register #{name} globally"),
            hint: None,
        })
    }
    /// Who holds the cluster-wide name `name`: (node, process number there).
    fn global_whereis(&self, _name: Sym) -> Option<(Sym, u64)> {
        None
    }
    /// The node that held the cluster-wide name `name` when its link was lost (a lookup
    /// then answers `node_down`, not `name_not_registered`), until it reconnects.
    fn global_lost(&self, _name: Sym) -> Option<Sym> {
        None
    }
}

/// Process groups spanning nodes.
pub trait ProcessGroups: Send + Sync {
    /// Process groups: local process `number` joined (`join`) or left `group`
    /// (`count` times: a process that dies leaves every membership it held). The
    /// distribution layer tells the `pg` scopes of the other nodes.
    fn group_changed(&self, _group: Sym, _number: u64, _count: usize, _join: bool) {}
    /// The members of `group` on other nodes, as actor handles made in `ctx`.
    fn group_remote_members(&self, _ctx: &mut Ctx, _group: Sym) -> Vec<Value> {
        Vec::new()
    }
    /// The groups with a member on another node.
    fn group_remote_which(&self, _ctx: &mut Ctx) -> Vec<Sym> {
        Vec::new()
    }
}

/// Erlang peers, in their own terms: `gen_server` calls and casts by name, and process
/// operations (`whereis`, `exit/2`, `rpc:call`) on a plain Erlang node.
pub trait ErlangInterop: Send + Sync {
    /// `gen_server:call({name, node}, request)` from local process `from`: connects if
    /// needed, monitors the name, sends `{'$gen_call', {From, Ref}, request}` and answers
    /// the reply; `node_down`, `timeout`, `no_such_process` (name not registered there) or
    /// `actor_dead` (it exited before replying) otherwise.
    fn call_name(
        &self,
        _from: u64,
        node: &str,
        _name: &str,
        _request: eetf::Term,
        _timeout: Option<std::time::Duration>,
        done: Done<Result<CallReply, NodeError>>,
    ) {
        done(Err(NodeError {
            kind: "node_down",
            message: format!("cannot reach {node}"),
            hint: None,
        }))
    }
    /// `gen_server:cast({name, node}, request)`: fire and forget (connects if needed).
    fn cast_name(&self, _from: u64, _node: &str, _name: &str, _request: eetf::Term) {}
    /// A process operation on `node` when it is a plain Erlang node (no node service there,
    /// so `service` answered `None`): `erlang:whereis/1` and `erlang:is_process_alive/1`
    /// through its `rex` server, exit signals (`EXIT2`) as `exit/2` sends them
    /// (`crate::dist::erl_proc`).
    fn erl_process(&self, ctx: &mut Ctx, node: Sym, _op: ErlProc) -> EvalResult;
}

/// Values as Erlang terms and terms as external term format bytes, for the `Erlang` class
/// (`term_to_binary`, `binary_to_term`, `phash2`, results that are improper lists). The
/// codec lives above the interpreter (`bt-codec`); the process installs it once at start-up
/// ([`install_term_codec`]), named node or not. Errors are raised as bt exceptions.
pub trait TermCodec: Send + Sync {
    /// The term `v` is on the Erlang wire (docs/erlang-interop.md, "Values and terms": Arrays and other bt-only values
    /// travel tagged, opaque terms as themselves).
    fn to_term(&self, ctx: &Ctx, v: &Value) -> Result<eetf::Term, Unwind>;
    /// The value a term from a peer becomes (improper lists, funs, ports: opaque values).
    fn value_of(&self, ctx: &mut Ctx, t: &eetf::Term) -> Result<Value, Unwind>;
    /// `term_to_binary(T, [{minor_version, minor}])`: the bytes `erl` writes, version byte
    /// first.
    fn encode(&self, t: &eetf::Term, minor: u8) -> Vec<u8>;
    /// `term_to_binary(T, [{compressed, level}])` of what [`encode`](Self::encode) wrote:
    /// the zlib form (tag 80) when it is not longer, else `bytes` unchanged.
    fn compress(&self, bytes: Vec<u8>, level: u8) -> Vec<u8>;
    /// `binary_to_term`: the term at the front of `bytes` and the bytes it took; `Ok(None)`
    /// for bytes that are not one (Erlang's `badarg`). `charge` is called with what
    /// decoding will allocate before it does (its error is passed on).
    fn decode(
        &self,
        bytes: &[u8],
        charge: &mut dyn FnMut(usize) -> Result<(), Unwind>,
    ) -> Result<Option<(eetf::Term, usize)>, Unwind>;
}

static TERM_CODEC: std::sync::OnceLock<&'static dyn TermCodec> = std::sync::OnceLock::new();

/// Installs the process's term codec (the first call wins).
pub fn install_term_codec(codec: &'static dyn TermCodec) {
    let _ = TERM_CODEC.set(codec);
}

/// The installed term codec, if any.
pub fn term_codec() -> Option<&'static dyn TermCodec> {
    TERM_CODEC.get().copied()
}

/// The whole distribution layer as one object (`Program::dist`): every concept trait. Any
/// type implementing them all is one.
pub trait Distribution:
    NodeLinks + RemoteActors + NodeServices + GlobalNames + ProcessGroups + ErlangInterop
{
}

impl<T> Distribution for T where
    T: NodeLinks + RemoteActors + NodeServices + GlobalNames + ProcessGroups + ErlangInterop
{
}

#[cfg(test)]
mod tests {
    use super::valid_node_name;

    #[test]
    fn node_names() {
        for ok in ["a@b", "worker@localhost", "n-1.x_y@host.example-2"] {
            assert!(valid_node_name(ok), "{ok}");
        }
        for bad in ["", "a", "@b", "a@", "a@b@c", "a b@c", "a@b!", "é@b"] {
            assert!(!valid_node_name(bad), "{bad}");
        }
    }
}
