//! Node evaluation: variables, sends (with Integer fast paths), literals, fields, blocks, and
//! the inlined control-flow selectors

use std::sync::Arc;

use crate::interp::error::ErrorKind;
use crate::interp::eval::code::{BinOp, IfKind, InterpPart, Loc, Node, VarRef, NO_FILE};
use crate::interp::eval::{Ctx, Flow, Frame, Unwind, VarCell};
use crate::value::{Ref, Sym, Value};

impl Ctx {
    #[inline]
    pub(crate) fn set_loc(&mut self, loc: Loc) {
        if loc.file != NO_FILE {
            self.cur_loc = loc;
        }
    }

    #[inline]
    pub(crate) fn get_var(&self, f: &Frame, r: VarRef) -> Value {
        match r {
            VarRef::Local(i) => fast_clone(&self.stack[f.base + i as usize]),
            VarRef::Cell(i) => self.cells[f.cbase + i as usize].get_with(self.owner, fast_clone),
            VarRef::Upval(i) => f.upvals[i as usize].get_with(self.owner, fast_clone),
            VarRef::Pending(_) => Value::Nil,
        }
    }

    #[inline(always)]
    pub(crate) fn set_var(&mut self, f: &Frame, r: VarRef, v: Value) {
        match r {
            VarRef::Local(i) => {
                drop_fast(std::mem::replace(&mut self.stack[f.base + i as usize], v))
            }
            VarRef::Cell(i) => drop_fast(self.cells[f.cbase + i as usize].replace(self.owner, v)),
            VarRef::Upval(i) => drop_fast(f.upvals[i as usize].replace(self.owner, v)),
            VarRef::Pending(_) => {}
        }
    }

    /// Binds an inlined block parameter: a captured one gets a fresh cell per evaluation, so
    /// closures created in different iterations see different variables.
    #[inline(always)]
    pub(crate) fn bind_param(&mut self, f: &Frame, r: VarRef, v: Value) {
        match r {
            VarRef::Cell(i) => {
                self.cells[f.cbase + i as usize] = Arc::new(VarCell::owned(v, self.owner))
            }
            _ => self.set_var(f, r, v),
        }
    }

    pub(crate) fn exec_seq(&mut self, nodes: &[Node], f: &Frame) -> Flow {
        let Some((last, init)) = nodes.split_last() else {
            return Ok(Value::Nil);
        };
        for n in init {
            self.exec_effect(n, f)?;
        }
        self.exec(last, f)
    }

    /// Evaluates a node whose value is not used (statements, loop bodies).
    #[inline]
    pub(crate) fn exec_effect(&mut self, n: &Node, f: &Frame) -> Result<(), Box<Unwind>> {
        match n {
            Node::SetVar(r, e) => {
                let v = self.exec(e, f)?;
                self.set_var(f, *r, v);
            }
            Node::Seq(v) => {
                for x in v {
                    self.exec_effect(x, f)?;
                }
            }
            _ => drop_fast(self.exec(n, f)?),
        }
        Ok(())
    }

    /// Evaluates a condition: comparisons of Integer locals and literals need no Value.
    #[inline]
    fn exec_cond(&mut self, n: &Node, f: &Frame) -> Flow {
        if let Node::Bin(b) = n {
            if let (Some(x), Some(y)) = (self.peek_int(&b.lhs, f), self.peek_int(&b.rhs, f)) {
                if let Some(v) = self.int_op(b.op, x, y) {
                    return Ok(v);
                }
            }
        }
        self.exec(n, f)
    }

    /// The tree walker: evaluates `n` directly. The reference semantics; only bodies run
    /// under `BT_EVAL=walk` come here (compiled bodies never do, and under `BT_EVAL=strict`
    /// an entry is an error).
    pub(crate) fn exec(&mut self, n: &Node, f: &Frame) -> Flow {
        if crate::interp::eval::compile::eval_mode()
            == crate::interp::eval::compile::EvalMode::Strict
        {
            return self.walker_entered(n);
        }
        match n {
            Node::Nil => Ok(Value::Nil),
            Node::Const(v) => Ok(fast_clone(v)),
            Node::SelfRef => Ok(fast_clone(f.recv)),
            Node::Var(r) => Ok(self.get_var(f, *r)),
            Node::SetVar(r, e) => {
                let v = self.exec(e, f)?;
                self.set_var(f, *r, fast_clone(&v));
                Ok(v)
            }
            Node::Seq(v) => self.exec_seq(v, f),
            Node::Send(s) => {
                if let (Node::Var(VarRef::Local(i)), true) = (&s.recv, s.pure_args) {
                    // The receiver is a stack slot only this (suspended) activation can see:
                    // lend it to the send instead of copying it.
                    let base = self.stack.len();
                    for a in &s.args {
                        let v = self.exec(a, f)?;
                        self.stack.push(v);
                    }
                    let slot = f.base + *i as usize;
                    let recv = std::mem::replace(&mut self.stack[slot], Value::Nil);
                    self.set_loc(s.loc);
                    let r = self.send_at(&recv, s.sel, base);
                    self.stack[slot] = recv;
                    return r;
                }
                let owned;
                let recv: &Value = match &s.recv {
                    Node::SelfRef => f.recv,
                    r => {
                        owned = self.exec(r, f)?;
                        &owned
                    }
                };
                let base = self.stack.len();
                for a in &s.args {
                    let v = self.exec(a, f)?;
                    self.stack.push(v);
                }
                self.set_loc(s.loc);
                self.send_at(recv, s.sel, base)
            }
            Node::Bin(b) => {
                if let (Some(x), Some(y)) = (self.peek_int(&b.lhs, f), self.peek_int(&b.rhs, f)) {
                    if let Some(v) = self.int_op(b.op, x, y) {
                        return Ok(v);
                    }
                }
                let l = self.exec(&b.lhs, f)?;
                let r = self.exec(&b.rhs, f)?;
                match (l, r) {
                    (Value::Int(x), Value::Int(y)) => match self.int_op(b.op, x, y) {
                        Some(v) => Ok(v),
                        None => {
                            self.set_loc(b.loc);
                            self.send_impl(&Value::Int(x), b.sel, &[Value::Int(y)])
                        }
                    },
                    (l, r) => {
                        self.set_loc(b.loc);
                        self.send_impl(&l, b.sel, std::slice::from_ref(&r))
                    }
                }
            }
            Node::If(n) => {
                let t = match self.exec_cond(&n.recv, f)? {
                    Value::True => true,
                    Value::False => false,
                    r => {
                        self.set_loc(n.loc);
                        let nargs = crate::interp::eval::sel_arity(n.sel.as_str());
                        let args = vec![Value::Nil; nargs];
                        return self.dnu(&r, n.sel, &args);
                    }
                };
                match (n.kind, t) {
                    (IfKind::IfTrue, true) | (IfKind::IfFalse, false) => self.exec(&n.a, f),
                    (IfKind::IfTrue, false) => Ok(Value::False),
                    (IfKind::IfFalse, true) => Ok(Value::True),
                    (IfKind::IfTrueIfFalse, true) => self.exec(&n.a, f),
                    (IfKind::IfTrueIfFalse, false) => self.exec(&n.b, f),
                    (IfKind::And, true) | (IfKind::Or, false) => self.exec(&n.a, f),
                    (IfKind::And, false) => Ok(Value::False),
                    (IfKind::Or, true) => Ok(Value::True),
                }
            }
            Node::Return(e) => {
                let value = self.exec(e, f)?;
                Err(Box::new(Unwind::Return {
                    value,
                    home: f.home,
                }))
            }
            Node::NlReturn(e) => {
                let value = self.exec(e, f)?;
                if !self.home_live(f.home) {
                    return Err(self
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
            }
            Node::Field(fd) => self.field(fd, f),
            _ => self.exec_cold(n, f),
        }
    }

    /// An entry into the walker under `BT_EVAL=strict`: a node kind without a compiled form.
    #[cold]
    #[inline(never)]
    fn walker_entered(&mut self, n: &Node) -> Flow {
        let kind = crate::interp::eval::compile::node_kind(n);
        Err(self
            .err(
                ErrorKind::RuntimeError,
                format!("BT_EVAL=strict: the tree walker was entered for a {kind} node"),
            )
            .into())
    }

    /// The less frequent node kinds, kept out of `exec` so its frame stays small.
    #[inline(never)]
    fn exec_cold(&mut self, n: &Node, f: &Frame) -> Flow {
        match n {
            Node::Super(s) => {
                let recv = self.exec(&s.recv, f)?;
                let mut args = Vec::with_capacity(s.args.len());
                for a in &s.args {
                    args.push(self.exec(a, f)?);
                }
                self.set_loc(s.loc);
                self.super_send(f.mclass, f.mside, &recv, s.sel, &args)
            }
            Node::Cast(s) => {
                let recv = self.exec(&s.recv, f)?;
                let mut args = Vec::with_capacity(s.args.len());
                for a in &s.args {
                    args.push(self.exec(a, f)?);
                }
                self.set_loc(s.loc);
                self.cast(&recv, s.sel, &args)?;
                Ok(Value::Nil)
            }
            Node::Cascade(c) => {
                let recv = self.exec(&c.recv, f)?;
                let mut last = Value::Nil;
                for (sel, args, loc) in &c.parts {
                    let mut av = Vec::with_capacity(args.len());
                    for a in args {
                        av.push(self.exec(a, f)?);
                    }
                    self.set_loc(*loc);
                    last = self.send_impl(&recv, *sel, &av)?;
                }
                Ok(last)
            }
            Node::Global(name, loc) => {
                self.set_loc(*loc);
                self.global(*name)
            }
            Node::Block(code) => Ok(crate::interp::eval::compile::make_closure(self, f, code)),
            Node::List(items) => {
                let mut v = imbl::Vector::new();
                for i in items {
                    v.push_back(self.exec(i, f)?);
                }
                Ok(Value::List(Ref::new(v)))
            }
            Node::Array(items) => {
                let mut v = Vec::with_capacity(items.len());
                for i in items {
                    v.push(self.exec(i, f)?);
                }
                Ok(Value::Array(Ref::new(v.into())))
            }
            Node::Dict(pairs) => {
                let mut m = crate::value::dict::Dict::new();
                for (i, (k, v)) in pairs.iter().enumerate() {
                    let k = self.exec(k, f)?;
                    if i == 0 {
                        m = crate::interp::eval::compile::dict_for_literal(pairs.len(), &k);
                    }
                    let v = self.exec(v, f)?;
                    m.insert(k, v);
                }
                Ok(Value::Dict(Ref::new(m)))
            }
            Node::Cons(c) => {
                let head = self.exec(&c.0, f)?;
                let tail = self.exec(&c.1, f)?;
                self.cons_list(head, &tail, c.2)
            }
            Node::Interp(parts) => {
                use crate::interp::eval::Piece;
                let mut pieces = Vec::with_capacity(parts.len());
                for p in parts {
                    pieces.push(match p {
                        InterpPart::Lit(t) => Piece::Lit(t),
                        InterpPart::Expr(e) => {
                            let v = self.exec(e, f)?;
                            Piece::Shown(self.display_value(v)?)
                        }
                    });
                }
                Ok(self.interpolate(&pieces)?)
            }
            Node::IfNil(n) => {
                let r = self.exec(&n.recv, f)?;
                if r.is_nil() {
                    match &n.if_nil {
                        Some(b) => self.exec(b, f),
                        None => Ok(Value::Nil),
                    }
                } else {
                    match &n.if_not_nil {
                        Some((p, b)) => {
                            if let Some(p) = p {
                                self.bind_param(f, *p, r);
                            }
                            self.exec(b, f)
                        }
                        None => Ok(r),
                    }
                }
            }
            Node::While(w) => {
                loop {
                    let c = self.exec_cond(&w.cond, f)?;
                    let go = match c {
                        Value::True => w.while_true,
                        Value::False => !w.while_true,
                        other => {
                            self.set_loc(w.loc);
                            let sel = if w.while_true { "ifTrue:" } else { "ifFalse:" };
                            return Err(self.dnu_error(&other, Sym::new(sel)).into());
                        }
                    };
                    if !go {
                        break;
                    }
                    self.exec_effect(&w.body, f)?;
                    self.tick()?;
                }
                Ok(Value::Nil)
            }
            Node::Repeat(body) => loop {
                self.exec_effect(body, f)?;
                self.tick()?;
            },
            Node::Times(t) => {
                let c = self.exec(&t.count, f)?;
                match super::compile::repeat_count(&c) {
                    Some(n) => {
                        for _ in 0..n {
                            self.exec_effect(&t.body, f)?;
                            self.tick()?;
                        }
                        Ok(Value::Nil)
                    }
                    None => {
                        self.set_loc(t.loc);
                        Err(self.dnu_error(&c, self.prog.syms.times_repeat).into())
                    }
                }
            }
            Node::ToDo(t) => {
                let from = self.exec(&t.from, f)?;
                let to = self.exec(&t.to, f)?;
                let by = match &t.by {
                    Some(b) => self.exec(b, f)?,
                    None => Value::Int(1),
                };
                if let (Value::Int(a), Value::Int(b), Value::Int(s)) = (&from, &to, &by) {
                    let (a, b, s) = (*a, *b, *s);
                    if s == 0 {
                        return Ok(Value::Nil);
                    }
                    let mut i = a;
                    while (s > 0 && i <= b) || (s < 0 && i >= b) {
                        if let Some(v) = t.var {
                            self.bind_param(f, v, Value::Int(i));
                        }
                        self.exec_effect(&t.body, f)?;
                        self.tick()?;
                        match i.checked_add(s) {
                            Some(n) => i = n,
                            None => break,
                        }
                    }
                    return Ok(Value::Nil);
                }
                self.set_loc(t.loc);
                self.generic_loop(&from, &to, &by, t.var, &|c, f| c.exec_effect(&t.body, f), f)
            }
            Node::Match(m) => self.exec_match(m, f),
            Node::Destructure(d) => self.exec_destructure(&d.0, &d.1, d.2, f),
            Node::InPlace(p) => self.exec_in_place(p, f),
            _ => self.exec(n, f),
        }
    }

    /// `x := x sel: args`: moves the collection out of `x` so a unique one is updated in place
    /// (the `collections::in_place` rule); anything else is an ordinary send.
    fn exec_in_place(&mut self, p: &crate::interp::eval::code::InPlaceNode, f: &Frame) -> Flow {
        let mut args = Vec::with_capacity(p.args.len());
        for a in &p.args {
            args.push(self.exec(a, f)?);
        }
        let mut recv = self.take_var(f, p.var);
        if p.name == "++" {
            return self.concat_in_place(p, f, recv, args);
        }
        let prim = (self.prog.prims.prims.hooks.in_place)(&recv, p.sel);
        let builtin = prim.is_some() && self.lookup(&recv, p.sel).is_some_and(|h| h.is_prim());
        self.set_loc(p.loc);
        let r = match prim {
            Some(op) if builtin && args.len() == crate::interp::eval::sel_arity(p.name) => {
                self.tick()?;
                match op(self, &mut recv, &args) {
                    Ok(v) => {
                        drop(recv);
                        Ok(v)
                    }
                    Err(e) => {
                        self.set_var(f, p.var, recv);
                        return Err(Box::new(e));
                    }
                }
            }
            _ => {
                if matches!(p.var, VarRef::Local(_)) {
                    // Only this activation sees a local: lend it to the send.
                    let r = self.send_impl(&recv, p.sel, &args);
                    self.set_var(f, p.var, recv);
                    r
                } else {
                    // A captured variable may be read by blocks the method runs: restore it first.
                    self.set_var(f, p.var, fast_clone(&recv));
                    self.send_impl(&recv, p.sel, &args)
                }
            }
        };
        let v = r?;
        self.set_var(f, p.var, fast_clone(&v));
        Ok(v)
    }

    /// `s := s ++ a ++ b …`: appends to the String in `s` in place when `s` holds the only
    /// reference and String's `++` is the built-in one; otherwise ordinary `++` sends.
    pub(crate) fn concat_in_place(
        &mut self,
        p: &crate::interp::eval::code::InPlaceNode,
        f: &Frame,
        mut acc: Value,
        args: Vec<Value>,
    ) -> Flow {
        let fast = matches!(acc, Value::Str(_))
            && args.iter().all(|a| matches!(a, Value::Str(_)))
            && self.lookup(&acc, p.sel).is_some_and(|h| h.is_prim());
        if fast {
            self.tick()?;
            self.charge_append(&acc, &args)?;
            if let Value::Str(s) = &mut acc {
                let extra: usize = args.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
                let m = crate::value::make_mut(s);
                m.reserve(extra);
                for a in &args {
                    m.push_str(a.as_str().unwrap_or(""));
                }
            }
            self.set_var(f, p.var, fast_clone(&acc));
            return Ok(acc);
        }
        let original = acc.clone();
        if !matches!(p.var, VarRef::Local(_)) {
            self.set_var(f, p.var, original.clone());
        }
        for a in &args {
            match self.send_impl(&acc, p.sel, std::slice::from_ref(a)) {
                Ok(v) => acc = v,
                Err(e) => {
                    self.set_var(f, p.var, original);
                    return Err(e);
                }
            }
        }
        self.set_var(f, p.var, fast_clone(&acc));
        Ok(acc)
    }

    /// `#(head | tail)`: a List with `head` in front of the List `tail`.
    pub(crate) fn cons_list(&mut self, head: Value, tail: &Value, loc: Loc) -> Flow {
        match tail {
            Value::List(l) => {
                let mut l = (**l).clone();
                l.push_front(head);
                Ok(Value::List(Ref::new(l)))
            }
            other => {
                self.set_loc(loc);
                let n = self.class_name_of(other);
                Err(self
                    .type_err(format!(
                        "the tail of #(head | tail) must be a List, not {n}"
                    ))
                    .into())
            }
        }
    }

    /// Moves a variable's value out (leaving nil).
    pub(crate) fn take_var(&mut self, f: &Frame, r: VarRef) -> Value {
        match r {
            VarRef::Local(i) => std::mem::replace(&mut self.stack[f.base + i as usize], Value::Nil),
            VarRef::Cell(i) => self.cells[f.cbase + i as usize].replace(self.owner, Value::Nil),
            VarRef::Upval(i) => f.upvals[i as usize].replace(self.owner, Value::Nil),
            VarRef::Pending(_) => Value::Nil,
        }
    }

    /// An Integer operand available without evaluating (a literal or a local slot).
    #[inline]
    fn peek_int(&self, n: &Node, f: &Frame) -> Option<i64> {
        match n {
            Node::Const(Value::Int(i)) => Some(*i),
            Node::Var(VarRef::Local(s)) => match &self.stack[f.base + *s as usize] {
                Value::Int(i) => Some(*i),
                _ => None,
            },
            _ => None,
        }
    }

    /// The Integer fast path of the arithmetic and comparison operators (None: overflow,
    /// division by zero or a user override — take the full send).
    #[inline]
    pub(crate) fn int_op(&self, op: BinOp, x: i64, y: i64) -> Option<Value> {
        if self
            .prog
            .arith_overridden
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        match op {
            BinOp::Add => x.checked_add(y).map(Value::Int),
            BinOp::Sub => x.checked_sub(y).map(Value::Int),
            BinOp::Mul => x.checked_mul(y).map(Value::Int),
            BinOp::Lt => Some(Value::bool(x < y)),
            BinOp::Gt => Some(Value::bool(x > y)),
            BinOp::Le => Some(Value::bool(x <= y)),
            BinOp::Ge => Some(Value::bool(x >= y)),
            BinOp::Eq | BinOp::StrictEq => Some(Value::bool(x == y)),
            BinOp::Ne | BinOp::StrictNe => Some(Value::bool(x != y)),
            BinOp::Rem => {
                if y != 0 {
                    x.checked_rem(y).map(Value::Int)
                } else {
                    None
                }
            }
        }
    }

    /// `to:do:` over non-Integer numbers: compares with `<=`/`>=` and steps with `+`.
    pub(crate) fn generic_loop(
        &mut self,
        from: &Value,
        to: &Value,
        by: &Value,
        var: Option<VarRef>,
        body: &LoopBody<'_>,
        f: &Frame,
    ) -> Flow {
        let zero = self.send_impl(by, Sym::new("isZero"), &[])?;
        if matches!(zero, Value::True) {
            return Ok(Value::Nil);
        }
        let neg = matches!(
            self.send_impl(by, Sym::new("isNegative"), &[])?,
            Value::True
        );
        let cmp = if neg {
            self.prog.syms.ge
        } else {
            self.prog.syms.le
        };
        let mut i = from.clone();
        loop {
            let go = self.send_impl(&i, cmp, std::slice::from_ref(to))?;
            if !matches!(go, Value::True) {
                break;
            }
            if let Some(v) = var {
                self.bind_param(f, v, i.clone());
            }
            body(self, f)?;
            self.tick()?;
            i = self.send_impl(&i, self.prog.syms.add, std::slice::from_ref(by))?;
        }
        Ok(Value::Nil)
    }

    /// A cast statement: the runtime replaces this for actors; otherwise a synchronous send.
    pub fn cast(&mut self, recv: &Value, sel: Sym, args: &[Value]) -> Result<(), Unwind> {
        // `a perform: #sel!` casts the performed message itself (a cast queues).
        if let Some((s, a)) = performed_message(sel, args) {
            if let Some(r) = crate::interp::actor::cast(self, recv, s, &a) {
                return r;
            }
        }
        if let Some(r) = crate::interp::actor::cast(self, recv, sel, args) {
            return r;
        }
        self.send_impl(recv, sel, args).map(|_| ()).map_err(|b| *b)
    }

    /// A capitalised name: a class, or `Transcript` (the current TranscriptStream).
    pub(crate) fn global(&mut self, name: Sym) -> Flow {
        if let Some(c) = self.prog.class_by_sym(name) {
            return Ok(Value::Class(c));
        }
        if name.as_str() == "Transcript" {
            if let Some(t) = self.prog.class_named("TranscriptStream") {
                return self.send_impl(&Value::Class(t), self.prog.syms.current, &[]);
            }
        }
        // A declared protocol's name is its protocol object.
        if let Some(p) = (self.prog.prims.prims.hooks.global)(self, name) {
            return Ok(p);
        }
        Err(self
            .err(
                ErrorKind::ClassNotFound,
                format!("Class '{name}' not found"),
            )
            .into())
    }
}

/// The body of a counting loop, run once per iteration.
pub(crate) type LoopBody<'a> = dyn Fn(&mut Ctx, &Frame) -> Result<(), Box<Unwind>> + 'a;

pub(crate) use crate::value::{drop_fast, fast_clone};

/// The message a `perform:` family send stands for (selector and arguments), when it is
/// well formed (a Symbol of the right arity); otherwise the send itself runs and raises.
fn performed_message(sel: Sym, args: &[Value]) -> Option<(Sym, Vec<Value>)> {
    let (target, rest): (Sym, Vec<Value>) = match (sel.as_str(), args) {
        ("perform:withArguments:", [Value::Symbol(s), Value::List(l)]) => {
            (*s, l.iter().cloned().collect())
        }
        ("perform:withArguments:", [Value::Symbol(s), Value::Array(a)]) => (*s, a.to_vec()),
        (
            "perform:" | "perform:with:" | "perform:with:with:" | "perform:with:with:with:",
            [Value::Symbol(s), rest @ ..],
        ) => (*s, rest.to_vec()),
        _ => return None,
    };
    (super::code::sel_arity(target.as_str()) == rest.len()).then_some((target, rest))
}
