//! HTTPS for the observer: `bt run --observe ADDR --observe-tls CONFIG`.
//!
//! Without TLS the observer serves only on a loopback address (anyone who can reach the port
//! reads the tree, and nothing protects it on the wire). With TLS it may bind any address.
//! CONFIG is the file format of `--dist-tls` (`crate::base::tls_files`; the same file can
//! serve both):
//!
//! * `certfile` / `keyfile` — the server's certificate chain and key (PEM);
//! * `cacertfile` (optional) — when given (and `verify` is not `verify_none`), clients must
//!   present a certificate this CA signed (mutual TLS: only holders of such a certificate
//!   read the tree). Without it the server authenticates itself only.
//!
//! The Host check (DNS rebinding, `routes::host_ok`) also accepts, with the bound port, any
//! name the server's certificate is valid for (a browser reaching the server by that name has
//! already checked it against the certificate).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{RootCertStore, ServerConfig};

use crate::base::tls_files::{certs, TlsFiles};

/// A loaded `--observe-tls` configuration.
#[derive(Clone)]
pub struct ObserveTls {
    pub(crate) acceptor: tokio_rustls::TlsAcceptor,
    /// The server's own (leaf) certificate, for the Host check.
    leaf: CertificateDer<'static>,
}

const FLAG: &str = "--observe-tls";

impl ObserveTls {
    /// Reads the configuration file and the files it names.
    pub fn load(path: &Path) -> Result<ObserveTls, String> {
        Self::from_files(&TlsFiles::read(FLAG, path)?)
    }

    /// Builds the server configuration from already parsed `files`.
    pub(crate) fn from_files(files: &TlsFiles) -> Result<ObserveTls, String> {
        let chain = files.chain()?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let b = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("{FLAG}: {e}"))?;
        let b = match (&files.cacertfile, files.verify) {
            (Some(ca), true) => {
                let mut roots = RootCertStore::empty();
                for c in certs(FLAG, ca)? {
                    roots
                        .add(c)
                        .map_err(|e| format!("{FLAG}: bad CA certificate in {ca}: {e}"))?;
                }
                let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| format!("{FLAG}: {e}"))?;
                b.with_client_cert_verifier(v)
            }
            _ => b.with_no_client_auth(),
        };
        let mut cfg = b
            .with_single_cert(chain.clone(), files.key()?)
            .map_err(|e| format!("{FLAG}: {e}"))?;
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ObserveTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(cfg)),
            leaf: chain[0].clone(),
        })
    }

    /// Whether `host` (a Host header) is `NAME:port` with a NAME the certificate is valid
    /// for (a DNS name or an IP address in its subject alternative names).
    pub(crate) fn host_ok(&self, host: Option<&str>, port: u16) -> bool {
        let Some((name, p)) = host.and_then(|h| h.rsplit_once(':')) else {
            return false;
        };
        if p.parse::<u16>().ok() != Some(port) {
            return false;
        }
        let name = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name)
            .to_ascii_lowercase();
        let Ok(server_name) = ServerName::try_from(name) else {
            return false;
        };
        let Ok(cert) = webpki::EndEntityCert::try_from(&self.leaf) else {
            return false;
        };
        cert.verify_is_valid_for_subject_name(&server_name).is_ok()
    }
}
