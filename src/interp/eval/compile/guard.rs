//! Guard bodies: a method whose whole body is `local cmp literal ifTrue: [a] ifFalse: [b]`
//! (`fib: n => n < 2 ifTrue: [n] ifFalse: [...]`, the base case of most recursive methods).
//! The activation of a self-send runs such a body inline ([`Guard::run`] from
//! `Ctx::send_cached_compiled`) instead of calling the body's closure; the body's [`Op`] runs
//! the same `Guard::run`, so there is one path. The comparison is a range test on the local
//! (`x < k` is `x` in `[MIN, k - 1]`), decided with no dispatch on the operator.

use super::*;

/// A compiled guard body (see the module doc).
pub struct Guard {
    slot: usize,
    /// `x` passes when `(x - lo) as u64 <= span`, negated when `neg`.
    lo: i64,
    span: u64,
    neg: bool,
    a: Arg,
    b: Arg,
    /// The condition as a general expression (a non-Integer local, overridden arithmetic).
    cond: Cond,
    sel: crate::value::Sym,
    loc: crate::interp::eval::code::Loc,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<guard>")
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
    pub(super) fn of(body: Node) -> Result<Guard, Node> {
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
            a: Arg::new(n.a),
            b: Arg::new(n.b),
            cond: Cond::new(n.recv),
            sel: n.sel,
            loc: n.loc,
        })
    }

    /// Runs the body in the activation `f`.
    #[inline(always)]
    pub(crate) fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        let t = match c.stack.get(f.base + self.slot) {
            Some(Value::Int(x)) if !c.prog.arith_overridden.load(Ordering::Relaxed) => {
                ((x.wrapping_sub(self.lo) as u64) <= self.span) != self.neg
            }
            _ => return self.general(c, f),
        };
        if t {
            self.a.run(c, f)
        } else {
            self.b.run(c, f)
        }
    }

    /// The body with its condition evaluated in general (a send, or `doesNotUnderstand`
    /// for a non-Boolean).
    #[inline(never)]
    fn general(&self, c: &mut Ctx, f: &Frame) -> Flow {
        let t = match self.cond.eval(c, f)? {
            Ok(t) => t,
            Err(r) => return non_boolean(c, &r, self.sel, self.loc),
        };
        if t {
            self.a.run(c, f)
        } else {
            self.b.run(c, f)
        }
    }
}
