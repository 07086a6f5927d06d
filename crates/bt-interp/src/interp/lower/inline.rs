//! Lowering message sends, and inlining the control-flow selectors (`ifTrue:`, `whileTrue:`,
//! `to:do:`, `timesRepeat:`, `and:` …) whose arguments are literal blocks.

use super::*;

impl Lowerer {
    pub(super) fn send(
        &mut self,
        receiver: &Expr,
        selector: &str,
        args: &[Expr],
        span: Span,
    ) -> Node {
        let loc = self.loc(span);
        let sel = Sym::new(selector);
        if matches!(receiver.kind, ExprKind::Super) {
            let recv = self.self_node();
            let args = args.iter().map(|a| self.expr(a)).collect();
            return Node::Super(Box::new(SendNode {
                recv,
                sel,
                args,
                loc,
                pure_args: false,
            }));
        }
        if let Some(n) = self.inline(receiver, selector, args, sel, loc) {
            return n;
        }
        if args.len() == 1 {
            if let Some((_, op)) = BINOPS.iter().find(|(s, _)| *s == selector) {
                let lhs = self.expr(receiver);
                let rhs = self.expr(&args[0]);
                return Node::Bin(Box::new(BinNode {
                    op: *op,
                    lhs,
                    rhs,
                    sel,
                    loc,
                }));
            }
        }
        let recv = self.expr(receiver);
        let pure_args = !args.iter().any(expr_assigns);
        let args = args.iter().map(|a| self.expr(a)).collect();
        Node::Send(Box::new(SendNode {
            recv,
            sel,
            args,
            loc,
            pure_args,
        }))
    }

    /// The control-flow selectors with literal block arguments.
    pub(super) fn inline(
        &mut self,
        receiver: &Expr,
        selector: &str,
        args: &[Expr],
        sel: Sym,
        loc: Loc,
    ) -> Option<Node> {
        let z = &[0usize][..];
        let if_node = |this: &mut Self, kind: IfKind| -> Node {
            let recv = this.expr(receiver);
            let a = this.inline_body(&args[0]);
            let b = if args.len() > 1 {
                this.inline_body(&args[1])
            } else {
                Node::Nil
            };
            Node::If(Box::new(IfNode {
                kind,
                recv,
                a,
                b,
                sel,
                loc,
            }))
        };
        match selector {
            "ifTrue:" | "ifFalse:" | "and:" | "or:" if lit_block(&args[0], z).is_some() => {
                let kind = match selector {
                    "ifTrue:" => IfKind::IfTrue,
                    "ifFalse:" => IfKind::IfFalse,
                    "and:" => IfKind::And,
                    _ => IfKind::Or,
                };
                Some(if_node(self, kind))
            }
            "ifTrue:ifFalse:"
                if lit_block(&args[0], z).is_some() && lit_block(&args[1], z).is_some() =>
            {
                Some(if_node(self, IfKind::IfTrueIfFalse))
            }
            "ifNil:" if lit_block(&args[0], z).is_some() => {
                let recv = self.expr(receiver);
                let b = self.inline_body(&args[0]);
                Some(Node::IfNil(Box::new(IfNilNode {
                    recv,
                    if_nil: Some(b),
                    if_not_nil: None,
                })))
            }
            "ifNotNil:" if lit_block(&args[0], &[0, 1]).is_some() => {
                let recv = self.expr(receiver);
                let nn = self.not_nil_branch(&args[0]);
                Some(Node::IfNil(Box::new(IfNilNode {
                    recv,
                    if_nil: None,
                    if_not_nil: Some(nn),
                })))
            }
            "ifNil:ifNotNil:"
                if lit_block(&args[0], z).is_some() && lit_block(&args[1], &[0, 1]).is_some() =>
            {
                let recv = self.expr(receiver);
                let b = self.inline_body(&args[0]);
                let nn = self.not_nil_branch(&args[1]);
                Some(Node::IfNil(Box::new(IfNilNode {
                    recv,
                    if_nil: Some(b),
                    if_not_nil: Some(nn),
                })))
            }
            "ifNotNil:ifNil:"
                if lit_block(&args[0], &[0, 1]).is_some() && lit_block(&args[1], z).is_some() =>
            {
                let recv = self.expr(receiver);
                let nn = self.not_nil_branch(&args[0]);
                let b = self.inline_body(&args[1]);
                Some(Node::IfNil(Box::new(IfNilNode {
                    recv,
                    if_nil: Some(b),
                    if_not_nil: Some(nn),
                })))
            }
            "whileTrue:" | "whileFalse:"
                if lit_block(receiver, z).is_some() && lit_block(&args[0], z).is_some() =>
            {
                let cond = self.inline_body(receiver);
                let body = self.inline_body(&args[0]);
                Some(Node::While(Box::new(WhileNode {
                    cond,
                    body,
                    while_true: selector == "whileTrue:",
                    sel,
                    loc,
                })))
            }
            "whileTrue" | "whileFalse" if lit_block(receiver, z).is_some() => {
                let cond = self.inline_body(receiver);
                Some(Node::While(Box::new(WhileNode {
                    cond,
                    body: Node::Nil,
                    while_true: selector == "whileTrue",
                    sel,
                    loc,
                })))
            }
            "repeat" if lit_block(receiver, z).is_some() => {
                let body = self.inline_body(receiver);
                Some(Node::Repeat(Box::new(body)))
            }
            "timesRepeat:" if lit_block(&args[0], z).is_some() => {
                let count = self.expr(receiver);
                let body = self.inline_body(&args[0]);
                Some(Node::Times(Box::new(TimesNode { count, body, loc })))
            }
            "to:do:" | "to:by:do:" if lit_block(args.last()?, &[0, 1]).is_some() => {
                let from = self.expr(receiver);
                let to = self.expr(&args[0]);
                let by = if args.len() == 3 {
                    Some(self.expr(&args[1]))
                } else {
                    None
                };
                let b = lit_block(args.last()?, &[0, 1])?;
                let (params, body) = self.inline_block(b);
                Some(Node::ToDo(Box::new(ToDoNode {
                    from,
                    to,
                    by,
                    var: params.first().copied(),
                    body,
                    loc,
                })))
            }
            _ => None,
        }
    }

    pub(super) fn not_nil_branch(&mut self, e: &Expr) -> (Option<VarRef>, Node) {
        match &e.kind {
            ExprKind::Block(b) => {
                let (params, body) = self.inline_block(b);
                (params.first().copied(), body)
            }
            _ => (None, self.expr(e)),
        }
    }
}
