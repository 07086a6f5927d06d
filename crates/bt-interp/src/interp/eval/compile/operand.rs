//! Operands the compiled closures read without a dynamic call: Integer locals, literals and
//! `self` fields ([`IntSrc`]), loop and branch conditions ([`Cond`]), send arguments
//! ([`Arg`]), `x := a op b` statements ([`IntSet`]) and `local at: k` ([`LocalAt`]). Each
//! keeps the compiled general expression to fall back on. This file runs the forms, with the
//! two run-time helpers over [`Arg`]s ([`if_branch`] for an inlined `ifTrue:`, [`send_general`]
//! for a send); which form a node gets is chosen in `operand_of.rs`, which needs the compiler.

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{BinOp, FieldMode, IfKind, Loc, Node, VarRef};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Flow, Frame, Unwind};
use crate::value::{drop_fast, fast_clone, Sym, Value};

pub(super) use super::op::{Arg, Cond, IntSet, IntSrc, LocalAt};

pub(super) fn int_src(n: &Node) -> Option<IntSrc> {
    match n {
        Node::Const(Value::Int(i)) => Some(IntSrc::Lit(*i)),
        Node::Var(VarRef::Local(s)) => Some(IntSrc::Local(*s as usize)),
        Node::Field(fd)
            if fd.mode == FieldMode::Value
                && fd.value.is_none()
                && matches!(fd.recv, Node::SelfRef) =>
        {
            Some(IntSrc::SelfField(fd.idx as usize, fd.name))
        }
        _ => None,
    }
}

#[inline(always)]
pub(super) fn read_int(c: &Ctx, f: &Frame, s: &IntSrc) -> Option<i64> {
    match s {
        IntSrc::Lit(i) => Some(*i),
        IntSrc::Local(k) => match &c.stack[f.base + k] {
            Value::Int(i) => Some(*i),
            _ => None,
        },
        IntSrc::SelfField(idx, name) => match f.recv {
            Value::Object(inst) if inst.class.field_names.get(*idx) == Some(name) => {
                match inst.fields.get(*idx) {
                    Some(Value::Int(i)) => Some(*i),
                    _ => None,
                }
            }
            _ => None,
        },
    }
}

/// The Integer result of `x op y` for the arithmetic operators, when no user method overrides
/// Integer arithmetic and it does not overflow.
#[inline(always)]
pub(super) fn int_arith(c: &Ctx, op: BinOp, x: i64, y: i64) -> Option<i64> {
    if c.prog.arith_overridden.load(Ordering::Relaxed) {
        return None;
    }
    match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        _ => None,
    }
}

/// The outcome of an Integer comparison, when no user method overrides Integer arithmetic.
#[inline(always)]
pub(super) fn int_cmp(c: &Ctx, op: BinOp, x: i64, y: i64) -> Option<bool> {
    if c.prog.arith_overridden.load(Ordering::Relaxed) {
        return None;
    }
    match op {
        BinOp::Lt => Some(x < y),
        BinOp::Gt => Some(x > y),
        BinOp::Le => Some(x <= y),
        BinOp::Ge => Some(x >= y),
        BinOp::Eq | BinOp::StrictEq => Some(x == y),
        BinOp::Ne | BinOp::StrictNe => Some(x != y),
        _ => None,
    }
}

impl Cond {
    /// `Some(truth)` for a Boolean, `None` (with the value) for anything else.
    #[inline(always)]
    pub(super) fn eval(&self, c: &mut Ctx, f: &Frame) -> Result<Result<bool, Value>, Box<Unwind>> {
        let v = match self {
            Cond::IntCmp(op, l, r, slow) => {
                if let (Some(x), Some(y)) = (read_int(c, f, l), read_int(c, f, r)) {
                    if let Some(b) = int_cmp(c, *op, x, y) {
                        return Ok(Ok(b));
                    }
                }
                slow.run(c, f)?
            }
            Cond::LocalAt(la) => la.run(c, f)?,
            Cond::Other(o) => o.run(c, f)?,
        };
        Ok(match &v {
            Value::True | Value::False => {
                let t = matches!(v, Value::True);
                // An immediate: skip the out-of-line drop glue.
                std::mem::forget(v);
                Ok(t)
            }
            _ => Err(v),
        })
    }

    /// The condition of a `whileTrue:` (`while_true`) or `whileFalse:` loop as a Boolean; a
    /// non-Boolean is `doesNotUnderstand: #ifTrue:` (`#ifFalse:`) reported at `loc`.
    #[inline(always)]
    pub(super) fn loop_truth(
        &self,
        c: &mut Ctx,
        f: &Frame,
        while_true: bool,
        loc: crate::interp::eval::code::Loc,
    ) -> Result<bool, Box<Unwind>> {
        match self.eval(c, f)? {
            Ok(t) => Ok(t),
            Err(other) => {
                c.set_loc(loc);
                let sel = if while_true { "ifTrue:" } else { "ifFalse:" };
                Err(c.dnu_error(&other, crate::value::Sym::new(sel)).into())
            }
        }
    }
}

pub(super) fn int_cmp_op(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt
            | BinOp::Gt
            | BinOp::Le
            | BinOp::Ge
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::StrictEq
            | BinOp::StrictNe
    )
}

impl Arg {
    #[inline(always)]
    pub(super) fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        match self {
            Arg::LocalAdd(s, k, slow) => match &c.stack[f.base + s] {
                Value::Int(i) if !c.prog.arith_overridden.load(Ordering::Relaxed) => {
                    match i.checked_add(*k) {
                        Some(z) => Ok(Value::Int(z)),
                        None => slow.run(c, f),
                    }
                }
                _ => slow.run(c, f),
            },
            Arg::IntBin(opk, l, r, slow) => {
                if let (Some(x), Some(y)) = (read_int(c, f, l), read_int(c, f, r)) {
                    if let Some(z) = int_arith(c, *opk, x, y) {
                        return Ok(Value::Int(z));
                    }
                }
                slow.run(c, f)
            }
            Arg::Const(v) => Ok(fast_clone(v)),
            Arg::Local(i) => Ok(fast_clone(&c.stack[f.base + i])),
            Arg::Other(o) => o.run(c, f),
        }
    }
}

impl IntSet {
    #[inline(always)]
    pub(super) fn run(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
        if let (Some(x), Some(y)) = (read_int(c, f, &self.l), read_int(c, f, &self.r)) {
            if let Some(z) = int_arith(c, self.op, x, y) {
                let slot = &mut c.stack[f.base + self.d];
                if let Value::Int(old) = slot {
                    *old = z;
                } else {
                    drop_fast(std::mem::replace(slot, Value::Int(z)));
                }
                return Ok(());
            }
        }
        let v = self.slow.run(c, f)?;
        drop_fast(std::mem::replace(&mut c.stack[f.base + self.d], v));
        Ok(())
    }
}

impl LocalAt {
    #[inline(always)]
    pub(super) fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        let (sel, loc) = (self.sel, self.loc);
        let k = self.key.run(c, f)?;
        let slot = f.base + self.slot;
        if let Value::Int(ki) = &k {
            let ki = (*ki as usize).wrapping_sub(1);
            match &c.stack[slot] {
                Value::Array(a)
                    if ki < a.len()
                        && c.builtin_prim_at(&self.prim_ic, &c.prog.core.array, sel) =>
                {
                    // An Integer key: no drop glue.
                    std::mem::forget(k);
                    c.tick()?;
                    if let Value::Array(a) = &c.stack[slot] {
                        return Ok(fast_clone(&a[ki]));
                    }
                    return Ok(Value::Nil);
                }
                Value::List(a)
                    if ki < a.len() && c.builtin_prim_at(&self.prim_ic, &c.prog.core.list, sel) =>
                {
                    std::mem::forget(k);
                    c.tick()?;
                    if let Value::List(a) = &c.stack[slot] {
                        return Ok(fast_clone(&a[ki]));
                    }
                    return Ok(Value::Nil);
                }
                _ => {}
            }
        }
        if matches!(&c.stack[slot], Value::Dict(_))
            && c.builtin_prim_at(&self.prim_ic, &c.prog.core.dictionary, sel)
        {
            c.tick()?;
            if let Value::Dict(d) = &c.stack[slot] {
                if let Some(v) = d.get(&k) {
                    return Ok(fast_clone(v));
                }
            }
            // A missing key: the primitive raises `key_error`.
        }
        let base = c.stack.len();
        c.stack.push(k);
        let recv = std::mem::replace(&mut c.stack[slot], Value::Nil);
        c.set_loc(loc);
        let r = c.send_cached(&self.ic, &recv, sel, base);
        c.stack[slot] = recv;
        r
    }
}

/// `ifTrue:` and friends sent to a non-Boolean: the send the inlined form stands for (it
/// raises `doesNotUnderstand` unless the receiver's class defines the selector).
#[cold]
pub(super) fn non_boolean(c: &mut Ctx, r: &Value, sel: Sym, loc: Loc) -> Flow {
    c.set_loc(loc);
    let nargs = crate::interp::eval::sel_arity(sel.as_str());
    let args = vec![Value::Nil; nargs];
    c.dnu(r, sel, &args)
}

/// The value of an inlined `ifTrue:`/`ifFalse:`/`and:`/`or:` whose condition was `t`.
#[inline(always)]
pub(super) fn if_branch(c: &mut Ctx, f: &Frame, kind: IfKind, t: bool, a: &Arg, b: &Arg) -> Flow {
    match (kind, t) {
        (IfKind::IfTrue, true) | (IfKind::IfFalse, false) => a.run(c, f),
        (IfKind::IfTrue, false) => Ok(Value::False),
        (IfKind::IfFalse, true) => Ok(Value::True),
        (IfKind::IfTrueIfFalse, true) => a.run(c, f),
        (IfKind::IfTrueIfFalse, false) => b.run(c, f),
        (IfKind::And, true) | (IfKind::Or, false) => a.run(c, f),
        (IfKind::And, false) => Ok(Value::False),
        (IfKind::Or, true) => Ok(Value::True),
    }
}

/// The general send: the arguments pushed in order, then the cached send to `rv` (also the
/// fallback of `class_send`).
#[inline(always)]
pub(super) fn send_general(
    c: &mut Ctx,
    f: &Frame,
    ic: &InlineCache,
    rv: &Value,
    sel: crate::value::Sym,
    args: &[Arg],
    loc: Loc,
) -> Flow {
    let base = c.stack.len();
    for a in args {
        let v = a.run(c, f)?;
        c.stack.push(v);
    }
    c.set_loc(loc);
    c.send_cached(ic, rv, sel, base)
}
