//! The raw token scanner: a hand-written byte loop that answers the same tokens as the
//! logos automaton derived on [`Tok`] (session 14: about a third of the instructions; the
//! logos derive stays as the reference the differential tests compare against, and `fmt`
//! uses it).
//!
//! The rules are logos's: the longest match wins, and between equal lengths the token with
//! the higher priority (`//` comments over operators, `->`/`>>`/`<<`/`=>` over an operator
//! run of the same two characters). Whitespace (`[ \t\r\n\x0C]`) is skipped; a byte that
//! starts no token is an `Unexpected` error covering its whole character. The wrapper in
//! `lexer.rs` (line bookkeeping, keywords, directives, doc comments) is unchanged.

use crate::syntax::lexer::scan_string;
use crate::syntax::token::{LexError, Tok};

/// A token stream over `text` with logos's `next`/`span`/`bump` shape.
pub(crate) struct Scanner<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            text,
            start: 0,
            end: 0,
        }
    }

    /// The next token (`Err` for bad input), or `None` at the end of the text.
    #[inline]
    pub(crate) fn next(&mut self) -> Option<Result<Tok, LexError>> {
        let b = self.text.as_bytes();
        let mut i = self.end;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n' | 0x0C) {
            i += 1;
        }
        self.start = i;
        if i >= b.len() {
            self.end = i;
            return None;
        }
        let (r, e) = scan(self.text, i);
        self.end = e;
        Some(r)
    }

    /// Byte range of the last token, relative to the text.
    #[inline]
    pub(crate) fn span(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// Extends the last token by `n` bytes.
    #[inline]
    pub(crate) fn bump(&mut self, n: usize) {
        self.end += n;
    }
}

#[inline]
fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

#[inline]
fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Operator characters (`[+\-*/<>=~%&?\\]`).
#[inline]
fn is_op(c: u8) -> bool {
    matches!(
        c,
        b'+' | b'-' | b'*' | b'/' | b'<' | b'>' | b'=' | b'~' | b'%' | b'&' | b'?' | b'\\'
    )
}

#[inline]
fn run(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

/// The token starting at byte `i` of `s` (not whitespace) and the index just past it.
fn scan(s: &str, i: usize) -> (Result<Tok, LexError>, usize) {
    let b = s.as_bytes();
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let c = b[i];
    let one = |t: Tok| (Ok(t), i + 1);
    match c {
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => (Ok(Tok::Ident), run(b, i + 1, is_ident)),
        b'0'..=b'9' => number(b, i),
        b'-' if at(i + 1).is_ascii_digit() => number(b, i + 1),
        b'/' if at(i + 1) == b'/' => {
            let e = memchr::memchr(b'\n', &b[i + 2..]).map_or(b.len(), |k| i + 2 + k);
            (Ok(Tok::LineComment), e)
        }
        b'=' if at(i + 1) == b':' && at(i + 2) == b'=' => (Ok(Tok::BinOp), i + 3),
        _ if is_op(c) => {
            let e = run(b, i + 1, is_op);
            let tok = match &b[i..e] {
                b"->" => Tok::Arrow,
                b">>" => Tok::ShiftRight,
                b"<<" => Tok::ShiftLeft,
                b"=>" => Tok::FatArrow,
                b"/*" => return block_comment(b, i),
                _ => Tok::BinOp,
            };
            (Ok(tok), e)
        }
        b'"' => match string_len(&b[i + 1..]) {
            Ok(n) => (Ok(Tok::Str), i + 1 + n),
            Err(n) => (Err(LexError::UnterminatedString), i + 1 + n),
        },
        b'$' => char_literal(s, i),
        b'#' => hash(b, i),
        b'@' if is_ident_start(at(i + 1)) => (Ok(Tok::Directive), run(b, i + 2, is_ident)),
        b':' => match at(i + 1) {
            b'=' => (Ok(Tok::Assign), i + 2),
            b':' => (Ok(Tok::ColonColon), i + 2),
            _ => one(Tok::Colon),
        },
        b'.' if at(i + 1) == b'.' && at(i + 2) == b'.' => (Ok(Tok::Ellipsis), i + 3),
        b'.' => one(Tok::Dot),
        b'^' => one(Tok::Caret),
        b';' => one(Tok::Semi),
        b'!' => one(Tok::Bang),
        b'|' => one(Tok::Pipe),
        b',' => one(Tok::Comma),
        b'(' => one(Tok::LParen),
        b')' => one(Tok::RParen),
        b'[' => one(Tok::LBracket),
        b']' => one(Tok::RBracket),
        b'{' => one(Tok::LBrace),
        b'}' => one(Tok::RBrace),
        b'\'' => {
            // Always an error: to the next `'` on the line (included), else the line end.
            let rest = &b[i + 1..];
            let line_end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let n = memchr::memchr(b'\'', &rest[..line_end]).map_or(line_end, |j| j + 1);
            (Err(LexError::SingleQuote), i + 1 + n)
        }
        _ => {
            // A byte that starts no token: the whole character is the error.
            let mut e = i + 1;
            while !s.is_char_boundary(e) {
                e += 1;
            }
            (Err(LexError::Unexpected), e)
        }
    }
}

/// `-?[0-9]+` (Int), `-?[0-9]+r[0-9A-Za-z]+` (RadixInt), `-?[0-9]+\.[0-9]+(exp)?` and
/// `-?[0-9]+exp` (Float); `d` is the first digit.
fn number(b: &[u8], d: usize) -> (Result<Tok, LexError>, usize) {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let j = run(b, d, |c| c.is_ascii_digit());
    if at(j) == b'r' && at(j + 1).is_ascii_alphanumeric() {
        return (
            Ok(Tok::RadixInt),
            run(b, j + 2, |c| c.is_ascii_alphanumeric()),
        );
    }
    if at(j) == b'.' && at(j + 1).is_ascii_digit() {
        let k = run(b, j + 2, |c| c.is_ascii_digit());
        return (Ok(Tok::Float), exponent(b, k).unwrap_or(k));
    }
    match exponent(b, j) {
        Some(k) => (Ok(Tok::Float), k),
        None => (Ok(Tok::Int), j),
    }
}

/// `[eE][+\-]?[0-9]+` at `j`: the index past it.
fn exponent(b: &[u8], j: usize) -> Option<usize> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    if !matches!(at(j), b'e' | b'E') {
        return None;
    }
    let k = if matches!(at(j + 1), b'+' | b'-') {
        j + 2
    } else {
        j + 1
    };
    at(k)
        .is_ascii_digit()
        .then(|| run(b, k + 1, |c| c.is_ascii_digit()))
}

/// After `#`: symbols, the collection openers, a quoted symbol, or a lone `#`.
fn hash(b: &[u8], i: usize) -> (Result<Tok, LexError>, usize) {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    match at(i + 1) {
        b'(' => (Ok(Tok::HashParen), i + 2),
        b'[' => (Ok(Tok::HashBracket), i + 2),
        b'{' => (Ok(Tok::HashBrace), i + 2),
        b',' => (Ok(Tok::Symbol), i + 2),
        b'\'' => {
            // `#'…'` with `''` for a quote inside.
            let rest = &b[i + 2..];
            let mut k = 0;
            while k < rest.len() {
                if rest[k] == b'\'' {
                    if rest.get(k + 1) == Some(&b'\'') {
                        k += 2;
                        continue;
                    }
                    return (Ok(Tok::QuotedSymbol), i + 2 + k + 1);
                }
                k += 1;
            }
            (Err(LexError::UnterminatedSymbol), b.len())
        }
        c if is_ident_start(c) => {
            let j = run(b, i + 2, is_ident);
            if at(j) != b':' {
                return (Ok(Tok::Symbol), j);
            }
            // `#at:put:`: as many `name:` parts as follow.
            let mut k = j + 1;
            while is_ident_start(at(k)) {
                let m = run(b, k + 1, is_ident);
                if at(m) != b':' {
                    break;
                }
                k = m + 1;
            }
            (Ok(Tok::Symbol), k)
        }
        b'=' if at(i + 2) == b':' && at(i + 3) == b'=' => (Ok(Tok::Symbol), i + 4),
        c if is_op(c) => (Ok(Tok::Symbol), run(b, i + 2, is_op)),
        _ => (Ok(Tok::Hash), i + 1),
    }
}

/// `/* … */` (not nested); unterminated runs to the end of the text.
fn block_comment(b: &[u8], i: usize) -> (Result<Tok, LexError>, usize) {
    let rest = &b[i + 2..];
    match memchr::memmem::find(rest, b"*/") {
        Some(k) => (Ok(Tok::BlockComment), i + 2 + k + 2),
        None => (Err(LexError::UnterminatedComment), b.len()),
    }
}

/// A string body after its opening quote: its length with the closing quote, or (`Err`) the
/// length to the end of the text when it never closes. An interpolation that never closes
/// falls back to the plain string end so the rest of the file still lexes (the parser
/// reports the brace).
fn string_len(rest: &[u8]) -> Result<usize, usize> {
    // The common case first: no interpolation or escape before the closing quote.
    if let Some(k) = memchr::memchr3(b'"', b'{', b'\\', rest) {
        if rest[k] == b'"' && rest.get(k + 1) != Some(&b'"') {
            return Ok(k + 1);
        }
    }
    match scan_string(rest, 0, true) {
        Ok(n) => Ok(n),
        Err(_) => scan_string(rest, 0, false),
    }
}

/// `$c`, `$\c`; `$` at the end (or `$\` at the end) is `BadChar`.
fn char_literal(s: &str, i: usize) -> (Result<Tok, LexError>, usize) {
    let mut it = s[i + 1..].chars();
    match it.next() {
        None => (Err(LexError::BadChar), i + 1),
        Some('\\') => match it.next() {
            Some(c) => (Ok(Tok::Char), i + 2 + c.len_utf8()),
            None => (Err(LexError::BadChar), i + 2),
        },
        Some(c) => (Ok(Tok::Char), i + 1 + c.len_utf8()),
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
