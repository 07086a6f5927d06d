//! The compiled forms the lowered code holds and the closure compiler builds: [`Op`] (a
//! compiled expression, the body of an `FnCode`), `Eff` (a compiled statement whose value is
//! dropped), [`TailSelfSend`] (the parts of a method body `self sel: arg` that
//! `Ctx::send_owned` runs itself) and `non_boolean`, the send an inlined `ifTrue:` falls back
//! on, and [`Sub`], the compiler's entry points handed to the shape files. The shape compilers (the sibling files and `compile.rs`) build these; the evaluator and
//! the IR in `code.rs` name only this file, not the compilers.

use std::sync::Arc;

use crate::interp::eval::code::{Loc, Node};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Flow, Frame, Unwind};
use crate::value::{drop_fast, Sym, Value};

use super::operand::IntSet;

pub(super) type OpFn = dyn Fn(&mut Ctx, &Frame) -> Flow + Send + Sync;
pub(super) type EffFn = dyn Fn(&mut Ctx, &Frame) -> Result<(), Box<Unwind>> + Send + Sync;

/// A compiled expression.
pub struct Op(Box<OpFn>);

impl Op {
    #[inline(always)]
    pub(crate) fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        (self.0)(c, f)
    }
}

impl Default for Op {
    fn default() -> Op {
        Op(Box::new(|_, _| Ok(Value::Nil)))
    }
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<op>")
    }
}

/// A compiled statement whose value is discarded: a closure of its own, an expression whose
/// value is dropped, or a statement list run in place (no dynamic call for the list itself).
pub(super) enum Eff {
    F(Box<EffFn>),
    Op(Op),
    Seq(Box<[Eff]>),
    /// `x := a op b` on Integer locals/literals, run in place (no dynamic call).
    IntSet(Box<IntSet>),
}

impl Eff {
    #[inline(always)]
    pub(super) fn run(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
        match self {
            Eff::Seq(v) => {
                for e in v.iter() {
                    e.run_one(c, f)?;
                }
                Ok(())
            }
            e => e.run_one(c, f),
        }
    }

    #[inline(always)]
    fn run_one(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
        match self {
            Eff::F(b) => b(c, f),
            Eff::IntSet(s) => s.run(c, f),
            Eff::Op(o) => o.run(c, f).map(drop_fast),
            Eff::Seq(_) => self.run_nested(c, f),
        }
    }

    #[inline(never)]
    fn run_nested(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
        self.run(c, f)
    }
}

pub(super) fn op(f: impl Fn(&mut Ctx, &Frame) -> Flow + Send + Sync + 'static) -> Op {
    Op(Box::new(f))
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

/// A method body `self sel: arg`: its argument and the selector, for `Ctx::send_owned`.
pub struct TailSelfSend {
    pub(crate) sel: Sym,
    pub(crate) arg: Arc<Op>,
    /// Caches the lookup of `sel` on the receiver's class.
    pub(crate) ic: InlineCache,
}

impl std::fmt::Debug for TailSelfSend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<self {}>", self.sel.as_str())
    }
}

/// The compiler's entry points (`compile`, `compile_effect`), handed to the files that build a
/// form around compiled sub-expressions (`operand_of`, `selfsend`, `fused`, `store_loop`,
/// `update`) so they need not name `compile.rs`, which names them (it passes `compile::SUB`).
/// Used only while compiling, never by a compiled closure.
#[derive(Clone, Copy)]
pub(super) struct Sub {
    /// Compiles an expression.
    pub(super) expr: fn(Node) -> Op,
    /// Compiles a statement whose value is dropped.
    pub(super) effect: fn(Node) -> Eff,
}
