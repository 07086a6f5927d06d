//! Syntactic questions about a tree, answered without types, scopes or the class table: the
//! names an expression assigns or reads, the variables a pattern binds, whether an
//! expression is a literal or a one-expression block. The walker (`infer.rs` and the files
//! that extend it) and the top-level checks (`check.rs`) ask them.

use std::collections::HashSet;

use crate::syntax::ast::{Expr, ExprKind, Ident, Pattern, Span, Stmt, StmtKind};

/// Every variable a pattern binds, in order (duplicates kept).
pub(crate) fn pattern_vars(p: &Pattern, out: &mut Vec<Ident>) {
    match p {
        Pattern::Bind(id) => out.push(id.clone()),
        Pattern::Typed { name, .. } => out.push(name.clone()),
        Pattern::Tuple(ps, _) => ps.iter().for_each(|q| pattern_vars(q, out)),
        Pattern::Array { elems, rest, .. } | Pattern::List { elems, rest, .. } => {
            elems.iter().for_each(|q| pattern_vars(q, out));
            if let Some(r) = rest {
                out.push(r.clone());
            }
        }
        Pattern::Dict(pairs, _) => pairs.iter().for_each(|(_, q)| pattern_vars(q, out)),
        Pattern::ResultOk(q, _) | Pattern::ResultError(q, _) => pattern_vars(q, out),
        Pattern::Binary(segs, _) => {
            for s in segs {
                if let crate::syntax::ast::BinSegValue::Bind(id) = &s.value {
                    out.push(id.clone());
                }
            }
        }
        Pattern::Wildcard(_) | Pattern::Literal(_) | Pattern::Nil(_) | Pattern::Error(_) => {}
    }
}

/// Names assigned more than once in a statement list (nested blocks included).
pub(crate) fn multi_assigned<'s>(stmts: impl IntoIterator<Item = &'s Stmt>) -> HashSet<String> {
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

/// A literal (for the "(literal TEXT)" suffix).
pub(crate) fn is_literal(e: &Expr) -> bool {
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
pub(crate) fn block_single_expr(e: &Expr) -> Option<&Expr> {
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
pub(crate) fn assigned_names(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Assign { name, .. } => out.push(name.name.to_string()),
        ExprKind::Destructure { pattern, .. } => {
            let mut ids = Vec::new();
            pattern_vars(pattern, &mut ids);
            out.extend(ids.into_iter().map(|i| i.name.to_string()));
        }
        _ => {}
    }
    e.each_sub_expr(|x| assigned_names(x, out));
}

/// Free variable names read inside a block (candidates for captured variables).
pub(crate) fn read_names(e: &Expr, out: &mut Vec<(String, Span)>) {
    match &e.kind {
        ExprKind::Var(n) => out.push((n.to_string(), e.span)),
        ExprKind::SelfRef | ExprKind::Field(_) => out.push(("self".into(), e.span)),
        _ => {}
    }
    e.each_sub_expr(|x| read_names(x, out));
}
