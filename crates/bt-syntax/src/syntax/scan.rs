//! The raw token scanner: a hand-written byte loop that answers the same tokens as the
//! logos automaton derived on [`Tok`] in test builds.
//!
//! The rules are logos's: the longest match wins, and between equal lengths the token with
//! the higher priority (`//` comments over operators, `->`/`>>`/`<<`/`=>` over an operator
//! run of the same two characters). Whitespace (`[ \t\r\n\x0C]`) is skipped; a byte that
//! starts no token is an `Unexpected` error covering its whole character. The wrapper in
//! `lexer.rs` (line bookkeeping, keywords, directives, doc comments) is unchanged.

use crate::syntax::lexer::scan_string;
use crate::syntax::token::{LexError, Tok};

/// A token stream over `text` with logos's `next`/`span` shape (`fmt` and the differential
/// tests; the lexer calls [`scan`] directly).
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

    /// Byte range of the last token.
    pub(crate) fn span(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// Byte classes (bit flags).
const IDENT: u8 = 1;
const DIGIT: u8 = 2;
const ALPHA: u8 = 4;
const OP: u8 = 8;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphabetic() {
            t[c] |= IDENT | ALPHA;
        }
        if b.is_ascii_digit() {
            t[c] |= IDENT | DIGIT;
        }
        if b == b'_' {
            t[c] |= IDENT;
        }
        if matches!(
            b,
            b'+' | b'-' | b'*' | b'/' | b'<' | b'>' | b'=' | b'~' | b'%' | b'&' | b'?' | b'\\'
        ) {
            t[c] |= OP;
        }
        c += 1;
    }
    t
};

#[inline(always)]
fn has(c: u8, class: u8) -> bool {
    CLASS[c as usize] & class != 0
}

#[inline(always)]
fn is_ident_start(c: u8) -> bool {
    c == b'_' || has(c, ALPHA)
}

/// The index past the run of bytes of `class` starting at `i`.
#[inline(always)]
fn run(b: &[u8], mut i: usize, class: u8) -> usize {
    while i < b.len() && has(b[i], class) {
        i += 1;
    }
    i
}

#[inline(always)]
fn at(b: &[u8], k: usize) -> u8 {
    b.get(k).copied().unwrap_or(0)
}

/// The token starting at byte `i` of `s` (not whitespace) and the index just past it. The
/// text ends where `s` does (the lexer passes the source up to its region's end).
#[inline]
pub(crate) fn scan(s: &str, i: usize) -> (Result<Tok, LexError>, usize) {
    let b = s.as_bytes();
    let one = |t: Tok| (Ok(t), i + 1);
    // No guards on the arms: the match is one jump table.
    match b[i] {
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => (Ok(Tok::Ident), run(b, i + 1, IDENT)),
        b'0'..=b'9' => number(b, i),
        b'#' => hash(b, i),
        b'"' => match string_len(&b[i + 1..]) {
            Ok(n) => (Ok(Tok::Str), i + 1 + n),
            Err(n) => (Err(LexError::UnterminatedString), i + 1 + n),
        },
        b':' => match at(b, i + 1) {
            b'=' => (Ok(Tok::Assign), i + 2),
            b':' => (Ok(Tok::ColonColon), i + 2),
            _ => one(Tok::Colon),
        },
        b'.' => {
            if at(b, i + 1) == b'.' && at(b, i + 2) == b'.' {
                (Ok(Tok::Ellipsis), i + 3)
            } else {
                one(Tok::Dot)
            }
        }
        b',' => one(Tok::Comma),
        b'(' => one(Tok::LParen),
        b')' => one(Tok::RParen),
        b'[' => one(Tok::LBracket),
        b']' => one(Tok::RBracket),
        b'{' => one(Tok::LBrace),
        b'}' => one(Tok::RBrace),
        b'^' => one(Tok::Caret),
        b';' => one(Tok::Semi),
        b'!' => one(Tok::Bang),
        b'|' => one(Tok::Pipe),
        b'-' => {
            if at(b, i + 1).is_ascii_digit() {
                number(b, i + 1)
            } else {
                operator(b, i)
            }
        }
        b'/' => {
            if at(b, i + 1) == b'/' {
                let e = find(b'\n', &b[i + 2..]).map_or(b.len(), |k| i + 2 + k);
                (Ok(Tok::LineComment), e)
            } else {
                operator(b, i)
            }
        }
        b'+' | b'*' | b'<' | b'>' | b'=' | b'~' | b'%' | b'&' | b'?' | b'\\' => operator(b, i),
        b'$' => char_literal(s, i),
        b'@' => {
            if is_ident_start(at(b, i + 1)) {
                (Ok(Tok::Directive), run(b, i + 2, IDENT))
            } else {
                (Err(LexError::Unexpected), i + 1)
            }
        }
        b'\'' => {
            // Always an error: to the next `'` on the line (included), else the line end.
            let rest = &b[i + 1..];
            let line_end = find(b'\n', rest).unwrap_or(rest.len());
            let n = find(b'\'', &rest[..line_end]).map_or(line_end, |j| j + 1);
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

/// A run of operator characters at `i` (`=:=` is one operator although `:` is not an
/// operator character; `->`, `>>`, `<<`, `=>` and `/*` alone are tokens of their own).
fn operator(b: &[u8], i: usize) -> (Result<Tok, LexError>, usize) {
    if b[i] == b'=' && at(b, i + 1) == b':' && at(b, i + 2) == b'=' {
        return (Ok(Tok::BinOp), i + 3);
    }
    let e = run(b, i + 1, OP);
    let tok = if e == i + 2 {
        match (b[i], b[i + 1]) {
            (b'-', b'>') => Tok::Arrow,
            (b'>', b'>') => Tok::ShiftRight,
            (b'<', b'<') => Tok::ShiftLeft,
            (b'=', b'>') => Tok::FatArrow,
            (b'/', b'*') => return block_comment(b, i),
            _ => Tok::BinOp,
        }
    } else {
        Tok::BinOp
    };
    (Ok(tok), e)
}

/// `-?[0-9]+` (Int), `-?[0-9]+r[0-9A-Za-z]+` (RadixInt), `-?[0-9]+\.[0-9]+(exp)?` and
/// `-?[0-9]+exp` (Float); `d` is the first digit.
fn number(b: &[u8], d: usize) -> (Result<Tok, LexError>, usize) {
    let j = run(b, d, DIGIT);
    if at(b, j) == b'r' && at(b, j + 1).is_ascii_alphanumeric() {
        return (Ok(Tok::RadixInt), run(b, j + 2, DIGIT | ALPHA));
    }
    if at(b, j) == b'.' && at(b, j + 1).is_ascii_digit() {
        let k = run(b, j + 2, DIGIT);
        return (Ok(Tok::Float), exponent(b, k).unwrap_or(k));
    }
    match exponent(b, j) {
        Some(k) => (Ok(Tok::Float), k),
        None => (Ok(Tok::Int), j),
    }
}

/// `[eE][+\-]?[0-9]+` at `j`: the index past it.
fn exponent(b: &[u8], j: usize) -> Option<usize> {
    if !matches!(at(b, j), b'e' | b'E') {
        return None;
    }
    let k = if matches!(at(b, j + 1), b'+' | b'-') {
        j + 2
    } else {
        j + 1
    };
    at(b, k).is_ascii_digit().then(|| run(b, k + 1, DIGIT))
}

/// After `#`: symbols, the collection openers, a quoted symbol, or a lone `#`.
fn hash(b: &[u8], i: usize) -> (Result<Tok, LexError>, usize) {
    match at(b, i + 1) {
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
            let j = run(b, i + 2, IDENT);
            if at(b, j) != b':' {
                return (Ok(Tok::Symbol), j);
            }
            // `#at:put:`: as many `name:` parts as follow.
            let mut k = j + 1;
            while is_ident_start(at(b, k)) {
                let m = run(b, k + 1, IDENT);
                if at(b, m) != b':' {
                    break;
                }
                k = m + 1;
            }
            (Ok(Tok::Symbol), k)
        }
        b'=' if at(b, i + 2) == b':' && at(b, i + 3) == b'=' => (Ok(Tok::Symbol), i + 4),
        c if has(c, OP) => (Ok(Tok::Symbol), run(b, i + 2, OP)),
        _ => (Ok(Tok::Hash), i + 1),
    }
}

/// The first `n` in `h`. The scanner's searches use memchr's portable word-at-a-time
/// search, not its entry points that pick an implementation by the CPU's features: the first
/// of those asks the CPU for them (`std_detect`, a run of `cpuid` instructions, each a trap
/// to the hypervisor on a virtual machine: ~0.1 ms of `bt run`'s start-up on the project
/// machine). A search here spans one comment or one string, where the two are as fast.
#[inline]
fn find(n: u8, h: &[u8]) -> Option<usize> {
    memchr::arch::all::memchr::One::new(n).find(h)
}

/// Where `*/` starts in `h`.
fn find_comment_end(h: &[u8]) -> Option<usize> {
    let star = memchr::arch::all::memchr::One::new(b'*');
    let mut from = 0;
    while let Some(k) = star.find(&h[from..]) {
        let k = from + k;
        if h.get(k + 1) == Some(&b'/') {
            return Some(k);
        }
        from = k + 1;
    }
    None
}

/// `/* … */` (not nested); unterminated runs to the end of the text.
fn block_comment(b: &[u8], i: usize) -> (Result<Tok, LexError>, usize) {
    let rest = &b[i + 2..];
    match find_comment_end(rest) {
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
    if let Some(k) = memchr::arch::all::memchr::Three::new(b'"', b'{', b'\\').find(rest) {
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
