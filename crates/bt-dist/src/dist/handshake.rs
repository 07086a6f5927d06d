//! The distribution handshake (version 6, OTP 23+) in both directions, on top of
//! `erl_dist::handshake`, over any byte stream (plain TCP or TLS, [`Io`]).
//!
//! What bt adds around the crate:
//! * **Visibility.** A link between two bt nodes is visible (both send `PUBLISHED` unless
//!   `--hidden`), a link with an Erlang node is hidden (bt does not implement
//!   `global`). A bt initiator knows the peer is bt from its EPMD entry and marks its own
//!   flags with [`BT_FLAG`]; an acceptor reads the initiator's name message first
//!   ([`peek_name`]) and answers `PUBLISHED` only to a marked, published bt initiator.
//! * **Simultaneous connects.** If this node is dialing the initiator at the same time, the
//!   node whose name sorts first keeps its own connection: the acceptor answers `nok` when
//!   it wins, `ok_simultaneous` otherwise (as OTP does); an initiator told `nok` waits for
//!   the other connection.
//! * **TLS framing.** `inet_tls_dist` frames handshake messages with a 4-byte length inside
//!   TLS where plain TCP uses 2 bytes; [`Framing`] rewrites the crate's 2-byte frames.

use std::pin::Pin;
use std::task::{Context, Poll};

use erl_dist::handshake::{
    ClientSideHandshake, HandshakeError, HandshakeStatus, ServerSideHandshake,
};
use erl_dist::node::{Creation, LocalNode, PeerNode};
use erl_dist::DistributionFlags;

use super::net::{
    AsyncRead, AsyncReadExt, AsyncWrite, FuturesAsyncReadCompatExt, ReadBuf,
    TokioAsyncReadCompatExt,
};

/// The flag bit a bt node sets when it dials a bt node (unused by OTP, ignored by it).
pub const BT_FLAG: u64 = 1 << 60;
/// Largest handshake message accepted from a peer.
const MAX_HANDSHAKE_MSG: usize = 1024;

/// A byte stream a connection runs on (TCP, or TLS over TCP).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Is this a plain TCP stream? (Its frames can then be written from any thread.)
    fn is_tcp(&self) -> bool;
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {
    fn is_tcp(&self) -> bool {
        std::any::TypeId::of::<T>() == std::any::TypeId::of::<super::net::TcpStream>()
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}
pub type Stream = Box<dyn Io>;

/// The plain TCP stream inside `s`, or `s` itself (TLS).
pub fn into_tcp(s: Stream) -> Result<super::net::TcpStream, Stream> {
    if !Io::is_tcp(&*s) {
        return Err(s);
    }
    match Io::into_any(s).downcast::<super::net::TcpStream>() {
        Ok(t) => Ok(*t),
        // Unreachable: `is_tcp` checked the type.
        Err(_) => unreachable!("is_tcp said TcpStream"),
    }
}

/// What this node says about itself.
#[derive(Clone)]
pub struct Me {
    pub name: String,
    pub creation: u32,
    pub cookie: String,
    pub hidden: bool,
    /// TLS framing (4-byte handshake lengths).
    pub tls: bool,
}

/// The peer after a successful handshake.
pub struct Agreed {
    pub name: String,
    pub flags: DistributionFlags,
    pub creation: u32,
    /// A bt node on a visible link.
    pub bt: bool,
    pub visible: bool,
}

/// How a handshake failed.
#[derive(Debug)]
pub enum HsError {
    /// The cookies differ.
    Cookie,
    /// The peer said `nok`: it is connecting to us and its connection wins.
    Simultaneous,
    /// The peer refused (`not_allowed`, a name clash, …).
    Refused(String),
    /// The peer closed the connection mid-handshake (what an Erlang node does when the
    /// cookie is wrong: it never says so).
    Closed,
    /// The peer answered with TLS records: it runs TLS distribution and this node does not.
    PeerTls,
    Other(String),
}

/// The first byte of a TLS record (content types 20–23). A handshake message without TLS
/// starts with the high byte of its length, at most 4 (messages are at most
/// [`MAX_HANDSHAKE_MSG`] bytes), so the two cannot be confused.
fn is_tls_record_start(b: u8) -> bool {
    (0x14..=0x17).contains(&b)
}

/// The I/O error [`Framing`] reports when a peer answers a plain handshake with TLS.
#[derive(Debug)]
struct PeerRunsTls;

impl std::fmt::Display for PeerRunsTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the peer answered with TLS")
    }
}

impl std::error::Error for PeerRunsTls {}

fn hs_err(e: HandshakeError) -> HsError {
    match e {
        HandshakeError::CookieMismatch => HsError::Cookie,
        HandshakeError::OngoingHandshake => HsError::Simultaneous,
        HandshakeError::NotAllowed => HsError::Refused("not allowed".into()),
        HandshakeError::AlreadyActive => HsError::Refused("already connected".into()),
        HandshakeError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => HsError::Closed,
        HandshakeError::Io(e) if e.get_ref().is_some_and(|x| x.is::<PeerRunsTls>()) => {
            HsError::PeerTls
        }
        other => HsError::Other(other.to_string()),
    }
}

fn base_flags() -> DistributionFlags {
    DistributionFlags::mandatory()
        | DistributionFlags::DIST_MONITOR
        | DistributionFlags::DIST_MONITOR_NAME
        // `erpc`/`rpc`/`spawn/4` from Erlang send SPAWN_REQUEST (`super::rpc`); without
        // this flag Erlang answers `notsup` itself.
        | DistributionFlags::SPAWN
}

fn local(me: &Me, flags: DistributionFlags) -> Result<LocalNode, HsError> {
    let name = me
        .name
        .parse()
        .map_err(|e| HsError::Other(format!("{e}")))?;
    let mut n = LocalNode::new(name, Creation::new(me.creation));
    n.flags = flags;
    Ok(n)
}

/// Dials: runs the initiator side on `s`. `bt_peer` comes from the peer's EPMD entry.
pub async fn initiate(s: Stream, me: &Me, bt_peer: bool) -> Result<(Stream, Agreed), HsError> {
    let mut flags = base_flags();
    if bt_peer {
        flags |= DistributionFlags::from_bits_truncate(BT_FLAG);
        if !me.hidden {
            flags |= DistributionFlags::PUBLISHED;
        }
    }
    let node = local(me, flags)?;
    let mut f = Framing::new(s, me.tls);
    f.detect_tls = !me.tls;
    let io = f.compat();
    let mut hs = ClientSideHandshake::new(io, node, &me.cookie);
    let status = hs
        .execute_send_name(erl_dist::LOWEST_DISTRIBUTION_PROTOCOL_VERSION)
        .await
        .map_err(hs_err)?;
    let (io, peer) = hs
        .execute_rest(true)
        .await
        .map_err(|e| match (&status, e) {
            (HandshakeStatus::Nok, _) => HsError::Simultaneous,
            (_, e) => hs_err(e),
        })?;
    Ok((io.into_inner().into_inner(), agreed(peer, flags)))
}

fn agreed(peer: PeerNode, mine: DistributionFlags) -> Agreed {
    let both = |f: DistributionFlags| mine.contains(f) && peer.flags.contains(f);
    let bt = both(DistributionFlags::from_bits_truncate(BT_FLAG));
    Agreed {
        name: peer.name.to_string(),
        flags: peer.flags,
        creation: peer.creation.map(|c| c.get()).unwrap_or(0),
        bt,
        visible: bt && both(DistributionFlags::PUBLISHED),
    }
}

/// The initiator's name message, read ahead of the crate: name and flags.
pub struct Peeked {
    pub name: String,
    pub flags: u64,
    raw: Vec<u8>,
}

/// Reads the initiator's first handshake message (`N`: flags, creation, name).
pub async fn peek_name(s: &mut Stream, tls: bool) -> Result<Peeked, HsError> {
    let io = |e: std::io::Error| HsError::Other(e.to_string());
    let n = if tls {
        s.read_u32().await.map_err(io)? as usize
    } else {
        let n = s.read_u16().await.map_err(io)?;
        // A TLS ClientHello: the dialer runs TLS distribution.
        if is_tls_record_start((n >> 8) as u8) {
            return Err(HsError::PeerTls);
        }
        n as usize
    };
    if !(15..=MAX_HANDSHAKE_MSG).contains(&n) {
        return Err(HsError::Other(format!("bad handshake message length {n}")));
    }
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).await.map_err(io)?;
    if b[0] != b'N' {
        return Err(HsError::Other(
            "the peer does not speak handshake version 6".into(),
        ));
    }
    let flags = u64::from_be_bytes(b[1..9].try_into().unwrap_or([0; 8]));
    let len = u16::from_be_bytes([b[13], b[14]]) as usize;
    let name = b
        .get(15..15 + len)
        .and_then(|x| std::str::from_utf8(x).ok())
        .ok_or_else(|| HsError::Other("malformed name message".into()))?
        .to_string();
    let mut raw = (n as u16).to_be_bytes().to_vec();
    raw.extend_from_slice(&b);
    Ok(Peeked { name, flags, raw })
}

/// Accepts: runs the acceptor side on `s` after [`peek_name`]. `status` is `ok`, or the
/// answer to a simultaneous connect.
pub async fn accept(
    s: Stream,
    me: &Me,
    peeked: Peeked,
    status: HandshakeStatus,
) -> Result<(Stream, Agreed), HsError> {
    let bt = peeked.flags & BT_FLAG != 0;
    let mut flags = base_flags();
    if bt {
        flags |= DistributionFlags::from_bits_truncate(BT_FLAG);
        if !me.hidden && peeked.flags & DistributionFlags::PUBLISHED.bits() != 0 {
            flags |= DistributionFlags::PUBLISHED;
        }
    }
    let node = local(me, flags)?;
    let mut f = Framing::new(s, me.tls);
    f.replay = peeked.raw;
    let mut hs = ServerSideHandshake::new(f.compat(), node, &me.cookie);
    match hs.execute_recv_name().await.map_err(hs_err)? {
        Some(_) => {}
        None => {
            return Err(HsError::Refused(
                "dynamic node names are not supported".into(),
            ))
        }
    }
    let refuse = !matches!(
        status,
        HandshakeStatus::Ok | HandshakeStatus::OkSimultaneous
    );
    let r = hs.execute_rest(status).await;
    if refuse {
        return Err(HsError::Simultaneous);
    }
    let (io, peer) = r.map_err(hs_err)?;
    Ok((io.into_inner().into_inner(), agreed(peer, flags)))
}

/// The handshake's view of the stream: replays the bytes [`peek_name`] consumed, and under
/// TLS turns the crate's 2-byte message lengths into the 4-byte ones `inet_tls_dist` uses
/// (both ways). After the handshake it is a plain pass-through.
pub struct Framing {
    inner: Stream,
    tls: bool,
    /// Dialing without TLS: a first byte that starts a TLS record fails the read with
    /// [`PeerRunsTls`] (the peer runs TLS distribution).
    detect_tls: bool,
    replay: Vec<u8>,
    replay_at: usize,
    // Reading under TLS: a 4-byte header being collected, then the body bytes left.
    rhdr: Vec<u8>,
    rleft: usize,
    rout: Vec<u8>,
    // Writing under TLS: the 2-byte header being collected, then the body bytes left.
    whdr: Vec<u8>,
    wleft: usize,
    wpending: Vec<u8>,
}

impl Framing {
    fn new(inner: Stream, tls: bool) -> Framing {
        Framing {
            inner,
            tls,
            detect_tls: false,
            replay: Vec::new(),
            replay_at: 0,
            rhdr: Vec::new(),
            rleft: 0,
            rout: Vec::new(),
            whdr: Vec::new(),
            wleft: 0,
            wpending: Vec::new(),
        }
    }

    fn into_inner(self) -> Stream {
        self.inner
    }
}

impl AsyncRead for Framing {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        if me.replay_at < me.replay.len() {
            let n = (me.replay.len() - me.replay_at).min(buf.remaining());
            buf.put_slice(&me.replay[me.replay_at..me.replay_at + n]);
            me.replay_at += n;
            return Poll::Ready(Ok(()));
        }
        if !me.tls {
            let before = buf.filled().len();
            let r = Pin::new(&mut me.inner).poll_read(cx, buf);
            if me.detect_tls && matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
                me.detect_tls = false;
                if is_tls_record_start(buf.filled()[before]) {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        PeerRunsTls,
                    )));
                }
            }
            return r;
        }
        loop {
            if !me.rout.is_empty() {
                let n = me.rout.len().min(buf.remaining());
                buf.put_slice(&me.rout[..n]);
                me.rout.drain(..n);
                return Poll::Ready(Ok(()));
            }
            // Read one byte at a time for headers, bodies in chunks.
            let want = if me.rleft == 0 {
                4 - me.rhdr.len()
            } else {
                me.rleft
            };
            let mut tmp = vec![0u8; want.min(4096)];
            let mut rb = ReadBuf::new(&mut tmp);
            match Pin::new(&mut me.inner).poll_read(cx, &mut rb) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            let got = rb.filled().to_vec();
            if got.is_empty() {
                return Poll::Ready(Ok(()));
            }
            if me.rleft == 0 {
                me.rhdr.extend_from_slice(&got);
                if me.rhdr.len() == 4 {
                    let n = u32::from_be_bytes([me.rhdr[0], me.rhdr[1], me.rhdr[2], me.rhdr[3]])
                        as usize;
                    me.rhdr.clear();
                    if n > u16::MAX as usize {
                        return Poll::Ready(Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "handshake message too long",
                        )));
                    }
                    me.rout.extend_from_slice(&(n as u16).to_be_bytes());
                    me.rleft = n;
                }
            } else {
                me.rleft -= got.len();
                me.rout.extend_from_slice(&got);
            }
        }
    }
}

impl AsyncWrite for Framing {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let me = self.get_mut();
        if !me.tls {
            return Pin::new(&mut me.inner).poll_write(cx, buf);
        }
        // Rewrite into `wpending`, then push it out; report `buf` consumed at once.
        if !me.wpending.is_empty() {
            match flush_pending(&mut me.inner, &mut me.wpending, cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let mut i = 0;
        while i < buf.len() {
            if me.wleft == 0 {
                me.whdr.push(buf[i]);
                i += 1;
                if me.whdr.len() == 2 {
                    let n = u16::from_be_bytes([me.whdr[0], me.whdr[1]]) as usize;
                    me.whdr.clear();
                    me.wpending.extend_from_slice(&(n as u32).to_be_bytes());
                    me.wleft = n;
                }
            } else {
                let n = me.wleft.min(buf.len() - i);
                me.wpending.extend_from_slice(&buf[i..i + n]);
                me.wleft -= n;
                i += n;
            }
        }
        let _ = flush_pending(&mut me.inner, &mut me.wpending, cx);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        match flush_pending(&mut me.inner, &mut me.wpending, cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut me.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

fn flush_pending(
    inner: &mut Stream,
    pending: &mut Vec<u8>,
    cx: &mut Context<'_>,
) -> Poll<std::io::Result<()>> {
    while !pending.is_empty() {
        match Pin::new(&mut *inner).poll_write(cx, pending) {
            Poll::Ready(Ok(0)) => {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            Poll::Ready(Ok(n)) => {
                pending.drain(..n);
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
    }
    Poll::Ready(Ok(()))
}

#[allow(unused_imports)]
use FuturesAsyncReadCompatExt as _;
#[allow(unused_imports)]
use TokioAsyncReadCompatExt as _;
