//! Declarations: the top level, class definitions and their members (slots, options),
//! protocols and type aliases. Methods — headers, bodies, standalone `Foo >> bar` — are in
//! `method.rs`.

use super::{Fence, PResult, Parser, Recover};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::*;
use crate::syntax::lexer::{decl_kind, DeclKind};
use crate::syntax::token::Tok;

/// What the class body allows, from the literal superclass name (the parser cannot know the
/// kind of user superclasses; the checker reports the rest).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KnownKind {
    Value,
    Actor,
    Object,
    Unknown,
}

impl<'s> Parser<'s> {
    /// The whole file.
    pub(crate) fn module(&mut self) -> Module {
        let mut items = Vec::new();
        loop {
            self.fence = Fence::None;
            while self.peek() == Tok::Dot {
                self.bump();
            }
            let t = self.tok();
            match t.kind {
                Tok::Eof => break,
                k if k.is_close() => {
                    let msg = format!("unmatched {}", k.describe());
                    self.error(msg, t.span());
                    self.bump();
                    continue;
                }
                _ => {}
            }
            let start = self.pos;
            match decl_kind(&self.toks, self.src, self.pos) {
                Some(DeclKind::Class) => {
                    if let Some(c) = self.class_decl() {
                        items.push(Item::Class(c));
                    }
                }
                Some(DeclKind::Standalone) => {
                    if let Some(m) = self.standalone() {
                        items.push(Item::Method(m));
                    }
                }
                Some(DeclKind::Protocol) => {
                    if let Some(p) = self.protocol() {
                        items.push(Item::Protocol(p));
                    }
                }
                Some(DeclKind::TypeAlias) => {
                    if let Some(a) = self.type_alias() {
                        items.push(Item::TypeAlias(a));
                    }
                }
                None => {
                    if t.kind == Tok::Keyword && t.first() && self.header_line_at(self.pos) {
                        self.stray_method();
                    } else {
                        self.fence = Fence::Decl;
                        self.fence_exempt = self.pos;
                        for s in self.statements() {
                            items.push(Item::Stmt(s));
                        }
                        self.fence_exempt = usize::MAX;
                    }
                }
            }
            if self.pos == start {
                self.bump();
            }
        }
        Module { items }
    }

    /// Whether the line of token `i` holds `=>` (a method header).
    fn header_line_at(&self, i: usize) -> bool {
        let line = self.toks[i].line;
        self.toks[i..]
            .iter()
            .take_while(|t| t.line == line && t.kind != Tok::Eof)
            .any(|t| t.kind == Tok::FatArrow)
    }

    /// A method definition at top level without a class: reported and skipped.
    fn stray_method(&mut self) {
        let t = self.tok();
        self.error_hint(
            "method definition outside a class",
            t.span(),
            "define it in a class body, or write `ClassName >> selector => body`",
        );
        self.fence = Fence::Col(t.col);
        self.fence_exempt = self.pos;
        while self.peek() != Tok::Eof {
            self.bump();
        }
        self.fence = Fence::None;
    }

    /// Ends a region parsed with a fence: anything left before the fence is reported once and
    /// skipped.
    pub(super) fn finish_region(&mut self, clean: bool) {
        if self.peek() != Tok::Eof && !clean {
            while self.peek() != Tok::Eof {
                self.bump();
            }
        }
        if self.peek() != Tok::Eof {
            let t = self.tok();
            if t.kind != Tok::Error {
                let msg = format!("unexpected {}", self.found());
                self.error(msg, t.span());
            }
            while self.peek() != Tok::Eof {
                self.bump();
            }
        }
    }

    /// How many members the class body about to be parsed seems to have: the lines starting
    /// at the first member's column up to the next column-0 line. The members vector is sized
    /// once (a library class has up to ~150 members, and growing copies them all).
    fn count_members(&self) -> usize {
        let mut col = None;
        let mut n = 0;
        for t in &self.toks[self.pos..] {
            if !t.first() {
                continue;
            }
            if t.col == 0 || t.kind == Tok::Eof {
                break;
            }
            if *col.get_or_insert(t.col) == t.col {
                n += 1;
            }
        }
        n
    }

    pub(super) fn ident(&mut self, what: &str) -> PResult<Ident> {
        if self.peek() != Tok::Ident {
            return Err(self.expected(what));
        }
        let t = self.bump();
        Ok(Ident {
            name: Name::new(&self.src[t.span().range()]),
            span: t.span(),
        })
    }

    // ---- classes ----

    fn class_decl(&mut self) -> Option<ClassDecl> {
        let start_tok = self.pos;
        let doc = self.take_doc(self.pos);
        let start = self.tok().span();
        // The header is one line; the body is fenced at column 0.
        self.fence = Fence::Col(0);
        self.fence_exempt = self.pos;
        let header = self.class_header(doc, start);
        let mut class = match header {
            Ok(c) => c,
            Err(Recover) => {
                // Skip the whole class: its header line and indented body.
                while self.peek() != Tok::Eof {
                    self.bump();
                }
                self.fence = Fence::None;
                return None;
            }
        };
        let kind = match class.superclass.name.as_str() {
            "Value" => KnownKind::Value,
            "Actor" => KnownKind::Actor,
            "Object" => KnownKind::Object,
            _ => KnownKind::Unknown,
        };
        // Header options on the header line: `handleScope: #process`, `native: …`.
        while self.peek() == Tok::Keyword && !self.tok().first() {
            self.class_option(&mut class);
        }
        if self.peek() != Tok::Eof && !self.tok().first() {
            let msg = format!("unexpected {} after the class header", self.found());
            let sp = self.tok().span();
            self.error(msg, sp);
            while self.peek() != Tok::Eof && !self.tok().first() {
                self.bump();
            }
        }
        class.members.reserve(self.count_members());
        let mut member_col: Option<u32> = None;
        loop {
            self.fence = Fence::Col(0);
            self.fence_exempt = usize::MAX;
            if self.peek() == Tok::Eof {
                break;
            }
            let t = self.tok();
            let col = *member_col.get_or_insert(t.col);
            self.fence = Fence::Col(col);
            self.fence_exempt = self.pos;
            let before = self.pos;
            let clean = self.member(&mut class, kind);
            self.finish_region(clean);
            if self.pos == before {
                self.bump();
            }
        }
        self.fence = Fence::None;
        self.fence_exempt = usize::MAX;
        class.span = start.to(self.prev_span());
        let _ = start_tok;
        Some(class)
    }

    fn class_header(&mut self, doc: Option<Doc>, start: Span) -> PResult<ClassDecl> {
        let mut modifiers = ClassModifiers::default();
        while self.peek() == Tok::Ident && self.peek_at(1) == Tok::Ident {
            match self.text() {
                "abstract" => modifiers.is_abstract = true,
                "sealed" => modifiers.sealed = true,
                "typed" => modifiers.typed = true,
                "internal" => modifiers.internal = true,
                _ => break,
            }
            self.bump();
        }
        let superclass = self.ident("a superclass name")?;
        let mut super_args = Vec::new();
        if self.peek() == Tok::LParen {
            self.bump();
            loop {
                super_args.push(self.type_expr(true)?);
                match self.peek() {
                    Tok::Comma => {
                        self.bump();
                    }
                    Tok::RParen => {
                        self.bump();
                        break;
                    }
                    _ => return Err(self.expected("`,` or `)` in superclass type arguments")),
                }
            }
        }
        if !self.is_keyword("subclass:") {
            return Err(self.expected("`subclass:`"));
        }
        self.bump();
        let name = self.ident("a class name")?;
        let mut type_params = Vec::new();
        if self.peek() == Tok::LParen && !self.tok().space_before() {
            self.bump();
            loop {
                let pname = self.ident("a type parameter name")?;
                let bound = if self.peek() == Tok::ColonColon {
                    self.bump();
                    Some(self.type_expr(true)?)
                } else {
                    None
                };
                type_params.push(TypeParam { name: pname, bound });
                match self.peek() {
                    Tok::Comma => {
                        self.bump();
                    }
                    Tok::RParen => {
                        self.bump();
                        break;
                    }
                    _ => return Err(self.expected("`,` or `)` in type parameters")),
                }
            }
        }
        Ok(ClassDecl {
            doc,
            modifiers,
            superclass,
            super_args,
            name,
            type_params,
            handle_scope: None,
            members: Vec::new(),
            span: start,
        })
    }

    /// `handleScope: #process` / `native: …` (the keyword is current).
    fn class_option(&mut self, class: &mut ClassDecl) {
        let t = self.bump();
        match &self.src[t.span().range()] {
            "handleScope:" => {
                if matches!(self.peek(), Tok::Symbol) {
                    let s = self.bump();
                    let name = Name::new(&self.src[s.start as usize + 1..s.end as usize]);
                    if name != "process" && name != "node" {
                        self.report(
                            Diagnostic::error(
                                "E0101",
                                format!("unknown handle scope `#{name}`"),
                                s.span(),
                            )
                            .with_hint("`handleScope:` is `#process` or `#node`"),
                        );
                    }
                    class.handle_scope = Some(Ident {
                        name,
                        span: s.span(),
                    });
                } else {
                    self.expected("`#process` or `#node` after `handleScope:`");
                    self.skip_line();
                }
            }
            "native:" => {
                self.report(
                    Diagnostic::error("E0308", "native classes are not supported", t.span())
                        .with_hint("bt has no foreign-function gateway; write the class in bt"),
                );
                self.skip_line();
            }
            other => {
                let msg = format!("unexpected `{other}` in the class header");
                self.error_hint(msg, t.span(), "a class header takes only `handleScope:`");
                self.skip_line();
            }
        }
    }

    fn skip_line(&mut self) {
        while self.peek() != Tok::Eof && !self.tok().first() {
            self.bump();
        }
    }

    /// One member (the fence is set to the member column).
    /// Answers false when a diagnostic was reported (the rest of the member is skipped).
    fn member(&mut self, class: &mut ClassDecl, kind: KnownKind) -> bool {
        let t = self.tok();
        let doc = self.take_doc(self.pos);
        if t.kind == Tok::Directive && self.text() == "@expect" {
            return match self.expect_directive() {
                Ok(e) => {
                    class.members.push(Member::Expect(e));
                    true
                }
                Err(_) => false,
            };
        }
        if t.kind == Tok::Keyword {
            let kw = self.text();
            if matches!(kw, "handleScope:" | "native:") && self.peek_at(1) != Tok::Ident {
                let n = self.diags.len();
                self.class_option(class);
                return self.diags.len() == n;
            }
            if matches!(kw, "field:" | "state:" | "classState:") && !self.slot_is_method() {
                let Ok(slot) = self.slot(doc) else {
                    return false;
                };
                {
                    let wrong = match (kw, kind) {
                        ("state:", KnownKind::Value) => Some((
                            "`state:` in a Value class",
                            "Value classes declare immutable data with `field:`",
                        )),
                        ("field:", KnownKind::Actor) => Some((
                            "`field:` in an Actor class",
                            "Actor classes declare mutable state with `state:`",
                        )),
                        ("field:" | "state:", KnownKind::Object) => Some((
                            "an Object class has no data",
                            "use `Value subclass:` for `field:` or `Actor subclass:` for `state:`; `classState:` is allowed in any class",
                        )),
                        _ => None,
                    };
                    if let Some((msg, hint)) = wrong {
                        self.report(Diagnostic::error("E0301", msg, t.span()).with_hint(hint));
                    }
                    class.members.push(match kw {
                        "field:" => Member::Field(slot),
                        "state:" => Member::State(slot),
                        _ => Member::ClassState(slot),
                    });
                }
                return true;
            }
        }
        match self.method(doc) {
            Ok(m) => {
                class.members.push(Member::Method(m));
                true
            }
            Err(_) => false,
        }
    }

    /// `field: x = 1` vs the keyword method `field: x => …`: a `=>` at depth 0 on the line
    /// before any `=` makes it a method.
    fn slot_is_method(&self) -> bool {
        let line = self.tok().line;
        let mut depth = 0i32;
        for t in self.toks[self.pos..]
            .iter()
            .take_while(|t| t.line == line && t.kind != Tok::Eof)
        {
            match t.kind {
                k if k.is_open() => depth += 1,
                k if k.is_close() => depth -= 1,
                Tok::FatArrow if depth == 0 => return true,
                Tok::BinOp if depth == 0 && &self.src[t.start as usize..t.end as usize] == "=" => {
                    return false
                }
                _ => {}
            }
        }
        false
    }

    /// `field: name [:: Type] [= expr]`.
    fn slot(&mut self, doc: Option<Doc>) -> PResult<SlotDecl> {
        let kw = self.bump();
        let name = self.ident("a slot name")?;
        let ty = if self.peek() == Tok::ColonColon {
            self.bump();
            Some(self.type_expr(true)?)
        } else if self.peek() == Tok::Colon {
            let c = self.tok();
            return Err(self.error_hint(
                "slot types use `::`",
                c.span(),
                format!("write `{} :: Type`", name.name),
            ));
        } else {
            None
        };
        let default = if self.peek() == Tok::BinOp && self.text() == "=" {
            self.bump();
            Some(self.expr()?)
        } else if self.peek() == Tok::Assign {
            let a = self.tok();
            return Err(self.error_hint(
                "slot defaults use `=`",
                a.span(),
                format!("write `{} = value`", name.name),
            ));
        } else {
            None
        };
        if self.peek() != Tok::Eof && !self.tok().first() {
            return Err(self.expected("`::`, `=` or the end of the slot declaration"));
        }
        let end = self.prev_span();
        Ok(SlotDecl {
            doc,
            name,
            ty,
            default,
            span: kw.span().to(end),
        })
    }

    // ---- protocols and aliases ----

    fn protocol(&mut self) -> Option<ProtocolDecl> {
        let doc = self.take_doc(self.pos);
        let start = self.tok().span();
        self.fence = Fence::Col(0);
        self.fence_exempt = self.pos;
        self.bump(); // Protocol
        self.bump(); // define:
        let name = match self.ident("a protocol name") {
            Ok(n) => n,
            Err(_) => {
                while self.peek() != Tok::Eof {
                    self.bump();
                }
                self.fence = Fence::None;
                return None;
            }
        };
        let mut p = ProtocolDecl {
            doc,
            name,
            extending: None,
            signatures: Vec::new(),
            span: start,
        };
        let mut member_col = None;
        loop {
            self.fence = Fence::Col(0);
            self.fence_exempt = usize::MAX;
            if self.peek() == Tok::Eof {
                break;
            }
            let t = self.tok();
            let col = if t.first() {
                *member_col.get_or_insert(t.col)
            } else {
                t.col
            };
            self.fence = Fence::Col(col);
            self.fence_exempt = self.pos;
            let before = self.pos;
            self.take_doc(self.pos);
            let mut clean = true;
            if self.is_keyword("extending:")
                && self.peek_at(1) == Tok::Ident
                && matches!(self.peek_at(2), Tok::Eof)
            {
                self.bump();
                if let Ok(e) = self.ident("a protocol name") {
                    p.extending = Some(e);
                }
            } else {
                match self.signature() {
                    Ok(sig) => p.signatures.push(sig),
                    Err(_) => clean = false,
                }
            }
            self.finish_region(clean);
            if self.pos == before {
                self.bump();
            }
        }
        self.fence = Fence::None;
        self.fence_exempt = usize::MAX;
        p.span = start.to(self.prev_span());
        Some(p)
    }

    fn signature(&mut self) -> PResult<MethodSig> {
        let start = self.tok().span();
        let mut class_side = false;
        if self.is_word("class")
            && !matches!(self.peek_at(1), Tok::Arrow | Tok::Eof | Tok::FatArrow)
        {
            self.bump();
            class_side = true;
        }
        let h = self.header()?;
        if self.peek() == Tok::FatArrow {
            let t = self.tok();
            return Err(self.error_hint(
                "protocol signatures have no body",
                t.span(),
                "a protocol lists selectors and types; define the method in a class",
            ));
        }
        Ok(MethodSig {
            class_side,
            selector: h.selector,
            params: h.params,
            ret: h.ret,
            span: start.to(self.prev_span()),
        })
    }

    fn type_alias(&mut self) -> Option<TypeAlias> {
        let doc = self.take_doc(self.pos);
        let start = self.tok().span();
        let t = self.tok();
        self.fence = Fence::Col(t.col);
        self.fence_exempt = self.pos;
        let r = (|| -> PResult<TypeAlias> {
            let internal = if self.is_word("internal") {
                self.bump();
                true
            } else {
                false
            };
            self.bump(); // type
            let name = self.ident("a type alias name")?;
            if !(self.peek() == Tok::BinOp && self.text() == "=") {
                return Err(self.expected("`=` after the type alias name"));
            }
            self.bump();
            let ty = self.type_expr(true)?;
            Ok(TypeAlias {
                doc,
                internal,
                name,
                ty,
                span: start.to(self.prev_span()),
            })
        })();
        let clean = r.is_ok();
        let out = r.ok();
        self.finish_region(clean);
        self.fence = Fence::None;
        self.fence_exempt = usize::MAX;
        out
    }
}
