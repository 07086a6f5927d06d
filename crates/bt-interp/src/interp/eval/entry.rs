//! Entry activations: a parameterless function body run as its own activation (field and
//! classState defaults) and a top-level unit over the session's bindings. Message sends and
//! method activations are in `send`.

use std::sync::Arc;

use crate::interp::eval::code::FnCode;
use crate::interp::eval::{Activation, Ctx, Flow, Frame, Unwind, VarCell};
use crate::value::{ClassRef, Sym, Value};

/// A `^` whose home is this entry activation ends it with its value.
fn own_return(r: Flow, home: u64) -> Flow {
    match r {
        Err(b) if matches!(&*b, Unwind::Return { home: h, .. } if *h == home) => match *b {
            Unwind::Return { value, .. } => Ok(value),
            other => Err(Box::new(other)),
        },
        r => r,
    }
}

impl Ctx {
    /// Runs a parameterless function body (field default, classState default, top-level
    /// unit without bindings) as its own activation with `self` = `recv`.
    pub(crate) fn run_fn(
        &mut self,
        code: &Arc<FnCode>,
        recv: &Value,
        mclass: Option<&ClassRef>,
    ) -> Flow {
        self.enter()?;
        let (base, cbase) = self.push_frame(code, &[]);
        let home = self.new_home();
        self.acts.push(Activation {
            home,
            class: mclass.map(|c| c.name).unwrap_or(self.prog.core.object.name),
            sel: Sym::new("default"),
            class_side: true,
            call_loc: self.cur_loc,
        });
        let f = Frame {
            recv,
            base,
            cbase,
            upvals: &[],
            home,
            mclass: mclass.map(|c| &**c),
            mside: true,
        };
        let r = code.op.run(self, &f);
        self.acts.pop();
        self.pop_frame(base, cbase);
        self.depth -= 1;
        own_return(r, home)
    }

    /// Runs a top-level unit whose cells are the given session bindings. `slots` holds the
    /// values of the bindings kept in stack slots (`FnCode::toplevel_slots`, same order): they
    /// are moved in before the unit runs and back out after it, whatever its outcome.
    pub(crate) fn run_toplevel(
        &mut self,
        code: &Arc<FnCode>,
        cells: Vec<Arc<VarCell>>,
        slots: &mut [Value],
    ) -> Flow {
        self.enter()?;
        let base = self.stack.len();
        let cbase = self.cells.len();
        self.stack.resize(base + code.nslots as usize, Value::Nil);
        for (&(i, _), v) in code.toplevel_slots.iter().zip(slots.iter_mut()) {
            self.stack[base + i as usize] = std::mem::replace(v, Value::Nil);
        }
        self.cells.extend(cells);
        let home = self.new_home();
        // Interned once (two per-thread table lookups per input otherwise).
        static DOIT: std::sync::OnceLock<(Sym, Sym)> = std::sync::OnceLock::new();
        let (class, sel) = *DOIT.get_or_init(|| (Sym::new("UndefinedObject"), Sym::new("doIt")));
        self.acts.push(Activation {
            home,
            class,
            sel,
            class_side: false,
            call_loc: self.cur_loc,
        });
        let recv = Value::Nil;
        let f = Frame {
            recv: &recv,
            base,
            cbase,
            upvals: &[],
            home,
            mclass: None,
            mside: false,
        };
        // Statement by statement: a top-level `^` ends only its own statement.
        let mut r = Ok(Value::Nil);
        for s in &code.stmts {
            r = own_return(s.run(self, &f), home);
            if r.is_err() {
                break;
            }
        }
        for (&(i, _), v) in code.toplevel_slots.iter().zip(slots.iter_mut()) {
            *v = std::mem::replace(&mut self.stack[base + i as usize], Value::Nil);
        }
        self.acts.pop();
        self.pop_frame(base, cbase);
        self.depth -= 1;
        own_return(r, home)
    }
}
