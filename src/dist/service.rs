//! The node service (LANGUAGE.md 8.3, 8.4): what other bt nodes ask of this node as a
//! whole — spawn an actor of a class named by its name, look a registered name up, list
//! the registered actors, ask whether a process is alive, stop or kill one.
//!
//! Every bt node answers gen_server-style calls to the reserved registered name
//! `'$bt_node'` ([`super::remote::SERVICE`]): a request is `{Op, [Args]}` and the reply is
//! `{ok, Value}` or `{error, Exception}`, exactly as for a call to an actor, so the calling
//! side decodes both the same way (`super::remote::decode_reply`). The service is not a bt
//! process: [`super::peer::BtInbound`] recognises the name and runs the operation in a fresh
//! bt process (an operation may run `initialize` or wait for a stop).
//!
//! Operations are a table ([`register_op`]): other parts of the distribution layer (per-node
//! queries, global names) add theirs without touching this file's dispatch. Ops are plain
//! functions of a bt context and the decoded argument values; they answer a value or raise
//! an error with a kind.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::RwLock;

use crate::interp::actor::handle::ActorRef;
use crate::interp::actor::{need_cx, sys_of};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::actor::{error_value, spawn_actor};
use crate::runtime::{Pid, ProcRef, Timeout};
use crate::value::{ClassRef, Sym, Value};

/// A node-service operation: the decoded arguments → the answer (or a raised error).
pub type OpFn = fn(&mut Ctx, &[Value]) -> EvalResult;

fn table() -> &'static RwLock<HashMap<&'static str, OpFn>> {
    static OPS: OnceLock<RwLock<HashMap<&'static str, OpFn>>> = OnceLock::new();
    OPS.get_or_init(|| {
        let mut m: HashMap<&'static str, OpFn> = HashMap::new();
        m.insert("spawn", spawn);
        m.insert("whereis", whereis);
        m.insert("registered", registered);
        m.insert("alive", alive);
        m.insert("stop", stop);
        m.insert("kill", kill);
        RwLock::new(m)
    })
}

/// Adds (or replaces) operation `name` of the node service.
pub fn register_op(name: &'static str, f: OpFn) {
    table().write().insert(name, f);
}

/// The operation called `name`, if any.
pub fn op(name: &str) -> Option<OpFn> {
    table().read().get(name).copied()
}

/// Runs operation `name` (a `does_not_understand` error when there is none).
pub fn run(ctx: &mut Ctx, name: &str, args: &[Value]) -> EvalResult {
    match op(name) {
        Some(f) => f(ctx, args),
        None => Err(ctx.err(
            ErrorKind::DoesNotUnderstand,
            format!("the node service has no operation #{name}"),
        )),
    }
}

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
fn spawn(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    let cname = sym(ctx, a.first(), "the class name")?;
    let me = crate::interp::prims::actor_node::current_name(ctx);
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
fn whereis(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    let name = sym(ctx, a.first(), "the name")?;
    let sys = sys_of(ctx)?;
    let me = crate::interp::prims::actor_node::current_name(ctx);
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
fn registered(ctx: &mut Ctx, _a: &[Value]) -> EvalResult {
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
fn alive(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    Ok(Value::bool(proc_of(ctx, a)?.is_some_and(|p| p.is_alive())))
}

/// `stop: [Number]`: a graceful stop, answered once the process has exited.
fn stop(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    if let Some(p) = proc_of(ctx, a)? {
        let cx = need_cx(ctx)?;
        let _ = cx.stop(&p, Timeout::Ms(4000));
    }
    Ok(Value::sym("ok"))
}

/// `kill: [Number]`.
fn kill(ctx: &mut Ctx, a: &[Value]) -> EvalResult {
    if let Some(p) = proc_of(ctx, a)? {
        sys_of(ctx)?.rt.kill(&p);
    }
    Ok(Value::sym("ok"))
}
