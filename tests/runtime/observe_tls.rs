//! The observer over HTTPS (`--observe ADDR --observe-tls CONFIG`): certificates
//! made per test with rcgen (a CA, the server's certificate for localhost/127.0.0.1/
//! observer.test, a client certificate, and a rogue client certificate from another CA).
//!
//! Shown: without TLS a non-loopback address is refused; with TLS the server binds 0.0.0.0
//! (the test still connects only to 127.0.0.1) and answers over HTTPS; plain HTTP on the TLS
//! port gets no tree; the Host check accepts the certificate's names and refuses others;
//! with `cacertfile`, a client without a certificate or with the rogue one is refused and one
//! with a CA-signed certificate is served; `bt run --observe-tls` end to end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use bt::observe::{ObserveConfig, ObserveServer, ObserveTls, TreeSource};
use bt::runtime::snapshot::{Snapshot, Status};
use bt::runtime::Pid;

/// A source serving an empty tree.
struct Empty;

impl TreeSource for Empty {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            roots: Vec::new(),
            captured_at: 0,
            node: "nonode@nohost".into(),
        }
    }
    fn status(&self, _pid: Pid) -> Option<Status> {
        None
    }
}

/// A temp directory removed on drop (also when the test fails).
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("bt-observe-tls-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    Ca {
        cert: p.self_signed(&key).unwrap(),
        key,
    }
}

/// A certificate for `names` signed by `ca`: (certificate PEM, key PEM).
fn leaf(ca: &Ca, names: &[&str]) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let p =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let cert = p.signed_by(&key, &ca.cert, &ca.key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Everything a test needs: the files, and the PEMs for the client side.
struct Pki {
    dir: Dir,
    ca_pem: String,
    /// Server only (no client certificates asked for).
    conf: String,
    /// Mutual TLS: clients need a certificate of the CA.
    mutual_conf: String,
    client: (String, String),
    rogue: (String, String),
}

fn pki(tag: &str) -> Pki {
    let dir = Dir::new(tag);
    let ca = ca("bt observer test CA");
    let (cert, key) = leaf(&ca, &["localhost", "127.0.0.1", "observer.test"]);
    let ca_file = dir.write("ca.pem", &ca.cert.pem());
    let cert_file = dir.write("server.pem", &cert);
    let key_file = dir.write("server.key", &key);
    let conf = dir.write(
        "observe.conf",
        &format!("certfile = {cert_file}\nkeyfile = {key_file}\n"),
    );
    let mutual_conf = dir.write(
        "mutual.conf",
        &format!("certfile = {cert_file}\nkeyfile = {key_file}\ncacertfile = {ca_file}\n"),
    );
    let client = leaf(&ca, &["client.test"]);
    let rogue = leaf(&self::ca("rogue CA"), &["client.test"]);
    Pki {
        ca_pem: ca.cert.pem(),
        dir,
        conf,
        mutual_conf,
        client,
        rogue,
    }
}

fn pem_certs(pem: &str) -> Vec<CertificateDer<'static>> {
    rustls_pemfile::certs(&mut pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap()
}

fn pem_key(pem: &str) -> PrivateKeyDer<'static> {
    rustls_pemfile::private_key(&mut pem.as_bytes())
        .unwrap()
        .unwrap()
}

/// `GET path` over TLS to 127.0.0.1:`port` (SNI `sni`, header `Host: host`), trusting
/// `ca_pem`, presenting `client` if given. Answers the whole response, or the I/O error.
fn https_get(
    port: u16,
    sni: &str,
    host: &str,
    path: &str,
    ca_pem: &str,
    client: Option<&(String, String)>,
) -> std::io::Result<String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in pem_certs(ca_pem) {
        roots.add(c).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let cfg = match client {
        Some((cert, key)) => b
            .with_client_auth_cert(pem_certs(cert), pem_key(key))
            .unwrap(),
        None => b.with_no_client_auth(),
    };
    let conn = rustls::ClientConnection::new(
        Arc::new(cfg),
        ServerName::try_from(sni.to_string()).unwrap(),
    )
    .unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(
        tls,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = Vec::new();
    match tls.read_to_end(&mut out) {
        Ok(_) => {}
        // A server that closes without close_notify: what arrived still counts.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => {}
        Err(e) => return Err(e),
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn start(addr: &str, conf: &str) -> ObserveServer {
    let tls = ObserveTls::load(Path::new(conf)).unwrap();
    ObserveServer::start_with(addr, Arc::new(Empty), ObserveConfig::default(), Some(tls)).unwrap()
}

#[test]
fn a_non_loopback_address_needs_tls_and_is_served_over_https() {
    let p = pki("https");
    let err = ObserveServer::start("0.0.0.0:0", Arc::new(Empty), ObserveConfig::default())
        .err()
        .expect("a non-loopback address without TLS is refused");
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("--observe-tls"), "{err}");

    let srv = start("0.0.0.0:0", &p.conf);
    let port = srv.local_addr().port();
    assert!(!srv.local_addr().ip().is_loopback());
    let resp = https_get(
        port,
        "localhost",
        &format!("localhost:{port}"),
        "/runtime/processes",
        &p.ca_pem,
        None,
    )
    .unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("\"schema\":\"bt.processes/1\""), "{resp}");
    // A name the certificate is valid for passes the Host check; another does not.
    let resp = https_get(
        port,
        "observer.test",
        &format!("observer.test:{port}"),
        "/",
        &p.ca_pem,
        None,
    )
    .unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("text/html"), "{resp}");
    for bad in [
        format!("rebound.example:{port}"),
        "observer.test:1".to_string(),
    ] {
        let resp = https_get(port, "localhost", &bad, "/", &p.ca_pem, None).unwrap();
        assert!(resp.starts_with("HTTP/1.1 421"), "{bad}: {resp}");
    }
    // Plain HTTP on the TLS port gets no tree.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = write!(
        s,
        "GET /runtime/processes HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"
    );
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains("bt.processes"), "{out}");
    // A client that does not trust the server's CA refuses it.
    let other = ca("another CA").cert.pem();
    let r = https_get(port, "localhost", "localhost:1", "/", &other, None);
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn with_a_client_ca_only_certified_clients_read_the_tree() {
    let p = pki("mutual");
    let srv = start("127.0.0.1:0", &p.mutual_conf);
    let port = srv.local_addr().port();
    let host = format!("localhost:{port}");
    let get = |client| {
        https_get(
            port,
            "localhost",
            &host,
            "/runtime/processes",
            &p.ca_pem,
            client,
        )
    };
    let ok = get(Some(&p.client)).unwrap();
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    for (what, client) in [
        ("no certificate", None),
        ("a rogue certificate", Some(&p.rogue)),
    ] {
        match get(client) {
            Err(_) => {}
            Ok(resp) => assert!(!resp.contains("bt.processes"), "{what}: {resp}"),
        }
    }
    // The server still serves after refusing them.
    assert!(get(Some(&p.client)).unwrap().starts_with("HTTP/1.1 200"));
}

#[test]
fn bad_configurations_are_reported() {
    let p = pki("bad");
    let missing = p.dir.write("missing.conf", "keyfile = /nowhere.key\n");
    let e = ObserveTls::load(Path::new(&missing)).err().unwrap();
    assert_eq!(e, "--observe-tls: certfile is missing");
    let nofile = p.dir.write("nofile.conf", "certfile = /nowhere/cert.pem\n");
    let e = ObserveTls::load(Path::new(&nofile)).err().unwrap();
    assert!(
        e.starts_with("--observe-tls: cannot read /nowhere/cert.pem"),
        "{e}"
    );
    let e = ObserveTls::load(Path::new("/nowhere/observe.conf"))
        .err()
        .unwrap();
    assert!(e.starts_with("--observe-tls: cannot read"), "{e}");
}

#[test]
fn bt_run_serves_the_observer_over_https() {
    let p = pki("cli");
    let script = p.dir.write("wait.bt", "Console readLine\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args([
            "run",
            "--observe",
            "0.0.0.0:0",
            "--observe-tls",
            &p.conf,
            &script,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bt");
    // Killed when the test fails before it ends by itself.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stderr = child.stderr.take().unwrap();
    let mut kid = Kill(child);
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("observing on https://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    let port = addr.port();
    let resp = https_get(
        port,
        "localhost",
        &format!("localhost:{port}"),
        "/runtime/processes",
        &p.ca_pem,
        None,
    )
    .unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    // End the program: its readLine returns.
    drop(kid.0.stdin.take());
    let st = kid.0.wait().unwrap();
    assert_eq!(st.code(), Some(0));

    // The flag needs --observe; a bad CONFIG is a usage error before anything runs.
    let out = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["run", "--observe-tls", &p.conf, &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args([
            "run",
            "--observe",
            "127.0.0.1:0",
            "--observe-tls",
            "/nowhere.conf",
            &script,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--observe-tls: cannot read /nowhere.conf"),
        "{err}"
    );
}

/// `bt top ARGS… --once` against the observer: (exit code, stdout, stderr).
fn top(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("top")
        .args(args)
        .arg("--once")
        .stdin(Stdio::null())
        .output()
        .expect("run bt top");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bt_top_reads_an_observer_over_https() {
    let p = pki("top");
    let ca = p.dir.write("ca-copy.pem", &p.ca_pem);
    let rogue_ca = p
        .dir
        .write("rogue-ca.pem", &self::ca("another CA").cert.pem());
    let (cert, key) = &p.client;
    let cert = p.dir.write("client.pem", cert);
    let key = p.dir.write("client.key", key);
    let client_conf = p.dir.write(
        "client.conf",
        &format!("certfile = {cert}\nkeyfile = {key}\ncacertfile = {ca}\n"),
    );
    let trusting_conf = p.dir.write(
        "trusting.conf",
        &format!("certfile = {cert}\nkeyfile = {key}\nverify = verify_none\n"),
    );
    let ca_only_conf = p.dir.write("ca-only.conf", &format!("cacertfile = {ca}\n"));

    // Server authentication only: the CA is enough; the name comes from ADDR or --server-name.
    let srv = start("0.0.0.0:0", &p.conf);
    let port = srv.local_addr().port();
    let https = format!("https://127.0.0.1:{port}/");
    let shown = |r: &(i32, String, String)| {
        r.0 == 0
            && r.1.starts_with("bt top · nonode@nohost · 0 supervisors")
            && r.1.contains("(no processes)")
    };
    let r = top(&[&https, "--ca", &ca]);
    assert!(shown(&r), "{r:?}");
    let r = top(&[
        &format!("127.0.0.1:{port}"),
        "--server-name",
        "observer.test",
        "--ca",
        &ca,
    ]);
    assert!(shown(&r), "{r:?}");
    let r = top(&[&https, "--tls", &ca_only_conf]);
    assert!(shown(&r), "{r:?}");
    // A server whose certificate the CA did not sign, or that is not valid for the name.
    let r = top(&[&https, "--ca", &rogue_ca]);
    assert_eq!(r.0, 1, "{r:?}");
    assert!(r.2.contains("TLS handshake with 127.0.0.1 failed"), "{r:?}");
    let r = top(&[&https, "--ca", &ca, "--server-name", "elsewhere.test"]);
    assert_eq!(r.0, 1, "{r:?}");
    // HTTPS without a CA is a usage error; plain HTTP on the TLS port gets no tree.
    let r = top(&[&https]);
    assert_eq!(r.0, 2, "{r:?}");
    assert!(r.2.contains("--ca FILE"), "{r:?}");
    let r = top(&[&format!("127.0.0.1:{port}")]);
    assert_eq!(r.0, 1, "{r:?}");
    let r = top(&[&https, "--ca", "/nowhere/ca.pem"]);
    assert_eq!(r.0, 2, "{r:?}");
    assert!(r.2.contains("cannot read /nowhere/ca.pem"), "{r:?}");
    drop(srv);

    // Mutual TLS: the client's certificate comes from --tls CONFIG.
    let srv = start("0.0.0.0:0", &p.mutual_conf);
    let https = format!("https://127.0.0.1:{}", srv.local_addr().port());
    let r = top(&[&https, "--tls", &client_conf]);
    assert!(shown(&r), "{r:?}");
    let r = top(&[&https, "--tls", &trusting_conf]);
    assert!(shown(&r), "{r:?}");
    let r = top(&[&https, "--ca", &ca]);
    assert_eq!(r.0, 1, "a client without a certificate is refused: {r:?}");
    assert!(r.1.is_empty(), "{r:?}");
}
