//! The port mapper, client side: a node registers its name and port with
//! EPMD on its host (`ERL_EPMD_PORT`, default 4369) and keeps the registration connection
//! open for its lifetime; peers are looked up there. When no port mapper answers, the node
//! starts `bt epmd` ([`super::epmd_server`]) as a detached daemon that outlives it, as `erl`
//! starts `epmd`, and registers with it.
//!
//! bt nodes register with the extra data [`BT_EXTRA`], so a bt node dialing a peer knows
//! whether it is a bt node (visible link) or an Erlang one (hidden link).

use std::time::Duration;

use erl_dist::epmd::{EpmdClient, NodeEntry};

use super::net::{sleep, timeout, Compat, TcpStream, TokioAsyncReadCompatExt};

/// The `extra` field of a bt node's EPMD entry.
pub const BT_EXTRA: &[u8] = b"bt";
/// How long a port-mapper request may take.
const EPMD_TIMEOUT: Duration = Duration::from_secs(5);

/// The port mapper's port: `ERL_EPMD_PORT`, else 4369.
pub fn port() -> u16 {
    std::env::var("ERL_EPMD_PORT")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(erl_dist::epmd::DEFAULT_EPMD_PORT)
}

async fn client(host: &str, port: u16) -> std::io::Result<EpmdClient<Compat<TcpStream>>> {
    let s = TcpStream::connect((host, port)).await?;
    let _ = s.set_nodelay(true);
    Ok(EpmdClient::new(s.compat()))
}

/// A live registration: dropping it closes the connection, which unregisters the name.
pub struct Registration {
    _conn: Compat<TcpStream>,
}

/// Registers `name` (the part before `@`) at `port`; starts `bt epmd` if no port mapper
/// answers on 127.0.0.1. Answers the registration and the node's creation number.
pub async fn register(
    epmd_port: u16,
    name: &str,
    port: u16,
    hidden: bool,
) -> Result<(Registration, u32), String> {
    let c = match client("127.0.0.1", epmd_port).await {
        Ok(c) => c,
        Err(_) => {
            start_daemon(epmd_port)?;
            wait_for_daemon(epmd_port).await?
        }
    };
    let mut entry = if hidden {
        NodeEntry::new_hidden(name, port)
    } else {
        NodeEntry::new(name, port)
    };
    entry.extra = BT_EXTRA.to_vec();
    match timeout(EPMD_TIMEOUT, c.register(entry)).await {
        Ok(Ok((conn, creation))) => Ok((Registration { _conn: conn }, creation.get())),
        Ok(Err(erl_dist::epmd::EpmdError::RegisterNodeError { .. })) => Err(format!(
            "the name '{name}' is already registered with the port mapper on this host"
        )),
        Ok(Err(e)) => Err(format!("cannot register with the port mapper: {e}")),
        Err(_) => Err("the port mapper did not answer".into()),
    }
}

/// Starts `bt epmd --port PORT` detached (its own session, no inherited output) so that it
/// outlives this node.
fn start_daemon(epmd_port: u16) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot start bt epmd: {e}"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("epmd")
        .arg("--port")
        .arg(epmd_port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    super::sys::new_session(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start bt epmd: {e}"))?;
    // Reap it if it fails at once (port taken by a racing starter); otherwise it lives on.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

/// Waits (up to 5 s) until a port mapper answers on `epmd_port` — one freshly started, or
/// one that another node started at the same time.
async fn wait_for_daemon(epmd_port: u16) -> Result<EpmdClient<Compat<TcpStream>>, String> {
    let mut delay = Duration::from_millis(5);
    let start = std::time::Instant::now();
    loop {
        if let Ok(c) = client("127.0.0.1", epmd_port).await {
            return Ok(c);
        }
        if start.elapsed() > EPMD_TIMEOUT {
            return Err(format!(
                "no port mapper answers on port {epmd_port} and bt epmd did not start"
            ));
        }
        sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}

/// Looks `name` up in the port mapper on `host`: its port and whether it is a bt node.
pub async fn lookup(host: &str, epmd_port: u16, name: &str) -> Result<Option<(u16, bool)>, String> {
    let work = async {
        let c = client(host, epmd_port)
            .await
            .map_err(|e| format!("no port mapper answers on {host}:{epmd_port}: {e}"))?;
        c.get_node(name)
            .await
            .map_err(|e| format!("the port mapper on {host} failed: {e}"))
    };
    match timeout(EPMD_TIMEOUT, work).await {
        Ok(Ok(Some(e))) => Ok(Some((e.port, e.extra == BT_EXTRA))),
        Ok(Ok(None)) => Ok(None),
        Ok(Err(m)) => Err(m),
        Err(_) => Err(format!("the port mapper on {host} did not answer")),
    }
}

/// `epmd -names`: the names registered with the port mapper on 127.0.0.1:`port`.
pub fn names(port: u16) -> Result<Vec<(String, u16)>, String> {
    let rt = super::net::current_thread().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let c = client("127.0.0.1", port)
            .await
            .map_err(|e| format!("epmd: cannot connect to local epmd on port {port}: {e}"))?;
        match timeout(EPMD_TIMEOUT, c.get_names()).await {
            Ok(r) => r.map_err(|e| format!("epmd: {e}")),
            Err(_) => Err("epmd: no answer".into()),
        }
    })
}

/// `epmd -kill`: asks the port mapper on 127.0.0.1:`port` to stop.
pub fn kill(port: u16) -> Result<(), String> {
    let rt = super::net::current_thread().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let c = client("127.0.0.1", port)
            .await
            .map_err(|e| format!("epmd: cannot connect to local epmd on port {port}: {e}"))?;
        match timeout(EPMD_TIMEOUT, c.kill()).await {
            Ok(Ok(s)) if s == "OK" => Ok(()),
            Ok(Ok(s)) if s == "NO" => {
                Err("epmd: Killing not allowed - living nodes in database.".into())
            }
            Ok(Ok(s)) => Err(format!("epmd: {s}")),
            Ok(Err(e)) => Err(format!("epmd: {e}")),
            Err(_) => Err("epmd: no answer".into()),
        }
    })
}
