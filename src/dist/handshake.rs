//! The connection handshake (sequence in `dist/mod.rs` docs): both sides prove they know
//! the cookie by answering the other's random challenge with an HMAC-SHA256 keyed by it;
//! the cookie itself is never sent. Names, the hidden flag and the wire version are agreed
//! on the way.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::cookie::random_bytes;
use super::frame::{
    read_frame_max, write_frame, Frame, FrameError, Nonce, HANDSHAKE_VERSION, MAX_HANDSHAKE_FRAME,
    SUPPORTED_VERSIONS,
};
use super::net::{AsyncRead, AsyncWrite};

/// This node, as the handshake needs it.
pub struct Me<'a> {
    pub name: &'a str,
    pub hidden: bool,
    pub cookie: &'a [u8],
}

/// The peer after a successful handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreed {
    pub name: String,
    pub hidden: bool,
    pub version: u8,
}

/// Why a handshake failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HsError {
    /// The other side refused, with an error kind and a message.
    Refused { kind: String, message: String },
    /// The other side's answer to our challenge is wrong, or it refused ours: the cookies
    /// differ.
    Cookie,
    /// The stream ended or failed.
    Io(String),
    /// Something other than the expected frame arrived.
    Protocol(String),
}

const INITIATOR: &[u8] = b"bt-dist-1 initiator";
const ACCEPTOR: &[u8] = b"bt-dist-1 acceptor";

fn keyed(
    cookie: &[u8],
    label: &[u8],
    nonce: &Nonce,
    initiator: &str,
    acceptor: &str,
) -> Hmac<Sha256> {
    // HMAC accepts keys of any length.
    let mut m = match Hmac::<Sha256>::new_from_slice(cookie) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes a key of any length"),
    };
    m.update(label);
    m.update(nonce);
    for name in [initiator, acceptor] {
        m.update(&(name.len() as u32).to_be_bytes());
        m.update(name.as_bytes());
    }
    m
}

/// The MAC answering `nonce` (direction `label`) for the link `initiator` → `acceptor`.
pub fn mac(cookie: &[u8], label: &[u8], nonce: &Nonce, initiator: &str, acceptor: &str) -> Nonce {
    keyed(cookie, label, nonce, initiator, acceptor)
        .finalize()
        .into_bytes()
        .into()
}

fn verify(cookie: &[u8], label: &[u8], nonce: &Nonce, i: &str, a: &str, got: &Nonce) -> bool {
    keyed(cookie, label, nonce, i, a).verify_slice(got).is_ok()
}

fn nonce() -> Result<Nonce, HsError> {
    random_bytes().map_err(|e| HsError::Io(format!("no randomness: {e}")))
}

async fn read<R: AsyncRead + Unpin>(r: &mut R) -> Result<Result<Frame, FrameError>, HsError> {
    match read_frame_max(r, MAX_HANDSHAKE_FRAME).await {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Err(HsError::Io("connection closed during the handshake".into())),
        Err(e) => Err(HsError::Io(e.to_string())),
    }
}

async fn write<W: AsyncWrite + Unpin>(w: &mut W, f: &Frame) -> Result<(), HsError> {
    write_frame(w, f, HANDSHAKE_VERSION)
        .await
        .map_err(|e| HsError::Io(e.to_string()))
}

fn unexpected(f: Result<Frame, FrameError>) -> HsError {
    match f {
        Ok(Frame::Refuse { kind, message }) => HsError::Refused { kind, message },
        Ok(other) => HsError::Protocol(format!("unexpected frame {other:?}")),
        Err(FrameError::Version(v)) => HsError::Refused {
            kind: "wire_version_unsupported".into(),
            message: format!("the peer answered in wire-format version {v}"),
        },
        Err(e) => HsError::Protocol(e.to_string()),
    }
}

/// The connecting side: asks for node `to`.
pub async fn initiate<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    me: &Me<'_>,
    to: &str,
) -> Result<Agreed, HsError> {
    let hello = Frame::Hello {
        name: me.name.into(),
        to: to.into(),
        hidden: me.hidden,
        versions: SUPPORTED_VERSIONS.to_vec(),
    };
    write(s, &hello).await?;
    let (name, hidden, version, challenge) = match read(s).await? {
        Ok(Frame::Challenge {
            name,
            hidden,
            version,
            nonce,
        }) => (name, hidden, version, nonce),
        other => return Err(unexpected(other)),
    };
    if name != to {
        return Err(HsError::Protocol(format!("the peer is {name}, not {to}")));
    }
    if !SUPPORTED_VERSIONS.contains(&version) {
        return Err(HsError::Refused {
            kind: "wire_version_unsupported".into(),
            message: format!("{to} chose wire-format version {version}"),
        });
    }
    let mine = nonce()?;
    let answer = mac(me.cookie, INITIATOR, &challenge, me.name, to);
    write(
        s,
        &Frame::Response {
            nonce: mine,
            mac: answer,
        },
    )
    .await?;
    match read(s).await? {
        Ok(Frame::Ack { mac }) if verify(me.cookie, ACCEPTOR, &mine, me.name, to, &mac) => {
            Ok(Agreed {
                name,
                hidden,
                version,
            })
        }
        Ok(Frame::Ack { .. }) => Err(HsError::Cookie),
        Ok(Frame::Refuse { kind, .. }) if kind == "cookie" => Err(HsError::Cookie),
        other => Err(unexpected(other)),
    }
}

/// The accepting side.
pub async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    me: &Me<'_>,
) -> Result<Agreed, HsError> {
    let (name, to, hidden, versions) = match read(s).await? {
        Ok(Frame::Hello {
            name,
            to,
            hidden,
            versions,
        }) => (name, to, hidden, versions),
        Err(FrameError::Version(v)) => {
            let refuse = Frame::Refuse {
                kind: "wire_version_unsupported".into(),
                message: format!("{} does not support wire-format version {v}", me.name),
            };
            let _ = write(s, &refuse).await;
            return Err(unexpected(Err(FrameError::Version(v))));
        }
        other => return Err(unexpected(other)),
    };
    let refuse = |kind: &str, message: String| Frame::Refuse {
        kind: kind.into(),
        message,
    };
    if to != me.name {
        let f = refuse("node_down", format!("this node is {}, not {to}", me.name));
        let _ = write(s, &f).await;
        return Err(HsError::Protocol(format!("asked for {to}")));
    }
    if !crate::interp::prims::actor_node::valid_node_name(&name) || name == me.name {
        let f = refuse("node_down", format!("invalid peer name '{name}'"));
        let _ = write(s, &f).await;
        return Err(HsError::Protocol(format!("invalid peer name '{name}'")));
    }
    let Some(version) = versions
        .iter()
        .copied()
        .filter(|v| SUPPORTED_VERSIONS.contains(v))
        .max()
    else {
        let f = refuse(
            "wire_version_unsupported",
            format!(
                "{} supports wire-format versions {SUPPORTED_VERSIONS:?}",
                me.name
            ),
        );
        let _ = write(s, &f).await;
        return Err(HsError::Protocol("no common wire-format version".into()));
    };
    let challenge = nonce()?;
    let f = Frame::Challenge {
        name: me.name.into(),
        hidden: me.hidden,
        version,
        nonce: challenge,
    };
    write(s, &f).await?;
    let (theirs, answer) = match read(s).await? {
        Ok(Frame::Response { nonce, mac }) => (nonce, mac),
        other => return Err(unexpected(other)),
    };
    if !verify(me.cookie, INITIATOR, &challenge, &name, me.name, &answer) {
        let f = refuse("cookie", "authentication failed".into());
        let _ = write(s, &f).await;
        return Err(HsError::Cookie);
    }
    let mac = mac(me.cookie, ACCEPTOR, &theirs, &name, me.name);
    write(s, &Frame::Ack { mac }).await?;
    Ok(Agreed {
        name,
        hidden,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<F: std::future::Future>(f: F) -> F::Output {
        crate::dist::net::current_thread().unwrap().block_on(f)
    }

    fn pair(
        ca: &'static [u8],
        cb: &'static [u8],
    ) -> (Result<Agreed, HsError>, Result<Agreed, HsError>) {
        run(async move {
            let (mut x, mut y) = crate::dist::net::duplex(4096);
            let b = crate::dist::net::spawn(async move {
                let b = Me {
                    name: "b@localhost",
                    hidden: false,
                    cookie: cb,
                };
                accept(&mut y, &b).await
            });
            let a = Me {
                name: "a@localhost",
                hidden: true,
                cookie: ca,
            };
            let a = initiate(&mut x, &a, "b@localhost").await;
            (a, b.await.unwrap())
        })
    }

    #[test]
    fn same_cookie_agrees() {
        let (a, b) = pair(b"secret", b"secret");
        assert_eq!(
            a,
            Ok(Agreed {
                name: "b@localhost".into(),
                hidden: false,
                version: 1
            })
        );
        assert_eq!(
            b,
            Ok(Agreed {
                name: "a@localhost".into(),
                hidden: true,
                version: 1
            })
        );
    }

    #[test]
    fn different_cookies_fail_both_sides() {
        let (a, b) = pair(b"secret", b"other");
        assert_eq!(a, Err(HsError::Cookie));
        assert_eq!(b, Err(HsError::Cookie));
    }

    #[test]
    fn macs_depend_on_direction_nonce_and_names() {
        let n = [5u8; 32];
        let m = mac(b"k", INITIATOR, &n, "a@h", "b@h");
        assert_ne!(m, mac(b"k", ACCEPTOR, &n, "a@h", "b@h"));
        assert_ne!(m, mac(b"k", INITIATOR, &[6; 32], "a@h", "b@h"));
        assert_ne!(m, mac(b"k", INITIATOR, &n, "b@h", "a@h"));
        assert_ne!(m, mac(b"j", INITIATOR, &n, "a@h", "b@h"));
    }
}
