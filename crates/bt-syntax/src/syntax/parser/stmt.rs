//! Statements: statement sequences and their ends, recovery inside a
//! statement, `@expect` and other directives, misplaced `@primitive`.

use super::expr::mk;
use super::{PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::token::Tok;

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
    pub(super) fn end_of_statement(&mut self, start: usize, col: u32) {
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
                // `a := 1 b := 2`: the name before `:=` was read as a unary send to `1`.
                let after_word =
                    self.pos > 0 && self.toks[self.pos - 1].kind == Tok::Ident && self.pos >= 2;
                let hint = if after_word {
                    "missing newline or `.` between statements? (`a := 1. b := 2`)"
                } else {
                    "assign to a variable (`x := …`) or a field (`self.x := …`)"
                };
                self.report(
                    Diagnostic::error("E0101", "invalid assignment target", t.span())
                        .with_hint(hint),
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
            _ if text == "=>" => {
                // `  foo => 1` then `   bar => 2`: the deeper line continues foo's body.
                let msg = format!("unexpected {}", self.found());
                self.report(Diagnostic::error("E0101", msg, t.span()).with_hint(
                    "a method header inside a body: is this member indented differently from the one above? members of a class start at the same column",
                ));
            }
            _ => {
                let msg = format!("unexpected {}", self.found());
                self.report(Diagnostic::error("E0101", msg, t.span()));
            }
        }
    }

    pub(super) fn line_start_of(&self, i: usize) -> usize {
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

    pub(super) fn directive_stmt(&mut self) -> PResult<Stmt> {
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
            name: Name::new(&self.src[c.span().range()]),
            span: c.span(),
        };
        Ok(Expect {
            category,
            span: d.span().to(c.span()),
        })
    }
}
