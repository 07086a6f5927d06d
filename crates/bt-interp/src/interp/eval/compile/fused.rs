//! Fused Integer loops: `[a cmp b] whileTrue: [x := y op z. …]` where the condition and every
//! statement are Integer arithmetic on locals and literals (the `loop` benchmark's shape).
//!
//! Such a loop runs on a small register file: the locals it touches are read once from their
//! slots (all must hold Integers, else the general loop runs), literals sit in registers of
//! their own, and each step is a comparison and a few register operations with no dynamic
//! call, no Value built and no slot bounds check. The registers are written back to the slots
//! when the loop ends and before anything else can look at them: the preemption tick's slow
//! path (another process may run, an embedder hook may stop this one), and any deviation — an
//! overflow or overridden Integer arithmetic — after which the rest of the iteration and the
//! remaining ones run on the general path ([`IntSet`] statements, the [`Cond`] condition),
//! which raises or promotes exactly as the unfused loop would.

use std::sync::atomic::Ordering;

use crate::interp::eval::code::{BinOp, Node, VarRef};
use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::Value;

use super::op::{op, Op, Sub};
use super::operand::{int_cmp_op, int_src, Cond, IntSet};

/// Most registers a fused loop uses (locals and literals together).
const MAX_REGS: usize = 16;

/// A fusable statement `x := a op b`: destination register, operator, operand registers.
#[derive(Clone, Copy)]
struct Step {
    d: u8,
    op: BinOp,
    a: u8,
    b: u8,
}

/// Whether `n` is `x := a op b` (op `+ - *`, operands Integer locals or literals, `x` a local).
fn fusable_stmt(n: &Node) -> bool {
    match n {
        Node::SetVar(VarRef::Local(_), e) => match &**e {
            Node::Bin(b) => {
                matches!(b.op, BinOp::Add | BinOp::Sub | BinOp::Mul)
                    && simple_src(&b.lhs)
                    && simple_src(&b.rhs)
            }
            _ => false,
        },
        _ => false,
    }
}

fn simple_src(n: &Node) -> bool {
    matches!(n, Node::Const(Value::Int(_)) | Node::Var(VarRef::Local(_)))
}

/// Whether a `whileTrue:`/`whileFalse:` loop with this condition and body can be fused.
pub(super) fn fusable(cond: &Node, body: &Node) -> bool {
    let cond_ok = match cond {
        Node::Bin(b) => int_cmp_op(b.op) && simple_src(&b.lhs) && simple_src(&b.rhs),
        _ => false,
    };
    let body_ok = match body {
        Node::Seq(v) => !v.is_empty() && v.iter().all(fusable_stmt),
        n => fusable_stmt(n),
    };
    cond_ok && body_ok
}

/// The register file's layout while it is being built.
#[derive(Default)]
struct Regs {
    /// Local slot of each local register (registers `0..slots.len()`).
    slots: Vec<usize>,
    /// Literal values (registers after the locals; numbered once all locals are known).
    lits: Vec<i64>,
}

/// An operand before numbering: a local slot or a literal index.
#[derive(Clone, Copy)]
enum Src {
    Slot(usize),
    Lit(usize),
}

impl Regs {
    fn src(&mut self, n: &Node) -> Src {
        match n {
            Node::Var(VarRef::Local(s)) => Src::Slot(self.slot(*s as usize)),
            Node::Const(Value::Int(i)) => {
                self.lits.push(*i);
                Src::Lit(self.lits.len() - 1)
            }
            _ => unreachable!("checked by fusable()"),
        }
    }
    fn slot(&mut self, s: usize) -> usize {
        match self.slots.iter().position(|x| *x == s) {
            Some(r) => r,
            None => {
                self.slots.push(s);
                self.slots.len() - 1
            }
        }
    }
    fn number(&self, s: Src) -> u8 {
        match s {
            Src::Slot(r) => r as u8,
            Src::Lit(k) => (self.slots.len() + k) as u8,
        }
    }
}

/// Compiles a loop [`fusable`] accepted. `None` when it needs more than [`MAX_REGS`]
/// registers (the caller then compiles it as usual; the nodes are handed back).
pub(super) fn compile_fused(
    cond: Node,
    body: Node,
    while_true: bool,
    loc: crate::interp::eval::code::Loc,
    sub: Sub,
) -> Result<Op, (Node, Node)> {
    let stmts: Vec<&Node> = match &body {
        Node::Seq(v) => v.iter().collect(),
        n => vec![n],
    };
    let mut regs = Regs::default();
    let (cop, ca, cb) = match &cond {
        Node::Bin(b) => (b.op, regs.src(&b.lhs), regs.src(&b.rhs)),
        _ => return Err((cond, body)),
    };
    let mut raw = Vec::with_capacity(stmts.len());
    for s in &stmts {
        if let Node::SetVar(VarRef::Local(d), e) = s {
            if let Node::Bin(b) = &**e {
                let (a, bb) = (regs.src(&b.lhs), regs.src(&b.rhs));
                let d = regs.slot(*d as usize);
                raw.push((d, b.op, a, bb));
            }
        }
    }
    if regs.slots.len() + regs.lits.len() > MAX_REGS {
        return Err((cond, body));
    }
    let steps: Box<[Step]> = raw
        .iter()
        .map(|&(d, op, a, b)| Step {
            d: d as u8,
            op,
            a: regs.number(a),
            b: regs.number(b),
        })
        .collect();
    let (ca, cb) = (regs.number(ca), regs.number(cb));
    let Regs { slots, lits } = regs;
    // The general path: the same statements as `IntSet`s, the condition as a `Cond`.
    let general: Box<[IntSet]> = match body {
        Node::Seq(v) => v.into_iter().filter_map(|n| int_set_of(n, sub)).collect(),
        n => int_set_of(n, sub).into_iter().collect(),
    };
    let cond = Cond::new(cond, sub);
    Ok(op(move |c, f| {
        let mut r = [0i64; MAX_REGS];
        // Load the locals; any non-Integer: the general loop from the start.
        for (k, &s) in slots.iter().enumerate() {
            match &c.stack[f.base + s] {
                Value::Int(i) => r[k] = *i,
                _ => return general_loop(c, f, &cond, &general, 0, while_true, loc),
            }
        }
        r[slots.len()..slots.len() + lits.len()].copy_from_slice(&lits);
        let store = |c: &mut Ctx, r: &[i64; MAX_REGS]| {
            for (k, &s) in slots.iter().enumerate() {
                if let Value::Int(old) = &mut c.stack[f.base + s] {
                    *old = r[k];
                }
            }
        };
        loop {
            if c.prog.arith_overridden.load(Ordering::Relaxed) {
                store(c, &r);
                return general_loop(c, f, &cond, &general, 0, while_true, loc);
            }
            let (x, y) = (
                r[ca as usize & (MAX_REGS - 1)],
                r[cb as usize & (MAX_REGS - 1)],
            );
            let t = match cop {
                BinOp::Lt => x < y,
                BinOp::Le => x <= y,
                BinOp::Gt => x > y,
                BinOp::Ge => x >= y,
                BinOp::Eq | BinOp::StrictEq => x == y,
                _ => x != y,
            };
            if t != while_true {
                store(c, &r);
                return Ok(Value::Nil);
            }
            for (k, s) in steps.iter().enumerate() {
                let (a, b) = (
                    r[s.a as usize & (MAX_REGS - 1)],
                    r[s.b as usize & (MAX_REGS - 1)],
                );
                let z = match s.op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    _ => a.checked_mul(b),
                };
                match z {
                    Some(z) => r[s.d as usize & (MAX_REGS - 1)] = z,
                    None => {
                        // Overflow: this statement and the rest of the loop take the general
                        // path (which answers a LargeInteger or raises, as unfused).
                        store(c, &r);
                        return general_loop(c, f, &cond, &general, k, while_true, loc);
                    }
                }
            }
            if c.reductions <= 1 {
                // The tick's slow path may run other processes or stop this one: the slots
                // hold the current values first.
                store(c, &r);
            }
            c.tick()?;
        }
    }))
}

/// A statement [`fusable`] accepted, as an [`IntSet`].
fn int_set_of(n: Node, sub: Sub) -> Option<IntSet> {
    let Node::SetVar(VarRef::Local(d), e) = n else {
        return None;
    };
    let Node::Bin(b) = &*e else {
        return None;
    };
    let (op, l, r) = (b.op, int_src(&b.lhs)?, int_src(&b.rhs)?);
    Some(IntSet {
        d: d as usize,
        op,
        l,
        r,
        slow: (sub.expr)(*e),
    })
}

/// The unfused loop, entered before statement `from` of an iteration (0: before the
/// condition).
fn general_loop(
    c: &mut Ctx,
    f: &Frame,
    cond: &Cond,
    stmts: &[IntSet],
    from: usize,
    while_true: bool,
    loc: crate::interp::eval::code::Loc,
) -> Flow {
    if from > 0 {
        for s in &stmts[from..] {
            s.run(c, f)?;
        }
        c.tick()?;
    }
    loop {
        let go = cond.loop_truth(c, f, while_true, loc)? == while_true;
        if !go {
            return Ok(Value::Nil);
        }
        for s in stmts {
            s.run(c, f)?;
        }
        c.tick()?;
    }
}
