//! Node evaluation: variables, sends (with Integer fast paths), literals, fields, blocks, and
//! the inlined control-flow selectors of LANGUAGE.md 2.6 / 5.11.

use std::sync::Arc;

use crate::interp::eval::code::{
    BinOp, FieldMode, FieldNode, IfKind, InterpPart, Loc, Node, SendNode, VarRef, NO_FILE,
};
use crate::interp::eval::{Closure, Ctx, Flow, Frame, Unwind, VarCell};
use crate::interp::value::{Instance, Key, Ref, Sym, Value};

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
            VarRef::Local(i) => self.stack[f.base + i as usize].clone(),
            VarRef::Cell(i) => self.cells[f.cbase + i as usize].lock().clone(),
            VarRef::Upval(i) => f.upvals[i as usize].lock().clone(),
            VarRef::Pending(_) => Value::Nil,
        }
    }

    #[inline]
    pub(crate) fn set_var(&mut self, f: &Frame, r: VarRef, v: Value) {
        match r {
            VarRef::Local(i) => self.stack[f.base + i as usize] = v,
            VarRef::Cell(i) => *self.cells[f.cbase + i as usize].lock() = v,
            VarRef::Upval(i) => *f.upvals[i as usize].lock() = v,
            VarRef::Pending(_) => {}
        }
    }

    /// Binds an inlined block parameter: a captured one gets a fresh cell per evaluation, so
    /// closures created in different iterations see different variables.
    #[inline]
    fn bind_param(&mut self, f: &Frame, r: VarRef, v: Value) {
        match r {
            VarRef::Cell(i) => self.cells[f.cbase + i as usize] = Arc::new(VarCell::new(v)),
            _ => self.set_var(f, r, v),
        }
    }

    pub(crate) fn exec_seq(&mut self, nodes: &[Node], f: &Frame) -> Flow {
        let mut last = Value::Nil;
        for n in nodes {
            last = self.exec(n, f)?;
        }
        Ok(last)
    }

    /// `x := x sel: args` where `sel` is an update of a built-in collection (`add:`,
    /// `at:put:` …, see `collections::in_place`): the receiver is moved out of `x` while the
    /// primitive runs, so it can update in place instead of copying (NOTES.md). `None` when the
    /// fast path does not apply; nothing has been evaluated then.
    fn update_in_place(&mut self, f: &Frame, r: VarRef, s: &SendNode) -> Option<Flow> {
        let mut recv = self.get_var(f, r);
        let fun = crate::interp::prims::collections::in_place(&recv, s.sel)?;
        let hit = self.lookup(&recv, s.sel)?;
        if !matches!(hit.kind, crate::interp::eval::hit::HitKind::Prim(_)) {
            return None;
        }
        let mut args = Vec::with_capacity(s.args.len());
        for a in &s.args {
            match self.exec(a, f) {
                Ok(v) => args.push(v),
                Err(e) => return Some(Err(e)),
            }
        }
        if let Err(e) = self.tick() {
            return Some(Err(Box::new(e)));
        }
        // Drop the variable's reference when it still holds the receiver, leaving ours unique.
        let taken = crate::interp::prims::collections::same_storage(&self.get_var(f, r), &recv);
        if taken {
            self.set_var(f, r, Value::Nil);
        }
        self.set_loc(s.loc);
        self.cur_sel = s.sel;
        self.cur_cls = hit.class().name;
        Some(match fun(self, &mut recv, &args) {
            Ok(v) => {
                self.set_var(f, r, v.clone());
                Ok(v)
            }
            Err(e) => {
                if taken {
                    self.set_var(f, r, recv);
                }
                Err(Box::new(e))
            }
        })
    }

    pub(crate) fn exec(&mut self, n: &Node, f: &Frame) -> Flow {
        match n {
            Node::Nil => Ok(Value::Nil),
            Node::Const(v) => Ok(v.clone()),
            Node::SelfRef => Ok(f.recv.clone()),
            Node::Var(r) => Ok(self.get_var(f, *r)),
            Node::SetVar(r, e) => {
                if let Node::Send(s) = &**e {
                    if matches!(s.recv, Node::Var(v) if v == *r) {
                        if let Some(res) = self.update_in_place(f, *r, s) {
                            return res;
                        }
                    }
                }
                let v = self.exec(e, f)?;
                self.set_var(f, *r, v.clone());
                Ok(v)
            }
            Node::Seq(v) => self.exec_seq(v, f),
            Node::Send(s) => {
                let owned;
                let recv: &Value = match &s.recv {
                    Node::SelfRef => f.recv,
                    r => {
                        owned = self.exec(r, f)?;
                        &owned
                    }
                };
                match s.args.len() {
                    0 => {
                        self.set_loc(s.loc);
                        self.send_impl(recv, s.sel, &[])
                    }
                    1 => {
                        let a = self.exec(&s.args[0], f)?;
                        self.set_loc(s.loc);
                        self.send_impl(recv, s.sel, std::slice::from_ref(&a))
                    }
                    2 => {
                        let a = self.exec(&s.args[0], f)?;
                        let b = self.exec(&s.args[1], f)?;
                        self.set_loc(s.loc);
                        self.send_impl(recv, s.sel, &[a, b])
                    }
                    _ => self.send_many(recv, s, f),
                }
            }
            Node::Bin(b) => {
                let l = self.exec(&b.lhs, f)?;
                let r = self.exec(&b.rhs, f)?;
                if let (Value::Int(x), Value::Int(y)) = (&l, &r) {
                    if !self
                        .prog
                        .arith_overridden
                        .load(std::sync::atomic::Ordering::Relaxed)
                    {
                        let (x, y) = (*x, *y);
                        let fast = match b.op {
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
                        };
                        if let Some(v) = fast {
                            return Ok(v);
                        }
                    }
                }
                self.set_loc(b.loc);
                self.send_impl(&l, b.sel, std::slice::from_ref(&r))
            }
            Node::If(n) => {
                let r = self.exec(&n.recv, f)?;
                match (n.kind, &r) {
                    (IfKind::IfTrue, Value::True) => self.exec(&n.a, f),
                    (IfKind::IfTrue, Value::False) => Ok(Value::False),
                    (IfKind::IfFalse, Value::False) => self.exec(&n.a, f),
                    (IfKind::IfFalse, Value::True) => Ok(Value::True),
                    (IfKind::IfTrueIfFalse, Value::True) => self.exec(&n.a, f),
                    (IfKind::IfTrueIfFalse, Value::False) => self.exec(&n.b, f),
                    (IfKind::And, Value::True) => self.exec(&n.a, f),
                    (IfKind::And, Value::False) => Ok(Value::False),
                    (IfKind::Or, Value::True) => Ok(Value::True),
                    (IfKind::Or, Value::False) => self.exec(&n.a, f),
                    _ => {
                        self.set_loc(n.loc);
                        let nargs = crate::interp::eval::sel_arity(n.sel.as_str());
                        let args = vec![Value::Nil; nargs];
                        self.dnu(&r, n.sel, &args)
                    }
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
                            "runtime_error",
                            "non-local return from a method that has already returned",
                        )
                        .into());
                }
                Err(Box::new(Unwind::Return {
                    value,
                    home: f.home,
                }))
            }
            _ => self.exec_cold(n, f),
        }
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
            Node::Field(fd) => self.field(fd, f),
            Node::Block(code) => {
                let upvals: Box<[Arc<VarCell>]> = code
                    .upvals
                    .iter()
                    .map(|u| match u {
                        crate::interp::eval::code::UpvalSrc::Cell(i) => {
                            self.cells[f.cbase + *i as usize].clone()
                        }
                        crate::interp::eval::code::UpvalSrc::Upval(i) => {
                            f.upvals[*i as usize].clone()
                        }
                    })
                    .collect();
                let serial = self
                    .prog
                    .block_serial
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(Value::Block(Arc::new(Closure {
                    code: code.clone(),
                    recv: f.recv.clone(),
                    upvals,
                    home: f.home,
                    mclass: f.mclass.map(crate::interp::eval::hit::class_arc),
                    mside: f.mside,
                    serial,
                })))
            }
            Node::List(items) => {
                let mut v = imbl::Vector::new();
                for i in items {
                    v.push_back(self.exec(i, f)?);
                }
                Ok(Value::List(Ref::new(v)))
            }
            Node::Array(items) => {
                let mut v = imbl::Vector::new();
                for i in items {
                    v.push_back(self.exec(i, f)?);
                }
                Ok(Value::Array(Ref::new(v)))
            }
            Node::Dict(pairs) => {
                let mut m = imbl::OrdMap::new();
                for (k, v) in pairs {
                    let k = self.exec(k, f)?;
                    let v = self.exec(v, f)?;
                    m.insert(Key(k), v);
                }
                Ok(Value::Dict(Ref::new(m)))
            }
            Node::Cons(c) => {
                let head = self.exec(&c.0, f)?;
                let tail = self.exec(&c.1, f)?;
                match tail {
                    Value::List(l) => {
                        let mut l = (*l).clone();
                        l.push_front(head);
                        Ok(Value::List(Ref::new(l)))
                    }
                    other => {
                        self.set_loc(c.2);
                        let n = self.class_name_of(&other);
                        Err(self
                            .type_err(format!(
                                "the tail of #(head | tail) must be a List, not {n}"
                            ))
                            .into())
                    }
                }
            }
            Node::Interp(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        InterpPart::Lit(t) => s.push_str(t),
                        InterpPart::Expr(e) => {
                            let v = self.exec(e, f)?;
                            let d = self.display_string(&v)?;
                            s.push_str(&d);
                        }
                    }
                }
                Ok(Value::str(s))
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
                    let c = self.exec(&w.cond, f)?;
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
                    self.exec(&w.body, f)?;
                    self.tick()?;
                }
                Ok(Value::Nil)
            }
            Node::Repeat(body) => loop {
                self.exec(body, f)?;
                self.tick()?;
            },
            Node::Times(t) => {
                let c = self.exec(&t.count, f)?;
                match c {
                    Value::Int(n) => {
                        for _ in 0..n.max(0) {
                            self.exec(&t.body, f)?;
                            self.tick()?;
                        }
                        Ok(Value::Nil)
                    }
                    other => {
                        self.set_loc(t.loc);
                        Err(self.dnu_error(&other, self.prog.syms.times_repeat).into())
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
                        self.exec(&t.body, f)?;
                        self.tick()?;
                        match i.checked_add(s) {
                            Some(n) => i = n,
                            None => break,
                        }
                    }
                    return Ok(Value::Nil);
                }
                self.set_loc(t.loc);
                self.generic_to_do(&from, &to, &by, t.var, &t.body, f)
            }
            Node::Match(m) => self.exec_match(m, f),
            Node::Destructure(d) => self.exec_destructure(&d.0, &d.1, d.2, f),
            _ => self.exec(n, f),
        }
    }

    #[inline(never)]
    fn send_many(
        &mut self,
        recv: &Value,
        s: &crate::interp::eval::code::SendNode,
        f: &Frame,
    ) -> Flow {
        let mut args = Vec::with_capacity(s.args.len());
        for a in &s.args {
            args.push(self.exec(a, f)?);
        }
        self.set_loc(s.loc);
        self.send_impl(recv, s.sel, &args)
    }

    /// `to:do:` over non-Integer numbers: compares with `<=`/`>=` and steps with `+`.
    fn generic_to_do(
        &mut self,
        from: &Value,
        to: &Value,
        by: &Value,
        var: Option<VarRef>,
        body: &Node,
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
            self.exec(body, f)?;
            self.tick()?;
            i = self.send_impl(&i, self.prog.syms.add, std::slice::from_ref(by))?;
        }
        Ok(Value::Nil)
    }

    /// A cast statement: the runtime replaces this for actors; otherwise a synchronous send.
    pub fn cast(&mut self, recv: &Value, sel: Sym, args: &[Value]) -> Result<(), Unwind> {
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
        Err(self
            .err("class_not_found", format!("Class '{name}' not found"))
            .into())
    }

    fn field(&mut self, fd: &FieldNode, f: &Frame) -> Flow {
        match fd.mode {
            FieldMode::Value | FieldMode::Rebind => {
                let recv = self.exec(&fd.recv, f)?;
                match &fd.value {
                    None => self.read_field(&recv, fd.name, fd.idx as usize),
                    Some(e) => {
                        let v = self.exec(e, f)?;
                        let updated = self.with_field(&recv, fd.name, v.clone())?;
                        if let Node::Var(r) = &fd.recv {
                            self.set_var(f, *r, updated);
                        }
                        Ok(v)
                    }
                }
            }
            FieldMode::Actor => {
                let i = fd.idx as usize;
                match &fd.value {
                    None => match self.actor_fields.get(i) {
                        Some(v) => Ok(v.clone()),
                        None => {
                            let recv = self.exec(&fd.recv, f)?;
                            self.read_field(&recv, fd.name, i)
                        }
                    },
                    Some(e) => {
                        let v = self.exec(e, f)?;
                        if i < self.actor_fields.len() {
                            self.actor_fields[i] = v.clone();
                            Ok(v)
                        } else {
                            self.set_loc(fd.loc);
                            Err(self
                                .err(
                                    "runtime_error",
                                    format!("no state slot '{}' in this process", fd.name),
                                )
                                .into())
                        }
                    }
                }
            }
            FieldMode::ClassVar => {
                let recv = self.exec(&fd.recv, f)?;
                let cls = match &recv {
                    Value::Class(c) => c.clone(),
                    _ => match f.mclass {
                        Some(c) => crate::interp::eval::hit::class_arc(c),
                        None => {
                            return Err(self
                                .err("runtime_error", "class variable outside a class method")
                                .into())
                        }
                    },
                };
                let owner = match cls.class_var_owner(fd.name) {
                    Some(o) => o,
                    None => {
                        self.set_loc(fd.loc);
                        return Err(self
                            .err(
                                "runtime_error",
                                format!("Undefined class variable '{}' in {}", fd.name, cls.name),
                            )
                            .into());
                    }
                };
                match &fd.value {
                    None => {
                        let st = owner.class_state.lock();
                        Ok(st
                            .iter()
                            .find(|(n, _)| *n == fd.name)
                            .map(|(_, v)| v.clone())
                            .unwrap_or(Value::Nil))
                    }
                    Some(e) => {
                        let v = self.exec(e, f)?;
                        let mut st = owner.class_state.lock();
                        if let Some(slot) = st.iter_mut().find(|(n, _)| *n == fd.name) {
                            slot.1 = v.clone();
                        }
                        Ok(v)
                    }
                }
            }
        }
    }

    /// Reads field `name` (index hint `idx`) of a Value instance.
    pub(crate) fn read_field(&mut self, recv: &Value, name: Sym, idx: usize) -> Flow {
        if let Value::Object(inst) = recv {
            if inst.class.field_names.get(idx) == Some(&name) {
                return Ok(inst.fields.get(idx).cloned().unwrap_or(Value::Nil));
            }
            if let Some(i) = inst.class.field_index(name) {
                return Ok(inst.fields.get(i).cloned().unwrap_or(Value::Nil));
            }
        }
        let n = self.class_name_of(recv);
        Err(self
            .err("key_error", format!("{n} has no field '{name}'"))
            .into())
    }

    /// A copy of a (TestCase) Value instance with field `name` set, adding the field through a
    /// derived class when the class does not declare it (2.7).
    pub(crate) fn with_field(&mut self, recv: &Value, name: Sym, v: Value) -> Flow {
        let Value::Object(inst) = recv else {
            let n = self.class_name_of(recv);
            return Err(self
                .err(
                    "immutable_value",
                    format!("cannot set field '{name}' of {n}"),
                )
                .into());
        };
        if let Some(i) = inst.class.field_index(name) {
            let mut fields = inst.fields.to_vec();
            fields.resize(inst.class.field_names.len().max(fields.len()), Value::Nil);
            fields[i] = v;
            return Ok(Value::Object(Arc::new(Instance {
                class: inst.class.clone(),
                fields: fields.into_boxed_slice(),
            })));
        }
        let derived = crate::interp::loader::derived_class(&self.prog, &inst.class, name);
        let mut fields = inst.fields.to_vec();
        fields.resize(derived.field_names.len() - 1, Value::Nil);
        fields.push(v);
        Ok(Value::Object(Arc::new(Instance {
            class: derived,
            fields: fields.into_boxed_slice(),
        })))
    }
}
