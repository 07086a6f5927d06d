//! Closure compilation: the hot node kinds become nested Rust closures specialised on their
//! shape (a send to `self` with one argument, `local < literal`, a local receiver lent to the
//! send …), so evaluating them needs no dispatch on the node kind and no re-checks. Everything
//! else falls back to the tree-walker [`Ctx::exec`] over the node, which stays the reference
//! semantics.

use std::sync::Arc;

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{
    BinOp, FieldMode, FnCode, IfKind, Node, SendNode, UpvalSrc, VarRef,
};
use crate::interp::eval::exec::{drop_fast, fast_clone};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Closure, Ctx, Flow, Frame, Unwind, VarCell};
use crate::interp::value::Value;

type OpFn = dyn Fn(&mut Ctx, &Frame) -> Flow + Send + Sync;
type EffFn = dyn Fn(&mut Ctx, &Frame) -> Result<(), Box<Unwind>> + Send + Sync;

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
enum Eff {
    F(Box<EffFn>),
    Op(Op),
    Seq(Box<[Eff]>),
    /// `x := a op b` on Integer locals/literals, run in place (no dynamic call).
    IntSet(Box<IntSet>),
}

impl Eff {
    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
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

fn op(f: impl Fn(&mut Ctx, &Frame) -> Flow + Send + Sync + 'static) -> Op {
    Op(Box::new(f))
}

/// Falls back to the tree-walker for this node.
fn walk(n: Node) -> Op {
    op(move |c, f| c.exec(&n, f))
}

/// An Integer operand known without evaluation.
enum IntSrc {
    Lit(i64),
    Local(usize),
    /// `self.name` of a Value instance: (field index, name).
    SelfField(usize, crate::interp::value::Sym),
}

fn int_src(n: &Node) -> Option<IntSrc> {
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
fn read_int(c: &Ctx, f: &Frame, s: &IntSrc) -> Option<i64> {
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
fn int_arith(c: &Ctx, op: BinOp, x: i64, y: i64) -> Option<i64> {
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
fn int_cmp(c: &Ctx, op: BinOp, x: i64, y: i64) -> Option<bool> {
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

/// A loop or branch condition: Integer comparisons of locals and literals are decided without
/// building a Boolean value; anything else is evaluated.
enum Cond {
    IntCmp(BinOp, IntSrc, IntSrc, Op),
    LocalAt(Box<LocalAt>),
    Other(Op),
}

impl Cond {
    fn new(n: Node) -> Cond {
        let n = match n {
            Node::Send(s)
                if s.pure_args
                    && s.args.len() == 1
                    && s.sel.as_str() == "at:"
                    && matches!(s.recv, Node::Var(VarRef::Local(_))) =>
            {
                let s = *s;
                match LocalAt::new(s.recv, s.sel, s.args, s.loc) {
                    Some(la) => return Cond::LocalAt(Box::new(la)),
                    None => return Cond::Other(walk(Node::Nil)),
                }
            }
            n => n,
        };
        if let Node::Bin(b) = &n {
            if let (Some(l), Some(r)) = (int_src(&b.lhs), int_src(&b.rhs)) {
                if int_cmp_op(b.op) {
                    let opk = b.op;
                    return Cond::IntCmp(opk, l, r, compile(n));
                }
            }
        }
        Cond::Other(compile(n))
    }

    /// `Some(truth)` for a Boolean, `None` (with the value) for anything else.
    #[inline(always)]
    fn eval(&self, c: &mut Ctx, f: &Frame) -> Result<Result<bool, Value>, Box<Unwind>> {
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
        Ok(match v {
            Value::True => Ok(true),
            Value::False => Ok(false),
            other => Err(other),
        })
    }
}

fn int_cmp_op(op: BinOp) -> bool {
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

/// An argument of a fast-path site: `local op literal` Integer arithmetic and constants are
/// produced without a dynamic call; anything else (or an overflow, or overridden Integer
/// arithmetic) runs the compiled expression.
enum Arg {
    IntBin(BinOp, IntSrc, IntSrc, Op),
    Const(Value),
    Other(Op),
}

impl Arg {
    fn new(n: Node) -> Arg {
        match &n {
            Node::Const(v @ (Value::Int(_) | Value::True | Value::False | Value::Nil)) => {
                return Arg::Const(v.clone())
            }
            Node::Bin(b) if matches!(b.op, BinOp::Add | BinOp::Sub | BinOp::Mul) => {
                if let (Some(l), Some(r)) = (int_src(&b.lhs), int_src(&b.rhs)) {
                    let opk = b.op;
                    return Arg::IntBin(opk, l, r, compile(n));
                }
            }
            _ => {}
        }
        Arg::Other(compile(n))
    }

    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        match self {
            Arg::IntBin(opk, l, r, slow) => {
                if let (Some(x), Some(y)) = (read_int(c, f, l), read_int(c, f, r)) {
                    if let Some(z) = int_arith(c, *opk, x, y) {
                        return Ok(Value::Int(z));
                    }
                }
                slow.run(c, f)
            }
            Arg::Const(v) => Ok(fast_clone(v)),
            Arg::Other(o) => o.run(c, f),
        }
    }
}

fn compile_effect(n: Node) -> Eff {
    match n {
        // `x := a op b` on Integer locals/literals: computed and stored without a Value round trip.
        Node::SetVar(VarRef::Local(d), e)
            if matches!(&*e, Node::Bin(b)
                if matches!(b.op, BinOp::Add | BinOp::Sub | BinOp::Mul)
                    && int_src(&b.lhs).is_some()
                    && int_src(&b.rhs).is_some()) =>
        {
            let (opk, l, r) = match &*e {
                Node::Bin(b) => (b.op, int_src(&b.lhs), int_src(&b.rhs)),
                _ => (BinOp::Add, None, None),
            };
            let (Some(l), Some(r)) = (l, r) else {
                return compile_effect(Node::SetVar(VarRef::Local(d), e));
            };
            let slow = compile(*e);
            Eff::IntSet(Box::new(IntSet {
                d: d as usize,
                op: opk,
                l,
                r,
                slow,
            }))
        }
        Node::SetVar(r, e) => {
            let e = compile(*e);
            match r {
                VarRef::Local(i) => Eff::F(Box::new(move |c, f| {
                    let v = e.run(c, f)?;
                    drop_fast(std::mem::replace(&mut c.stack[f.base + i as usize], v));
                    Ok(())
                })),
                r => Eff::F(Box::new(move |c, f| {
                    let v = e.run(c, f)?;
                    c.set_var(f, r, v);
                    Ok(())
                })),
            }
        }
        Node::Seq(v) => Eff::Seq(v.into_iter().map(compile_effect).collect()),
        // `cond ifTrue: [...]` as a statement: the branches run as statements (no value is
        // built and dropped, and `x := x + 1` inside takes its in-place path).
        Node::If(n)
            if matches!(
                n.kind,
                IfKind::IfTrue | IfKind::IfFalse | IfKind::IfTrueIfFalse
            ) =>
        {
            let n = *n;
            let (kind, sel, loc) = (n.kind, n.sel, n.loc);
            let recv = Cond::new(n.recv);
            let a = compile_effect(n.a);
            let b = compile_effect(n.b);
            Eff::F(Box::new(move |c, f| {
                let t = match recv.eval(c, f)? {
                    Ok(t) => t,
                    Err(r) => return non_boolean(c, &r, sel, loc).map(drop_fast),
                };
                match (kind, t) {
                    (IfKind::IfFalse, false) | (IfKind::IfTrue | IfKind::IfTrueIfFalse, true) => {
                        a.run(c, f)
                    }
                    (IfKind::IfTrueIfFalse, false) => b.run(c, f),
                    _ => Ok(()),
                }
            }))
        }
        Node::Nil | Node::Const(_) => Eff::F(Box::new(|_, _| Ok(()))),
        Node::InPlace(p) if p.name != "++" => Eff::Op(compile_in_place(*p, false)),
        Node::InPlace(p) => Eff::Op(compile_concat(*p, false)),
        other => Eff::Op(compile(other)),
    }
}

/// `x := a op b` with `a`, `b` Integer locals or literals: computed and stored without a
/// Value round trip; an overflow, a non-Integer operand or overridden Integer arithmetic runs
/// the compiled expression.
struct IntSet {
    d: usize,
    op: BinOp,
    l: IntSrc,
    r: IntSrc,
    slow: Op,
}

impl IntSet {
    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame) -> Result<(), Box<Unwind>> {
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

/// `ifTrue:` and friends sent to a non-Boolean: the send the inlined form stands for (it
/// raises `doesNotUnderstand` unless the receiver's class defines the selector).
#[cold]
fn non_boolean(
    c: &mut Ctx,
    r: &Value,
    sel: crate::interp::value::Sym,
    loc: crate::interp::eval::code::Loc,
) -> Flow {
    c.set_loc(loc);
    let nargs = crate::interp::eval::sel_arity(sel.as_str());
    let args = vec![Value::Nil; nargs];
    c.dnu(r, sel, &args)
}

/// Compiles a function body (nested blocks are compiled already).
pub fn compile_body(code: &mut FnCode) {
    let body = std::mem::take(&mut code.body);
    if !code.is_toplevel {
        if let Node::Send(s) = body {
            if matches!(s.recv, Node::SelfRef) && s.args.len() == 1 {
                let (op, tail) = compile_tail_self_send(*s);
                code.op = op;
                code.tail_self_send = Some(tail);
                return;
            }
            code.op = compile(Node::Send(s));
            return;
        }
        code.op = compile(body);
    } else {
        // Top-level units run statement by statement (a `^` ends one statement).
        let stmts = match body {
            Node::Seq(v) => v,
            other => vec![other],
        };
        code.stmts = stmts.into_iter().map(compile).collect();
    }
}

/// A method body `self sel: arg`: its argument and the selector, for `Ctx::send_owned`.
pub struct TailSelfSend {
    pub(crate) sel: crate::interp::value::Sym,
    pub(crate) arg: Arc<Op>,
    /// Caches the lookup of `sel` on the receiver's class.
    pub(crate) ic: InlineCache,
}

impl std::fmt::Debug for TailSelfSend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<self {}>", self.sel.as_str())
    }
}

/// The body op of a method `self sel: arg` (as `compile_send` would build it) and the parts
/// `Ctx::send_owned` runs on its own.
fn compile_tail_self_send(s: SendNode) -> (Op, TailSelfSend) {
    let SendNode {
        sel, mut args, loc, ..
    } = s;
    let arg = Arc::new(args.pop().map(compile).unwrap_or_default());
    let a0 = arg.clone();
    let ic = InlineCache::default();
    let body = op(move |c, f| {
        let v = a0.run(c, f)?;
        let base = c.stack.len();
        c.stack.push(v);
        c.set_loc(loc);
        c.send_cached(&ic, f.recv, sel, base)
    });
    let tail = TailSelfSend {
        sel,
        arg,
        ic: InlineCache::default(),
    };
    (body, tail)
}

/// Compiles an expression.
pub fn compile(n: Node) -> Op {
    match n {
        Node::Nil => op(|_, _| Ok(Value::Nil)),
        Node::Const(v) => match v {
            Value::Int(i) => op(move |_, _| Ok(Value::Int(i))),
            Value::True => op(|_, _| Ok(Value::True)),
            Value::False => op(|_, _| Ok(Value::False)),
            v => op(move |_, _| Ok(fast_clone(&v))),
        },
        Node::SelfRef => op(|_, f| Ok(fast_clone(f.recv))),
        Node::Var(VarRef::Local(i)) => {
            let i = i as usize;
            op(move |c, f| Ok(fast_clone(&c.stack[f.base + i])))
        }
        Node::Var(r) => op(move |c, f| Ok(c.get_var(f, r))),
        Node::SetVar(r, e) => {
            let e = compile(*e);
            op(move |c, f| {
                let v = e.run(c, f)?;
                c.set_var(f, r, fast_clone(&v));
                Ok(v)
            })
        }
        Node::Seq(v) => {
            let mut v = v;
            let last = v.pop().map(compile).unwrap_or_default();
            let init: Vec<Eff> = v.into_iter().map(compile_effect).collect();
            op(move |c, f| {
                for e in &init {
                    e.run(c, f)?;
                }
                last.run(c, f)
            })
        }
        Node::Send(s) => compile_send(*s),
        Node::Bin(b) => {
            let b = *b;
            let (opk, sel, loc) = (b.op, b.sel, b.loc);
            if let (Some(l), Some(r)) = (int_src(&b.lhs), int_src(&b.rhs)) {
                let (lo, ro) = (compile(b.lhs), compile(b.rhs));
                return op(move |c, f| {
                    if let (Some(x), Some(y)) = (read_int(c, f, &l), read_int(c, f, &r)) {
                        if let Some(v) = c.int_op(opk, x, y) {
                            return Ok(v);
                        }
                    }
                    let lv = lo.run(c, f)?;
                    let rv = ro.run(c, f)?;
                    c.set_loc(loc);
                    c.send_impl(&lv, sel, std::slice::from_ref(&rv))
                });
            }
            let (lo, ro) = (compile(b.lhs), compile(b.rhs));
            op(move |c, f| {
                let lv = lo.run(c, f)?;
                let rv = ro.run(c, f)?;
                match (lv, rv) {
                    (Value::Int(x), Value::Int(y)) => match c.int_op(opk, x, y) {
                        Some(v) => Ok(v),
                        None => {
                            c.set_loc(loc);
                            c.send_impl(&Value::Int(x), sel, &[Value::Int(y)])
                        }
                    },
                    (lv, rv) => {
                        c.set_loc(loc);
                        c.send_impl(&lv, sel, std::slice::from_ref(&rv))
                    }
                }
            })
        }
        Node::If(n) => {
            let n = *n;
            let (kind, sel, loc) = (n.kind, n.sel, n.loc);
            let recv = Cond::new(n.recv);
            let a = compile(n.a);
            let b = compile(n.b);
            op(move |c, f| {
                let t = match recv.eval(c, f)? {
                    Ok(t) => t,
                    Err(r) => return non_boolean(c, &r, sel, loc),
                };
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
            })
        }
        Node::IfNil(n) => {
            let n = *n;
            let recv = compile(n.recv);
            let if_nil = n.if_nil.map(compile);
            let if_not = n.if_not_nil.map(|(p, b)| (p, compile(b)));
            op(move |c, f| {
                let r = recv.run(c, f)?;
                if r.is_nil() {
                    match &if_nil {
                        Some(b) => b.run(c, f),
                        None => Ok(Value::Nil),
                    }
                } else {
                    match &if_not {
                        Some((p, b)) => {
                            if let Some(p) = p {
                                c.bind_param(f, *p, r);
                            }
                            b.run(c, f)
                        }
                        None => Ok(r),
                    }
                }
            })
        }
        Node::While(w) => {
            let w = *w;
            let (while_true, loc) = (w.while_true, w.loc);
            let cond = Cond::new(w.cond);
            let body = compile_effect(w.body);
            op(move |c, f| loop {
                let go = match cond.eval(c, f)? {
                    Ok(t) => t == while_true,
                    Err(other) => {
                        c.set_loc(loc);
                        let sel = if while_true { "ifTrue:" } else { "ifFalse:" };
                        return Err(c
                            .dnu_error(&other, crate::interp::value::Sym::new(sel))
                            .into());
                    }
                };
                if !go {
                    return Ok(Value::Nil);
                }
                body.run(c, f)?;
                c.tick()?;
            })
        }
        Node::Repeat(b) => {
            let body = compile_effect(*b);
            op(move |c, f| loop {
                body.run(c, f)?;
                c.tick()?;
            })
        }
        Node::Times(t) => {
            let t = *t;
            let loc = t.loc;
            let count = compile(t.count);
            let body = compile_effect(t.body);
            op(move |c, f| match count.run(c, f)? {
                Value::Int(n) => {
                    for _ in 0..n.max(0) {
                        body.run(c, f)?;
                        c.tick()?;
                    }
                    Ok(Value::Nil)
                }
                other => {
                    c.set_loc(loc);
                    let sel = c.prog.syms.times_repeat;
                    Err(c.dnu_error(&other, sel).into())
                }
            })
        }
        Node::ToDo(t) => {
            let t = *t;
            let (var, loc) = (t.var, t.loc);
            let from = compile(t.from);
            let to = compile(t.to);
            let by = t.by.map(compile);
            // The generic path needs the body as a node for the tree-walker.
            let body = compile_effect(t.body);
            op(move |c, f| {
                let a = from.run(c, f)?;
                let b = to.run(c, f)?;
                let s = match &by {
                    Some(o) => o.run(c, f)?,
                    None => Value::Int(1),
                };
                if let (Value::Int(a), Value::Int(b), Value::Int(s)) = (&a, &b, &s) {
                    let (a, b, s) = (*a, *b, *s);
                    if s == 0 {
                        return Ok(Value::Nil);
                    }
                    let mut i = a;
                    while (s > 0 && i <= b) || (s < 0 && i >= b) {
                        match var {
                            Some(VarRef::Local(k)) => {
                                let slot = &mut c.stack[f.base + k as usize];
                                if let Value::Int(old) = slot {
                                    *old = i;
                                } else {
                                    drop_fast(std::mem::replace(slot, Value::Int(i)));
                                }
                            }
                            Some(v) => c.bind_param(f, v, Value::Int(i)),
                            None => {}
                        }
                        body.run(c, f)?;
                        c.tick()?;
                        match i.checked_add(s) {
                            Some(n) => i = n,
                            None => break,
                        }
                    }
                    return Ok(Value::Nil);
                }
                c.set_loc(loc);
                c.generic_loop(&a, &b, &s, var, &|c, f| body.run(c, f), f)
            })
        }
        Node::Return(e) => {
            let e = compile(*e);
            op(move |c, f| {
                let value = e.run(c, f)?;
                Err(Box::new(Unwind::Return {
                    value,
                    home: f.home,
                }))
            })
        }
        Node::NlReturn(e) => {
            let e = compile(*e);
            op(move |c, f| {
                let value = e.run(c, f)?;
                if !c.home_live(f.home) {
                    return Err(c
                        .err(
                            "runtime_error",
                            "non-local return from a method that has already returned",
                        )
                        .into());
                }
                Err(Box::new(Unwind::Return {
                    value,
                    home: f.home,
                }))
            })
        }
        Node::Block(code) => op(move |c, f| Ok(make_closure(c, f, &code))),
        Node::InPlace(p) if p.name != "++" => compile_in_place(*p, true),
        Node::InPlace(p) => compile_concat(*p, true),
        Node::Field(fd)
            if fd.mode == FieldMode::Value
                && fd.value.is_none()
                && matches!(fd.recv, Node::SelfRef) =>
        {
            let (name, idx) = (fd.name, fd.idx as usize);
            op(move |c, f| {
                if let Value::Object(inst) = f.recv {
                    if inst.class.field_names.get(idx) == Some(&name) {
                        return Ok(fast_clone(inst.fields.get(idx).unwrap_or(&Value::Nil)));
                    }
                }
                c.read_field(f.recv, name, idx)
            })
        }
        Node::List(items) if !items.is_empty() => {
            let ops: Vec<Op> = items.into_iter().map(compile).collect();
            op(move |c, f| {
                let mut v = imbl::Vector::new();
                for o in &ops {
                    v.push_back(o.run(c, f)?);
                }
                Ok(Value::List(crate::interp::value::Ref::new(v)))
            })
        }
        other => walk(other),
    }
}

/// A closure value for a block literal evaluated in frame `f`.
pub(crate) fn make_closure(c: &mut Ctx, f: &Frame, code: &Arc<FnCode>) -> Value {
    let upvals: Box<[Arc<VarCell>]> = code
        .upvals
        .iter()
        .map(|u| match u {
            UpvalSrc::Cell(i) => c.cells[f.cbase + *i as usize].clone(),
            UpvalSrc::Upval(i) => f.upvals[*i as usize].clone(),
        })
        .collect();
    let serial = c
        .prog
        .block_serial
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Value::Block(Arc::new(Closure {
        code: code.clone(),
        recv: f.recv.clone(),
        upvals,
        home: f.home,
        mclass: f.mclass.map(crate::interp::eval::hit::class_arc),
        mside: f.mside,
        serial,
    }))
}

/// `s := s ++ a ++ b …`: appends to the String in a local `s` in place when `s` holds the only
/// reference and String's `++` is the primitive; anything else takes the general path of
/// `Ctx::concat_in_place`.
fn compile_concat(p: crate::interp::eval::code::InPlaceNode, keep: bool) -> Op {
    let crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args,
        loc,
    } = p;
    let args: Vec<Arg> = args.into_iter().map(Arg::new).collect();
    let rest = crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args: Vec::new(),
        loc,
    };
    let ic = InlineCache::default();
    op(move |c, f| {
        let mut vals: smallvec::SmallVec<[Value; 2]> = smallvec::SmallVec::new();
        for a in &args {
            vals.push(a.run(c, f)?);
        }
        if let VarRef::Local(i) = var {
            let slot = f.base + i as usize;
            if matches!(&c.stack[slot], Value::Str(_))
                && vals.iter().all(|v| matches!(v, Value::Str(_)))
                && c.builtin_prim_at(&ic, &c.prog.core.string, sel)
            {
                c.tick()?;
                if let Value::Str(s) = &mut c.stack[slot] {
                    let extra: usize = vals.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
                    let m = crate::interp::value::make_mut(s);
                    m.reserve(extra);
                    for a in &vals {
                        m.push_str(a.as_str().unwrap_or(""));
                    }
                }
                return Ok(if keep {
                    c.stack[slot].clone()
                } else {
                    Value::Nil
                });
            }
        }
        c.set_loc(loc);
        let recv = c.take_var(f, var);
        c.concat_in_place(&rest, f, recv, vals.into_vec())
    })
}

/// `x := x add: e` and the other in-place selectors (see `Ctx::exec_in_place`).
fn compile_in_place(p: crate::interp::eval::code::InPlaceNode, keep: bool) -> Op {
    let crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args,
        loc,
    } = p;
    let nargs = crate::interp::eval::sel_arity(name);
    let ic = InlineCache::default();
    if let (VarRef::Local(i), "at:put:", 2) = (var, name, args.len()) {
        // `a := a at: k put: v` on a local Array: store into the slot's vector directly
        // (copied first only when shared); anything unusual takes the general path below.
        let mut args: Vec<Arg> = args.into_iter().map(Arg::new).collect();
        let (Some(a1), Some(a0)) = (args.pop(), args.pop()) else {
            return walk(Node::Nil);
        };
        let slow = in_place_rest(var, sel, nargs, loc, keep, ic);
        let ic = InlineCache::default();
        let i = i as usize;
        return op(move |c, f| {
            let k = a0.run(c, f)?;
            let v = a1.run(c, f)?;
            let slot = f.base + i;
            if matches!(&c.stack[slot], Value::Dict(_))
                && c.builtin_prim_at(&ic, &c.prog.core.dictionary, sel)
            {
                c.tick()?;
                if let Value::Dict(d) = &mut c.stack[slot] {
                    if let Some(old) = crate::interp::dict::insert_shared(d, k, v) {
                        drop_fast(old);
                    }
                }
                return Ok(if keep {
                    c.stack[slot].clone()
                } else {
                    Value::Nil
                });
            }
            if let (Value::Int(ki), Value::Array(a)) = (&k, &c.stack[slot]) {
                let ki = *ki as usize;
                if ki >= 1 && ki <= a.len() && c.builtin_prim_at(&ic, &c.prog.core.array, sel) {
                    c.tick()?;
                    // An Integer: nothing to drop.
                    std::mem::forget(k);
                    if let Value::Array(a) = &mut c.stack[slot] {
                        crate::interp::value::make_mut(a).set(ki - 1, v);
                    }
                    return Ok(if keep {
                        c.stack[slot].clone()
                    } else {
                        Value::Nil
                    });
                }
            }
            let base = c.stack.len();
            c.stack.push(k);
            c.stack.push(v);
            slow(c, f, base)
        });
    }
    let args: Vec<Op> = args.into_iter().map(compile).collect();
    if let VarRef::Local(i) = var {
        // An instance in a local (never one of the in-place collections): the receiver is
        // lent to the send as owned, so a Value-class `withX:` copy can reuse it.
        let i = i as usize;
        let ic2 = InlineCache::default();
        let rest = in_place_rest(var, sel, nargs, loc, keep, ic);
        return op(move |c, f| {
            let base = c.stack.len();
            for a in &args {
                let v = a.run(c, f)?;
                c.stack.push(v);
            }
            let slot = f.base + i;
            if !matches!(&c.stack[slot], Value::Object(_)) {
                return rest(c, f, base);
            }
            c.set_loc(loc);
            let mut recv = std::mem::replace(&mut c.stack[slot], Value::Nil);
            let r = c.send_owned(&ic2, &mut recv, sel, base);
            store_lent(c, slot, recv, r, keep)
        });
    }
    let rest = in_place_rest(var, sel, nargs, loc, keep, ic);
    op(move |c, f| {
        let base = c.stack.len();
        for a in &args {
            let v = a.run(c, f)?;
            c.stack.push(v);
        }
        rest(c, f, base)
    })
}

/// Finishes `x := x sel …` whose receiver was lent out of local slot `slot`: the answer goes
/// into the slot (and is answered when `keep`), or on an error the receiver goes back.
#[inline(always)]
fn store_lent(c: &mut Ctx, slot: usize, recv: Value, r: Flow, keep: bool) -> Flow {
    match r {
        Ok(v) => {
            drop_fast(recv);
            if keep {
                drop_fast(std::mem::replace(&mut c.stack[slot], fast_clone(&v)));
                Ok(v)
            } else {
                drop_fast(std::mem::replace(&mut c.stack[slot], v));
                Ok(Value::Nil)
            }
        }
        Err(e) => {
            c.stack[slot] = recv;
            Err(e)
        }
    }
}

type RestFn = dyn Fn(&mut Ctx, &Frame, usize) -> Flow + Send + Sync;

/// The general in-place update once its arguments are at `stack[base..]`.
fn in_place_rest(
    var: VarRef,
    sel: crate::interp::value::Sym,
    nargs: usize,
    loc: crate::interp::eval::code::Loc,
    keep: bool,
    ic: InlineCache,
) -> Box<RestFn> {
    Box::new(move |c, f, base| {
        let nargs_given = c.stack.len() - base;
        c.set_loc(loc);
        let mut recv = c.take_var(f, var);
        if let Some(update) = crate::interp::prims::collections::in_place(&recv, sel) {
            if nargs_given == nargs && c.lookup(&recv, sel).is_some_and(|h| h.is_prim()) {
                // The collection prim updates `recv` in place when nothing else shares it.
                let mut av = [Value::Nil, Value::Nil];
                for k in (0..nargs.min(2)).rev() {
                    av[k] = c.stack.pop().unwrap_or(Value::Nil);
                }
                let r = match c.tick() {
                    Ok(()) => update(c, &mut recv, &av[..nargs.min(2)]),
                    Err(e) => Err(e),
                };
                return match r {
                    Ok(v) => {
                        drop(recv);
                        if keep {
                            c.set_var(f, var, fast_clone(&v));
                            Ok(v)
                        } else {
                            c.set_var(f, var, v);
                            Ok(Value::Nil)
                        }
                    }
                    Err(e) => {
                        c.set_var(f, var, recv);
                        Err(Box::new(e))
                    }
                };
            }
        }
        if let VarRef::Local(i) = var {
            // Only this activation sees a local: lend it to the send.
            let r = c.send_cached(&ic, &recv, sel, base);
            store_lent(c, f.base + i as usize, recv, r, keep)
        } else {
            c.set_var(f, var, fast_clone(&recv));
            let v = c.send_cached(&ic, &recv, sel, base)?;
            c.set_var(f, var, fast_clone(&v));
            Ok(v)
        }
    })
}

fn compile_send(s: SendNode) -> Op {
    let SendNode {
        recv,
        sel,
        args,
        loc,
        pure_args,
    } = s;
    if let (Node::Var(VarRef::Local(_)), true, 1, "at:") =
        (&recv, pure_args, args.len(), sel.as_str())
    {
        return compile_local_at(recv, sel, args, loc);
    }
    if let (Node::SelfRef, 1) = (&recv, args.len()) {
        // `self sel: arg` (recursion, helpers): the argument without a dynamic call when it
        // is Integer arithmetic on locals or a constant.
        let a0 = args
            .into_iter()
            .next()
            .map(Arg::new)
            .unwrap_or(Arg::Const(Value::Nil));
        let ic = InlineCache::default();
        return op(move |c, f| {
            let v = a0.run(c, f)?;
            let base = c.stack.len();
            c.stack.push(v);
            c.set_loc(loc);
            c.send_cached(&ic, f.recv, sel, base)
        });
    }
    let args: Vec<Arg> = args.into_iter().map(Arg::new).collect();
    let ic = InlineCache::default();
    match recv {
        Node::SelfRef => match args.len() {
            0 => op(move |c, f| {
                let base = c.stack.len();
                c.set_loc(loc);
                c.send_cached(&ic, f.recv, sel, base)
            }),
            _ => op(move |c, f| {
                let base = c.stack.len();
                for a in &args {
                    let v = a.run(c, f)?;
                    c.stack.push(v);
                }
                c.set_loc(loc);
                c.send_cached(&ic, f.recv, sel, base)
            }),
        },
        Node::Var(VarRef::Local(i)) if pure_args => {
            let i = i as usize;
            op(move |c, f| {
                let base = c.stack.len();
                for a in &args {
                    let v = a.run(c, f)?;
                    c.stack.push(v);
                }
                // The receiver is a slot only this (suspended) activation can see: lend it.
                let slot = f.base + i;
                let recv = std::mem::replace(&mut c.stack[slot], Value::Nil);
                c.set_loc(loc);
                let r = c.send_cached(&ic, &recv, sel, base);
                c.stack[slot] = recv;
                r
            })
        }
        recv => {
            let r = compile(recv);
            op(move |c, f| {
                let rv = r.run(c, f)?;
                let base = c.stack.len();
                for a in &args {
                    let v = a.run(c, f)?;
                    c.stack.push(v);
                }
                c.set_loc(loc);
                c.send_cached(&ic, &rv, sel, base)
            })
        }
    }
}

/// `a at: k` on a local Array, List or Dictionary: index directly when `at:` is the primitive.
fn compile_local_at(
    recv: Node,
    sel: crate::interp::value::Sym,
    raw_args: Vec<Node>,
    loc: crate::interp::eval::code::Loc,
) -> Op {
    match LocalAt::new(recv, sel, raw_args, loc) {
        Some(la) => op(move |c, f| la.run(c, f)),
        None => walk(Node::Nil),
    }
}

/// The parts of `a at: k` with `a` a local (see [`compile_local_at`]); also a condition
/// (`(flags at: i) ifTrue: [...]`) evaluated without a dynamic call.
struct LocalAt {
    slot: usize,
    key: Arg,
    sel: crate::interp::value::Sym,
    loc: crate::interp::eval::code::Loc,
    /// The send's cache (the general path).
    ic: InlineCache,
    /// Whether `at:` is still the primitive on the receiver's class.
    prim_ic: InlineCache,
}

impl LocalAt {
    fn new(
        recv: Node,
        sel: crate::interp::value::Sym,
        mut raw_args: Vec<Node>,
        loc: crate::interp::eval::code::Loc,
    ) -> Option<LocalAt> {
        let Node::Var(VarRef::Local(i)) = recv else {
            return None;
        };
        let key = raw_args.pop().map(Arg::new)?;
        Some(LocalAt {
            slot: i as usize,
            key,
            sel,
            loc,
            ic: InlineCache::default(),
            prim_ic: InlineCache::default(),
        })
    }

    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame) -> Flow {
        let (sel, loc) = (self.sel, self.loc);
        let k = self.key.run(c, f)?;
        let slot = f.base + self.slot;
        if let Value::Int(k) = &k {
            let k = (*k as usize).wrapping_sub(1);
            match &c.stack[slot] {
                Value::Array(a)
                    if k < a.len() && c.builtin_prim_at(&self.prim_ic, &c.prog.core.array, sel) =>
                {
                    c.tick()?;
                    if let Value::Array(a) = &c.stack[slot] {
                        return Ok(fast_clone(&a[k]));
                    }
                }
                Value::List(a)
                    if k < a.len() && c.builtin_prim_at(&self.prim_ic, &c.prog.core.list, sel) =>
                {
                    c.tick()?;
                    if let Value::List(a) = &c.stack[slot] {
                        return Ok(fast_clone(&a[k]));
                    }
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
