//! TLS distribution (`--dist-tls CONFIG`) with rustls, interoperable
//! with `erl -proto_dist inet_tls -ssl_dist_optfile FILE`.
//!
//! CONFIG is a small text file of `key = value` lines (`#` starts a comment), named after
//! the `ssl_dist_optfile` options it mirrors (read by `crate::base::tls_files`, which
//! `--observe-tls` shares; `cacertfile` is required here):
//!
//! ```text
//! certfile   = /path/node.pem     # this node's certificate chain (PEM)
//! keyfile    = /path/node.key     # its private key (PEM; PKCS#8, PKCS#1 or SEC1)
//! cacertfile = /path/ca.pem       # the CA(s) that sign peers' certificates
//! verify     = verify_peer        # the default; verify_none turns peer checks off
//! ```
//!
//! Both directions verify the peer's certificate against `cacertfile` (mutual TLS): the
//! acceptor requires a client certificate, the initiator checks the server's certificate
//! against the host part of the node name (a DNS name or an IP address in its SANs).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use super::handshake::Stream;
use super::net::TcpStream;
use crate::base::tls_files::{certs, NoVerify, TlsFiles};

/// A loaded `--dist-tls` configuration.
pub struct Tls {
    client: tokio_rustls::TlsConnector,
    server: tokio_rustls::TlsAcceptor,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Tls {
    /// Reads the configuration file and the files it names.
    pub fn load(path: &Path) -> Result<Tls, String> {
        let files = TlsFiles::read("--dist-tls", path)?;
        let verify = files.verify;
        let ca = files
            .cacertfile
            .clone()
            .ok_or("--dist-tls: cacertfile is missing")?;
        let chain = files.chain()?;
        let mut roots = RootCertStore::empty();
        for c in certs("--dist-tls", &ca)? {
            roots
                .add(c)
                .map_err(|e| format!("--dist-tls: bad CA certificate in {ca}: {e}"))?;
        }
        let roots = Arc::new(roots);
        let p = provider();
        let server_b = ServerConfig::builder_with_provider(p.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("--dist-tls: {e}"))?;
        let server_b = if verify {
            let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                roots.clone(),
                p.clone(),
            )
            .build()
            .map_err(|e| format!("--dist-tls: {e}"))?;
            server_b.with_client_cert_verifier(v)
        } else {
            server_b.with_no_client_auth()
        };
        let server = server_b
            .with_single_cert(chain.clone(), files.key()?)
            .map_err(|e| format!("--dist-tls: {e}"))?;
        let client_b = ClientConfig::builder_with_provider(p)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("--dist-tls: {e}"))?;
        let client_b = if verify {
            client_b.with_root_certificates(roots)
        } else {
            client_b
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
        };
        let client = client_b
            .with_client_auth_cert(chain, files.key()?)
            .map_err(|e| format!("--dist-tls: {e}"))?;
        Ok(Tls {
            client: tokio_rustls::TlsConnector::from(Arc::new(client)),
            server: tokio_rustls::TlsAcceptor::from(Arc::new(server)),
        })
    }

    /// TLS client side over `tcp`, checking the certificate against `host`.
    pub async fn connect(&self, host: &str, tcp: TcpStream) -> Result<Stream, TlsError> {
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| TlsError::Other(format!("bad TLS server name {host}: {e}")))?;
        let s = self.client.connect(name, tcp).await.map_err(|e| {
            use std::io::ErrorKind as K;
            match e.kind() {
                // A node without TLS distribution reads the ClientHello as a handshake
                // message it cannot take and closes the connection.
                K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted => TlsError::Closed,
                _ => TlsError::Other(format!("TLS: {e}")),
            }
        })?;
        Ok(Box::new(s))
    }

    /// TLS server side over `tcp` (the peer must present a certificate the CA signed).
    pub async fn accept(&self, tcp: TcpStream) -> Result<Stream, TlsError> {
        let s = self.server.accept(tcp).await.map_err(|e| {
            let plain = e
                .get_ref()
                .and_then(|x| x.downcast_ref::<rustls::Error>())
                .is_some_and(|x| {
                    matches!(
                        x,
                        rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
                    )
                });
            if plain {
                TlsError::Plain
            } else {
                TlsError::Other(format!("TLS: {e}"))
            }
        })?;
        Ok(Box::new(s))
    }
}

/// Why a TLS connection could not be set up.
#[derive(Debug)]
pub enum TlsError {
    /// Dialing: the peer closed the connection during the TLS handshake (what a node
    /// without TLS distribution does).
    Closed,
    /// Accepting: the dialer sent something other than TLS records (a node without TLS
    /// distribution).
    Plain,
    Other(String),
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::Closed => {
                f.write_str("the peer closed the connection during the TLS handshake")
            }
            TlsError::Plain => {
                f.write_str("the peer does not run TLS distribution and this node does")
            }
            TlsError::Other(m) => f.write_str(m),
        }
    }
}
