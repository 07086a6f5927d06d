//! Byte encoders and decoders for Binary and String: lower-case hex,
//! RFC 4648 base64 (standard alphabet, padded) and base64url (URL-safe alphabet; padded on
//! output, padding optional on input). Decoders answer `Err(message)` for malformed input; the
//! primitives wrap it as a `parse_error` inside `Result error:`.

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Lower-case hex, two digits per byte: `"68656c6c6f"`.
pub fn hex_encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Two hex digits per byte, either case.
pub fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return Err(format!("invalid hex: odd number of digits ({})", b.len()));
    }
    b.chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let d = |c: u8| (c as char).to_digit(16);
            match (d(pair[0]), d(pair[1])) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(format!("invalid hex digit at position {}", i * 2)),
            }
        })
        .collect()
}

fn encode(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = match chunk.len() {
            3 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8 | chunk[2] as u32,
            2 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8,
            _ => (chunk[0] as u32) << 16,
        };
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(alphabet[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64, padded: `"Zm9vYmFy"`.
pub fn base64_encode(bytes: &[u8]) -> String {
    encode(bytes, STD)
}

/// URL-safe base64, padded.
pub fn base64url_encode(bytes: &[u8]) -> String {
    encode(bytes, URL)
}

fn decode(s: &str, alphabet: &[u8; 64], padding_required: bool) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let body_len = b.iter().rposition(|&c| c != b'=').map_or(0, |p| p + 1);
    let pad = b.len() - body_len;
    if pad > 2 {
        return Err("invalid base64: too much padding".into());
    }
    if padding_required && !b.len().is_multiple_of(4) {
        return Err(format!(
            "invalid base64: length {} is not a multiple of 4",
            b.len()
        ));
    }
    if pad > 0 && !b.len().is_multiple_of(4) {
        return Err("invalid base64: misplaced padding".into());
    }
    if body_len % 4 == 1 {
        return Err("invalid base64: truncated input".into());
    }
    let mut lookup = [255u8; 256];
    for (i, &c) in alphabet.iter().enumerate() {
        lookup[c as usize] = i as u8;
    }
    let mut out = Vec::with_capacity(body_len * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for (i, &c) in b[..body_len].iter().enumerate() {
        let v = lookup[c as usize];
        if v == 255 {
            return Err(format!(
                "invalid base64 character {:?} at position {i}",
                c as char
            ));
        }
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if acc != 0 {
        return Err("invalid base64: non-zero trailing bits".into());
    }
    Ok(out)
}

/// Standard alphabet, padding required.
pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    decode(s, STD, true)
}

/// URL-safe alphabet, padding optional.
pub fn base64url_decode(s: &str) -> Result<Vec<u8>, String> {
    decode(s, URL, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(hex_encode(b"hello"), "68656c6c6f");
        assert_eq!(hex_encode(&[0, 255, 16]), "00ff10");
        assert_eq!(hex_decode("68656C6c6f").unwrap(), b"hello");
        assert_eq!(hex_decode("").unwrap(), b"");
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
    }

    #[test]
    fn rfc4648_vectors() {
        let v = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, enc) in v {
            assert_eq!(base64_encode(plain.as_bytes()), enc);
            assert_eq!(base64_decode(enc).unwrap(), plain.as_bytes());
            assert_eq!(
                base64url_decode(enc.trim_end_matches('=')).unwrap(),
                plain.as_bytes()
            );
        }
    }

    #[test]
    fn url_alphabet_and_errors() {
        assert_eq!(base64_encode(&[0xfb, 0xff]), "+/8=");
        assert_eq!(base64url_encode(&[0xfb, 0xff]), "-_8=");
        assert_eq!(base64url_decode("-_8").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(base64url_decode("-_8=").unwrap(), vec![0xfb, 0xff]);
        assert!(base64_decode("-_8=").is_err());
        assert!(base64_decode("Zm9").is_err());
        assert!(base64_decode("Zm9v!").is_err());
        assert!(base64_decode("Z===").is_err());
        assert!(base64_decode("Zh==").is_err());
        assert!(base64url_decode("Z").is_err());
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
            assert_eq!(base64url_decode(&base64url_encode(&bytes)).unwrap(), bytes);
            assert_eq!(hex_decode(&hex_encode(&bytes)).unwrap(), bytes);
        }
    }
}
