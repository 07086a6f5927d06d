//! Closure compilation: the hot node kinds become nested Rust closures specialised on their
//! shape (a send to `self` with one argument, `local < literal`, a local receiver lent to the
//! send …), so evaluating them needs no dispatch on the node kind and no re-checks. Every
//! node kind has a compiled form: a compiled body never enters the tree walker
//! [`Ctx::exec`], which is kept as the reference semantics (`mode`: `BT_EVAL=walk` runs
//! everything on it, `BT_EVAL=strict` makes an entry into it an error).
//!
//! Files: this one (expressions, statements, sends), `op` (the compiled forms `Op` and `Eff`
//! that `FnCode` and the shape files hold: what the evaluator names instead of this
//! compiler), `fused` (Integer while loops on a register file), `guard` (method bodies
//! `n < 2 ifTrue: [..] ifFalse: [..]` run inline by a self-send's activation), `operand`
//! (Integer operands, conditions, arguments and `local at: k` read without a dynamic call,
//! and the general send over such arguments), `operand_of` (choosing those forms and guards
//! for a node, which needs `compile`), `class_send` (a class name's primitive called without
//! the general send), `selfsend` (one-argument self-sends run inline, also as the operands
//! of a binary operator), `shapes` (monomorphic closures for the commonest Integer statement
//! and loop shapes), `update` (in-place updates of a local collection or String), `mode`
//! (`BT_EVAL`). None of them names this file: the ones that compile sub-expressions get
//! [`compile`] and `compile_effect` handed in (`op::Sub`, this file's `SUB`). This file also
//! holds the rarer kinds: cast, `super` and cascade sends, literals with evaluated parts,
//! rebinding and class-variable fields, `match:` and destructuring.

use std::sync::Arc;

use std::sync::atomic::Ordering;

use crate::interp::error::ErrorKind;
use crate::interp::eval::code::{
    BinOp, CascadeNode, FieldMode, FieldNode, FnCode, IfKind, InterpPart, Loc, MatchNode, Node,
    Pat, SendNode, UpvalSrc, VarRef,
};
use crate::interp::eval::exec::{drop_fast, fast_clone};
use crate::interp::eval::field::{class_var_get, class_var_set, field_clone};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Closure, Ctx, Frame, Piece, Unwind, VarCell};
use crate::value::dict::Dict;
use crate::value::{Ref, Sym, Value};
use smallvec::SmallVec;

mod class_send;
mod fused;
mod guard;
mod mode;
mod op;
mod operand;
mod operand_of;
mod selfsend;
mod shapes;
mod store_loop;
mod update;

pub(crate) use mode::{eval_mode, node_kind, EvalMode};
pub(crate) use op::Decided;
pub use op::Guard;
use op::{op, Eff, Sub};
pub use op::{Op, TailSelfSend};
use operand::*;
use operand_of::compile_local_at;
use update::*;

/// The tree walker over this node (`BT_EVAL=walk` only).
fn walk(n: Node) -> Op {
    op(move |c, f| c.exec(&n, f))
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
            match shapes::int_set(d as usize, opk, &l, &r, slow) {
                Ok(eff) => eff,
                Err(slow) => Eff::IntSet(Box::new(IntSet {
                    d: d as usize,
                    op: opk,
                    l,
                    r,
                    slow,
                })),
            }
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
            let recv = Cond::new(n.recv, SUB);
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
        Node::InPlace(p) if p.name != "++" => Eff::Op(compile_in_place(*p, false, SUB)),
        Node::InPlace(p) => Eff::Op(compile_concat(*p, false, SUB)),
        other => Eff::Op(compile(other)),
    }
}

/// Compiles a function body (nested blocks are compiled already).
pub fn compile_body(code: &mut FnCode) {
    let body = std::mem::take(&mut code.body);
    // `BT_EVAL=walk`: every body on the tree walker alone, with none of the compiled shapes
    // — the oracle the goldens are also run through.
    if eval_mode() == EvalMode::Walk {
        if code.is_toplevel {
            let stmts = match body {
                Node::Seq(v) => v,
                other => vec![other],
            };
            code.stmts = stmts.into_iter().map(walk).collect();
        } else {
            code.op = walk(body);
        }
        return;
    }
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
        match Guard::of(body, SUB) {
            Ok(mut g) => {
                g.set_params(code.nparams);
                let g = Arc::new(g);
                let g2 = g.clone();
                code.op = op(move |c, f| g2.run(c, f));
                code.guard = Some(g);
            }
            Err(body) => code.op = compile(body),
        }
    } else {
        // Top-level units run statement by statement (a `^` ends one statement).
        let stmts = match body {
            Node::Seq(v) => v,
            other => vec![other],
        };
        code.stmts = stmts.into_iter().map(compile).collect();
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

/// The compiler's entry points as the shape files get them (see [`Sub`]).
const SUB: Sub = Sub {
    expr: compile,
    effect: compile_effect,
};

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
                let (l2, r2) = (l, r);
                let general = op(move |c, f| {
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
                return match shapes::int_value(opk, &l2, &r2, general) {
                    Ok(o) | Err(o) => o,
                };
            }
            selfsend::compile_bin(b.lhs, b.rhs, opk, sel, loc, SUB)
        }
        Node::If(n) => {
            let n = *n;
            let (kind, sel, loc) = (n.kind, n.sel, n.loc);
            let recv = Cond::new(n.recv, SUB);
            // Branches that are a local or a constant run without a dynamic call.
            let a = Arg::new(n.a, SUB);
            let b = Arg::new(n.b, SUB);
            let parts = shapes::IfParts {
                kind,
                sel,
                loc,
                a,
                b,
            };
            let (recv, parts) = match shapes::int_if(recv, parts) {
                Ok(o) => return o,
                Err(back) => back,
            };
            let shapes::IfParts { a, b, .. } = parts;
            op(move |c, f| {
                let t = match recv.eval(c, f)? {
                    Ok(t) => t,
                    Err(r) => return non_boolean(c, &r, sel, loc),
                };
                if_branch(c, f, kind, t, &a, &b)
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
            let crate::interp::eval::code::WhileNode {
                cond,
                body,
                while_true,
                loc,
                ..
            } = *w;
            let (cond, body) = if fused::fusable(&cond, &body) {
                match fused::compile_fused(cond, body, while_true, loc, SUB) {
                    Ok(o) => return o,
                    Err(back) => back,
                }
            } else {
                (cond, body)
            };
            let cond = Cond::new(cond, SUB);
            let body = compile_effect(body);
            let parts = shapes::WhileParts {
                while_true,
                loc,
                body,
            };
            let (cond, body) = match shapes::int_while(cond, parts) {
                Ok(o) => return o,
                Err((cond, parts)) => (cond, parts.body),
            };
            op(move |c, f| loop {
                let go = cond.loop_truth(c, f, while_true, loc)? == while_true;
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
            op(move |c, f| {
                let other = count.run(c, f)?;
                match repeat_count(&other) {
                    Some(n) => {
                        for _ in 0..n {
                            body.run(c, f)?;
                            c.tick()?;
                        }
                        Ok(Value::Nil)
                    }
                    None => {
                        c.set_loc(loc);
                        let sel = c.prog.syms.times_repeat;
                        Err(c.dnu_error(&other, sel).into())
                    }
                }
            })
        }
        Node::ToDo(t) => {
            let t = *t;
            let (var, loc) = (t.var, t.loc);
            let from = compile(t.from);
            let to = compile(t.to);
            let by = t.by.map(compile);
            // `[:j | a := a at: j + k put: v]` runs as a fused store (`store_loop`); each
            // body kind gets a loop closure of its own.
            match store_loop::StoreBody::of(var, t.body, SUB) {
                Ok(store) => to_do(from, to, by, var, loc, store),
                Err(body) => to_do(from, to, by, var, loc, compile_effect(body)),
            }
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
                            ErrorKind::RuntimeError,
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
        Node::InPlace(p) if p.name != "++" => compile_in_place(*p, true, SUB),
        Node::InPlace(p) => compile_concat(*p, true, SUB),
        Node::Field(fd)
            if fd.mode == FieldMode::Value
                && fd.value.is_none()
                && matches!(fd.recv, Node::SelfRef) =>
        {
            let (name, idx) = (fd.name, fd.idx as usize);
            op(move |c, f| {
                if let Value::Object(inst) = f.recv {
                    if inst.class.field_names.get(idx) == Some(&name) {
                        return Ok(field_clone(&inst.fields, idx));
                    }
                }
                c.read_field(f.recv, name, idx)
            })
        }
        Node::Field(fd) if fd.mode == FieldMode::Actor => compile_actor_field(*fd),
        Node::Field(fd) => compile_field(*fd),
        Node::Global(name, loc) => {
            // A class name: resolved once per program epoch (the class table only changes
            // with a bump of the epoch).
            let cache = crate::interp::eval::hit::GlobalCache::default();
            op(move |c, _| {
                let epoch = c.prog.epoch.load(Ordering::Acquire);
                if let Some(k) = cache.get(epoch) {
                    return Ok(Value::Class(k.clone()));
                }
                c.set_loc(loc);
                let v = c.global(name)?;
                if let Value::Class(k) = &v {
                    cache.fill(&*c.prog, epoch, k.clone());
                }
                Ok(v)
            })
        }
        Node::List(items) if !items.is_empty() => {
            let ops: Vec<Op> = items.into_iter().map(compile).collect();
            op(move |c, f| {
                let mut v = imbl::Vector::new();
                for o in &ops {
                    v.push_back(o.run(c, f)?);
                }
                Ok(Value::List(crate::value::Ref::new(v)))
            })
        }
        Node::List(_) => compile_empty_list(),
        Node::Array(items) => compile_array(items),
        Node::Dict(pairs) => compile_dict(pairs),
        Node::Cons(c) => {
            let (head, tail, loc) = *c;
            compile_cons(head, tail, loc)
        }
        Node::Interp(parts) => compile_interp(parts),
        Node::Super(s) => compile_super(*s),
        Node::Cast(s) => compile_cast(*s),
        Node::Cascade(n) => compile_cascade(*n),
        Node::Match(m) => compile_match(*m),
        Node::Destructure(d) => {
            let (pat, value, loc) = *d;
            compile_destructure(pat, value, loc)
        }
    }
}

/// `self.name` / `self.name := e` on the running actor's state slots.
fn compile_actor_field(mut fd: crate::interp::eval::code::FieldNode) -> Op {
    let (name, i, loc) = (fd.name, fd.idx as usize, fd.loc);
    if crate::interp::eval::field::self_update(&fd).is_some() {
        // `self.name := self.name sel: args` with an in-place selector: the arguments
        // compiled, the read and the update done by `Ctx::actor_field_update`.
        let Some(Node::Send(mut send)) = fd.value.take() else {
            return Op::default();
        };
        let Node::Field(read) = std::mem::take(&mut send.recv) else {
            return Op::default();
        };
        let args: Vec<Op> = std::mem::take(&mut send.args)
            .into_iter()
            .map(compile)
            .collect();
        return op(move |c, f| {
            let recv = c.actor_field_get(f, &read)?;
            let mut vals: smallvec::SmallVec<[Value; 2]> = smallvec::SmallVec::new();
            for a in &args {
                vals.push(a.run(c, f)?);
            }
            c.actor_field_update(f, &fd, &send, recv, &vals)
        });
    }
    match fd.value.take() {
        None => op(move |c, f| c.actor_field_get(f, &fd)),
        Some(e) => {
            let e = compile(e);
            op(move |c, f| {
                let v = e.run(c, f)?;
                c.actor_field_set(f, name, i, loc, v)
            })
        }
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
        code: crate::interp::block_code::code_of(code),
        recv: f.recv.clone(),
        upvals,
        home: f.home,
        mclass: f.mclass.map(crate::interp::eval::hit::class_arc),
        mside: f.mside,
        serial,
    }))
}

/// `from to: to [by: by] do: body` with the loop variable `var`: Integer bounds run the loop
/// here (the variable written in place, one reduction per iteration), anything else the
/// generic loop over the body's general statement.
fn to_do<B: store_loop::LoopBody>(
    from: Op,
    to: Op,
    by: Option<Op>,
    var: Option<VarRef>,
    loc: crate::interp::eval::code::Loc,
    body: B,
) -> Op {
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
                body.step(c, f, i)?;
                c.tick()?;
                match i.checked_add(s) {
                    Some(n) => i = n,
                    None => break,
                }
            }
            return Ok(Value::Nil);
        }
        c.set_loc(loc);
        let body = body.general();
        c.generic_loop(&a, &b, &s, var, &|c, f| body.run(c, f), f)
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
        return compile_local_at(recv, sel, args, loc, SUB);
    }
    if let (Node::SelfRef, 1) = (&recv, args.len()) {
        // `self sel: arg` (recursion, helpers): the argument without a dynamic call when it
        // is Integer arithmetic on locals or a constant.
        let a0 = args
            .into_iter()
            .next()
            .map(|n| Arg::new(n, SUB))
            .unwrap_or(Arg::Const(Value::Nil));
        let s = selfsend::SelfSend::new(a0, sel, loc);
        return op(move |c, f| s.run(c, f));
    }
    let args: Vec<Arg> = args.into_iter().map(|n| Arg::new(n, SUB)).collect();
    let ic = InlineCache::default();
    match recv {
        Node::SelfRef => match args.len() {
            0 => op(move |c, f| {
                let base = c.stack.len();
                c.set_loc(loc);
                c.send_cached_compiled(&ic, f.recv, sel, base)
            }),
            _ => op(move |c, f| {
                let base = c.stack.len();
                for a in &args {
                    let v = a.run(c, f)?;
                    c.stack.push(v);
                }
                c.set_loc(loc);
                c.send_cached_compiled(&ic, f.recv, sel, base)
            }),
        },
        Node::Var(VarRef::Local(i)) if pure_args && args.is_empty() => {
            // `p x`: a unary send to a local, a Value-class getter read in place.
            let i = i as usize;
            op(move |c, f| {
                let slot = f.base + i;
                if let Some(k) = c.cached_getter(&ic, &c.stack[slot]) {
                    c.tick()?;
                    if let Value::Object(inst) = &c.stack[slot] {
                        return Ok(field_clone(&inst.fields, k));
                    }
                }
                let base = c.stack.len();
                let recv = std::mem::replace(&mut c.stack[slot], Value::Nil);
                c.set_loc(loc);
                let r = c.send_cached(&ic, &recv, sel, base);
                // The slot holds the Nil put there: no drop call for it.
                crate::value::drop_fast(std::mem::replace(&mut c.stack[slot], recv));
                r
            })
        }
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
                // The slot holds the Nil put there: no drop call for it.
                crate::value::drop_fast(std::mem::replace(&mut c.stack[slot], recv));
                r
            })
        }
        // `Host inc: s`: a class name's primitive without the general send (`class_send`).
        Node::Global(..) if args.len() <= 2 => class_send::compile(compile(recv), sel, args, loc),
        recv => {
            let r = compile(recv);
            op(move |c, f| {
                let rv = r.run(c, f)?;
                send_general(c, f, &ic, &rv, sel, &args, loc)
            })
        }
    }
}

// ---------- the other sends: cast, `super`, cascade ----------
// Each evaluates its parts in the tree walker's order (receiver, then the arguments left to
// right) and calls the same context operation (`Ctx::cast`, `Ctx::super_send`,
// `Ctx::send_impl`).

/// The arguments of one message, evaluated in order.
struct Args(Box<[Op]>);

impl Args {
    fn new(args: Vec<crate::interp::eval::code::Node>) -> Args {
        Args(args.into_iter().map(compile).collect())
    }

    #[inline]
    fn eval(&self, c: &mut Ctx, f: &Frame) -> Result<SmallVec<[Value; 4]>, Box<Unwind>> {
        let mut v = SmallVec::with_capacity(self.0.len());
        for a in self.0.iter() {
            v.push(a.run(c, f)?);
        }
        Ok(v)
    }
}

/// A send's receiver and arguments compiled, with its selector and location.
fn send_parts(s: SendNode) -> (Op, Sym, Args, Loc) {
    let SendNode {
        recv,
        sel,
        args,
        loc,
        ..
    } = s;
    (compile(recv), sel, Args::new(args), loc)
}

/// `recv sel: args!` as a statement: queued to an actor, a synchronous send to anything
/// else; answers nil.
fn compile_cast(s: SendNode) -> Op {
    let (recv, sel, args, loc) = send_parts(s);
    op(move |c, f| {
        let r = recv.run(c, f)?;
        let a = args.eval(c, f)?;
        c.set_loc(loc);
        c.cast(&r, sel, &a)?;
        Ok(Value::Nil)
    })
}

/// `super sel: args`: the lookup starts above the method's defining class.
fn compile_super(s: SendNode) -> Op {
    let (recv, sel, args, loc) = send_parts(s);
    op(move |c, f| {
        let r = recv.run(c, f)?;
        let a = args.eval(c, f)?;
        c.set_loc(loc);
        c.super_send(f.mclass, f.mside, &r, sel, &a)
    })
}

/// `recv m1; m2; …`: every message to the one receiver; answers the last reply.
fn compile_cascade(n: CascadeNode) -> Op {
    let recv = compile(n.recv);
    let parts: Box<[(Sym, Args, Loc)]> = n
        .parts
        .into_iter()
        .map(|(sel, args, loc)| (sel, Args::new(args), loc))
        .collect();
    op(move |c, f| {
        let r = recv.run(c, f)?;
        let mut last = Value::Nil;
        for (sel, args, loc) in parts.iter() {
            let a = args.eval(c, f)?;
            c.set_loc(*loc);
            last = c.send_impl(&r, *sel, &a)?;
        }
        Ok(last)
    })
}

// ---------- literals with evaluated parts ----------
// `#(a, b)` (Array), `#[]` (an empty List), `#{k => v}` (Dictionary), `#(head | tail)` (a
// List cons) and `"… {e} …"` (interpolation): the parts left to right, as the walker does.

/// The Dictionary a literal of `len` pairs fills, sized once in the form its first key
/// asks for.
pub(crate) fn dict_for_literal(len: usize, first_key: &Value) -> Dict {
    Dict::with_capacity(len, matches!(first_key, Value::Int(_)))
}

fn compile_array(items: Vec<Node>) -> Op {
    let ops: Box<[Op]> = items.into_iter().map(compile).collect();
    op(move |c, f| {
        let mut v = Vec::with_capacity(ops.len());
        for o in ops.iter() {
            v.push(o.run(c, f)?);
        }
        Ok(Value::Array(Ref::new(v.into())))
    })
}

fn compile_empty_list() -> Op {
    op(|_, _| Ok(Value::List(Ref::new(imbl::Vector::new()))))
}

fn compile_dict(pairs: Vec<(Node, Node)>) -> Op {
    let pairs: Box<[(Op, Op)]> = pairs
        .into_iter()
        .map(|(k, v)| (compile(k), compile(v)))
        .collect();
    op(move |c, f| {
        let mut m = Dict::new();
        for (i, (k, v)) in pairs.iter().enumerate() {
            let k = k.run(c, f)?;
            if i == 0 {
                m = dict_for_literal(pairs.len(), &k);
            }
            let v = v.run(c, f)?;
            m.insert(k, v);
        }
        Ok(Value::Dict(Ref::new(m)))
    })
}

fn compile_cons(head: Node, tail: Node, loc: Loc) -> Op {
    let (head, tail) = (compile(head), compile(tail));
    op(move |c, f| {
        let h = head.run(c, f)?;
        let t = tail.run(c, f)?;
        c.cons_list(h, &t, loc)
    })
}

enum Part {
    Lit(Box<str>),
    Expr(Op),
}

/// `"… {e} …"`: the literal pieces and each expression's `displayString`, concatenated.
fn compile_interp(parts: Vec<InterpPart>) -> Op {
    let parts: Box<[Part]> = parts
        .into_iter()
        .map(|p| match p {
            InterpPart::Lit(t) => Part::Lit(t.into()),
            InterpPart::Expr(e) => Part::Expr(compile(e)),
        })
        .collect();
    op(move |c, f| {
        let mut pieces = Vec::with_capacity(parts.len());
        for p in parts.iter() {
            pieces.push(match p {
                Part::Lit(t) => Piece::Lit(t),
                Part::Expr(e) => {
                    let v = e.run(c, f)?;
                    Piece::Shown(c.display_value(v)?)
                }
            });
        }
        Ok(c.interpolate(&pieces)?)
    })
}

// ---------- rebinding and class-variable fields ----------

/// A field node other than `self.x` of a Value instance and an actor's slot: a Value
/// instance's field read through the rebinding self variable, a TestCase's rebinding
/// `self.x` / `self.x := e` (a copy of `self` with the field set, stored back into the self
/// variable), and a class method's class variables — the walker's operations
/// (`eval/field.rs`).
fn compile_field(fd: FieldNode) -> Op {
    let FieldNode {
        name,
        idx,
        mode,
        recv,
        value,
        loc,
    } = fd;
    let idx = idx as usize;
    // `self`, or the variable a rebinding method keeps it in.
    let self_var = match &recv {
        Node::Var(r) => Some(*r),
        _ => None,
    };
    let recv = compile(recv);
    match (mode, value) {
        (FieldMode::ClassVar, None) => op(move |c, f| {
            let r = recv.run(c, f)?;
            let owner = c.class_var_owner(f, &r, name, loc)?;
            Ok(class_var_get(&owner, name))
        }),
        (FieldMode::ClassVar, Some(e)) => {
            let e = compile(e);
            op(move |c, f| {
                let r = recv.run(c, f)?;
                let owner = c.class_var_owner(f, &r, name, loc)?;
                let v = e.run(c, f)?;
                class_var_set(&owner, name, &v);
                Ok(v)
            })
        }
        (_, None) => op(move |c, f| {
            let r = recv.run(c, f)?;
            c.read_field(&r, name, idx)
        }),
        (_, Some(e)) => {
            let e = compile(e);
            op(move |c, f| {
                let r = recv.run(c, f)?;
                let v = e.run(c, f)?;
                let updated = c.with_field(&r, name, v.clone())?;
                if let Some(sv) = self_var {
                    c.set_var(f, sv, updated);
                }
                Ok(v)
            })
        }
    }
}

// ---------- `match:` and destructuring ----------
// The patterns stay data, matched by the walker's code (`eval/pattern.rs`); the scrutinee,
// the guards and the arm bodies are compiled.

struct Arm {
    pat: Pat,
    guard: Option<Op>,
    body: Op,
}

fn compile_match(m: MatchNode) -> Op {
    let recv = compile(m.recv);
    let loc = m.loc;
    let arms: Box<[Arm]> = m
        .arms
        .into_iter()
        .map(|a| Arm {
            pat: a.pat,
            guard: a.guard.map(compile),
            body: compile(a.body),
        })
        .collect();
    op(move |c, f| {
        let v = recv.run(c, f)?;
        for arm in arms.iter() {
            if !c.pat_matches(&arm.pat, &v, f)? {
                continue;
            }
            if let Some(g) = &arm.guard {
                if !Ctx::guard_passed(g.run(c, f))? {
                    continue;
                }
            }
            return arm.body.run(c, f);
        }
        c.no_arm_matched(&v, loc)
    })
}

fn compile_destructure(pat: Pat, value: Node, loc: Loc) -> Op {
    let value = compile(value);
    op(move |c, f| {
        let v = value.run(c, f)?;
        c.destructure(&pat, v, loc, f)
    })
}

/// The iteration count of an inlined `timesRepeat:`: an Integer receiver (a Character is one,
/// by its code point; a negative count runs no iteration), None for any other receiver.
pub(crate) fn repeat_count(v: &Value) -> Option<u128> {
    use num_traits::{Signed, ToPrimitive};
    match v {
        Value::Int(n) => Some((*n).max(0) as u128),
        Value::Char(c) => Some(c.get() as u128),
        Value::BigInt(b) if b.is_negative() => Some(0),
        Value::BigInt(b) => Some(b.to_u128().unwrap_or(u128::MAX)),
        _ => None,
    }
}
