//! Array-store loops: `a to: b [by: s] do: [:j | arr := arr at: j + k put: v]` with `arr` a
//! local, the key the loop variable plus or minus a literal and `v` a constant (the sieve's
//! marking loop, array initialisation). The loop runs such a body inline ([`StoreBody::run`],
//! called by the `to:do:` closure of `compile.rs` with the loop's Integer): the key is computed
//! from that Integer directly, and the store goes into the Array in the local's slot as
//! `update::compile_in_place` would do it — when the slot holds an Array, the key is in range,
//! `Array>>at:put:` is the primitive and no user method overrides Integer arithmetic. Any
//! other iteration runs the body's general statement (`Eff`), which sends, raises or widens
//! exactly as the unfused loop.
//!
//! The store charges no reduction of its own: the loop's tick per iteration covers it (a
//! constant-time store; an unfused loop paid two, one for the loop and one for `at:put:`).

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{BinOp, Node, VarRef};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Frame, Unwind};
use crate::value::{fast_clone, Value};

use super::op::{Eff, Sub};

/// A fused store body (see the module doc).
pub(super) struct StoreBody {
    /// The local holding the Array.
    arr: usize,
    /// Added to the loop's Integer to make the key.
    add: i64,
    val: Value,
    sel: crate::value::Sym,
    ic: InlineCache,
    /// The body as an ordinary statement (every iteration the fast path does not take).
    general: Eff,
}

/// A `to:do:` body as the loop closure runs it (`compile::to_do`, one closure per kind): an
/// ordinary statement or a fused store.
pub(super) trait LoopBody: Send + Sync + 'static {
    /// One iteration with the loop variable at `i` (already stored in its slot).
    fn step(&self, c: &mut Ctx, f: &Frame, i: i64) -> Result<(), Box<Unwind>>;
    /// The body as an ordinary statement (the generic loop over non-Integer bounds).
    fn general(&self) -> &Eff;
}

impl LoopBody for Eff {
    #[inline(always)]
    fn step(&self, c: &mut Ctx, f: &Frame, _: i64) -> Result<(), Box<Unwind>> {
        self.run(c, f)
    }
    fn general(&self) -> &Eff {
        self
    }
}

impl LoopBody for StoreBody {
    #[inline(always)]
    fn step(&self, c: &mut Ctx, f: &Frame, i: i64) -> Result<(), Box<Unwind>> {
        self.run(c, f, i)
    }
    fn general(&self) -> &Eff {
        &self.general
    }
}

impl StoreBody {
    /// The fused store of a `to:do:` loop whose variable is `var`, or the body back when it
    /// has another shape.
    pub(super) fn of(var: Option<VarRef>, body: Node, sub: Sub) -> Result<StoreBody, Node> {
        match store_shape(var, &body) {
            Some((arr, add, val, sel)) => Ok(StoreBody {
                arr,
                add,
                val,
                sel,
                ic: InlineCache::default(),
                general: (sub.effect)(body),
            }),
            None => Err(body),
        }
    }

    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame, i: i64) -> Result<(), Box<Unwind>> {
        if !c.prog.arith_overridden.load(Ordering::Relaxed) {
            if let Some(k) = i.checked_add(self.add) {
                let slot = f.base + self.arr;
                let k = (k as usize).wrapping_sub(1);
                if matches!(&c.stack[slot], Value::Array(a) if k < a.len())
                    && c.builtin_prim_at(&self.ic, &c.prog.core.array, self.sel)
                {
                    if let Value::Array(a) = &mut c.stack[slot] {
                        crate::value::make_mut(a).set(k, fast_clone(&self.val));
                    }
                    return Ok(());
                }
            }
        }
        self.general.run(c, f)
    }
}

/// `(array slot, addend, value, selector)` when `body` is `arr := arr at: j ± k put: v` with
/// `j` the loop variable `var`, `arr` another local and `v` an immediate constant.
fn store_shape(var: Option<VarRef>, body: &Node) -> Option<(usize, i64, Value, crate::value::Sym)> {
    let Some(VarRef::Local(j)) = var else {
        return None;
    };
    let body = match body {
        Node::Seq(v) if v.len() == 1 => &v[0],
        n => n,
    };
    let Node::InPlace(p) = body else {
        return None;
    };
    let VarRef::Local(arr) = p.var else {
        return None;
    };
    if p.name != "at:put:" || p.args.len() != 2 || arr == j {
        return None;
    }
    let add = match &p.args[0] {
        Node::Var(VarRef::Local(s)) if *s == j => 0,
        Node::Bin(b) => match (&b.lhs, &b.rhs, b.op) {
            (Node::Var(VarRef::Local(s)), Node::Const(Value::Int(k)), BinOp::Add) if *s == j => *k,
            (Node::Var(VarRef::Local(s)), Node::Const(Value::Int(k)), BinOp::Sub)
                if *s == j && *k != i64::MIN =>
            {
                // `j - k` overflows exactly when `j + (-k)` does.
                -*k
            }
            _ => return None,
        },
        _ => return None,
    };
    let val = match &p.args[1] {
        Node::Const(v @ (Value::Int(_) | Value::True | Value::False | Value::Nil)) => v.clone(),
        _ => return None,
    };
    Some((arr as usize, add, val, p.sel))
}
