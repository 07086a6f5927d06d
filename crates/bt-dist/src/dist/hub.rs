//! The input of a node's plain-TCP connections, read by the program's own workers: a
//! worker with nothing to run waits in the hub (an epoll set of the connections' sockets
//! and a wake-up event) instead of sleeping, as the BEAM's schedulers poll their ports. A
//! frame that arrives is read, decoded and delivered on that worker, and the process it
//! makes runnable runs there next: a call from a peer costs one thread wake-up on this
//! node (the worker's), not two (a reader thread's, then a worker's), and its reply is
//! written from the same thread (`super::conn_io::Outbox`). Busy workers look between
//! tasks ([`IoWait::poll`]). A caller waiting for a remote reply reads its connection
//! itself while it polls (`super::remote`).
//!
//! Until a program installs the hub in its runtime (`super::service::install`), and after
//! that runtime stops, a thread of the hub's own waits in it. Each connection also has a
//! watchdog task on the network runtime ([`watch_input`]): every quarter of `--net-tick`
//! it reads what is there (if no worker could) and ends the connection
//! (`#netTickTimeout`) when nothing arrived for a whole `--net-tick`.
//!
//! Reading is serialised per connection (a try-lock: whoever holds it reads the socket
//! until it would block and handles every complete frame, in order); the others skip it.

// unsafe: epoll and eventfd through libc (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::io::{ErrorKind, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::conn_io::frames_in;
use super::net;
use super::state::{Hub, Inner, Outbox, ReadSide, ReadState};
use crate::runtime::IoWait;

/// The epoll token of the wake-up event (connections use their serial numbers).
const WAKE: u64 = u64::MAX;
/// Events taken per wait.
const EVENTS: usize = 16;
/// Bytes read per system call.
const CHUNK: usize = 64 << 10;

impl Hub {
    pub(crate) fn new() -> Result<Arc<Hub>, String> {
        let ep = owned(
            // SAFETY: a plain system call answering a new descriptor or -1.
            unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
        )?;
        let ev = owned(
            // SAFETY: as above.
            unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) },
        )?;
        let hub = Hub {
            ep,
            ev,
            conns: Mutex::new(Default::default()),
            driven: AtomicBool::new(false),
            thread: Mutex::new(false),
            waiter: Mutex::new(()),
            woken: AtomicBool::new(false),
            fresh: AtomicBool::new(false),
        };
        hub.ctl(libc::EPOLL_CTL_ADD, hub.ev.as_raw_fd(), WAKE)
            .map_err(|e| format!("cannot poll connections: {e}"))?;
        Ok(Arc::new(hub))
    }

    fn ctl(&self, op: i32, fd: i32, token: u64) -> std::io::Result<()> {
        let mut e = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
            u64: token,
        };
        // SAFETY: `ep` is this hub's epoll descriptor, `e` a valid event for the call.
        let r = unsafe { libc::epoll_ctl(self.ep.as_raw_fd(), op, fd, &mut e) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Starts reading `rs` (its socket joins the set); the hub's own thread starts if no
    /// runtime drives the hub.
    pub(crate) fn add(self: &Arc<Self>, rs: Arc<ReadSide>) -> std::io::Result<()> {
        let (fd, token) = (rs.sock.as_raw_fd(), rs.token);
        self.conns.lock().insert(token, rs);
        if let Err(e) = self.ctl(libc::EPOLL_CTL_ADD, fd, token) {
            self.conns.lock().remove(&token);
            return Err(e);
        }
        self.ensure_driver();
        Ok(())
    }

    /// Stops reading connection `token`.
    fn remove(&self, token: u64) {
        if let Some(rs) = self.conns.lock().remove(&token) {
            let _ = self.ctl(libc::EPOLL_CTL_DEL, rs.sock.as_raw_fd(), token);
        }
    }

    /// A worker waits up to `ms` (-1: no limit) for input and handles what came, or until
    /// woken; false at once if another thread waits in the hub.
    fn wait_ms(&self, ms: i32) -> bool {
        let Some(_waiter) = self.waiter.try_lock() else {
            return false;
        };
        if !self.woken.swap(false, Ordering::SeqCst) {
            let got = self.spin() || self.take(ms, true);
            self.fresh.store(got, Ordering::Relaxed);
            self.woken.store(false, Ordering::SeqCst);
        }
        true
    }

    /// Handles the input there is, without waiting.
    fn poll(&self) {
        self.take(0, false);
    }

    /// One `epoll_wait` of up to `ms`, handling what it answers; `waiter`: the caller holds
    /// `waiter` (it takes the wake-up event, which is left to that thread otherwise).
    /// Answers whether input was handled (`ReadSide::pump`) or the wake-up event taken.
    fn take(&self, ms: i32, waiter: bool) -> bool {
        let mut got = false;
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        // SAFETY: `evs` has room for `EVENTS` events; `ep` is this hub's epoll descriptor.
        let n =
            unsafe { libc::epoll_wait(self.ep.as_raw_fd(), evs.as_mut_ptr(), EVENTS as i32, ms) };
        for e in evs.iter().take(n.max(0) as usize) {
            let token = e.u64;
            if token == WAKE {
                if !waiter {
                    continue;
                }
                let mut b = [0u8; 8];
                // SAFETY: reads at most 8 bytes into `b` from the hub's eventfd.
                let _ = unsafe { libc::read(self.ev.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
                got = true;
                continue;
            }
            let rs = self.conns.lock().get(&token).cloned();
            if let Some(rs) = rs {
                got |= rs.pump();
            }
        }
        got
    }

    /// Before a worker blocks: right after input came (a peer that calls usually sends
    /// again soon), polls for more for up to `BT_DIST_SPIN_US` (`super::spin`, adaptive:
    /// polls that miss or lose their core turn it mostly off) — input that comes in time
    /// costs no wake-up, as BEAM schedulers busy-wait before they sleep. Answers whether
    /// something came.
    fn spin(&self) -> bool {
        if !self.fresh.swap(false, Ordering::Relaxed) || !super::spin::READERS.should_poll() {
            return false;
        }
        let budget = super::spin::configured();
        let got = super::spin::READERS.poll(budget, Instant::now, || {
            (self.take(0, true) || self.woken.load(Ordering::SeqCst)).then_some(())
        });
        got.is_some()
    }

    /// The reading side of the live connection to `peer`, if it is plain TCP.
    pub(crate) fn reader(&self, inner: &Inner, peer: &str) -> Option<Arc<ReadSide>> {
        let conn = inner.state.lock().peers.get(peer)?.conn;
        self.conns.lock().get(&conn).cloned()
    }

    fn has_conns(&self) -> bool {
        !self.conns.lock().is_empty()
    }

    /// The hub's own thread, unless a runtime's workers wait in it (or it runs already).
    fn ensure_driver(self: &Arc<Self>) {
        if self.driven.load(Ordering::SeqCst) {
            return;
        }
        let mut t = self.thread.lock();
        if *t {
            return;
        }
        *t = true;
        let weak = Arc::downgrade(self);
        let started = std::thread::Builder::new()
            .name("bt-dist-io".into())
            .spawn(move || loop {
                let Some(hub) = weak.upgrade() else { return };
                let _waiter = hub.waiter.lock();
                {
                    let mut t = hub.thread.lock();
                    if hub.driven.load(Ordering::SeqCst) {
                        *t = false;
                        return;
                    }
                }
                // Bounded: a hub dropped meanwhile ends the thread.
                hub.take(1000, true);
            });
        if let Err(e) = started {
            *t = false;
            crate::base::log::warn(&format!("bt: cannot start the connection reader: {e}"));
        }
    }

    /// What a runtime installs (`RtHandle::set_io`): its idle workers then wait in the hub.
    pub(crate) fn driver(self: &Arc<Self>) -> Arc<dyn IoWait> {
        self.driven.store(true, Ordering::SeqCst);
        self.wake();
        Arc::new(Driver(self.clone()))
    }

    fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from `one` to the hub's eventfd.
        let _ = unsafe { libc::write(self.ev.as_raw_fd(), one.as_ptr().cast(), 8) };
    }
}

/// A descriptor just made by a system call (`fd`), owned; its error if that failed.
fn owned(fd: i32) -> Result<OwnedFd, String> {
    if fd < 0 {
        return Err(format!(
            "cannot poll connections: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` was just created by the caller's system call and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The hub as a runtime's [`IoWait`].
struct Driver(Arc<Hub>);

impl IoWait for Driver {
    fn wait(&self, timeout: Option<Duration>) -> bool {
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        self.0.wait_ms(ms)
    }

    fn poll(&self) {
        if self.0.has_conns() {
            self.0.poll();
        }
    }

    fn wake(&self) {
        self.0.woken.store(true, Ordering::SeqCst);
        self.0.wake();
    }

    fn released(&self) {
        self.0.driven.store(false, Ordering::SeqCst);
        if self.0.has_conns() {
            self.0.ensure_driver();
        }
    }
}

impl ReadSide {
    pub(crate) fn new(
        inner: &Arc<Inner>,
        sock: std::net::TcpStream,
        out: Outbox,
        name: String,
        conn: u64,
    ) -> Arc<ReadSide> {
        Arc::new(ReadSide {
            token: conn,
            sock,
            inner: Arc::downgrade(inner),
            hub: Arc::downgrade(&inner.hub),
            name,
            conn,
            out,
            rt: net::Handle::current(),
            st: Mutex::new(ReadState {
                buf: Vec::new(),
                chunk: vec![0u8; CHUNK].into_boxed_slice(),
            }),
            ended: AtomicBool::new(false),
            born: Instant::now(),
            last: AtomicU64::new(0),
        })
    }

    /// Reads what the socket holds and handles the complete frames, unless another thread
    /// is doing so; answers whether anything was handled: input read, or the connection's
    /// end (which fails the calls pending on the peer, so it may have made work for this
    /// very thread, as a frame may: a worker waiting in the hub must return for it).
    pub(crate) fn pump(&self) -> bool {
        match self.st.try_lock() {
            Some(st) => self.pump_locked(st),
            None => false,
        }
    }

    /// [`ReadSide::pump`], waiting for the thread that is reading to finish first.
    fn pump_after_others(&self) -> bool {
        self.pump_locked(self.st.lock())
    }

    fn pump_locked(&self, mut st: parking_lot::MutexGuard<'_, ReadState>) -> bool {
        if self.ended.load(Ordering::SeqCst) {
            return false;
        }
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let _rt = self.rt.enter();
        let st = &mut *st;
        let mut got = false;
        let why = loop {
            match (&self.sock).read(&mut st.chunk) {
                Ok(0) => break Some("connectionClosed"),
                Ok(n) => {
                    got = true;
                    st.buf.extend_from_slice(&st.chunk[..n]);
                    match frames_in(&inner, &self.name, &st.buf) {
                        Ok(used) => {
                            st.buf.drain(..used);
                        }
                        Err(why) => break Some(why),
                    }
                    // Dropped meanwhile (over its queue bound, disconnected): read no more.
                    if self.out.is_closed() {
                        self.stop();
                        break None;
                    }
                    if n < st.chunk.len() {
                        break None;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break None,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break Some("connectionClosed"),
            }
        };
        if got {
            let ms = self.born.elapsed().as_millis() as u64;
            self.last.store(ms, Ordering::Relaxed);
        }
        match why {
            Some(why) => {
                self.end(&inner, why);
                true
            }
            None => got,
        }
    }

    /// No more reading (the socket leaves the hub); false if that happened already.
    fn stop(&self) -> bool {
        if self.ended.swap(true, Ordering::SeqCst) {
            return false;
        }
        if let Some(hub) = self.hub.upgrade() {
            hub.remove(self.token);
        }
        true
    }

    /// The connection ended for `why`: no more reading, and the link drops.
    fn end(&self, inner: &Inner, why: &str) {
        if self.stop() {
            inner.detach(&self.name, self.conn, why);
        }
    }
}

/// Reads `rs` as a last resort and watches its silence (see the module doc); the socket
/// leaves the hub when this task ends or is aborted (with the connection).
pub(crate) async fn watch_input(rs: Arc<ReadSide>, tick: Duration) {
    struct Leave(Arc<ReadSide>);
    impl Drop for Leave {
        fn drop(&mut self) {
            self.0.stop();
        }
    }
    let _leave = Leave(rs.clone());
    let tick_ms = tick.as_millis() as u64;
    loop {
        net::sleep(tick / 4).await;
        if rs.ended.load(Ordering::SeqCst) {
            return;
        }
        // After whoever reads now: what they read (or the close they met) decides.
        rs.pump_after_others();
        if rs.ended.load(Ordering::SeqCst) {
            return;
        }
        let now = rs.born.elapsed().as_millis() as u64;
        if now.saturating_sub(rs.last.load(Ordering::Relaxed)) >= tick_ms {
            if let Some(inner) = rs.inner.upgrade() {
                rs.end(&inner, "netTickTimeout");
            }
            return;
        }
    }
}

/// `sock` registered with the network runtime (the current one) for writability only, so
/// its input never wakes that runtime's thread; `sock` back outside a runtime or when the
/// registration fails.
pub(crate) fn writable_socket(
    sock: std::net::TcpStream,
) -> Result<net::AsyncFd<std::net::TcpStream>, std::net::TcpStream> {
    if net::Handle::try_current().is_err() {
        return Err(sock);
    }
    // SAFETY: the AsyncFd owns `sock`, whose descriptor stays open and the same until the
    // AsyncFd is dropped (a TcpStream closes it only when dropped itself).
    unsafe { net::AsyncFd::register_with_interest(sock, net::Interest::WRITABLE) }
        .map_err(|e| e.into_parts().0)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::dist::handshake::Me;
    use crate::dist::state::{OutQ, OutShared};

    /// A node's state whose hub a runtime's workers wait in (no thread of its own reads
    /// it), one plain-TCP connection in the hub, and that connection's other end.
    fn hub_with_a_connection() -> (Arc<Inner>, Arc<ReadSide>, std::net::TcpStream) {
        let me = Me {
            name: "hub@127.0.0.1".into(),
            creation: 1,
            cookie: String::new(),
            hidden: true,
            tls: false,
        };
        let inner = Arc::new(Inner::new(me, Duration::from_secs(60), 0, None).unwrap());
        inner.hub.driven.store(true, Ordering::SeqCst);
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (sock, _) = listener.accept().unwrap();
        sock.set_nonblocking(true).unwrap();
        let out = Outbox(Arc::new(OutShared {
            q: Mutex::new(OutQ::default()),
            queued: AtomicUsize::new(0),
            limit: 1 << 20,
            closed: AtomicBool::new(false),
            wake: net::Notify::new(),
            direct: None,
        }));
        let rs = ReadSide::new(&inner, sock, out, "peer@127.0.0.1".into(), 7);
        inner.hub.add(rs.clone()).unwrap();
        (inner, rs, peer)
    }

    fn network() -> net::Runtime {
        net::RuntimeBuilder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// The end of a connection is input too: a look at the hub that handles it answers
    /// that it handled something, as a frame does (whatever `BT_DIST_SPIN_US` says).
    #[test]
    fn a_connections_end_counts_as_input_handled() {
        let net = network();
        let _in_net = net.enter();
        let (inner, rs, peer) = hub_with_a_connection();
        drop(peer);
        assert!(inner.hub.take(0, true));
        assert!(rs.ended.load(Ordering::SeqCst), "the end was handled");
    }

    /// A worker waiting in the hub that handles a connection's end returns from its wait.
    /// Handling the end fails the calls pending on that peer, which queues their callers'
    /// resumptions on this very thread's worker; nobody else wakes it for them ("it looks
    /// at its queue next"), so a wait that went on waiting after it (the poll before
    /// blocking, right after other input came, then the blocking wait with the socket
    /// gone from the set) would leave those callers suspended for good.
    #[test]
    fn a_wait_that_handles_a_connections_end_returns_at_once() {
        let net = network();
        let _in_net = net.enter();
        let (inner, rs, mut peer) = hub_with_a_connection();
        // Input comes (a tick: an empty frame) and a wait reads it: the next wait polls
        // before it blocks.
        peer.write_all(&[0, 0, 0, 0]).unwrap();
        assert!(inner.hub.wait_ms(60_000));
        assert!(inner.hub.fresh.load(Ordering::Relaxed));
        super::super::spin::READERS.record(true);
        // The peer goes away; the next wait handles the end and returns, without blocking
        // for its whole time.
        drop(peer);
        let t = Instant::now();
        assert!(inner.hub.wait_ms(60_000));
        assert!(rs.ended.load(Ordering::SeqCst), "the end was handled");
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the wait went on for {:?} after the connection's end",
            t.elapsed()
        );
    }
}
