//! The observer's HTTP/1.1 server: hyper on a small tokio runtime of its own (one worker
//! thread, snapshots on at most [`ObserveConfig::max_snapshots`] blocking threads).
//!
//! Every connection is its own task, so a slow or idle client never holds up another. Limits:
//! loopback addresses only unless TLS is configured ([`crate::observe::tls`]; the TLS
//! handshake must finish within `header_timeout`), at most `max_connections` connections (the
//! next ones get `503` and are closed; over TLS they are just closed), one request per connection (no keep-alive), the request
//! head within `header_timeout` and `max_head_bytes` (hyper answers `431` past it), a
//! deadline for the whole exchange, bounded event streams. Bodies are never read. Nothing is
//! served from disk: the page is compiled in ([`crate::observe::page`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};

use crate::observe::routes::{self, Reply};
use crate::observe::tls::ObserveTls;
use crate::observe::{ObserveConfig, TreeSource};
use crate::runtime::snapshot::json::to_json_page;
use crate::runtime::snapshot::Snapshot;

/// A running observer; dropping it stops it: each event stream gets a last `end` event with
/// the tree as it is then (the observed program ended), then open connections are dropped.
pub struct ObserveServer {
    addr: SocketAddr,
    rt: Option<tokio::runtime::Runtime>,
    ended: tokio::sync::watch::Sender<bool>,
    live: Arc<Live>,
}

/// How many event streams are open (their connections not yet closed), to wait for their
/// `end` events when the server stops.
#[derive(Default)]
struct Live {
    n: std::sync::Mutex<usize>,
    zero: std::sync::Condvar,
}

impl Live {
    fn add(&self, d: isize) {
        let mut n = self.n.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.saturating_add_signed(d);
        if *n == 0 {
            self.zero.notify_all();
        }
    }
}

/// Counts a connection among the open event streams once it turned into one, until dropped.
struct LiveGuard {
    live: Arc<Live>,
    streaming: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        if self.streaming.load(std::sync::atomic::Ordering::SeqCst) {
            self.live.add(-1);
        }
    }
}

impl ObserveServer {
    /// Binds `addr` (a loopback address; port 0 picks a free one) and serves `source` over
    /// plain HTTP.
    pub fn start(
        addr: &str,
        source: Arc<dyn TreeSource>,
        cfg: ObserveConfig,
    ) -> std::io::Result<ObserveServer> {
        Self::start_with(addr, source, cfg, None)
    }

    /// Binds `addr` and serves `source`: over HTTPS with `tls` (any address), else over plain
    /// HTTP on a loopback address only.
    pub fn start_with(
        addr: &str,
        source: Arc<dyn TreeSource>,
        cfg: ObserveConfig,
        tls: Option<ObserveTls>,
    ) -> std::io::Result<ObserveServer> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(cfg.max_snapshots.max(1))
            .thread_name("bt-observe")
            .enable_io()
            .enable_time()
            .build()?;
        let std_listener = std::net::TcpListener::bind(addr)?;
        let local = std_listener.local_addr()?;
        if tls.is_none() && !local.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "--observe serves only on a loopback address without TLS (add --observe-tls CONFIG), not {local}"
                ),
            ));
        }
        std_listener.set_nonblocking(true)?;
        let listener = {
            let _g = rt.enter();
            TcpListener::from_std(std_listener)?
        };
        let (ended, ended_rx) = tokio::sync::watch::channel(false);
        let live = Arc::new(Live::default());
        let shared = Arc::new(Shared {
            ended: ended_rx,
            live: live.clone(),
            source,
            conns: Arc::new(Semaphore::new(cfg.max_connections)),
            streams: Arc::new(Semaphore::new(cfg.max_streams)),
            snaps: Arc::new(Semaphore::new(cfg.max_snapshots.max(1))),
            turned_away: Arc::new(Semaphore::new(64)),
            cfg,
            bound: local,
            tls,
        });
        rt.spawn(accept_loop(listener, shared));
        Ok(ObserveServer {
            addr: local,
            rt: Some(rt),
            ended,
            live,
        })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for ObserveServer {
    fn drop(&mut self) {
        // The event streams send their `end` event and close; wait for them (a client that
        // does not read is not waited for long).
        let _ = self.ended.send(true);
        let n = self.live.n.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .live
            .zero
            .wait_timeout_while(n, Duration::from_secs(2), |n| *n > 0);
        // Shutting the runtime down drops the accept loop and every connection task.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

struct Shared {
    source: Arc<dyn TreeSource>,
    cfg: ObserveConfig,
    bound: SocketAddr,
    conns: Arc<Semaphore>,
    streams: Arc<Semaphore>,
    snaps: Arc<Semaphore>,
    /// Connections being turned away with a 503 (past it they are just closed).
    turned_away: Arc<Semaphore>,
    /// HTTPS: every connection starts with a TLS handshake.
    tls: Option<ObserveTls>,
    /// Becomes true when the server stops (the observed program ended).
    ended: tokio::sync::watch::Receiver<bool>,
    live: Arc<Live>,
}

impl Shared {
    /// A snapshot taken on a blocking thread (at most `max_snapshots` at once).
    async fn snapshot(&self) -> Option<Snapshot> {
        let _permit = self.snaps.acquire().await.ok()?;
        let src = self.source.clone();
        tokio::task::spawn_blocking(move || src.snapshot())
            .await
            .ok()
    }
}

async fn accept_loop(listener: TcpListener, sh: Arc<Shared>) {
    loop {
        let Ok((stream, _peer)) = listener.accept().await else {
            // Out of file descriptors and the like: back off a little, keep serving.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        match sh.conns.clone().try_acquire_owned() {
            Ok(permit) => {
                let sh = sh.clone();
                tokio::spawn(async move {
                    match sh.tls.clone() {
                        None => serve(stream, sh).await,
                        Some(tls) => {
                            let hs = tls.acceptor.accept(stream);
                            if let Ok(Ok(s)) = tokio::time::timeout(sh.cfg.header_timeout, hs).await
                            {
                                serve(s, sh).await;
                            }
                        }
                    }
                    drop(permit);
                });
            }
            // Over TLS a plain-text 503 would be noise to the client: just close.
            Err(_) if sh.tls.is_some() => drop(stream),
            Err(_) => {
                if let Ok(p) = sh.turned_away.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        busy(stream).await;
                        drop(p);
                    });
                }
            }
        }
    }
}

/// Over the connection limit: a short `503` without reading the request, then close.
async fn busy(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = "{\"error\":\"too many connections\"}";
    let msg = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\nRetry-After: 1\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        stream.write_all(msg.as_bytes()).await?;
        stream.shutdown().await?;
        // Read (and drop) what the client sent, briefly, so closing does not reset the
        // connection before it has read the answer.
        let mut buf = [0u8; 4096];
        let mut left: usize = 64 * 1024;
        while left > 0 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        Ok::<(), std::io::Error>(())
    })
    .await;
}

async fn serve<S>(stream: S, sh: Arc<Shared>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let streaming = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _live = LiveGuard {
        live: sh.live.clone(),
        streaming: streaming.clone(),
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(sh.cfg.header_timeout)
        .max_buf_size(sh.cfg.max_head_bytes.max(8192))
        .keep_alive(false);
    let sh2 = sh.clone();
    let streaming2 = streaming.clone();
    let conn = builder.serve_connection(
        TokioIo::new(stream),
        service_fn(move |req| {
            let sh = sh2.clone();
            let streaming = streaming2.clone();
            async move { Ok::<_, Infallible>(respond(req, sh, streaming).await) }
        }),
    );
    let mut conn = std::pin::pin!(conn);
    if tokio::time::timeout(sh.cfg.request_deadline, conn.as_mut())
        .await
        .is_ok()
    {
        return;
    }
    // Past the deadline: only an event stream may go on, up to its own lifetime.
    if streaming.load(std::sync::atomic::Ordering::SeqCst) {
        let rest = sh
            .cfg
            .stream_lifetime
            .saturating_sub(sh.cfg.request_deadline);
        let _ = tokio::time::timeout(rest, conn.as_mut()).await;
    }
}

type Resp = Response<ObserveBody>;

fn fixed(status: u16, content_type: &'static str, body: String) -> Resp {
    let mut r = Response::new(ObserveBody::Full(Full::new(Bytes::from(body))));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        "content-security-policy",
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    if status == 405 {
        h.insert("allow", HeaderValue::from_static("GET"));
    }
    r
}

async fn respond(
    req: Request<Incoming>,
    sh: Arc<Shared>,
    streaming: Arc<std::sync::atomic::AtomicBool>,
) -> Resp {
    let host = req.headers().get(HOST).and_then(|h| h.to_str().ok());
    let host_ok = routes::host_ok(host, sh.bound)
        || sh
            .tls
            .as_ref()
            .is_some_and(|t| t.host_ok(host, sh.bound.port()));
    let reply = routes::route_checked(
        req.method().as_str(),
        req.uri().path(),
        req.uri().query(),
        host_ok,
        sh.cfg.max_roots,
    );
    match reply {
        Reply::Fixed {
            status,
            content_type,
            body,
        } => fixed(status, content_type, body),
        Reply::Processes {
            offset,
            limit,
            paged,
        } => match sh.snapshot().await {
            Some(s) => fixed(
                200,
                "application/json",
                to_json_page(&s, offset, limit, paged),
            ),
            None => fixed(503, "application/json", "{\"error\":\"busy\"}".into()),
        },
        Reply::Status(Some(pid)) => {
            let src = sh.source.clone();
            let st = tokio::time::timeout(
                Duration::from_millis(1000),
                tokio::task::spawn_blocking(move || src.status(pid)),
            )
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
            fixed(200, "application/json", routes::status_json(pid, st))
        }
        Reply::Status(None) => fixed(400, "application/json", "{\"error\":\"no pid\"}".into()),
        Reply::Events => match sh.streams.clone().try_acquire_owned() {
            Err(_) => fixed(
                503,
                "application/json",
                "{\"error\":\"too many event streams\"}".into(),
            ),
            Ok(permit) => {
                sh.live.add(1);
                streaming.store(true, std::sync::atomic::Ordering::SeqCst);
                let (tx, rx) = mpsc::channel::<Bytes>(1);
                tokio::spawn(events(sh.clone(), tx, permit));
                let mut r = fixed(200, "text/event-stream", String::new());
                *r.body_mut() = ObserveBody::Stream(rx);
                r
            }
        },
    }
}

/// Feeds one event stream: a `tree` event at once, then one whenever the tree changed
/// (looked at every `interval`), a comment every 15 s to keep proxies from closing it. When
/// the server stops (the observed program ended) a last `end` event carries the tree as it
/// is then, and the stream closes. Ends when the client goes away or stops reading for 10 s.
async fn events(
    sh: Arc<Shared>,
    tx: mpsc::Sender<Bytes>,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    let mut prev: Option<Snapshot> = None;
    let mut prev_key = String::new();
    let mut quiet = Duration::ZERO;
    let mut ended = sh.ended.clone();
    let send = |b: Bytes| {
        let tx = tx.clone();
        async move {
            matches!(
                tokio::time::timeout(Duration::from_secs(10), tx.send(b)).await,
                Ok(Ok(()))
            )
        }
    };
    if !send(Bytes::from_static(b"retry: 1000\n\n")).await {
        return;
    }
    loop {
        // The server stopping (or gone) ends the stream after one more tree.
        let end = *ended.borrow() || ended.has_changed().is_err();
        let Some(cur) = sh.snapshot().await else {
            return;
        };
        let cur = routes::capped(cur, sh.cfg.max_roots);
        if end {
            let data = routes::event_json(prev.as_ref(), &cur);
            let _ = send(Bytes::from(format!("event: end\ndata: {data}\n\n"))).await;
            return;
        }
        let key = routes::tree_key(&cur);
        if prev.is_none() || key != prev_key {
            let data = routes::event_json(prev.as_ref(), &cur);
            let msg = format!("event: tree\ndata: {data}\n\n");
            if !send(Bytes::from(msg)).await {
                return;
            }
            prev = Some(cur);
            prev_key = key;
            quiet = Duration::ZERO;
        } else if quiet >= Duration::from_secs(15) {
            if !send(Bytes::from_static(b": keep-alive\n\n")).await {
                return;
            }
            quiet = Duration::ZERO;
        }
        // The next look: after `interval`, or at once when the server stops.
        let _ = tokio::time::timeout(sh.cfg.interval, ended.changed()).await;
        quiet += sh.cfg.interval;
    }
}

/// A response body: fixed, or the chunks of an event stream.
pub(crate) enum ObserveBody {
    Full(Full<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl Body for ObserveBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ObserveBody::Full(f) => Pin::new(f).poll_frame(cx),
            ObserveBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            ObserveBody::Full(f) => f.size_hint(),
            ObserveBody::Stream(_) => hyper::body::SizeHint::default(),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ObserveBody::Full(f) => f.is_end_stream(),
            ObserveBody::Stream(_) => false,
        }
    }
}
