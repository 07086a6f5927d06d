//! The client side of the observer's HTTPS (`bt top https://ADDR --ca FILE`, `--tls CONFIG`):
//! a blocking rustls connection for [`super::top`].
//!
//! CONFIG is the file format of `--observe-tls`/`--dist-tls` (`crate::base::tls_files`), read
//! from the client's point of view:
//!
//! * `cacertfile` — the CA(s) the server's certificate must chain to (`--ca FILE` wins);
//! * `certfile` / `keyfile` (optional) — the client's own certificate, for observers that
//!   require one (mutual TLS);
//! * `verify = verify_none` — the server's certificate is not checked (testing only: anyone
//!   on the path can read and change the tree).
//!
//! The server's certificate must be valid for the name the client connects to: the host of
//! ADDR, or `--server-name NAME` (an observer bound to `0.0.0.0` is reached by one of the
//! names its certificate carries).

use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::base::tls_files::{certs, NoVerify, TlsFiles};

/// A TLS stream to the observer.
pub(crate) type TlsStream = StreamOwned<ClientConnection, TcpStream>;

const FLAG: &str = "bt top";

/// What `bt top` was told about TLS.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClientTls {
    /// `--tls CONFIG`.
    pub config: Option<PathBuf>,
    /// `--ca FILE`.
    pub ca: Option<PathBuf>,
    /// `--server-name NAME` (default: the host of ADDR).
    pub server_name: Option<String>,
}

impl ClientTls {
    /// Whether any TLS option was given.
    pub(crate) fn any(&self) -> bool {
        self.config.is_some() || self.ca.is_some() || self.server_name.is_some()
    }

    /// The client configuration these options describe.
    pub(crate) fn client_config(&self) -> Result<ClientConfig, String> {
        let files = match &self.config {
            Some(p) => Some(TlsFiles::read_client("--tls", p)?),
            None => None,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let b = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("{FLAG}: {e}"))?;
        let ca = match (&self.ca, &files) {
            (Some(p), _) => Some(p.display().to_string()),
            (None, Some(f)) => f.cacertfile.clone(),
            (None, None) => None,
        };
        let verify = self.ca.is_some() || files.as_ref().is_none_or(|f| f.verify);
        let b = if verify {
            let Some(ca) = ca else {
                return Err(format!(
                    "{FLAG}: HTTPS needs the CA that signed the observer's certificate: --ca FILE \
                     (or cacertfile in --tls CONFIG)"
                ));
            };
            let mut roots = RootCertStore::empty();
            for c in certs("--ca", &ca)? {
                roots
                    .add(c)
                    .map_err(|e| format!("--ca: bad CA certificate in {ca}: {e}"))?;
            }
            b.with_root_certificates(roots)
        } else {
            b.dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        };
        let mut cfg = match files.filter(|f| !f.certfile.is_empty()) {
            Some(f) => b
                .with_client_auth_cert(f.chain()?, f.key()?)
                .map_err(|e| format!("--tls: {e}"))?,
            None => b.with_no_client_auth(),
        };
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(cfg)
    }
}

/// Connects TLS over `tcp` to the server named `name` and completes the handshake (so a
/// refused certificate is reported here, not as a failed read later).
pub fn connect(cfg: ClientConfig, name: &str, tcp: TcpStream) -> Result<TlsStream, String> {
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    let server = ServerName::try_from(bare.to_string())
        .map_err(|e| format!("{FLAG}: bad server name {name}: {e}"))?;
    let conn = ClientConnection::new(Arc::new(cfg), server).map_err(|e| format!("{FLAG}: {e}"))?;
    let mut s = StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn
            .complete_io(&mut s.sock)
            .map_err(|e| format!("TLS handshake with {name} failed: {e}"))?;
    }
    Ok(s)
}
