//! Collection literals: `#(…)` Lists, `#[…]` Arrays, `{…}` tuples (an error
//! as an expression) and `#{k => v}` Dictionaries.

use super::expr::mk;
use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

impl<'s> Parser<'s> {
    /// `#(…)`, `#[…]` and `{…}` (the tuple literal, an error as an expression).
    pub(super) fn sequence_literal(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let (close, what) = match open.kind {
            Tok::HashParen => (Tok::RParen, "`)`"),
            Tok::HashBracket => (Tok::RBracket, "`]`"),
            _ => (Tok::RBrace, "`}`"),
        };
        let open_col = self.line_indent(self.pos - 1);
        let mut elems = Vec::with_capacity(self.count_elements());
        let mut tail = None;
        let end;
        loop {
            if self.peek() == close {
                end = self.bump().span();
                break;
            }
            if self.peek() == Tok::Eof || self.looks_like_new_statement(open_col) {
                return Err(self.unterminated(open.span(), "collection literal", what));
            }
            match self.expr() {
                Ok(e) => elems.push(e),
                Err(Recover) => {
                    if self.skip_to_close(open_col) {
                        return Ok(mk(ExprKind::Error, open.span().to(self.prev_span())));
                    }
                    return Err(Recover);
                }
            }
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                k if k == close => {}
                Tok::Pipe if open.kind == Tok::HashParen && elems.len() == 1 => {
                    self.bump();
                    let t = self.expr()?;
                    tail = Some(t);
                    if self.peek() != close {
                        return Err(self.expected(what));
                    }
                }
                Tok::Eof => return Err(self.unterminated(open.span(), "collection literal", what)),
                _ => {
                    let t = self.tok();
                    if t.first() && t.col <= open_col && !self.peek().is_close() {
                        return Err(self.unterminated(open.span(), "collection literal", what));
                    }
                    if t.kind != Tok::Error {
                        self.report(
                            Diagnostic::error(
                                "E0101",
                                format!("expected `,` or {what}, found {}", self.found()),
                                t.span(),
                            )
                            .with_hint("collection elements are separated by commas: `#(1, 2, 3)`"),
                        );
                    }
                    if self.skip_to_close(open_col) {
                        return Ok(mk(ExprKind::Error, open.span().to(self.prev_span())));
                    }
                    return Err(Recover);
                }
            }
        }
        let span = open.span().to(end);
        let kind = match open.kind {
            Tok::HashParen => match tail {
                Some(t) => {
                    let head = elems.pop().unwrap_or_else(|| mk(ExprKind::Error, span));
                    ExprKind::ListCons {
                        head: Box::new(head),
                        tail: Box::new(t),
                    }
                }
                None => ExprKind::List(elems),
            },
            Tok::HashBracket => ExprKind::Array(elems),
            _ => {
                self.report(
                    Diagnostic::error("E0102", "tuple literal used as an expression", span)
                        .with_label("`{…}` is only a pattern")
                        .with_hint("build a List with `#(a, b)` or an Array with `#[a, b]`; braces destructure: `{a, b} := t`"),
                );
                ExprKind::TupleLit(elems)
            }
        };
        Ok(mk(kind, span))
    }

    /// Inside an open bracket: a line at or left of the opener's line indentation that starts
    /// with `name :=` is taken as the next statement (the bracket was left open).
    pub(super) fn looks_like_new_statement(&self, open_col: u32) -> bool {
        let t = self.tok();
        t.first()
            && t.col <= open_col
            && t.kind == Tok::Ident
            && matches!(self.peek_at(1), Tok::Assign | Tok::ColonColon)
    }

    /// How many elements the collection literal just opened seems to hold: its commas at
    /// bracket depth 0 plus one, looking at most `LOOK` tokens ahead (the vector is sized once
    /// instead of growing 0 → 4 → 8; a wrong guess only costs a reallocation).
    fn count_elements(&self) -> usize {
        const LOOK: usize = 256;
        let mut depth = 0u32;
        let mut n = 1;
        for t in self.toks[self.pos..].iter().take(LOOK) {
            match t.kind {
                k if k.is_open() => depth += 1,
                k if k.is_close() => {
                    if depth == 0 {
                        return n;
                    }
                    depth -= 1;
                }
                Tok::Comma if depth == 0 => n += 1,
                Tok::Eof => return n,
                _ => {}
            }
        }
        4
    }

    /// `#{key => value, …}`.
    pub(super) fn dict_literal(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let open_col = self.line_indent(self.pos - 1);
        let mut entries = Vec::with_capacity(self.count_elements());
        let end;
        loop {
            if self.peek() == Tok::RBrace {
                end = self.bump().span();
                break;
            }
            if self.peek() == Tok::Eof || self.looks_like_new_statement(open_col) {
                return Err(self.unterminated(open.span(), "dictionary literal", "`}`"));
            }
            match self.dict_entry() {
                Ok(kv) => entries.push(kv),
                Err(Recover) => {
                    if self.skip_to_close(open_col) {
                        return Ok(mk(ExprKind::Error, open.span().to(self.prev_span())));
                    }
                    return Err(Recover);
                }
            }
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {}
                Tok::Eof => {
                    return Err(self.unterminated(open.span(), "dictionary literal", "`}`"))
                }
                _ => {
                    let t = self.tok();
                    if t.first() && t.col <= open_col && !self.peek().is_close() {
                        return Err(self.unterminated(open.span(), "dictionary literal", "`}`"));
                    }
                    let msg = format!("expected `,` or `}}`, found {}", self.found());
                    self.report(Diagnostic::error("E0101", msg, t.span()).with_hint(
                        "dictionary entries are separated by commas: `#{#a => 1, #b => 2}`",
                    ));
                    if self.skip_to_close(open_col) {
                        return Ok(mk(ExprKind::Error, open.span().to(self.prev_span())));
                    }
                    return Err(Recover);
                }
            }
        }
        Ok(mk(ExprKind::Dict(entries), open.span().to(end)))
    }

    pub(super) fn dict_entry(&mut self) -> PResult<(Expr, Expr)> {
        if self.peek() == Tok::Keyword {
            let t = self.tok();
            let name = self.text().trim_end_matches(':');
            return Err(self.error_hint(
                "dictionary entries are written `key => value`",
                t.span(),
                format!("did you mean `#{name} => …`?"),
            ));
        }
        let bare = self.peek() == Tok::Ident;
        let key = self.unary()?;
        if let (true, ExprKind::Var(name)) = (bare, &key.kind) {
            if name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
                let hint = format!("did you mean `#{name}`?");
                self.report(
                    Diagnostic::error(
                        "E0101",
                        format!("bare lower-case name `{name}` used as a dictionary key"),
                        key.span,
                    )
                    .with_hint(hint),
                );
            }
        }
        if self.peek() != Tok::FatArrow {
            return Err(self.expected("`=>` after the dictionary key"));
        }
        self.bump();
        let value = self.expr()?;
        Ok((key, value))
    }
}
