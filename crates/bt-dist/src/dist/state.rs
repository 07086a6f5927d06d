//! The state of a node and of its connections, named by every layer of the distribution:
//! the node's tables ([`Inner`], [`State`], [`Peer`]), what is pending on a connection
//! ([`PendingCall`], [`Watch`], the output queue [`Outbox`]), and the registries kept per
//! node ([`Global`], [`Shapes`], [`Pg`]). Only the data lives here, so this module names no
//! other layer that uses it; the behaviour is in the layers' own modules
//! ([`super::node`], [`super::conn`], [`super::conn_io`], [`super::global`],
//! [`super::shapes`], [`super::pg`], [`super::erl_wait`]).

/// Tables looked up per message: a fast seeded hasher (SipHash showed in profiles).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::collections::HashMap as StdHashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use eetf::{Pid, Reference, Term};
use erl_dist::term::PidOrAtom;
use parking_lot::Mutex;

use super::handshake::Me;
use super::net::{self, AsyncMutex, Semaphore};
use super::tls::Tls;
use crate::interp::actor::{ActorSys, Done};
use crate::interp::distribution::{CallReply, Inbound, NodeError, PeerEvents};
use crate::runtime::ProcRef;
use crate::value::Sym;

/// Longest a `connect` (port-mapper lookup, TCP connect and handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest an incoming connection may take to authenticate.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) struct Inner {
    pub(crate) me: Me,
    pub(crate) sym: Sym,
    pub(crate) net_tick: Duration,
    pub(crate) epmd_port: u16,
    pub(crate) tls: Option<Arc<Tls>>,
    pub(crate) state: Mutex<State>,
    pub(crate) serial: AtomicU64,
    /// One dial at a time per target, so processes connecting at once share one link.
    pub(super) dialing: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    pub(super) events: Mutex<Option<PeerEvents>>,
    /// Link changes of visible peers on their way to [`Self::events`], reported in the
    /// order the peer table changed ([`Inner::link_event`]).
    pub(super) link_events: Mutex<LinkEvents>,
    pub(crate) inbound: Mutex<Option<Arc<dyn Inbound>>>,
    pub(super) unauth: Arc<Semaphore>,
    pub(super) refusals: Mutex<(Option<Instant>, u64)>,
    /// Outgoing calls awaiting a reply, by reference number.
    pub(crate) calls: Mutex<HashMap<u64, PendingCall>>,
    /// This node's view of the global registry ([`super::global`]).
    pub(crate) global: Global,
    /// Peers' shape manifests and the skews announced ([`super::shapes`]).
    pub(crate) shapes: Shapes,
    /// The other nodes' process-group scopes and members ([`super::pg`]).
    pub(crate) pg: Pg,
    /// Bumped whenever a link is lost (the seed keepers wait on it, [`super::seeds`]).
    pub(crate) downs: super::net::watch::Sender<u64>,
    /// Monitors local processes hold on peer processes, by reference number.
    pub(crate) watches: Mutex<HashMap<u64, Watch>>,
    /// Deadlines of the pending calls (one timer task: `super::deadline::reap`).
    pub(crate) deadlines: Arc<super::deadline::Deadlines>,
    /// How many calls to Erlang peers are pending (`super::erl_wait`: zero spares the
    /// scan of the pending calls when a call comes in).
    pub(crate) erl_calls: Arc<std::sync::atomic::AtomicUsize>,
    /// The plain-TCP connections' input, read by the program's workers ([`super::hub`]).
    pub(crate) hub: Arc<Hub>,
}

impl State {
    /// The connection index of `node` (0 if never connected).
    pub(crate) fn index_of(&self, node: &str) -> u32 {
        self.indexes.get(node).copied().unwrap_or(0)
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) peers: HashMap<String, Peer>,
    /// Connection indexes: kept for the node's lifetime.
    pub(super) indexes: HashMap<String, u32>,
    pub(super) last_index: u32,
    /// Targets this node is dialing right now (simultaneous connects).
    pub(super) dialing: HashMap<String, u64>,
    /// The number of the last link change of a visible peer ([`Inner::link_event`]).
    pub(super) link_seq: u64,
    /// The connection number (`Inner::serial`) of each peer's last attached link, also after
    /// it ended: a dial that lost a simultaneous connect waits for the winner's link, which
    /// may come and go before it looks.
    pub(super) last_attach: HashMap<String, u64>,
}

impl State {
    /// Numbers a link change of a visible peer made under this lock: the changes are
    /// reported in this order ([`Inner::link_event`]).
    pub(super) fn next_link_seq(&mut self) -> u64 {
        self.link_seq += 1;
        self.link_seq
    }
}

/// Link changes numbered by [`State::next_link_seq`] and not reported yet. Each is made under
/// the table's lock and reported after it is released, by threads that may arrive in
/// another order (one attaching a connection, another dropping it): a change is reported
/// only after the ones numbered before it.
#[derive(Default)]
pub(crate) struct LinkEvents {
    /// The number of the last change reported.
    pub(super) reported: u64,
    /// Changes whose threads arrived before an earlier change's: peer and down reason.
    pub(super) early: std::collections::BTreeMap<u64, (String, Option<String>)>,
    /// Whether a thread is reporting now (it also reports the changes that arrive meanwhile).
    pub(super) busy: bool,
}

pub(crate) struct Peer {
    pub(crate) conn: u64,
    pub(super) index: u32,
    pub(crate) visible: bool,
    pub(crate) bt: bool,
    /// The peer's incarnation (its pids carry it).
    pub(crate) creation: u32,
    pub(crate) out: Outbox,
    /// What the peer watches here: its monitors (by reference) and links, as watch ids.
    pub(crate) watches: HashMap<Vec<u32>, u64>,
    pub(crate) links: HashMap<(Vec<u8>, u64), u64>,
    /// The connection's reader and writer tasks: a peer dropped from the table (detached,
    /// disconnected, over its queue bound, node shut down) closes its connection.
    pub(super) tasks: Vec<net::AbortHandle>,
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.out.close();
        for t in &self.tasks {
            t.abort();
        }
    }
}

pub(crate) fn node_err(kind: &'static str, message: String, hint: Option<&str>) -> NodeError {
    NodeError {
        kind,
        message,
        hint: hint.map(str::to_string),
    }
}

/// Calls a [`Done`] exactly once: with the value given, or with `default` if dropped
/// uncalled (a task dropped by a runtime shutdown), so a waiting process always resumes.
pub(crate) struct Once<T> {
    f: Option<Done<T>>,
    default: Option<T>,
}

impl<T> Once<T> {
    pub(crate) fn new(f: Done<T>, default: T) -> Once<T> {
        Once {
            f: Some(f),
            default: Some(default),
        }
    }

    pub(crate) fn call(mut self, v: T) {
        if let Some(f) = self.f.take() {
            f(v);
        }
    }
}

impl<T> Drop for Once<T> {
    fn drop(&mut self) {
        if let (Some(f), Some(d)) = (self.f.take(), self.default.take()) {
            f(d);
        }
    }
}

pub(crate) fn stopped(node: &str) -> NodeError {
    node_err(
        "node_down",
        format!("cannot connect to {node}: distribution has stopped"),
        None,
    )
}

/// Where an outgoing call or cast goes: a registered name or a pid on the peer.
#[derive(Clone, Debug)]
pub enum CallDest {
    Name(String),
    Pid(Pid),
}

/// An outgoing call waiting for its reply.
pub struct PendingCall {
    pub peer: String,
    pub(super) dest: CallDest,
    pub(super) bt: bool,
    /// A monitor on the callee backs the call (Erlang peers; a bt peer answers
    /// `{error, noproc}` or `actor_dead` itself, so no monitor frames cross).
    pub(super) monitored: bool,
    pub(super) from: Pid,
    pub(super) reference: Reference,
    pub(super) done: Option<Once<Result<CallReply, NodeError>>>,
    /// A call of a bt process to an Erlang peer: the processes waiting on the caller
    /// (`super::chain::outgoing`), so that a call back from the callee can be seen to close
    /// a cycle (`super::erl_wait`). Counted in `Inner::erl_calls` while pending.
    pub(super) waiting: Option<(Vec<Pid>, Counted)>,
    /// A call to a registered name on an Erlang peer: the peer processes already asked
    /// about while it is pending, with the name each held (`super::erl_wait`).
    pub(super) probed: Vec<(Pid, Option<String>)>,
    /// The call's deadline (removed when it ends) and its length.
    pub(super) deadline: Option<(
        (net::Instant, u64),
        Duration,
        Arc<super::deadline::Deadlines>,
    )>,
}

/// A monitor a local process holds on a peer process: `down` gets the `'DOWN'`
/// reason, or `noconnection` when the link is lost.
pub struct Watch {
    pub peer: String,
    pub(super) from: Pid,
    pub(super) to: PidOrAtom,
    pub(super) reference: Reference,
    pub down: Box<dyn FnOnce(Term) + Send>,
}

/// A pending call to an Erlang peer, counted in `Inner::erl_calls` until it is dropped.
pub(crate) struct Counted(pub(super) Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection's output queue: encoded frames, bounded in bytes. Cheap to clone (shared).
///
/// On plain TCP a frame is written to the socket **from the sending thread** when nothing
/// is queued before it (a non-blocking write: a bt worker answering a peer's call, or a
/// process making one, wakes no other thread); what the socket does not take at once is
/// queued for the connection's writer task, and later frames queue behind it so the order
/// stays. Under TLS every frame goes through the writer task.
#[derive(Clone)]
pub struct Outbox(pub(super) Arc<OutShared>);

pub(super) struct OutShared {
    pub(super) q: Mutex<OutQ>,
    pub(super) queued: AtomicUsize,
    pub(super) limit: usize,
    pub(super) closed: AtomicBool,
    /// Tells the writer task that frames are queued (or the connection closes).
    pub(super) wake: net::Notify,
    /// Plain TCP: the socket, written from any thread (registered with the network
    /// runtime for writability only: its input is read by [`super::hub`]).
    pub(super) direct: Option<net::AsyncFd<std::net::TcpStream>>,
}

#[derive(Default)]
pub(super) struct OutQ {
    pub(super) frames: std::collections::VecDeque<Vec<u8>>,
    /// Bytes of the first frame already written.
    pub(super) at: usize,
}

#[derive(Clone)]
pub(super) struct Entry {
    pub(super) node: String,
    pub(super) number: u64,
    /// Unix ms when the registrant started (the conflict rule).
    pub(super) started: u64,
    /// The process, when it is on this node.
    pub(super) proc: Option<ProcRef>,
}

/// A node's view of the global registry.
#[derive(Default)]
pub(crate) struct Global {
    pub(super) table: Mutex<StdHashMap<Sym, Entry>>,
    /// Names whose holder's node lost its link: name → that node (until it comes back or
    /// the name is registered anew).
    pub(super) lost: Mutex<StdHashMap<Sym, String>>,
    pub(super) sys: Mutex<Weak<ActorSys>>,
}

/// What a node knows of its peers' shape versions.
#[derive(Default)]
pub(crate) struct Shapes {
    /// The last manifest each peer sent.
    pub(super) peers: Mutex<StdHashMap<String, StdHashMap<Sym, i64>>>,
    /// Skews already announced: (peer, class, local, remote).
    pub(super) announced: Mutex<std::collections::HashSet<(String, Sym, i64, i64)>>,
}

/// The other nodes' scopes, by node name.
#[derive(Default)]
pub struct Pg {
    pub(super) remote: Mutex<StdHashMap<String, Scope>>,
}

pub(super) struct Scope {
    pub(super) pid: Pid,
    pub(super) groups: StdHashMap<String, Vec<Pid>>,
}

/// A node's plain-TCP connection input, read by the program's workers (behaviour:
/// [`super::hub`]).
pub(crate) struct Hub {
    pub(crate) ep: OwnedFd,
    pub(crate) ev: OwnedFd,
    pub(crate) conns: Mutex<HashMap<u64, Arc<ReadSide>>>,
    /// A runtime's workers wait in it (else the hub's own thread does).
    pub(crate) driven: AtomicBool,
    /// The hub's own thread runs.
    pub(crate) thread: Mutex<bool>,
    /// Held by the one thread that waits in the hub (a worker or the hub's own thread):
    /// only it takes the wake-up event (a poll that does not wait leaves it alone).
    pub(crate) waiter: Mutex<()>,
    /// A worker was told to stop waiting (`IoWait::wake`) and has not yet: kept apart
    /// from the event, which the hub's own thread may have taken.
    pub(crate) woken: AtomicBool,
    /// The last wait of a worker read input (the next one polls first).
    pub(crate) fresh: AtomicBool,
}

/// The reading side of one plain-TCP connection.
pub(crate) struct ReadSide {
    pub(crate) token: u64,
    pub(crate) sock: std::net::TcpStream,
    pub(crate) inner: Weak<Inner>,
    pub(crate) hub: Weak<Hub>,
    pub(crate) name: String,
    pub(crate) conn: u64,
    pub(crate) out: Outbox,
    /// The network runtime: handlers may start tasks there.
    pub(crate) rt: net::Handle,
    pub(crate) st: Mutex<ReadState>,
    pub(crate) ended: AtomicBool,
    pub(crate) born: Instant,
    /// When input last came (ms after `born`).
    pub(crate) last: AtomicU64,
}

pub(crate) struct ReadState {
    pub(crate) buf: Vec<u8>,
    pub(crate) chunk: Box<[u8]>,
}
