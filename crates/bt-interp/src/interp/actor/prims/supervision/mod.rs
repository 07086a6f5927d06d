//! Supervisor primitives: the class-side lifecycle of `Supervisor` and
//! `DynamicSupervisor` subclasses (`supervise`, `current`) and the supervisor-handle protocol.
//!
//! A supervisor class's configuration (`children`, `strategy`, …) is read by sending those
//! class-side selectors, and turned into a native [`SupervisorSpec`]; worker children are
//! started by a [`StartFn`] that runs `spawn`/`spawnWith:` (the same code as
//! [`spawn_actor`]) in a fresh context inside the supervisor's process. Process navigation
//! lives in the submodule `nav`.

pub mod fields;
pub mod nav;
pub mod snap;

use std::sync::{Arc, Weak};

use crate::interp::actor::handle::{downcast, native, pid_label, ActorRef};
use crate::interp::actor::prims::actor::{error_value, pid_value, spawn_actor, target};
use crate::interp::actor::{need_cx, sys_of, with_fresh_ctx, ActorSys};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::{class_arg, seq_arg};
use crate::runtime::supervisor::{
    AutoShutdown, ChildSpec, RestartType, Shutdown, StartFn, Strategy, SupError, SupHandle,
    SupervisorSpec,
};
use crate::value::{ClassRef, NativeObj, Sym, Value};

/// A handle on one run of a supervisor (`Supervisor(App, 0.5.0)`).
pub struct SupRef {
    pub h: SupHandle,
    pub class: ClassRef,
    pub dynamic: bool,
}

impl NativeObj for SupRef {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let kind = if self.dynamic {
            "DynamicSupervisor"
        } else {
            "Supervisor"
        };
        format!("{kind}({}, {})", self.class.name, pid_label(self.h.pid()))
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<SupRef>()
            .is_some_and(|o| o.h.pid() == self.h.pid())
    }
    fn hash_code(&self) -> u64 {
        self.h.pid().number
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let p = self.h.pid();
        (5, vec![p.node as u64, p.number, u64::from(p.service), 2])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn is_dynamic_class(ctx: &Ctx, c: &ClassRef) -> bool {
    ctx.prog
        .class_named("DynamicSupervisor")
        .is_some_and(|d| c.inherits_or_is(&d))
}

fn is_supervisor_class(ctx: &Ctx, c: &ClassRef) -> bool {
    ctx.prog
        .class_named("Supervisor")
        .is_some_and(|d| c.inherits_or_is(&d))
}

/// The handle value of a running supervisor.
pub fn sup_value(ctx: &Ctx, h: SupHandle) -> Value {
    let class = match &h.spec().class {
        Value::Class(c) => c.clone(),
        _ => ctx
            .prog
            .class_named("Supervisor")
            .unwrap_or_else(|| ctx.prog.core.object.clone()),
    };
    let dynamic = h.spec().is_dynamic();
    native(SupRef { h, class, dynamic })
}

fn sup_of(ctx: &Ctx, r: &Value) -> Result<(SupHandle, ClassRef, bool), Unwind> {
    match downcast::<SupRef>(r) {
        Some(s) => Ok((s.h.clone(), s.class.clone(), s.dynamic)),
        None => {
            let n = ctx.class_name_of(r);
            Err(ctx.type_err(format!("{n} is not a supervisor handle")))
        }
    }
}

fn sup_err_value(ctx: &Ctx, e: &SupError) -> Value {
    error_value(ctx, ErrorKind::from_name(e.kind()), e.message())
}

fn sym_of(ctx: &mut Ctx, recv: &Value, sel: &str) -> Result<Option<String>, Unwind> {
    match &ctx.send(recv, Sym::new(sel), &[])? {
        Value::Symbol(s) => Ok(Some(s.as_str().to_string())),
        Value::Str(s) => Ok(Some(s.to_string())),
        Value::Nil => Ok(None),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("{sel} must answer a Symbol, not {n}")))
        }
    }
}

fn int_of(ctx: &mut Ctx, recv: &Value, sel: &str) -> Result<u64, Unwind> {
    match ctx.send(recv, Sym::new(sel), &[])? {
        Value::Int(i) if i >= 0 => Ok(i as u64),
        other => {
            let n = ctx.class_name_of(&other);
            Err(ctx.type_err(format!("{sel} must answer a non-negative Integer, not {n}")))
        }
    }
}

fn restart_of(ctx: &mut Ctx, recv: &Value, sel: &str) -> Result<RestartType, Unwind> {
    let s = sym_of(ctx, recv, sel)?.unwrap_or_else(|| "temporary".into());
    RestartType::from_symbol(&s).ok_or_else(|| {
        ctx.err(
            ErrorKind::UserError,
            format!("unknown restart type #{s} (expected #permanent, #transient or #temporary)"),
        )
    })
}

/// The [`StartFn`] of an actor class: `spawn` (args nil) or `spawnWith: args`, `initialize`
/// included, in a fresh context inside the calling (supervisor) process.
fn start_fn(sys: Weak<ActorSys>, cls: ClassRef) -> StartFn {
    Arc::new(move |cx, args| {
        let Some(sys) = sys.upgrade() else {
            return Err(Value::str("the runtime is shutting down"));
        };
        let init = if matches!(args, Value::Nil) {
            None
        } else {
            Some(args)
        };
        with_fresh_ctx(&sys, cx, |ctx| match spawn_actor(ctx, &cls, init, None) {
            Ok(Ok(h)) => downcast::<ActorRef>(&h)
                .map(|a| a.proc.clone())
                .ok_or_else(|| Value::str("not an actor")),
            Ok(Err(e)) | Err(Unwind::Error(e)) => Err(e),
            Err(Unwind::Exit(v)) => Err(v),
            Err(Unwind::Return { value, .. }) => Err(value),
        })
    })
}

/// What a supervisor answers when a start method hands it an actor on another node.
pub const REMOTE_CHILD_REFUSED: &str = "a supervisor never owns a child on another node: \
remote children are started by the remote node's own supervisors";

/// The [`StartFn`] of a spec with `classMethod`: sends that class-side selector with the
/// spec's `args` (a List) and supervises the local actor it answers (a `Result` is
/// unwrapped). An actor on another node is refused ([`REMOTE_CHILD_REFUSED`]): the supervisor
/// would monitor a process it cannot start again.
fn class_method_start_fn(sys: Weak<ActorSys>, cls: ClassRef, sel: Sym) -> StartFn {
    Arc::new(move |cx, args| {
        let Some(sys) = sys.upgrade() else {
            return Err(Value::str("the runtime is shutting down"));
        };
        let args: Vec<Value> = match args {
            Value::Nil => Vec::new(),
            Value::List(_) | Value::Array(_) => snap::elements(args),
            v => vec![(*v).clone()],
        };
        with_fresh_ctx(&sys, cx, |ctx| {
            let r = ctx.send(&Value::Class(cls.clone()), sel, &args);
            let v = match r {
                Ok(v) => v,
                Err(Unwind::Error(e)) => return Err(e),
                Err(Unwind::Exit(v)) => return Err(v),
                Err(Unwind::Return { value, .. }) => return Err(value),
            };
            let v = match ctx.send(&v, Sym::new("isOk"), &[]) {
                Ok(Value::True) => ctx.send(&v, Sym::new("unwrap"), &[]).unwrap_or(v),
                _ => v,
            };
            if let Some(a) = downcast::<ActorRef>(&v) {
                if a.proc.pid().node == 0 {
                    return Ok(a.proc.clone());
                }
                return Err(error_value(
                    ctx,
                    ErrorKind::RuntimeError,
                    REMOTE_CHILD_REFUSED.to_string(),
                ));
            }
            if downcast::<crate::interp::actor::prims::node::remote::RemoteActor>(&v).is_some() {
                return Err(error_value(
                    ctx,
                    ErrorKind::RuntimeError,
                    REMOTE_CHILD_REFUSED.to_string(),
                ));
            }
            let n = ctx.class_name_of(&v);
            Err(error_value(
                ctx,
                ErrorKind::RuntimeError,
                format!("{} class>>{sel} answered {n}, not an actor", cls.name),
            ))
        })
    })
}

/// Builds the native spec of a supervisor class from its class-side configuration.
fn build_spec(ctx: &mut Ctx, cls: &ClassRef, depth: usize) -> Result<SupervisorSpec, Unwind> {
    if depth > 64 {
        return Err(ctx.err(ErrorKind::UserError, "supervisor classes nest too deeply"));
    }
    let recv = Value::Class(cls.clone());
    let max = int_of(ctx, &recv, "maxRestarts")?;
    let window = int_of(ctx, &recv, "restartWindow")?;
    let history = crate::interp::actor::prims::observer::history_limit(ctx, &recv)?;
    let sys = Arc::downgrade(&sys_of(ctx)?);
    let name = cls.name.as_str();
    if is_dynamic_class(ctx, cls) {
        let cc = ctx.send(&recv, Sym::new("childClass"), &[])?;
        let cc = class_arg(ctx, &cc, "childClass")?;
        let restart = restart_of(ctx, &Value::Class(cc.clone()), "supervisionPolicy")?;
        let template = ChildSpec::worker(
            cc.name.as_str(),
            Value::Class(cc.clone()),
            start_fn(sys, cc),
        )
        .with_restart(restart);
        return Ok(SupervisorSpec::dynamic(name, recv, template)
            .with_intensity(max as u32, window)
            .with_history_limit(history));
    }
    let strategy = sym_of(ctx, &recv, "strategy")?.unwrap_or_else(|| "oneForOne".into());
    let strategy = match Strategy::from_symbol(&strategy) {
        Some(s) if s != Strategy::SimpleOneForOne => s,
        _ => {
            return Err(ctx.err(
                ErrorKind::UserError,
                format!(
                    "unknown strategy #{strategy} (expected #oneForOne, #oneForAll or #restForOne)"
                ),
            ))
        }
    };
    let auto = sym_of(ctx, &recv, "autoShutdown")?.unwrap_or_else(|| "never".into());
    let Some(auto) = AutoShutdown::from_symbol(&auto) else {
        return Err(ctx.err(
            ErrorKind::UserError,
            format!("unknown autoShutdown #{auto}"),
        ));
    };
    let list = ctx.send(&recv, Sym::new("children"), &[])?;
    let list = seq_arg(ctx, &list, "children")?;
    let mut children = Vec::with_capacity(list.len());
    for c in list {
        children.push(child_spec(ctx, &c, &sys, depth)?);
    }
    Ok(SupervisorSpec::new(name, recv, children)
        .with_strategy(strategy)
        .with_intensity(max as u32, window)
        .with_auto_shutdown(auto)
        .with_history_limit(history))
}

/// One entry of `children`: a class or a SupervisionSpec.
fn child_spec(
    ctx: &mut Ctx,
    v: &Value,
    sys: &Weak<ActorSys>,
    depth: usize,
) -> Result<ChildSpec, Unwind> {
    if let Value::Class(c) = v {
        let restart = restart_of(ctx, v, "supervisionPolicy")?;
        if is_supervisor_class(ctx, c) {
            let spec = build_spec(ctx, c, depth + 1)?;
            return Ok(ChildSpec::supervisor(Arc::new(spec)).with_restart(restart));
        }
        return Ok(
            ChildSpec::worker(c.name.as_str(), v.clone(), start_fn(sys.clone(), c.clone()))
                .with_restart(restart),
        );
    }
    let is_spec = ctx
        .prog
        .class_named("SupervisionSpec")
        .is_some_and(|s| ctx.class_of(v).inherits_or_is(&s));
    if !is_spec {
        let n = ctx.class_name_of(v);
        return Err(ctx.type_err(format!(
            "children must be classes or SupervisionSpecs, not {n}"
        )));
    }
    // Validates the spec (user_error for inconsistent ones).
    ctx.send(v, Sym::new("childSpec"), &[])?;
    let cls = ctx.send(v, Sym::new("actorClass"), &[])?;
    let cls = class_arg(ctx, &cls, "SupervisionSpec actorClass")?;
    let id = match sym_of(ctx, v, "id")? {
        Some(s) => s,
        None => cls.name.as_str().to_string(),
    };
    let restart = restart_of(ctx, v, "restart")?;
    let significant = matches!(ctx.send(v, Sym::new("significant"), &[])?, Value::True);
    let name = sym_of(ctx, v, "name")?;
    let args = ctx.send(v, Sym::new("args"), &[])?;
    let shutdown = match ctx.send(v, Sym::new("shutdown"), &[])? {
        Value::Int(ms) if ms >= 0 => Some(Shutdown::Ms(ms as u64)),
        Value::Symbol(s) if s.as_str() == "infinity" => Some(Shutdown::Infinity),
        _ => None,
    };
    let mut spec = if is_supervisor_class(ctx, &cls) {
        let mut inner = build_spec(ctx, &cls, depth + 1)?;
        inner.id = Sym::new(&id);
        ChildSpec::supervisor(Arc::new(inner))
    } else {
        let mut start = match sym_of(ctx, v, "classMethod")? {
            Some(m) => class_method_start_fn(sys.clone(), cls.clone(), Sym::new(&m)),
            None => start_fn(sys.clone(), cls.clone()),
        };
        if let Some(n) = global_name(ctx, v, name.as_deref())? {
            start = n(start);
        }
        let mut w = ChildSpec::worker(&id, Value::Class(cls.clone()), start);
        w.args = args;
        w
    };
    spec = spec.with_restart(restart).with_significant(significant);
    if let Some(s) = shutdown {
        spec = spec.with_shutdown(s);
    }
    if let Some(n) = name {
        spec = spec.with_name(&n);
    }
    Ok(spec)
}

/// `scope:` of a SupervisionSpec: None for `#local`; for `#global`, what wraps the
/// child's start so that each (re)start registers it cluster-wide.
#[allow(clippy::type_complexity)]
fn global_name(
    ctx: &mut Ctx,
    v: &Value,
    name: Option<&str>,
) -> Result<Option<Box<dyn FnOnce(StartFn) -> StartFn>>, Unwind> {
    let scope = ctx.send(v, Sym::new("scope"), &[])?;
    match &scope {
        Value::Nil => return Ok(None),
        Value::Symbol(s) if s.as_str() == "local" => return Ok(None),
        Value::Symbol(s) if s.as_str() == "global" => {}
        other => {
            let shown = ctx.print_string(other)?;
            return Err(ctx.type_err(format!("scope must be #local or #global, got {shown}")));
        }
    }
    let Some(name) = name else {
        return Ok(None); // no name: nothing to register
    };
    let Some(d) = ctx.prog.dist.get().cloned() else {
        return Err(ctx.err_hint(
            ErrorKind::NodeDown,
            format!("cannot register #{name} globally: this node is not distributed"),
            "start bt with --name to enable distribution",
        ));
    };
    let name = Sym::new(name);
    Ok(Some(Box::new(move |start| {
        crate::interp::actor::prims::global_names::global_start(start, name, d)
    })))
}

fn supervise(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let cls = class_arg(ctx, r, "supervise receiver")?;
    let sys = sys_of(ctx)?;
    if let Some(h) = sys.supervision.current(cls.name) {
        let v = sup_value(ctx, h);
        return Ok(ctx.make_ok(v));
    }
    let spec = build_spec(ctx, &cls, 0)?;
    let res = {
        let cx = need_cx(ctx)?;
        sys.supervision
            .supervise(cx, Arc::new(spec), Some(cls.name))
    };
    match res {
        Ok(h) => {
            let v = sup_value(ctx, h);
            ctx.send(r, Sym::new("initialize:"), std::slice::from_ref(&v))?;
            Ok(ctx.make_ok(v))
        }
        Err(e) => {
            let e = sup_err_value(ctx, &e);
            Ok(ctx.make_error(e))
        }
    }
}

fn current(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let cls = class_arg(ctx, r, "current receiver")?;
    let sys = sys_of(ctx)?;
    Ok(match sys.supervision.current(cls.name) {
        Some(h) => sup_value(ctx, h),
        None => Value::Nil,
    })
}

/// Raises a supervisor error (for the selectors that raise rather than answer a Result).
fn raise(ctx: &Ctx, e: &SupError) -> Unwind {
    ctx.err(ErrorKind::from_name(e.kind()), e.message())
}

/// The handle of a running child (an actor handle, or a nested supervisor's handle).
fn child_value(ctx: &Ctx, class: &Value, proc: crate::runtime::ProcRef) -> Value {
    if let Some(sys) = ctx.proc.sys.as_ref() {
        if let Some(h) = sys.supervision.by_pid(proc.pid()) {
            return sup_value(ctx, h);
        }
    }
    let cls = match class {
        Value::Class(c) => c.clone(),
        _ => ctx.prog.core.actor.clone(),
    };
    ActorRef::value(proc, cls)
}

fn children(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let (h, _, dynamic) = sup_of(ctx, r)?;
    if dynamic {
        let kids = h.running_children().map_err(|e| raise(ctx, &e))?;
        return Ok(Value::list(
            kids.into_iter().map(|(_, c, p)| child_value(ctx, &c, p)),
        ));
    }
    let ids = h.child_ids().map_err(|e| raise(ctx, &e))?;
    Ok(Value::list(ids.into_iter().map(Value::Symbol)))
}

fn child_count(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let n = h.child_count().map_err(|e| raise(ctx, &e))?;
    Ok(Value::Int(n as i64))
}

fn which(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let kids = match h.running_children() {
        Ok(k) => k,
        Err(e) => {
            let e = sup_err_value(ctx, &e);
            return Ok(ctx.make_error(e));
        }
    };
    let found = kids.into_iter().find(|(id, class, _)| match &a[0] {
        Value::Symbol(s) => id == s,
        Value::Class(c) => *id == c.name || matches!(class, Value::Class(k) if Arc::ptr_eq(k, c)),
        _ => false,
    });
    let v = match found {
        Some((_, c, p)) => child_value(ctx, &c, p),
        None => Value::Nil,
    };
    Ok(ctx.make_ok(v))
}

fn id_arg(ctx: &Ctx, v: &Value) -> Result<Sym, Unwind> {
    match v {
        Value::Symbol(s) => Ok(*s),
        Value::Class(c) => Ok(c.name),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("expected a child id or class, not {n}")))
        }
    }
}

/// The id of the static child named by `v`: a Symbol id, or a class (the child with that id
/// or of that class; the class name when there is none).
fn child_id(ctx: &Ctx, h: &SupHandle, v: &Value) -> Result<Sym, Unwind> {
    let id = id_arg(ctx, v)?;
    let Value::Class(c) = v else { return Ok(id) };
    let spec = h.spec();
    let by_class = spec
        .children
        .iter()
        .find(|k| k.id == id || matches!(&k.class, Value::Class(x) if Arc::ptr_eq(x, c)));
    Ok(by_class.map_or(id, |k| k.id))
}

/// `restartCountOf:` — how many times the supervisor has restarted the child.
fn restart_count_of(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let id = child_id(ctx, &h, &a[0])?;
    match h.restart_count(id) {
        Some(n) => Ok(Value::Int(n as i64)),
        None => Err(raise(ctx, &SupError::NoChild(id))),
    }
}

/// `waitForRestartOf:count:timeout:` — suspends the caller (no polling) until the child has
/// been restarted `count` times: `Result ok: handle`, or an error Result (`timeout`,
/// `stale_handle` when the supervisor ended first, `not_found` for an unknown child).
fn wait_for_restart(ctx: &mut Ctx, r: &Value, who: &Value, n: &Value, t: &Value) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let id = child_id(ctx, &h, who)?;
    let count = match n {
        Value::Int(i) if *i >= 0 => *i as u64,
        other => {
            let c = ctx.class_name_of(other);
            return Err(ctx.type_err(format!(
                "the restart count must be a non-negative Integer, not {c}"
            )));
        }
    };
    let t = crate::interp::prims::duration::timeout_arg(ctx, t)?;
    let res = {
        let cx = need_cx(ctx)?;
        h.await_restarts(cx, id, count, t)
    };
    match res {
        Ok(p) => {
            let class = h
                .spec()
                .children
                .iter()
                .find(|k| k.id == id)
                .map_or(Value::Nil, |k| k.class.clone());
            let v = child_value(ctx, &class, p);
            Ok(ctx.make_ok(v))
        }
        Err(SupError::Call(crate::runtime::CallError::Exiting(reason))) => {
            Err(Unwind::Exit(reason.to_value()))
        }
        Err(e) => {
            let e = sup_err_value(ctx, &e);
            Ok(ctx.make_error(e))
        }
    }
}

fn terminate(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    // A class names the child `which:` answers for it: the first running child whose id is
    // the class's name or whose class it is; else the declared child of that class.
    let running = match &a[0] {
        Value::Class(c) => h.running_children().ok().and_then(|kids| {
            kids.into_iter()
                .find(|(id, class, _)| {
                    *id == c.name || matches!(class, Value::Class(k) if Arc::ptr_eq(k, c))
                })
                .map(|(id, _, _)| id)
        }),
        _ => None,
    };
    let id = match running {
        Some(id) => id,
        None => child_id(ctx, &h, &a[0])?,
    };
    let res = {
        let cx = need_cx(ctx)?;
        h.terminate(cx, id)
    };
    result_nil(ctx, res)
}

/// What `subclassResponsibility` raises, for the class-side selector `sel` of the supervisor
/// class `r`, with a hint naming it.
fn subclass_responsibility(ctx: &Ctx, r: &Value, sel: &str) -> Unwind {
    let n = ctx.class_name_of(r);
    ctx.err_hint(
        ErrorKind::UserError,
        "This method is abstract and must be overridden by a subclass",
        format!("{n} must implement {sel}"),
    )
}

fn result_nil(ctx: &mut Ctx, res: Result<(), SupError>) -> EvalResult {
    match res {
        Ok(()) => Ok(ctx.make_ok(Value::Nil)),
        Err(e) => {
            let e = sup_err_value(ctx, &e);
            Ok(ctx.make_error(e))
        }
    }
}

fn start_child(ctx: &mut Ctx, r: &Value, args: Value) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let class = h.spec().dynamic.as_ref().map(|t| t.class.clone());
    let Some(class) = class else {
        // A handle whose supervisor has stopped answers stale_handle for every control
        // selector, static supervisors included.
        if !h.is_alive() {
            let e = sup_err_value(ctx, &SupError::Stale(h.pid()));
            return Ok(ctx.make_error(e));
        }
        return Err(ctx.err(
            ErrorKind::DoesNotUnderstand,
            "startChild is understood by dynamic supervisors only",
        ));
    };
    let res = {
        let cx = need_cx(ctx)?;
        h.start_child(cx, args)
    };
    match res {
        Ok(p) => {
            let v = child_value(ctx, &class, p);
            Ok(ctx.make_ok(v))
        }
        Err(e) => {
            let e = sup_err_value(ctx, &e);
            Ok(ctx.make_error(e))
        }
    }
}

fn terminate_child(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let (h, _, _) = sup_of(ctx, r)?;
    let proc = match downcast::<SupRef>(&a[0]) {
        Some(s) => s.h.proc.clone(),
        None => target(ctx, &a[0])?.proc,
    };
    let res = {
        let cx = need_cx(ctx)?;
        h.terminate_child(cx, &proc)
    };
    result_nil(ctx, res)
}

pub fn register(p: &mut Prims) {
    for c in ["Supervisor", "DynamicSupervisor"] {
        p.add_class(c, "maxRestarts", |_, _, _| Ok(Value::Int(10)));
        p.add_class(c, "restartWindow", |_, _, _| Ok(Value::Int(60)));
        p.add_class(c, "isSupervisor", |_, _, _| Ok(Value::True));
        p.add_class(c, "supervisionPolicy", |_, _, _| {
            Ok(Value::sym("permanent"))
        });
        p.add_class(c, "initialize:", |_, _, _| Ok(Value::Nil));
        p.add_class(c, "supervise", supervise);
        p.add_class(c, "current", current);
    }
    let s = "Supervisor";
    p.add_class(s, "strategy", |_, _, _| Ok(Value::sym("oneForOne")));
    p.add_class(s, "autoShutdown", |_, _, _| Ok(Value::sym("never")));
    // The required configuration is `subclassResponsibility`: its `user_error`
    // and message, with a hint naming what to define.
    p.add_class(s, "children", |ctx, r, _| {
        Err(subclass_responsibility(ctx, r, "children"))
    });
    p.add_class("DynamicSupervisor", "childClass", |ctx, r, _| {
        Err(subclass_responsibility(ctx, r, "childClass"))
    });
    p.add_class("Actor", "supervisionPolicy", |_, _, _| {
        Ok(Value::sym("temporary"))
    });
    p.add_class("Actor", "isSupervisor", |_, _, _| Ok(Value::False));
    for c in ["Actor", "Supervisor", "DynamicSupervisor"] {
        p.add_class(c, "supervisionSpec", |ctx, r, _| {
            let Some(spec) = ctx.prog.class_named("SupervisionSpec") else {
                return Err(ctx.err(ErrorKind::RuntimeError, "SupervisionSpec is not loaded"));
            };
            let policy = ctx.send(r, Sym::new("supervisionPolicy"), &[])?;
            let base = ctx.send(&Value::Class(spec), Sym::new("new"), &[])?;
            let base = ctx.send(&base, Sym::new("withActorClass:"), std::slice::from_ref(r))?;
            ctx.send(&base, Sym::new("withRestart:"), &[policy])
        });
    }

    p.add(s, "children", children);
    p.add(s, "childCount", child_count);
    p.add(s, "count", child_count);
    p.add(s, "which:", which);
    p.add(s, "terminate:", terminate);
    p.add(s, "restartCountOf:", restart_count_of);
    p.add(s, "waitForRestartOf:", |ctx, r, a| {
        wait_for_restart(ctx, r, &a[0], &Value::Int(1), &Value::Int(5000))
    });
    p.add(s, "waitForRestartOf:count:timeout:", |ctx, r, a| {
        wait_for_restart(ctx, r, &a[0], &a[1], &a[2])
    });
    p.add(s, "startChild", |ctx, r, _| start_child(ctx, r, Value::Nil));
    p.add(s, "startChild:", |ctx, r, a| {
        if !matches!(a[0], Value::Dict(_)) {
            let n = ctx.class_name_of(&a[0]);
            return Err(ctx.type_err(format!("startChild: expects a Dictionary, not {n}")));
        }
        start_child(ctx, r, a[0].clone())
    });
    p.add(s, "terminateChild:", terminate_child);
    p.add(s, "stop", |ctx, r, _| {
        let (h, _, _) = sup_of(ctx, r)?;
        if h.is_alive() {
            let cx = need_cx(ctx)?;
            h.stop(cx);
        }
        Ok(Value::Nil)
    });
    p.add(s, "pid", |ctx, r, _| {
        let (h, _, _) = sup_of(ctx, r)?;
        Ok(pid_value(ctx, h.proc.clone()))
    });
    p.add(s, "isAlive", |ctx, r, _| {
        let (h, _, _) = sup_of(ctx, r)?;
        Ok(Value::bool(h.is_alive()))
    });
    p.add(s, "strategy", |ctx, r, _| {
        let (h, _, _) = sup_of(ctx, r)?;
        if h.spec().is_dynamic() {
            return Ok(Value::sym("oneForOne"));
        }
        forward(ctx, r, "strategy")
    });
    p.add(s, "maxRestarts", |ctx, r, _| forward(ctx, r, "maxRestarts"));
    p.add(s, "restartWindow", |ctx, r, _| {
        forward(ctx, r, "restartWindow")
    });
    p.add(s, "autoShutdown", |ctx, r, _| {
        forward(ctx, r, "autoShutdown")
    });
    p.add(s, "childClass", |ctx, r, _| forward(ctx, r, "childClass"));
}

/// Sends a class-side configuration selector to the handle's class.
fn forward(ctx: &mut Ctx, r: &Value, sel: &str) -> EvalResult {
    let (_, cls, _) = sup_of(ctx, r)?;
    ctx.send(&Value::Class(cls), Sym::new(sel), &[])
}
