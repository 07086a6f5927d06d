//! Type annotations: names, generics, `Self`, metaclasses, singleton
//! symbols, unions (loosest), and left-associative `&` / `\` (which may not be mixed without
//! parentheses).

use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

impl<'s> Parser<'s> {
    /// A type; `allow_union` is false where `|` has another meaning (block parameters).
    pub(crate) fn type_expr(&mut self, allow_union: bool) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.type_union(allow_union);
        self.leave();
        r
    }

    fn type_union(&mut self, allow_union: bool) -> PResult<TypeExpr> {
        let first = self.type_inter()?;
        if !allow_union || self.peek() != Tok::Pipe {
            return Ok(first);
        }
        let mut span = first.span;
        let mut alts = vec![first];
        while self.peek() == Tok::Pipe {
            self.bump();
            let t = self.type_inter()?;
            span = span.to(t.span);
            alts.push(t);
        }
        Ok(TypeExpr {
            kind: TypeKind::Union(alts),
            span,
        })
    }

    fn type_inter(&mut self) -> PResult<TypeExpr> {
        let mut lhs = self.type_primary()?;
        let mut seen: Option<&'static str> = None;
        let mut inter: Vec<TypeExpr> = Vec::new();
        loop {
            if self.peek() != Tok::BinOp {
                break;
            }
            let op = match self.text() {
                "&" => "&",
                "\\" => "\\",
                "\\\\" => {
                    let t = self.tok();
                    self.report(
                        Diagnostic::error("E0101", "`\\\\` is not a type operator", t.span())
                            .with_hint(
                                "did you mean `\\`? (type difference is a single backslash)",
                            ),
                    );
                    "\\"
                }
                _ => break,
            };
            let t = self.bump();
            if let Some(prev) = seen {
                if prev != op {
                    return Err(self.error_hint(
                        "`&` and `\\` cannot be mixed without parentheses",
                        t.span(),
                        "group with parentheses: `(A & B) \\ C`",
                    ));
                }
            }
            seen = Some(op);
            let rhs = self.type_primary()?;
            if op == "&" {
                if inter.is_empty() {
                    inter.push(lhs.clone());
                }
                inter.push(rhs.clone());
                let span = lhs.span.to(rhs.span);
                lhs = TypeExpr {
                    kind: TypeKind::Inter(inter.clone()),
                    span,
                };
            } else {
                let span = lhs.span.to(rhs.span);
                lhs = TypeExpr {
                    kind: TypeKind::Diff(Box::new(lhs), Box::new(rhs)),
                    span,
                };
            }
        }
        Ok(lhs)
    }

    fn type_primary(&mut self) -> PResult<TypeExpr> {
        let t = self.tok();
        let mut ty = match self.peek() {
            Tok::Ident => {
                let name = self.text();
                self.bump();
                match name {
                    "Self" => TypeExpr {
                        kind: TypeKind::SelfType,
                        span: t.span(),
                    },
                    "nil" => TypeExpr {
                        kind: TypeKind::Nil,
                        span: t.span(),
                    },
                    "false" => TypeExpr {
                        kind: TypeKind::False,
                        span: t.span(),
                    },
                    "true" => TypeExpr {
                        kind: TypeKind::True,
                        span: t.span(),
                    },
                    _ => {
                        let mut args = Vec::new();
                        let mut span = t.span();
                        if self.peek() == Tok::LParen && !self.tok().first() {
                            self.bump();
                            loop {
                                args.push(self.type_expr(true)?);
                                match self.peek() {
                                    Tok::Comma => {
                                        self.bump();
                                    }
                                    Tok::RParen => {
                                        span = span.to(self.bump().span());
                                        break;
                                    }
                                    _ => return Err(self.expected("`,` or `)` in type arguments")),
                                }
                            }
                        }
                        TypeExpr {
                            kind: TypeKind::Named {
                                name: Name::new(name),
                                args,
                            },
                            span,
                        }
                    }
                }
            }
            Tok::Symbol | Tok::QuotedSymbol => {
                let e = self.literal()?;
                match e.kind {
                    ExprKind::Symbol(s) => TypeExpr {
                        kind: TypeKind::Symbol(s.to_string()),
                        span: e.span,
                    },
                    _ => TypeExpr {
                        kind: TypeKind::Error,
                        span: e.span,
                    },
                }
            }
            Tok::LParen => {
                let open = self.bump();
                let inner = self.type_expr(true)?;
                if self.peek() != Tok::RParen {
                    return Err(self.expected("`)` in type"));
                }
                let close = self.bump();
                TypeExpr {
                    kind: inner.kind,
                    span: open.span().to(close.span()),
                }
            }
            Tok::Error => {
                self.bump();
                return Err(Recover);
            }
            _ => return Err(self.expected("a type")),
        };
        while self.is_word("class") && !self.tok().first() {
            let c = self.bump();
            let span = ty.span.to(c.span());
            ty = TypeExpr {
                kind: TypeKind::Meta(Box::new(ty)),
                span,
            };
        }
        Ok(ty)
    }
}
