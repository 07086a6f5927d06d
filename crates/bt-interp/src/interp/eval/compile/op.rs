//! The compiled forms the lowered code holds and the closure compiler builds, as data: [`Op`]
//! (a compiled expression, the body of an `FnCode`), `Eff` (a compiled statement whose value
//! is dropped), [`TailSelfSend`] (the parts of a method body `self sel: arg` that
//! `Ctx::send_owned` runs itself), [`Guard`] (a guard body) and the operand forms (`IntSrc`,
//! `Cond`, `Arg`, `IntSet`, `LocalAt`), and [`Sub`], the compiler's entry points handed to the
//! shape files. The shape compilers (the sibling files and `compile.rs`) build these; what
//! runs a guard or an operand is `guard.rs` and `operand.rs`. The evaluator and the IR in
//! `code.rs` name only this file, not the compilers.
//!
//! Layer: the evaluator's core types. A compiled closure is a function of the context, which
//! this file names as `eval::context::Ctx` (it stores and calls closures, never reading the
//! context), so it does not name the evaluator.

use std::sync::Arc;

use crate::interp::eval::code::{BinOp, Loc, Node};
use crate::interp::eval::context::{Ctx, Flow, Frame, Unwind};
use crate::interp::eval::hit::InlineCache;
use crate::value::{drop_fast, Sym, Value};

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

// The compiled guard body and the operand forms (run by `guard.rs` and `operand.rs`).

/// A compiled guard body (`guard.rs`, which runs it).
pub struct Guard {
    pub(super) slot: usize,
    /// `x` passes when `(x - lo) as u64 <= span`, negated when `neg`.
    pub(super) lo: i64,
    pub(super) span: u64,
    pub(super) neg: bool,
    pub(super) a: Arg,
    pub(super) b: Arg,
    /// The condition as a general expression (a non-Integer local, overridden arithmetic).
    pub(super) cond: Cond,
    pub(super) sel: Sym,
    pub(super) loc: Loc,
    /// The tested local is a parameter (set by `compile_body`): a self-send can decide the
    /// guard from the argument it pushed, before the activation ([`Guard::decide`]).
    pub(super) on_param: bool,
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

/// An Integer operand known without evaluation.
#[derive(Clone, Copy)]
pub(super) enum IntSrc {
    Lit(i64),
    Local(usize),
    /// `self.name` of a Value instance: (field index, name).
    SelfField(usize, Sym),
}

/// A loop or branch condition: Integer comparisons of locals and literals are decided without
/// building a Boolean value; anything else is evaluated.
pub(super) enum Cond {
    IntCmp(BinOp, IntSrc, IntSrc, Op),
    LocalAt(Box<LocalAt>),
    Other(Op),
}

/// An argument of a fast-path site: `local op literal` Integer arithmetic and constants are
/// produced without a dynamic call; anything else (or an overflow, or overridden Integer
/// arithmetic) runs the compiled expression. A plain byte tag (`repr(u8)`) instead of a niche
/// in the operands: `run` dispatches with one byte load instead of decoding the niche.
#[repr(u8)]
pub(super) enum Arg {
    /// `local + k` or `local - k` (as `local + (-k)`): slot, addend, the general expression
    /// (a non-Integer, an overflow, overridden Integer arithmetic). The commonest argument
    /// shape (`a at: j + 1`, `self fib: n - 1`): one test of the slot, no operand dispatch.
    LocalAdd(usize, i64, Op),
    IntBin(BinOp, IntSrc, IntSrc, Op),
    Const(Value),
    /// A local slot's value.
    Local(usize),
    Other(Op),
}

/// `x := a op b` with `a`, `b` Integer locals or literals: computed and stored without a
/// Value round trip; an overflow, a non-Integer operand or overridden Integer arithmetic runs
/// the compiled expression.
pub(super) struct IntSet {
    pub(super) d: usize,
    pub(super) op: BinOp,
    pub(super) l: IntSrc,
    pub(super) r: IntSrc,
    pub(super) slow: Op,
}

/// The parts of `a at: k` with `a` a local (see [`compile_local_at`]); also a condition
/// (`(flags at: i) ifTrue: [...]`) evaluated without a dynamic call.
pub(super) struct LocalAt {
    pub(super) slot: usize,
    pub(super) key: Arg,
    pub(super) sel: Sym,
    pub(super) loc: Loc,
    /// The send's cache (the general path).
    pub(super) ic: InlineCache,
    /// Whether `at:` is still the primitive on the receiver's class.
    pub(super) prim_ic: InlineCache,
}
