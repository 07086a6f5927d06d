//! `crypto` (digests, HMAC, random bytes) and `base64`. Data arguments are iodata (Strings,
//! Binaries, lists of bytes and of those); digests and random bytes answer binaries (a
//! Binary, or a String when the bytes happen to be UTF-8).

use base64::Engine;
use hmac::{Hmac, Mac};
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use super::terms::{charlist, list_arg, Fail, R};
use crate::value::{Ref, Sym, Value};

/// The bytes of iodata (a String, a Binary, or a list of bytes and iodata), else `badarg`.
pub(super) fn iodata(v: &Value) -> Result<Vec<u8>, Fail> {
    fn walk(v: &Value, out: &mut Vec<u8>) -> bool {
        match v {
            Value::Str(s) => out.extend_from_slice(s.as_bytes()),
            Value::Binary(b) => out.extend_from_slice(b),
            Value::Int(i @ 0..=255) => out.push(*i as u8),
            Value::List(l) => return l.iter().all(|x| walk(x, out)),
            Value::Array(a) => return a.iter().all(|x| walk(x, out)),
            _ => return false,
        }
        true
    }
    let mut out = Vec::new();
    if matches!(v, Value::Int(_)) || !walk(v, &mut out) {
        return Err(Fail::Badarg);
    }
    Ok(out)
}

/// A binary term: a String when the bytes are UTF-8, else a Binary.
pub(super) fn binary(b: Vec<u8>) -> Value {
    match String::from_utf8(b) {
        Ok(s) => Value::str(s),
        Err(e) => Value::Binary(Ref::new(e.into_bytes())),
    }
}

/// crypto's own `badarg`: `{badarg, {File, Line}, Description}` (the kind is `badarg`).
fn crypto_badarg(file: &str, line: i64, what: &str) -> Fail {
    Fail::Other(
        Sym::new("badarg"),
        format!(" {{badarg,{{\"{file}\",{line}}},\"{what}\"}}"),
    )
}

fn digest(kind: &str, data: &[u8]) -> Option<Vec<u8>> {
    Some(match kind {
        "md5" => Md5::digest(data).to_vec(),
        "sha" => Sha1::digest(data).to_vec(),
        "sha224" => Sha224::digest(data).to_vec(),
        "sha256" => Sha256::digest(data).to_vec(),
        "sha384" => Sha384::digest(data).to_vec(),
        "sha512" => Sha512::digest(data).to_vec(),
        _ => return None,
    })
}

fn hmac(kind: &str, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    fn run<M: Mac + hmac::digest::KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
        let mut m = <M as hmac::digest::KeyInit>::new_from_slice(key)
            .expect("HMAC accepts keys of any length");
        m.update(data);
        m.finalize().into_bytes().to_vec()
    }
    Some(match kind {
        "md5" => run::<Hmac<Md5>>(key, data),
        "sha" => run::<Hmac<Sha1>>(key, data),
        "sha224" => run::<Hmac<Sha224>>(key, data),
        "sha256" => run::<Hmac<Sha256>>(key, data),
        "sha384" => run::<Hmac<Sha384>>(key, data),
        "sha512" => run::<Hmac<Sha512>>(key, data),
        _ => return None,
    })
}

fn sym_name(v: &Value) -> Option<&str> {
    match v {
        Value::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

pub(super) fn crypto(f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("hash", [kind, data]) => {
            let name = sym_name(kind).ok_or(Fail::Badarg)?;
            let data = iodata(data)?;
            digest(name, &data)
                .map(binary)
                .ok_or_else(|| crypto_badarg("hash.c", 108, "Bad digest type"))
        }
        ("mac", [ty, sub, key, data]) => {
            if sym_name(ty) != Some("hmac") {
                return Err(crypto_badarg("mac.c", 313, "Unknown cipher"));
            }
            let sub = sym_name(sub).ok_or(Fail::Badarg)?;
            let (key, data) = (iodata(key)?, iodata(data)?);
            hmac(sub, &key, &data)
                .map(binary)
                .ok_or_else(|| crypto_badarg("mac.c", 263, "Bad digest algorithm for HMAC"))
        }
        ("strong_rand_bytes", [n]) => match n {
            Value::Int(n @ 0..=0x0100_0000) => {
                use rand::RngCore;
                let mut b = vec![0u8; *n as usize];
                rand::rngs::OsRng.fill_bytes(&mut b);
                Ok(binary(b))
            }
            _ => Err(Fail::Badarg),
        },
        ("exor", [x, y]) => {
            let (x, y) = (iodata(x)?, iodata(y)?);
            if x.len() != y.len() {
                return Err(Fail::Badarg);
            }
            Ok(binary(x.iter().zip(&y).map(|(a, b)| a ^ b).collect()))
        }
        ("hash_equals", [x, y]) => match (x, y) {
            (Value::Str(_) | Value::Binary(_), Value::Str(_) | Value::Binary(_)) => {
                let (x, y) = (iodata(x)?, iodata(y)?);
                if x.len() != y.len() {
                    return Err(Fail::Badarg);
                }
                Ok(Value::bool(
                    x.iter().zip(&y).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0,
                ))
            }
            _ => Err(Fail::Badarg),
        },
        _ => Err(Fail::Undef),
    }
}

/// The bytes of a `base64` argument: a binary or a flat list of bytes.
fn b64_input(v: &Value) -> Result<Vec<u8>, Fail> {
    match v {
        Value::Str(s) => Ok(s.as_bytes().to_vec()),
        Value::Binary(b) => Ok(b.to_vec()),
        Value::List(_) | Value::Array(_) => list_arg(v)?
            .iter()
            .map(|x| match x {
                Value::Int(i @ 0..=255) => Ok(*i as u8),
                _ => Err(Fail::Badarg),
            })
            .collect(),
        _ => Err(Fail::FunctionClause),
    }
}

/// Decoding as `base64:decode/1`: whitespace is skipped, the padding is required, any other
/// character outside the alphabet is `badarg`; `mime` skips every character outside it.
fn b64_decode(v: &Value, mime: bool) -> Result<Vec<u8>, Fail> {
    let raw = b64_input(v)?;
    // A bad character in a group of four is `badarg`; input whose length is not a whole
    // number of groups fails on the function's last clauses first.
    let whole_groups = raw
        .iter()
        .filter(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        .count()
        % 4
        == 0;
    let alphabet = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let mut clean = Vec::with_capacity(raw.len());
    for c in raw {
        if alphabet(c) || c == b'=' {
            clean.push(c);
        } else if mime || matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
            continue;
        } else if whole_groups {
            return Err(Fail::Badarg);
        } else {
            return Err(Fail::FunctionClause);
        }
    }
    if mime {
        // Stop at the padding; decode what came before it.
        if let Some(p) = clean.iter().position(|&c| c == b'=') {
            let keep = clean.len() - clean[p..].len();
            let rem = keep % 4;
            clean.truncate(keep);
            if rem != 0 {
                clean.extend(std::iter::repeat_n(b'=', 4 - rem));
            }
        }
    }
    if let Some(p) = clean.iter().position(|&c| c == b'=') {
        if clean[p..].iter().any(|&c| c != b'=') {
            return Err(Fail::Badarg);
        }
    }
    if clean.len() % 4 != 0 {
        return Err(Fail::FunctionClause);
    }
    base64::engine::general_purpose::STANDARD
        .decode(&clean)
        .map_err(|_| Fail::Badarg)
}

pub(super) fn base64(f: &str, a: &[Value]) -> R {
    let enc = |v: &Value| -> Result<String, Fail> {
        Ok(base64::engine::general_purpose::STANDARD.encode(b64_input(v)?))
    };
    match (f, a) {
        ("encode", [v]) => Ok(Value::str(enc(v)?)),
        ("encode_to_string", [v]) => Ok(charlist(&enc(v)?)),
        ("decode", [v]) => Ok(binary(b64_decode(v, false)?)),
        ("mime_decode", [v]) => Ok(binary(b64_decode(v, true)?)),
        ("decode_to_string", [v]) => Ok(Value::list(
            b64_decode(v, false)?
                .into_iter()
                .map(|b| Value::Int(b as i64)),
        )),
        ("mime_decode_to_string", [v]) => Ok(Value::list(
            b64_decode(v, true)?
                .into_iter()
                .map(|b| Value::Int(b as i64)),
        )),
        _ => Err(Fail::Undef),
    }
}
