//! A named node: the listener, the connection table and the link operations behind the
//! Node primitives (LANGUAGE.md 8.1, 8.2, 8.8, 8.11).
//!
//! Network work runs on a small tokio runtime owned by the node (one worker thread). The
//! link operations run there as tasks and report through a callback (`Done`); the
//! Node primitives suspend the calling bt process meanwhile (`Cx::wait_external`), so
//! worker threads never block on the network. Connects are bounded by [`CONNECT_TIMEOUT`],
//! pings by [`PING_TIMEOUT`]. Each connection has a reader task
//! (answers pings, notices the close) and a writer task fed by a channel; the table maps
//! a peer's name to its live connection, and connection indexes are kept for the node's
//! lifetime even across reconnects.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::frame::{read_frame, write_frame, Frame, FrameError};
use super::handshake::{self, Agreed, HsError, Me};
use super::net::{
    self, mpsc, oneshot, AsyncMutex, AsyncWriteExt, Handle, OwnedReadHalf, OwnedWriteHalf, Runtime,
    RuntimeBuilder, TcpListener, TcpStream,
};
use super::registry::{self, Registration};
use crate::interp::prims::actor_node::{
    valid_node_name, Distribution, Done, NodeError, PeerEvents,
};
use crate::value::Sym;

/// Longest a `connect` (TCP connect plus handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a `ping` waits for its pong (the default send timeout, 8.3).
pub const PING_TIMEOUT: Duration = Duration::from_millis(5000);

const COOKIE_HINT: &str =
    "both nodes need the same cookie (BT_COOKIE, or the file ~/.config/bt/cookie)";
const TLS_HINT: &str = "configure TLS distribution or use a tunnel";

/// How to start a node.
#[derive(Clone, Debug)]
pub struct Options {
    /// `name@host`, already validated or not (start validates).
    pub name: String,
    pub hidden: bool,
}

/// A running named node. Dropping the last handle (or [`DistNode::shutdown`]) removes the
/// registry entry and closes every connection.
pub struct DistNode {
    inner: Arc<Inner>,
    handle: Handle,
    rt: Mutex<Option<Runtime>>,
    registration: Mutex<Option<Registration>>,
    port: u16,
}

struct Inner {
    name: String,
    sym: Sym,
    hidden: bool,
    cookie: Vec<u8>,
    state: Mutex<State>,
    serial: AtomicU64,
    /// One dial at a time per target, so two processes connecting at once share one link.
    dialing: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    /// Told of visible peers coming up and going down (NodeUp/NodeDown, 8.9).
    events: Mutex<Option<PeerEvents>>,
}

#[derive(Default)]
struct State {
    peers: HashMap<String, Peer>,
    /// Connection indexes (8.1): kept for the node's lifetime.
    indexes: HashMap<String, u32>,
    last_index: u32,
}

struct Peer {
    conn: u64,
    index: u32,
    hidden: bool,
    /// Who opened this connection (decides which of two simultaneous connections stays).
    initiator: String,
    tx: mpsc::UnboundedSender<Frame>,
    pings: HashMap<u64, oneshot::Sender<()>>,
}

fn node_err(kind: &'static str, message: String, hint: Option<&str>) -> NodeError {
    NodeError {
        kind,
        message,
        hint: hint.map(str::to_string),
    }
}

/// Starts the node: reads the cookie, listens on 127.0.0.1 (a free port) and registers the
/// name in this host's registry.
pub fn start(opts: Options) -> Result<Arc<DistNode>, String> {
    if !valid_node_name(&opts.name) {
        return Err(format!(
            "invalid node name '{}' (expected name@host)",
            opts.name
        ));
    }
    let cookie = super::cookie::load()?;
    let rt = RuntimeBuilder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bt-dist")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the distribution runtime: {e}"))?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?
        .port();
    let listener = {
        let _g = rt.enter();
        TcpListener::from_std(listener).map_err(|e| format!("cannot listen: {e}"))?
    };
    let registration = registry::register_in(&registry::dir(), &opts.name, port)?;
    let inner = Arc::new(Inner {
        sym: Sym::new(&opts.name),
        name: opts.name,
        hidden: opts.hidden,
        cookie,
        state: Mutex::new(State::default()),
        serial: AtomicU64::new(1),
        dialing: Mutex::new(HashMap::new()),
        events: Mutex::new(None),
    });
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
    /// The port this node listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Removes the registry entry and stops the network side (connections close; peers see
    /// `connectionClosed`). Link operations afterwards fail as `node_down`.
    pub fn shutdown(&self) {
        drop(self.registration.lock().take());
        self.inner.state.lock().peers.clear();
        if let Some(rt) = self.rt.lock().take() {
            rt.shutdown_background();
        }
    }

    /// Runs `f` on the node's runtime. After `shutdown` it is dropped unrun (a [`Once`]
    /// inside then answers its default).
    fn spawn<F: Future<Output = ()> + Send + 'static>(&self, f: F) {
        if self.rt.lock().is_some() {
            self.handle.spawn(f);
        }
    }

    /// The work of connecting to `node`, bounded by [`CONNECT_TIMEOUT`]; None if it is
    /// this node or already connected.
    fn link(&self, node: &str) -> Option<impl Future<Output = Result<(), NodeError>> + Send> {
        if node == self.inner.name || self.is_connected(node) {
            return None;
        }
        let inner = self.inner.clone();
        let to = node.to_string();
        Some(async move {
            match net::timeout(CONNECT_TIMEOUT, dial(inner, &to)).await {
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
        })
    }
}

/// Calls a [`Done`] exactly once: with the value given, or with `default` if dropped
/// uncalled (a task dropped by a runtime shutdown), so a waiting process always resumes.
struct Once<T> {
    f: Option<Done<T>>,
    default: Option<T>,
}

impl<T> Once<T> {
    fn new(f: Done<T>, default: T) -> Once<T> {
        Once {
            f: Some(f),
            default: Some(default),
        }
    }

    fn call(mut self, v: T) {
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

fn stopped(node: &str) -> NodeError {
    node_err(
        "node_down",
        format!("cannot connect to {node}: distribution has stopped"),
        None,
    )
}

/// Connects to `to`: host policy (8.11), registry lookup, TCP, handshake, attach.
async fn dial(inner: Arc<Inner>, to: &str) -> Result<(), NodeError> {
    if !valid_node_name(to) {
        return Err(node_err(
            "node_down",
            format!("cannot connect to {to}: not a node name"),
            Some("expected name@host"),
        ));
    }
    let host = to.split_once('@').map(|(_, h)| h).unwrap_or("");
    match is_loopback_host(host).await {
        Some(true) => {}
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
    let Some(entry) = registry::lookup(to) else {
        return Err(node_err(
            "node_down",
            format!("cannot connect to {to}: no such node is running on this host"),
            Some(&format!("start it with bt run --name {to}")),
        ));
    };
    let gate = inner
        .dialing
        .lock()
        .entry(to.to_string())
        .or_default()
        .clone();
    let _turn = gate.lock().await;
    if inner.state.lock().peers.contains_key(to) {
        return Ok(()); // another process of this node connected meanwhile
    }
    let mut s = TcpStream::connect(("127.0.0.1", entry.port))
        .await
        .map_err(|e| node_err("node_down", format!("cannot connect to {to}: {e}"), None))?;
    let _ = s.set_nodelay(true);
    let agreed = handshake::initiate(&mut s, &inner.me(), to)
        .await
        .map_err(|e| handshake_error(to, e))?;
    inner.attach(s, agreed, true);
    Ok(())
}

impl Drop for DistNode {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Whether `host` is a loopback host: `Some(true/false)`, or None if it does not resolve.
async fn is_loopback_host(host: &str) -> Option<bool> {
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
        HsError::Refused { kind, message } if kind == "wire_version_unsupported" => node_err(
            "wire_version_unsupported",
            format!("cannot connect to {to}: {message}"),
            None,
        ),
        HsError::Refused { message, .. } => node_err(
            "node_down",
            format!("{to} refused the connection: {message}"),
            None,
        ),
        HsError::Io(m) | HsError::Protocol(m) => {
            node_err("node_down", format!("cannot connect to {to}: {m}"), None)
        }
    }
}

impl Inner {
    fn me(&self) -> Me<'_> {
        Me {
            name: &self.name,
            hidden: self.hidden,
            cookie: &self.cookie,
        }
    }

    /// Installs a handshaken connection as the link to `agreed.name` and starts its tasks.
    /// Of two connections between the same nodes (both connected to each other at once),
    /// the one opened by the node whose name sorts first stays; both sides decide alike, so
    /// they settle on one link (a side that drops the other link before the winner arrives
    /// may briefly see the peer as down).
    fn attach(self: &Arc<Self>, s: TcpStream, agreed: Agreed, mine: bool) {
        let initiator = if mine {
            self.name.clone()
        } else {
            agreed.name.clone()
        };
        let conn = self.serial.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let fresh;
        {
            let mut st = self.state.lock();
            if let Some(old) = st.peers.get(&agreed.name) {
                let winner = self.name.as_str().min(agreed.name.as_str());
                if old.initiator == winner || old.initiator == initiator {
                    return; // keep the existing link; `s` closes
                }
            }
            let index = match st.indexes.get(&agreed.name) {
                Some(&i) => i,
                None => {
                    st.last_index += 1;
                    let i = st.last_index;
                    st.indexes.insert(agreed.name.clone(), i);
                    i
                }
            };
            fresh = st
                .peers
                .insert(
                    agreed.name.clone(),
                    Peer {
                        conn,
                        index,
                        hidden: agreed.hidden,
                        initiator,
                        tx,
                        pings: HashMap::new(),
                    },
                )
                .is_none();
        }
        if fresh && !agreed.hidden {
            self.peer_event(&agreed.name, None);
        }
        let (r, w) = s.into_split();
        net::spawn(writer(w, rx, agreed.version));
        net::spawn(reader(self.clone(), r, agreed.name, conn));
    }

    /// Queues `f` on the connection `conn` to `name` (if it is still the live one).
    fn send_on(&self, name: &str, conn: u64, f: Frame) {
        if let Some(p) = self.state.lock().peers.get(name) {
            if p.conn == conn {
                let _ = p.tx.send(f);
            }
        }
    }

    /// The connection `conn` to `name` ended: drop the link if it is still the live one
    /// (pending pings then fail).
    fn detach(&self, name: &str, conn: u64, reason: &str) {
        let gone = {
            let mut st = self.state.lock();
            if st.peers.get(name).is_some_and(|p| p.conn == conn) {
                st.peers.remove(name)
            } else {
                None
            }
        };
        if gone.is_some_and(|p| !p.hidden) {
            self.peer_event(name, Some(reason));
        }
    }

    /// Reports a visible peer's link change (never called with the state lock held).
    fn peer_event(&self, name: &str, down: Option<&str>) {
        let f = self.events.lock().clone();
        if let Some(f) = f {
            f(name, down);
        }
    }
}

async fn accept_loop(inner: Arc<Inner>, l: TcpListener) {
    loop {
        match l.accept().await {
            Ok((s, _)) => {
                net::spawn(accepted(inner.clone(), s));
            }
            // Out of descriptors and the like: back off a little and keep serving.
            Err(_) => net::sleep(Duration::from_millis(20)).await,
        }
    }
}

async fn accepted(inner: Arc<Inner>, mut s: TcpStream) {
    let _ = s.set_nodelay(true);
    let r = net::timeout(CONNECT_TIMEOUT, handshake::accept(&mut s, &inner.me())).await;
    match r {
        Ok(Ok(agreed)) => inner.attach(s, agreed, false),
        Ok(Err(HsError::Cookie)) => {
            eprintln!(
                "bt: {} refused a connection attempt: the cookie does not match",
                inner.name
            );
        }
        _ => {}
    }
}

async fn writer(mut w: OwnedWriteHalf, mut rx: mpsc::UnboundedReceiver<Frame>, version: u8) {
    while let Some(f) = rx.recv().await {
        if write_frame(&mut w, &f, version).await.is_err() || f == Frame::Disconnect {
            break;
        }
    }
    let _ = w.shutdown().await;
}

async fn reader(inner: Arc<Inner>, mut r: OwnedReadHalf, name: String, conn: u64) {
    let reason = loop {
        match read_frame(&mut r).await {
            Ok(Some(Ok(f))) => match f {
                Frame::Ping { id } => inner.send_on(&name, conn, Frame::Pong { id }),
                Frame::Pong { id } => {
                    let mut st = inner.state.lock();
                    if let Some(p) = st.peers.get_mut(&name).filter(|p| p.conn == conn) {
                        if let Some(w) = p.pings.remove(&id) {
                            let _ = w.send(());
                        }
                    }
                }
                Frame::Disconnect => break "disconnect",
                // The peer could not read one of our frames; nothing sends versioned
                // payloads yet, so there is nobody to tell.
                Frame::Unsupported { .. } => {}
                _ => break "protocol",
            },
            Ok(Some(Err(FrameError::Version(v)))) => {
                inner.send_on(&name, conn, Frame::Unsupported { version: v })
            }
            Ok(Some(Err(FrameError::Malformed(_)))) => break "protocol",
            Ok(None) | Err(_) => break "connectionClosed",
        }
    };
    inner.detach(&name, conn, reason);
}

impl Inner {
    /// Sends a ping on the live link to `to`; the receiver fires on the pong and fails if
    /// the link goes away first.
    fn start_ping(&self, to: &str) -> Option<(u64, oneshot::Receiver<()>)> {
        let id = self.serial.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let mut st = self.state.lock();
        let p = st.peers.get_mut(to)?;
        p.pings.insert(id, tx);
        p.tx.send(Frame::Ping { id }).ok()?;
        Some((id, rx))
    }
}

impl Distribution for DistNode {
    fn node_name(&self) -> Sym {
        self.inner.sym
    }

    fn connect(&self, node: &str, done: Done<Result<(), NodeError>>) {
        let done = Once::new(done, Err(stopped(node)));
        match self.link(node) {
            None => done.call(Ok(())),
            Some(work) => self.spawn(async move { done.call(work.await) }),
        }
    }

    fn disconnect(&self, node: &str) -> bool {
        let peer = self.inner.state.lock().peers.remove(node);
        match peer {
            Some(p) => {
                let _ = p.tx.send(Frame::Disconnect);
                if !p.hidden {
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
        if node == self.inner.name {
            return done(true);
        }
        let done = Once::new(done, false);
        let link = self.link(node);
        let inner = self.inner.clone();
        let to = node.to_string();
        self.spawn(async move {
            if let Some(work) = link {
                if work.await.is_err() {
                    return done.call(false);
                }
            }
            let Some((id, rx)) = inner.start_ping(&to) else {
                return done.call(false);
            };
            let ok = matches!(net::timeout(PING_TIMEOUT, rx).await, Ok(Ok(())));
            if !ok {
                if let Some(p) = inner.state.lock().peers.get_mut(&to) {
                    p.pings.remove(&id);
                }
            }
            done.call(ok)
        });
    }

    fn set_peer_events(&self, events: PeerEvents) {
        *self.inner.events.lock() = Some(events);
    }

    fn connected(&self) -> Vec<String> {
        let st = self.inner.state.lock();
        let mut v: Vec<(u32, &String)> = st
            .peers
            .iter()
            .filter(|(_, p)| !p.hidden)
            .map(|(n, p)| (p.index, n))
            .collect();
        v.sort();
        v.into_iter().map(|(_, n)| n.clone()).collect()
    }
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
