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
    /// The tested local is a parameter (set by `compile_body`): a self-send can decide the
    /// guard from the argument it pushed, before the activation ([`Guard::decide`]).
    on_param: bool,
}

/// What a self-send learns from a guard before the callee's activation
/// ([`Guard::decide`]).
pub(crate) enum Decided {
    /// The chosen arm answers a constant or the tested parameter itself: the answer, with no
    /// activation needed (nothing in it can fail, send or look at the frame).
    Leaf(Value),
    /// The chosen arm (`true`: the `ifTrue:` one), to run in the activation without testing
    /// again ([`Guard::run_arm`]).
    Arm(bool),
    /// Not decided here (a non-Integer argument, overridden arithmetic): the activation runs
    /// the whole body.
    General,
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
            on_param: false,
        })
    }

    /// Notes that the method has `nparams` parameters (the first slots).
    pub(super) fn set_params(&mut self, nparams: u32) {
        self.on_param = self.slot < nparams as usize;
    }

    /// The guard decided from the arguments a self-send pushed at `stack[base..]` (the
    /// callee's parameter slots to be). Same test as [`Guard::run`]; nothing between this and
    /// the activation can change Integer arithmetic.
    #[inline(always)]
    pub(crate) fn decide(&self, c: &Ctx, base: usize) -> Decided {
        if !self.on_param {
            return Decided::General;
        }
        let x = match c.stack.get(base + self.slot) {
            Some(Value::Int(x)) if !c.prog.arith_overridden.load(Ordering::Relaxed) => *x,
            _ => return Decided::General,
        };
        let t = ((x.wrapping_sub(self.lo) as u64) <= self.span) != self.neg;
        match if t { &self.a } else { &self.b } {
            Arg::Local(s) if *s == self.slot => Decided::Leaf(Value::Int(x)),
            Arg::Const(v) => Decided::Leaf(fast_clone(v)),
            _ => Decided::Arm(t),
        }
    }

    /// Runs one arm (chosen by [`Guard::decide`]) in the activation `f`.
    #[inline(always)]
    pub(crate) fn run_arm(&self, t: bool, c: &mut Ctx, f: &Frame) -> Flow {
        if t {
            self.a.run(c, f)
        } else {
            self.b.run(c, f)
        }
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
