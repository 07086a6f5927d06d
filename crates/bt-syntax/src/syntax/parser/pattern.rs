//! Patterns: match arms with guards, destructuring targets and binary
//! segment patterns.

use super::expr::mk;
use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

impl<'s> Parser<'s> {
    /// `[ pattern [when: guard] -> body ; … ]` (the `[` is current). Answers the arms and the
    /// span of the closing bracket.
    pub(crate) fn match_arms(&mut self) -> PResult<(Vec<MatchArm>, Span)> {
        let open = self.bump();
        let open_col = self.line_indent(self.pos - 1);
        let mut arms = Vec::new();
        loop {
            while self.peek() == Tok::Semi {
                self.bump();
            }
            match self.peek() {
                Tok::RBracket => {
                    let close = self.bump();
                    return Ok((arms, close.span()));
                }
                Tok::Eof => return Err(self.unterminated(open.span(), "match block", "`]`")),
                _ => {}
            }
            let start = self.pos;
            match self.arm() {
                Ok(a) => arms.push(a),
                Err(Recover) => {
                    // Skip to the next arm: a `;` or a new line at depth 0, or the `]`.
                    let mut depth = 0u32;
                    let mut first = self.pos == start;
                    loop {
                        let k = self.peek();
                        if k == Tok::Eof {
                            return Err(Recover);
                        }
                        let t = self.tok();
                        if !first && depth == 0 && t.first() && !k.is_close() {
                            if t.col <= open_col {
                                return Err(Recover);
                            }
                            break;
                        }
                        first = false;
                        if k.is_close() {
                            if depth == 0 {
                                if k == Tok::RBracket {
                                    break;
                                }
                                // A stray closer inside the arms: skip it.
                                self.bump();
                                continue;
                            }
                            depth -= 1;
                        } else if k.is_open() {
                            depth += 1;
                        } else if depth == 0 && k == Tok::Semi {
                            break;
                        }
                        self.bump();
                    }
                    if self.pos == start {
                        self.bump();
                    }
                    continue;
                }
            }
            match self.peek() {
                Tok::Semi | Tok::RBracket => {}
                Tok::Eof => return Err(self.unterminated(open.span(), "match block", "`]`")),
                _ if self.tok().first() => {}
                _ => {
                    return Err(self.expected("`;`, a new line or `]` after the match arm"));
                }
            }
        }
    }

    fn arm(&mut self) -> PResult<MatchArm> {
        let pattern = self.pattern()?;
        let guard = if self.is_keyword("when:") {
            self.bump();
            // Unary level: `->` (a binary operator elsewhere) ends the guard.
            Some(self.unary()?)
        } else {
            None
        };
        if self.peek() != Tok::Arrow {
            return Err(self.expected("`->` after the pattern"));
        }
        self.bump();
        let body = self.arm_body()?;
        let span = pattern.span().to(body.span);
        Ok(MatchArm {
            pattern,
            guard,
            body,
            span,
        })
    }

    /// One keyword-level expression, `^ e` or `x := e` (no cascade: `;` separates arms).
    fn arm_body(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Caret => {
                let c = self.bump();
                let e = self.keyword_expr()?;
                let span = c.span().to(e.span);
                Ok(mk(ExprKind::Return(Box::new(e)), span))
            }
            Tok::Ident if self.peek_at(1) == Tok::Assign => {
                let t = self.bump();
                self.bump();
                let value = self.keyword_expr()?;
                let span = t.span().to(value.span);
                let name = Ident {
                    name: Name::new(&self.src[t.span().range()]),
                    span: t.span(),
                };
                Ok(mk(
                    ExprKind::Assign {
                        name,
                        ty: None,
                        value: Box::new(value),
                    },
                    span,
                ))
            }
            _ => self.keyword_expr(),
        }
    }

    /// One pattern.
    pub(crate) fn pattern(&mut self) -> PResult<Pattern> {
        self.enter()?;
        let r = self.pattern_inner();
        self.leave();
        r
    }

    fn pattern_inner(&mut self) -> PResult<Pattern> {
        let t = self.tok();
        match self.peek() {
            Tok::Ident => {
                let text = self.text();
                match text {
                    "nil" => {
                        self.bump();
                        return Ok(Pattern::Nil(t.span()));
                    }
                    "true" | "false" => {
                        return Err(self.error_hint(
                            format!("bare `{text}` is not a pattern"),
                            t.span(),
                            format!(
                                "write `x :: {}` to match a Boolean",
                                if text == "true" { "True" } else { "False" }
                            ),
                        ))
                    }
                    "self" | "super" => {
                        return Err(self.error(format!("`{text}` is not a pattern"), t.span()));
                    }
                    "Result" if self.peek_at(1) == Tok::Keyword => {
                        let kw = self.text_at(self.pos + 1);
                        if kw == "ok:" || kw == "error:" {
                            self.bump();
                            self.bump();
                            let inner = self.pattern()?;
                            let span = t.span().to(inner.span());
                            return Ok(if kw == "ok:" {
                                Pattern::ResultOk(Box::new(inner), span)
                            } else {
                                Pattern::ResultError(Box::new(inner), span)
                            });
                        }
                    }
                    _ => {}
                }
                self.bump();
                let name = Ident {
                    name: Name::new(text),
                    span: t.span(),
                };
                if self.peek() == Tok::ColonColon {
                    self.bump();
                    let ty = self.type_expr(true)?;
                    return Ok(Pattern::Typed { name, ty });
                }
                if self.peek() == Tok::Colon && !self.tok().space_before() {
                    let c = self.tok();
                    return Err(self.error_hint(
                        "type patterns use `::`",
                        c.span(),
                        format!("write `{text} :: Type`"),
                    ));
                }
                if text == "_" {
                    return Ok(Pattern::Wildcard(t.span()));
                }
                Ok(Pattern::Bind(name))
            }
            Tok::Int
            | Tok::RadixInt
            | Tok::Float
            | Tok::Char
            | Tok::Symbol
            | Tok::QuotedSymbol
            | Tok::Str => {
                let e = self.literal()?;
                if matches!(e.kind, ExprKind::Interp(_)) {
                    return Err(self.error("an interpolated string is not a pattern", e.span));
                }
                Ok(Pattern::Literal(e))
            }
            Tok::LBrace => {
                let (elems, rest, span) = self.seq_pattern(Tok::RBrace, "`}`", false)?;
                let _ = rest;
                Ok(Pattern::Tuple(elems, span))
            }
            Tok::HashBracket => {
                let (elems, rest, span) = self.seq_pattern(Tok::RBracket, "`]`", true)?;
                Ok(Pattern::Array { elems, rest, span })
            }
            Tok::HashParen => {
                let (elems, rest, span) = self.seq_pattern(Tok::RParen, "`)`", true)?;
                Ok(Pattern::List { elems, rest, span })
            }
            Tok::HashBrace => self.dict_pattern(),
            Tok::ShiftLeft => self.binary_pattern(),
            // `<<>>` lexes as one operator run.
            Tok::BinOp if self.text() == "<<>>" => {
                self.bump();
                Ok(Pattern::Binary(Vec::new(), t.span()))
            }
            Tok::Error => {
                self.bump();
                Err(Recover)
            }
            _ => Err(self.expected("a pattern")),
        }
    }

    fn seq_pattern(
        &mut self,
        close: Tok,
        what: &str,
        allow_rest: bool,
    ) -> PResult<(Vec<Pattern>, Option<Ident>, Span)> {
        let open = self.bump();
        let mut elems = Vec::new();
        let mut rest = None;
        loop {
            if self.peek() == close {
                let c = self.bump();
                return Ok((elems, rest, open.span().to(c.span())));
            }
            if self.peek() == Tok::Eof {
                return Err(self.unterminated(open.span(), "pattern", what));
            }
            if rest.is_some() {
                let t = self.tok();
                return Err(self.error("`...rest` must be the last element of a pattern", t.span()));
            }
            if self.peek() == Tok::Ellipsis {
                let e = self.bump();
                if !allow_rest {
                    return Err(self.error("a tuple pattern has no `...rest` element", e.span()));
                }
                if self.peek() != Tok::Ident || self.tok().space_before() {
                    return Err(self.expected("a name directly after `...`"));
                }
                let n = self.bump();
                rest = Some(Ident {
                    name: Name::new(&self.src[n.span().range()]),
                    span: n.span(),
                });
            } else {
                elems.push(self.pattern()?);
            }
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                k if k == close => {}
                _ => {
                    let t = self.tok();
                    let msg = format!("expected `,` or {what} in pattern, found {}", self.found());
                    self.report(
                        Diagnostic::error("E0101", msg, t.span())
                            .with_hint("pattern elements are separated by commas"),
                    );
                    return Err(Recover);
                }
            }
        }
    }

    fn dict_pattern(&mut self) -> PResult<Pattern> {
        let open = self.bump();
        let mut entries = Vec::new();
        loop {
            if self.peek() == Tok::RBrace {
                let c = self.bump();
                return Ok(Pattern::Dict(entries, open.span().to(c.span())));
            }
            if self.peek() == Tok::Eof {
                return Err(self.unterminated(open.span(), "pattern", "`}`"));
            }
            let key = match self.peek() {
                Tok::Int
                | Tok::RadixInt
                | Tok::Float
                | Tok::Char
                | Tok::Symbol
                | Tok::QuotedSymbol
                | Tok::Str => self.literal()?,
                Tok::Ident => {
                    let t = self.tok();
                    let name = self.text();
                    if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                        self.bump();
                        mk(ExprKind::Var(Name::new(name)), t.span())
                    } else {
                        return Err(self.error_hint(
                            format!("bare lower-case name `{name}` used as a dictionary key"),
                            t.span(),
                            format!("did you mean `#{name}`?"),
                        ));
                    }
                }
                _ => return Err(self.expected("a literal dictionary key")),
            };
            if self.peek() != Tok::FatArrow {
                return Err(self.expected("`=>` after the dictionary key"));
            }
            self.bump();
            let p = self.pattern()?;
            entries.push((key, p));
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {}
                _ => return Err(self.expected("`,` or `}` in pattern")),
            }
        }
    }

    /// `<<seg, …>>`: `name:N`, `_:N`, `name`, `42:N`, `name/binary`, `name/utf8`,
    /// modifiers joined by `-`.
    fn binary_pattern(&mut self) -> PResult<Pattern> {
        let open = self.bump();
        let mut segs = Vec::new();
        loop {
            if self.peek() == Tok::ShiftRight {
                let c = self.bump();
                return Ok(Pattern::Binary(segs, open.span().to(c.span())));
            }
            if self.peek() == Tok::Eof {
                return Err(self.unterminated(open.span(), "binary pattern", "`>>`"));
            }
            if self.peek() == Tok::Str {
                // `<<"GET ", rest/binary>>`: a string literal stands for one 8-bit literal
                // segment per UTF-8 byte (Erlang's `<<"ab">>` = `<<$a, $b>>`).
                let e = self.literal()?;
                let ExprKind::Str(text) = &e.kind else {
                    return Err(self.error("an interpolated string is not a pattern", e.span));
                };
                segs.extend(text.bytes().map(|b| BinSegment {
                    value: BinSegValue::Int(i64::from(b)),
                    size: None,
                    modifiers: Vec::new(),
                    span: e.span,
                }));
            } else {
                segs.push(self.bin_segment()?);
            }
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::ShiftRight => {}
                _ => return Err(self.expected("`,` or `>>` in a binary pattern")),
            }
        }
    }

    fn bin_segment(&mut self) -> PResult<BinSegment> {
        let t = self.tok();
        let mut size = None;
        let value = match self.peek() {
            Tok::Keyword => {
                // `name:N` lexes as the keyword `name:` then N.
                self.bump();
                let name = Name::new(&self.src[t.start as usize..t.end as usize - 1]);
                size = Some(self.seg_size()?);
                if name == "_" {
                    BinSegValue::Wildcard
                } else {
                    BinSegValue::Bind(Ident {
                        name,
                        span: Span::new(t.start as usize, t.end as usize - 1),
                    })
                }
            }
            Tok::Ident => {
                self.bump();
                let name = Name::new(&self.src[t.span().range()]);
                if self.peek() == Tok::Colon {
                    self.bump();
                    size = Some(self.seg_size()?);
                }
                if name == "_" {
                    BinSegValue::Wildcard
                } else {
                    BinSegValue::Bind(Ident {
                        name,
                        span: t.span(),
                    })
                }
            }
            Tok::Int => {
                let e = self.literal()?;
                let v = match e.kind {
                    ExprKind::Int(v) => v,
                    _ => return Err(self.error("binary segment value is too large", e.span)),
                };
                if self.peek() == Tok::Colon {
                    self.bump();
                    size = Some(self.seg_size()?);
                }
                BinSegValue::Int(v)
            }
            _ => return Err(self.expected("a binary segment")),
        };
        let mut modifiers = Vec::new();
        if self.peek() == Tok::BinOp && self.text() == "/" {
            self.bump();
            loop {
                if self.peek() != Tok::Ident {
                    return Err(
                        self.expected("a segment type (`binary`, `utf8`, `little`, `signed`)")
                    );
                }
                let m = self.bump();
                let name = &self.src[m.span().range()];
                if !matches!(
                    name,
                    "binary" | "utf8" | "little" | "big" | "signed" | "unsigned" | "integer"
                ) {
                    return Err(self.error_hint(
                        format!("unknown binary segment type `{name}`"),
                        m.span(),
                        "segment types: binary, utf8, little, signed",
                    ));
                }
                modifiers.push(name.to_string());
                if self.peek() == Tok::BinOp && self.text() == "-" {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        Ok(BinSegment {
            value,
            size,
            modifiers,
            span: t.span().to(self.prev_span()),
        })
    }

    fn seg_size(&mut self) -> PResult<u32> {
        if self.peek() != Tok::Int {
            return Err(self.expected("a segment size in bits"));
        }
        let t = self.bump();
        match self.src[t.span().range()].parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(self.error("segment size must be a positive number of bits", t.span())),
        }
    }
}
