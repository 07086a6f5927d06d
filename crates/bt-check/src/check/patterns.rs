//! `match:` and `matchExhaustive:`: arm bindings with their narrowed types,
//! the exhaustiveness proof (E0401) and the missing-variant check for constructor patterns of
//! a sealed type (E0402).

use super::infer::Walker;
use super::scope::{ScopeKind, Var};
use super::syntactic::pattern_vars;
use super::types::{Hierarchy, Ty};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Expr, ExprKind, Ident, MatchArm, Pattern};

/// A pattern that matches every value.
fn irrefutable(p: &Pattern) -> bool {
    match p {
        Pattern::Wildcard(_) | Pattern::Bind(_) | Pattern::Error(_) => true,
        Pattern::Typed { ty, .. } => matches!(
            &ty.kind,
            crate::syntax::ast::TypeKind::Named { name, .. } if name == "Object" || name == "ProtoObject" || name == "Dynamic"
        ),
        _ => false,
    }
}

fn typed_class(p: &Pattern) -> Option<&str> {
    if let Pattern::Typed { ty, .. } = p {
        if let crate::syntax::ast::TypeKind::Named { name, .. } = &ty.kind {
            return Some(name);
        }
        if matches!(ty.kind, crate::syntax::ast::TypeKind::True) {
            return Some("True");
        }
        if matches!(ty.kind, crate::syntax::ast::TypeKind::False) {
            return Some("False");
        }
    }
    None
}

impl<'a> Walker<'a> {
    pub(crate) fn walk_match(
        &mut self,
        e: &Expr,
        receiver: &Expr,
        exhaustive: bool,
        arms: &[MatchArm],
    ) -> Ty {
        let rt = self.expr(receiver);
        let mut results = Vec::new();
        for arm in arms {
            self.scopes.push(ScopeKind::Inline);
            self.bind_pattern(&arm.pattern, &rt);
            if let Some(g) = &arm.guard {
                // An exception raised inside a guard makes the guard false.
                self.protected += 1;
                match &g.kind {
                    ExprKind::Block(b) if b.params.is_empty() => {
                        self.inline_block(b, &[]);
                    }
                    _ => {
                        self.expr(g);
                    }
                }
                self.protected -= 1;
            }
            self.scopes.begin_branch();
            results.push(self.expr(&arm.body));
            self.scopes.end_branch();
            self.scopes.pop();
        }
        let unguarded: Vec<&Pattern> = arms
            .iter()
            .filter(|a| a.guard.is_none())
            .map(|a| &a.pattern)
            .collect();
        let head = self.first_line(e.span);
        if exhaustive {
            if let Some(missing) = self.missing_cases(&unguarded, &rt) {
                self.push(
                    Diagnostic::error(
                        "E0401",
                        format!("matchExhaustive: is not provably exhaustive: {missing}"),
                        head,
                    )
                    .with_label("arms do not cover every value")
                    .with_hint("add the missing arms or a final `_ -> …` arm (both Result variants, `x :: True` with `x :: False`, and `nil` with a type arm also count)"),
                );
            }
        } else {
            let has_ok = arms
                .iter()
                .any(|a| matches!(a.pattern, Pattern::ResultOk(..)));
            let has_err = arms
                .iter()
                .any(|a| matches!(a.pattern, Pattern::ResultError(..)));
            let catch_all = unguarded.iter().any(|p| irrefutable(p));
            if (has_ok != has_err) && !catch_all {
                let missing = if has_ok {
                    "Result error:"
                } else {
                    "Result ok:"
                };
                self.push(
                    Diagnostic::error(
                        "E0402",
                        format!("match: on Result is missing the `{missing}` variant"),
                        head,
                    )
                    .with_label("Result is sealed: ok and error are its only variants")
                    .with_hint(format!("add a `{missing} x -> …` arm, or `_ -> …`")),
                );
            }
        }
        Ty::union(results)
    }

    fn bind_pattern(&mut self, p: &Pattern, rt: &Ty) {
        let tps = self.class_type_params();
        let declare = |w: &mut Walker, id: &Ident, ty: Ty| {
            if id.name == "_"
                || w.scopes
                    .stack
                    .last()
                    .is_some_and(|s| s.names.contains_key(id.name.as_str()))
            {
                return;
            }
            w.scopes.declare(
                Var {
                    name: id.name.to_string(),
                    ty,
                    declared: None,
                    read: false,
                    span: id.span,
                    report_unused: false,
                    remote: false,
                },
                false,
            );
        };
        match p {
            Pattern::Bind(id) => declare(self, id, rt.clone()),
            Pattern::Typed { name, ty } => {
                let t = self.table.resolve(ty, &tps);
                declare(self, name, t);
            }
            Pattern::ResultOk(q, _) | Pattern::ResultError(q, _) => {
                let inner = match rt {
                    Ty::Inst(n, a) if n == "Result" && a.len() == 2 => {
                        if matches!(p, Pattern::ResultOk(..)) {
                            a[0].clone()
                        } else {
                            a[1].clone()
                        }
                    }
                    _ => Ty::Dynamic,
                };
                self.bind_pattern(q, &inner);
            }
            other => {
                let mut ids = Vec::new();
                pattern_vars(other, &mut ids);
                for id in ids {
                    declare(self, &id, Ty::Dynamic);
                }
            }
        }
    }

    /// None when the unguarded arms provably cover the receiver type; otherwise what is missing.
    fn missing_cases(&self, arms: &[&Pattern], rt: &Ty) -> Option<String> {
        if arms.iter().any(|p| irrefutable(p)) {
            return None;
        }
        let has_ok = arms
            .iter()
            .any(|p| matches!(p, Pattern::ResultOk(q, _) if irrefutable(q)));
        let has_err = arms
            .iter()
            .any(|p| matches!(p, Pattern::ResultError(q, _) if irrefutable(q)));
        let classes: Vec<&str> = arms.iter().filter_map(|p| typed_class(p)).collect();
        let covers_class = |c: &str| {
            classes
                .iter()
                .any(|d| *d == c || self.table.inherits(c, d) == Some(true))
                || (c == "Result" && has_ok && has_err)
                || (c == "Boolean" && classes.contains(&"True") && classes.contains(&"False"))
        };
        if rt.is_dynamic() || matches!(rt, Ty::Never | Ty::SelfTy) {
            if has_ok && has_err {
                return None;
            }
            if classes.contains(&"True") && classes.contains(&"False") {
                return None;
            }
            return Some(if rt.is_dynamic() {
                "the receiver's type is not known statically".to_string()
            } else {
                format!("the receiver's type is {rt}")
            });
        }
        let mut missing = Vec::new();
        for m in rt.members() {
            let covered = match m {
                Ty::Sym(s) => {
                    arms.iter().any(|p| matches!(p, Pattern::Literal(Expr { kind: ExprKind::Symbol(x), .. }) if x == s))
                        || covers_class("Symbol")
                }
                Ty::Nil => arms.iter().any(|p| matches!(p, Pattern::Nil(_))) || covers_class("UndefinedObject"),
                Ty::Inst(c, _) => covers_class(c),
                _ => false,
            };
            if !covered {
                missing.push(m.to_string());
            }
        }
        if missing.is_empty() {
            None
        } else {
            Some(format!("no arm covers {}", missing.join(", ")))
        }
    }
}
