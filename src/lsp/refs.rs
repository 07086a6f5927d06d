//! Where each name of a file is written: the occurrences behind `bt lsp`'s references,
//! document highlights, rename and the go-to-definition of local variables.
//!
//! One walk of the syntax tree records every class name (declarations, superclasses, type
//! annotations, uses in expressions), every selector (method headers, sends, cascade parts:
//! a keyword selector's occurrence is its keyword parts, found with the lexer inside the
//! selector's span), every field (`field:`/`state:` declarations, `self.x` reads and writes)
//! and every variable (parameters, block parameters, assignments, pattern bindings, reads).
//! A variable is known by its name and its scope: the method it is written in, or the file's
//! top-level statements. A keyword send inside a string interpolation is not seen (the lexer
//! gives the whole string as one token, so its keyword parts cannot be found).

use crate::syntax::ast::{
    Block, ClassDecl, Expr, ExprKind, InterpPart, Item, Member, MethodDecl, Param, Pattern, Span,
    Stmt, StmtKind, TypeExpr, TypeKind,
};
use crate::syntax::token::Tok;

/// What a name refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Class(String),
    Selector(String),
    /// `(class, field)`.
    Field(String, String),
    /// `(name, scope)`: the scope is the start of the enclosing method (`u32::MAX` for the
    /// file's top-level statements).
    Var(String, u32),
}

/// One place a name is written: its spans (several for a keyword selector's parts) and
/// whether it declares the name (a class or method header, a slot, the first binding of a
/// variable).
#[derive(Clone, Debug)]
pub(crate) struct Occurrence {
    pub(crate) key: Key,
    pub(crate) spans: Vec<Span>,
    pub(crate) decl: bool,
}

impl Occurrence {
    pub(crate) fn contains(&self, offset: usize) -> bool {
        self.spans
            .iter()
            .any(|s| s.start as usize <= offset && offset <= s.end as usize)
    }
}

/// Every occurrence in `text`, in source order.
pub(crate) fn occurrences(text: &str) -> Vec<Occurrence> {
    let (module, _) = crate::syntax::parse(text);
    let lexed = crate::syntax::lexer::lex(text);
    let mut w = Walker {
        text,
        toks: &lexed.tokens,
        out: Vec::new(),
        class: None,
        scope: u32::MAX,
    };
    for item in &module.items {
        match item {
            Item::Class(c) => w.class(c),
            Item::Method(sm) => {
                w.push(
                    Key::Class(sm.class_name.name.to_string()),
                    sm.class_name.span,
                    false,
                );
                w.class = Some(sm.class_name.name.to_string());
                w.method(&sm.method);
                w.class = None;
            }
            Item::Protocol(p) => {
                w.push(Key::Class(p.name.name.to_string()), p.name.span, true);
                for s in &p.signatures {
                    for prm in &s.params {
                        w.ty_opt(prm.ty.as_ref());
                    }
                    w.ty_opt(s.ret.as_ref());
                }
            }
            Item::TypeAlias(t) => w.ty(&t.ty),
            Item::Stmt(s) => {
                w.scope = u32::MAX;
                w.stmt(s);
            }
        }
    }
    let mut out = w.out;
    // The first binding of a variable in its scope declares it.
    let mut seen: Vec<Key> = Vec::new();
    for o in out.iter_mut() {
        if let Key::Var(..) = o.key {
            if !seen.contains(&o.key) {
                seen.push(o.key.clone());
                o.decl = true;
            }
        }
    }
    out
}

struct Walker<'a> {
    text: &'a str,
    toks: &'a [crate::syntax::token::Token],
    out: Vec<Occurrence>,
    class: Option<String>,
    scope: u32,
}

impl Walker<'_> {
    fn push(&mut self, key: Key, span: Span, decl: bool) {
        if span.end > span.start && span.end as usize <= self.text.len() {
            self.out.push(Occurrence {
                key,
                spans: vec![span],
                decl,
            });
        }
    }

    /// A selector written at `span`: a keyword selector's parts are the keyword tokens of the
    /// span outside brackets (its arguments' own sends are parenthesised or in blocks).
    fn selector(&mut self, selector: &str, span: Span, decl: bool) {
        if !selector.ends_with(':') {
            self.push(Key::Selector(selector.to_string()), span, decl);
            return;
        }
        let from = self.toks.partition_point(|t| t.start < span.start);
        let mut depth = 0i32;
        let mut spans = Vec::new();
        for t in &self.toks[from..] {
            if t.start >= span.end {
                break;
            }
            if t.kind.is_open() {
                depth += 1;
            } else if t.kind.is_close() {
                depth -= 1;
            } else if t.kind == Tok::Keyword && depth == 0 {
                spans.push(t.span());
            }
        }
        let parts: String = spans
            .iter()
            .map(|s| &self.text[s.start as usize..s.end as usize])
            .collect();
        if parts == selector && !spans.is_empty() {
            self.out.push(Occurrence {
                key: Key::Selector(selector.to_string()),
                spans,
                decl,
            });
        }
    }

    fn class(&mut self, c: &ClassDecl) {
        self.push(
            Key::Class(c.superclass.name.to_string()),
            c.superclass.span,
            false,
        );
        self.push(Key::Class(c.name.name.to_string()), c.name.span, true);
        let name = c.name.name.to_string();
        self.class = Some(name.clone());
        for t in &c.super_args {
            self.ty(t);
        }
        for m in &c.members {
            match m {
                Member::Field(s) | Member::State(s) | Member::ClassState(s) => {
                    self.push(
                        Key::Field(name.clone(), s.name.name.to_string()),
                        s.name.span,
                        true,
                    );
                    self.ty_opt(s.ty.as_ref());
                    if let Some(d) = &s.default {
                        self.scope = s.span.start;
                        self.expr(d);
                    }
                }
                Member::Method(md) => self.method(md),
                Member::Expect(_) => {}
            }
        }
        self.class = None;
    }

    fn method(&mut self, md: &MethodDecl) {
        self.scope = md.span.start;
        self.selector(&md.selector, md.selector_span, true);
        self.params(&md.params);
        self.ty_opt(md.ret.as_ref());
        for s in md.body.iter() {
            self.stmt(s);
        }
    }

    fn params(&mut self, ps: &[Param]) {
        for p in ps {
            self.var(&p.name.name, p.name.span);
            self.ty_opt(p.ty.as_ref());
        }
    }

    fn var(&mut self, name: &str, span: Span) {
        if name == "_" || name.is_empty() {
            return;
        }
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            self.push(Key::Class(name.to_string()), span, false);
        } else {
            self.push(Key::Var(name.to_string(), self.scope), span, false);
        }
    }

    fn field(&mut self, name: &str, span: Span) {
        if let Some(c) = self.class.clone() {
            self.push(Key::Field(c, name.to_string()), span, false);
        }
    }

    fn ty_opt(&mut self, t: Option<&TypeExpr>) {
        if let Some(t) = t {
            self.ty(t);
        }
    }

    fn ty(&mut self, t: &TypeExpr) {
        match &t.kind {
            TypeKind::Named { name, args } => {
                if name.starts_with(|c: char| c.is_ascii_uppercase()) && name != "Self" {
                    let span = Span {
                        start: t.span.start,
                        end: t.span.start + name.len() as u32,
                    };
                    if self.text.get(span.start as usize..span.end as usize) == Some(name) {
                        self.push(Key::Class(name.to_string()), span, false);
                    }
                }
                for a in args {
                    self.ty(a);
                }
            }
            TypeKind::Meta(t) => self.ty(t),
            TypeKind::Union(ts) | TypeKind::Inter(ts) => {
                for t in ts {
                    self.ty(t);
                }
            }
            TypeKind::Diff(a, b) => {
                self.ty(a);
                self.ty(b);
            }
            _ => {}
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Cast(e) => self.expr(e),
            StmtKind::Expect(_) => {}
        }
    }

    fn block(&mut self, b: &Block) {
        self.params(&b.params);
        for s in &b.body {
            self.stmt(s);
        }
    }

    fn pattern(&mut self, p: &Pattern) {
        match p {
            Pattern::Literal(e) => self.expr(e),
            Pattern::Bind(i) => self.var(&i.name, i.span),
            Pattern::Typed { name, ty } => {
                self.var(&name.name, name.span);
                self.ty(ty);
            }
            Pattern::Tuple(ps, _) => ps.iter().for_each(|p| self.pattern(p)),
            Pattern::Array { elems, rest, .. } | Pattern::List { elems, rest, .. } => {
                elems.iter().for_each(|p| self.pattern(p));
                if let Some(r) = rest {
                    self.var(&r.name, r.span);
                }
            }
            Pattern::Dict(kv, _) => {
                for (k, p) in kv {
                    self.expr(k);
                    self.pattern(p);
                }
            }
            Pattern::ResultOk(p, _) | Pattern::ResultError(p, _) => self.pattern(p),
            Pattern::Binary(segs, _) => {
                for s in segs {
                    if let crate::syntax::ast::BinSegValue::Bind(i) = &s.value {
                        self.var(&i.name, i.span);
                    }
                }
            }
            Pattern::Wildcard(_) | Pattern::Nil(_) | Pattern::Error(_) => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(n) => self.var(n, e.span),
            ExprKind::Field(n) => {
                let span = Span {
                    start: e.span.end.saturating_sub(n.len() as u32),
                    end: e.span.end,
                };
                self.field(n, span);
            }
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let InterpPart::Expr(e) = p {
                        self.expr(e);
                    }
                }
            }
            ExprKind::Assign { name, ty, value } => {
                self.var(&name.name, name.span);
                if let Some(t) = ty {
                    self.ty(t);
                }
                self.expr(value);
            }
            ExprKind::FieldAssign { name, value } => {
                self.field(&name.name, name.span);
                self.expr(value);
            }
            ExprKind::Destructure { pattern, value } => {
                self.pattern(pattern);
                self.expr(value);
            }
            ExprKind::Send {
                receiver,
                selector,
                selector_span,
                args,
            } => {
                self.expr(receiver);
                self.selector(selector, *selector_span, false);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Cascade { receiver, parts } => {
                self.expr(receiver);
                for p in parts {
                    self.selector(&p.selector, p.selector_span, false);
                    p.args.iter().for_each(|a| self.expr(a));
                }
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::List(es) | ExprKind::Array(es) | ExprKind::TupleLit(es) => {
                es.iter().for_each(|e| self.expr(e))
            }
            ExprKind::ListCons { head, tail } => {
                self.expr(head);
                self.expr(tail);
            }
            ExprKind::Dict(kv) => {
                for (k, v) in kv {
                    self.expr(k);
                    self.expr(v);
                }
            }
            ExprKind::Match { receiver, arms, .. } => {
                self.expr(receiver);
                for a in arms {
                    self.pattern(&a.pattern);
                    if let Some(g) = &a.guard {
                        self.expr(g);
                    }
                    self.expr(&a.body);
                }
            }
            ExprKind::Return(e) => self.expr(e),
            _ => {}
        }
    }
}

/// The occurrence under `offset` (the innermost: the one with the shortest span).
pub(crate) fn at(occs: &[Occurrence], offset: usize) -> Option<&Occurrence> {
    occs.iter()
        .filter(|o| o.contains(offset))
        .min_by_key(|o| o.spans.iter().map(|s| s.end - s.start).sum::<u32>())
}

/// Is `name` a valid replacement for a name of this kind? (A keyword selector keeps its
/// number of parts.)
pub(crate) fn valid_new_name(key: &Key, name: &str) -> Result<(), String> {
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let ok = match key {
        Key::Class(_) => ident(name) && name.starts_with(|c: char| c.is_ascii_uppercase()),
        Key::Var(..) | Key::Field(..) => {
            ident(name) && !name.starts_with(|c: char| c.is_ascii_uppercase())
        }
        Key::Selector(old) if old.ends_with(':') => {
            name.ends_with(':')
                && name.split_terminator(':').all(ident)
                && name.matches(':').count() == old.matches(':').count()
        }
        Key::Selector(old) if old.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
            ident(name)
        }
        Key::Selector(_) => !name.is_empty() && name.chars().all(|c| "+-*/<>=~%&?\\".contains(c)),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("`{name}` cannot replace {}", describe(key)))
    }
}

/// "the class `Foo`", "the selector `at:put:`", …
pub(crate) fn describe(key: &Key) -> String {
    match key {
        Key::Class(n) => format!("the class name `{n}`"),
        Key::Selector(s) if s.ends_with(':') => {
            format!(
                "the keyword selector `{s}` (give as many parts: `{}`)",
                s.split_terminator(':').map(|_| "part:").collect::<String>()
            )
        }
        Key::Selector(s) => format!("the selector `{s}`"),
        Key::Field(_, f) => format!("the field `{f}`"),
        Key::Var(v, _) => format!("the variable `{v}`"),
    }
}

/// The replacement text for one span of an occurrence (`part` of a keyword selector).
pub(crate) fn replacement(key: &Key, new: &str, part: usize) -> String {
    match key {
        Key::Selector(s) if s.ends_with(':') => new
            .split_inclusive(':')
            .nth(part)
            .unwrap_or(new)
            .to_string(),
        _ => new.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str, key: &Key) -> Vec<String> {
        occurrences(src)
            .iter()
            .filter(|o| &o.key == key)
            .flat_map(|o| {
                o.spans
                    .iter()
                    .map(|s| src[s.start as usize..s.end as usize].to_string())
            })
            .collect()
    }

    const SRC: &str = "Actor subclass: Counter
  state: count :: Integer = 0

  add: n to: m -> Integer => n + m
  bump => self.count := self.count + (self add: 1 to: 2)

c := Counter spawn
c add: (c add: 1 to: 2) to: 3
x := [:n | n + 1]
";

    #[test]
    fn every_kind_of_name_is_found() {
        let o = occurrences(SRC);
        assert_eq!(
            texts(SRC, &Key::Selector("add:to:".into())),
            vec!["add:", "to:", "add:", "to:", "add:", "to:", "add:", "to:"]
        );
        assert_eq!(texts(SRC, &Key::Class("Counter".into())).len(), 2);
        assert_eq!(texts(SRC, &Key::Class("Integer".into())).len(), 2);
        assert_eq!(
            texts(SRC, &Key::Field("Counter".into(), "count".into())),
            vec!["count", "count", "count"]
        );
        let c = Key::Var("c".into(), u32::MAX);
        assert_eq!(texts(SRC, &c).len(), 3);
        let decl = o.iter().find(|x| x.key == c).unwrap();
        assert!(decl.decl);
        // `n` of the method and `n` of the top-level block are different variables.
        let method_start = SRC.find("add: n").unwrap() as u32;
        assert_eq!(texts(SRC, &Key::Var("n".into(), method_start)).len(), 2);
        assert_eq!(texts(SRC, &Key::Var("n".into(), u32::MAX)).len(), 2);
        let at_m = at(&o, SRC.find("n + m").unwrap()).unwrap();
        assert_eq!(at_m.key, Key::Var("n".into(), method_start));
    }

    #[test]
    fn new_names_are_checked() {
        let kw = Key::Selector("add:to:".into());
        assert!(valid_new_name(&kw, "plus:and:").is_ok());
        assert!(valid_new_name(&kw, "plus:").is_err());
        assert!(valid_new_name(&Key::Class("A".into()), "b").is_err());
        assert!(valid_new_name(&Key::Var("a".into(), 0), "b2").is_ok());
        assert!(valid_new_name(&Key::Selector("+".into()), "++").is_ok());
        assert_eq!(replacement(&kw, "plus:and:", 1), "and:");
    }
}
