//! Pure text helpers behind the String primitives: grapheme-cluster
//! measuring and indexing, splitting, padding, percent-encoding and iolists.
//!
//! Strings are measured in extended grapheme clusters. A string that is ASCII and holds no
//! CR LF pair (the one ASCII two-character cluster) has one cluster per byte, which gives a
//! fast path for `size`, `at:`, `take:` and friends.

use unicode_segmentation::UnicodeSegmentation;

use crate::interp::error::ErrorKind;
use crate::interp::prims::fault::{Fault, Res};
use crate::interp::prims::number::pure as num;
use crate::interp::print::quote_string;
use crate::value::text::{Crumbs, Text, STRIDE};
use crate::value::Value;

/// Strings longer than this (in bytes) are refused (`runtime_error`) rather than exhausting
/// memory.
pub(crate) const MAX_STRING_BYTES: i64 = 1 << 30;

/// The `runtime_error` for a String that would exceed [`MAX_STRING_BYTES`].
pub(crate) fn too_long() -> Fault {
    Fault::Kind(
        ErrorKind::RuntimeError,
        "string too large: more than 1 GiB".into(),
    )
}

pub(crate) use crate::value::text::one_cluster_per_byte as is_simple;

/// Text whose shape may be known already: a String value's [`Text`] remembers whether every
/// byte is one grapheme cluster (so `size` and `at:` on it are not a scan of the whole text
/// each time); a plain `str` works it out.
pub(crate) trait Clusters {
    fn text(&self) -> &str;
    /// True when every byte is one grapheme cluster.
    fn one_per_byte(&self) -> bool;
    /// The cluster index of text that is not one cluster a byte, when it keeps one.
    fn crumbs(&self) -> Option<&Crumbs> {
        None
    }
}

impl Clusters for str {
    fn text(&self) -> &str {
        self
    }
    fn one_per_byte(&self) -> bool {
        is_simple(self)
    }
}

impl Clusters for Text {
    fn text(&self) -> &str {
        self.as_str()
    }
    #[inline]
    fn one_per_byte(&self) -> bool {
        self.is_simple()
    }
    fn crumbs(&self) -> Option<&Crumbs> {
        Text::crumbs(self, index_clusters)
    }
}

/// The cluster index of `s` (see `value::text`).
fn index_clusters(s: &str) -> Crumbs {
    let mut count = 0;
    let mut starts = Vec::with_capacity(s.len() / STRIDE + 1);
    for (i, _) in s.grapheme_indices(true) {
        if count % STRIDE == 0 {
            starts.push(i as u32);
        }
        count += 1;
    }
    Crumbs {
        count,
        starts: starts.into_boxed_slice(),
    }
}

/// The grapheme clusters of `s`.
pub(crate) fn graphemes(s: &str) -> Vec<&str> {
    s.graphemes(true).collect()
}

/// Number of grapheme clusters.
pub(crate) fn g_len<S: Clusters + ?Sized>(s: &S) -> usize {
    if s.one_per_byte() {
        s.text().len()
    } else if let Some(c) = s.crumbs() {
        c.count
    } else {
        s.text().graphemes(true).count()
    }
}

/// Byte offset where grapheme `n` (0-based) starts, or `s.len()` past the end.
fn g_offset<S: Clusters + ?Sized>(s: &S, n: usize) -> usize {
    let text = s.text();
    if s.one_per_byte() {
        return n.min(text.len());
    }
    let (from, n) = match s.crumbs() {
        Some(c) if n >= c.count => return text.len(),
        Some(c) => (c.starts[n / STRIDE] as usize, n % STRIDE),
        None => (0, n),
    };
    text[from..]
        .grapheme_indices(true)
        .nth(n)
        .map_or(text.len(), |(i, _)| from + i)
}

/// The 0-based position for a 1-based index argument, with the shared collection errors of
/// the collection rules: below 1 → `index_out_of_bounds`; on an empty receiver (when `empty_class` is
/// given) → `empty_collection`; past the end → `index_out_of_bounds`; not an Integer →
/// `type_error`.
pub(crate) fn check_index(index: &Value, size: usize, empty_class: Option<&str>) -> Res<usize> {
    let i = match index {
        Value::Int(i) => *i,
        Value::BigInt(_) => return Err(Fault::index(num::int_string(index), size)),
        _ => return Err(Fault::expected("at:", "an Integer index", index)),
    };
    if i < 1 {
        return Err(Fault::index(i, size));
    }
    if size == 0 {
        if let Some(c) = empty_class {
            return Err(Fault::empty(c));
        }
    }
    if i as u64 > size as u64 {
        return Err(Fault::index(i, size));
    }
    Ok(i as usize - 1)
}

/// `at:` — the grapheme at a 1-based index.
pub(crate) fn g_at<'a, S: Clusters + ?Sized>(s: &'a S, index: &Value) -> Res<&'a str> {
    let text = s.text();
    if s.one_per_byte() {
        let i = check_index(index, text.len(), Some("String"))?;
        return Ok(&text[i..i + 1]);
    }
    let i = check_index(index, g_len(s), Some("String"))?;
    let from = g_offset(s, i);
    Ok(text[from..].graphemes(true).next().unwrap_or(""))
}

/// `first` / `last`: `empty_collection` on an empty String.
pub(crate) fn g_first(s: &str, last: bool) -> Res<&str> {
    let g = if last {
        s.graphemes(true).next_back()
    } else {
        s.graphemes(true).next()
    };
    g.ok_or_else(|| Fault::empty("String"))
}

/// `take: n` — the first n graphemes (never raises; negative counts as 0).
pub(crate) fn g_take<S: Clusters + ?Sized>(s: &S, n: i64) -> &str {
    &s.text()[..g_offset(s, n.max(0) as usize)]
}

/// `drop: n` — all but the first n graphemes.
pub(crate) fn g_drop<S: Clusters + ?Sized>(s: &S, n: i64) -> &str {
    &s.text()[g_offset(s, n.max(0) as usize)..]
}

/// The last n graphemes.
pub(crate) fn g_last_n<S: Clusters + ?Sized>(s: &S, n: i64) -> &str {
    let len = g_len(s);
    g_drop(s, len as i64 - n.max(0))
}

/// `from: start to: end` (1-based, inclusive): start < 1 raises `index_out_of_bounds`, the
/// end is clamped to the size, and end < start gives the empty String.
pub(crate) fn g_from_to<S: Clusters + ?Sized>(s: &S, start: i64, end: i64) -> Res<&str> {
    let len = g_len(s) as i64;
    if start < 1 {
        return Err(Fault::index(start, len as usize));
    }
    let end = end.min(len);
    if end < start {
        return Ok("");
    }
    Ok(g_range(s, start - 1, end - start + 1))
}

/// `copyFrom: start to: end` (1-based, inclusive, strict): both ends must lie in 1..size
/// unless the range is empty (end = start - 1).
pub(crate) fn g_copy_from_to<S: Clusters + ?Sized>(s: &S, start: i64, end: i64) -> Res<&str> {
    let len = g_len(s) as i64;
    if end == start - 1 && start >= 1 && start <= len + 1 {
        return Ok("");
    }
    for i in [start, end] {
        if i < 1 || i > len {
            return Err(Fault::index(i, len as usize));
        }
    }
    if end < start {
        return Ok("");
    }
    Ok(g_range(s, start - 1, end - start + 1))
}

/// `count` graphemes from the 0-based grapheme `from` (both non-negative, within the text).
fn g_range<S: Clusters + ?Sized>(s: &S, from: i64, count: i64) -> &str {
    let text = s.text();
    if s.one_per_byte() {
        let start = (from as usize).min(text.len());
        let end = start.saturating_add(count as usize).min(text.len());
        return &text[start..end];
    }
    let rest = &text[g_offset(s, from as usize)..];
    let end = rest
        .grapheme_indices(true)
        .nth(count as usize)
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// `reverse` by graphemes.
pub(crate) fn g_reverse(s: &str) -> String {
    s.graphemes(true).rev().collect()
}

/// Byte offsets of every grapheme boundary (including 0 and `s.len()`).
fn boundaries(s: &str) -> Vec<usize> {
    let mut b: Vec<usize> = s.grapheme_indices(true).map(|(i, _)| i).collect();
    b.push(s.len());
    b
}

/// `indexOf:` — 1-based grapheme index of the first occurrence that starts and ends on
/// grapheme boundaries, or None.
pub(crate) fn index_of<S: Clusters + ?Sized>(s: &S, sub: &str) -> Option<usize> {
    if sub.is_empty() {
        return Some(1);
    }
    let simple = s.one_per_byte();
    let s = s.text();
    if simple {
        return s.find(sub).map(|i| i + 1);
    }
    let b = boundaries(s);
    s.match_indices(sub).find_map(|(start, m)| {
        let gi = b.binary_search(&start).ok()?;
        b.binary_search(&(start + m.len())).ok()?;
        Some(gi + 1)
    })
}

/// `includes:` — whether some grapheme equals `g`.
pub(crate) fn includes_grapheme(s: &str, g: &str) -> bool {
    s.graphemes(true).any(|x| x == g)
}

/// `split:` — pieces between separators, empty pieces kept; an empty separator splits into
/// graphemes.
pub(crate) fn split_on<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    if sep.is_empty() {
        return graphemes(s);
    }
    s.split(sep).collect()
}

/// `lines` — split at LF or CR LF; a final line end adds no empty line.
pub fn lines(s: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                let line = &rest[..i];
                out.push(line.strip_suffix('\r').unwrap_or(line));
                rest = &rest[i + 1..];
            }
            None => {
                out.push(rest);
                break;
            }
        }
    }
    out
}

/// `words` — split at runs of whitespace, no empty words.
pub fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// `replaceAll:with:` (an empty pattern changes nothing).
pub fn replace_all(s: &str, pat: &str, with: &str) -> String {
    if pat.is_empty() {
        s.to_string()
    } else {
        s.replace(pat, with)
    }
}

/// `replaceFirst:with:`.
pub(crate) fn replace_first(s: &str, pat: &str, with: &str) -> String {
    if pat.is_empty() {
        s.to_string()
    } else {
        s.replacen(pat, with, 1)
    }
}

/// `padLeft:with:` / `padRight:with:` — pad with a one-grapheme String to `width` graphemes.
pub fn pad(s: &str, width: i64, with: &str, left: bool) -> Res<String> {
    if g_len(with) != 1 {
        return Err(Fault::Type(format!(
            "padding must be a one-grapheme String, got {}",
            quote_string(with)
        )));
    }
    if width > MAX_STRING_BYTES {
        return Err(too_long());
    }
    let have = g_len(s);
    let need = (width.max(0) as usize).saturating_sub(have);
    let fill = with.repeat(need);
    Ok(if left {
        fill + s
    } else {
        s.to_string() + &fill
    })
}

/// `capitalize` — the first grapheme upper-cased.
pub(crate) fn capitalize(s: &str) -> String {
    match s.graphemes(true).next() {
        Some(g) => g.to_uppercase() + &s[g.len()..],
        None => String::new(),
    }
}

/// `isBlank` — empty or only whitespace.
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// `isDigit` — non-empty and all ASCII digits.
pub(crate) fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `isAlpha` — non-empty and every grapheme a letter.
pub(crate) fn is_alpha(s: &str) -> bool {
    !s.is_empty()
        && s.graphemes(true)
            .all(|g| g.chars().next().is_some_and(char::is_alphabetic))
}

/// `repeat: n`.
pub fn repeat(s: &str, n: i64) -> Res<String> {
    if n < 0 {
        return Err(Fault::Type(format!(
            "repeat: expects a non-negative count, got {n}"
        )));
    }
    if (s.len() as u128) * (n as u128) > MAX_STRING_BYTES as u128 {
        return Err(too_long());
    }
    Ok(s.repeat(n as usize))
}

/// `urlEncoded` (RFC 3986): unreserved characters kept, every other byte `%XX`.
pub(crate) fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `urlDecoded`: `%XX` → byte; malformed escapes or invalid UTF-8 → `parse_error`.
pub(crate) fn url_decode(s: &str) -> Res<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                _ => {
                    return Err(Fault::Kind(
                        ErrorKind::ParseError,
                        format!(
                            "malformed percent-encoding at byte {i}: {}",
                            quote_string(s)
                        ),
                    ))
                }
            }
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        Fault::Kind(
            ErrorKind::ParseError,
            format!(
                "percent-decoded bytes are not valid UTF-8: {}",
                quote_string(s)
            ),
        )
    })
}

/// The bytes of an iolist: nested Lists/Arrays of Strings, Binaries and byte Integers.
pub(crate) fn iolist_bytes(v: &Value, what: &str) -> Res<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Str(s) => out.extend_from_slice(s.as_bytes()),
            Value::Binary(b) => out.extend_from_slice(b),
            Value::Int(i) if (0..=255).contains(i) => out.push(*i as u8),
            Value::Char(c) if (c.get() as u32) <= 255 => out.push(c.get() as u32 as u8),
            Value::List(items) => stack.extend(items.iter().rev()),
            Value::Array(items) => stack.extend(items.iter().rev()),
            other => {
                return Err(Fault::Type(format!(
                    "{what} expects Strings, Binaries and byte Integers, got {}",
                    crate::interp::prims::fault::article_class(other)
                )))
            }
        }
    }
    Ok(out)
}

/// A String from code points (Integers or Characters); a non-scalar value → `type_error`.
pub(crate) fn from_code_points<'a>(items: impl IntoIterator<Item = &'a Value>) -> Res<String> {
    let mut out = String::new();
    for v in items {
        match crate::interp::prims::number::pure::code_point_char(v) {
            Some(c) => out.push(c),
            None => {
                crate::interp::prims::number::pure::to_char(v)?;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const E_ACUTE: &str = "e\u{301}"; // one grapheme, two code points

    #[test]
    fn grapheme_measuring() {
        assert_eq!(g_len("hello"), 5);
        assert_eq!(g_len(""), 0);
        assert_eq!(g_len("a\r\nb"), 3);
        let s = format!("caf{E_ACUTE}!");
        assert_eq!(g_len(s.as_str()), 5);
        assert_eq!(g_at(s.as_str(), &Value::Int(4)).unwrap(), E_ACUTE);
        assert_eq!(g_at("👍🏽x", &Value::Int(1)).unwrap(), "👍🏽");
        assert_eq!(g_len("🇫🇷🇩🇪"), 2);
        assert_eq!(g_first(&s, true).unwrap(), "!");
        assert_eq!(g_take(s.as_str(), 4), format!("caf{E_ACUTE}"));
        assert_eq!(g_drop(s.as_str(), 3), format!("{E_ACUTE}!"));
        assert_eq!(g_drop("abc", 10), "");
        assert_eq!(g_take("abc", -1), "");
        assert_eq!(g_last_n("abcdef", 2), "ef");
        assert_eq!(g_from_to("hello", 2, 4).unwrap(), "ell");
        assert_eq!(g_from_to("hello", 2, 99).unwrap(), "ello");
        assert_eq!(g_from_to("hello", 4, 2).unwrap(), "");
        assert_eq!(g_from_to("hello", 0, 2), Err(Fault::index(0, 5)));
        assert_eq!(g_copy_from_to("hello", 2, 4).unwrap(), "ell");
        assert_eq!(g_copy_from_to("hello", 3, 2).unwrap(), "");
        assert_eq!(g_copy_from_to("hello", 2, 6), Err(Fault::index(6, 5)));
        assert_eq!(
            g_copy_from_to(s.as_str(), 4, 5).unwrap(),
            format!("{E_ACUTE}!")
        );
        assert_eq!(g_reverse(&s), format!("!{E_ACUTE}fac"));
        assert_eq!(g_reverse("a\r\nb"), "b\r\na");
    }

    #[test]
    fn index_errors() {
        assert_eq!(g_at("abc", &Value::Int(9)), Err(Fault::index(9, 3)));
        assert_eq!(g_at("abc", &Value::Int(0)), Err(Fault::index(0, 3)));
        assert_eq!(g_at("", &Value::Int(1)), Err(Fault::empty("String")));
        assert_eq!(g_at("", &Value::Int(0)), Err(Fault::index(0, 0)));
        assert!(matches!(g_at("abc", &Value::str("1")), Err(Fault::Type(_))));
        assert_eq!(g_first("", false), Err(Fault::empty("String")));
    }

    #[test]
    fn searching() {
        assert_eq!(index_of("hello", "l"), Some(3));
        assert_eq!(index_of("hello", "z"), None);
        let s = format!("x{E_ACUTE}e");
        // The bare "e" inside the cluster does not count; the final one does.
        assert_eq!(index_of(s.as_str(), "e"), Some(3));
        assert!(includes_grapheme(&s, E_ACUTE));
        assert!(!includes_grapheme(&s, "\u{301}"));
    }

    #[test]
    fn splitting() {
        assert_eq!(split_on("a,b,,c", ","), vec!["a", "b", "", "c"]);
        assert_eq!(split_on("", ","), vec![""]);
        assert_eq!(split_on("ab", ""), vec!["a", "b"]);
        assert_eq!(lines("a\nb\r\nc\n"), vec!["a", "b", "c"]);
        assert_eq!(lines("a\n\nb"), vec!["a", "", "b"]);
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("\n"), vec![""]);
        assert_eq!(lines("a\r"), vec!["a\r"]);
        assert_eq!(words("  hello \t world\n"), vec!["hello", "world"]);
        assert_eq!(replace_all("aXbXc", "X", "--"), "a--b--c");
        assert_eq!(replace_first("aXbXc", "X", "--"), "a--bXc");
        assert_eq!(replace_all("abc", "", "-"), "abc");
    }

    #[test]
    fn padding_case_classify() {
        assert_eq!(pad("7", 3, "0", true).unwrap(), "007");
        assert_eq!(pad("ab", 4, " ", false).unwrap(), "ab  ");
        assert_eq!(pad("abcdef", 3, " ", true).unwrap(), "abcdef");
        assert!(pad("a", 3, "xy", true).is_err());
        assert!(matches!(
            pad("a", 1 << 40, " ", true),
            Err(Fault::Kind(ErrorKind::RuntimeError, _))
        ));
        assert_eq!(pad(E_ACUTE, 2, "*", true).unwrap(), format!("*{E_ACUTE}"));
        assert_eq!(capitalize("hello world"), "Hello world");
        assert_eq!(capitalize(""), "");
        assert!(is_blank("  \t\n"));
        assert!(is_blank(""));
        assert!(!is_blank(" a "));
        assert!(is_digits("0123"));
        assert!(!is_digits(""));
        assert!(!is_digits("12a"));
        assert!(is_alpha("héllo"));
        assert!(is_alpha(&format!("caf{E_ACUTE}")));
        assert!(!is_alpha("ab1"));
        assert_eq!(repeat("ab", 3).unwrap(), "ababab");
        assert!(repeat("ab", -1).is_err());
    }

    #[test]
    fn url_encoding() {
        assert_eq!(url_encode("hello world"), "hello%20world");
        assert_eq!(url_encode("a+b=c&d"), "a%2Bb%3Dc%26d");
        assert_eq!(url_encode("-._~"), "-._~");
        assert_eq!(url_encode("é"), "%C3%A9");
        assert_eq!(url_decode("hello%20world").unwrap(), "hello world");
        assert_eq!(url_decode("%c3%a9").unwrap(), "é");
        assert_eq!(url_decode("a+b").unwrap(), "a+b");
        assert!(matches!(
            url_decode("%ZZ"),
            Err(Fault::Kind(ErrorKind::ParseError, _))
        ));
        assert!(matches!(
            url_decode("abc%4"),
            Err(Fault::Kind(ErrorKind::ParseError, _))
        ));
        assert!(matches!(
            url_decode("%FF"),
            Err(Fault::Kind(ErrorKind::ParseError, _))
        ));
        for s in ["", "a b/c?d=é&x=✓", "100%"] {
            assert_eq!(url_decode(&url_encode(s)).unwrap(), s);
        }
    }

    #[test]
    fn iolists_and_code_points() {
        let v = Value::list([
            Value::str("ab"),
            Value::list([
                Value::Int(99),
                Value::Binary(std::sync::Arc::new(vec![100])),
            ]),
        ]);
        assert_eq!(iolist_bytes(&v, "fromIolist:").unwrap(), b"abcd");
        assert!(iolist_bytes(&Value::list([Value::Int(256)]), "fromIolist:").is_err());
        assert!(iolist_bytes(&Value::list([Value::Nil]), "fromIolist:").is_err());
        let cps = [Value::Int(104), Value::ch('i')];
        assert_eq!(from_code_points(cps.iter()).unwrap(), "hi");
        assert!(from_code_points([Value::Int(0xD800)].iter()).is_err());
    }
}
