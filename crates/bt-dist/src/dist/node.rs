//! A named node: starting it (listener, port-mapper
//! registration), the connection table with connection indexes, attaching and dropping
//! links (NodeUp/NodeDown, pending calls failed at once), and queueing frames to peers.
//! Making connections is in [`super::dial`], the
//! [`Distribution`](crate::interp::distribution::Distribution) operations the Node
//! primitives call in [`super::node_api`], what travels on a connection in [`super::conn`].
//!
//! Network work runs on a small tokio runtime owned by the node (one worker thread). Link
//! operations run there as tasks and answer through a callback (`Done`); the primitives
//! suspend only the calling bt process meanwhile. Connects are bounded by
//! [`CONNECT_TIMEOUT`], pings and calls by their timeouts.
//!
//! Hardening: at most [`MAX_UNAUTHENTICATED`] connections may be in the
//! handshake at once, each for at most [`HANDSHAKE_TIMEOUT`]; refused attempts are logged to
//! standard error at most once a second (with a count of the ones not logged); each
//! connection's output queue is bounded ([`super::conn::queue_limit`]) — a peer that stops
//! reading is disconnected rather than buffered without limit.

/// Tables looked up per message: a fast seeded hasher (SipHash showed in profiles).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::conn::{self, Outbox};
use super::epmd::{self, Registration};
use super::handshake::{Agreed, Me, Stream};
use super::net::{Handle, Runtime, RuntimeBuilder, Semaphore, TcpListener};
use super::state::{node_err, Inner, Peer, State};
use super::state::{PendingCall, Watch};
pub use super::state::{CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT};
use super::tls::Tls;
use crate::interp::distribution::{valid_node_name, Inbound};
use crate::value::Sym;

/// Longest a `ping` waits for its answer.
pub const PING_TIMEOUT: Duration = Duration::from_millis(5000);
/// Connections allowed in the handshake at once.
pub const MAX_UNAUTHENTICATED: usize = 32;
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
    let me = Me {
        name: opts.name,
        creation,
        cookie,
        hidden: opts.hidden,
        tls: tls.is_some(),
    };
    let inner = Arc::new(Inner::new(me, net_tick, epmd_port, tls)?);
    let reaper = inner.clone();
    rt.spawn(super::deadline::reap(inner.deadlines.clone(), move |n| {
        conn::expire(&reaper, n)
    }));
    rt.spawn(super::dial::accept_loop(inner.clone(), listener));
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

impl Inner {
    /// A node's state with no connection yet (`start` then listens and registers).
    pub(crate) fn new(
        me: Me,
        net_tick: Duration,
        epmd_port: u16,
        tls: Option<Arc<Tls>>,
    ) -> Result<Inner, String> {
        Ok(Inner {
            sym: Sym::new(&me.name),
            me,
            net_tick,
            epmd_port,
            tls,
            state: Mutex::new(State::default()),
            serial: AtomicU64::new(1),
            dialing: Mutex::new(HashMap::default()),
            events: Mutex::new(None),
            link_events: Mutex::new(Default::default()),
            inbound: Mutex::new(None),
            unauth: Arc::new(Semaphore::new(MAX_UNAUTHENTICATED)),
            refusals: Mutex::new((None, 0)),
            calls: Mutex::new(HashMap::default()),
            global: Default::default(),
            shapes: Default::default(),
            pg: Default::default(),
            downs: super::net::watch::channel(0).0,
            watches: Mutex::new(HashMap::default()),
            deadlines: Arc::new(super::deadline::Deadlines::default()),
            erl_calls: Default::default(),
            hub: super::state::Hub::new()?,
        })
    }

    /// The connection index of `name`, if this node ever connected to it.
    pub(crate) fn index_of(&self, name: &str) -> Option<u32> {
        self.state.lock().indexes.get(name).copied()
    }

    pub(crate) fn inbound(&self) -> Option<Arc<dyn Inbound>> {
        self.inbound.lock().clone()
    }

    /// Installs a handshaken connection as the link to its peer and starts its tasks.
    pub(super) fn attach(self: &Arc<Self>, s: Stream, agreed: Agreed) {
        let conn = self.serial.fetch_add(1, Ordering::Relaxed);
        let (out, io) = Outbox::new(s);
        let (old, down, up) = {
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
            st.last_attach.insert(agreed.name.clone(), conn);
            let old = st.peers.insert(
                agreed.name.clone(),
                Peer {
                    conn,
                    index,
                    visible: agreed.visible,
                    bt: agreed.bt,
                    creation: agreed.creation,
                    out: out.clone(),
                    watches: HashMap::default(),
                    links: HashMap::default(),
                    tasks: Vec::new(),
                },
            );
            // A link replaced by the new one went down before the new one came up.
            let down = old
                .as_ref()
                .filter(|o| o.visible)
                .map(|_| st.next_link_seq());
            let up = agreed.visible.then(|| st.next_link_seq());
            (old, down, up)
        };
        if let Some(old) = old {
            // Dropping it closes its connection.
            self.forget(&agreed.name, old);
        }
        if let Some(seq) = down {
            self.link_event(seq, &agreed.name, Some("connectionClosed"));
        }
        if let Some(seq) = up {
            self.link_event(seq, &agreed.name, None);
        }
        let name = agreed.name.clone();
        let tasks = conn::start(self.clone(), io, out, agreed.name, conn);
        let live = match self.state.lock().peers.get_mut(&name) {
            Some(p) if p.conn == conn => {
                p.tasks.extend(tasks);
                true
            }
            // Replaced or dropped already: close this connection.
            _ => {
                tasks.iter().for_each(|t| t.abort());
                false
            }
        };
        if live {
            super::pg::peer_up(self, &name);
        }
    }

    /// Drops what a finished connection left: the peer's watches, and calls waiting on it.
    pub(super) fn forget(&self, name: &str, p: Peer) {
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
            (w.down)(super::terms::atom("noconnection"));
        }
    }

    /// The connection `conn` to `name` ended: drop the link if it is still the live one.
    pub(crate) fn detach(&self, name: &str, conn: u64, reason: &str) {
        let gone = {
            let mut st = self.state.lock();
            if st.peers.get(name).is_some_and(|p| p.conn == conn) {
                st.peers.remove(name).map(|p| {
                    let seq = p.visible.then(|| st.next_link_seq());
                    (p, seq)
                })
            } else {
                None
            }
        };
        if let Some((p, seq)) = gone {
            self.forget(name, p);
            if let Some(seq) = seq {
                self.link_event(seq, name, Some(reason));
            }
            self.downs.send_modify(|n| *n += 1);
        }
    }

    /// Reports link change `seq` of visible peer `name` (numbered under the table's lock by
    /// [`State::next_link_seq`]) once every change numbered before it has been reported:
    /// subscribers see a peer's ups and downs in the order its link changed, however the
    /// threads that made the changes reach this point. The thread that finds no one
    /// reporting reports every change that is due, including those that arrive meanwhile
    /// (a report that drops another link, e.g. a full output queue, lands here again).
    pub(super) fn link_event(&self, seq: u64, name: &str, down: Option<&str>) {
        let mut q = self.link_events.lock();
        q.early
            .insert(seq, (name.to_string(), down.map(str::to_string)));
        if q.busy {
            return;
        }
        q.busy = true;
        loop {
            let next = q.reported + 1;
            let Some((name, down)) = q.early.remove(&next) else {
                q.busy = false;
                return;
            };
            q.reported = next;
            drop(q);
            self.peer_event(&name, down.as_deref());
            q = self.link_events.lock();
        }
    }

    /// Reports a visible peer's link change, in order ([`Self::link_event`]; never with the
    /// state lock held).
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
        // The frame is written (or queued) outside the table's lock.
        let (out, conn) = {
            let st = self.state.lock();
            match st.peers.get(name) {
                Some(p) => (p.out.clone(), p.conn),
                None => return false,
            }
        };
        let ok = out.push(frame);
        if !ok {
            crate::base::log::warn(&format!(
                "bt: {} stopped reading; disconnecting it (output queue full)",
                name
            ));
            self.detach(name, conn, "outputQueueFull");
        }
        ok
    }
}

/// Removes and answers the entries of `map` that `pred` selects (the calls or watches of one
/// peer when its link drops).
fn take_where<T>(map: &mut HashMap<u64, T>, pred: impl Fn(&T) -> bool) -> Vec<T> {
    map.extract_if(|_, v| pred(v)).map(|(_, v)| v).collect()
}
