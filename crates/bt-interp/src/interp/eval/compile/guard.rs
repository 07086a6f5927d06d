//! Guard bodies: a method whose whole body is `local cmp literal ifTrue: [a] ifFalse: [b]`
//! (`fib: n => n < 2 ifTrue: [n] ifFalse: [...]`, the base case of most recursive methods).
//! The activation of a self-send runs such a body inline ([`Guard::run`] from
//! `Ctx::send_cached_compiled`) instead of calling the body's closure; the body's `Op` runs
//! the same `Guard::run`, so there is one path. The comparison is a range test on the local
//! (`x < k` is `x` in `[MIN, k - 1]`), decided with no dispatch on the operator.

use std::sync::atomic::Ordering;

use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::{fast_clone, Value};

use super::op::{Arg, Decided, Guard};
use super::operand::non_boolean;

impl Guard {
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

    /// Whether the guard tests the only parameter of a one-argument method (slot 0): a
    /// one-argument self-send can decide it from its Integer argument before pushing it
    /// ([`Guard::test_int`], `Ctx::self_send_add`).
    #[inline(always)]
    pub(crate) fn on_only_param(&self) -> bool {
        self.on_param && self.slot == 0
    }

    /// The guard's outcome for the Integer `x` in the tested slot (`true`: the `ifTrue:`
    /// arm). The caller has established that Integer arithmetic is not overridden
    /// (`IcEntry::plain_int`).
    #[inline(always)]
    pub(crate) fn test_int(&self, x: i64) -> bool {
        ((x.wrapping_sub(self.lo) as u64) <= self.span) != self.neg
    }

    /// The answer of arm `t` without an activation when the arm is the tested parameter
    /// (`x`, its value) or a constant; `None` when the arm must run in the activation.
    #[inline(always)]
    pub(crate) fn leaf_int(&self, t: bool, x: i64) -> Option<Value> {
        match if t { &self.a } else { &self.b } {
            Arg::Local(s) if *s == self.slot => Some(Value::Int(x)),
            Arg::Const(v) => Some(fast_clone(v)),
            _ => None,
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
