//! One-argument self-sends (`self fib: n - 1`, `self helper: x`) as a struct run inline by
//! the closure that needs its value, instead of a closure of their own: a binary operator
//! whose operands are such sends (`(self fib: n - 1) + (self fib: n - 2)`) runs both sends
//! and the callee activations inside its one closure, with no dynamic call and no result
//! passed through memory per operand. A self-send that is not an operand is wrapped in an
//! [`Op`] of its own; either way it is the same [`SelfSend::run`] (one path).

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{BinOp, Node, SendNode};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::{drop_fast, Value};

use super::op::{op, Op, Sub};
use super::operand::Arg;

/// The argument of a [`SelfSend`].
enum SelfArg {
    /// `local + k` or `local - k` (as `local + (-k)`): slot, addend, the general expression
    /// for a non-Integer, an overflow or overridden Integer arithmetic.
    LocalAdd(usize, i64, Op),
    Any(Arg),
}

/// `self sel: arg`: the argument, the selector, the call site and its inline cache.
pub(super) struct SelfSend {
    arg: SelfArg,
    sel: crate::value::Sym,
    loc: crate::interp::eval::code::Loc,
    ic: InlineCache,
}

impl SelfSend {
    pub(super) fn new(
        arg: Arg,
        sel: crate::value::Sym,
        loc: crate::interp::eval::code::Loc,
    ) -> SelfSend {
        let arg = match arg {
            Arg::LocalAdd(s, k, slow) => SelfArg::LocalAdd(s, k, slow),
            other => SelfArg::Any(other),
        };
        SelfSend {
            arg,
            sel,
            loc,
            ic: InlineCache::default(),
        }
    }

    /// Evaluates the argument and sends (a compiled method of `self`'s class runs its
    /// activation inline: `Ctx::send_cached_compiled`).
    #[inline(always)]
    pub(super) fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        if let SelfArg::LocalAdd(s, k, _) = &self.arg {
            c.set_loc(self.loc);
            if let Some(r) = c.self_send_add(&self.ic, f.recv, self.sel, f.base + s, *k) {
                return r;
            }
        }
        let v = match &self.arg {
            SelfArg::LocalAdd(s, k, slow) => match c.stack.get(f.base + s) {
                Some(Value::Int(i)) if !c.prog.arith_overridden.load(Ordering::Relaxed) => {
                    match i.checked_add(*k) {
                        Some(z) => Value::Int(z),
                        None => slow.run(c, f)?,
                    }
                }
                _ => slow.run(c, f)?,
            },
            SelfArg::Any(a) => a.run(c, f)?,
        };
        let base = c.stack.len();
        c.stack.push(v);
        c.set_loc(self.loc);
        c.send_cached_compiled(&self.ic, f.recv, self.sel, base)
    }
}

/// An operand of a binary operator: a compiled expression or an inline self-send.
pub(super) trait Operand: Send + Sync + 'static {
    fn ev(&self, c: &mut Ctx, f: &Frame) -> Flow;
}

impl Operand for Op {
    #[inline(always)]
    fn ev(&self, c: &mut Ctx, f: &Frame) -> Flow {
        self.run(c, f)
    }
}

impl Operand for SelfSend {
    #[inline(always)]
    fn ev(&self, c: &mut Ctx, f: &Frame) -> Flow {
        self.run(c, f)
    }
}

/// A one-argument self-send node as a [`SelfSend`]; anything else back as it was.
pub(super) fn self_send_of(n: Node, sub: Sub) -> Result<SelfSend, Node> {
    match n {
        Node::Send(s) if matches!(s.recv, Node::SelfRef) && s.args.len() == 1 => {
            let SendNode { sel, args, loc, .. } = *s;
            let a = args
                .into_iter()
                .next()
                .map(|n| Arg::new(n, sub))
                .unwrap_or(Arg::Const(Value::Nil));
            Ok(SelfSend::new(a, sel, loc))
        }
        other => Err(other),
    }
}

/// `a op b` where neither operand is an Integer local, literal or field: both evaluated
/// (left first), Integer results combined inline, anything else sent. Self-send operands
/// run inline (see the module doc).
pub(super) fn compile_bin(
    lhs: Node,
    rhs: Node,
    opk: BinOp,
    sel: crate::value::Sym,
    loc: Loc,
    sub: Sub,
) -> Op {
    match (self_send_of(lhs, sub), self_send_of(rhs, sub)) {
        (Ok(l), Ok(r)) => bin(l, r, opk, sel, loc),
        (Ok(l), Err(r)) => bin(l, (sub.expr)(r), opk, sel, loc),
        (Err(l), Ok(r)) => bin((sub.expr)(l), r, opk, sel, loc),
        (Err(l), Err(r)) => bin((sub.expr)(l), (sub.expr)(r), opk, sel, loc),
    }
}

type Loc = crate::interp::eval::code::Loc;

fn bin<L: Operand, R: Operand>(l: L, r: R, opk: BinOp, sel: crate::value::Sym, loc: Loc) -> Op {
    op(move |c, f| {
        let lv = l.ev(c, f)?;
        let rv = r.ev(c, f)?;
        if let (Value::Int(x), Value::Int(y)) = (&lv, &rv) {
            let z = if opk == BinOp::Add && !c.prog.arith_overridden.load(Ordering::Relaxed) {
                x.checked_add(*y).map(Value::Int)
            } else {
                c.int_op(opk, *x, *y)
            };
            if let Some(v) = z {
                // Immediates: no drop glue.
                std::mem::forget(lv);
                std::mem::forget(rv);
                return Ok(v);
            }
        }
        c.set_loc(loc);
        let r = c.send_impl(&lv, sel, std::slice::from_ref(&rv));
        drop_fast(lv);
        drop_fast(rv);
        r
    })
}
