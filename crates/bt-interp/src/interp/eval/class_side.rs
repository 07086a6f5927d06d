//! Class-side machinery of dispatch: class-state methods run under the class lock and roll
//! class variables back when they raise; so does a class method that only calls them
//! ([`StateScope`]); instantiation with field defaults and the Value-class keyword
//! constructor.

use crate::interp::class::ClassExt;
use std::sync::Arc;

use crate::interp::class::Class;
use crate::interp::error::ErrorKind;
use crate::interp::eval::code::FnCode;
use crate::interp::eval::{Ctx, Flow, Frame, StateScope, Unwind};
use crate::value::{ClassRef, Instance, Sym, Value};

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
            undo: Vec::new(),
        });
        let r = code.op.run(self, f);
        if let Some(scope) = self.state_scopes.pop() {
            if !scope.undo.is_empty() && matches!(&r, Err(b) if matches!(**b, Unwind::Error(_))) {
                self.undo_scope(scope);
            }
        }
        r
    }

    /// Puts back the class variables a failed [`StateScope`] logged, under the class lock.
    fn undo_scope(&mut self, scope: StateScope) {
        let restore = |undo: &[(ClassRef, Sym, Value, Value)]| {
            for (c, name, old, new) in undo.iter().rev() {
                let mut st = c.class_state.lock();
                if let Some(slot) = st.iter_mut().find(|(n, _)| n == name) {
                    if crate::value::order::strict_eq(&slot.1, new) {
                        slot.1 = old.clone();
                    }
                }
            }
        };
        if self.proc.in_runtime() {
            let lock = crate::interp::process::class_lock(self, &scope.target);
            if let Ok(guard) = crate::interp::process::lock_proc(self, &lock) {
                restore(&scope.undo);
                drop(guard);
            }
            return;
        }
        if self.lock_class(&scope.target).is_ok() {
            restore(&scope.undo);
            self.unlock_class(&scope.target);
        }
    }

    /// After a class method touching `target`'s state ran without raising: logs in each
    /// enclosing [`StateScope`] of the same class the variables it changed (the caller holds
    /// the class lock).
    fn log_scope_changes(
        &mut self,
        target: &ClassRef,
        chain: &[ClassRef],
        before: &[Vec<(Sym, Value)>],
    ) {
        if !self
            .state_scopes
            .iter()
            .any(|s| Arc::ptr_eq(&s.target, target))
        {
            return;
        }
        let mut changed = Vec::new();
        for (c, old) in chain.iter().zip(before) {
            let now = c.class_state.lock();
            for ((name, was), (_, is)) in old.iter().zip(now.iter()) {
                if !crate::value::order::strict_eq(was, is) {
                    changed.push((c.clone(), *name, was.clone(), is.clone()));
                }
            }
        }
        for scope in self
            .state_scopes
            .iter_mut()
            .filter(|s| Arc::ptr_eq(&s.target, target))
        {
            for (c, name, was, is) in &changed {
                match scope
                    .undo
                    .iter_mut()
                    .find(|(k, n, _, _)| Arc::ptr_eq(k, c) && n == name)
                {
                    Some(e) => e.3 = is.clone(),
                    None => scope.undo.push((c.clone(), *name, was.clone(), is.clone())),
                }
            }
        }
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
            let r = self.exec_rolling_back(&target, code, &f);
            drop(guard);
            return r;
        }
        self.lock_class(&target)?;
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
        } else if !self.state_scopes.is_empty() {
            self.log_scope_changes(target, &chain, &snapshot);
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
