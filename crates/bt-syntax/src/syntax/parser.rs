//! The parser: hand-written recursive descent over the token vector, with recovery.
//!
//! Conventions:
//! - `parse_*` functions answer `PResult<T>`; `Err(Recover)` means "a diagnostic has been
//!   reported, resynchronise" and is caught at statement, element or member level.
//! - Line structure is applied through a *fence*: while a member or a
//!   top-level statement is parsed, tokens beyond its boundary (a line at or left of the member
//!   column, or a column-0 declaration at top level) look like end of input, so no rule can
//!   run past them and recovery never crosses a member.
//! - A unary selector never continues onto a new line; binary operators, keywords, `;` and
//!   closing brackets do (checked where each loop decides whether to continue).
//!
//! Submodules: `expr` (statements and expressions), `literal` (numbers, strings, symbols),
//! `pattern` (match arms and destructuring), `types` (annotations), `decl` (declarations),
//! `method` (method headers and bodies), `lazy` (library method bodies parsed on first read).

mod collection;
mod decl;
mod expr;
pub(crate) mod lazy;
mod literal;
mod method;
mod pattern;
mod stmt;
mod types;

use crate::diagnostic::{Diagnostic, Severity};
use crate::syntax::ast::{Doc, Module, Span};
use crate::syntax::lexer::{self, Lexed};
use crate::syntax::token::{Tok, Token, DECL_START};

/// Parser options.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Accept `=> @primitive name` / `@intrinsic` bodies (the built-in library only).
    pub allow_primitives: bool,
}

/// "A diagnostic was reported; resynchronise."
#[derive(Debug)]
pub(crate) struct Recover;

pub(crate) type PResult<T> = Result<T, Recover>;

/// Where the currently parsed region ends (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fence {
    None,
    /// A first-on-line token at or left of this column ends the region.
    Col(u32),
    /// A column-0 declaration start ends the region (top-level statements).
    Decl,
}

/// Deepest bracket / pattern / type nesting accepted (keeps recursion off the stack limit:
/// a debug build needs about 10 KiB of stack per bracket level).
const MAX_DEPTH: u32 = 256;
/// Longest chain of left-nested sends (`1 + 2 + …`, `x foo bar …`) under one bracket level;
/// bounds the depth of the tree that later stages walk recursively.
const MAX_CHAIN: u32 = 1000;

pub(crate) struct Parser<'s> {
    pub(crate) src: &'s str,
    pub(crate) toks: Vec<Token>,
    pub(crate) pos: usize,
    docs: Vec<Span>,
    doc_used: Vec<bool>,
    /// Where the last [`Parser::take_doc`] stopped: declarations are read in order, so the
    /// next one's block starts there or a little after.
    doc_next: usize,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) fence: Fence,
    /// Token index exempt from the fence (the first token of the region).
    pub(crate) fence_exempt: usize,
    pub(crate) depth: u32,
    /// Left-nested sends in the current chain (see `MAX_CHAIN`).
    pub(crate) chain: u32,
    pub(crate) opts: Options,
    last_err: u32,
    /// End of the last consumed token.
    pub(crate) prev_end: u32,
    /// Library mode: the `'static` source, and method bodies are skipped and parsed on
    /// first read (`method.rs` `skip_body`, `lazy.rs`).
    pub(crate) lazy_src: Option<&'static str>,
}

/// Parses a whole file.
pub(super) fn parse_module(src: &str, opts: Options) -> (Module, Vec<Diagnostic>) {
    parse_file(src, opts, None)
}

/// Parses a file of the built-in library: method bodies are parsed on first read
/// (`lazy.rs`). The diagnostics are the file's except those of method bodies, which each
/// body answers when parsed (`ast::Body::errors`).
pub(super) fn parse_library(src: &'static str, opts: Options) -> (Module, Vec<Diagnostic>) {
    parse_file(src, opts, Some(src))
}

fn parse_file(src: &str, opts: Options, lazy: Option<&'static str>) -> (Module, Vec<Diagnostic>) {
    let lexed = lexer::lex(src);
    let mut p = Parser::new(src, lexed, opts, 0);
    p.lazy_src = lazy;
    let module = p.module();
    p.report_unattached_docs();
    lexer::give_back(std::mem::take(&mut p.toks));
    let mut diags = p.diags;
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    (module, diags)
}

impl<'s> Parser<'s> {
    pub(crate) fn new(src: &'s str, lexed: Lexed, opts: Options, depth: u32) -> Parser<'s> {
        let n = lexed.docs.len();
        Parser {
            src,
            toks: lexed.tokens,
            pos: 0,
            docs: lexed.docs,
            doc_used: vec![false; n],
            doc_next: 0,
            diags: lexed.diags,
            fence: Fence::None,
            fence_exempt: usize::MAX,
            depth,
            chain: 0,
            opts,
            last_err: u32::MAX,
            prev_end: 0,
            lazy_src: None,
        }
    }

    // ---- token access ----

    pub(crate) fn at_fence(&self, i: usize) -> bool {
        let t = &self.toks[i];
        if !t.first() || i == self.fence_exempt {
            return false;
        }
        match self.fence {
            Fence::None => false,
            Fence::Col(c) => t.col <= c,
            Fence::Decl => t.flags & DECL_START != 0,
        }
    }

    /// The current token (raw, ignoring the fence).
    pub(crate) fn tok(&self) -> Token {
        self.toks[self.pos]
    }

    /// Kind of the current token, `Eof` beyond the fence.
    pub(crate) fn peek(&self) -> Tok {
        if self.at_fence(self.pos) {
            Tok::Eof
        } else {
            self.toks[self.pos].kind
        }
    }

    /// Kind of the token `n` ahead on the same logical region (`Eof` beyond the fence or end).
    pub(crate) fn peek_at(&self, n: usize) -> Tok {
        let mut i = self.pos;
        for _ in 0..=n {
            if i >= self.toks.len() || self.at_fence(i) {
                return Tok::Eof;
            }
            i += 1;
        }
        self.toks[i - 1].kind
    }

    pub(crate) fn text_at(&self, i: usize) -> &'s str {
        match self.toks.get(i) {
            Some(t) => &self.src[t.start as usize..t.end as usize],
            None => "",
        }
    }

    pub(crate) fn text(&self) -> &'s str {
        self.text_at(self.pos)
    }

    /// Whether the current token is an identifier with this text (and not fenced).
    pub(crate) fn is_word(&self, w: &str) -> bool {
        self.peek() == Tok::Ident && self.text() == w
    }

    pub(crate) fn is_keyword(&self, w: &str) -> bool {
        self.peek() == Tok::Keyword && self.text() == w
    }

    pub(crate) fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        if t.kind != Tok::Eof {
            self.pos += 1;
            self.prev_end = t.end;
        }
        t
    }

    /// Span of the last consumed token (or the current one at the start).
    pub(crate) fn prev_span(&self) -> Span {
        if self.pos == 0 {
            return self.tok().span();
        }
        self.toks[self.pos - 1].span()
    }

    // ---- diagnostics ----

    pub(crate) fn report(&mut self, d: Diagnostic) {
        if d.severity == Severity::Error && d.span.start == self.last_err {
            return;
        }
        if d.severity == Severity::Error {
            self.last_err = d.span.start;
        }
        self.diags.push(d);
    }

    /// Reports an E0101 syntax error and answers `Recover`.
    pub(crate) fn error(&mut self, msg: impl Into<String>, span: Span) -> Recover {
        self.report(Diagnostic::error("E0101", msg, span));
        Recover
    }

    pub(crate) fn error_hint(
        &mut self,
        msg: impl Into<String>,
        span: Span,
        hint: impl Into<String>,
    ) -> Recover {
        self.report(Diagnostic::error("E0101", msg, span).with_hint(hint));
        Recover
    }

    /// "expected X, found Y" at the current token (or just after the previous token when the
    /// region has ended).
    pub(crate) fn expected(&mut self, what: &str) -> Recover {
        if self.peek() == Tok::Eof {
            let span = self.prev_span();
            let found = if self.tok().kind == Tok::Eof {
                "end of input"
            } else {
                "the end of the line"
            };
            return self.error(format!("expected {what}, found {found}"), span);
        }
        if self.tok().kind == Tok::Error {
            return Recover;
        }
        let t = self.tok();
        let msg = format!("expected {what}, found {}", self.found());
        if self.text() == "=" {
            // A habit from other languages: bt has no `=` operator.
            return self.error_hint(
                msg,
                t.span(),
                "bt has no `=`: compare with `==` (equal) or `=:=` (identical), assign with `:=`",
            );
        }
        self.error(msg, t.span())
    }

    /// A short rendering of the current token for messages.
    pub(crate) fn found(&self) -> String {
        let t = self.tok();
        match t.kind {
            Tok::Eof => "end of input".into(),
            Tok::Str => "a string".into(),
            _ => {
                let text = self.text();
                if text.len() <= 24 {
                    format!("`{text}`")
                } else {
                    t.kind.describe().into()
                }
            }
        }
    }

    /// Consumes a token of kind `k` or reports "expected `what`".
    pub(crate) fn expect(&mut self, k: Tok, what: &str) -> PResult<Token> {
        if self.peek() == k {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }

    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.tok().span();
            self.depth -= 1;
            return Err(self.error("expression is nested too deeply", span));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// One more left-nested send in the current chain.
    pub(crate) fn extend_chain(&mut self) -> PResult<()> {
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            let span = self.tok().span();
            return Err(self.error_hint(
                "expression is too long",
                span,
                "split it into several statements with intermediate variables",
            ));
        }
        Ok(())
    }

    // ---- recovery ----

    /// Skips to the end of the current statement: a `.`/`!` (consumed), a new line at bracket
    /// depth 0, an unmatched closing bracket, or the fence. With `force`, the current token is
    /// skipped even when it starts a line.
    pub(crate) fn sync_stmt(&mut self, start: usize, start_col: u32, force: bool) {
        // Brackets opened since the statement started are still to be closed.
        let mut depth = 0u32;
        for t in &self.toks[start.min(self.pos)..self.pos] {
            if t.kind.is_open() {
                depth += 1;
            } else if t.kind.is_close() {
                depth = depth.saturating_sub(1);
            }
        }
        let mut first = force;
        loop {
            let k = self.peek();
            if k == Tok::Eof {
                return;
            }
            let t = self.tok();
            if !first && t.first() {
                if depth == 0 {
                    return;
                }
                if t.col <= start_col && !k.is_close() {
                    return;
                }
            }
            first = false;
            if k.is_close() {
                if depth == 0 {
                    return;
                }
                depth -= 1;
            } else if k.is_open() {
                depth += 1;
            } else if depth == 0 && matches!(k, Tok::Dot | Tok::Bang) {
                self.bump();
                return;
            }
            self.bump();
        }
    }

    /// After an error inside a bracketed construct opened at token index `open`: skips to the
    /// matching closer (consumed; answers true) or stops at the fence/a line at or left of the
    /// opener's line start (answers false).
    pub(crate) fn skip_to_close(&mut self, open_col: u32) -> bool {
        let mut depth = 0u32;
        loop {
            let k = self.peek();
            if k == Tok::Eof {
                return false;
            }
            let t = self.tok();
            if t.first() && t.col < open_col && !k.is_close() {
                return false;
            }
            if k.is_close() {
                self.bump();
                if depth == 0 {
                    return true;
                }
                depth -= 1;
                continue;
            }
            if k.is_open() {
                depth += 1;
            }
            self.bump();
        }
    }

    /// Column of the first token on the line of token `i`.
    pub(crate) fn line_indent(&self, i: usize) -> u32 {
        let mut j = i.min(self.toks.len() - 1);
        while j > 0 && !self.toks[j].first() {
            j -= 1;
        }
        self.toks[j].col
    }

    // ---- doc comments ----

    /// The `///` block directly before token `i`, marked as attached.
    pub(crate) fn take_doc(&mut self, i: usize) -> Option<Doc> {
        if self.docs.is_empty() {
            return None;
        }
        let lo = if i == 0 { 0 } else { self.toks[i - 1].end };
        let hi = self.toks[i].start;
        // The first line at or after `lo` (the docs are in order).
        let mut first = self.doc_next.min(self.docs.len());
        if first > 0 && self.docs[first - 1].start >= lo {
            first = self.docs.partition_point(|d| d.start < lo);
        }
        while first < self.docs.len() && self.docs[first].start < lo {
            first += 1;
        }
        let mut last = first;
        while last < self.docs.len() && self.docs[last].end <= hi {
            last += 1;
        }
        self.doc_next = last;
        if last == first {
            return None;
        }
        // A library file's doc is kept as its lines when only whitespace lies between them
        // (read when asked: `ast::Doc`).
        if let Some(src) = self.lazy_src {
            let between_is_blank = (first + 1..last).all(|k| {
                src.as_bytes()[self.docs[k - 1].end as usize..self.docs[k].start as usize]
                    .iter()
                    .all(|b| b.is_ascii_whitespace())
            });
            if between_is_blank {
                self.doc_used[first..last].fill(true);
                return Some(Doc::lines(
                    src,
                    self.docs[first].start,
                    self.docs[last - 1].end,
                ));
            }
        }
        // One allocation: the lines' lengths bound the text (the library has ~2,300 docs).
        let cap: usize = self.docs[first..last].iter().map(|d| d.range().len()).sum();
        let mut text = String::with_capacity(cap);
        for k in first..last {
            let line = &self.src[self.docs[k].range()];
            let body = &line[3..];
            let body = body.strip_prefix(' ').unwrap_or(body);
            if k > first {
                text.push('\n');
            }
            text.push_str(body.trim_end());
            self.doc_used[k] = true;
        }
        Some(Doc::new(text))
    }

    fn report_unattached_docs(&mut self) {
        for (k, used) in self.doc_used.iter().enumerate() {
            if !used {
                let d = Diagnostic {
                    code: "W0601",
                    category: None,
                    severity: Severity::Warning,
                    message: "doc comment is not attached to a declaration".into(),
                    span: self.docs[k],
                    label: String::new(),
                    secondary: Vec::new(),
                    hint: Some(
                        "`///` documents the class, method, slot, protocol or type alias on the \
                         next line; use `//` for an ordinary comment"
                            .into(),
                    ),
                };
                self.diags.push(d);
            }
        }
    }
}
