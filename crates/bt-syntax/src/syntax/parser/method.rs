//! Method declarations: `[class] [sealed] [internal] header => body` inside a class, and the
//! standalone `Foo >> header => body` at top level; headers with typed parameters and return
//! types, `=> @primitive` bodies of the built-in library.
//!
//! A body is parsed here with its header, or — when the parser runs in library mode
//! (`Parser::lazy_src`, `syntax::parse_library`) — skipped to the end of its fenced region
//! and recorded as a [`LazyBody`] that parses it on first read (see `lazy.rs`).

use super::lazy::LazyBody;
use super::{Fence, PResult, Parser};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

/// The hint of E0305 (an empty method body).
pub(super) const EMPTY_BODY_HINT: &str = "a method answers its last statement; write `=> self` or `=> nil` for a method that does nothing, indented beyond the member column";

/// A parsed method header.
pub(super) struct Header {
    pub(super) selector: Name,
    pub(super) selector_span: Span,
    pub(super) params: Vec<Param>,
    pub(super) ret: Option<TypeExpr>,
}

impl<'s> Parser<'s> {
    /// `[class] [sealed] [internal] header => body` (the fence is the member column).
    pub(super) fn method(&mut self, doc: Option<Doc>) -> PResult<MethodDecl> {
        let start = self.tok().start as usize;
        let (mut class_side, mut sealed, mut internal) = (false, false, false);
        while self.peek() == Tok::Ident
            && matches!(self.text(), "class" | "sealed" | "internal")
            && !matches!(
                self.peek_at(1),
                Tok::FatArrow | Tok::Arrow | Tok::Eof | Tok::ColonColon
            )
        {
            match self.text() {
                "class" => class_side = true,
                "sealed" => sealed = true,
                _ => internal = true,
            }
            self.bump();
        }
        let h = self.header()?;
        if self.peek() != Tok::FatArrow {
            return Err(self.expected("`=>` after the method header"));
        }
        let arrow = self.bump();
        let mut primitive = None;
        let body = if self.peek() == Tok::Directive
            && matches!(self.text(), "@primitive" | "@intrinsic")
        {
            let d = self.bump();
            let dname = &self.src[d.span().range()];
            if !self.opts.allow_primitives {
                self.report_primitive_misuse(dname, d.span());
            }
            let name = match self.peek() {
                Tok::Ident | Tok::Str | Tok::Symbol if !self.tok().first() => {
                    let n = self.bump();
                    let text = &self.src[n.span().range()];
                    let text = text.trim_start_matches('#').trim_matches('"');
                    Ident {
                        name: Name::new(text),
                        span: n.span(),
                    }
                }
                _ => Ident {
                    name: Name::new(&h.selector),
                    span: d.span(),
                },
            };
            primitive = Some(name);
            if self.peek() != Tok::Eof {
                self.expected("the end of the method after the primitive");
            }
            Body::parsed(Vec::new())
        } else if let Some(lazy) = self.skip_body(arrow.span()) {
            lazy
        } else {
            Body::parsed(self.statements())
        };
        if body.is_pending() {
            // Parsed on first read; its diagnostics (E0305 included) come from there.
        } else if body.is_empty() && primitive.is_none() {
            self.report(
                Diagnostic::error("E0305", "empty method body", arrow.span())
                    .with_label("nothing follows `=>`")
                    .with_hint(EMPTY_BODY_HINT),
            );
        }
        let end = self.prev_end as usize;
        let end = end.max(arrow.end as usize);
        Ok(MethodDecl {
            doc,
            class_side,
            sealed,
            internal,
            selector: h.selector,
            selector_span: h.selector_span,
            params: h.params,
            ret: h.ret,
            primitive,
            body,
            span: Span::new(start, end),
            source: match self.lazy_src {
                Some(lib) => std::borrow::Cow::Borrowed(&lib[start..end]),
                None => std::borrow::Cow::Owned(self.src[start..end].to_string()),
            },
        })
    }

    /// Unary, binary or keyword header with `::` parameter types and `-> T` return type.
    pub(super) fn header(&mut self) -> PResult<Header> {
        let t = self.tok();
        let mut params = Vec::new();
        let (selector, selector_span) = match self.peek() {
            Tok::Ident => {
                self.bump();
                (Name::new(&self.src[t.span().range()]), t.span())
            }
            k if k.is_binop() || matches!(k, Tok::Comma | Tok::ShiftLeft | Tok::Pipe) => {
                self.bump();
                params.push(self.param()?);
                (Name::new(&self.src[t.span().range()]), t.span())
            }
            Tok::Keyword => {
                let mut sel = Name::default();
                let mut span = t.span();
                while self.peek() == Tok::Keyword {
                    let k = self.bump();
                    span = span.to(k.span());
                    sel.push_str(&self.src[k.span().range()]);
                    params.push(self.param()?);
                }
                (sel, span)
            }
            _ => return Err(self.expected("a method header (`name`, `+ other` or `at: i put: v`)")),
        };
        let ret = if self.peek() == Tok::Arrow {
            self.bump();
            Some(self.type_expr(true)?)
        } else if self.peek() == Tok::ColonColon && self.peek_at(1) == Tok::Arrow {
            self.bump();
            self.bump();
            Some(self.type_expr(true)?)
        } else {
            None
        };
        Ok(Header {
            selector,
            selector_span,
            params,
            ret,
        })
    }

    /// A parameter name with an optional `:: Type`.
    fn param(&mut self) -> PResult<Param> {
        match self.peek() {
            Tok::Ident => {
                let n = self.bump();
                let name = Ident {
                    name: Name::new(&self.src[n.span().range()]),
                    span: n.span(),
                };
                let ty = match self.peek() {
                    Tok::ColonColon if self.peek_at(1) != Tok::Arrow => {
                        self.bump();
                        Some(self.type_expr(true)?)
                    }
                    Tok::Colon => {
                        let c = self.tok();
                        self.report(
                            Diagnostic::error(
                                "E0101",
                                "expected `::` before the parameter type",
                                c.span(),
                            )
                            .with_hint(format!(
                                "parameter types use `::`: `{} :: Type`",
                                name.name
                            )),
                        );
                        self.bump();
                        Some(self.type_expr(true)?)
                    }
                    _ => None,
                };
                Ok(Param { name, ty })
            }
            Tok::Keyword
                if self.peek_at(1) == Tok::Ident
                    && self
                        .text_at(self.pos + 1)
                        .starts_with(|c: char| c.is_ascii_uppercase()) =>
            {
                // `at: i: Integer` — `i:` lexed as a keyword.
                let k = self.bump();
                let text = &self.src[k.start as usize..k.end as usize - 1];
                let name = Ident {
                    name: Name::new(text),
                    span: Span::new(k.start as usize, k.end as usize - 1),
                };
                self.report(
                    Diagnostic::error(
                        "E0101",
                        "expected `::` before the parameter type",
                        Span::new(k.end as usize - 1, k.end as usize),
                    )
                    .with_hint(format!("parameter types use `::`: `{text} :: Type`")),
                );
                let ty = Some(self.type_expr(true)?);
                Ok(Param { name, ty })
            }
            _ => Err(self.expected("a parameter name")),
        }
    }

    /// `Foo >> header => body` / `Foo class >> header => body`.
    pub(super) fn standalone(&mut self) -> Option<StandaloneMethod> {
        let doc = self.take_doc(self.pos);
        let t = self.tok();
        self.fence = Fence::Col(t.col);
        self.fence_exempt = self.pos;
        let r = (|| -> PResult<StandaloneMethod> {
            let class_name = self.ident("a class name")?;
            let class_side = if self.is_word("class") {
                self.bump();
                true
            } else {
                false
            };
            self.expect(Tok::ShiftRight, "`>>`")?;
            let method = self.method(doc)?;
            let mut method = method;
            method.class_side = method.class_side || class_side;
            Ok(StandaloneMethod {
                class_name,
                class_side,
                method,
            })
        })();
        let clean = r.is_ok();
        let out = r.ok();
        self.finish_region(clean);
        self.fence = Fence::None;
        self.fence_exempt = usize::MAX;
        out
    }

    /// In library mode, skips a method body to the end of its region and answers it as a
    /// [`Body`] parsed on first read; `None` (parse it now) outside library mode, for an
    /// empty body (E0305 is reported with the file), outside a column fence, or for an
    /// irregular region (below).
    fn skip_body(&mut self, arrow: Span) -> Option<Body> {
        let src = self.lazy_src?;
        let Fence::Col(fence_col) = self.fence else {
            return None;
        };
        if self.peek() == Tok::Eof {
            return None;
        }
        let (body_at, body_prev_end) = (self.pos, self.prev_end);
        // The region's first token (the member's, or `Foo` of `Foo >> bar`): the re-lex starts
        // there so that the body sees the same tokens before it.
        let from = if self.fence_exempt < body_at {
            self.fence_exempt
        } else {
            body_at
        };
        // Brackets are matched on the way: a region with a stray or mismatched closing
        // bracket, one left open or a lexer error is parsed now, since where its statements
        // stop (and so the method's span and source) takes the parse to know.
        let mut open: Vec<Tok> = Vec::new();
        let mut regular = true;
        while self.peek() != Tok::Eof {
            let k = self.bump().kind;
            if k.is_open() {
                open.push(k);
            } else if k.is_close() {
                let opener = open.pop();
                regular &= matches!(
                    (opener, k),
                    (Some(Tok::LParen | Tok::HashParen), Tok::RParen)
                        | (Some(Tok::LBracket | Tok::HashBracket), Tok::RBracket)
                        | (Some(Tok::LBrace | Tok::HashBrace), Tok::RBrace)
                );
            } else if k == Tok::Error {
                regular = false;
            }
        }
        if !regular || !open.is_empty() {
            self.pos = body_at;
            self.prev_end = body_prev_end;
            return None;
        }
        let first = self.toks[from];
        // The token that ends the region (the next member, or the end of the file): lexed
        // with the body, so that messages at the region's end read the same.
        let next = self.tok();
        let lex_end = if next.kind == Tok::Eof {
            src.len()
        } else {
            next.end as usize
        };
        Some(Body::lazy(Box::new(LazyBody {
            src,
            allow_primitives: self.opts.allow_primitives,
            from: first.start,
            line_start: first.start - first.col,
            first_on_line: first.first(),
            lex_end: lex_end as u32,
            skip: (body_at - from) as u32,
            fence_col,
            depth: self.depth,
            arrow,
            errors: std::sync::OnceLock::new(),
        })))
    }
}
