//! Sends whose receiver the caller owns and gives up: `x := x add: n` on a local instance.
//!
//! When the method found is a compiled body of the form `self withX: arg` (flagged at compile
//! time, [`crate::interp::eval::compile::TailSelfSend`]) and `withX:` is the Value-class
//! setter, the activation evaluates only `arg`; the setter then stores into the receiver itself
//! when nothing else shares it (`Arc::get_mut`), instead of copying the instance and dropping
//! the old one. The observable result is the same value the full send answers: the old
//! instance was about to be released by the assignment and no one else could see it.

use std::sync::Arc;

use crate::interp::eval::code::CompiledMethod;
use crate::interp::eval::exec::drop_fast;
use crate::interp::eval::hit::{Hit, HitKind, InlineCache};
use crate::interp::eval::{Ctx, Flow, Unwind};
use crate::value::{Instance, Sym, Value};

impl Ctx {
    /// Sends `sel` to `recv` with the arguments at `stack[base..]`, like `send_cached`; may
    /// take `recv` (leaving nil) to build the answer from it.
    pub(crate) fn send_owned(
        &mut self,
        ic: &InlineCache,
        recv: &mut Value,
        sel: Sym,
        base: usize,
    ) -> Flow {
        let key = match self.cached_send_start(recv, sel, base) {
            Ok(key) => key,
            Err(done) => return done,
        };
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        if let Some(e) = ic.entry(key, epoch) {
            // One read of the site's entry serves both sends: whether its method's tail
            // setter applies is recorded on the entry the first time.
            let h = e.hit();
            if let (HitKind::Compiled(_), Some(cm)) = (h.kind, h.compiled()) {
                let field = match e.tail_field() {
                    Some(field) => field,
                    None => {
                        let field = self.tail_setter(cm, recv, key, epoch, base);
                        e.set_tail_field(field);
                        field
                    }
                };
                if let Some(field) = field {
                    return self.run_tail_setter(h, cm, recv, base, field);
                }
            }
            return self.dispatch_at(Some(h), recv, sel, base);
        }
        let hit = self.cache_miss(ic, recv, key, epoch, sel);
        if let Some(h) = hit {
            if let (HitKind::Compiled(_), Some(cm)) = (h.kind, h.compiled()) {
                if let Some(field) = self.tail_setter(cm, recv, key, epoch, base) {
                    return self.run_tail_setter(h, cm, recv, base, field);
                }
            }
        }
        self.dispatch_at(hit, recv, sel, base)
    }

    /// The field index the tail `self withX: arg` of `cm` stores, when the fast path applies.
    #[inline]
    fn tail_setter(
        &mut self,
        cm: &CompiledMethod,
        recv: &Value,
        key: usize,
        epoch: u64,
        base: usize,
    ) -> Option<usize> {
        let code = &cm.code;
        let tail = code.tail_self_send.as_ref()?;
        if code.special || self.stack.len() - base != code.nparams as usize {
            return None;
        }
        let Value::Object(inst) = recv else {
            return None;
        };
        let sh: Hit = match tail.ic.get(key, epoch) {
            Some(h) => h,
            None => {
                let h = self.lookup(recv, tail.sel)?;
                tail.ic
                    .fill(&*self.prog, key, epoch, h, self.int_arith_plain());
                h
            }
        };
        match sh.kind {
            HitKind::Setter(i) if (i as usize) < inst.fields.len() => Some(i as usize),
            _ => None,
        }
    }

    /// Runs the activation of `cm` up to its tail setter's argument, then stores it.
    fn run_tail_setter(
        &mut self,
        h: Hit,
        cm: &CompiledMethod,
        recv: &mut Value,
        base: usize,
        field: usize,
    ) -> Flow {
        let v = match self.tail_arg(h, cm, recv, base)? {
            Ok(v) => v,
            // A `^` inside the argument answered from the method.
            Err(answer) => return Ok(answer),
        };
        // The setter send the body would make.
        self.tick()?;
        let Value::Object(inst) = recv else {
            return Ok(Value::Nil);
        };
        if let Some(m) = crate::value::unique_mut(inst) {
            drop_fast(std::mem::replace(&mut m.fields[field], v));
            return Ok(std::mem::replace(recv, Value::Nil));
        }
        let mut fields = crate::value::clone_fields(&inst.fields);
        fields[field] = v;
        Ok(Value::Object(Arc::new(Instance {
            class: inst.class.clone(),
            fields,
        })))
    }

    /// The tail argument's value (`Ok(Ok(v))`), or the method's answer when the argument
    /// returned from it with `^` (`Ok(Err(answer))`).
    fn tail_arg(
        &mut self,
        h: Hit,
        cm: &CompiledMethod,
        recv: &Value,
        base: usize,
    ) -> Result<Result<Value, Value>, Box<Unwind>> {
        let Some(tail) = cm.code.tail_self_send.as_ref() else {
            return Ok(Err(Value::Nil));
        };
        self.activation(cm, h.class(), recv, base, |c, f| tail.arg.run(c, f))
    }
}
