//! The bt-value operations of the node service ([`super::service`]): spawn an actor of a
//! class named by its name, look a registered name up, list the registered actors, ask whether a process is alive, stop, kill or signal one. Each is a plain
//! function of a bt context and the decoded argument values, answering a value or raising
//! an error with a kind.

use crate::interp::actor::handle::ActorRef;
use crate::interp::actor::prims::actor::{error_value, spawn_actor};
use crate::interp::actor::{need_cx, sys_of};
use crate::interp::class::ClassExt;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::runtime::{Pid, ProcRef, Timeout};
use crate::value::{ClassRef, Sym, Value};

fn sym(ctx: &Ctx, v: Option<&Value>, what: &str) -> Result<Sym, Unwind> {
    match v {
        Some(Value::Symbol(s)) => Ok(*s),
        _ => Err(ctx.type_err(format!("node service: {what} must be a Symbol"))),
    }
}

fn number(ctx: &Ctx, v: Option<&Value>) -> Result<u64, Unwind> {
    match v {
        Some(Value::Int(i)) if *i >= 0 => Ok(*i as u64),
        _ => Err(ctx.type_err("node service: a process number must be an Integer")),
    }
}

fn class_of_proc(ctx: &Ctx, p: &ProcRef) -> ClassRef {
    match p.info() {
        Value::Class(c) => c.clone(),
        _ => ctx.prog.core.actor.clone(),
    }
}

/// `{ClassName, anActor}`: what spawn and lookups answer (the pid alone has no class).
fn found(ctx: &Ctx, p: ProcRef) -> Value {
    let class = class_of_proc(ctx, &p);
    Value::tuple(vec![Value::Symbol(class.name), ActorRef::value(p, class)])
}

/// `spawn: [ClassName, StateDictionary | nil, Name | nil]`: spawns as a local spawn does.
pub(super) fn spawn(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    let cname = sym(ctx, a.first(), "the class name")?;
    let me = crate::interp::actor::prims::node::current_name(ctx);
    let cls = ctx
        .prog
        .class_by_sym(cname)
        .filter(|c| c.inherits_or_is(&ctx.prog.core.actor));
    let Some(cls) = cls else {
        return Err(ctx.err_hint(
            ErrorKind::ClassNotFound,
            format!("class {cname} is not loaded on {me}"),
            "load the class's source on that node too",
        ));
    };
    let init = match a.get(1) {
        None | Some(Value::Nil) => None,
        Some(v) => Some(v.clone()),
    };
    let name = match a.get(2) {
        None | Some(Value::Nil) => None,
        v => Some(sym(ctx, v, "the name")?),
    };
    match spawn_actor(ctx, &cls, init.as_ref(), name)? {
        Ok(h) => Ok(Value::tuple(vec![Value::Symbol(cls.name), h])),
        Err(e) => Err(Unwind::Error(e)),
    }
}

/// `whereis: [Name, ExpectedClassName | nil]`: the registered actor, checked as `named:`.
pub(super) fn whereis(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    let name = sym(ctx, a.first(), "the name")?;
    let sys = sys_of(ctx)?;
    let me = crate::interp::actor::prims::node::current_name(ctx);
    let Some(p) = sys.rt.whereis(name) else {
        let e = error_value(
            ctx,
            ErrorKind::NameNotRegistered,
            format!("no actor registered as #{name} on {me}"),
        );
        return Err(Unwind::Error(e));
    };
    let got = class_of_proc(ctx, &p);
    if let Some(Value::Symbol(want)) = a.get(1) {
        if let Some(want) = ctx.prog.class_by_sym(*want) {
            if !got.inherits_or_is(&want) {
                let e = error_value(
                    ctx,
                    ErrorKind::WrongClass,
                    format!("#{name} is a {}, not a {}", got.name, want.name),
                );
                return Err(Unwind::Error(e));
            }
        }
    }
    Ok(found(ctx, p))
}

/// `registered: []`: `{ClassName, anActor}` for every name-registered actor.
pub(super) fn registered(ctx: &mut Ctx, _a: &[Value]) -> EvalResult {
    let sys = sys_of(ctx)?;
    let all = sys.rt.registered(false);
    Ok(Value::list(all.into_iter().map(|(_, p)| found(ctx, p))))
}

fn proc_of(ctx: &Ctx, a: &[Value]) -> Result<Option<ProcRef>, Unwind> {
    let n = number(ctx, a.first())?;
    let sys = sys_of(ctx)?;
    Ok(sys.rt.lookup(Pid {
        node: 0,
        number: n,
        service: false,
    }))
}

/// `alive: [Number]`.
pub(super) fn alive(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    Ok(Value::bool(proc_of(ctx, a)?.is_some_and(|p| p.is_alive())))
}

/// `stop: [Number]`: a graceful stop, answered once the process has exited.
pub(super) fn stop(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    if let Some(p) = proc_of(ctx, a)? {
        let cx = need_cx(ctx)?;
        let _ = cx.stop(&p, Timeout::Ms(4000));
    }
    Ok(Value::sym("ok"))
}

/// `kill: [Number]`: true if the process was alive (as a local `aPid kill`).
pub(super) fn kill(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    Ok(Value::bool(match proc_of(ctx, a)? {
        Some(p) => sys_of(ctx)?.rt.kill(&p),
        None => false,
    }))
}

/// `exit: [Number, Reason]`: an exit signal from a process of another node (as a local
/// `aPid exit: reason`; `#kill` kills, `#normal` is ignored unless the process traps exits).
pub(super) fn exit(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    let Some(p) = proc_of(ctx, a)? else {
        return Ok(Value::False);
    };
    let reason = crate::runtime::ExitReason::from_value(a.get(1).cloned().unwrap_or(Value::Nil));
    // The sender lives on another node: a pid that is no local process.
    let from = Pid {
        node: 1,
        number: 0,
        service: true,
    };
    Ok(Value::bool(sys_of(ctx)?.rt.exit(&p, from, reason)))
}

/// Can `spawn` run without a process of its own? Yes unless the class runs `initialize`
/// (the answer waits for it) or has a field default that may send (a sync send needs a
/// process) — a class that is not loaded answers its error at once.
pub(super) fn spawn_inline(ctx: &Ctx, a: &[Value]) -> bool {
    let Some(Value::Symbol(cname)) = a.first() else {
        return true;
    };
    match ctx.prog.class_by_sym(*cname) {
        Some(cls) => {
            cls.field_defaults()
                .iter()
                .all(|d| d.as_ref().is_none_or(|c| c.sendless))
                && !crate::interp::actor::behaviour::has_initialize(ctx, &cls)
        }
        None => true,
    }
}
