//! Exceptions as values: error kinds ([`kind::ErrorKind`]) and their classes, building exception
//! instances, arithmetic faults, Results, and turning an uncaught exception into a
//! [`BtError`].
//!
//! Layer: above the evaluator's types (it names `eval`, `program`, `class`, `print`); the
//! evaluator builds exceptions through the `Ctx` methods defined here (`Ctx::err`,
//! `Ctx::arith_err`, `Ctx::make_ok`, …). `kind` is a leaf every layer may name.

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
/// `stackLocations`: a List parallel to `stackTrace` of `file:line:col` Strings (nil where
/// unknown); frames that ran in an actor the exception crossed end with ` (actor Class)`.
pub const F_LOCS: usize = 7;
/// `detail`: the line a printed report shows under the message (an arithmetic fault's
/// operation), or nil. Not part of `messageText`, so code that reads the message sees what
/// the spec fixes.
pub const F_DETAIL: usize = 8;

pub const ARITH_MESSAGE: &str = "bad arithmetic operation";
pub const ARITH_HINT: &str =
    "Arithmetic requires numbers; check for a non-numeric operand or division by zero.";

pub mod kind;
pub mod top;

pub use kind::{ErrorKind, KindClass};

/// The class of an error kind.
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
    /// An arithmetic fault: `type_error` "bad arithmetic operation", raw reason `badarith`.
    pub fn arith_err(&self) -> Unwind {
        arith_fault(self)
    }

    /// Builds `Result ok: v`.
    pub fn make_ok(&self, v: Value) -> Value {
        make_result(self, true, v)
    }

    /// Builds `Result error: reason`.
    pub fn make_error(&self, reason: Value) -> Value {
        make_result(self, false, reason)
    }

    /// Where each activation of [`Ctx::stack_trace`] is (innermost first): the innermost at
    /// the current location, each outer one at the call site it made the inner one from.
    pub(crate) fn stack_locations(&self) -> Value {
        // A frame whose location is still its own call site ran no located code: a method
        // of the built-in library (its nodes carry no file), shown as unknown.
        let mut loc = self.cur_loc;
        let mut items = Vec::new();
        for a in self.acts.iter().rev().take(100) {
            let known = loc != a.call_loc || a.sel.as_str() == "doIt";
            items.push(match self.prog.location(loc).filter(|_| known) {
                Some((f, l, c)) => Value::str(format!("{f}:{l}:{c}")),
                None => Value::Nil,
            });
            loc = a.call_loc;
        }
        Value::list(items)
    }

    /// `exc` (a fresh exception) with its `stackLocations` filled in.
    pub(crate) fn with_locations(&self, mut exc: Value) -> Value {
        if let Value::Object(i) = &mut exc {
            if let Some(inst) = Arc::get_mut(i) {
                if let Some(slot) = inst.fields.get_mut(F_LOCS) {
                    *slot = self.stack_locations();
                }
            }
        }
        exc
    }

    /// An exception raised in actor `class` reaching this (calling) process: the actor's
    /// frames are marked ` (actor Class)` and this process's frames follow them, so the
    /// trace reads across the boundary.
    pub(crate) fn across_boundary(&self, exc: Value, class: Sym) -> Value {
        let Value::Object(inst) = &exc else {
            return exc;
        };
        let (trace_v, locs) = (exc_field(&exc, F_TRACE), exc_field(&exc, F_LOCS));
        let Value::List(trace) = &trace_v else {
            return exc;
        };
        let locs: Vec<Value> = match &locs {
            Value::List(l) => l.iter().cloned().collect(),
            _ => Vec::new(),
        };
        let mark = format!(" (actor {class})");
        let mut new_trace: Vec<Value> = trace.iter().cloned().collect();
        let mut new_locs: Vec<Value> = (0..new_trace.len())
            .map(|i| match locs.get(i) {
                Some(Value::Str(s)) if !s.ends_with(')') => Value::str(format!("{s}{mark}")),
                Some(v) => v.clone(),
                None => Value::Nil,
            })
            .collect();
        let (here_t, here_l) = (self.stack_trace(), self.stack_locations());
        if let (Value::List(t), Value::List(l)) = (&here_t, &here_l) {
            new_trace.extend(t.iter().cloned());
            new_locs.extend(l.iter().cloned());
        }
        let mut fields = inst.fields.to_vec();
        if fields.len() <= F_LOCS {
            return exc;
        }
        fields[F_TRACE] = Value::list(new_trace);
        fields[F_LOCS] = Value::list(new_locs);
        let out = Value::Object(Arc::new(Instance {
            class: inst.class.clone(),
            fields: fields.into(),
        }));
        // The new instance may reuse the address of a freed exception that `err_loc` still
        // names: record this one at the caller's location (the header line's location).
        self.note_raise(&out);
        out
    }

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
        let v = self.with_locations(v);
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
        let v = self.with_locations(v);
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
        let v = self.with_locations(v);
        self.note_raise(&v);
        Unwind::Error(v)
    }
}

pub(crate) fn arith_fault(ctx: &Ctx) -> Unwind {
    arith_fault_detailed(ctx, None)
}

/// [`arith_fault`] with `detail` (the line a printed report shows under the message).
pub(crate) fn arith_fault_detailed(ctx: &Ctx, detail: Option<String>) -> Unwind {
    let mut v = make_exception(
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
    if let (Some(d), Value::Object(i)) = (detail, &mut v) {
        if let Some(slot) = Arc::get_mut(i).and_then(|inst| inst.fields.get_mut(F_DETAIL)) {
            *slot = Value::str(d);
        }
    }
    let v = ctx.with_locations(v);
    ctx.note_raise(&v);
    Unwind::Error(v)
}

/// [`arith_fault`] of the binary operation `r SEL a` (SEL the running selector): the same
/// exception, with the operation in its `detail` field for the printed report
/// ([`arith_detail`]); the field travels with the exception (out of an actor, through
/// `pass` and `signal`).
pub(crate) fn arith_fault_on(ctx: &Ctx, r: &Value, a: &Value) -> Unwind {
    arith_fault_detailed(ctx, Some(arith_detail(ctx.cur_sel.as_str(), r, a)))
}

/// [`arith_fault`] of the unary operation `r SEL` (`-1 sqrt`, `0 ln`, `1000 exp`), with
/// [`unary_arith_detail`].
pub(crate) fn arith_fault_of(ctx: &Ctx, r: &Value) -> Unwind {
    arith_fault_detailed(ctx, Some(unary_arith_detail(ctx.cur_sel.as_str(), r)))
}

/// A number operand's value as a Float (a huge Integer's is ±infinity; a Character counts
/// as its code point), or None for a value that is not a number.
fn num_f64(v: &Value) -> Option<f64> {
    use num_traits::ToPrimitive;
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Char(c) => Some(f64::from(u32::from(c.get()))),
        Value::BigInt(b) => Some(b.to_f64().unwrap_or(f64::NAN)),
        Value::Float(f) => Some(f.get()),
        _ => None,
    }
}

/// An operand as an arithmetic fault's detail shows it: its print string cut at 40
/// characters, or `a Foo` for a value without a simple one.
fn arith_operand(v: &Value) -> String {
    match crate::interp::print::simple_print(v) {
        Some(s) => crate::diagnostic::cap_quote(&s, 40).into_owned(),
        None => article_class(v),
    }
}

/// The line under a unary arithmetic fault's report: `` `-1 sqrt`: the square root of a
/// negative number is not a real number ``, `` `0 ln`: the logarithm of zero has no value ``,
/// `` `1000 exp`: Integer exp has no number as its answer `` (too large for a Float).
pub fn unary_arith_detail(sel: &str, r: &Value) -> String {
    let expr = format!("`{} {sel}`", arith_operand(r));
    let Some(x) = num_f64(r) else {
        let shown = arith_operand(r);
        return format!(
            "{expr}: {} {sel}, and {shown} is not a number",
            class_name(r)
        );
    };
    // A huge Integer's f64 is ±infinity: its sign is still right.
    let sign = if x < 0.0 { -1 } else { i32::from(x > 0.0) };
    match sel {
        "sqrt" if sign < 0 => {
            format!("{expr}: the square root of a negative number is not a real number")
        }
        "ln" | "log" | "log2" | "log10" if sign <= 0 => {
            let what = if sign == 0 {
                "zero"
            } else {
                "a negative number"
            };
            format!("{expr}: the logarithm of {what} has no value")
        }
        "asin" | "acos" | "arcSin" | "arcCos" if x.abs() > 1.0 => {
            format!("{expr}: {sel} is defined from -1 to 1 only")
        }
        _ => format!(
            "{expr}: {} {sel} has no number as its answer (beyond the range of a Float)",
            class_name(r)
        ),
    }
}

/// The class name of a built-in value, without needing the class table (user instances and
/// classes report their own class name).
pub fn class_name(v: &Value) -> String {
    let s = match v {
        Value::Nil => "UndefinedObject",
        Value::True => "True",
        Value::False => "False",
        Value::Int(_) | Value::BigInt(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Char(_) => "Character",
        Value::Symbol(_) => "Symbol",
        Value::Str(_) => "String",
        Value::Binary(_) => "Binary",
        Value::List(_) => "List",
        Value::Array(_) => "Array",
        Value::Tuple(_) => "Tuple",
        Value::Dict(_) => "Dictionary",
        Value::Set(_) => "Set",
        Value::Bag(_) => "Bag",
        Value::Queue(_) => "Queue",
        Value::Interval(_) => "Interval",
        Value::Object(o) => return o.class.name.as_str().to_string(),
        Value::Class(c) => return format!("{} class", c.name),
        Value::Meta(_) => "Metaclass",
        Value::Block(_) => "Block",
        Value::Native(n) => return n.0.class().name.as_str().to_string(),
    };
    s.to_string()
}

/// `a String`, `an Integer`, `nil`.
pub fn article_class(v: &Value) -> String {
    match v {
        Value::Nil => "nil".to_string(),
        _ => {
            let n = class_name(v);
            let an = n.starts_with(['A', 'E', 'I', 'O', 'U']);
            format!("{} {n}", if an { "an" } else { "a" })
        }
    }
}

/// The line under an arithmetic fault's report: `` `1 / 0`: division by zero ``, or
/// `` `3 + "x"`: Integer + String, and "x" is not a number `` (operands of other classes
/// are shown by class: `an Account`; long ones are cut).
pub fn arith_detail(sel: &str, r: &Value, a: &Value) -> String {
    let shown = arith_operand;
    let expr = format!("`{} {sel} {}`", shown(r), shown(a));
    let zero = match a {
        Value::Int(0) => true,
        Value::Float(f) => f.get() == 0.0,
        _ => false,
    };
    let division = matches!(
        sel,
        "/" | "%" | "\\\\" | "rem:" | "mod:" | "div:" | "quo:" | "reciprocal"
    );
    let log_of = |v: &Value| match num_f64(v) {
        Some(0.0) => Some("zero"),
        Some(x) if x < 0.0 => Some("a negative number"),
        _ => None,
    };
    match (num_f64(r).is_some(), num_f64(a).is_some()) {
        (true, true) if division && zero => format!("{expr}: division by zero"),
        (true, true) if sel == "log:" && log_of(r).is_some() => {
            format!(
                "{expr}: the logarithm of {} has no value",
                log_of(r).unwrap_or_default()
            )
        }
        (true, true)
            if sel == "log:" && (log_of(a).is_some() || num_f64(a).is_some_and(|x| x == 1.0)) =>
        {
            format!("{expr}: a logarithm to base {} has no value", shown(a))
        }
        (true, true) => format!(
            "{expr}: {} {sel} {} has no number as its answer",
            class_name(r),
            class_name(a)
        ),
        (rn, _) => {
            let bad = if rn { a } else { r };
            format!(
                "{expr}: {} {sel} {}, and {} is not a number",
                class_name(r),
                class_name(a),
                shown(bad)
            )
        }
    }
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

/// The `stackTrace` / `stackLocations` of an exception as frames, innermost first.
fn trace_frames(exc: &Value) -> Vec<crate::interp::error::top::TraceFrame> {
    let trace_v = exc_field(exc, F_TRACE);
    let Value::List(trace) = &trace_v else {
        return Vec::new();
    };
    let locs_v = exc_field(exc, F_LOCS);
    let locs: Vec<Value> = match &locs_v {
        Value::List(l) => l.iter().cloned().collect(),
        _ => Vec::new(),
    };
    trace
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (location, actor) = match locs.get(i).and_then(|l| l.as_str()) {
                Some(l) => match l.split_once(" (actor ") {
                    Some((at, a)) => (
                        Some(at.to_string()),
                        Some(a.trim_end_matches(')').to_string()),
                    ),
                    None => (Some(l.to_string()), None),
                },
                None => (None, None),
            };
            crate::interp::error::top::TraceFrame {
                method: m.as_str().unwrap_or("?").to_string(),
                location,
                actor,
            }
        })
        .collect()
}

/// The report's line under a `does_not_understand` (`shown` = the errorClass, `Foo` or
/// `Foo class`): the checker's suggestion from the selectors the class understands now —
/// `did you mean `factorial`?`, or the selector with the same first keyword and another
/// number of arguments. Made when the report is, so raising stays cheap.
fn dnu_suggestion(prog: &Program, shown: &str, sel: &str) -> Option<String> {
    use crate::interp::class::ClassExt;
    let (name, side) = match shown.strip_suffix(" class") {
        Some(n) => (n, true),
        None => (shown, false),
    };
    let class = prog.class_named(name)?;
    let mut chain = class.chain();
    if side {
        // A class also understands what every class does (Class, Object).
        chain.extend(prog.core.class.chain());
    }
    let mut candidates: Vec<String> = Vec::new();
    for (i, k) in chain.iter().enumerate() {
        let table = if side && i < class.chain().len() {
            k.class_methods().read()
        } else {
            k.methods().read()
        };
        candidates.extend(table.keys().map(|s| s.as_str().to_string()));
    }
    candidates.sort();
    candidates.dedup();
    crate::check::sends::selector_hint(sel, &candidates, shown)
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
        Unwind::Exit(_) if u.limit_kind().is_some() => {
            // A limit (an embedder's, or a step larger than the machine's memory).
            let kind = u.limit_kind().map_or("limit", |k| k.as_str());
            let mut e = BtError::simple(
                "LimitExceeded",
                kind,
                &format!("{} exceeded", kind.replace('_', " ")),
            );
            if let (BtError::Uncaught(u), "memory_limit") = (&mut e, kind) {
                u.hint = Some(
                    "one step would allocate more than the memory limit (or the machine's memory) allows"
                        .to_string(),
                );
            }
            e
        }
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
    // A class may override `messageText` (Pharo's way to give an exception class its text);
    // the field is the fallback, as for `kind`.
    let text = match ctx.send(exc, Sym::new("messageText"), &[]) {
        Ok(v) => v,
        Err(_) => exc_field(exc, F_MESSAGE),
    };
    let message = match &text {
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
    let detail = match &exc_field(exc, F_DETAIL) {
        Value::Str(s) => Some(s.as_str().to_string()),
        _ if kind == "does_not_understand" => selector.as_deref().and_then(|sel| {
            let class = exc_field(exc, F_ERROR_CLASS);
            dnu_suggestion(&prog, class.as_sym()?.as_str(), sel)
        }),
        _ => None,
    };
    BtError::Uncaught(Uncaught {
        class_name,
        kind,
        message,
        hint,
        selector,
        location: prog.location(loc),
        badarith,
        detail,
        trace: trace_frames(exc),
        excerpt: prog.caret_excerpt(loc),
    })
}
