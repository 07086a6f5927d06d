//! Statements and expressions (LANGUAGE.md 2.1–2.8, 2.11): statement sequences, assignment,
//! cascades, keyword/binary/unary sends with the precedence table of 2.2, primaries, blocks and
//! collection literals.

use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

/// Binding power and right-associativity of a binary selector (LANGUAGE.md 2.2).
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

pub(crate) fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

impl<'s> Parser<'s> {
    /// A statement sequence, up to a closing bracket or the end of the region (not consumed).
    pub(crate) fn statements(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        loop {
            while self.peek() == Tok::Dot {
                self.bump();
            }
            let k = self.peek();
            if k == Tok::Eof || k.is_close() {
                break;
            }
            let start = self.pos;
            let col = self.line_indent(start);
            match self.statement() {
                Ok(s) => {
                    out.push(s);
                    self.end_of_statement(start, col);
                }
                Err(Recover) => {
                    let span = self.tok().span();
                    self.sync_stmt(start, col, self.pos == start);
                    out.push(Stmt {
                        kind: StmtKind::Expr(mk(ExprKind::Error, span)),
                        span,
                    });
                }
            }
            if self.pos == start {
                self.bump();
            }
        }
        out
    }

    /// After a statement: a `.`, a line end, a closing bracket or the region end must follow.
    fn end_of_statement(&mut self, start: usize, col: u32) {
        let k = self.peek();
        if k == Tok::Dot {
            self.bump();
            return;
        }
        if k == Tok::Eof || k.is_close() || self.tok().first() {
            return;
        }
        // `!` (a cast) also separates statements.
        if self.pos > 0 && self.toks[self.pos - 1].kind == Tok::Bang {
            return;
        }
        self.unexpected_in_statement();
        self.sync_stmt(start, col, true);
    }

    /// Reports the token that cannot continue the current statement, with the specific
    /// messages of the common mistakes.
    pub(crate) fn unexpected_in_statement(&mut self) {
        let t = self.tok();
        let text = self.text();
        match t.kind {
            Tok::Error => {}
            Tok::Int | Tok::Float | Tok::RadixInt if text.starts_with('-') && !t.space_before() => {
                let lhs = &self.src[self.line_start_of(self.pos)..t.start as usize];
                let lhs = lhs.split_whitespace().last().unwrap_or("x");
                let rhs = &text[1..];
                self.report(
                    Diagnostic::error(
                        "E0101",
                        format!("missing operator before `{text}`"),
                        t.span(),
                    )
                    .with_label("this is a negative number literal")
                    .with_hint(format!(
                        "binary minus needs a space before a digit: `{lhs} - {rhs}`"
                    )),
                );
            }
            Tok::BinOp if text == "=" => {
                self.report(
                    Diagnostic::error("E0101", "`=` is not an operator", t.span())
                        .with_hint("use `=:=` or `==`"),
                );
            }
            Tok::BinOp | Tok::Pipe | Tok::Comma => {
                let hint = match text {
                    "&" | "|" => "there are no `&`/`|` Boolean operators; use `and:`/`or:`",
                    "," => "`,` separates collection elements; use `++` to concatenate",
                    _ => "only `**` `*` `/` `%` `+` `-` `++` `<` `>` `<=` `>=` `==` `/=` `=:=` `=/=` `>>` `->` are binary operators; send other selectors as keyword messages",
                };
                self.report(
                    Diagnostic::error(
                        "E0101",
                        format!("operator `{text}` has no precedence"),
                        t.span(),
                    )
                    .with_hint(hint),
                );
            }
            Tok::Bang => {
                self.report(
                    Diagnostic::error(
                        "E0101",
                        "a cast `!` is only legal after a whole statement",
                        t.span(),
                    )
                    .with_hint("write the send as its own statement: `receiver message!`"),
                );
            }
            Tok::Assign => {
                self.report(
                    Diagnostic::error("E0101", "invalid assignment target", t.span())
                        .with_hint("assign to a variable (`x := …`) or a field (`self.x := …`)"),
                );
            }
            Tok::Ident
            | Tok::Keyword
            | Tok::Int
            | Tok::Float
            | Tok::Str
            | Tok::Symbol
            | Tok::Char => {
                let msg = format!("expected the end of the statement, found {}", self.found());
                self.report(
                    Diagnostic::error("E0101", msg, t.span())
                        .with_hint("statements are separated by line ends or `.`"),
                );
            }
            _ => {
                let msg = format!("unexpected {}", self.found());
                self.report(Diagnostic::error("E0101", msg, t.span()));
            }
        }
    }

    fn line_start_of(&self, i: usize) -> usize {
        let t = &self.toks[i];
        let mut j = i;
        while j > 0 && self.toks[j].line == t.line && !self.toks[j].first() {
            j -= 1;
        }
        self.toks[j].start as usize
    }

    /// One statement: `@expect cat`, `^ expr`, `expr`, or `expr!` (a cast).
    pub(crate) fn statement(&mut self) -> PResult<Stmt> {
        let start = self.tok().span();
        if self.peek() == Tok::Directive {
            return self.directive_stmt();
        }
        if self.peek() == Tok::Caret {
            self.bump();
            let e = self.expr()?;
            if self.peek() == Tok::Bang {
                let t = self.tok();
                return Err(self.error_hint(
                    "a cast cannot be returned",
                    t.span(),
                    "a cast answers nil; write the cast as its own statement",
                ));
            }
            let span = start.to(e.span);
            return Ok(Stmt {
                kind: StmtKind::Expr(mk(ExprKind::Return(Box::new(e)), span)),
                span,
            });
        }
        let e = self.expr()?;
        if self.peek() == Tok::Bang {
            let bang = self.bump();
            let span = e.span.to(bang.span());
            return match e.kind {
                ExprKind::Send { .. } | ExprKind::Cascade { .. } => Ok(Stmt {
                    kind: StmtKind::Cast(e),
                    span,
                }),
                ExprKind::Assign { .. }
                | ExprKind::FieldAssign { .. }
                | ExprKind::Destructure { .. } => Err(self.error_hint(
                    "a cast is only legal as a whole statement",
                    bang.span(),
                    "casts answer nil; send the message on its own line: `a foo!`",
                )),
                _ => Err(self.error_hint(
                    "only a message send can be cast",
                    bang.span(),
                    "`!` turns a statement's outermost send into an asynchronous cast",
                )),
            };
        }
        Ok(Stmt {
            span: e.span,
            kind: StmtKind::Expr(e),
        })
    }

    fn directive_stmt(&mut self) -> PResult<Stmt> {
        let t = self.tok();
        let name = self.text();
        if name == "@expect" {
            let e = self.expect_directive()?;
            return Ok(Stmt {
                span: e.span,
                kind: StmtKind::Expect(e),
            });
        }
        self.bump();
        Err(self.report_primitive_misuse(name, t.span()))
    }

    pub(crate) fn report_primitive_misuse(&mut self, name: &str, span: Span) -> Recover {
        if self.opts.allow_primitives {
            self.error_hint(
                format!("`{name}` may only appear as a whole method body"),
                span,
                format!("write `selector => {name} name`"),
            )
        } else {
            self.report(
                Diagnostic::error(
                    "E0308",
                    format!("`{name}` is reserved for the built-in library"),
                    span,
                )
                .with_hint("the only directive for user code is `@expect CATEGORY`"),
            );
            Recover
        }
    }

    /// `@expect category` (the directive is the current token).
    pub(crate) fn expect_directive(&mut self) -> PResult<Expect> {
        let d = self.bump();
        if self.peek() != Tok::Ident || self.tok().first() {
            return Err(self.error_hint(
                "`@expect` needs a category",
                d.span(),
                "categories: dnu, type, unused, type_annotation, inheritance, sendability, all",
            ));
        }
        let c = self.bump();
        let category = Ident {
            name: self.src[c.span().range()].to_string(),
            span: c.span(),
        };
        Ok(Expect {
            category,
            span: d.span().to(c.span()),
        })
    }

    /// A full expression: assignment, destructuring, or a cascade.
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.expr_inner();
        self.leave();
        r
    }

    fn expr_inner(&mut self) -> PResult<Expr> {
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
                        name: self.src[f.span().range()].to_string(),
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
    fn assignment(&mut self) -> PResult<Expr> {
        let t = self.bump();
        let name_text = &self.src[t.span().range()];
        if matches!(name_text, "self" | "super" | "nil" | "true" | "false") {
            return Err(self.error(format!("cannot assign to `{name_text}`"), t.span()));
        }
        let name = Ident {
            name: name_text.to_string(),
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
    fn cascade(&mut self) -> PResult<Expr> {
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

    fn cascade_part(&mut self) -> PResult<CascadePart> {
        match self.peek() {
            Tok::Ident => {
                let t = self.bump();
                Ok(CascadePart {
                    selector: self.src[t.span().range()].to_string(),
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
    fn line_is_method_header(&self) -> bool {
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

    fn keyword_continues(&self) -> bool {
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

    /// `k1: a k2: b …` — parts merge across lines (LANGUAGE.md 2.1).
    fn keyword_parts(&mut self) -> PResult<(String, Span, Vec<Expr>)> {
        let mut selector = String::with_capacity(24);
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

    fn binary_chain(&mut self, lhs: &mut Expr, min: u8, chain: &mut u32) -> PResult<()> {
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
                    selector: op.to_string(),
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
                    selector: self.src[t.span().range()].to_string(),
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
                            let name = self.src[f.span().range()].to_string();
                            return Ok(mk(ExprKind::Field(name), t.span().to(f.span())));
                        }
                        ExprKind::SelfRef
                    }
                    "super" => ExprKind::Super,
                    "nil" => ExprKind::Nil,
                    "true" => ExprKind::True,
                    "false" => ExprKind::False,
                    _ => ExprKind::Var(text.to_string()),
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

    fn paren(&mut self) -> PResult<Expr> {
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
    fn block(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let mut params = Vec::new();
        while self.peek() == Tok::Colon {
            self.bump();
            if self.peek() != Tok::Ident {
                return Err(self.expected("a block parameter name after `:`"));
            }
            let n = self.bump();
            let name = Ident {
                name: self.src[n.span().range()].to_string(),
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

    /// `#(…)`, `#[…]` and `{…}` (the tuple literal, an error as an expression).
    fn sequence_literal(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let (close, what) = match open.kind {
            Tok::HashParen => (Tok::RParen, "`)`"),
            Tok::HashBracket => (Tok::RBracket, "`]`"),
            _ => (Tok::RBrace, "`}`"),
        };
        let open_col = self.line_indent(self.pos - 1);
        let mut elems = Vec::new();
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
    fn looks_like_new_statement(&self, open_col: u32) -> bool {
        let t = self.tok();
        t.first()
            && t.col <= open_col
            && t.kind == Tok::Ident
            && matches!(self.peek_at(1), Tok::Assign | Tok::ColonColon)
    }

    /// `#{key => value, …}`.
    fn dict_literal(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let open_col = self.line_indent(self.pos - 1);
        let mut entries = Vec::new();
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

    fn dict_entry(&mut self) -> PResult<(Expr, Expr)> {
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
