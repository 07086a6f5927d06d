//! The JSON reader behind `Json parse:`: text → bt values directly (objects →
//! Dictionaries with String keys, arrays → Lists, integers of any size → Integer, numbers with
//! a fraction or exponent → Float, `null` → nil). Errors carry a 1-based line and column
//! (counted in characters).
//!
//! Why not `serde_json::from_str`: without serde_json's crate-wide `arbitrary_precision`
//! feature an integer beyond 64 bits reaches a visitor as an `f64` (precision lost), and that
//! feature would change every other serde_json user in the crate and slow every float down.
//! This reader is a small recursive-descent loop over bytes that builds `Value`s with no
//! intermediate tree; `json.rs` writes with serde_json's string escaper.

use num_bigint::BigInt;

use crate::value::dict::Dict;
use crate::value::{Ref, Value};

/// Deepest nesting of arrays/objects accepted (the reader recurses once per level).
pub const MAX_DEPTH: usize = 512;

/// A syntax error: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid JSON at line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// Parses one JSON document (surrounding whitespace allowed, nothing else after it).
pub fn parse(src: &str) -> Result<Value, ParseError> {
    let mut whole =
        |text: &str| Ok::<_, ()>(BigInt::parse_bytes(text.as_bytes(), 10).map(Value::from_bigint));
    parse_with(src, &mut whole).map_err(|e| match e {
        Failed::Syntax(p) => p,
        Failed::Stopped(()) => unreachable_stop(),
    })
}

/// Why [`parse_with`] failed: the text, or the big-Integer reader stopped it.
#[derive(Debug)]
pub enum Failed<E> {
    Syntax(ParseError),
    Stopped(E),
}

fn unreachable_stop() -> ParseError {
    ParseError {
        line: 0,
        column: 0,
        message: "stopped".to_string(),
    }
}

/// Reads an Integer too long for a machine word from its decimal text (sign included):
/// `Ok(None)` is an invalid number. `Json parse:` passes the metered parser, so a
/// million-digit number is read in interruptible pieces rather than by one quadratic call.
pub type BigReader<'r, E> = dyn FnMut(&str) -> Result<Option<Value>, E> + 'r;

/// [`parse`] with the Integers longer than a machine word read by `big`; its error stops the
/// parse (an embedder's limit).
pub fn parse_with<E>(src: &str, big: &mut BigReader<'_, E>) -> Result<Value, Failed<E>> {
    let mut r = Reader {
        s: src.as_bytes(),
        src,
        i: 0,
        depth: 0,
        big,
        stopped: None,
    };
    let out = (|| {
        r.ws();
        let v = r.value()?;
        r.ws();
        if r.i < r.s.len() {
            return Err(r.fail("unexpected text after the JSON value"));
        }
        Ok(v)
    })();
    match (out, r.stopped.take()) {
        (_, Some(e)) => Err(Failed::Stopped(e)),
        (Ok(v), None) => Ok(v),
        (Err(p), None) => Err(Failed::Syntax(p)),
    }
}

struct Reader<'a, 'r, E> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    depth: usize,
    big: &'r mut BigReader<'r, E>,
    /// The big-Integer reader's error, once it stopped the parse.
    stopped: Option<E>,
}

type R<T> = Result<T, ParseError>;

impl<'a, 'r, E> Reader<'a, 'r, E> {
    fn fail(&self, msg: &str) -> ParseError {
        self.fail_at(self.i, msg)
    }

    fn fail_at(&self, at: usize, msg: &str) -> ParseError {
        let at = at.min(self.s.len());
        let before = &self.s[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        // Characters, not bytes: count the UTF-8 lead bytes.
        let column = self.s[line_start..at]
            .iter()
            .filter(|&&b| (b & 0xC0) != 0x80)
            .count()
            + 1;
        ParseError {
            line,
            column,
            message: msg.to_string(),
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn value(&mut self) -> R<Value> {
        match self.s.get(self.i) {
            None => Err(self.fail("unexpected end of input, expected a value")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Value::str(self.string()?)),
            Some(b't') => self.word("true", Value::True),
            Some(b'f') => self.word("false", Value::False),
            Some(b'n') => self.word("null", Value::Nil),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.fail("expected a value")),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> R<Value> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.fail("expected a value"))
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail(&format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn array(&mut self) -> R<Value> {
        self.enter()?;
        self.i += 1;
        let mut items: Vec<Value> = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                items.push(self.value()?);
                self.ws();
                match self.s.get(self.i) {
                    Some(b',') => self.i += 1,
                    Some(b']') => {
                        self.i += 1;
                        break;
                    }
                    None => return Err(self.fail("unexpected end of input in an array")),
                    Some(_) => return Err(self.fail("expected ',' or ']' in an array")),
                }
            }
        }
        self.depth -= 1;
        Ok(Value::list_from_vec(items))
    }

    fn object(&mut self) -> R<Value> {
        self.enter()?;
        self.i += 1;
        let mut d = Dict::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                match self.s.get(self.i) {
                    Some(b'"') => {}
                    None => return Err(self.fail("unexpected end of input in an object")),
                    Some(_) => return Err(self.fail("expected a string key in an object")),
                }
                let k = self.string()?;
                self.ws();
                if self.s.get(self.i) != Some(&b':') {
                    return Err(self.fail("expected ':' after an object key"));
                }
                self.i += 1;
                self.ws();
                let v = self.value()?;
                d.insert(Value::str(k), v);
                self.ws();
                match self.s.get(self.i) {
                    Some(b',') => self.i += 1,
                    Some(b'}') => {
                        self.i += 1;
                        break;
                    }
                    None => return Err(self.fail("unexpected end of input in an object")),
                    Some(_) => return Err(self.fail("expected ',' or '}' in an object")),
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Dict(Ref::new(d)))
    }

    /// A string starting at the opening quote; answers its text.
    fn string(&mut self) -> R<String> {
        let open = self.i;
        self.i += 1;
        let start = self.i;
        // Fast path: no escapes.
        loop {
            match self.s.get(self.i) {
                None => return Err(self.fail_at(open, "unterminated string")),
                Some(b'"') => {
                    let text = &self.src[start..self.i];
                    self.i += 1;
                    return Ok(text.to_string());
                }
                Some(b'\\') => break,
                Some(&b) if b < 0x20 => {
                    return Err(self.fail("control character in a string (escape it)"))
                }
                Some(_) => self.i += 1,
            }
        }
        let mut out = String::with_capacity(self.i - start + 16);
        out.push_str(&self.src[start..self.i]);
        loop {
            let run = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(&self.src[run..self.i]);
            match self.s.get(self.i) {
                None => return Err(self.fail_at(open, "unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.fail("control character in a string (escape it)")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> R<()> {
        let c = match self.s.get(self.i) {
            None => return Err(self.fail("unterminated string")),
            Some(&c) => c,
        };
        self.i += 1;
        match c {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let at = self.i - 2;
                let hi = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    if self.s.get(self.i) == Some(&b'\\') && self.s.get(self.i + 1) == Some(&b'u') {
                        self.i += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return Err(self.fail_at(at, "unpaired surrogate in a \\u escape"));
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else {
                        return Err(self.fail_at(at, "unpaired surrogate in a \\u escape"));
                    }
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(self.fail_at(at, "unpaired surrogate in a \\u escape"));
                } else {
                    hi
                };
                match char::from_u32(code) {
                    Some(ch) => out.push(ch),
                    None => return Err(self.fail_at(at, "invalid \\u escape")),
                }
            }
            _ => return Err(self.fail_at(self.i - 2, "invalid escape in a string")),
        }
        Ok(())
    }

    fn hex4(&mut self) -> R<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.s.get(self.i) {
                Some(&b) => (b as char).to_digit(16),
                None => None,
            };
            match d {
                Some(d) => v = v * 16 + d,
                None => return Err(self.fail("expected four hex digits after \\u")),
            }
            self.i += 1;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> R<Value> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        let int_start = self.i;
        let n = self.digits();
        if n == 0 {
            return Err(self.fail("expected digits in a number"));
        }
        if n > 1 && self.s[int_start] == b'0' {
            return Err(self.fail_at(int_start, "leading zero in a number"));
        }
        let mut float = false;
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.fail("expected digits after '.' in a number"));
            }
            float = true;
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.fail("expected digits in a number's exponent"));
            }
            float = true;
        }
        let text = &self.src[start..self.i];
        if float {
            match text.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::float(x)),
                _ => Err(self.fail_at(start, "number out of range for a Float")),
            }
        } else if text.len() <= 18 {
            // At most 18 characters (17 digits and a sign, or 18 digits) always fit in i64.
            let mut v: i64 = 0;
            for &b in &self.s[int_start..self.i] {
                v = v * 10 + (b - b'0') as i64;
            }
            Ok(Value::Int(if int_start > start { -v } else { v }))
        } else {
            match (self.big)(text) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(self.fail_at(start, "invalid number")),
                Err(e) => {
                    self.stopped = Some(e);
                    Err(self.fail_at(start, "stopped"))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> (usize, usize) {
        let e = parse(s).unwrap_err();
        (e.line, e.column)
    }

    #[test]
    fn scalars() {
        assert!(matches!(parse("42"), Ok(Value::Int(42))));
        assert!(matches!(parse(" -7 "), Ok(Value::Int(-7))));
        assert!(matches!(parse("true"), Ok(Value::True)));
        assert!(matches!(parse("null"), Ok(Value::Nil)));
        match parse("2.5e1") {
            Ok(Value::Float(f)) => assert_eq!(f.get(), 25.0),
            _ => panic!("float"),
        }
        match &parse("123456789012345678901234567890") {
            Ok(Value::BigInt(b)) => assert_eq!(b.to_string(), "123456789012345678901234567890"),
            _ => panic!("bigint"),
        }
        match parse("-9223372036854775808") {
            Ok(Value::Int(i)) => assert_eq!(i, i64::MIN),
            _ => panic!("i64 min"),
        }
    }

    #[test]
    fn strings_and_escapes() {
        match &parse(r#""a\"b\\c\n\u00e9\ud83d\ude00""#) {
            Ok(Value::Str(s)) => assert_eq!(s.as_str(), "a\"b\\c\né😀"),
            _ => panic!("string"),
        }
    }

    #[test]
    fn error_positions() {
        assert_eq!(err("not valid"), (1, 1));
        assert_eq!(err("[1,\n 2,\n x]"), (3, 2));
        assert_eq!(err("{\"é\": 1 2}"), (1, 9));
        assert_eq!(err("[1, 2"), (1, 6));
        assert_eq!(err("01"), (1, 1));
        assert_eq!(err("\"\\ud800\""), (1, 2));
        assert_eq!(err("1e999"), (1, 1));
        assert_eq!(err("[] x"), (1, 4));
    }

    #[test]
    fn depth_limit() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).is_err());
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }
}
