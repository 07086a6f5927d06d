//! The checker's walk over declarations: a module's items, classes with their members and
//! `@expect` directives, a method with its parameters in scope and its declared return type
//! (W0102), and the end of an activation (unused variables). Statements and expressions are
//! walked in [`super::infer`].

use super::infer::{item_span, param_var, MethodCtx, Walker};
use super::options::{ExpectSite, CATEGORIES};
use super::scope::{ScopeKind, Var};
use super::syntactic::multi_assigned;
use super::types::{may_conform, Ty};
use super::wording::{a_an, did_you_mean};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{self, ExprKind, Span, Stmt, StmtKind};

impl<'a> Walker<'a> {
    /// Walks a whole module: declarations' bodies and the top-level statements.
    pub(crate) fn walk_module(&mut self, m: &ast::Module, known_bindings: &[String]) {
        self.scopes.push(ScopeKind::TopLevel);
        self.multi_assigned = multi_assigned(m.items.iter().filter_map(|i| match i {
            ast::Item::Stmt(s) => Some(s),
            _ => None,
        }));
        for name in known_bindings {
            self.scopes.declare(
                Var {
                    name: name.clone(),
                    ty: Ty::Dynamic,
                    declared: None,
                    read: true,
                    span: Span::default(),
                    report_unused: false,
                    remote: false,
                },
                true,
            );
        }
        // Item-level @expect: applies to the next item.
        let mut pending: Option<&ast::Expect> = None;
        for item in &m.items {
            let span = item_span(item);
            if let ast::Item::Stmt(Stmt {
                kind: StmtKind::Expect(x),
                ..
            }) = item
            {
                self.expect_directive(x);
                pending = Some(x);
                continue;
            }
            if let Some(x) = pending.take() {
                self.add_expect(x, span);
            }
            match item {
                ast::Item::Class(c) => {
                    super::decls::check_class(self, c);
                    self.walk_class(c);
                }
                ast::Item::Method(sm) => {
                    super::decls::check_standalone(self, sm);
                    self.ctx = MethodCtx {
                        class: Some(sm.class_name.name.to_string()),
                        class_side: sm.class_side,
                        selector: Some(sm.method.selector.to_string()),
                    };
                    self.walk_method(&sm.method);
                    self.ctx = MethodCtx::default();
                }
                ast::Item::Stmt(s) => {
                    self.stmt(s);
                }
                ast::Item::Protocol(_) | ast::Item::TypeAlias(_) => {}
            }
        }
        if let Some(x) = pending {
            self.add_expect(x, Span::new(x.span.end as usize, x.span.end as usize));
        }
        self.scopes.pop();
    }

    /// `@expect cat`: E0505 for an unknown category.
    pub fn expect_directive(&mut self, x: &ast::Expect) {
        if !CATEGORIES.contains(&x.category.name.as_str()) {
            let mut d = Diagnostic::error(
                "E0505",
                format!("Unknown @expect category '{}'", x.category.name),
                x.category.span,
            )
            .with_label("unknown category");
            d = d.with_hint(
                match did_you_mean(&x.category.name, CATEGORIES.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? Categories: {}", CATEGORIES.join(", ")),
                    None => format!("Categories: {}", CATEGORIES.join(", ")),
                },
            );
            self.push(d);
        }
    }

    pub fn add_expect(&mut self, x: &ast::Expect, target: Span) {
        if CATEGORIES.contains(&x.category.name.as_str()) {
            self.expects.push(ExpectSite {
                category: x.category.name.to_string(),
                span: x.span,
                target,
            });
        }
    }

    fn walk_class(&mut self, c: &ast::ClassDecl) {
        let mut pending: Option<&ast::Expect> = None;
        for m in &c.members {
            let span = match m {
                ast::Member::Field(s) | ast::Member::State(s) | ast::Member::ClassState(s) => {
                    s.span
                }
                ast::Member::Method(md) => md.span,
                ast::Member::Expect(x) => {
                    self.expect_directive(x);
                    pending = Some(x);
                    continue;
                }
            };
            if let Some(x) = pending.take() {
                self.add_expect(x, span);
            }
            match m {
                ast::Member::Method(md) => {
                    self.ctx = MethodCtx {
                        class: Some(c.name.name.to_string()),
                        class_side: md.class_side,
                        selector: Some(md.selector.to_string()),
                    };
                    self.walk_method(md);
                }
                ast::Member::Field(s) | ast::Member::State(s) | ast::Member::ClassState(s) => {
                    if let Some(def) = &s.default {
                        self.ctx = MethodCtx {
                            class: Some(c.name.name.to_string()),
                            class_side: matches!(m, ast::Member::ClassState(_)),
                            selector: None,
                        };
                        self.scopes.push(ScopeKind::Method);
                        let t = self.expr(def);
                        self.scopes.pop();
                        if let Some(decl) = &s.ty {
                            let tps: Vec<String> = c
                                .type_params
                                .iter()
                                .map(|p| p.name.name.to_string())
                                .collect();
                            let dt = self.table.resolve(decl, &tps);
                            self.check_assignable(&t, &dt, def, &format!("`{}`", s.name.name));
                        }
                    }
                }
                ast::Member::Expect(_) => {}
            }
        }
        if let Some(x) = pending {
            self.add_expect(x, Span::new(x.span.end as usize, x.span.end as usize));
        }
        self.ctx = MethodCtx::default();
    }

    /// Walks a method body with its parameters in scope.
    pub(crate) fn walk_method(&mut self, md: &ast::MethodDecl) {
        self.scopes.push(ScopeKind::Method);
        let outer_multi =
            std::mem::replace(&mut self.multi_assigned, multi_assigned(md.body.stmts()));
        let tps = self.class_type_params();
        for p in &md.params {
            let ty =
                p.ty.as_ref()
                    .map(|t| self.table.resolve(t, &tps))
                    .unwrap_or(Ty::Dynamic);
            let ty = ty.subst_self(&self.self_type());
            self.scopes.declare(param_var(&p.name, ty), false);
        }
        let t = self.stmts(&md.body);
        if let (Some(ret), false) = (&md.ret, md.body.is_empty()) {
            let declared = self.table.resolve(ret, &tps);
            if !matches!(declared, Ty::SelfTy | Ty::Never | Ty::Dynamic) && !self.is_library() {
                if let Some(last) = md.body.last() {
                    if let StmtKind::Expr(e) = &last.kind {
                        if !matches!(e.kind, ExprKind::Return(_))
                            && !may_conform(&t, &declared, self.table)
                        {
                            self.push(
                                Diagnostic::warning(
                                    "W0102",
                                    "type",
                                    format!(
                                        "'{}' is declared to answer {}, but its last statement answers {}",
                                        md.selector,
                                        declared,
                                        self.shown_type(&t, e)
                                    ),
                                    e.span,
                                )
                                .with_label(format!("this is {}", t.widened()))
                                .with_hint(format!("change the return type, or answer {}", a_an(&declared.to_string()))),
                            );
                        }
                    }
                }
            }
        }
        self.end_activation();
        self.multi_assigned = outer_multi;
    }

    /// Pops the innermost activation and reports its unused locals.
    pub(crate) fn end_activation(&mut self) {
        let kind = self.scopes.stack.last().map(|s| s.kind);
        let vars = self.scopes.pop();
        for idx in vars {
            let v = &self.scopes.vars[idx];
            if kind == Some(ScopeKind::Block) {
                self.dead_block_locals.insert(v.name.clone());
            }
            // A leading `_` marks a deliberately unused name (`{#ok, _val} := r`): no warning.
            if v.report_unused && !v.read && !v.name.starts_with('_') && !self.is_library() {
                let d = Diagnostic::warning(
                    "W0301",
                    "unused",
                    format!("Local variable '{}' is assigned but never read", v.name),
                    v.span,
                )
                .with_label("assigned here, never read")
                .with_hint("remove the assignment, or use the value");
                self.diags.push(d);
            }
        }
    }

    pub fn class_type_params(&self) -> Vec<String> {
        self.ctx
            .class
            .as_ref()
            .and_then(|c| self.table.get(c))
            .map(|c| c.type_params.clone())
            .unwrap_or_default()
    }

    /// The static type of `self`.
    pub(crate) fn self_type(&self) -> Ty {
        match &self.ctx.class {
            Some(c) if self.table.is_class(c) => {
                if self.ctx.class_side {
                    Ty::Meta(c.clone())
                } else {
                    Ty::inst(c)
                }
            }
            _ => Ty::Dynamic,
        }
    }

    // ---- statements -----------------------------------------------------------------------
}
