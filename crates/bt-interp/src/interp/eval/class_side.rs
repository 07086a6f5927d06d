//! Class-side machinery of dispatch: class-state methods run under the class lock and roll
//! class variables back when they raise; so does a class method that only calls them
//! ([`StateScope`]); instantiation with field defaults and the Value-class keyword
//! constructor.

use crate::interp::class::ClassExt;
use std::sync::Arc;

use crate::interp::class::Class;
use crate::interp::error::ErrorKind;
use crate::interp::eval::code::FnCode;
use crate::interp::eval::{Ctx, Flow, Frame, Unwind};
use crate::value::{ClassRef, Instance, Sym, Value};

/// A running class method of a class with class variables that does not touch them itself.
/// The first class method of the same class that touches them in its extent takes the class
/// lock and the snapshot for it ([`Ctx::claim_state_scopes`]); the scope keeps the lock until
/// it ends, and restores the snapshot if it raises.
pub(crate) struct StateScope {
    target: ClassRef,
    snapshot: Option<Vec<Vec<(Sym, Value)>>>,
    held: Option<Held>,
}

/// The class lock a [`StateScope`] keeps.
enum Held {
    /// Under the runtime (the process-aware lock).
    Proc(crate::runtime::OwnedProcLockGuard),
    /// Outside it (the context's own re-entrant lock, released with `unlock_class`).
    Plain,
}

/// The class variables of `target`'s chain.
fn snapshot_of(target: &ClassRef) -> Vec<Vec<(Sym, Value)>> {
    target
        .chain()
        .iter()
        .map(|c| c.class_state.lock().clone())
        .collect()
}

impl Ctx {
    /// A class method of a class with class variables that does not touch them: runs `code`
    /// as a [`StateScope`], so the changes made by the class methods of the same class it
    /// calls are discarded if it raises (a non-local return keeps them).
    pub(super) fn run_class_state_scope(
        &mut self,
        code: &FnCode,
        defc: &Class,
        recv: &Value,
        f: &Frame,
    ) -> Flow {
        let target = match recv {
            Value::Class(c) => c.clone(),
            _ => crate::interp::eval::hit::class_arc(defc),
        };
        self.state_scopes.push(StateScope {
            target,
            snapshot: None,
            held: None,
        });
        let r = code.op.run(self, f);
        if let Some(scope) = self.state_scopes.pop() {
            if let Some(snap) = scope.snapshot {
                if matches!(&r, Err(b) if matches!(**b, Unwind::Error(_))) {
                    for (c, s) in scope.target.chain().iter().zip(snap) {
                        *c.class_state.lock() = s;
                    }
                }
            }
            match scope.held {
                Some(Held::Plain) => self.unlock_class(&scope.target),
                Some(Held::Proc(g)) => drop(g),
                None => {}
            }
        }
        r
    }

    /// Called with `target`'s lock held, before a class method touching its state runs: each
    /// enclosing [`StateScope`] of the same class without a snapshot takes one now and keeps
    /// the lock (re-entrant, so this does not wait) until it ends.
    fn claim_state_scopes(&mut self, target: &ClassRef) -> Result<(), Unwind> {
        for i in 0..self.state_scopes.len() {
            let s = &self.state_scopes[i];
            if s.snapshot.is_some() || !Arc::ptr_eq(&s.target, target) {
                continue;
            }
            let held = if self.proc.in_runtime() {
                let lock = crate::interp::process::class_lock(self, target);
                let cx = crate::interp::process::cx_of(self);
                match cx {
                    Some(cx) => match lock.lock_owned(cx) {
                        Ok(g) => Held::Proc(g),
                        Err(e) => return Err(Unwind::Exit(e.0.to_value())),
                    },
                    None => continue,
                }
            } else {
                self.lock_class(target)?;
                Held::Plain
            };
            let s = &mut self.state_scopes[i];
            s.snapshot = Some(snapshot_of(target));
            s.held = Some(held);
        }
        Ok(())
    }

    /// A class method touching class state: holds the class lock (re-entrant per process) and
    /// rolls the class variables back if it raises.
    #[allow(clippy::too_many_arguments)] // the parts of an activation
    pub(super) fn run_class_state_method(
        &mut self,
        code: &FnCode,
        defc: &Class,
        recv: &Value,
        base: usize,
        cbase: usize,
        home: u64,
        side: bool,
    ) -> Flow {
        let target = match recv {
            Value::Class(c) => c.clone(),
            _ => crate::interp::eval::hit::class_arc(defc),
        };
        let f = Frame {
            recv,
            base,
            cbase,
            upvals: &[],
            home,
            mclass: Some(defc),
            mside: side,
        };
        if self.proc.in_runtime() {
            // Under the runtime: a process-aware lock whose waiters suspend.
            let lock = crate::interp::process::class_lock(self, &target);
            let guard = crate::interp::process::lock_proc(self, &lock)?;
            if !self.state_scopes.is_empty() {
                self.claim_state_scopes(&target)?;
            }
            let r = self.exec_rolling_back(&target, code, &f);
            drop(guard);
            return r;
        }
        self.lock_class(&target)?;
        if !self.state_scopes.is_empty() {
            if let Err(e) = self.claim_state_scopes(&target) {
                self.unlock_class(&target);
                return Err(e.into());
            }
        }
        let r = self.exec_rolling_back(&target, code, &f);
        self.unlock_class(&target);
        r
    }

    /// Runs `code` and, if it raises, restores the class variables of `target`'s chain to what
    /// they were before (the caller holds the class lock).
    pub(super) fn exec_rolling_back(
        &mut self,
        target: &ClassRef,
        code: &FnCode,
        f: &Frame,
    ) -> Flow {
        let chain = target.chain();
        let snapshot: Vec<Vec<(Sym, Value)>> =
            chain.iter().map(|c| c.class_state.lock().clone()).collect();
        let r = code.op.run(self, f);
        if matches!(&r, Err(b) if matches!(**b, Unwind::Error(_))) {
            for (c, s) in chain.iter().zip(snapshot) {
                *c.class_state.lock() = s;
            }
        }
        r
    }

    pub(super) fn lock_class(&mut self, c: &ClassRef) -> Result<(), Unwind> {
        let me = self.pid.wrapping_add(1);
        loop {
            {
                let mut st = c.lock.state.lock();
                if st.1 == 0 || st.0 == me {
                    st.0 = me;
                    st.1 += 1;
                    return Ok(());
                }
            }
            // Held by another process: let it run.
            if let Some(h) = self.preempt.as_mut() {
                h()?;
            } else {
                std::thread::yield_now();
            }
        }
    }

    pub(super) fn unlock_class(&mut self, c: &ClassRef) {
        let mut st = c.lock.state.lock();
        if st.1 > 0 {
            st.1 -= 1;
        }
        if st.1 == 0 {
            st.0 = 0;
        }
    }

    /// A new instance of a Value/Object class with its field defaults evaluated.
    pub fn instantiate(&mut self, c: &ClassRef) -> crate::interp::eval::EvalResult {
        let mut fields = Vec::with_capacity(c.field_names.len());
        for d in c.field_defaults().iter() {
            match d {
                Some(code) => {
                    let code = code.clone();
                    let v = self
                        .run_fn(&code, &Value::Class(c.clone()), Some(c))
                        .map_err(|b| *b)?;
                    fields.push(v);
                }
                None => fields.push(Value::Nil),
            }
        }
        Ok(Value::Object(Arc::new(Instance {
            class: c.clone(),
            fields: fields.into(),
        })))
    }

    /// The keyword constructor (`Point x: 1 y: 2`): the named fields, in declaration order;
    /// a subclass using an inherited constructor gets its other fields' defaults.
    pub(super) fn construct(&mut self, c: &ClassRef, sel: Sym, args: &[Value]) -> Flow {
        if c.is_abstract {
            return Err(self
                .err(
                    ErrorKind::InstantiationError,
                    format!("Cannot instantiate abstract class {}", c.name),
                )
                .into());
        }
        if sel == c.ctor_sel && args.len() == c.field_names.len() {
            return Ok(Value::Object(Arc::new(Instance {
                class: c.clone(),
                fields: args.iter().cloned().collect(),
            })));
        }
        let base = self.instantiate(c)?;
        let Value::Object(inst) = &base else {
            return Ok(base);
        };
        let mut fields = inst.fields.to_vec();
        for (k, v) in sel.as_str().split(':').filter(|k| !k.is_empty()).zip(args) {
            if let Some(i) = c.field_index(Sym::new(k)) {
                fields[i] = v.clone();
            }
        }
        Ok(Value::Object(Arc::new(Instance {
            class: c.clone(),
            fields: fields.into(),
        })))
    }
}
