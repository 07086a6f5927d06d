//! The bytes of a live connection: frames in and out, ticks, the
//! bounded output queue. What the frames mean is in [`super::conn`].
//!
//! Frames are a 4-byte length then, for a message, the pass-through byte 112, a control
//! term and an optional payload term (no atom cache, no fragments: bt advertises neither);
//! a zero length is a tick. A writer task sends a tick whenever it has been idle for a
//! quarter of `--net-tick`; the reader drops the connection (`#netTickTimeout`) when nothing
//! arrives for `--net-tick`. Frames longer than [`MAX_FRAME`] end the connection; every
//! frame is checked by `codec::etf_check` before it is decoded (malformed: the connection
//! ends; nested too deeply: that message alone is refused) — except the common small frames
//! (sends, calls, replies, monitors), which [`super::frames`] reads and writes directly.
//!
//! **Latency**. On plain TCP a frame is written from the thread that
//! makes it (see [`Outbox`]), and the reader, while this node waits for replies on any
//! connection (with `BT_DIST_SPIN_US` also right after the peer sent something), polls its
//! socket for `super::spin::reader_spin()` before it sleeps in the reactor: a frame that arrives within
//! that time costs no reactor wake-up (as BEAM schedulers busy-wait before sleeping).
//! Otherwise the reader sleeps at once, and after four polls that found nothing (or lost
//! the core) it polls only once in 32 waits (no CPU burnt on a loaded machine).

use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use erl_dist::message::Message;
use parking_lot::Mutex;

use super::conn::handle;
use super::handshake::Stream;
use super::net::{self, AsyncReadExt, AsyncWriteExt};
use super::state::Inner;
pub use super::state::Outbox;
use super::state::{OutQ, OutShared};
pub use super::terms::frame;
use crate::codec::etf_check;

/// Longest frame accepted from a peer (an 8 MiB message and then some).
pub const MAX_FRAME: usize = 64 << 20;
/// Default bound of a connection's output queue.
pub const DEFAULT_QUEUE_LIMIT: usize = 64 << 20;

/// The output-queue bound: `BT_DIST_QUEUE_LIMIT` bytes (tests), else 64 MiB.
pub fn queue_limit() -> usize {
    std::env::var("BT_DIST_QUEUE_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_QUEUE_LIMIT)
}

/// What the connection's tasks run on, made from a handshaken stream with its [`Outbox`].
pub enum ConnIo {
    /// Plain TCP: the read half, and a duplicate of the socket for polling reads.
    Tcp(net::OwnedReadHalf, Option<std::net::TcpStream>),
    /// TLS: the stream's halves.
    Other(Box<dyn net::AsyncRead + Unpin + Send>, WriteHalf),
}

impl Outbox {
    /// The output queue of a connection on `s`, and the reader/writer sides for [`start`].
    pub fn new(s: Stream) -> (Outbox, ConnIo) {
        let (direct, io) = match super::handshake::into_tcp(s) {
            Ok(tcp) => {
                // A duplicate descriptor of the same (non-blocking) socket.
                let dup = std::os::fd::AsFd::as_fd(&tcp)
                    .try_clone_to_owned()
                    .ok()
                    .map(std::net::TcpStream::from);
                let (r, w) = tcp.into_split();
                (Some(w), ConnIo::Tcp(r, dup))
            }
            Err(s) => {
                let (r, w) = net::split(s);
                (None, ConnIo::Other(Box::new(r), w))
            }
        };
        let shared = OutShared {
            q: Mutex::new(OutQ::default()),
            queued: AtomicUsize::new(0),
            limit: queue_limit(),
            closed: AtomicBool::new(false),
            wake: net::Notify::new(),
            direct,
        };
        (Outbox(Arc::new(shared)), io)
    }

    /// Sends or queues a frame (several concatenated frames are one push); false if the
    /// queue is over its bound or the connection is closing.
    pub fn push(&self, frame: Vec<u8>) -> bool {
        let o = &*self.0;
        if o.closed.load(Ordering::Relaxed) {
            return false;
        }
        let n = frame.len();
        let mut q = o.q.lock();
        if q.frames.is_empty() {
            if let Some(w) = &o.direct {
                // WouldBlock, or an error the writer task will meet and close on: 0.
                let done = w.try_write(&frame).unwrap_or_default();
                if done == n {
                    return true;
                }
                o.queued.fetch_add(n, Ordering::Relaxed);
                q.frames.push_back(frame);
                q.at = done;
                drop(q);
                o.wake.notify_one();
                return true;
            }
        }
        let before = o.queued.fetch_add(n, Ordering::Relaxed);
        if before + n > o.limit && before > 0 {
            o.queued.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        q.frames.push_back(frame);
        let first = q.frames.len() == 1;
        drop(q);
        if first || o.direct.is_none() {
            o.wake.notify_one();
        }
        true
    }

    /// Has the connection been told to close?
    pub fn is_closed(&self) -> bool {
        self.0.closed.load(Ordering::Relaxed)
    }

    /// Asks the writer to close the connection.
    pub fn close(&self) {
        self.0.closed.store(true, Ordering::Relaxed);
        self.0.wake.notify_one();
    }
}

/// Starts the reader and writer tasks of a connection to `name`; aborting both closes it.
pub(crate) fn start(
    inner: Arc<Inner>,
    io: ConnIo,
    out: Outbox,
    name: String,
    conn: u64,
) -> [net::AbortHandle; 2] {
    let tick = inner.net_tick;
    let (w, r) = match io {
        ConnIo::Tcp(r, dup) => (
            net::spawn(direct_writer(out.clone(), tick / 4)),
            net::spawn(tcp_reader(inner, r, dup, out, name, conn)),
        ),
        ConnIo::Other(r, w) => (
            net::spawn(writer(w, out, tick / 4)),
            net::spawn(reader(inner, r, name, conn)),
        ),
    };
    [w.abort_handle(), r.abort_handle()]
}

type WriteHalf = net::WriteHalf<Stream>;

/// Takes every queued frame (TLS writer).
fn take_all(o: &OutShared) -> Vec<Vec<u8>> {
    let mut q = o.q.lock();
    q.at = 0;
    q.frames.drain(..).collect()
}

/// The writer task under TLS: writes what is queued, flushes, ticks when idle.
async fn writer(mut w: WriteHalf, out: Outbox, idle: Duration) {
    let o = &*out.0;
    loop {
        let woken = net::timeout(idle, o.wake.notified()).await.is_ok();
        if o.closed.load(Ordering::Relaxed) {
            break;
        }
        let frames = take_all(o);
        if !woken && frames.is_empty() {
            if w.write_all(&[0, 0, 0, 0]).await.is_err() || w.flush().await.is_err() {
                break;
            }
            continue;
        }
        let mut failed = false;
        for f in frames {
            if w.write_all(&f).await.is_err() {
                failed = true;
                break;
            }
            o.queued.fetch_sub(f.len(), Ordering::Relaxed);
        }
        if failed || w.flush().await.is_err() {
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// The writer task on plain TCP: writes what senders could not write directly (waiting
/// for the socket to take more), and a tick when a quarter of `--net-tick` passes without
/// being woken (a tick is harmless even when frames went out directly meanwhile).
async fn direct_writer(out: Outbox, idle: Duration) {
    let o = &*out.0;
    let Some(w) = &o.direct else { return };
    loop {
        if net::timeout(idle, o.wake.notified()).await.is_err() {
            out.push(vec![0, 0, 0, 0]);
        }
        loop {
            if o.closed.load(Ordering::Relaxed) {
                return;
            }
            let r = {
                let mut q = o.q.lock();
                let at = q.at;
                let Some(f) = q.frames.front() else { break };
                let len = f.len();
                match w.try_write(&f[at..]) {
                    Ok(k) => {
                        q.at += k;
                        if q.at >= len {
                            q.frames.pop_front();
                            q.at = 0;
                            o.queued.fetch_sub(len, Ordering::Relaxed);
                        }
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            };
            match r {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if w.writable().await.is_err() {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
    }
}

/// The reader under TLS: frames through a buffered reader.
async fn reader(
    inner: Arc<Inner>,
    r: Box<dyn net::AsyncRead + Unpin + Send>,
    name: String,
    conn: u64,
) {
    // Frames are small and come in bursts: one read fills many (fewer system calls).
    let mut r = net::BufReader::with_capacity(64 << 10, r);
    let tick = inner.net_tick;
    let reason = loop {
        let len = match net::timeout(tick, r.read_u32()).await {
            Err(_) => break "netTickTimeout",
            Ok(Err(_)) => break "connectionClosed",
            Ok(Ok(n)) => n as usize,
        };
        if len == 0 {
            continue; // a tick
        }
        if len > MAX_FRAME {
            break "protocol";
        }
        let mut body = vec![0u8; len];
        match net::timeout(tick, r.read_exact(&mut body)).await {
            Ok(Ok(_)) => {}
            Err(_) => break "netTickTimeout",
            Ok(Err(_)) => break "connectionClosed",
        }
        if let Err(why) = frame_in(&inner, &name, &body) {
            break why;
        }
    };
    inner.detach(&name, conn, reason);
}

/// One frame's body (after the length): handled, or why the connection ends. A message
/// nested deeper than the codec decodes is refused alone ([`super::conn::refuse_deep`]).
fn frame_in(inner: &Arc<Inner>, name: &str, body: &[u8]) -> Result<(), &'static str> {
    if body.first() != Some(&112) {
        return Err("protocol");
    }
    // The common small frames (`super::frames`), else the checked general path.
    if let Some(m) = super::frames::read(&body[1..]) {
        handle(inner, name, m);
        return Ok(());
    }
    let cut = match etf_check::scan_frame(&body[1..]) {
        Ok(cut) => cut,
        Err(_) => return Err("protocol"),
    };
    let bytes = cut.as_deref().unwrap_or(&body[1..]);
    match Message::read_from(&mut &bytes[..]) {
        Ok(m) if cut.is_some() => super::conn::refuse_deep(inner, name, m),
        Ok(m) => handle(inner, name, m),
        Err(erl_dist::message::RecvError::UnsupportedOp { .. }) => {}
        // A spawn request whose argument list is a byte string (`erl_dist` wants a list).
        Err(_) => match super::rpc::SpawnReq::from_bytes(bytes) {
            Some(req) => super::rpc::spawn_request(inner, name, req),
            None => return Err("protocol"),
        },
    }
    Ok(())
}

/// Handles the complete frames at the start of `buf`; answers how many bytes they took.
fn frames_in(inner: &Arc<Inner>, name: &str, buf: &[u8]) -> Result<usize, &'static str> {
    let mut at = 0;
    while buf.len() - at >= 4 {
        let len = u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize;
        if len > MAX_FRAME {
            return Err("protocol");
        }
        if buf.len() - at - 4 < len {
            break;
        }
        if len > 0 {
            frame_in(inner, name, &buf[at + 4..at + 4 + len])?;
        }
        at += 4 + len;
    }
    Ok(at)
}

/// The reader on plain TCP: frames out of a growing buffer; polls the socket for a while
/// when this node waits for a reply or the peer just sent, else (and then) sleeps until it
/// is readable.
async fn tcp_reader(
    inner: Arc<Inner>,
    r: net::OwnedReadHalf,
    dup: Option<std::net::TcpStream>,
    out: Outbox,
    name: String,
    conn: u64,
) {
    let tick = inner.net_tick;
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    // This reader's poll history (`super::spin::Adaptive`).
    let polls = super::spin::Adaptive::new();
    let spin = super::spin::reader_spin();
    let after_traffic = super::spin::reader_polls_after_traffic();
    // Data arrived since the last wait.
    let mut fresh = false;
    let reason = 'conn: loop {
        match frames_in(&inner, &name, &buf) {
            Ok(used) => {
                buf.drain(..used);
            }
            Err(why) => break why,
        }
        // Dropped meanwhile (over its queue bound, disconnected): read no more.
        if out.is_closed() {
            return;
        }
        // A frame is incomplete (or none has started): read more. Poll first while a reply
        // is awaited — unless the last polls all missed or lost the core (a loaded
        // machine, a slow callee): then only one wait in 32 polls, to notice when replies
        // come fast again. A peer that just sent (its calls come one after the other) is
        // polled too.
        let active = inner.awaiting() || (std::mem::take(&mut fresh) && after_traffic);
        if let Some(d) = dup.as_ref().filter(|_| active && polls.should_poll()) {
            let mut d = d;
            let got = polls.poll(spin, Instant::now, || match d.read(&mut chunk) {
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                    None
                }
                r => Some(r),
            });
            match got {
                None => {}
                Some(Ok(0)) | Some(Err(_)) => break 'conn "connectionClosed",
                Some(Ok(n)) => {
                    fresh = true;
                    buf.extend_from_slice(&chunk[..n]);
                    continue 'conn;
                }
            }
        }
        loop {
            match net::timeout(tick, r.readable()).await {
                // The tick timer fired: the peer was silent only if the socket holds
                // nothing. After this node could not run for a while (a loaded machine, a
                // stopped process) the timer and the socket's readiness are both due and
                // the timer may be seen first; what arrived meanwhile (ticks, frames, the
                // peer's close) decides, not that order. A real read on the duplicate:
                // `try_read` trusts the readiness not yet seen and would not read.
                Err(_) => match read_now(&r, dup.as_ref(), &mut chunk) {
                    Ok(0) => break 'conn "connectionClosed",
                    Ok(n) => {
                        fresh = true;
                        buf.extend_from_slice(&chunk[..n]);
                        break;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        break 'conn "netTickTimeout"
                    }
                    Err(_) => break 'conn "connectionClosed",
                },
                Ok(Err(_)) => break 'conn "connectionClosed",
                Ok(Ok(())) => {}
            }
            match r.try_read(&mut chunk) {
                Ok(0) => break 'conn "connectionClosed",
                Ok(n) => {
                    fresh = true;
                    buf.extend_from_slice(&chunk[..n]);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(_) => break 'conn "connectionClosed",
            }
        }
    };
    inner.detach(&name, conn, reason);
}

/// A read that does not wait for readiness: on the duplicate a real `read`, else `try_read`
/// (which answers `WouldBlock` until the reactor has seen the socket readable).
fn read_now(
    r: &net::OwnedReadHalf,
    dup: Option<&std::net::TcpStream>,
    chunk: &mut [u8],
) -> std::io::Result<usize> {
    match dup {
        Some(mut d) => d.read(chunk),
        None => r.try_read(chunk),
    }
}
