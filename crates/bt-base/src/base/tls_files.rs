//! The TLS configuration file shared by `bt run --dist-tls CONFIG` (`crate::dist::tls`) and
//! `bt run --observe-tls CONFIG` (`crate::observe::tls`): `key = value` lines (`#` starts a
//! comment) naming PEM files, after Erlang's `ssl_dist_optfile` options, and the PEM loading
//! both servers build their rustls configurations from.
//!
//! ```text
//! certfile   = /path/node.pem     # this side's certificate chain (PEM)
//! keyfile    = /path/node.key     # its private key (PEM; PKCS#8, PKCS#1 or SEC1); default certfile
//! cacertfile = /path/ca.pem       # the CA(s) that sign the peers' certificates
//! verify     = verify_peer        # the default; verify_none turns peer checks off
//! ```
//!
//! Errors are messages prefixed with the flag that named the file (`--dist-tls: …`).

use std::io::BufReader;
use std::path::Path;

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::DigitallySignedStruct;

/// A parsed configuration file (paths as written; nothing is read yet).
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The flag that named the file, for messages (`--dist-tls`).
    pub flag: &'static str,
    pub certfile: String,
    pub keyfile: String,
    pub cacertfile: Option<String>,
    /// False for `verify = verify_none`.
    pub verify: bool,
}

impl TlsFiles {
    /// Reads and parses the configuration file at `path` (`certfile` is required).
    pub fn read(flag: &'static str, path: &Path) -> Result<TlsFiles, String> {
        Self::parse(flag, path, true)
    }

    /// As [`TlsFiles::read`] for a client (`bt top --tls`), whose own certificate is needed
    /// only by servers that ask for one: a missing `certfile` leaves `certfile` and
    /// `keyfile` empty.
    pub fn read_client(flag: &'static str, path: &Path) -> Result<TlsFiles, String> {
        Self::parse(flag, path, false)
    }

    fn parse(flag: &'static str, path: &Path, need_cert: bool) -> Result<TlsFiles, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{flag}: cannot read {}: {e}", path.display()))?;
        let (mut cert, mut keyf, mut ca, mut verify) = (None, None, None, true);
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(format!(
                    "{flag}: {}:{}: expected key = value",
                    path.display(),
                    i + 1
                ));
            };
            let v = v.trim().to_string();
            match k.trim() {
                "certfile" => cert = Some(v),
                "keyfile" => keyf = Some(v),
                "cacertfile" => ca = Some(v),
                "verify" => verify = v != "verify_none",
                other => {
                    return Err(format!(
                        "{flag}: {}:{}: unknown key '{other}'",
                        path.display(),
                        i + 1
                    ))
                }
            }
        }
        let certfile = match cert {
            Some(c) => c,
            None if !need_cert => String::new(),
            None => return Err(format!("{flag}: certfile is missing")),
        };
        Ok(TlsFiles {
            flag,
            keyfile: keyf.unwrap_or_else(|| certfile.clone()),
            certfile,
            cacertfile: ca,
            verify,
        })
    }

    /// The certificate chain of `certfile`.
    pub fn chain(&self) -> Result<Vec<CertificateDer<'static>>, String> {
        certs(self.flag, &self.certfile)
    }

    /// The private key of `keyfile`.
    pub fn key(&self) -> Result<PrivateKeyDer<'static>, String> {
        key(self.flag, &self.keyfile)
    }
}

/// Every certificate of the PEM file at `path` (at least one).
pub fn certs(flag: &str, path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{flag}: cannot read {path}: {e}"))?;
    let v: Result<Vec<_>, _> = rustls_pemfile::certs(&mut BufReader::new(f)).collect();
    let v = v.map_err(|e| format!("{flag}: bad certificate in {path}: {e}"))?;
    if v.is_empty() {
        return Err(format!("{flag}: no certificate in {path}"));
    }
    Ok(v)
}

/// The first private key of the PEM file at `path`.
pub fn key(flag: &str, path: &str) -> Result<PrivateKeyDer<'static>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{flag}: cannot read {path}: {e}"))?;
    rustls_pemfile::private_key(&mut BufReader::new(f))
        .map_err(|e| format!("{flag}: bad key in {path}: {e}"))?
        .ok_or_else(|| format!("{flag}: no private key in {path}"))
}

/// The client side of `verify = verify_none`: accepts any server certificate (handshake
/// signatures are still checked). Shared by the clients that read this file format.
#[derive(Debug)]
pub struct NoVerify(pub Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TlsFiles, String> {
        let dir = crate::scratch::dir("tls-files");
        let p = dir.join("tls.conf");
        std::fs::write(&p, text).unwrap();
        TlsFiles::read("--x-tls", &p)
    }

    #[test]
    fn the_configuration_file_parses_and_names_its_mistakes() {
        let f = parse(
            "# observer\ncertfile = /a.pem\ncacertfile=/ca.pem # CA\n\nverify = verify_none\n",
        )
        .unwrap();
        assert_eq!(f.certfile, "/a.pem");
        assert_eq!(f.keyfile, "/a.pem");
        assert_eq!(f.cacertfile.as_deref(), Some("/ca.pem"));
        assert!(!f.verify);
        let e = parse("certfile /a.pem\n").unwrap_err();
        assert!(
            e.starts_with("--x-tls: ") && e.ends_with(":1: expected key = value"),
            "{e}"
        );
        let e = parse("certfile = /a\ncolour = blue\n").unwrap_err();
        assert!(e.ends_with(":2: unknown key 'colour'"), "{e}");
        assert_eq!(
            parse("keyfile = /k\n").unwrap_err(),
            "--x-tls: certfile is missing"
        );
        let dir = crate::scratch::dir("tls-files-client");
        let p = dir.join("client.conf");
        std::fs::write(&p, "cacertfile = /ca.pem\n").unwrap();
        let c = TlsFiles::read_client("--x-tls", &p).unwrap();
        assert_eq!((c.certfile.as_str(), c.keyfile.as_str()), ("", ""));
        let e = TlsFiles::read("--x-tls", Path::new("/nonexistent/tls.conf")).unwrap_err();
        assert!(
            e.starts_with("--x-tls: cannot read /nonexistent/tls.conf"),
            "{e}"
        );
        let e = certs("--x-tls", "/nonexistent.pem").unwrap_err();
        assert!(e.contains("cannot read /nonexistent.pem"), "{e}");
    }
}
