//! Expressions: assignment, cascades, keyword/binary/unary sends with
//! the precedence table of 2.2, primaries and blocks. Statements are in `stmt`, collection
//! literals in `collection`.

use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

/// Binding power and right-associativity of a binary selector.
pub(crate) fn binding_power(op: &str) -> Option<(u8, bool)> {
    Some(match op {
        "**" => (50, true),
        "*" | "/" | "%" => (40, false),
        "+" | "-" | "++" => (30, false),
        "<" | ">" | "<=" | ">=" => (20, false),
        "==" | "/=" | "=:=" | "=/=" => (10, false),
        ">>" => (5, false),
        "->" => (3, false),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "fast_path_tests.rs"]
pub(crate) mod fast_path_tests;

pub(crate) fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

impl<'s> Parser<'s> {
    /// A full expression: assignment, destructuring, or a cascade.
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = if self.lone_atom() {
            // What the descent would answer, without its six levels of calls.
            self.primary()
        } else {
            self.expr_inner()
        };
        self.leave();
        r
    }

    /// Whether the current token is a literal or a variable that nothing continues: the
    /// next token cannot extend it into a send, an assignment or a cascade (a unary
    /// selector on the same line, a binary operator, a keyword, `;`, `:=`, `::`). The
    /// descent through cascade, keyword, binary and unary levels would then answer
    /// `primary()` unchanged (`expr_fast_path` tests compare the trees).
    fn lone_atom(&self) -> bool {
        #[cfg(test)]
        if fast_path_tests::OFF.with(|o| o.get()) {
            return false;
        }
        let kind = self.peek();
        let ident = match kind {
            Tok::Int | Tok::Float | Tok::Str | Tok::Char | Tok::Symbol => false,
            Tok::Ident if self.text() != "self" => true,
            _ => return false,
        };
        match self.peek_at(1) {
            Tok::BinOp | Tok::Arrow | Tok::ShiftRight | Tok::Keyword | Tok::Semi => false,
            Tok::Assign | Tok::ColonColon => !ident,
            Tok::Ident => self.toks[self.pos + 1].first(),
            _ => true,
        }
    }

    pub(super) fn expr_inner(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Ident => {
                let next = self.peek_at(1);
                if next == Tok::Assign || next == Tok::ColonColon {
                    return self.assignment();
                }
                if self.text() == "self" && self.is_field_ref() && self.peek_at(3) == Tok::Assign {
                    let s = self.bump();
                    self.bump();
                    let f = self.bump();
                    self.bump();
                    let value = self.expr()?;
                    let span = s.span().to(value.span);
                    let name = Ident {
                        name: Name::new(&self.src[f.span().range()]),
                        span: f.span(),
                    };
                    return Ok(mk(
                        ExprKind::FieldAssign {
                            name,
                            value: Box::new(value),
                        },
                        span,
                    ));
                }
            }
            Tok::LBrace | Tok::HashParen | Tok::HashBracket | Tok::HashBrace => {
                if let Some(close) = self.matching_close(self.pos) {
                    if self
                        .toks
                        .get(close + 1)
                        .is_some_and(|t| t.kind == Tok::Assign)
                        && !self.at_fence(close + 1)
                    {
                        let pat = self.pattern()?;
                        self.expect(Tok::Assign, "`:=`")?;
                        let value = self.expr()?;
                        let span = pat.span().to(value.span);
                        return Ok(mk(
                            ExprKind::Destructure {
                                pattern: Box::new(pat),
                                value: Box::new(value),
                            },
                            span,
                        ));
                    }
                }
            }
            _ => {}
        }
        self.cascade()
    }

    /// `self.name` at the current position (no spaces around the dot).
    pub(crate) fn is_field_ref(&self) -> bool {
        let p = self.pos;
        self.toks
            .get(p + 1)
            .is_some_and(|t| t.kind == Tok::Dot && !t.space_before())
            && self
                .toks
                .get(p + 2)
                .is_some_and(|t| t.kind == Tok::Ident && !t.space_before())
    }

    /// Index of the bracket closing the opener at `i`, scanning within the region.
    pub(crate) fn matching_close(&self, i: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut j = i;
        while j < self.toks.len() {
            if j != i && self.at_fence(j) {
                return None;
            }
            let k = self.toks[j].kind;
            if k.is_open() || k == Tok::ShiftLeft {
                depth += 1;
            } else if k.is_close() || (k == Tok::ShiftRight && depth > 0) {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            } else if k == Tok::Eof {
                return None;
            }
            j += 1;
        }
        None
    }

    /// `x := e`, `x :: T := e`.
    pub(super) fn assignment(&mut self) -> PResult<Expr> {
        let t = self.bump();
        let name_text = &self.src[t.span().range()];
        if matches!(name_text, "self" | "super" | "nil" | "true" | "false") {
            return Err(self.error(format!("cannot assign to `{name_text}`"), t.span()));
        }
        let name = Ident {
            name: Name::new(name_text),
            span: t.span(),
        };
        let ty = if self.peek() == Tok::ColonColon {
            self.bump();
            let ty = self.type_expr(true)?;
            if self.peek() != Tok::Assign {
                return Err(self.expected("`:=` after the local's type"));
            }
            Some(ty)
        } else {
            None
        };
        self.bump(); // :=
        let value = self.expr()?;
        let span = t.span().to(value.span);
        Ok(mk(
            ExprKind::Assign {
                name,
                ty: ty.map(Box::new),
                value: Box::new(value),
            },
            span,
        ))
    }

    /// `r m1; m2; m3`.
    pub(super) fn cascade(&mut self) -> PResult<Expr> {
        let first = self.keyword_expr()?;
        if self.peek() != Tok::Semi {
            return Ok(first);
        }
        let span0 = first.span;
        let (receiver, part0) = match first.kind {
            ExprKind::Send {
                receiver,
                selector,
                selector_span,
                args,
            } => {
                let span = selector_span.to(args.last().map_or(selector_span, |a| a.span));
                (
                    receiver,
                    CascadePart {
                        selector,
                        selector_span,
                        args,
                        span,
                    },
                )
            }
            _ => {
                let t = self.tok();
                return Err(self.error_hint(
                    "a cascade needs a message send before `;`",
                    t.span(),
                    "`r m1; m2` sends m1 and m2 to the same receiver r",
                ));
            }
        };
        let mut parts = vec![part0];
        let mut end = span0;
        while self.peek() == Tok::Semi {
            self.bump();
            let part = self.cascade_part()?;
            end = end.to(part.span);
            parts.push(part);
        }
        Ok(mk(ExprKind::Cascade { receiver, parts }, span0.to(end)))
    }

    pub(super) fn cascade_part(&mut self) -> PResult<CascadePart> {
        match self.peek() {
            Tok::Ident => {
                let t = self.bump();
                Ok(CascadePart {
                    selector: Name::new(&self.src[t.span().range()]),
                    selector_span: t.span(),
                    args: Vec::new(),
                    span: t.span(),
                })
            }
            Tok::Keyword => {
                let (selector, selector_span, args) = self.keyword_parts()?;
                let span = selector_span.to(args.last().map_or(selector_span, |a| a.span));
                Ok(CascadePart {
                    selector,
                    selector_span,
                    args,
                    span,
                })
            }
            k if k.is_binop() => {
                let t = self.tok();
                Err(self.error_hint(
                    "binary messages cannot be cascade parts",
                    t.span(),
                    "cascade parts are unary or keyword messages; use parentheses for the binary send",
                ))
            }
            _ => Err(self.expected("a message after `;`")),
        }
    }

    /// Whether a keyword at the start of a line looks like a method header (`kw: p … =>`),
    /// which starts a definition rather than continuing a statement.
    pub(super) fn line_is_method_header(&self) -> bool {
        let line = self.tok().line;
        let mut i = self.pos;
        while i < self.toks.len() && self.toks[i].line == line {
            match self.toks[i].kind {
                Tok::FatArrow => return true,
                Tok::Keyword | Tok::Ident | Tok::ColonColon | Tok::Arrow | Tok::Pipe => {}
                _ => return false,
            }
            i += 1;
        }
        false
    }

    pub(super) fn keyword_continues(&self) -> bool {
        self.peek() == Tok::Keyword && !(self.tok().first() && self.line_is_method_header())
    }

    /// Keyword send (arguments are binary-level), with `match:` arms.
    pub(crate) fn keyword_expr(&mut self) -> PResult<Expr> {
        let recv = self.binary(0)?;
        if !self.keyword_continues() {
            return Ok(recv);
        }
        if (self.text() == "match:" || self.text() == "matchExhaustive:")
            && self.peek_at(1) == Tok::LBracket
        {
            let exhaustive = self.text() == "matchExhaustive:";
            self.bump();
            let (arms, end) = self.match_arms()?;
            let span = recv.span.to(end);
            let e = mk(
                ExprKind::Match {
                    receiver: Box::new(recv),
                    exhaustive,
                    arms,
                },
                span,
            );
            if self.peek() == Tok::Keyword && !self.tok().first() {
                let t = self.tok();
                return Err(self.error_hint(
                    "a `match:` cannot take further keyword parts",
                    t.span(),
                    "put the match in parentheses to send it another message",
                ));
            }
            return Ok(e);
        }
        let (selector, selector_span, args) = self.keyword_parts()?;
        let span = recv.span.to(args.last().map_or(selector_span, |a| a.span));
        Ok(mk(
            ExprKind::Send {
                receiver: Box::new(recv),
                selector,
                selector_span,
                args,
            },
            span,
        ))
    }

    /// `k1: a k2: b …` — parts merge across lines.
    pub(super) fn keyword_parts(&mut self) -> PResult<(Name, Span, Vec<Expr>)> {
        let mut selector = Name::const_new("");
        let mut args = Vec::with_capacity(2);
        let first = self.tok().span();
        let mut last = first;
        while self.keyword_continues() {
            let t = self.bump();
            last = t.span();
            selector.push_str(&self.src[t.span().range()]);
            args.push(self.binary(0)?);
        }
        Ok((selector, first.to(last), args))
    }

    /// Binary sends by precedence climbing.
    pub(crate) fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        // Each left-associative step nests the tree one level deeper: it counts against the
        // nesting budget until this chain is done.
        let mut chain = 0;
        let r = self.binary_chain(&mut lhs, min, &mut chain);
        self.chain -= chain;
        r.map(|()| lhs)
    }

    pub(super) fn binary_chain(&mut self, lhs: &mut Expr, min: u8, chain: &mut u32) -> PResult<()> {
        loop {
            let k = self.peek();
            if !k.is_binop() {
                break;
            }
            let op = self.text();
            let Some((power, right)) = binding_power(op) else {
                break;
            };
            if power < min {
                break;
            }
            let t = self.bump();
            self.enter()?;
            let rhs = self.binary(if right { power } else { power + 1 });
            self.leave();
            let rhs = rhs?;
            let span = lhs.span.to(rhs.span);
            let l = std::mem::replace(lhs, mk(ExprKind::Error, span));
            *lhs = mk(
                ExprKind::Send {
                    receiver: Box::new(l),
                    selector: Name::new(op),
                    selector_span: t.span(),
                    args: vec![rhs],
                },
                span,
            );
            *chain += 1;
            self.extend_chain()?;
        }
        Ok(())
    }

    /// Unary sends; a unary selector never continues onto a new line.
    pub(crate) fn unary(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        let mut chain = 0;
        while self.peek() == Tok::Ident && !self.tok().first() {
            chain += 1;
            if let Err(r) = self.extend_chain() {
                self.chain -= chain;
                return Err(r);
            }
            let t = self.bump();
            let span = e.span.to(t.span());
            e = mk(
                ExprKind::Send {
                    receiver: Box::new(e),
                    selector: Name::new(&self.src[t.span().range()]),
                    selector_span: t.span(),
                    args: Vec::new(),
                },
                span,
            );
        }
        self.chain -= chain;
        Ok(e)
    }

    pub(crate) fn primary(&mut self) -> PResult<Expr> {
        let t = self.tok();
        match self.peek() {
            Tok::Int
            | Tok::RadixInt
            | Tok::Float
            | Tok::Str
            | Tok::Char
            | Tok::Symbol
            | Tok::QuotedSymbol => self.literal(),
            Tok::Ident => {
                let text = self.text();
                let kind = match text {
                    "self" => {
                        if self.is_field_ref() {
                            self.bump();
                            self.bump();
                            let f = self.bump();
                            let name = Name::new(&self.src[f.span().range()]);
                            return Ok(mk(ExprKind::Field(name), t.span().to(f.span())));
                        }
                        ExprKind::SelfRef
                    }
                    "super" => ExprKind::Super,
                    "nil" => ExprKind::Nil,
                    "true" => ExprKind::True,
                    "false" => ExprKind::False,
                    _ => ExprKind::Var(Name::new(text)),
                };
                self.bump();
                Ok(mk(kind, t.span()))
            }
            Tok::LParen => {
                self.enter()?;
                let r = self.paren();
                self.leave();
                r
            }
            Tok::LBracket => {
                self.enter()?;
                let r = self.block();
                self.leave();
                r
            }
            Tok::HashParen | Tok::HashBracket | Tok::LBrace => {
                self.enter()?;
                let r = self.sequence_literal();
                self.leave();
                r
            }
            Tok::HashBrace => {
                self.enter()?;
                let r = self.dict_literal();
                self.leave();
                r
            }
            Tok::ShiftLeft => Err(self.error_hint(
                "binary patterns `<<…>>` are only allowed in match arms and destructuring",
                t.span(),
                "build a Binary with `Binary fromList:` or a String literal",
            )),
            Tok::Caret => Err(self.error_hint(
                "`^` must start a statement",
                t.span(),
                "a return is a statement of its own: `^ expr`",
            )),
            Tok::Error => {
                self.bump();
                Err(Recover)
            }
            Tok::Directive => {
                let name = self.text();
                Err(self.report_primitive_misuse(name, t.span()))
            }
            _ => Err(self.expected("an expression")),
        }
    }

    pub(super) fn paren(&mut self) -> PResult<Expr> {
        let open = self.bump();
        if self.peek() == Tok::Eof {
            return Err(self.unterminated(open.span(), "parenthesis", "`)`"));
        }
        let inner = self.expr()?;
        match self.peek() {
            Tok::RParen => {
                let close = self.bump();
                Ok(mk(inner.kind, open.span().to(close.span())))
            }
            Tok::Eof => Err(self.unterminated(open.span(), "parenthesis", "`)`")),
            _ => {
                if self.tok().first() && !self.peek().is_close() {
                    return Err(self.unterminated(open.span(), "parenthesis", "`)`"));
                }
                Err(self.expected("`)`"))
            }
        }
    }

    pub(crate) fn unterminated(&mut self, open: Span, what: &str, closer: &str) -> Recover {
        self.report(
            Diagnostic::error("E0101", format!("unterminated {what}"), open)
                .with_label(format!("this {what} is never closed"))
                .with_hint(format!("close it with {closer}")),
        );
        Recover
    }

    /// `[ :a :b | statements ]`.
    pub(super) fn block(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let mut params = Vec::new();
        while self.peek() == Tok::Colon {
            self.bump();
            if self.peek() != Tok::Ident {
                return Err(self.expected("a block parameter name after `:`"));
            }
            let n = self.bump();
            let name = Ident {
                name: Name::new(&self.src[n.span().range()]),
                span: n.span(),
            };
            let ty = if self.peek() == Tok::ColonColon {
                self.bump();
                Some(self.type_expr(false)?)
            } else {
                None
            };
            params.push(Param { name, ty });
        }
        if !params.is_empty() {
            match self.peek() {
                Tok::Pipe => {
                    self.bump();
                }
                Tok::RBracket => {}
                _ => return Err(self.expected("`|` after the block parameters")),
            }
        } else if self.peek() == Tok::Pipe {
            let t = self.tok();
            return Err(self.error_hint(
                "temporary declarations are not supported",
                t.span(),
                "locals are declared by their first assignment: `x := 0`",
            ));
        }
        let body = self.statements();
        match self.peek() {
            Tok::RBracket => {
                let close = self.bump();
                Ok(mk(
                    ExprKind::Block(Box::new(Block { params, body })),
                    open.span().to(close.span()),
                ))
            }
            _ => Err(self.unterminated(open.span(), "block", "`]`")),
        }
    }
}
