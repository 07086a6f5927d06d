//! Flow facts over variables: narrowing, the known-remote fact, and the
//! small syntactic helpers the walker uses (names a body assigns or reads, literals).

use std::collections::HashSet;

use super::infer::{Facts, Walker, REMOTE_FLOW, REMOTE_SOURCES};
use super::types::Ty;
use crate::syntax::ast::{self, Expr, ExprKind, Span, Stmt, StmtKind};

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

/// Names assigned more than once in a statement list (nested blocks included).
pub fn multi_assigned<'s>(stmts: impl IntoIterator<Item = &'s Stmt>) -> HashSet<String> {
    let mut names = Vec::new();
    for s in stmts {
        if let StmtKind::Expr(e) | StmtKind::Cast(e) = &s.kind {
            assigned_names(e, &mut names);
        }
    }
    let mut seen = HashSet::new();
    let mut multi = HashSet::new();
    for n in names {
        if !seen.insert(n.clone()) {
            multi.insert(n);
        }
    }
    multi
}

/// "an Integer", "a String".
pub fn a_an(noun: &str) -> String {
    let vowel = noun
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

/// A literal (for the "(literal TEXT)" suffix).
pub fn is_literal(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Nil
            | ExprKind::True
            | ExprKind::False
            | ExprKind::Int(_)
            | ExprKind::BigInt(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Char(_)
            | ExprKind::Symbol(_)
    )
}

/// The single expression of a one-statement literal block (for `and: [cond]`).
pub fn block_single_expr(e: &Expr) -> Option<&Expr> {
    if let ExprKind::Block(b) = &e.kind {
        if b.params.is_empty() && b.body.len() == 1 {
            if let StmtKind::Expr(x) = &b.body[0].kind {
                return Some(x);
            }
        }
    }
    None
}

/// Names assigned anywhere inside an expression (including nested blocks).
pub fn assigned_names(e: &Expr, out: &mut Vec<String>) {
    let visit_stmts = |stmts: &[Stmt], out: &mut Vec<String>| {
        for s in stmts {
            if let StmtKind::Expr(x) | StmtKind::Cast(x) = &s.kind {
                assigned_names(x, out);
            }
        }
    };
    match &e.kind {
        ExprKind::Assign { name, value, .. } => {
            out.push(name.name.to_string());
            assigned_names(value, out);
        }
        ExprKind::FieldAssign { value, .. } | ExprKind::Return(value) => assigned_names(value, out),
        ExprKind::Destructure { pattern, value } => {
            let mut ids = Vec::new();
            super::patterns::pattern_vars(pattern, &mut ids);
            out.extend(ids.into_iter().map(|i| i.name.to_string()));
            assigned_names(value, out);
        }
        ExprKind::Send { receiver, args, .. } => {
            assigned_names(receiver, out);
            for a in args {
                assigned_names(a, out);
            }
        }
        ExprKind::Cascade { receiver, parts } => {
            assigned_names(receiver, out);
            for p in parts {
                for a in &p.args {
                    assigned_names(a, out);
                }
            }
        }
        ExprKind::Block(b) => visit_stmts(&b.body, out),
        ExprKind::List(xs) | ExprKind::Array(xs) | ExprKind::TupleLit(xs) => {
            for x in xs {
                assigned_names(x, out);
            }
        }
        ExprKind::ListCons { head, tail } => {
            assigned_names(head, out);
            assigned_names(tail, out);
        }
        ExprKind::Dict(pairs) => {
            for (k, v) in pairs {
                assigned_names(k, out);
                assigned_names(v, out);
            }
        }
        ExprKind::Match { receiver, arms, .. } => {
            assigned_names(receiver, out);
            for a in arms {
                if let Some(g) = &a.guard {
                    assigned_names(g, out);
                }
                assigned_names(&a.body, out);
            }
        }
        ExprKind::Interp(parts) => {
            for p in parts {
                if let ast::InterpPart::Expr(x) = p {
                    assigned_names(x, out);
                }
            }
        }
        _ => {}
    }
}

/// Free variable names read inside a block (candidates for captured variables).
pub fn read_names(e: &Expr, out: &mut Vec<(String, Span)>) {
    match &e.kind {
        ExprKind::Var(n) => out.push((n.to_string(), e.span)),
        ExprKind::SelfRef | ExprKind::Field(_) => out.push(("self".into(), e.span)),
        ExprKind::Assign { value, .. }
        | ExprKind::FieldAssign { value, .. }
        | ExprKind::Return(value) => read_names(value, out),
        ExprKind::Destructure { value, .. } => read_names(value, out),
        ExprKind::Send { receiver, args, .. } => {
            read_names(receiver, out);
            for a in args {
                read_names(a, out);
            }
        }
        ExprKind::Cascade { receiver, parts } => {
            read_names(receiver, out);
            for p in parts {
                for a in &p.args {
                    read_names(a, out);
                }
            }
        }
        ExprKind::Block(b) => {
            for s in &b.body {
                if let StmtKind::Expr(x) | StmtKind::Cast(x) = &s.kind {
                    read_names(x, out);
                }
            }
        }
        ExprKind::List(xs) | ExprKind::Array(xs) | ExprKind::TupleLit(xs) => {
            for x in xs {
                read_names(x, out);
            }
        }
        ExprKind::ListCons { head, tail } => {
            read_names(head, out);
            read_names(tail, out);
        }
        ExprKind::Dict(pairs) => {
            for (k, v) in pairs {
                read_names(k, out);
                read_names(v, out);
            }
        }
        ExprKind::Match { receiver, arms, .. } => {
            read_names(receiver, out);
            for a in arms {
                if let Some(g) = &a.guard {
                    read_names(g, out);
                }
                read_names(&a.body, out);
            }
        }
        ExprKind::Interp(parts) => {
            for p in parts {
                if let ast::InterpPart::Expr(x) = p {
                    read_names(x, out);
                }
            }
        }
        _ => {}
    }
}
