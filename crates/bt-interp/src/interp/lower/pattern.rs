//! Lowering `match:` arms and patterns: pattern variables are declared
//! in the arm's own scope; literals become constant values.

use super::*;

impl Lowerer {
    pub(super) fn arm(&mut self, a: &ast::MatchArm) -> Arm {
        self.push_scope();
        let mut seen = Vec::new();
        let pat = self.pattern(&a.pattern, &mut seen, false);
        let guard = a.guard.as_ref().map(|g| match &g.kind {
            ExprKind::Block(b) if b.params.is_empty() => self.inline_block(b).1,
            _ => {
                let recv = self.expr(g);
                Node::Send(Box::new(SendNode {
                    recv,
                    sel: Sym::new("value"),
                    args: vec![],
                    loc: self.loc(g.span),
                    pure_args: false,
                }))
            }
        });
        let body = self.expr(&a.body);
        self.pop_scope();
        Arm { pat, guard, body }
    }

    /// A pattern variable: first occurrence binds (declared per `destructure` rules), later
    /// occurrences in the same pattern compare.
    pub(super) fn pat_var(
        &mut self,
        name: &str,
        seen: &mut Vec<(String, u32)>,
        destructure: bool,
    ) -> (VarRef, bool) {
        if let Some((_, id)) = seen.iter().find(|(n, _)| n == name) {
            return (VarRef::Pending(*id), false);
        }
        let id = if destructure {
            match self.lookup(name) {
                Some(id) => id,
                None => self.declare(name),
            }
        } else {
            self.declare_inner(name)
        };
        seen.push((name.to_string(), id));
        (VarRef::Pending(id), true)
    }

    pub(super) fn opt_var(
        &mut self,
        name: &ast::Ident,
        seen: &mut Vec<(String, u32)>,
        d: bool,
    ) -> Option<(VarRef, bool)> {
        if name.name == "_" {
            None
        } else {
            Some(self.pat_var(&name.name, seen, d))
        }
    }

    pub(super) fn literal_value(&mut self, e: &Expr) -> Value {
        match &e.kind {
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::BigInt(b) => Value::from_bigint((**b).clone()),
            ExprKind::Float(x) => Value::float(*x),
            ExprKind::Str(s) => Value::str(s.clone()),
            ExprKind::Symbol(s) => Value::sym(s),
            ExprKind::Char(c) => Value::ch(*c),
            ExprKind::Nil => Value::Nil,
            ExprKind::True => Value::True,
            ExprKind::False => Value::False,
            ExprKind::Var(n) if is_upper(n) => Value::sym(n),
            _ => {
                self.error(
                    "E0101",
                    "a pattern literal must be a number, string, symbol or character".into(),
                    e.span,
                );
                Value::Nil
            }
        }
    }

    pub(super) fn pattern(
        &mut self,
        p: &ast::Pattern,
        seen: &mut Vec<(String, u32)>,
        d: bool,
    ) -> Pat {
        match p {
            ast::Pattern::Wildcard(_) | ast::Pattern::Error(_) => Pat::Wild,
            ast::Pattern::Nil(_) => Pat::Nil,
            ast::Pattern::Literal(e) => Pat::Lit(self.literal_value(e)),
            ast::Pattern::Bind(id) => {
                if id.name == "_" {
                    Pat::Wild
                } else {
                    let (r, first) = self.pat_var(&id.name, seen, d);
                    Pat::Bind(r, first)
                }
            }
            ast::Pattern::Typed { name, ty } => {
                let b = self.opt_var(name, seen, d);
                Pat::Typed(b, type_test(ty))
            }
            ast::Pattern::Tuple(ps, _) => {
                Pat::Tuple(ps.iter().map(|x| self.pattern(x, seen, d)).collect())
            }
            ast::Pattern::Array { elems, rest, .. } => {
                let ps = elems.iter().map(|x| self.pattern(x, seen, d)).collect();
                let r = rest.as_ref().map(|r| self.opt_var(r, seen, d));
                Pat::Array(ps, r)
            }
            ast::Pattern::List { elems, rest, .. } => {
                let ps = elems.iter().map(|x| self.pattern(x, seen, d)).collect();
                let r = rest.as_ref().map(|r| self.opt_var(r, seen, d));
                Pat::List(ps, r)
            }
            ast::Pattern::Dict(entries, _) => Pat::Dict(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let kv = self.literal_value(k);
                        (kv, self.pattern(v, seen, d))
                    })
                    .collect(),
            ),
            ast::Pattern::ResultOk(x, _) => Pat::ResultOk(Box::new(self.pattern(x, seen, d))),
            ast::Pattern::ResultError(x, _) => Pat::ResultErr(Box::new(self.pattern(x, seen, d))),
            ast::Pattern::Binary(segs, _) => Pat::Binary(
                segs.iter()
                    .map(|s| {
                        let has =
                            |m: &str| s.modifiers.iter().any(|x| x.split('-').any(|p| p == m));
                        let var = match &s.value {
                            ast::BinSegValue::Bind(id) => self.opt_var(id, seen, d),
                            _ => None,
                        };
                        let kind = if has("binary") {
                            BinSegKind::Rest(var)
                        } else if has("utf8") {
                            BinSegKind::Utf8(var)
                        } else if let ast::BinSegValue::Int(i) = s.value {
                            BinSegKind::Lit(i)
                        } else {
                            BinSegKind::Int(var)
                        };
                        BinSeg {
                            kind,
                            bits: s.size.unwrap_or(8),
                            little: has("little"),
                            signed: has("signed"),
                        }
                    })
                    .collect(),
            ),
        }
    }
}
