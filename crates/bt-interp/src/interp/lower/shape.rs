//! Syntactic helpers of the lowering: a statement list as one node, type tests, stripping a
//! tail `^`, and the questions asked of an expression before it is lowered (does it assign
//! a variable or a field, does it send anything).

use super::*;

/// A statement list as one node (a single statement stands alone).
pub(super) fn seq(mut body: Vec<Node>) -> Node {
    match body.len() {
        0 => Node::Nil,
        1 => body.pop().unwrap_or_default(),
        _ => Node::Seq(body),
    }
}

pub(super) fn type_test(t: &ast::TypeExpr) -> TypeTest {
    use ast::TypeKind as K;
    match &t.kind {
        K::Named { name, .. } => match name.as_str() {
            "Nil" => TypeTest::Nil,
            "Object" | "Dynamic" | "Any" | "ProtoObject" => TypeTest::Any,
            n => TypeTest::Class(Sym::new(n)),
        },
        K::Nil => TypeTest::Nil,
        K::True => TypeTest::Class(Sym::new("True")),
        K::False => TypeTest::Class(Sym::new("False")),
        K::Union(ts) => TypeTest::Union(ts.iter().map(type_test).collect()),
        K::Meta(_) => TypeTest::Class(Sym::new("Class")),
        _ => TypeTest::Any,
    }
}

/// Turns a `^ e` in tail position of a method body into plain `e`.
pub(super) fn strip_tail_return(n: &mut Node) {
    match n {
        Node::Return(_) => {
            if let Node::Return(e) = std::mem::take(n) {
                *n = *e;
                strip_tail_return(n);
            }
        }
        Node::Seq(v) => {
            if let Some(last) = v.last_mut() {
                strip_tail_return(last);
            }
        }
        Node::If(i) if i.kind == IfKind::IfTrueIfFalse => {
            strip_tail_return(&mut i.a);
            strip_tail_return(&mut i.b);
        }
        Node::Match(m) => {
            for a in &mut m.arms {
                strip_tail_return(&mut a.body);
            }
        }
        _ => {}
    }
}

/// Does evaluating `e` possibly assign a variable (outside nested real blocks, whose captured
/// variables are never stack slots)?
pub(super) fn expr_assigns(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Assign { .. } | ExprKind::Destructure { .. } | ExprKind::Match { .. } => true,
        ExprKind::Block(_) => false,
        ExprKind::Send { receiver, args, .. } => {
            // Inlined control-flow blocks run in this activation.
            expr_assigns(receiver)
                || args.iter().any(|a| match &a.kind {
                    ExprKind::Block(b) => b.body.iter().any(|s| match &s.kind {
                        StmtKind::Expr(x) | StmtKind::Cast(x) => expr_assigns(x),
                        StmtKind::Expect(_) => false,
                    }),
                    _ => expr_assigns(a),
                })
        }
        ExprKind::Cascade { receiver, parts } => {
            expr_assigns(receiver) || parts.iter().any(|p| p.args.iter().any(expr_assigns))
        }
        ExprKind::FieldAssign { value, .. } | ExprKind::Return(value) => expr_assigns(value),
        ExprKind::List(v) | ExprKind::Array(v) | ExprKind::TupleLit(v) => {
            v.iter().any(expr_assigns)
        }
        ExprKind::Dict(v) => v.iter().any(|(k, x)| expr_assigns(k) || expr_assigns(x)),
        ExprKind::ListCons { head, tail } => expr_assigns(head) || expr_assigns(tail),
        ExprKind::Interp(parts) => parts
            .iter()
            .any(|p| matches!(p, ast::InterpPart::Expr(x) if expr_assigns(x))),
        _ => false,
    }
}

pub(super) fn stmt_has_field_assign(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Expr(e) | StmtKind::Cast(e) => expr_has_field_assign(e),
        StmtKind::Expect(_) => false,
    }
}

pub(super) fn expr_has_field_assign(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::FieldAssign { .. } => true,
        ExprKind::Assign { value, .. } => expr_has_field_assign(value),
        ExprKind::Destructure { value, .. } => expr_has_field_assign(value),
        ExprKind::Send { receiver, args, .. } => {
            expr_has_field_assign(receiver) || args.iter().any(expr_has_field_assign)
        }
        ExprKind::Cascade { receiver, parts } => {
            expr_has_field_assign(receiver)
                || parts
                    .iter()
                    .any(|p| p.args.iter().any(expr_has_field_assign))
        }
        ExprKind::Block(b) => b.body.iter().any(stmt_has_field_assign),
        ExprKind::List(v) | ExprKind::Array(v) | ExprKind::TupleLit(v) => {
            v.iter().any(expr_has_field_assign)
        }
        ExprKind::Dict(v) => v
            .iter()
            .any(|(k, x)| expr_has_field_assign(k) || expr_has_field_assign(x)),
        ExprKind::Match { receiver, arms, .. } => {
            expr_has_field_assign(receiver)
                || arms.iter().any(|a| {
                    expr_has_field_assign(&a.body)
                        || a.guard.as_ref().is_some_and(expr_has_field_assign)
                })
        }
        ExprKind::Return(x) => expr_has_field_assign(x),
        ExprKind::Interp(parts) => parts
            .iter()
            .any(|p| matches!(p, ast::InterpPart::Expr(x) if expr_has_field_assign(x))),
        ExprKind::ListCons { head, tail } => {
            expr_has_field_assign(head) || expr_has_field_assign(tail)
        }
        _ => false,
    }
}

/// Does evaluating `n` send no message (literals, collection literals of them, blocks)?
pub(super) fn sendless(n: &Node) -> bool {
    match n {
        Node::Nil | Node::Const(_) | Node::Block(_) => true,
        Node::List(v) | Node::Array(v) => v.iter().all(sendless),
        Node::Dict(p) => p.iter().all(|(k, v)| sendless(k) && sendless(v)),
        _ => false,
    }
}

/// Does `e` name the variable `name` anywhere (nested blocks included)? Conservative: a
/// block parameter of that name, a pattern match or a destructuring counts as naming it.
pub(super) fn expr_mentions(e: &Expr, name: &str) -> bool {
    let here = match &e.kind {
        ExprKind::Var(n) => n.as_str() == name,
        ExprKind::Assign { name: n, .. } => n.name.as_str() == name,
        ExprKind::Block(b) => b.params.iter().any(|p| p.name.name.as_str() == name),
        ExprKind::Destructure { .. } | ExprKind::Match { .. } => true,
        _ => false,
    };
    let mut found = here;
    e.each_sub_expr(|x| found = found || expr_mentions(x, name));
    found
}
