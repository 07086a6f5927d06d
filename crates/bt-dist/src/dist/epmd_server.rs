//! `bt epmd`: an EPMD-compatible port mapper bound to 127.0.0.1, for
//! machines without Erlang. It speaks the requests nodes and the `epmd` tool use —
//! `ALIVE2_REQ` (register; the name stays registered while that connection is open),
//! `PORT_PLEASE2_REQ` (look up), `NAMES_REQ` (`epmd -names`), `DUMP_REQ` and `KILL_REQ`
//! (`epmd -kill`) — so Erlang nodes and tools see bt nodes and bt nodes see Erlang ones.
//!
//! It trusts nothing a client sends: requests are length-bounded and must arrive within
//! [`REQUEST_TIMEOUT`], names must be 1–255 bytes of `[A-Za-z0-9_.-]`, a name is held by one
//! live registration at a time (no squatting over a live node; a dead node's name frees
//! when its connection closes). Registrations and requests draw on separate budgets: at most
//! [`MAX_REGISTRATIONS`] names are held at once (one per connection; a registration past the
//! bound is refused and its connection closed) and at most [`MAX_CONNECTIONS`] other
//! connections are served at once, so a flood of registrations — from one process or many —
//! never locks out a query (`names`, a node's lookup). Like epmd, a kill request is refused
//! (`NO`) while names are registered.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::net::{
    current_thread, timeout, AsyncReadExt, AsyncWriteExt, Notify, Semaphore, TcpListener, TcpStream,
};

/// Longest a client may take to send a request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections reading or answering a request at once (held registrations not counted).
pub const MAX_CONNECTIONS: usize = 1024;
/// Names registered at once (each holds its connection open).
pub const MAX_REGISTRATIONS: usize = 512;

const ALIVE2_REQ: u8 = 120;
const ALIVE2_X_RESP: u8 = 118;
const PORT_PLEASE2_REQ: u8 = 122;
const PORT2_RESP: u8 = 119;
const NAMES_REQ: u8 = 110;
const DUMP_REQ: u8 = 100;
const KILL_REQ: u8 = 107;
const STOP_REQ: u8 = 115;

#[derive(Clone)]
struct Entry {
    port: u16,
    node_type: u8,
    protocol: u8,
    high: u16,
    low: u16,
    extra: Vec<u8>,
    serial: u64,
}

struct State {
    port: u16,
    nodes: Mutex<HashMap<String, Entry>>,
    next: Mutex<(u64, u32)>,
    stop: Notify,
    registrations: Arc<Semaphore>,
}

/// Runs the daemon on 127.0.0.1:`port` until killed (`epmd -kill` or a signal).
pub fn run(port: u16) -> Result<(), String> {
    let rt = current_thread().map_err(|e| format!("bt epmd: {e}"))?;
    rt.block_on(async move {
        let l = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("bt epmd: cannot listen on 127.0.0.1:{port}: {e}"))?;
        serve(l).await;
        Ok(())
    })
}

/// Serves port-mapper requests on `l` until a `KILL_REQ`.
pub async fn serve(l: TcpListener) {
    let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
    let seed = super::cookie::random_bytes::<4>()
        .map(u32::from_ne_bytes)
        .unwrap_or(1);
    let st = Arc::new(State {
        port,
        nodes: Mutex::new(HashMap::new()),
        next: Mutex::new((1, seed | 1)),
        stop: Notify::new(),
        registrations: Arc::new(Semaphore::new(MAX_REGISTRATIONS)),
    });
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = super::net::select! {
            a = l.accept() => a,
            _ = st.stop.notified() => return,
        };
        let Ok((s, _)) = accepted else {
            super::net::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue; // over the cap: the connection closes
        };
        let st = st.clone();
        super::net::spawn(async move {
            let _ = client(st, s, permit).await;
        });
    }
}

fn valid_name(n: &[u8]) -> bool {
    !n.is_empty()
        && n.len() <= 255
        && n.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

async fn client(
    st: Arc<State>,
    mut s: TcpStream,
    permit: super::net::OwnedSemaphorePermit,
) -> std::io::Result<()> {
    let req = match timeout(REQUEST_TIMEOUT, async {
        let n = s.read_u16().await? as usize;
        let mut b = vec![0u8; n];
        s.read_exact(&mut b).await?;
        Ok::<_, std::io::Error>(b)
    })
    .await
    {
        Ok(r) => r?,
        Err(_) => return Ok(()),
    };
    let Some((&tag, body)) = req.split_first() else {
        return Ok(());
    };
    match tag {
        ALIVE2_REQ => {
            // A held registration takes a registration slot, not a request slot.
            drop(permit);
            match st.registrations.clone().try_acquire_owned() {
                Ok(held) => register(st, s, body, held).await,
                Err(_) => s.write_all(&[ALIVE2_X_RESP, 1, 0, 0, 0, 0]).await,
            }
        }
        PORT_PLEASE2_REQ => {
            let e = st
                .nodes
                .lock()
                .get(&String::from_utf8_lossy(body).into_owned())
                .cloned();
            let mut out = vec![PORT2_RESP];
            match e {
                None => out.push(1),
                Some(e) => {
                    out.push(0);
                    out.extend_from_slice(&e.port.to_be_bytes());
                    out.push(e.node_type);
                    out.push(e.protocol);
                    out.extend_from_slice(&e.high.to_be_bytes());
                    out.extend_from_slice(&e.low.to_be_bytes());
                    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
                    out.extend_from_slice(body);
                    out.extend_from_slice(&(e.extra.len() as u16).to_be_bytes());
                    out.extend_from_slice(&e.extra);
                }
            }
            s.write_all(&out).await
        }
        NAMES_REQ | DUMP_REQ => {
            let mut out = (st.port as u32).to_be_bytes().to_vec();
            let mut names: Vec<(String, u16)> = st
                .nodes
                .lock()
                .iter()
                .map(|(n, e)| (n.clone(), e.port))
                .collect();
            names.sort();
            for (n, p) in names {
                let line = if tag == NAMES_REQ {
                    format!("name {n} at port {p}\n")
                } else {
                    format!("active name     <{n}> at port {p}, fd = 0\n")
                };
                out.extend_from_slice(line.as_bytes());
            }
            s.write_all(&out).await
        }
        KILL_REQ => {
            if !st.nodes.lock().is_empty() {
                return s.write_all(b"NO").await;
            }
            s.write_all(b"OK").await?;
            st.stop.notify_one();
            Ok(())
        }
        STOP_REQ => s.write_all(b"NOEXIST").await,
        _ => Ok(()),
    }
}

/// `ALIVE2_REQ`: registers the name for as long as this connection stays open.
async fn register(
    st: Arc<State>,
    mut s: TcpStream,
    b: &[u8],
    _held: super::net::OwnedSemaphorePermit,
) -> std::io::Result<()> {
    let parsed = (|| {
        let u16at =
            |i: usize| -> Option<u16> { Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?])) };
        let port = u16at(0)?;
        let node_type = *b.get(2)?;
        let protocol = *b.get(3)?;
        let high = u16at(4)?;
        let low = u16at(6)?;
        let nlen = u16at(8)? as usize;
        let name = b.get(10..10 + nlen)?;
        let elen = u16at(10 + nlen)? as usize;
        let extra = b.get(12 + nlen..12 + nlen + elen)?;
        Some((
            port,
            node_type,
            protocol,
            high,
            low,
            name.to_vec(),
            extra.to_vec(),
        ))
    })();
    let Some((port, node_type, protocol, high, low, name, extra)) = parsed else {
        return s.write_all(&[ALIVE2_X_RESP, 1, 0, 0, 0, 0]).await;
    };
    if !valid_name(&name) {
        return s.write_all(&[ALIVE2_X_RESP, 1, 0, 0, 0, 0]).await;
    }
    let name = String::from_utf8_lossy(&name).into_owned();
    let (serial, creation) = {
        let mut n = st.next.lock();
        n.0 += 1;
        n.1 = n.1.wrapping_add(1).max(1);
        (n.0, n.1)
    };
    let taken = {
        let mut nodes = st.nodes.lock();
        let taken = nodes.contains_key(&name);
        if !taken {
            nodes.insert(
                name.clone(),
                Entry {
                    port,
                    node_type,
                    protocol,
                    high,
                    low,
                    extra,
                    serial,
                },
            );
        }
        taken
    };
    if taken {
        return s.write_all(&[ALIVE2_X_RESP, 1, 0, 0, 0, 0]).await;
    }
    let mut out = vec![ALIVE2_X_RESP, 0];
    out.extend_from_slice(&creation.to_be_bytes());
    let r = s.write_all(&out).await;
    if r.is_ok() {
        // Held until the node closes the connection (or sends anything: not allowed).
        let mut buf = [0u8; 64];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    }
    {
        let mut nodes = st.nodes.lock();
        if nodes.get(&name).is_some_and(|e| e.serial == serial) {
            nodes.remove(&name);
        }
    }
    r
}
