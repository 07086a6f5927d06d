//! The body walker: local inference over statements and expressions, scopes, the inlined
//! control-flow blocks, narrowing and the known-remote flow fact. Sends are graded
//! in [`super::sends`], match expressions in [`super::patterns`]; modules, classes and method
//! headers in [`super::walk_decls`].

use std::collections::HashSet;

use super::classtable::{ClassTable, Kind, Origin};
use super::options::ExpectSite;
use super::scope::{ScopeKind, Scopes, Var};
use super::syntactic::{assigned_names, is_literal, pattern_vars, read_names};
use super::types::{may_conform, Hierarchy, Ty};
use super::wording::{a_an, did_you_mean, habit};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{self, Block, Expr, ExprKind, Span, Stmt, StmtKind};

/// What the walker knows about the method being checked.
#[derive(Clone, Debug, Default)]
pub struct MethodCtx {
    /// The class whose method this is (None at top level).
    pub class: Option<String>,
    pub class_side: bool,
    pub selector: Option<String>,
}

/// Walks one file's bodies, collecting diagnostics and `@expect` sites.
pub struct Walker<'a> {
    pub table: &'a ClassTable,
    pub src: &'a str,
    pub origin: Origin,
    pub diags: Vec<Diagnostic>,
    pub expects: Vec<ExpectSite>,
    pub scopes: Scopes,
    pub ctx: MethodCtx,
    /// Names of block locals whose block has ended (for the "assign it before the block" hint).
    pub dead_block_locals: HashSet<String>,
    /// Depth of code that deliberately provokes errors (the body of `on:do:`, `ensure:`,
    /// `should:raise:`, `Result tryDo:`, match guards): DNU findings are not given there.
    pub protected: usize,
    /// Names whose assignment is being evaluated (for the hint on `f := [… f …]`).
    pub assigning: Vec<String>,
    /// Names assigned more than once in the current method (or file top level): inside a
    /// block, such a captured variable may hold any of its values when the block runs.
    pub multi_assigned: HashSet<String>,
}

/// Facts a condition establishes: variable narrowings when it is true / false.
#[derive(Default, Debug)]
pub struct Facts {
    pub when_true: Vec<(usize, Ty)>,
    pub when_false: Vec<(usize, Ty)>,
}

/// Selectors whose result is a Result holding a possibly remote actor.
pub const REMOTE_SOURCES: &[&str] = &[
    "spawnOn:",
    "spawnWith:on:",
    "spawnAs:on:",
    "spawnWith:as:on:",
    "named:on:",
];

/// The `scope:` selectors that are known-remote sources with the literal `#global`.
pub const SCOPE_SOURCES: &[&str] = &["spawnAs:scope:", "spawnWith:as:scope:", "named:scope:"];

/// Selectors through which the known-remote fact flows, and the classes they are
/// sent to: a Result (`unwrap`, `value`, `ifOk:ifError:`) or an actor (`withTimeout:`).
pub const REMOTE_FLOW: &[(&str, &str)] = &[
    ("Result", "unwrap"),
    ("Result", "value"),
    ("Result", "ifOk:ifError:"),
    ("Actor", "withTimeout:"),
];

/// One send as the checker sees it (receiver and arguments already walked).
pub(crate) struct SendSite<'e> {
    pub recv: &'e Expr,
    pub recv_ty: Ty,
    pub selector: &'e str,
    pub sel_span: Span,
    pub args: &'e [Expr],
    pub arg_tys: Vec<Ty>,
    pub span: Span,
}

impl<'a> Walker<'a> {
    pub fn new(table: &'a ClassTable, src: &'a str, origin: Origin) -> Walker<'a> {
        Walker {
            table,
            src,
            origin,
            diags: Vec::new(),
            expects: Vec::new(),
            scopes: Scopes::default(),
            ctx: MethodCtx::default(),
            dead_block_locals: HashSet::new(),
            protected: 0,
            assigning: Vec::new(),
            multi_assigned: HashSet::new(),
        }
    }

    pub fn is_library(&self) -> bool {
        self.origin.is_library()
    }

    /// The source text of a span (for messages).
    pub fn text(&self, span: Span) -> &str {
        self.src.get(span.range()).unwrap_or("")
    }

    /// A span cut at the end of its first line (multi-line constructs are labelled there).
    pub fn first_line(&self, span: Span) -> Span {
        let text = self.text(span);
        match text.find('\n') {
            Some(i) => Span::new(
                span.start as usize,
                span.start as usize + text[..i].trim_end().len(),
            ),
            None => span,
        }
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    // ---- top level ------------------------------------------------------------------------

    /// Walks a statement list; answers the last statement's type (`Never` once a statement
    /// diverges), honouring `@expect` lines.
    pub fn stmts(&mut self, stmts: &[Stmt]) -> Ty {
        let mut last = Ty::Nil;
        let mut pending: Option<&ast::Expect> = None;
        let mut diverged = false;
        for s in stmts {
            if let StmtKind::Expect(x) = &s.kind {
                self.expect_directive(x);
                pending = Some(x);
                continue;
            }
            if let Some(x) = pending.take() {
                self.add_expect(x, s.span);
            }
            last = self.stmt(s);
            if last == Ty::Never {
                diverged = true;
            }
        }
        if let Some(x) = pending {
            self.add_expect(x, Span::new(x.span.end as usize, x.span.end as usize));
        }
        if diverged {
            Ty::Never
        } else {
            last
        }
    }

    pub fn stmt(&mut self, s: &Stmt) -> Ty {
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Cast(e) => {
                self.expr(e);
                Ty::Nil
            }
            StmtKind::Expect(x) => {
                self.expect_directive(x);
                Ty::Nil
            }
        }
    }

    // ---- expressions ----------------------------------------------------------------------

    pub fn expr(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Nil => Ty::Nil,
            ExprKind::True => Ty::inst("True"),
            ExprKind::False => Ty::inst("False"),
            ExprKind::SelfRef | ExprKind::Super => self.self_type(),
            ExprKind::Int(_) | ExprKind::BigInt(_) => Ty::inst("Integer"),
            ExprKind::Float(_) => Ty::inst("Float"),
            ExprKind::Str(_) => Ty::inst("String"),
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let ast::InterpPart::Expr(x) = p {
                        self.expr(x);
                    }
                }
                Ty::inst("String")
            }
            ExprKind::Char(_) => Ty::inst("Character"),
            ExprKind::Symbol(s) => Ty::Sym(s.to_string()),
            ExprKind::Var(name) => self.var_read(name, e.span),
            ExprKind::Field(name) => self.field_type(name),
            ExprKind::Assign { name, ty, value } => self.assign(name, ty.as_deref(), value),
            ExprKind::FieldAssign { name, value } => self.field_assign(name, value),
            ExprKind::Destructure { pattern, value } => {
                let t = self.expr(value);
                self.bind_destructure(pattern);
                t
            }
            ExprKind::Send {
                receiver,
                selector,
                selector_span,
                args,
            } => self.send_expr(e, receiver, selector, *selector_span, args),
            ExprKind::Cascade { receiver, parts } => self.cascade(receiver, parts),
            ExprKind::Block(b) => {
                self.closure(b, &[], false);
                Ty::inst("Block")
            }
            ExprKind::List(items) | ExprKind::Array(items) => {
                let tys: Vec<Ty> = items.iter().map(|i| self.expr(i)).collect();
                let cls = if matches!(e.kind, ExprKind::List(_)) {
                    "List"
                } else {
                    "Array"
                };
                if tys.is_empty() {
                    Ty::inst(cls)
                } else {
                    Ty::Inst(cls.to_string(), vec![Ty::union(tys)])
                }
            }
            ExprKind::ListCons { head, tail } => {
                self.expr(head);
                self.expr(tail);
                Ty::inst("List")
            }
            ExprKind::Dict(pairs) => {
                let mut ks = Vec::new();
                let mut vs = Vec::new();
                for (k, v) in pairs {
                    ks.push(self.expr(k));
                    vs.push(self.expr(v));
                }
                if pairs.is_empty() {
                    Ty::inst("Dictionary")
                } else {
                    Ty::Inst("Dictionary".into(), vec![Ty::union(ks), Ty::union(vs)])
                }
            }
            ExprKind::TupleLit(items) => {
                // E0102 is reported by the parser.
                for i in items {
                    self.expr(i);
                }
                Ty::Dynamic
            }
            ExprKind::Match {
                receiver,
                exhaustive,
                arms,
            } => self.walk_match(e, receiver, *exhaustive, arms),
            ExprKind::Return(x) => {
                self.expr(x);
                Ty::Never
            }
            ExprKind::Error => Ty::Dynamic,
        }
    }

    fn var_read(&mut self, name: &str, span: Span) -> Ty {
        if let Some(idx) = self.scopes.lookup(name) {
            self.scopes.mark_read(idx);
            return self.scopes.vars[idx].ty.clone();
        }
        let first = name.chars().next().unwrap_or('_');
        if first.is_ascii_uppercase() {
            if self.table.is_class(name) {
                self.check_internal_class(name, span);
                return Ty::Meta(name.to_string());
            }
            if name == "Transcript" {
                return Ty::inst("TranscriptStream");
            }
            if self.table.protocols.contains_key(name) {
                return Ty::inst("Protocol");
            }
            if name.contains('@') || self.is_library() {
                return Ty::Dynamic;
            }
            let mut d = Diagnostic::warning(
                "W0202",
                "dnu",
                format!("`{name}` does not name a class"),
                span,
            )
            .with_label("unknown class name");
            let suggestion = did_you_mean(name, self.table.class_names().map(String::as_str));
            let hint = match (habit(name), suggestion) {
                (Some(h), _) => format!("in bt: {h}"),
                (None, Some(s)) => format!(
                    "did you mean `{s}`? (the name is looked up again when the statement runs)"
                ),
                (None, None) => "the name is looked up when the statement runs; if it still names no class then, it raises class_not_found".to_string(),
            };
            d = d.with_hint(hint);
            self.push(d);
            return Ty::Dynamic;
        }
        if name == "_" || name.contains('@') {
            return Ty::Dynamic;
        }
        let mut d = Diagnostic::error("E0201", format!("Undefined variable: {name}"), span)
            .with_label("not assigned before this point");
        let visible: Vec<String> = self
            .scopes
            .stack
            .iter()
            .flat_map(|s| s.names.keys().cloned())
            .collect();
        if self.assigning.iter().any(|n| n == name) {
            d = d.with_hint(format!(
                "`{name}` is assigned by this statement, after its value is computed; assign it first (`{name} := nil`) so the block can refer to it"
            ));
        } else if self.dead_block_locals.contains(name) {
            d = d.with_hint(format!(
                "`{name}` is assigned only inside a block, so it is local to that block; assign it before the block to share it"
            ));
        } else if let Some(s) = did_you_mean(name, visible.iter().map(String::as_str)) {
            d = d.with_hint(format!("did you mean `{s}`?"));
        } else {
            d = d.with_hint(format!("assign `{name}` before reading it"));
        }
        self.push(d);
        Ty::Dynamic
    }

    fn field_type(&self, name: &str) -> Ty {
        let Some(cls) = &self.ctx.class else {
            return Ty::Dynamic;
        };
        for info in self.table.chain(cls) {
            let slots = if self.ctx.class_side {
                &info.class_vars
            } else {
                &info.slots
            };
            if let Some(s) = slots.iter().find(|s| s.name == name) {
                return s.ty.clone().unwrap_or(Ty::Dynamic);
            }
        }
        Ty::Dynamic
    }

    fn assign(&mut self, name: &ast::Ident, ty: Option<&ast::TypeExpr>, value: &Expr) -> Ty {
        let existing = self.scopes.lookup(&name.name);
        let report_unused = !self.scopes.at_top_level() && !self.is_library() && name.name != "_";
        let tps = self.class_type_params();
        let declared = ty.map(|t| self.table.resolve(t, &tps));
        self.assigning.push(name.name.to_string());
        let vt = self.expr(value);
        self.assigning.pop();
        let remote = self.is_remote_expr(value);
        let declared =
            declared.or_else(|| existing.and_then(|i| self.scopes.vars[i].declared.clone()));
        if let Some(d) = &declared {
            self.check_assignable(&vt, d, value, &format!("`{}`", name.name));
        }
        let new_ty = declared.clone().unwrap_or_else(|| vt.clone());
        match existing {
            Some(idx) => {
                if declared.is_some() && self.scopes.vars[idx].declared.is_none() {
                    self.scopes.vars[idx].declared = declared;
                }
                self.scopes.set(idx, new_ty, remote);
            }
            None => {
                self.scopes.declare(
                    Var {
                        name: name.name.to_string(),
                        ty: new_ty,
                        declared,
                        read: false,
                        span: name.span,
                        report_unused,
                        remote,
                    },
                    true,
                );
            }
        }
        vt
    }

    /// W0102 when a value's type conflicts with a declared type.
    pub(crate) fn check_assignable(&mut self, vt: &Ty, declared: &Ty, value: &Expr, what: &str) {
        if self.is_library() || may_conform(vt, declared, self.table) {
            return;
        }
        self.push(
            Diagnostic::warning(
                "W0102",
                "type",
                format!(
                    "{what} is declared {declared}, but is assigned {}",
                    self.shown_type(vt, value)
                ),
                value.span,
            )
            .with_label(format!("this is {}", vt.widened()))
            .with_hint(format!(
                "assign {}, or change the declared type",
                a_an(&declared.to_string())
            )),
        );
    }

    /// `U` or `U (literal TEXT)` as used in type messages.
    pub(crate) fn shown_type(&self, t: &Ty, e: &Expr) -> String {
        if is_literal(e) {
            format!("{} (literal {})", t.widened(), self.text(e.span).trim())
        } else {
            t.to_string()
        }
    }

    fn field_assign(&mut self, name: &ast::Ident, value: &Expr) -> Ty {
        let vt = self.expr(value);
        let Some(cls) = self.ctx.class.clone() else {
            return vt;
        };
        if !self.ctx.class_side
            && self.table.kind_of(&cls) == Some(Kind::Value)
            && self.table.inherits(&cls, "TestCase") != Some(true)
            && !self.is_library()
        {
            let mut setter = String::from("with");
            let mut chars = name.name.chars();
            if let Some(f) = chars.next() {
                setter.extend(f.to_uppercase());
                setter.push_str(chars.as_str());
            }
            self.push(
                Diagnostic::error(
                    "E0302",
                    format!(
                        "Cannot assign to field '{}' of Value class {cls}",
                        name.name
                    ),
                    name.span,
                )
                .with_label("Value instances are immutable")
                .with_hint(format!(
                    "use `self {setter}: v`, which answers an updated copy"
                )),
            );
            return vt;
        }
        let ft = self.field_type(&name.name);
        if !ft.is_dynamic() {
            self.check_assignable(&vt, &ft, value, &format!("`self.{}`", name.name));
        }
        vt
    }

    fn bind_destructure(&mut self, p: &ast::Pattern) {
        let report = !self.scopes.at_top_level() && !self.is_library();
        let mut names = Vec::new();
        pattern_vars(p, &mut names);
        let mut seen = HashSet::new();
        for id in names {
            if id.name == "_" || !seen.insert(id.name.clone()) {
                continue;
            }
            match self.scopes.lookup(&id.name) {
                Some(idx) => self.scopes.set(idx, Ty::Dynamic, false),
                None => {
                    self.scopes.declare(
                        Var {
                            name: id.name.to_string(),
                            ty: Ty::Dynamic,
                            declared: None,
                            read: false,
                            span: id.span,
                            report_unused: report,
                            remote: false,
                        },
                        true,
                    );
                }
            }
        }
    }

    fn cascade(&mut self, receiver: &Expr, parts: &[ast::CascadePart]) -> Ty {
        // The first part's receiver is the cascade receiver's receiver when it is a send.
        let rt = self.expr(receiver);
        let mut last = rt.clone();
        for p in parts {
            let arg_tys: Vec<Ty> = p.args.iter().map(|a| self.expr(a)).collect();
            last = self.check_send(&SendSite {
                recv: receiver,
                recv_ty: rt.clone(),
                selector: &p.selector,
                sel_span: p.selector_span,
                args: &p.args,
                arg_tys,
                span: p.span,
            });
        }
        last
    }

    // ---- blocks ---------------------------------------------------------------------------

    /// A non-inlined block literal: its own activation. Outer variables it assigns lose their
    /// precise type (the block may run at any time after it is created).
    pub fn closure(&mut self, b: &Block, param_tys: &[(Ty, bool)], _remote: bool) {
        self.forget_assigned(&b.body);
        // Captured variables assigned more than once may hold another value when the block
        // runs: inside the block they are Dynamic (restored afterwards).
        let mut reads = Vec::new();
        for st in &b.body {
            if let StmtKind::Expr(x) | StmtKind::Cast(x) = &st.kind {
                read_names(x, &mut reads);
            }
        }
        let mut restore: Vec<(usize, Ty)> = Vec::new();
        for (name, _) in reads {
            if !self.multi_assigned.contains(&name) {
                continue;
            }
            if let Some(idx) = self.scopes.lookup(&name) {
                let v = &mut self.scopes.vars[idx];
                if v.declared.is_none() && !restore.iter().any(|(i, _)| *i == idx) {
                    restore.push((idx, std::mem::replace(&mut v.ty, Ty::Dynamic)));
                }
            }
        }
        self.closure_body(b, param_tys);
        for (idx, ty) in restore {
            self.scopes.vars[idx].ty = ty;
        }
    }

    fn closure_body(&mut self, b: &Block, param_tys: &[(Ty, bool)]) {
        self.scopes.push(ScopeKind::Block);
        for (i, p) in b.params.iter().enumerate() {
            let (ty, remote) = param_tys.get(i).cloned().unwrap_or((Ty::Dynamic, false));
            let mut v = param_var(&p.name, ty);
            v.remote = remote;
            self.scopes.declare(v, false);
        }
        self.stmts(&b.body);
        self.end_activation();
    }

    /// A literal block of a control-flow selector: parameters are its own, assignments belong
    /// to the enclosing activation.
    pub fn inline_block(&mut self, b: &Block, param_tys: &[Ty]) -> Ty {
        self.scopes.push(ScopeKind::Inline);
        for (i, p) in b.params.iter().enumerate() {
            let ty = param_tys.get(i).cloned().unwrap_or(Ty::Dynamic);
            self.scopes.declare(param_var(&p.name, ty), false);
        }
        let t = if b.body.is_empty() {
            Ty::Nil
        } else {
            self.stmts(&b.body)
        };
        self.scopes.pop();
        t
    }

    /// Before a loop body or a closure: outer variables assigned inside become `Dynamic`.
    /// E0501 when user code names an internal class of the built-in library.
    pub(crate) fn check_internal_class(&mut self, name: &str, span: Span) {
        if self.is_library() {
            return;
        }
        if let Some(info) = self.table.get(name) {
            if info.internal && info.origin.is_library() {
                self.push(
                    Diagnostic::error(
                        "E0501",
                        format!("Class {name} is internal to its package"),
                        span,
                    )
                    .with_label("internal class")
                    .with_hint("internal classes are visible only inside their own package"),
                );
            }
        }
    }

    pub fn forget_assigned(&mut self, body: &[Stmt]) {
        let mut names = Vec::new();
        for s in body {
            if let StmtKind::Expr(e) | StmtKind::Cast(e) = &s.kind {
                assigned_names(e, &mut names);
            }
        }
        for n in names {
            if let Some(idx) = self.scopes.lookup(&n) {
                let declared = self.scopes.vars[idx].declared.clone();
                self.scopes.set(idx, declared.unwrap_or(Ty::Dynamic), false);
            }
        }
    }
}

pub(super) fn param_var(name: &ast::Ident, ty: Ty) -> Var {
    Var {
        name: name.name.to_string(),
        ty,
        declared: None,
        read: false,
        span: name.span,
        report_unused: false,
        remote: false,
    }
}

pub(super) fn item_span(item: &ast::Item) -> Span {
    match item {
        ast::Item::Class(c) => c.span,
        ast::Item::Method(m) => m.method.span,
        ast::Item::Protocol(p) => p.span,
        ast::Item::TypeAlias(a) => a.span,
        ast::Item::Stmt(s) => s.span,
    }
}
