//! Superinstructions: monomorphic closures for the commonest Integer shapes, so the hot loop
//! of `[i <= n] whileTrue: [s := s + i. i := i + 1]` runs without re-deciding at every step
//! which operator it computes and where its operands live. Each shape is built from a
//! generic over the operand kinds ([`Rd`]) and the operator ([`Arith`], [`Compare`]); anything
//! else keeps the general closures of `compile`/`operand`. Every fast path falls back to the
//! general code on a non-Integer operand, an overflow or overridden Integer arithmetic.

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{BinOp, IfKind};
use crate::interp::eval::{Ctx, Frame};
use crate::value::{drop_fast, Value};

use super::op::{op, Eff, Op};
use super::operand::{if_branch, non_boolean, Arg, Cond, IntSrc};

/// An Integer operand read without evaluation.
trait Rd: Send + Sync + 'static {
    fn rd(&self, c: &Ctx, f: &Frame) -> Option<i64>;
}

/// A local slot.
struct Loc(usize);
/// A literal.
struct Lit(i64);

impl Rd for Loc {
    #[inline(always)]
    fn rd(&self, c: &Ctx, f: &Frame) -> Option<i64> {
        match c.stack.get(f.base + self.0) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }
}

impl Rd for Lit {
    #[inline(always)]
    fn rd(&self, _: &Ctx, _: &Frame) -> Option<i64> {
        Some(self.0)
    }
}

trait Arith: Send + Sync + 'static {
    fn ar(x: i64, y: i64) -> Option<i64>;
}
trait Compare: Send + Sync + 'static {
    fn cmp(x: i64, y: i64) -> bool;
}

macro_rules! arith {
    ($t:ident, $f:ident) => {
        struct $t;
        impl Arith for $t {
            #[inline(always)]
            fn ar(x: i64, y: i64) -> Option<i64> {
                x.$f(y)
            }
        }
    };
}
arith!(AddOp, checked_add);
arith!(SubOp, checked_sub);
arith!(MulOp, checked_mul);

macro_rules! compare {
    ($t:ident, $op:tt) => {
        struct $t;
        impl Compare for $t {
            #[inline(always)]
            fn cmp(x: i64, y: i64) -> bool {
                x $op y
            }
        }
    };
}
compare!(LtOp, <);
compare!(LeOp, <=);
compare!(GtOp, >);
compare!(GeOp, >=);
compare!(EqOp, ==);
compare!(NeOp, !=);

#[inline(always)]
fn overridden(c: &Ctx) -> bool {
    c.prog.arith_overridden.load(Ordering::Relaxed)
}

/// Whether `s` is an operand kind the shapes handle (a local or a literal).
fn simple(s: &IntSrc) -> bool {
    matches!(s, IntSrc::Local(_) | IntSrc::Lit(_))
}

/// Calls `$k` with the two operands as their concrete [`Rd`] types.
macro_rules! with_operands {
    ($l:expr, $r:expr, |$x:ident, $y:ident| $k:expr) => {
        match ($l, $r) {
            (IntSrc::Local(a), IntSrc::Local(b)) => {
                let ($x, $y) = (Loc(*a), Loc(*b));
                $k
            }
            (IntSrc::Local(a), IntSrc::Lit(b)) => {
                let ($x, $y) = (Loc(*a), Lit(*b));
                $k
            }
            (IntSrc::Lit(a), IntSrc::Local(b)) => {
                let ($x, $y) = (Lit(*a), Loc(*b));
                $k
            }
            (IntSrc::Lit(a), IntSrc::Lit(b)) => {
                let ($x, $y) = (Lit(*a), Lit(*b));
                $k
            }
            _ => unreachable!("checked by simple()"),
        }
    };
}

/// `x := a op b` (op `+ - *`, operands locals or literals) as one monomorphic statement.
/// `Err` hands `slow` back for a shape not covered.
pub(super) fn int_set(d: usize, op: BinOp, l: &IntSrc, r: &IntSrc, slow: Op) -> Result<Eff, Op> {
    if !simple(l) || !simple(r) {
        return Err(slow);
    }
    Ok(match op {
        BinOp::Add => with_operands!(l, r, |x, y| set::<AddOp, _, _>(d, x, y, slow)),
        BinOp::Sub => with_operands!(l, r, |x, y| set::<SubOp, _, _>(d, x, y, slow)),
        BinOp::Mul => with_operands!(l, r, |x, y| set::<MulOp, _, _>(d, x, y, slow)),
        _ => return Err(slow),
    })
}

fn set<A: Arith, X: Rd, Y: Rd>(d: usize, x: X, y: Y, slow: Op) -> Eff {
    Eff::F(Box::new(move |c, f| {
        if let (Some(a), Some(b)) = (x.rd(c, f), y.rd(c, f)) {
            if let (false, Some(z)) = (overridden(c), A::ar(a, b)) {
                let slot = &mut c.stack[f.base + d];
                if let Value::Int(old) = slot {
                    *old = z;
                } else {
                    drop_fast(std::mem::replace(slot, Value::Int(z)));
                }
                return Ok(());
            }
        }
        let v = slow.run(c, f)?;
        drop_fast(std::mem::replace(&mut c.stack[f.base + d], v));
        Ok(())
    }))
}

/// `self.x` on an instance whose class has the field `x` at the index (an Integer field).
struct SelfField(usize, crate::value::Sym);

impl Rd for SelfField {
    #[inline(always)]
    fn rd(&self, _: &Ctx, f: &Frame) -> Option<i64> {
        match f.recv {
            Value::Object(inst) if inst.class.field_names.get(self.0) == Some(&self.1) => {
                match inst.fields.get(self.0) {
                    Some(Value::Int(i)) => Some(*i),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// `a op b` as a value (op `+ - *`; operands locals, literals or `self.x` fields), one
/// monomorphic closure (`self.total + n` in a Value-class `withTotal:` argument). `Err`
/// hands `slow` back for a shape not covered.
pub(super) fn int_value(op: BinOp, l: &IntSrc, r: &IntSrc, slow: Op) -> Result<Op, Op> {
    macro_rules! by_op {
        ($x:expr, $y:expr) => {
            match op {
                BinOp::Add => Ok(value::<AddOp, _, _>($x, $y, slow)),
                BinOp::Sub => Ok(value::<SubOp, _, _>($x, $y, slow)),
                BinOp::Mul => Ok(value::<MulOp, _, _>($x, $y, slow)),
                _ => Err(slow),
            }
        };
    }
    match (l, r) {
        (IntSrc::SelfField(i, n), IntSrc::Local(b)) => by_op!(SelfField(*i, *n), Loc(*b)),
        (IntSrc::SelfField(i, n), IntSrc::Lit(b)) => by_op!(SelfField(*i, *n), Lit(*b)),
        (IntSrc::Local(a), IntSrc::SelfField(i, n)) => by_op!(Loc(*a), SelfField(*i, *n)),
        (IntSrc::Local(a), IntSrc::Local(b)) => by_op!(Loc(*a), Loc(*b)),
        (IntSrc::Local(a), IntSrc::Lit(b)) => by_op!(Loc(*a), Lit(*b)),
        _ => Err(slow),
    }
}

fn value<A: Arith, X: Rd, Y: Rd>(x: X, y: Y, slow: Op) -> Op {
    op(move |c, f| {
        if let (Some(a), Some(b)) = (x.rd(c, f), y.rd(c, f)) {
            if let (false, Some(z)) = (overridden(c), A::ar(a, b)) {
                return Ok(Value::Int(z));
            }
        }
        slow.run(c, f)
    })
}

/// The parts of a `whileTrue:`/`whileFalse:` loop the shapes need.
pub(super) struct WhileParts {
    pub(super) while_true: bool,
    pub(super) loc: crate::interp::eval::code::Loc,
    pub(super) body: Eff,
}

/// A `[a cmp b] whileTrue: [...]` loop (operands locals or literals) whose condition is one
/// monomorphic comparison. `Err` hands the parts back for a condition not covered.
pub(super) fn int_while(cond: Cond, w: WhileParts) -> Result<Op, (Cond, WhileParts)> {
    let (op, l, r) = match &cond {
        Cond::IntCmp(op, l, r, _) if simple(l) && simple(r) => (*op, l, r),
        _ => return Err((cond, w)),
    };
    let made = match op {
        BinOp::Lt => with_operands!(l, r, |x, y| looping::<LtOp, _, _>(x, y)),
        BinOp::Le => with_operands!(l, r, |x, y| looping::<LeOp, _, _>(x, y)),
        BinOp::Gt => with_operands!(l, r, |x, y| looping::<GtOp, _, _>(x, y)),
        BinOp::Ge => with_operands!(l, r, |x, y| looping::<GeOp, _, _>(x, y)),
        BinOp::Eq | BinOp::StrictEq => with_operands!(l, r, |x, y| looping::<EqOp, _, _>(x, y)),
        BinOp::Ne | BinOp::StrictNe => with_operands!(l, r, |x, y| looping::<NeOp, _, _>(x, y)),
        _ => return Err((cond, w)),
    };
    Ok(made(cond, w))
}

/// A loop builder for one comparison shape.
type MakeLoop = Box<dyn FnOnce(Cond, WhileParts) -> Op>;

fn looping<C: Compare, X: Rd, Y: Rd>(x: X, y: Y) -> MakeLoop {
    Box::new(move |cond, w| {
        let WhileParts {
            while_true,
            loc,
            body,
        } = w;
        op(move |c, f| loop {
            let t = match (x.rd(c, f), y.rd(c, f)) {
                (Some(a), Some(b)) if !overridden(c) => C::cmp(a, b),
                // The general condition (a send, or `doesNotUnderstand` for a non-Boolean).
                _ => cond.loop_truth(c, f, while_true, loc)?,
            };
            if t != while_true {
                return Ok(Value::Nil);
            }
            body.run(c, f)?;
            c.tick()?;
        })
    })
}

/// The parts of an inlined `ifTrue:`/`ifFalse:`/`and:`/`or:` expression the shapes need.
pub(super) struct IfParts {
    pub(super) kind: IfKind,
    pub(super) sel: crate::value::Sym,
    pub(super) loc: crate::interp::eval::code::Loc,
    pub(super) a: Arg,
    pub(super) b: Arg,
}

/// `a cmp b ifTrue: [...] ifFalse: [...]` (operands locals or literals, e.g. `n < 2` in a
/// recursive method) with a monomorphic comparison. `Err` hands the parts back.
// Runs once per site at compile time; the parts go back by value to be compiled as usual.
#[allow(clippy::result_large_err)]
pub(super) fn int_if(cond: Cond, p: IfParts) -> Result<Op, (Cond, IfParts)> {
    let (op, l, r) = match &cond {
        Cond::IntCmp(op, l, r, _) if simple(l) && simple(r) => (*op, l, r),
        _ => return Err((cond, p)),
    };
    let made = match op {
        BinOp::Lt => with_operands!(l, r, |x, y| branching::<LtOp, _, _>(x, y)),
        BinOp::Le => with_operands!(l, r, |x, y| branching::<LeOp, _, _>(x, y)),
        BinOp::Gt => with_operands!(l, r, |x, y| branching::<GtOp, _, _>(x, y)),
        BinOp::Ge => with_operands!(l, r, |x, y| branching::<GeOp, _, _>(x, y)),
        BinOp::Eq | BinOp::StrictEq => with_operands!(l, r, |x, y| branching::<EqOp, _, _>(x, y)),
        BinOp::Ne | BinOp::StrictNe => with_operands!(l, r, |x, y| branching::<NeOp, _, _>(x, y)),
        _ => return Err((cond, p)),
    };
    Ok(made(cond, p))
}

/// A branch builder for one comparison shape.
type MakeIf = Box<dyn FnOnce(Cond, IfParts) -> Op>;

fn branching<C: Compare, X: Rd, Y: Rd>(x: X, y: Y) -> MakeIf {
    Box::new(move |cond, p| {
        let IfParts {
            kind,
            sel,
            loc,
            a,
            b,
        } = p;
        if kind == IfKind::IfTrueIfFalse {
            // The commonest form (`n < 2 ifTrue: [n] ifFalse: [...]`) without the dispatch on
            // the kind.
            return op(move |c, f| {
                let t = match (x.rd(c, f), y.rd(c, f)) {
                    (Some(u), Some(v)) if !overridden(c) => C::cmp(u, v),
                    _ => match cond.eval(c, f)? {
                        Ok(t) => t,
                        Err(r) => return non_boolean(c, &r, sel, loc),
                    },
                };
                if t {
                    a.run(c, f)
                } else {
                    b.run(c, f)
                }
            });
        }
        op(move |c, f| {
            let t = match (x.rd(c, f), y.rd(c, f)) {
                (Some(u), Some(v)) if !overridden(c) => C::cmp(u, v),
                _ => match cond.eval(c, f)? {
                    Ok(t) => t,
                    Err(r) => return non_boolean(c, &r, sel, loc),
                },
            };
            if_branch(c, f, kind, t, &a, &b)
        })
    })
}
