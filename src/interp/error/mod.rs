//! Exceptions as values (LANGUAGE.md 5.10): error kinds ([`kind::ErrorKind`]) and their classes, building exception
//! instances, arithmetic faults, Results, and turning an uncaught exception into a
//! [`BtError`].

use std::sync::Arc;

use crate::interp::eval::{Ctx, Unwind};
use crate::interp::program::{Program, EXCEPTION_FIELDS};
use crate::value::{ClassRef, Instance, Sym, Value};
use top::{BtError, Uncaught};

/// Field positions in an exception instance.
pub const F_MESSAGE: usize = 0;
pub const F_KIND: usize = 1;
pub const F_HINT: usize = 2;
pub const F_SELECTOR: usize = 3;
pub const F_ERROR_CLASS: usize = 4;
pub const F_REASON: usize = 5;
pub const F_TRACE: usize = 6;

pub const ARITH_MESSAGE: &str = "bad arithmetic operation";
pub const ARITH_HINT: &str =
    "Arithmetic requires numbers; check for a non-numeric operand or division by zero.";
pub const DNU_HINT: &str = "Check spelling or use 'respondsTo:' to verify method exists";

pub mod kind;
pub mod top;

pub use kind::{ErrorKind, KindClass};

/// The class of an error kind (5.10).
pub fn class_for_kind(prog: &Program, kind: ErrorKind) -> ClassRef {
    let c = &prog.core;
    match kind.class() {
        KindClass::TypeError => c.type_error.clone(),
        KindClass::InstantiationError => c.instantiation_error.clone(),
        KindClass::RuntimeError => c.runtime_error.clone(),
        KindClass::Error => c.error.clone(),
    }
}

/// Builds an exception instance of `class` (which must descend from Exception).
#[allow(clippy::too_many_arguments)] // mirrors the exception's fields
pub fn make_exception(
    prog: &Program,
    class: &ClassRef,
    kind: Sym,
    message: String,
    hint: Option<String>,
    selector: Option<Sym>,
    error_class: Option<Sym>,
    reason: Option<Sym>,
    trace: Value,
) -> Value {
    let n = class.field_names.len().max(EXCEPTION_FIELDS.len());
    let mut fields = vec![Value::Nil; n];
    fields[F_MESSAGE] = Value::str(message);
    fields[F_KIND] = Value::Symbol(kind);
    fields[F_HINT] = hint.map(Value::str).unwrap_or(Value::Nil);
    fields[F_SELECTOR] = selector.map(Value::Symbol).unwrap_or(Value::Nil);
    fields[F_ERROR_CLASS] = error_class.map(Value::Symbol).unwrap_or(Value::Nil);
    fields[F_REASON] = reason.map(Value::Symbol).unwrap_or(Value::Nil);
    fields[F_TRACE] = trace;
    let _ = prog;
    Value::Object(Arc::new(Instance {
        class: class.clone(),
        fields: fields.into(),
    }))
}

/// Reads a field of an exception value.
pub fn exc_field(v: &Value, i: usize) -> Value {
    match v {
        Value::Object(inst) => inst.fields.get(i).cloned().unwrap_or(Value::Nil),
        _ => Value::Nil,
    }
}

/// True when `v` is an exception instance.
pub fn is_exception(prog: &Program, v: &Value) -> bool {
    matches!(v, Value::Object(i) if i.class.inherits_or_is(&prog.core.exception))
}

impl Ctx {
    /// The current activation chain as `Class>>selector` strings, innermost first (≤ 100).
    pub(crate) fn stack_trace(&self) -> Value {
        let items: Vec<Value> = self
            .acts
            .iter()
            .rev()
            .take(100)
            .map(|a| {
                if a.class_side {
                    Value::str(format!("{} class>>{}", a.class, a.sel))
                } else {
                    Value::str(format!("{}>>{}", a.class, a.sel))
                }
            })
            .collect();
        Value::list(items)
    }

    /// Records where an exception was created (for `file:line:col`).
    pub(crate) fn note_raise(&self, exc: &Value) {
        if let Value::Object(i) = exc {
            self.err_loc
                .set(Some((Arc::as_ptr(i) as usize, self.cur_loc)));
        }
    }

    pub(crate) fn raise_kind(&self, kind: ErrorKind, msg: String, hint: Option<String>) -> Unwind {
        let class = class_for_kind(&self.prog, kind);
        let v = make_exception(
            &self.prog,
            &class,
            kind.sym(),
            msg,
            hint,
            Some(self.cur_sel),
            Some(self.cur_cls),
            None,
            self.stack_trace(),
        );
        self.note_raise(&v);
        Unwind::Error(v)
    }

    /// Raises an error of `kind` with an explicit selector and error class.
    pub fn err_full(
        &self,
        kind: ErrorKind,
        msg: impl Into<String>,
        hint: Option<String>,
        selector: Option<Sym>,
        error_class: Option<Sym>,
    ) -> Unwind {
        let class = class_for_kind(&self.prog, kind);
        let v = make_exception(
            &self.prog,
            &class,
            kind.sym(),
            msg.into(),
            hint,
            selector,
            error_class,
            None,
            self.stack_trace(),
        );
        self.note_raise(&v);
        Unwind::Error(v)
    }

    /// `anObject error: msg`: `user_error` whose errorClass is the receiver's class.
    pub fn user_error(&self, recv: &Value, msg: impl Into<String>) -> Unwind {
        let cls = Sym::new(&self.class_name_of(recv));
        let v = make_exception(
            &self.prog,
            &self.prog.core.error,
            self.prog.syms.user_error,
            msg.into(),
            None,
            None,
            Some(cls),
            None,
            self.stack_trace(),
        );
        self.note_raise(&v);
        Unwind::Error(v)
    }
}

pub(crate) fn arith_fault(ctx: &Ctx) -> Unwind {
    let v = make_exception(
        &ctx.prog,
        &ctx.prog.core.type_error,
        ErrorKind::TypeError.sym(),
        ARITH_MESSAGE.to_string(),
        Some(ARITH_HINT.to_string()),
        Some(ctx.cur_sel),
        Some(ctx.cur_cls),
        Some(ctx.prog.syms.badarith),
        ctx.stack_trace(),
    );
    ctx.note_raise(&v);
    Unwind::Error(v)
}

/// `Result ok: v` / `Result error: v`.
pub fn make_result(ctx: &Ctx, ok: bool, v: Value) -> Value {
    let class = ctx.prog.core.result.clone();
    let mut fields = vec![Value::Nil; class.field_names.len().max(3)];
    if ok {
        fields[0] = v;
    } else {
        fields[1] = v;
    }
    fields[2] = Value::bool(ok);
    Value::Object(Arc::new(Instance {
        class,
        fields: fields.into(),
    }))
}

/// `Some((is_ok, payload))` when `v` is a Result.
pub fn result_parts(prog: &Program, v: &Value) -> Option<(bool, Value)> {
    match v {
        Value::Object(i) if Arc::ptr_eq(&i.class, &prog.core.result) => {
            let ok = matches!(i.fields.get(2), Some(Value::True));
            let payload = if ok {
                i.fields[0].clone()
            } else {
                i.fields[1].clone()
            };
            Some((ok, payload))
        }
        _ => None,
    }
}

/// Turns an uncaught unwind into a [`BtError`].
pub fn to_bt_error(ctx: &mut Ctx, u: Unwind) -> BtError {
    match u {
        Unwind::Error(exc) => exception_to_bt_error(ctx, &exc),
        Unwind::Return { .. } => BtError::simple(
            "RuntimeError",
            "runtime_error",
            "non-local return from a method that has already returned",
        ),
        Unwind::Exit(v) => {
            let msg = ctx.default_print(&v).unwrap_or_else(|_| "exit".to_string());
            BtError::simple("RuntimeError", "exit", &format!("process exited: {msg}"))
        }
    }
}

pub fn exception_to_bt_error(ctx: &mut Ctx, exc: &Value) -> BtError {
    let prog = ctx.prog.clone();
    if !is_exception(&prog, exc) {
        let msg = ctx.print_string(exc).unwrap_or_default();
        return BtError::simple("Error", "signal", &msg);
    }
    let class_name = match exc {
        Value::Object(i) => i.class.name.as_str().to_string(),
        _ => "Error".to_string(),
    };
    // A class may override `kind` (e.g. AssertionFailure); the field is the fallback.
    let kind = match ctx.send(exc, Sym::new("kind"), &[]) {
        Ok(Value::Symbol(s)) => s.as_str().to_string(),
        _ => match exc_field(exc, F_KIND) {
            Value::Symbol(s) => s.as_str().to_string(),
            _ => "signal".to_string(),
        },
    };
    let message = match &exc_field(exc, F_MESSAGE) {
        Value::Str(s) => s.as_str().to_string(),
        Value::Nil => class_name.clone(),
        other => ctx.display_string(other).unwrap_or_default(),
    };
    let hint = match &exc_field(exc, F_HINT) {
        Value::Str(s) => Some(s.as_str().to_string()),
        _ => None,
    };
    let selector = exc_field(exc, F_SELECTOR)
        .as_sym()
        .map(|s| s.as_str().to_string());
    let badarith = exc_field(exc, F_REASON).as_sym() == Some(prog.syms.badarith);
    let loc = match (ctx.err_loc.get(), exc) {
        (Some((p, l)), Value::Object(i)) if p == Arc::as_ptr(i) as usize => l,
        _ => ctx.cur_loc,
    };
    BtError::Uncaught(Uncaught {
        class_name,
        kind,
        message,
        hint,
        selector,
        location: prog.location(loc),
        badarith,
    })
}
