//! A named node (LANGUAGE.md 8.1, 8.2, 8.8, 8.11, 8.12): the listener, the port-mapper
//! registration, the connection table with connection indexes, dialing and accepting, and
//! the [`Distribution`] operations the Node primitives call. What travels on a connection
//! once it is up is in [`super::conn`].
//!
//! Network work runs on a small tokio runtime owned by the node (one worker thread). Link
//! operations run there as tasks and answer through a callback (`Done`); the primitives
//! suspend only the calling bt process meanwhile. Connects are bounded by
//! [`CONNECT_TIMEOUT`], pings and calls by their timeouts.
//!
//! Hardening (issue 13): at most [`MAX_UNAUTHENTICATED`] connections may be in the
//! handshake at once, each for at most [`HANDSHAKE_TIMEOUT`]; refused attempts are logged to
//! standard error at most once a second (with a count of the ones not logged); each
//! connection's output queue is bounded ([`super::conn::queue_limit`]) — a peer that stops
//! reading is disconnected rather than buffered without limit.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use eetf::Term;
use erl_dist::handshake::HandshakeStatus;
use parking_lot::Mutex;

use super::conn::{self, CallDest, Outbox, PendingCall, Watch};
use super::epmd::{self, Registration};
use super::handshake::{self, Agreed, HsError, Me, Stream};
use super::net::{
    self, AsyncMutex, Handle, Runtime, RuntimeBuilder, Semaphore, TcpListener, TcpStream,
};
use super::tls::Tls;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::actor_node::Dest;
use crate::interp::prims::actor_node::{
    valid_node_name, CallReply, Distribution, Done, Inbound, NodeError, PeerEvents,
};
use crate::value::Sym;
use crate::value::Value;

/// Longest a `connect` (port-mapper lookup, TCP connect and handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a `ping` waits for its answer.
pub const PING_TIMEOUT: Duration = Duration::from_millis(5000);
/// Connections allowed in the handshake at once.
pub const MAX_UNAUTHENTICATED: usize = 32;
/// Longest an incoming connection may take to authenticate.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

const COOKIE_HINT: &str =
    "both nodes need the same cookie (BT_COOKIE, --cookie-file, or ~/.erlang.cookie)";
const TLS_HINT: &str = "configure TLS distribution or use a tunnel";

/// How to start a node.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `name@host` (start validates it).
    pub name: String,
    pub hidden: bool,
    /// `--net-tick` seconds (0 = the default, 60).
    pub net_tick: u64,
    /// `--cookie-file` (BT_COOKIE still wins).
    pub cookie_file: Option<std::path::PathBuf>,
    /// `--dist-tls CONFIG`.
    pub tls: Option<std::path::PathBuf>,
}

/// A running named node. Dropping it (or [`DistNode::shutdown`]) unregisters the name and
/// closes every connection.
pub struct DistNode {
    pub(crate) inner: Arc<Inner>,
    handle: Handle,
    rt: Mutex<Option<Runtime>>,
    registration: Mutex<Option<Registration>>,
    port: u16,
}

pub(crate) struct Inner {
    pub(crate) me: Me,
    pub(crate) sym: Sym,
    pub(crate) net_tick: Duration,
    pub(crate) epmd_port: u16,
    pub(crate) tls: Option<Arc<Tls>>,
    pub(crate) state: Mutex<State>,
    pub(crate) serial: AtomicU64,
    /// One dial at a time per target, so processes connecting at once share one link.
    dialing: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    events: Mutex<Option<PeerEvents>>,
    pub(crate) inbound: Mutex<Option<Arc<dyn Inbound>>>,
    unauth: Arc<Semaphore>,
    refusals: Mutex<(Option<Instant>, u64)>,
    /// Outgoing calls awaiting a reply, by reference number.
    pub(crate) calls: Mutex<HashMap<u64, PendingCall>>,
    /// This node's view of the global registry (8.5, [`super::global`]).
    pub(crate) global: super::global::Global,
    /// Peers' shape manifests and the skews announced (8.7, 8.9, [`super::shapes`]).
    pub(crate) shapes: super::shapes::Shapes,
    /// Monitors local processes hold on peer processes, by reference number.
    pub(crate) watches: Mutex<HashMap<u64, Watch>>,
    /// Deadlines of the pending calls (one timer task: `super::deadline::reap`).
    pub(crate) deadlines: Arc<super::deadline::Deadlines>,
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
    /// Connection indexes (8.1): kept for the node's lifetime.
    indexes: HashMap<String, u32>,
    last_index: u32,
    /// Targets this node is dialing right now (simultaneous connects).
    dialing: HashMap<String, u64>,
}

pub(crate) struct Peer {
    pub(crate) conn: u64,
    index: u32,
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
    tasks: Vec<net::AbortHandle>,
}

impl Drop for Peer {
    fn drop(&mut self) {
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

/// Starts the node: reads the cookie (and TLS configuration), listens (127.0.0.1 unless TLS,
/// a free port) and registers the name with the port mapper (starting `bt epmd` if none).
pub fn start(opts: Options) -> Result<Arc<DistNode>, String> {
    if !valid_node_name(&opts.name) {
        return Err(format!(
            "invalid node name '{}' (expected name@host)",
            opts.name
        ));
    }
    let cookie = super::cookie::load(opts.cookie_file.as_deref())?;
    let tls = match &opts.tls {
        Some(p) => Some(Arc::new(Tls::load(p)?)),
        None => None,
    };
    let rt = RuntimeBuilder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bt-dist")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the distribution runtime: {e}"))?;
    let addr = if tls.is_some() {
        "0.0.0.0"
    } else {
        "127.0.0.1"
    };
    let listener = std::net::TcpListener::bind((addr, 0))
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?
        .port();
    let listener = {
        let _g = rt.enter();
        TcpListener::from_std(listener).map_err(|e| format!("cannot listen: {e}"))?
    };
    let short = opts.name.split('@').next().unwrap_or("").to_string();
    let epmd_port = epmd::port();
    let (registration, creation) =
        rt.block_on(epmd::register(epmd_port, &short, port, opts.hidden))?;
    let net_tick = Duration::from_secs(if opts.net_tick == 0 {
        60
    } else {
        opts.net_tick
    });
    let inner = Arc::new(Inner {
        sym: Sym::new(&opts.name),
        me: Me {
            name: opts.name,
            creation,
            cookie,
            hidden: opts.hidden,
            tls: tls.is_some(),
        },
        net_tick,
        epmd_port,
        tls,
        state: Mutex::new(State::default()),
        serial: AtomicU64::new(1),
        dialing: Mutex::new(HashMap::new()),
        events: Mutex::new(None),
        inbound: Mutex::new(None),
        unauth: Arc::new(Semaphore::new(MAX_UNAUTHENTICATED)),
        refusals: Mutex::new((None, 0)),
        calls: Mutex::new(HashMap::new()),
        global: Default::default(),
        shapes: Default::default(),
        watches: Mutex::new(HashMap::new()),
        deadlines: Arc::new(super::deadline::Deadlines::default()),
    });
    rt.spawn(super::deadline::reap(inner.clone()));
    rt.spawn(accept_loop(inner.clone(), listener));
    Ok(Arc::new(DistNode {
        inner,
        handle: rt.handle().clone(),
        rt: Mutex::new(Some(rt)),
        registration: Mutex::new(Some(registration)),
        port,
    }))
}

impl DistNode {
    /// The port this node listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Unregisters the name and stops the network side (connections close). Link operations
    /// afterwards fail as `node_down`.
    pub fn shutdown(&self) {
        drop(self.registration.lock().take());
        self.inner.state.lock().peers.clear();
        if let Some(rt) = self.rt.lock().take() {
            rt.shutdown_background();
        }
        let calls: Vec<PendingCall> = self.inner.calls.lock().drain().map(|(_, c)| c).collect();
        // Watches end with their callbacks unrun: the program is stopping.
        self.inner.watches.lock().clear();
        for c in calls {
            c.fail(node_err(
                "node_down",
                "distribution has stopped".into(),
                None,
            ));
        }
    }

    /// Runs `f` on the node's runtime; after `shutdown` it is dropped unrun (a [`Once`]
    /// inside then answers its default).
    pub(crate) fn spawn<F: Future<Output = ()> + Send + 'static>(&self, f: F) {
        if self.rt.lock().is_some() {
            self.handle.spawn(f);
        }
    }
}

impl Drop for DistNode {
    fn drop(&mut self) {
        self.shutdown();
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

/// Whether `host` is a loopback host: `Some(true/false)`, or None if it does not resolve.
pub(crate) async fn is_loopback_host(host: &str) -> Option<bool> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(true);
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Some(ip.is_loopback());
    }
    let addrs: Vec<_> = net::lookup_host((host, 0)).await.ok()?.collect();
    if addrs.is_empty() {
        return None;
    }
    Some(addrs.iter().all(|a| a.ip().is_loopback()))
}

fn handshake_error(to: &str, e: HsError) -> NodeError {
    match e {
        HsError::Cookie => node_err(
            "node_down",
            format!("{to} refused the connection: authentication failed"),
            Some(COOKIE_HINT),
        ),
        HsError::Refused(m) => node_err(
            "node_down",
            format!("{to} refused the connection: {m}"),
            None,
        ),
        HsError::Closed => node_err(
            "node_down",
            format!("{to} closed the connection during the handshake (wrong cookie?)"),
            Some(COOKIE_HINT),
        ),
        HsError::Simultaneous => node_err(
            "node_down",
            format!("cannot connect to {to}: simultaneous connect"),
            None,
        ),
        HsError::Other(m) => node_err(
            "node_down",
            format!("cannot connect to {to}: {m}"),
            Some(COOKIE_HINT),
        ),
    }
}

impl Inner {
    /// The connection index of `name` (8.1), if this node ever connected to it.
    pub(crate) fn index_of(&self, name: &str) -> Option<u32> {
        self.state.lock().indexes.get(name).copied()
    }

    pub(crate) fn inbound(&self) -> Option<Arc<dyn Inbound>> {
        self.inbound.lock().clone()
    }

    /// Logs a refused connection attempt, at most once a second.
    fn refused(&self, what: &str) {
        let mut g = self.refusals.lock();
        let now = Instant::now();
        let due =
            g.0.is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1));
        if due {
            let more = std::mem::take(&mut g.1);
            g.0 = Some(now);
            drop(g);
            let extra = if more > 0 {
                format!(" ({more} more refused attempts not shown)")
            } else {
                String::new()
            };
            eprintln!("bt: {} refused a connection: {what}{extra}", self.me.name);
        } else {
            g.1 += 1;
        }
    }

    /// The connection to `to`, made if needed (bounded by [`CONNECT_TIMEOUT`]).
    pub(crate) async fn ensure(self: &Arc<Self>, to: &str) -> Result<(), NodeError> {
        if to == self.me.name || self.state.lock().peers.contains_key(to) {
            return Ok(());
        }
        match net::timeout(CONNECT_TIMEOUT, self.clone().dial(to.to_string())).await {
            Ok(r) => r,
            Err(_) => Err(node_err(
                "node_down",
                format!(
                    "cannot connect to {to}: no answer within {} ms",
                    CONNECT_TIMEOUT.as_millis()
                ),
                None,
            )),
        }
    }

    /// Connects to `to`: host policy (8.11), port-mapper lookup, TCP (+TLS), handshake.
    async fn dial(self: Arc<Self>, to: String) -> Result<(), NodeError> {
        if !valid_node_name(&to) {
            return Err(node_err(
                "node_down",
                format!("cannot connect to {to}: not a node name"),
                Some("expected name@host"),
            ));
        }
        let (short, host) = to.split_once('@').unwrap_or((&to, ""));
        match is_loopback_host(host).await {
            Some(true) => {}
            Some(false) if self.tls.is_some() => {}
            Some(false) => {
                return Err(node_err(
                    "insecure_distribution",
                    format!("cannot connect to {to}: {host} is not a loopback address and this node does not run TLS distribution"),
                    Some(TLS_HINT),
                ))
            }
            None => {
                return Err(node_err(
                    "node_down",
                    format!("cannot connect to {to}: unknown host {host}"),
                    None,
                ))
            }
        }
        let gate = self.dialing.lock().entry(to.clone()).or_default().clone();
        let _turn = gate.lock().await;
        if self.state.lock().peers.contains_key(&to) {
            return Ok(()); // another process of this node connected meanwhile
        }
        let found = epmd::lookup(host, self.epmd_port, short)
            .await
            .map_err(|m| node_err("node_down", format!("cannot connect to {to}: {m}"), None))?;
        let Some((port, bt)) = found else {
            return Err(node_err(
                "node_down",
                format!("cannot connect to {to}: no such node is registered on {host}"),
                None,
            ));
        };
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| node_err("node_down", format!("cannot connect to {to}: {e}"), None))?;
        let _ = tcp.set_nodelay(true);
        let stream: Stream = match &self.tls {
            Some(t) => t
                .connect(host, tcp)
                .await
                .map_err(|m| node_err("node_down", format!("cannot connect to {to}: {m}"), None))?,
            None => Box::new(tcp),
        };
        let ticket = self.serial.fetch_add(1, Ordering::Relaxed);
        self.state.lock().dialing.insert(to.clone(), ticket);
        let r = handshake::initiate(stream, &self.me, bt).await;
        {
            let mut st = self.state.lock();
            if st.dialing.get(&to) == Some(&ticket) {
                st.dialing.remove(&to);
            }
        }
        match r {
            Ok((s, agreed)) => {
                self.attach(s, agreed);
                Ok(())
            }
            // The peer's own connection to us wins: wait for it.
            Err(HsError::Simultaneous) => {
                for _ in 0..100 {
                    if self.state.lock().peers.contains_key(&to) {
                        return Ok(());
                    }
                    net::sleep(Duration::from_millis(20)).await;
                }
                Err(node_err(
                    "node_down",
                    format!("cannot connect to {to}: simultaneous connect did not settle"),
                    None,
                ))
            }
            Err(e) => Err(handshake_error(&to, e)),
        }
    }

    /// Installs a handshaken connection as the link to its peer and starts its tasks.
    fn attach(self: &Arc<Self>, s: Stream, agreed: Agreed) {
        let conn = self.serial.fetch_add(1, Ordering::Relaxed);
        let (out, rx) = Outbox::new();
        let old = {
            let mut st = self.state.lock();
            let index = match st.indexes.get(&agreed.name) {
                Some(&i) => i,
                None => {
                    st.last_index += 1;
                    let i = st.last_index;
                    st.indexes.insert(agreed.name.clone(), i);
                    i
                }
            };
            st.peers.insert(
                agreed.name.clone(),
                Peer {
                    conn,
                    index,
                    visible: agreed.visible,
                    bt: agreed.bt,
                    creation: agreed.creation,
                    out,
                    watches: HashMap::new(),
                    links: HashMap::new(),
                    tasks: Vec::new(),
                },
            )
        };
        if let Some(old) = old {
            self.forget(&agreed.name, old);
        }
        if agreed.visible {
            self.peer_event(&agreed.name, None);
        }
        let name = agreed.name.clone();
        let tasks = conn::start(self.clone(), s, agreed.name, conn, rx);
        match self.state.lock().peers.get_mut(&name) {
            Some(p) if p.conn == conn => p.tasks.extend(tasks),
            // Replaced or dropped already: close this connection.
            _ => tasks.iter().for_each(|t| t.abort()),
        }
    }

    /// Drops what a finished connection left: the peer's watches, and calls waiting on it.
    fn forget(&self, name: &str, p: Peer) {
        if let Some(ib) = self.inbound() {
            for id in p.watches.values().chain(p.links.values()) {
                ib.unwatch(*id);
            }
        }
        let failed: Vec<PendingCall> = take_where(&mut self.calls.lock(), |c| c.peer == name);
        for c in failed {
            c.fail(node_err(
                "node_down",
                format!("the connection to {name} was lost"),
                None,
            ));
        }
        let lost: Vec<Watch> = take_where(&mut self.watches.lock(), |w| w.peer == name);
        for w in lost {
            (w.down)(conn::atom("noconnection"));
        }
    }

    /// The connection `conn` to `name` ended: drop the link if it is still the live one.
    pub(crate) fn detach(&self, name: &str, conn: u64, reason: &str) {
        let gone = {
            let mut st = self.state.lock();
            if st.peers.get(name).is_some_and(|p| p.conn == conn) {
                st.peers.remove(name)
            } else {
                None
            }
        };
        if let Some(p) = gone {
            let visible = p.visible;
            self.forget(name, p);
            if visible {
                self.peer_event(name, Some(reason));
            }
        }
    }

    /// Reports a visible peer's link change (never called with the state lock held).
    fn peer_event(&self, name: &str, down: Option<&str>) {
        super::global::peer_event(self, name, down);
        super::shapes::peer_event(self, name, down);
        let f = self.events.lock().clone();
        if let Some(f) = f {
            f(name, down);
        }
    }

    /// Queues a frame to `name` (any live connection). False if there is none, or its
    /// queue is full (the connection is then dropped).
    pub(crate) fn send_to(&self, name: &str, frame: Vec<u8>) -> bool {
        let (ok, conn) = {
            let st = self.state.lock();
            match st.peers.get(name) {
                Some(p) => (p.out.push(frame), p.conn),
                None => return false,
            }
        };
        if !ok {
            eprintln!(
                "bt: {} stopped reading; disconnecting it (output queue full)",
                name
            );
            self.detach(name, conn, "outputQueueFull");
        }
        ok
    }
}

async fn accept_loop(inner: Arc<Inner>, l: TcpListener) {
    loop {
        match l.accept().await {
            Ok((s, addr)) => {
                let Ok(permit) = inner.unauth.clone().try_acquire_owned() else {
                    inner.refused(&format!(
                        "too many unauthenticated connections (from {addr})"
                    ));
                    continue;
                };
                let inner = inner.clone();
                net::spawn(async move {
                    let r = net::timeout(HANDSHAKE_TIMEOUT, accepted(inner.clone(), s)).await;
                    drop(permit);
                    match r {
                        Ok(Ok(())) => {}
                        Ok(Err(m)) => inner.refused(&format!("{m} (from {addr})")),
                        Err(_) => inner.refused(&format!("handshake timed out (from {addr})")),
                    }
                });
            }
            // Out of descriptors and the like: back off a little and keep serving.
            Err(_) => net::sleep(Duration::from_millis(20)).await,
        }
    }
}

async fn accepted(inner: Arc<Inner>, tcp: TcpStream) -> Result<(), String> {
    let _ = tcp.set_nodelay(true);
    let mut s: Stream = match &inner.tls {
        Some(t) => t.accept(tcp).await?,
        None => Box::new(tcp),
    };
    let peeked = handshake::peek_name(&mut s, inner.me.tls)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let status = {
        let st = inner.state.lock();
        if st.dialing.contains_key(&peeked.name) {
            // Both sides dial: the connection opened by the smaller name stays.
            if inner.me.name < peeked.name {
                HandshakeStatus::Nok
            } else {
                HandshakeStatus::OkSimultaneous
            }
        } else {
            HandshakeStatus::Ok
        }
    };
    let who = peeked.name.clone();
    match handshake::accept(s, &inner.me, peeked, status).await {
        Ok((s, agreed)) => {
            inner.attach(s, agreed);
            Ok(())
        }
        Err(HsError::Simultaneous) => Ok(()),
        Err(HsError::Cookie) => Err(format!("{who}: the cookie does not match")),
        Err(e) => Err(format!("{who}: {e:?}")),
    }
}

impl Distribution for DistNode {
    fn node_name(&self) -> Sym {
        self.inner.sym
    }

    fn creation(&self) -> u32 {
        self.inner.me.creation
    }

    fn connect(&self, node: &str, done: Done<Result<(), NodeError>>) {
        let done = Once::new(done, Err(stopped(node)));
        let inner = self.inner.clone();
        let to = node.to_string();
        self.spawn(async move { done.call(inner.ensure(&to).await) });
    }

    fn disconnect(&self, node: &str) -> bool {
        let peer = self.inner.state.lock().peers.remove(node);
        match peer {
            Some(p) => {
                let visible = p.visible;
                p.out.close();
                self.inner.forget(node, p);
                if visible {
                    self.inner.peer_event(node, Some("disconnect"));
                }
                true
            }
            None => false,
        }
    }

    fn is_connected(&self, node: &str) -> bool {
        self.inner.state.lock().peers.contains_key(node)
    }

    fn ping(&self, node: &str, done: Done<bool>) {
        if node == self.inner.me.name {
            return done(true);
        }
        let request = Term::from(eetf::Tuple::from(vec![
            conn::atom("is_auth"),
            conn::atom(&self.inner.me.name),
        ]));
        self.call_name(
            0,
            node,
            "net_kernel",
            request,
            Some(PING_TIMEOUT),
            Box::new(move |r| {
                done(matches!(r, Ok(CallReply { term: Term::Atom(a), .. }) if a.name == "yes"))
            }),
        );
    }

    fn set_peer_events(&self, events: PeerEvents) {
        *self.inner.events.lock() = Some(events);
    }

    fn set_inbound(&self, inbound: Arc<dyn Inbound>) {
        *self.inner.inbound.lock() = Some(inbound);
    }

    fn connected(&self) -> Vec<String> {
        let st = self.inner.state.lock();
        let mut v: Vec<(u32, &String)> = st
            .peers
            .iter()
            .filter(|(_, p)| p.visible)
            .map(|(n, p)| (p.index, n))
            .collect();
        v.sort();
        v.into_iter().map(|(_, n)| n.clone()).collect()
    }

    fn call_name(
        &self,
        from: u64,
        node: &str,
        name: &str,
        request: Term,
        timeout: Option<Duration>,
        done: Done<Result<CallReply, NodeError>>,
    ) {
        let done = Once::new(done, Err(stopped(node)));
        let inner = self.inner.clone();
        let (to, name) = (node.to_string(), name.to_string());
        self.spawn(async move {
            if let Err(e) = inner.ensure(&to).await {
                return done.call(Err(e));
            }
            conn::call(
                inner,
                from,
                to,
                CallDest::Name(name),
                request,
                timeout,
                done,
            )
            .await;
        });
    }

    fn remote_call(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        name: Sym,
        sel: Sym,
        args: &[Value],
    ) -> EvalResult {
        let t = crate::runtime::Timeout::DEFAULT;
        super::remote::send(self, ctx, node, Dest::Name(name), sel, args, t)
    }

    fn index_of(&self, node: &str) -> Option<u32> {
        self.inner.state.lock().indexes.get(node).copied()
    }

    fn peer_creation(&self, node: &str) -> Option<u32> {
        self.inner.state.lock().peers.get(node).map(|p| p.creation)
    }

    fn send_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
        timeout: crate::runtime::Timeout,
    ) -> EvalResult {
        super::remote::send(self, ctx, node, dest, sel, args, timeout)
    }

    fn cast_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        dest: Dest,
        sel: Sym,
        args: &[Value],
    ) -> Result<(), Unwind> {
        super::remote::cast(self, ctx, node, dest, sel, args)
    }

    fn service(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        op: &str,
        args: &[Value],
    ) -> Result<Option<Value>, Unwind> {
        super::remote::service(self, ctx, node, op, args)
    }

    fn watch_remote(
        &self,
        ctx: &mut Ctx,
        node: Sym,
        number: u64,
        creation: u32,
        block: Value,
    ) -> Result<u64, Unwind> {
        super::remote::watch(self, ctx, node, number, creation, block)
    }

    fn unwatch_remote(&self, id: u64) -> bool {
        conn::unwatch(&self.inner, id)
    }

    fn global_register(&self, name: Sym, proc: &crate::runtime::ProcRef) -> Result<(), NodeError> {
        super::global::register(&self.inner, name, proc)
    }

    fn classes_reloaded(&self) {
        super::shapes::reloaded(&self.inner);
    }

    fn global_whereis(&self, name: Sym) -> Option<(Sym, u64)> {
        super::global::whereis(&self.inner, name)
    }

    fn query(
        &self,
        ctx: &mut crate::interp::eval::Ctx,
        node: Sym,
        sel: &str,
        args: &[crate::value::Value],
        timeout_ms: u64,
    ) -> crate::interp::eval::EvalResult {
        super::query::query(self, ctx, node, sel, args, timeout_ms)
    }

    fn cast_name(&self, from: u64, node: &str, name: &str, request: Term) {
        let inner = self.inner.clone();
        let (to, name) = (node.to_string(), name.to_string());
        self.spawn(async move {
            if inner.ensure(&to).await.is_ok() {
                conn::cast(&inner, from, &to, &CallDest::Name(name), request);
            }
        });
    }
}

/// Removes and answers the entries of `map` that `pred` selects (the calls or watches of one
/// peer when its link drops).
fn take_where<T>(map: &mut HashMap<u64, T>, pred: impl Fn(&T) -> bool) -> Vec<T> {
    map.extract_if(|_, v| pred(v)).map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_hosts() {
        let rt = crate::dist::net::current_thread().unwrap();
        let is_loopback_host = |h: &str| rt.block_on(super::is_loopback_host(h));
        assert_eq!(is_loopback_host("localhost"), Some(true));
        assert_eq!(is_loopback_host("127.0.0.1"), Some(true));
        assert_eq!(is_loopback_host("::1"), Some(true));
        assert_eq!(is_loopback_host("10.1.2.3"), Some(false));
        assert_eq!(is_loopback_host("192.0.2.7"), Some(false));
    }
}
