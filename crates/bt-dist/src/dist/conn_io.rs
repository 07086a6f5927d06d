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
//! **Latency**. On plain TCP a frame is written from the thread that makes it (see
//! [`Outbox`]), and read by the program's workers ([`super::hub`]): a worker with nothing
//! to run waits for input itself, so a message costs one thread wake-up on the receiving
//! node, and its reply is written from that same worker. Under TLS a reader and a writer
//! task per connection do both.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    /// Plain TCP: a duplicate of the (non-blocking) socket for reading ([`super::hub`]).
    Tcp(std::net::TcpStream),
    /// TLS: the stream's halves.
    Other(Box<dyn net::AsyncRead + Unpin + Send>, WriteHalf),
}

impl Outbox {
    /// The output queue of a connection on `s`, and the reader/writer sides for [`start`].
    pub fn new(s: Stream) -> (Outbox, ConnIo) {
        let (direct, io) = match super::handshake::into_tcp(s).map(plain) {
            Ok(Ok((w, r))) => (Some(w), ConnIo::Tcp(r)),
            Ok(Err(s)) | Err(s) => {
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
                let done = w.get_ref().write(&frame).unwrap_or_default();
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

    /// Asks the writer to close the connection (on plain TCP the socket is shut down at
    /// once: its input is read elsewhere, [`super::hub`]).
    pub fn close(&self) {
        self.0.closed.store(true, Ordering::Relaxed);
        if let Some(w) = &self.0.direct {
            let _ = w.get_ref().shutdown(std::net::Shutdown::Both);
        }
        self.0.wake.notify_one();
    }
}

/// A handshaken plain-TCP stream taken out of the network runtime's read interest: the
/// socket registered for writability only (for the writer task), and a duplicate of it
/// for [`super::hub`] to read; the stream back if that cannot be done.
fn plain(
    tcp: net::TcpStream,
) -> Result<(net::AsyncFd<std::net::TcpStream>, std::net::TcpStream), super::handshake::Stream> {
    let std = match tcp.into_std() {
        Ok(s) => s,
        Err(e) => return Err(failed(e)),
    };
    let r = match std.try_clone() {
        Ok(r) => r,
        Err(_) => return Err(back(std)),
    };
    match super::hub::writable_socket(std) {
        Ok(w) => Ok((w, r)),
        Err(std) => Err(back(std)),
    }
}

/// A stream at its end (the link drops at once), for [`plain`]'s failures.
fn failed(e: std::io::Error) -> super::handshake::Stream {
    crate::base::log::warn(&format!("bt: cannot set up a connection: {e}"));
    Box::new(net::empty())
}

fn back(s: std::net::TcpStream) -> super::handshake::Stream {
    match net::TcpStream::from_std(s) {
        Ok(t) => Box::new(t),
        Err(e) => failed(e),
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
        ConnIo::Tcp(sock) => {
            let rs = super::state::ReadSide::new(&inner, sock, out.clone(), name, conn);
            if let Err(e) = inner.hub.add(rs.clone()) {
                crate::base::log::warn(&format!("bt: cannot read a connection: {e}"));
            }
            (
                net::spawn(direct_writer(out, tick / 4)),
                net::spawn(super::hub::watch_input(rs, tick)),
            )
        }
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
        'flush: loop {
            if o.closed.load(Ordering::Relaxed) || o.q.lock().frames.is_empty() {
                break;
            }
            // Writes under the guard: one that would block clears the readiness, and the
            // next wait lasts until the socket takes more.
            let Ok(mut g) = w.writable().await else {
                return;
            };
            loop {
                if o.closed.load(Ordering::Relaxed) {
                    return;
                }
                let mut q = o.q.lock();
                let at = q.at;
                let Some(f) = q.frames.front() else {
                    break 'flush;
                };
                let len = f.len();
                match g.try_io(|s| s.get_ref().write(&f[at..])) {
                    Ok(Ok(k)) => {
                        q.at += k;
                        if q.at >= len {
                            q.frames.pop_front();
                            q.at = 0;
                            o.queued.fetch_sub(len, Ordering::Relaxed);
                        }
                    }
                    Ok(Err(_)) => return,
                    Err(_would_block) => break,
                }
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
pub(super) fn frames_in(inner: &Arc<Inner>, name: &str, buf: &[u8]) -> Result<usize, &'static str> {
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
