//! Flow facts over variables: narrowing and the known-remote fact (methods of the walker;
//! the purely syntactic questions are in `syntactic.rs`).

use super::infer::{Facts, Walker, REMOTE_FLOW, REMOTE_SOURCES};
use super::syntactic::block_single_expr;
use super::types::Ty;
use crate::syntax::ast::{Expr, ExprKind};

impl<'a> Walker<'a> {
    // ---- narrowing ------------------------------------------------------------------------

    /// The narrowings a condition establishes.
    pub fn facts(&self, cond: &Expr) -> Facts {
        let mut f = Facts::default();
        let ExprKind::Send {
            receiver,
            selector,
            args,
            ..
        } = &cond.kind
        else {
            return f;
        };
        let var_of = |e: &Expr| -> Option<(usize, Ty)> {
            if let ExprKind::Var(n) = &e.kind {
                let idx = self.scopes.lookup(n)?;
                Some((idx, self.scopes.vars[idx].ty.clone()))
            } else {
                None
            }
        };
        match (selector.as_str(), args.as_slice()) {
            ("isNil", []) | ("notNil", []) => {
                if let Some((idx, t)) = var_of(receiver) {
                    let (yes, no) = (Ty::Nil, t.without_nil());
                    if selector == "isNil" {
                        f.when_true.push((idx, yes));
                        f.when_false.push((idx, no));
                    } else {
                        f.when_true.push((idx, no));
                        f.when_false.push((idx, yes));
                    }
                }
            }
            ("isKindOf:", [cls]) => {
                if let (Some((idx, _)), ExprKind::Var(c)) = (var_of(receiver), &cls.kind) {
                    if self.table.is_class(c) {
                        f.when_true.push((idx, Ty::inst(c)));
                    }
                }
            }
            ("=:=" | "==" | "=/=" | "/=", [rhs]) => {
                let negate = selector == "=/=" || selector == "/=";
                let mut yes = Vec::new();
                let mut no = Vec::new();
                if let ExprKind::Send {
                    receiver: inner,
                    selector: s2,
                    args: a2,
                    ..
                } = &receiver.kind
                {
                    if s2 == "class" && a2.is_empty() {
                        if let (Some((idx, _)), ExprKind::Var(c)) = (var_of(inner), &rhs.kind) {
                            if self.table.is_class(c) {
                                yes.push((idx, Ty::inst(c)));
                            }
                        }
                    }
                }
                if let Some((idx, t)) = var_of(receiver) {
                    match &rhs.kind {
                        ExprKind::Symbol(s) => {
                            yes.push((idx, Ty::Sym(s.to_string())));
                            if let Ty::Union(ms) = &t {
                                let sym = Ty::Sym(s.to_string());
                                no.push((
                                    idx,
                                    Ty::union(ms.iter().filter(|m| **m != sym).cloned().collect()),
                                ));
                            }
                        }
                        ExprKind::Nil => {
                            yes.push((idx, Ty::Nil));
                            no.push((idx, t.without_nil()));
                        }
                        _ => {}
                    }
                }
                if negate {
                    f.when_true = no;
                    f.when_false = yes;
                } else {
                    f.when_true = yes;
                    f.when_false = no;
                }
            }
            ("not", []) => {
                let inner = self.facts(receiver);
                f.when_true = inner.when_false;
                f.when_false = inner.when_true;
            }
            ("and:", [b]) => {
                let left = self.facts(receiver);
                f.when_true = left.when_true;
                if let Some(last) = block_single_expr(b) {
                    f.when_true.extend(self.facts(last).when_true);
                }
            }
            ("or:", [b]) => {
                let left = self.facts(receiver);
                f.when_false = left.when_false;
                if let Some(last) = block_single_expr(b) {
                    f.when_false.extend(self.facts(last).when_false);
                }
            }
            _ => {}
        }
        f
    }

    pub fn apply(&mut self, facts: &[(usize, Ty)]) {
        for (idx, t) in facts {
            let remote = self.scopes.vars[*idx].remote;
            if *t != Ty::Never {
                self.scopes.set(*idx, t.clone(), remote);
            }
        }
    }

    // ---- known-remote ---------------------------------------------------------------

    pub fn is_remote_expr(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(n) => self
                .scopes
                .lookup(n)
                .is_some_and(|i| self.scopes.vars[i].remote),
            ExprKind::Assign { value, .. } => self.is_remote_expr(value),
            ExprKind::Send {
                receiver,
                selector,
                args,
                ..
            } => {
                if REMOTE_SOURCES.contains(&selector.as_str()) {
                    return true;
                }
                let parts: Vec<&str> = selector.split_inclusive(':').collect();
                if parts.len() == args.len() {
                    for (p, a) in parts.iter().zip(args) {
                        if *p == "scope:" && matches!(&a.kind, ExprKind::Symbol(s) if s == "global")
                        {
                            return true;
                        }
                    }
                }
                // `unwrap`, `value`, `withTimeout:` (`ifOk:ifError:` passes it to its block
                // parameter instead: sends.rs).
                let flows = selector != "ifOk:ifError:"
                    && REMOTE_FLOW.iter().any(|(_, s)| *s == selector.as_str());
                flows && self.is_remote_expr(receiver)
            }
            _ => false,
        }
    }
}
