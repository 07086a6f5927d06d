//! Choosing, at compile time, the operand form of a node ([`Arg`], [`Cond`], [`LocalAt`]:
//! `operand.rs`) and whether a method body is a guard ([`Guard`]: `guard.rs`). Those files
//! hold the forms and run them; the choice needs the closure compiler (`compile` for the
//! general expression each form keeps to fall back on), which `compile.rs` hands in as a
//! [`Sub`]: so this file names neither the compiler nor anything above the forms.

use crate::interp::eval::code::{BinOp, IfKind, Loc, Node, VarRef};
use crate::interp::eval::hit::InlineCache;
use crate::value::{Sym, Value};

use super::op::Guard;
use super::op::{op, Op, Sub};
use super::operand::{int_cmp_op, int_src, Arg, Cond, IntSrc, LocalAt};

impl Cond {
    pub(super) fn new(n: Node, sub: Sub) -> Cond {
        let n = match n {
            Node::Send(s)
                if s.pure_args
                    && s.args.len() == 1
                    && s.sel.as_str() == "at:"
                    && matches!(s.recv, Node::Var(VarRef::Local(_))) =>
            {
                let s = *s;
                match LocalAt::new(s.recv, s.sel, s.args, s.loc, sub) {
                    Some(la) => return Cond::LocalAt(Box::new(la)),
                    None => return Cond::Other(Op::default()),
                }
            }
            n => n,
        };
        if let Node::Bin(b) = &n {
            if let (Some(l), Some(r)) = (int_src(&b.lhs), int_src(&b.rhs)) {
                if int_cmp_op(b.op) {
                    let opk = b.op;
                    return Cond::IntCmp(opk, l, r, (sub.expr)(n));
                }
            }
        }
        Cond::Other((sub.expr)(n))
    }
}

impl Arg {
    pub(super) fn new(n: Node, sub: Sub) -> Arg {
        match &n {
            Node::Const(v @ (Value::Int(_) | Value::True | Value::False | Value::Nil)) => {
                return Arg::Const(v.clone())
            }
            Node::Var(VarRef::Local(i)) => return Arg::Local(*i as usize),
            Node::Bin(b) if matches!(b.op, BinOp::Add | BinOp::Sub | BinOp::Mul) => {
                if let (Some(l), Some(r)) = (int_src(&b.lhs), int_src(&b.rhs)) {
                    let opk = b.op;
                    match (opk, &l, &r) {
                        (BinOp::Add, IntSrc::Local(s), IntSrc::Lit(k)) => {
                            return Arg::LocalAdd(*s, *k, (sub.expr)(n));
                        }
                        // `n - k` overflows exactly when `n + (-k)` does.
                        (BinOp::Sub, IntSrc::Local(s), IntSrc::Lit(k)) if *k != i64::MIN => {
                            return Arg::LocalAdd(*s, -*k, (sub.expr)(n));
                        }
                        _ => {}
                    }
                    return Arg::IntBin(opk, l, r, (sub.expr)(n));
                }
            }
            _ => {}
        }
        Arg::Other((sub.expr)(n))
    }
}

/// `a at: k` on a local Array, List or Dictionary: index directly when `at:` is the primitive.
pub(super) fn compile_local_at(
    recv: Node,
    sel: Sym,
    raw_args: Vec<Node>,
    loc: Loc,
    sub: Sub,
) -> Op {
    match LocalAt::new(recv, sel, raw_args, loc, sub) {
        Some(la) => op(move |c, f| la.run(c, f)),
        None => Op::default(),
    }
}

impl LocalAt {
    pub(super) fn new(
        recv: Node,
        sel: Sym,
        mut raw_args: Vec<Node>,
        loc: Loc,
        sub: Sub,
    ) -> Option<LocalAt> {
        let Node::Var(VarRef::Local(i)) = recv else {
            return None;
        };
        let key = raw_args.pop().map(|n| Arg::new(n, sub))?;
        Some(LocalAt {
            slot: i as usize,
            key,
            sel,
            loc,
            ic: InlineCache::default(),
            prim_ic: InlineCache::default(),
        })
    }
}

/// The range `[lo, hi]` (and whether the test is negated) of `x op k`.
fn range(op: BinOp, k: i64) -> Option<(i64, i64, bool)> {
    Some(match op {
        BinOp::Lt => match k.checked_sub(1) {
            Some(h) => (i64::MIN, h, false),
            None => (i64::MIN, i64::MAX, true),
        },
        BinOp::Le => (i64::MIN, k, false),
        BinOp::Gt => match k.checked_add(1) {
            Some(l) => (l, i64::MAX, false),
            None => (i64::MIN, i64::MAX, true),
        },
        BinOp::Ge => (k, i64::MAX, false),
        BinOp::Eq | BinOp::StrictEq => (k, k, false),
        BinOp::Ne | BinOp::StrictNe => (k, k, true),
        _ => return None,
    })
}

impl Guard {
    /// The guard of a method body, or the body back when it has another shape.
    pub(super) fn of(body: Node, sub: Sub) -> Result<Guard, Node> {
        let (op, slot, k) = match &body {
            Node::If(n) if n.kind == IfKind::IfTrueIfFalse => match &n.recv {
                Node::Bin(b) => match (&b.lhs, &b.rhs) {
                    (Node::Var(VarRef::Local(s)), Node::Const(Value::Int(k))) => {
                        (b.op, *s as usize, *k)
                    }
                    _ => return Err(body),
                },
                _ => return Err(body),
            },
            _ => return Err(body),
        };
        let Some((lo, hi, neg)) = range(op, k) else {
            return Err(body);
        };
        let Node::If(n) = body else {
            return Err(body);
        };
        let n = *n;
        Ok(Guard {
            slot,
            lo,
            span: hi.wrapping_sub(lo) as u64,
            neg,
            a: Arg::new(n.a, sub),
            b: Arg::new(n.b, sub),
            cond: Cond::new(n.recv, sub),
            sel: n.sel,
            loc: n.loc,
            on_param: false,
        })
    }
}
