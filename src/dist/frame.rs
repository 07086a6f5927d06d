//! Frames: the length-prefixed envelopes nodes exchange (LANGUAGE.md 8.7).
//!
//! ```text
//! frame := length:u32be body            (length = body size, at most MAX_FRAME)
//! body  := version:u8 kind:u8 fields    (version = the wire-format version, currently 1)
//! ```
//! Fields are big-endian integers, strings as `u16 length + UTF-8`, nonces and MACs as
//! 32 raw bytes. Handshake frames are always written in version 1 (every node reads them);
//! after the handshake each frame carries the negotiated version, and a frame in a version
//! this node does not support is answered with [`Frame::Unsupported`] and dropped
//! (`wire_version_unsupported`, 8.7).
//!
//! Kind codes 1–15 are the handshake and link-control frames below. Codes from 16 are
//! reserved for the message kinds of remote actors (send, cast, reply, spawn, monitor,
//! per-node queries); their value payloads will be `crate::codec::wire` encodings.

use std::fmt;

use super::net::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Wire-format versions this node reads and writes.
pub const SUPPORTED_VERSIONS: &[u8] = &[1];
/// The version handshake frames are written in.
pub const HANDSHAKE_VERSION: u8 = 1;
/// Largest accepted frame body (bytes); longer length prefixes close the connection.
pub const MAX_FRAME: u32 = 64 << 20;
/// Size of handshake nonces and MACs.
pub const NONCE_LEN: usize = 32;

pub type Nonce = [u8; NONCE_LEN];

/// One decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Initiator → acceptor: who I am, whom I want, which wire versions I speak.
    Hello {
        name: String,
        to: String,
        hidden: bool,
        versions: Vec<u8>,
    },
    /// Acceptor → initiator: who I am, the chosen version, my challenge.
    Challenge {
        name: String,
        hidden: bool,
        version: u8,
        nonce: Nonce,
    },
    /// Initiator → acceptor: the answer to the challenge and my own challenge.
    Response {
        nonce: Nonce,
        mac: Nonce,
    },
    /// Acceptor → initiator: the answer to the initiator's challenge; the link is up.
    Ack {
        mac: Nonce,
    },
    /// Either side: the connection is refused (`kind` is an error kind such as
    /// `node_down`, `wire_version_unsupported`); the sender closes it.
    Refuse {
        kind: String,
        message: String,
    },
    Ping {
        id: u64,
    },
    Pong {
        id: u64,
    },
    /// An orderly close (`Node disconnect` on the other side).
    Disconnect,
    /// The peer sent a frame in a version this node does not support.
    Unsupported {
        version: u8,
    },
}

/// Why a frame body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The frame's wire-format version is not one of [`SUPPORTED_VERSIONS`].
    Version(u8),
    /// Truncated, unknown kind, bad UTF-8, or trailing bytes.
    Malformed(&'static str),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Version(v) => write!(f, "unsupported wire-format version {v}"),
            FrameError::Malformed(m) => write!(f, "malformed frame: {m}"),
        }
    }
}

const K_HELLO: u8 = 1;
const K_CHALLENGE: u8 = 2;
const K_RESPONSE: u8 = 3;
const K_ACK: u8 = 4;
const K_REFUSE: u8 = 5;
const K_PING: u8 = 6;
const K_PONG: u8 = 7;
const K_DISCONNECT: u8 = 8;
const K_UNSUPPORTED: u8 = 9;

impl Frame {
    /// The whole frame (length prefix included) in wire-format `version`.
    pub fn encode(&self, version: u8) -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0, version];
        match self {
            Frame::Hello {
                name,
                to,
                hidden,
                versions,
            } => {
                b.push(K_HELLO);
                put_str(&mut b, name);
                put_str(&mut b, to);
                b.push(*hidden as u8);
                b.push(versions.len().min(255) as u8);
                b.extend(versions.iter().take(255));
            }
            Frame::Challenge {
                name,
                hidden,
                version,
                nonce,
            } => {
                b.push(K_CHALLENGE);
                put_str(&mut b, name);
                b.push(*hidden as u8);
                b.push(*version);
                b.extend_from_slice(nonce);
            }
            Frame::Response { nonce, mac } => {
                b.push(K_RESPONSE);
                b.extend_from_slice(nonce);
                b.extend_from_slice(mac);
            }
            Frame::Ack { mac } => {
                b.push(K_ACK);
                b.extend_from_slice(mac);
            }
            Frame::Refuse { kind, message } => {
                b.push(K_REFUSE);
                put_str(&mut b, kind);
                put_str(&mut b, message);
            }
            Frame::Ping { id } => {
                b.push(K_PING);
                b.extend_from_slice(&id.to_be_bytes());
            }
            Frame::Pong { id } => {
                b.push(K_PONG);
                b.extend_from_slice(&id.to_be_bytes());
            }
            Frame::Disconnect => b.push(K_DISCONNECT),
            Frame::Unsupported { version } => {
                b.push(K_UNSUPPORTED);
                b.push(*version);
            }
        }
        let len = (b.len() - 4) as u32;
        b[..4].copy_from_slice(&len.to_be_bytes());
        b
    }

    /// Decodes a frame body (without its length prefix).
    pub fn decode(body: &[u8]) -> Result<Frame, FrameError> {
        let mut r = Reader { b: body, at: 0 };
        let version = r.u8()?;
        if !SUPPORTED_VERSIONS.contains(&version) {
            return Err(FrameError::Version(version));
        }
        let f = match r.u8()? {
            K_HELLO => Frame::Hello {
                name: r.str()?,
                to: r.str()?,
                hidden: r.u8()? != 0,
                versions: {
                    let n = r.u8()? as usize;
                    r.take(n)?.to_vec()
                },
            },
            K_CHALLENGE => Frame::Challenge {
                name: r.str()?,
                hidden: r.u8()? != 0,
                version: r.u8()?,
                nonce: r.nonce()?,
            },
            K_RESPONSE => Frame::Response {
                nonce: r.nonce()?,
                mac: r.nonce()?,
            },
            K_ACK => Frame::Ack { mac: r.nonce()? },
            K_REFUSE => Frame::Refuse {
                kind: r.str()?,
                message: r.str()?,
            },
            K_PING => Frame::Ping { id: r.u64()? },
            K_PONG => Frame::Pong { id: r.u64()? },
            K_DISCONNECT => Frame::Disconnect,
            K_UNSUPPORTED => Frame::Unsupported { version: r.u8()? },
            _ => return Err(FrameError::Malformed("unknown frame kind")),
        };
        if r.at != body.len() {
            return Err(FrameError::Malformed("trailing bytes"));
        }
        Ok(f)
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    // Names and messages are short; longer text is cut at a character boundary.
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    b.extend_from_slice(&(end as u16).to_be_bytes());
    b.extend_from_slice(&s.as_bytes()[..end]);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(FrameError::Malformed("truncated"))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, FrameError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }
    fn nonce(&mut self) -> Result<Nonce, FrameError> {
        let mut a = [0u8; NONCE_LEN];
        a.copy_from_slice(self.take(NONCE_LEN)?);
        Ok(a)
    }
    fn str(&mut self) -> Result<String, FrameError> {
        let n = u16::from_be_bytes([self.u8()?, self.u8()?]) as usize;
        let s = self.take(n)?;
        String::from_utf8(s.to_vec()).map_err(|_| FrameError::Malformed("bad UTF-8"))
    }
}

/// Largest handshake frame body: the peer is not authenticated yet, so it cannot make
/// this node allocate much.
pub const MAX_HANDSHAKE_FRAME: u32 = 4096;

/// Reads one frame from `r`: `Ok(None)` at a clean end of stream.
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
) -> std::io::Result<Option<Result<Frame, FrameError>>> {
    read_frame_max(r, MAX_FRAME).await
}

/// [`read_frame`] refusing bodies longer than `max` bytes (an `InvalidData` error).
pub async fn read_frame_max<R: AsyncRead + Unpin>(
    r: &mut R,
    max: u32,
) -> std::io::Result<Option<Result<Frame, FrameError>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len);
    if len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds the limit"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).await?;
    Ok(Some(Frame::decode(&body)))
}

/// Writes one frame in wire-format `version`.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    f: &Frame,
    version: u8,
) -> std::io::Result<()> {
    w.write_all(&f.encode(version)).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Frame> {
        vec![
            Frame::Hello {
                name: "a@localhost".into(),
                to: "b@localhost".into(),
                hidden: true,
                versions: vec![1, 2],
            },
            Frame::Challenge {
                name: "b@localhost".into(),
                hidden: false,
                version: 1,
                nonce: [7; NONCE_LEN],
            },
            Frame::Response {
                nonce: [1; NONCE_LEN],
                mac: [2; NONCE_LEN],
            },
            Frame::Ack {
                mac: [3; NONCE_LEN],
            },
            Frame::Refuse {
                kind: "node_down".into(),
                message: "é".into(),
            },
            Frame::Ping { id: u64::MAX },
            Frame::Pong { id: 0 },
            Frame::Disconnect,
            Frame::Unsupported { version: 9 },
        ]
    }

    #[test]
    fn frames_round_trip() {
        for f in all() {
            let b = f.encode(1);
            assert_eq!(
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize,
                b.len() - 4
            );
            assert_eq!(Frame::decode(&b[4..]), Ok(f));
        }
    }

    #[test]
    fn unsupported_version_and_garbage_are_errors_not_panics() {
        let b = Frame::Ping { id: 1 }.encode(9);
        assert_eq!(Frame::decode(&b[4..]), Err(FrameError::Version(9)));
        assert!(Frame::decode(&[]).is_err());
        assert!(Frame::decode(&[1, 99]).is_err());
        for f in all() {
            let b = f.encode(1);
            for cut in 5..b.len() {
                assert!(Frame::decode(&b[4..cut]).is_err(), "{f:?} cut at {cut}");
            }
            let mut long = b[4..].to_vec();
            long.push(0);
            assert!(Frame::decode(&long).is_err());
        }
        // Bad UTF-8 in a name.
        let mut b = Frame::Refuse {
            kind: "x".into(),
            message: "y".into(),
        }
        .encode(1);
        b[8] = 0xff;
        assert!(Frame::decode(&b[4..]).is_err());
    }
}
