//! Field access: instance fields (`self.x` of a value object, by index through the site's
//! cache) and the running actor's state slots (`self.name` in an actor, or a detached copy
//! in a block that crossed to another process). Split out of `exec.rs`, which
//! dispatches the field nodes here.

use std::sync::Arc;

use crate::interp::error::ErrorKind;
use crate::interp::eval::code::{FieldMode, FieldNode, Loc, Node, SendNode};
use crate::interp::eval::exec::{drop_fast, fast_clone};
use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::{Instance, Sym, Value};

impl Ctx {
    /// Is `recv` the handle of the actor whose message runs here (`self` in its own
    /// method or block)? Then `self.name` is its live state slot: no detached copy to look
    /// for (`Ctx::detached_state` answers none for it).
    #[inline(always)]
    fn is_running_actor(&self, recv: &Value) -> bool {
        match (recv, self.proc.actor()) {
            (Value::Native(n), Some(Value::Native(me))) => Arc::ptr_eq(me, n),
            _ => false,
        }
    }

    /// `self.name` of the running actor: its state slot (or, in a block that crossed to
    /// another process, that block's copy of the state). The usual case, the running
    /// actor's own slot, inline at the site; the rest in [`Ctx::actor_field_read`].
    #[inline(always)]
    pub(crate) fn actor_field_get(&mut self, f: &Frame, fd: &FieldNode) -> Flow {
        if self.is_running_actor(f.recv) {
            if let Some(v) = self.actor_fields.get(fd.idx as usize) {
                return Ok(fast_clone(v));
            }
        }
        self.actor_field_read(f, fd)
    }

    /// [`Ctx::actor_field_get`] in general.
    #[inline(never)]
    fn actor_field_read(&mut self, f: &Frame, fd: &FieldNode) -> Flow {
        let i = fd.idx as usize;
        if let Some(st) = self.detached_state(f.recv) {
            return Ok(st.lock().get(i).cloned().unwrap_or(Value::Nil));
        }
        match self.actor_fields.get(i) {
            Some(v) => Ok(fast_clone(v)),
            None => {
                let recv = self.self_of(&fd.recv, f);
                self.read_field(&recv, fd.name, i)
            }
        }
    }

    /// `self.name := v` in an actor (see [`Ctx::actor_field_get`]); answers `v`.
    #[inline(always)]
    pub(crate) fn actor_field_set(
        &mut self,
        f: &Frame,
        name: crate::value::Sym,
        i: usize,
        loc: Loc,
        v: Value,
    ) -> Flow {
        if self.is_running_actor(f.recv) && i < self.actor_fields.len() {
            self.set_actor_slot(i, fast_clone(&v));
            return Ok(v);
        }
        self.actor_field_write(f, name, i, loc, v)
    }

    /// [`Ctx::actor_field_set`] in general.
    #[inline(never)]
    fn actor_field_write(
        &mut self,
        f: &Frame,
        name: crate::value::Sym,
        i: usize,
        loc: Loc,
        v: Value,
    ) -> Flow {
        if let Some(st) = self.detached_state(f.recv) {
            let st = st.clone();
            if let Some(slot) = st.lock().get_mut(i) {
                *slot = v.clone();
            }
            return Ok(v);
        }
        if i < self.actor_fields.len() {
            self.set_actor_slot(i, fast_clone(&v));
            Ok(v)
        } else {
            self.set_loc(loc);
            Err(self
                .err(
                    ErrorKind::RuntimeError,
                    format!("no state slot '{name}' in this process"),
                )
                .into())
        }
    }

    /// Stores `v` in the running actor's slot `i` (in range): the slot's old value is
    /// dropped, or, when it is a collection the message's journal updated in place, made
    /// back into the rollback copy's value (`journal`).
    #[inline]
    pub(crate) fn set_actor_slot(&mut self, i: usize, v: Value) {
        let old = std::mem::replace(&mut self.actor_fields[i], v);
        if self.journal.holds_any() {
            let undo = self.prog.prims.prims.hooks.undo;
            self.journal.release(i, old, &mut self.actor_saved, undo);
        } else {
            drop_fast(old);
        }
    }

    /// `self.name := self.name sel: args` in an actor, once the receiver `recv` (the slot's
    /// value, read before the arguments) and `args` are evaluated. When `sel` is a built-in
    /// in-place update (`collections::in_place`) and the slot still holds `recv`, the slot
    /// lets go of its reference first, so a collection nothing else shares is updated in
    /// place instead of copied (growing a field one element at a time stays linear); the
    /// message's rollback copy lets go of its reference too, leaving an undo record in the
    /// message's journal (`journal`). On an error the slot gets `recv` back.
    pub(crate) fn actor_field_update(
        &mut self,
        f: &Frame,
        fd: &FieldNode,
        send: &SendNode,
        mut recv: Value,
        args: &[Value],
    ) -> Flow {
        let i = fd.idx as usize;
        let update = (self.prog.prims.prims.hooks.in_place)(&recv, send.sel);
        if let Some(op) = update {
            let held = self
                .actor_fields
                .get(i)
                .is_some_and(|v| same_collection(v, &recv));
            if held
                && args.len() == crate::interp::eval::sel_arity(send.sel.as_str())
                && self.detached_state(f.recv).is_none()
                && self.lookup(&recv, send.sel).is_some_and(|h| h.is_prim())
            {
                self.set_loc(send.loc);
                drop_fast(std::mem::replace(&mut self.actor_fields[i], Value::Nil));
                let hooks = self.prog.prims.prims.hooks;
                let undo = self.journal.before_update(
                    i,
                    &recv,
                    &mut self.actor_saved,
                    || (hooks.undo_of)(&recv, send.sel, args),
                    hooks.undo,
                );
                let r = match self.tick() {
                    Ok(()) => op(self, &mut recv, args),
                    Err(e) => Err(e),
                };
                return match r {
                    Ok(v) => {
                        if let Some(u) = undo {
                            self.journal.record(i, u);
                        }
                        drop(recv);
                        self.actor_fields[i] = fast_clone(&v);
                        Ok(v)
                    }
                    Err(e) => {
                        self.actor_fields[i] = recv;
                        Err(Box::new(e))
                    }
                };
            }
        }
        self.set_loc(send.loc);
        let v = self.send_impl(&recv, send.sel, args)?;
        drop(recv);
        self.actor_field_set(f, fd.name, i, fd.loc, v)
    }

    pub(super) fn field(&mut self, fd: &FieldNode, f: &Frame) -> Flow {
        match fd.mode {
            FieldMode::Value if fd.value.is_none() && matches!(fd.recv, Node::SelfRef) => {
                if let Value::Object(inst) = f.recv {
                    let i = fd.idx as usize;
                    if inst.class.field_names.get(i) == Some(&fd.name) {
                        return Ok(field_clone(&inst.fields, i));
                    }
                }
                self.read_field(f.recv, fd.name, fd.idx as usize)
            }
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
            FieldMode::Actor => match &fd.value {
                None => self.actor_field_get(f, fd),
                Some(e) => {
                    if let Some((read, send)) = self_update(fd) {
                        let recv = self.actor_field_get(f, read)?;
                        let mut args = Vec::with_capacity(send.args.len());
                        for a in &send.args {
                            args.push(self.exec(a, f)?);
                        }
                        return self.actor_field_update(f, fd, send, recv, &args);
                    }
                    let v = self.exec(e, f)?;
                    self.actor_field_set(f, fd.name, fd.idx as usize, fd.loc, v)
                }
            },
            FieldMode::ClassVar => {
                let recv = self.exec(&fd.recv, f)?;
                let owner = self.class_var_owner(f, &recv, fd.name, fd.loc)?;
                match &fd.value {
                    None => Ok(class_var_get(&owner, fd.name)),
                    Some(e) => {
                        let v = self.exec(e, f)?;
                        class_var_set(&owner, fd.name, &v);
                        Ok(v)
                    }
                }
            }
        }
    }

    /// The class holding class variable `name` for a class method whose receiver is `recv`.
    pub(crate) fn class_var_owner(
        &mut self,
        f: &Frame,
        recv: &Value,
        name: Sym,
        loc: Loc,
    ) -> Result<crate::value::ClassRef, Box<crate::interp::eval::Unwind>> {
        let cls = match recv {
            Value::Class(c) => c.clone(),
            _ => match f.mclass {
                Some(c) => crate::interp::eval::hit::class_arc(c),
                None => {
                    return Err(self
                        .err(
                            ErrorKind::RuntimeError,
                            "class variable outside a class method",
                        )
                        .into())
                }
            },
        };
        match cls.class_var_owner(name) {
            Some(o) => Ok(o),
            None => {
                self.set_loc(loc);
                Err(self
                    .err(
                        ErrorKind::RuntimeError,
                        format!("Undefined class variable '{}' in {}", name, cls.name),
                    )
                    .into())
            }
        }
    }

    /// `self` as the node `recv` of a field names it (`self`, or the rebinding self
    /// variable), without evaluating a node.
    #[inline]
    pub(crate) fn self_of(&self, recv: &Node, f: &Frame) -> Value {
        match recv {
            Node::Var(r) => self.get_var(f, *r),
            _ => fast_clone(f.recv),
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
            .err(ErrorKind::KeyError, format!("{n} has no field '{name}'"))
            .into())
    }

    /// A copy of a (TestCase) Value instance with field `name` set, adding the field through a
    /// derived class when the class does not declare it.
    pub(crate) fn with_field(&mut self, recv: &Value, name: Sym, v: Value) -> Flow {
        let Value::Object(inst) = recv else {
            let n = self.class_name_of(recv);
            return Err(self
                .err(
                    ErrorKind::ImmutableValue,
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
                fields: fields.into(),
            })));
        }
        let derived = self.prog.derived_class(&inst.class, name);
        let mut fields = inst.fields.to_vec();
        fields.resize(derived.field_names.len() - 1, Value::Nil);
        fields.push(v);
        Ok(Value::Object(Arc::new(Instance {
            class: derived,
            fields: fields.into(),
        })))
    }
}

/// The value of class variable `name` held by `owner`.
pub(crate) fn class_var_get(owner: &crate::value::class::Class, name: Sym) -> Value {
    let st = owner.class_state.lock();
    st.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.clone())
        .unwrap_or(Value::Nil)
}

/// Sets class variable `name` held by `owner` to `v`.
pub(crate) fn class_var_set(owner: &crate::value::class::Class, name: Sym, v: &Value) {
    let mut st = owner.class_state.lock();
    if let Some(slot) = st.iter_mut().find(|(n, _)| *n == name) {
        slot.1 = v.clone();
    }
}

/// Field `i` of an instance's fields, or `nil` past the end. Not
/// `fast_clone(fields.get(i).unwrap_or(&Value::Nil))`: that builds a temporary `nil` whose
/// drop is an out-of-line call on every read (`Value` has a `Drop` impl).
#[inline(always)]
pub(crate) fn field_clone(fields: &[Value], i: usize) -> Value {
    match fields.get(i) {
        Some(v) => fast_clone(v),
        None => Value::Nil,
    }
}

/// The send of an actor-slot assignment `self.name := self.name sel: args` whose selector
/// has an in-place update (see [`Ctx::actor_field_update`]; `++` too, for a String), with
/// the slot read it sends to.
pub(crate) fn self_update(fd: &FieldNode) -> Option<(&FieldNode, &SendNode)> {
    let Some(Node::Send(send)) = &fd.value else {
        return None;
    };
    match &send.recv {
        Node::Field(read)
            if read.mode == FieldMode::Actor
                && read.idx == fd.idx
                && read.value.is_none()
                && (crate::interp::eval::code::IN_PLACE_SELECTORS.contains(&send.sel.as_str())
                    || send.sel.as_str() == "++") =>
        {
            Some((read, send))
        }
        _ => None,
    }
}

/// Is `a` the same collection (or String) object as `b` (one of the kinds with in-place
/// updates)?
fn same_collection(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::List(x), Value::List(y)) | (Value::Queue(x), Value::Queue(y)) => Arc::ptr_eq(x, y),
        (Value::Array(x), Value::Array(y)) => Arc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Arc::ptr_eq(x, y),
        (Value::Set(x), Value::Set(y)) => Arc::ptr_eq(x, y),
        (Value::Bag(x), Value::Bag(y)) => Arc::ptr_eq(x, y),
        (Value::Str(x), Value::Str(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}
