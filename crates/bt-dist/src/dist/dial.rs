//! Making connections: dialing a node (host policy, port
//! mapper lookup, TCP and TLS, the handshake, simultaneous connects) and accepting peers
//! (the listener, the cap on unauthenticated connections and their time, refused attempts
//! logged with throttling). A handshaken connection is handed to [`Inner::attach`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use erl_dist::handshake::HandshakeStatus;

use super::epmd;
use super::handshake::{self, HsError, Stream};
use super::net::{self, TcpListener, TcpStream};
use super::state::{node_err, Inner};
use super::state::{CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT};
use crate::interp::distribution::{valid_node_name, NodeError};

const COOKIE_HINT: &str =
    "both nodes need the same cookie (BT_COOKIE, --cookie-file, or ~/.erlang.cookie)";
const TLS_HINT: &str = "configure TLS distribution or use a tunnel";
const TLS_MISMATCH_HINT: &str =
    "both nodes need TLS distribution (--dist-tls CONFIG, erl -proto_dist inet_tls), or neither";

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
        HsError::PeerTls => node_err(
            "node_down",
            format!("cannot connect to {to}: it runs TLS distribution and this node does not"),
            Some(TLS_MISMATCH_HINT),
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
    /// Logs a refused connection attempt, at most once a second.
    pub(super) fn refused(&self, what: &str) {
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
            crate::base::log::warn(&format!(
                "bt: {} refused a connection: {what}{extra}",
                self.me.name
            ));
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

    /// Connects to `to`: host policy, port-mapper lookup, TCP (+TLS), handshake.
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
            Some(t) => t.connect(host, tcp).await.map_err(|e| match e {
                super::tls::TlsError::Closed => node_err(
                    "node_down",
                    format!("cannot connect to {to}: it closed the connection during the TLS handshake (this node runs TLS distribution; does it?)"),
                    Some(TLS_MISMATCH_HINT),
                ),
                e => node_err("node_down", format!("cannot connect to {to}: {e}"), None),
            })?,
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
            // The peer's own connection to us wins: wait for it (attached since this dial
            // began, whether or not it is still up: a disconnect may already have ended it).
            Err(HsError::Simultaneous) => {
                for _ in 0..100 {
                    let settled = {
                        let st = self.state.lock();
                        st.peers.contains_key(&to)
                            || st.last_attach.get(&to).is_some_and(|&c| c > ticket)
                    };
                    if settled {
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
}

pub(super) async fn accept_loop(inner: Arc<Inner>, l: TcpListener) {
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
        Some(t) => t.accept(tcp).await.map_err(|e| e.to_string())?,
        None => Box::new(tcp),
    };
    let peeked = handshake::peek_name(&mut s, inner.me.tls)
        .await
        .map_err(|e| match e {
            HsError::PeerTls => "the peer runs TLS distribution and this node does not".to_string(),
            e => format!("{e:?}"),
        })?;
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
