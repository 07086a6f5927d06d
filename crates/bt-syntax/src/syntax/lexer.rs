//! The lexer: the scanner's tokens (`scan.rs`) plus the line/column bookkeeping
//!
//! [`lex`] never aborts: bad input becomes a [`Tok::Error`] token and a diagnostic. It also
//! merges `ident:` into keyword tokens and `pkg@Class` into one identifier, keeps `///` doc
//! comments aside (for the declarations they precede), and marks column-0 lines that start a
//! declaration (used by recovery at top level).

use crate::diagnostic::Diagnostic;
use crate::syntax::ast::Span;
use crate::syntax::scan::scan;
use crate::syntax::token::{LexError, Tok, Token, DECL_START, FIRST, SPACE_BEFORE};

/// The output of the lexer.
#[derive(Debug, Default)]
pub struct Lexed {
    /// Significant tokens, ending with one `Tok::Eof`.
    pub tokens: Vec<Token>,
    /// `///` lines, in order (span of the whole comment, `///` included).
    pub docs: Vec<Span>,
    pub diags: Vec<Diagnostic>,
}

thread_local! {
    /// A token vector a finished parse gave back ([`give_back`]), reused by the next lex on
    /// this thread. A short script's token vector is over 1 KiB, and with the system
    /// allocator such a request made glibc consolidate its free lists on every `eval`
    /// (a twentieth of a 10-line config eval's instructions).
    static SPARE: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Spare vectors above this many tokens are not kept (a large file's tokens are freed).
const SPARE_MAX: usize = 1 << 14;

/// An empty token vector with room for `n` tokens (the thread's spare when there is one).
fn token_vec(n: usize) -> Vec<Token> {
    let mut v = SPARE.try_with(|s| s.take()).unwrap_or_default();
    v.clear();
    v.reserve(n);
    v
}

/// Hands a token vector back for the next lex on this thread (see `SPARE`).
pub(crate) fn give_back(mut v: Vec<Token>) {
    if v.capacity() <= SPARE_MAX {
        v.clear();
        let _ = SPARE.try_with(|s| s.set(v));
    }
}

/// Lexes a whole source file.
pub fn lex(src: &str) -> Lexed {
    lex_range(src, 0, src.len(), true)
}

/// Lexes `src[start..end]` with spans relative to `src` (used for string interpolation).
/// `at_line_start` says whether the first token counts as the first on its line.
pub(crate) fn lex_range(src: &str, start: usize, end: usize, at_line_start: bool) -> Lexed {
    lex_from(src, start, end, start, at_line_start)
}

/// [`lex_range`] for a range starting inside a line that starts at `line_start` (columns are
/// counted from there): a lazily parsed method body re-lexes its region this way.
pub(crate) fn lex_from(
    src: &str,
    start: usize,
    end: usize,
    line_start: usize,
    at_line_start: bool,
) -> Lexed {
    // Scanned with absolute positions over the source up to the region's end.
    let text = &src[..end];
    let bytes = text.as_bytes();
    let mut out = Lexed {
        tokens: token_vec(token_estimate(end - start)),
        docs: Vec::new(),
        diags: Vec::new(),
    };
    let mut line: u32 = 0;
    let mut line_start: usize = line_start;
    let mut prev_end: usize = start;
    let mut pending_first = at_line_start;
    let mut last_unexpected_end: usize = usize::MAX;
    loop {
        // Whitespace before the token, with the line bookkeeping (every path below ends
        // with `prev_end` at the end of what it consumed).
        let mut i = prev_end;
        while i < end {
            match bytes[i] {
                b'\n' => {
                    line += 1;
                    line_start = i + 1;
                    pending_first = true;
                }
                b' ' | b'\t' | b'\r' | 0x0C => {}
                _ => break,
            }
            i += 1;
        }
        if i >= end {
            break;
        }
        let s = i;
        let (res, mut e) = scan(text, s);
        let mut space = s > prev_end;
        let mut kind = match res {
            Ok(k) => k,
            Err(err) => {
                let span = Span::new(s, e);
                match err {
                    LexError::Unexpected => {
                        // A run of unexpected characters, together with the identifier
                        // characters glued to it (`café`), is one error token.
                        let glued = out.tokens.last().is_some_and(|t| {
                            t.end as usize == s
                                && matches!(t.kind, Tok::Ident | Tok::Keyword | Tok::Error)
                        });
                        if glued {
                            let last = out.tokens.len() - 1;
                            let t = &mut out.tokens[last];
                            let word_start = t.start as usize;
                            t.kind = Tok::Error;
                            t.end = e as u32;
                            if last_unexpected_end == word_start || last_unexpected_end == s {
                                if let Some(d) = out.diags.last_mut() {
                                    d.span.end = e as u32;
                                }
                            } else {
                                out.diags
                                    .push(unexpected_char(src, s, Span::new(word_start, e)));
                            }
                            last_unexpected_end = e;
                            prev_end = e;
                            continue;
                        }
                        out.diags.push(unexpected_char(src, s, span));
                        last_unexpected_end = e;
                    }
                    other => out.diags.push(lex_error_diag(other, src, span)),
                }
                Tok::Error
            }
        };
        if matches!(kind, Tok::Ident | Tok::Int) && last_unexpected_end == s {
            if let Some(t) = out.tokens.last_mut() {
                if t.kind == Tok::Error && t.end as usize == s {
                    t.end = e as u32;
                    if let Some(d) = out.diags.last_mut() {
                        d.span.end = e as u32;
                    }
                    last_unexpected_end = e;
                    prev_end = e;
                    continue;
                }
            }
        }
        match kind {
            // `ident:` (not `:=` / `::`) is a keyword.
            Tok::Ident
                if e < end
                    && bytes[e] == b':'
                    && !(e + 1 < end && matches!(bytes[e + 1], b':' | b'=')) =>
            {
                e += 1;
                kind = Tok::Keyword;
            }
            Tok::Directive => {
                // `pkg@Class`: qualify the identifier just before (no space between).
                if let Some(last) = out.tokens.last_mut() {
                    if last.kind == Tok::Ident && last.end as usize == s {
                        last.end = e as u32;
                        prev_end = e;
                        continue;
                    }
                }
                let name = &src[s + 1..e];
                if !matches!(name, "expect" | "primitive" | "intrinsic") {
                    out.diags.push(
                        Diagnostic::error(
                            "E0101",
                            format!("unknown directive `@{name}`"),
                            Span::new(s, e),
                        )
                        .with_hint("the only directive for user code is `@expect CATEGORY`"),
                    );
                    kind = Tok::Error;
                }
            }
            Tok::RadixInt => {
                if let Some(msg) = check_radix(&src[s..e]) {
                    out.diags
                        .push(Diagnostic::error("E0101", msg, Span::new(s, e)));
                    kind = Tok::Error;
                }
            }
            Tok::Hash => {
                out.diags.push(
                    Diagnostic::error("E0101", "a lone `#` is not a symbol", Span::new(s, e))
                        .with_hint("write `#name`, `#at:put:`, `#+`, `#'any text'`, or `#(`, `#[`, `#{` for a collection"),
                );
                kind = Tok::Error;
            }
            Tok::LineComment => {
                // `//…` here: a doc comment is `///` not followed by a fourth `/`.
                if e - s >= 3 && bytes[s + 2] == b'/' && (e - s == 3 || bytes[s + 3] != b'/') {
                    out.docs.push(Span::new(s, e));
                }
                prev_end = e;
                continue;
            }
            Tok::BlockComment => {
                count_lines(bytes, s, e, &mut line, &mut line_start);
                prev_end = e;
                continue;
            }
            _ => {}
        }
        let mut flags = 0;
        if pending_first {
            flags |= FIRST;
        }
        if space || out.tokens.is_empty() {
            space = true;
        }
        if space {
            flags |= SPACE_BEFORE;
        }
        out.tokens.push(Token {
            kind,
            flags,
            start: s as u32,
            end: e as u32,
            line,
            col: (s - line_start) as u32,
        });
        pending_first = false;
        if matches!(kind, Tok::Str | Tok::QuotedSymbol | Tok::Error | Tok::Char) {
            count_lines(bytes, s, e, &mut line, &mut line_start);
        }
        prev_end = e;
    }
    out.tokens.push(Token {
        kind: Tok::Eof,
        flags: FIRST | SPACE_BEFORE,
        start: end as u32,
        end: end as u32,
        line,
        col: 0,
    });
    for i in 0..out.tokens.len() {
        let t = out.tokens[i];
        if t.first()
            && t.col == 0
            && t.kind == Tok::Ident
            && decl_kind(&out.tokens, src, i).is_some()
        {
            out.tokens[i].flags |= DECL_START;
        }
    }
    out
}

/// Room for the tokens of `len` bytes: about one token per 3 bytes of a short script
/// (`#port => base + 80,`: growing the vector once costs more than the lexing of a 10-line
/// config), and one per 12 beyond the first 4 KiB (a file of the library, two-thirds `///`
/// lines, has one token per 15 bytes; a reservation of one per 3 took 2 MB for the library).
fn token_estimate(len: usize) -> usize {
    const SHORT: usize = 4096;
    len.min(SHORT) / 3 + len.saturating_sub(SHORT) / 12 + 8
}

fn unexpected_char(src: &str, at: usize, span: Span) -> Diagnostic {
    let ch = src[at..].chars().next().unwrap_or(' ');
    Diagnostic::error(
        "E0101",
        format!("unexpected character `{}`", ch.escape_debug()),
        span,
    )
    .with_hint("identifiers are ASCII letters, digits and `_`; non-ASCII text belongs in strings")
}

fn count_lines(bytes: &[u8], s: usize, e: usize, line: &mut u32, line_start: &mut usize) {
    for (k, &b) in bytes[s..e].iter().enumerate() {
        if b == b'\n' {
            *line += 1;
            *line_start = s + k + 1;
        }
    }
}

fn lex_error_diag(err: LexError, src: &str, span: Span) -> Diagnostic {
    match err {
        LexError::UnterminatedString => Diagnostic::error("E0101", "unterminated string", Span::new(span.start as usize, span.start as usize + 1))
            .with_label("this string is never closed")
            .with_hint("close the string with `\"`; write `\"\"` for a quote inside it and `\\{` for a literal brace"),
        LexError::UnterminatedComment => Diagnostic::error("E0101", "unterminated block comment", Span::new(span.start as usize, span.start as usize + 2))
            .with_label("this comment is never closed")
            .with_hint("close it with `*/` (block comments do not nest)"),
        LexError::UnterminatedSymbol => Diagnostic::error("E0101", "unterminated quoted symbol", Span::new(span.start as usize, span.start as usize + 2))
            .with_hint("close it with `'`; write `''` for a quote inside it"),
        LexError::SingleQuote => {
            let text = &src[span.range()];
            let inner = text.trim_start_matches('\'').trim_end_matches('\'');
            Diagnostic::error("E0101", "single-quoted strings are not supported", span)
                .with_hint(format!("use double quotes: \"{inner}\""))
        }
        LexError::BadChar => Diagnostic::error("E0101", "`$` must be followed by a character", span)
            .with_hint("write `$a`, `$ ` for a space, or an escape such as `$\\n`"),
        LexError::Unexpected => Diagnostic::error("E0101", "unexpected character", span),
    }
}

fn check_radix(text: &str) -> Option<String> {
    let t = text.trim_start_matches('-');
    let (radix, digits) = t.split_once('r')?;
    let radix: u32 = match radix.parse() {
        Ok(r) if (2..=36).contains(&r) => r,
        _ => {
            return Some(format!(
                "radix {radix} is out of range: it must be between 2 and 36"
            ))
        }
    };
    for c in digits.chars() {
        if c.to_digit(36).is_none_or(|d| d >= radix) {
            return Some(format!("digit `{c}` is not valid in radix {radix}"));
        }
    }
    None
}

/// What kind of declaration starts at token `i` (which should be first on its line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclKind {
    Class,
    Standalone,
    Protocol,
    TypeAlias,
}

/// Recognises the start of a top-level declaration at token `i`.
pub(crate) fn decl_kind(toks: &[Token], src: &str, i: usize) -> Option<DeclKind> {
    let text = |k: usize| -> &str {
        toks.get(k)
            .map(|t| &src[t.start as usize..t.end as usize])
            .unwrap_or("")
    };
    let kind = |k: usize| toks.get(k).map(|t| t.kind).unwrap_or(Tok::Eof);
    if kind(i) != Tok::Ident {
        return None;
    }
    // Every declaration continues with a name, a keyword, `>>` or `(` (never `:=`, `.`…).
    if !matches!(
        kind(i + 1),
        Tok::Ident | Tok::Keyword | Tok::ShiftRight | Tok::LParen
    ) {
        return None;
    }
    match text(i) {
        "Protocol" if kind(i + 1) == Tok::Keyword && text(i + 1) == "define:" => {
            return Some(DeclKind::Protocol)
        }
        "type" if kind(i + 1) == Tok::Ident && kind(i + 2) == Tok::BinOp && text(i + 2) == "=" => {
            return Some(DeclKind::TypeAlias)
        }
        "internal" if text(i + 1) == "type" && kind(i + 2) == Tok::Ident => {
            return Some(DeclKind::TypeAlias)
        }
        _ => {}
    }
    // Class header: modifiers, superclass, optional (args), `subclass:`.
    let mut k = i;
    while matches!(text(k), "abstract" | "sealed" | "typed" | "internal")
        && kind(k + 1) == Tok::Ident
    {
        k += 1;
    }
    if kind(k) == Tok::Ident {
        let mut j = k + 1;
        if kind(j) == Tok::LParen {
            let mut depth = 0;
            while j < toks.len() && j < k + 200 {
                match kind(j) {
                    Tok::LParen => depth += 1,
                    Tok::RParen => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Eof => return None,
                    _ => {}
                }
                j += 1;
            }
            j += 1;
        }
        if kind(j) == Tok::Keyword && text(j) == "subclass:" {
            return Some(DeclKind::Class);
        }
    }
    // `Foo >> header =>` / `Foo class >> header =>`.
    let mut j = i + 1;
    if text(j) == "class" && kind(j) == Tok::Ident {
        j += 1;
    }
    if kind(j) == Tok::ShiftRight && !matches!(kind(j + 1), Tok::Symbol | Tok::QuotedSymbol) {
        let line = toks[i].line;
        let mut m = j + 1;
        while m < toks.len() && toks[m].line == line && toks[m].kind != Tok::Eof {
            if toks[m].kind == Tok::FatArrow {
                return Some(DeclKind::Standalone);
            }
            m += 1;
        }
    }
    None
}

// ---- string scanning (also used by the parser for interpolations) ----

/// Scans a string body starting after the opening quote; answers the index just past the
/// closing quote, or `Err(len)` when the input ends first.
pub(crate) fn scan_string(b: &[u8], i: usize, interp: bool) -> Result<usize, usize> {
    scan_string_at(b, i, interp, 0)
}

/// Strings nested in interpolations deeper than this are treated as unterminated.
const MAX_STRING_NESTING: u32 = 32;

fn scan_string_at(b: &[u8], mut i: usize, interp: bool, depth: u32) -> Result<usize, usize> {
    if depth > MAX_STRING_NESTING {
        return Err(b.len());
    }
    while i < b.len() {
        match b[i] {
            b'"' => {
                if b.get(i + 1) == Some(&b'"') {
                    i += 2;
                } else {
                    return Ok(i + 1);
                }
            }
            b'\\' => i += 2,
            b'{' if interp => match scan_interp_at(b, i + 1, depth + 1) {
                Some(j) => i = j + 1,
                None => return Err(b.len()),
            },
            _ => i += 1,
        }
    }
    Err(b.len())
}

/// Scans an interpolation starting after its `{`; answers the index of the matching `}`.
pub(crate) fn scan_interp(b: &[u8], i: usize) -> Option<usize> {
    scan_interp_at(b, i, 0)
}

fn scan_interp_at(b: &[u8], mut i: usize, nesting: u32) -> Option<usize> {
    let mut depth = 1usize;
    while i < b.len() {
        match b[i] {
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 1;
            }
            b'"' => match scan_string_at(b, i + 1, true, nesting + 1) {
                Ok(j) => i = j,
                Err(_) => return None,
            },
            b'$' => i += if b.get(i + 1) == Some(&b'\\') { 3 } else { 2 },
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'#' if b.get(i + 1) == Some(&b'\'') => {
                i += 2;
                while i < b.len() {
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// Decodes a character literal's text (`$a`, `$\n`, `$\\`).
pub(crate) fn char_value(text: &str) -> char {
    let mut it = text[1..].chars();
    match it.next() {
        Some('\\') => match it.next() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some(c) => c,
            None => '\\',
        },
        Some(c) => c,
        None => ' ',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn keywords_and_assignment() {
        assert_eq!(
            kinds("x:=1"),
            vec![Tok::Ident, Tok::Assign, Tok::Int, Tok::Eof]
        );
        assert_eq!(kinds("at: 1"), vec![Tok::Keyword, Tok::Int, Tok::Eof]);
        assert_eq!(
            kinds("x :: T"),
            vec![Tok::Ident, Tok::ColonColon, Tok::Ident, Tok::Eof]
        );
    }

    #[test]
    fn negative_literal_rule() {
        assert_eq!(
            kinds("3 - -2"),
            vec![Tok::Int, Tok::BinOp, Tok::Int, Tok::Eof]
        );
        assert_eq!(kinds("x-1"), vec![Tok::Ident, Tok::Int, Tok::Eof]);
        assert_eq!(kinds("3."), vec![Tok::Int, Tok::Dot, Tok::Eof]);
        assert_eq!(kinds("2.5e-3 1e10"), vec![Tok::Float, Tok::Float, Tok::Eof]);
        assert_eq!(
            kinds("a -> b >> c"),
            vec![
                Tok::Ident,
                Tok::Arrow,
                Tok::Ident,
                Tok::ShiftRight,
                Tok::Ident,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn strings_with_interpolation() {
        let l = lex(r#""a {x ++ "}"} b" 1"#);
        assert_eq!(
            l.tokens.iter().map(|t| t.kind).collect::<Vec<_>>(),
            vec![Tok::Str, Tok::Int, Tok::Eof]
        );
        assert!(l.diags.is_empty());
        let l = lex("\"abc");
        assert_eq!(l.tokens[0].kind, Tok::Error);
        assert_eq!(l.diags.len(), 1);
    }

    #[test]
    fn lines_and_columns() {
        let l = lex("a\n  b c\n/* x\n */ d");
        let t = &l.tokens;
        assert_eq!((t[1].line, t[1].col, t[1].first()), (1, 2, true));
        assert_eq!((t[2].line, t[2].col, t[2].first()), (1, 4, false));
        assert_eq!((t[3].line, t[3].first()), (3, true));
    }

    #[test]
    fn docs_and_directives() {
        let l = lex("/// doc\n//// not\nFoo@Bar @expect dnu");
        assert_eq!(l.docs.len(), 1);
        assert_eq!(l.tokens[0].kind, Tok::Ident);
        assert_eq!(l.tokens[0].end, 24);
        assert_eq!(l.tokens[1].kind, Tok::Directive);
    }
}
