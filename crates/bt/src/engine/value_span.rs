//! Where a converted value was written: maps the path of a failed conversion
//! (`CodecError::steps`, `.server.port`) back to the source of the evaluation that made the
//! value (`Engine::eval_named_as`), so a config error points at the offending literal.
//!
//! The answer of an evaluation is its last statement. From there each step follows a
//! literal: a Dictionary literal's entry under a Symbol, String or Integer key, a List or
//! Array literal's element; a variable answered (or stepped through) is followed to its last
//! top-level assignment before that statement. Where the value was computed (a send, a
//! class's method) the path stops: the span is that of the expression that made it, the
//! nearest place the source says anything about the value.

use crate::base::span::Span;
use crate::codec::PathStep;
use crate::syntax::ast::{Expr, ExprKind, Item, StmtKind};

/// The span of the value at `steps` in the answer of `source`, or None when the source has
/// no statement (or does not parse: its error came first).
pub(crate) fn value_span(source: &str, steps: &[PathStep]) -> Option<Span> {
    let (module, diags) = crate::syntax::parse(source);
    if diags
        .iter()
        .any(|d| d.severity == crate::diagnostic::Severity::Error)
    {
        return None;
    }
    let stmts: Vec<&Expr> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Stmt(s) => match &s.kind {
                StmtKind::Expr(e) | StmtKind::Cast(e) => Some(e),
                StmtKind::Expect(_) => None,
            },
            _ => None,
        })
        .collect();
    let (last, before) = stmts.split_last()?;
    let mut e = resolve(last, before);
    for step in steps {
        match child(e, step) {
            Some(c) => e = resolve(c, before),
            None => break,
        }
    }
    Some(e.span)
}

/// `e` itself, or for a variable, the value of its last top-level assignment in `before`;
/// for an assignment, its value.
fn resolve<'a>(mut e: &'a Expr, before: &[&'a Expr]) -> &'a Expr {
    for _ in 0..16 {
        match &e.kind {
            ExprKind::Assign { value, .. } => e = value,
            ExprKind::Var(n) => {
                let found = before.iter().rev().find_map(|s| match &s.kind {
                    ExprKind::Assign { name, value, .. } if name.name == *n => Some(&**value),
                    _ => None,
                });
                match found {
                    Some(v) => e = v,
                    None => return e,
                }
            }
            _ => return e,
        }
    }
    e
}

/// The literal part of `e` at `step`.
fn child<'a>(e: &'a Expr, step: &PathStep) -> Option<&'a Expr> {
    match (&e.kind, step) {
        (ExprKind::Dict(entries), _) => entries
            .iter()
            .find(|(k, _)| key_matches(k, step))
            .map(|(_, v)| v),
        (ExprKind::List(items) | ExprKind::Array(items), PathStep::Index(i)) => {
            items.get(i.checked_sub(1)?)
        }
        _ => None,
    }
}

fn key_matches(k: &Expr, step: &PathStep) -> bool {
    match (&k.kind, step) {
        (ExprKind::Symbol(s) | ExprKind::Str(s), PathStep::Name(n)) => s.as_str() == n,
        (ExprKind::Int(i), PathStep::Int(n)) => i == n,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, steps: &[PathStep]) -> String {
        let s = value_span(src, steps).unwrap();
        src[s.start as usize..s.end as usize].to_string()
    }

    #[test]
    fn steps_follow_literals_and_variables() {
        let name = |n: &str| PathStep::Name(n.to_string());
        let src = "x := #{#a => #(1, \"two\"), \"b\" => #{3 => nil}}.\nx";
        assert_eq!(at(src, &[name("a"), PathStep::Index(2)]), "\"two\"");
        assert_eq!(at(src, &[name("b"), PathStep::Int(3)]), "nil");
        // A step the literal does not have: the nearest enclosing value.
        assert_eq!(at(src, &[name("zz")]).chars().next(), Some('#'));
        assert_eq!(at("#{#a => 3 + 4}", &[name("a")]), "3 + 4");
        assert_eq!(value_span("Object subclass: A", &[]), None);
    }
}
