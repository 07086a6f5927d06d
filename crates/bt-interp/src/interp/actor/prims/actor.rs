//! Actor primitives: spawning, lifecycle, monitors, names,
//! `withTimeout:` proxies, state reflection, Pid, Reference and `Workspace actors`.
//!
//! Lifecycle and name selectors run in the caller's process on the handle; `fieldAt:` and
//! friends run inside the actor (see `interp::actor::send`).

use crate::interp::actor::behaviour::{
    has_initialize, initialize_message, BtActor, TranscriptActor,
};
use crate::interp::actor::handle::{downcast, native, ActorRef, NameRef, PidVal, RefVal};
use crate::interp::actor::send::{call_error, handle_for, resolve_name, transfer_in};
use crate::interp::actor::slots::{nil_slot_error, nil_typed_slot};
use crate::interp::actor::target::target_of;
use crate::interp::actor::{cx_of, need_cx, run_block_logged, sys_of};
use crate::interp::class::ClassExt;
use crate::interp::error::ErrorKind;
use crate::interp::error::{class_for_kind, exc_field, make_exception, F_MESSAGE};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::duration::timeout_arg;
use crate::interp::prims::{class_arg, sym_arg, sym_list};
use crate::interp::process::SpawnFacts;
use crate::runtime::{CallError, ExitReason, NameError, ProcRef, SpawnOpts, Timeout};
use crate::value::{ClassRef, Sym, Value};

pub fn register(p: &mut Prims) {
    // Local actor handles first: the send path tries the kinds in this order.
    p.send_target(target_of::<ActorRef>);
    p.send_target(target_of::<NameRef>);
    let a = "Actor";
    p.add_class(a, "spawn", |ctx, r, _| spawn_sel(ctx, r, None, None));
    p.add_class(a, "spawnWith:", |ctx, r, a| {
        spawn_sel(ctx, r, Some(&a[0]), None)
    });
    p.add_class(a, "spawnAs:", |ctx, r, a| {
        let n = sym_arg(ctx, &a[0], "spawnAs: name")?;
        spawn_sel(ctx, r, None, Some(n))
    });
    p.add_class(a, "spawnWith:as:", |ctx, r, a| {
        let n = sym_arg(ctx, &a[1], "spawnWith:as: name")?;
        spawn_sel(ctx, r, Some(&a[0]), Some(n))
    });
    p.add_class(a, "named:", named);
    p.add_class(a, "allRegistered", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        let actor = ctx.prog.core.actor.clone();
        Ok(Value::list(
            sys.rt
                .registered(false)
                .into_iter()
                .map(|(_, p)| handle_for(p, &actor)),
        ))
    });
    p.add(a, "initialize", |_, _, _| Ok(Value::Nil));
    p.add(a, "terminate:", |_, _, _| Ok(Value::Nil));
    p.add(a, "stop", stop);
    p.add(a, "kill", |ctx, r, _| {
        let t = target(ctx, r)?;
        if !t.proxy && !is_stdout_transcript(ctx, &t.proc) {
            sys_of(ctx)?.rt.kill(&t.proc);
        }
        Ok(Value::sym("ok"))
    });
    p.add(a, "isAlive", |ctx, r, _| {
        Ok(Value::bool(target(ctx, r)?.proc.is_alive()))
    });
    p.add(a, "pid", |ctx, r, _| {
        let t = target(ctx, r)?;
        Ok(pid_value(ctx, t.proc))
    });
    p.add(a, "monitor", |ctx, r, _| {
        let t = target(ctx, r)?;
        let id = sys_of(ctx)?.rt.make_ref();
        let class = ctx.prog.class_named("Reference").unwrap_or(ctx.class_of(r));
        Ok(native(RefVal {
            id,
            target: t.proc,
            class,
        }))
    });
    p.add(a, "onExit:", |ctx, r, a| {
        let t = target(ctx, r)?;
        let sys = sys_of(ctx)?;
        let block = transfer_in(ctx, &a[0]);
        let s2 = sys.clone();
        sys.rt.on_exit(&t.proc, move |cx, reason| {
            run_block_logged(&s2, cx, &block, &[reason.to_value()])
        });
        Ok(Value::sym("ok"))
    });
    p.add(a, "registerAs:", |ctx, r, a| {
        let name = sym_arg(ctx, &a[0], "registerAs: name")?;
        let t = target(ctx, r)?;
        match sys_of(ctx)?.rt.register(name, &t.proc) {
            Ok(()) => Ok(ctx.make_ok(r.clone())),
            Err(e) => {
                let exc = name_error(ctx, &e, name);
                Ok(ctx.make_error(exc))
            }
        }
    });
    p.add(a, "unregister", |ctx, r, _| {
        if let Some(nr) = downcast::<NameRef>(r) {
            let sys = sys_of(ctx)?;
            if let Some(p) = sys.rt.whereis(nr.name) {
                sys.rt.unregister(&p);
            }
            return Ok(Value::sym("ok"));
        }
        let t = target(ctx, r)?;
        sys_of(ctx)?.rt.unregister(&t.proc);
        Ok(Value::sym("ok"))
    });
    p.add(a, "registeredName", |ctx, r, _| {
        if let Some(nr) = downcast::<NameRef>(r) {
            let alive = sys_of(ctx)?.rt.whereis(nr.name).is_some();
            return Ok(if alive {
                Value::Symbol(nr.name)
            } else {
                Value::Nil
            });
        }
        let t = target(ctx, r)?;
        Ok(t.proc.name().map(Value::Symbol).unwrap_or(Value::Nil))
    });
    p.add(a, "isRegistered", |ctx, r, _| {
        if let Some(nr) = downcast::<NameRef>(r) {
            return Ok(Value::bool(sys_of(ctx)?.rt.whereis(nr.name).is_some()));
        }
        let t = target(ctx, r)?;
        Ok(Value::bool(t.proc.name().is_some()))
    });
    p.add(a, "withTimeout:", |ctx, r, a| {
        let timeout = match a[0].as_sym() {
            Some(_) => timeout_arg(ctx, &a[0])?,
            None => crate::runtime::Timeout::Ms(crate::interp::prims::duration::period_arg(
                ctx,
                &a[0],
                "withTimeout:",
                false,
            )?),
        };
        // A proxy of a proxy forwards straight to the first one's target.
        let t = match downcast::<ActorRef>(r) {
            Some(a) => a.proc.clone(),
            None => target(ctx, r)?.proc,
        };
        // A TimeoutProxy is an actor of its own: an idle TimeoutProxy process gives it
        // its pid, liveness, `stop`, monitors and a place in ProcessNavigation; the
        // forwarded messages go from the caller straight to the target with the timeout
        // (`send::proxy_send`). Its target's class comes from the target's process.
        let Some(class) = ctx.class_named("TimeoutProxy") else {
            return Err(ctx.err(ErrorKind::RuntimeError, "TimeoutProxy is not loaded"));
        };
        let own = match spawn_actor(ctx, &class, None, None)? {
            Ok(h) => downcast::<ActorRef>(&h).map(|a| a.proc.clone()),
            Err(e) => return Err(Unwind::Error(e)),
        };
        Ok(native(ActorRef {
            proc: t,
            class,
            timeout,
            proxy: true,
            own,
            state: None,
        }))
    });
    p.add(a, "fieldNames", |ctx, r, _| {
        let c = ctx.class_of(r);
        Ok(sym_list(c.field_names.iter().copied()))
    });
    p.add(a, "fieldAt:", |ctx, r, a| {
        let i = slot_index(ctx, r, &a[0])?;
        Ok(ctx.actor_fields.get(i).cloned().unwrap_or(Value::Nil))
    });
    p.add(a, "fieldAt:put:", |ctx, r, a| {
        let i = slot_index(ctx, r, &a[0])?;
        if i < ctx.actor_fields.len() {
            ctx.set_actor_slot(i, a[1].clone());
        }
        Ok(a[1].clone())
    });

    let pid = "Pid";
    p.add(pid, "isAlive", |_, r, _| {
        Ok(Value::bool(pid_proc(r).is_some_and(|p| p.is_alive())))
    });
    p.add(pid, "kill", |ctx, r, _| {
        let Some(p) = pid_proc(r) else {
            return Ok(Value::False);
        };
        Ok(Value::bool(sys_of(ctx)?.rt.kill(&p)))
    });
    p.add(pid, "exit:", |ctx, r, a| {
        let Some(p) = pid_proc(r) else {
            return Ok(Value::False);
        };
        let from = match cx_of(ctx) {
            Some(cx) => cx.pid(),
            None => p.pid(),
        };
        let reason = ExitReason::from_value(a[0].clone());
        Ok(Value::bool(sys_of(ctx)?.rt.exit(&p, from, reason)))
    });
    p.add(pid, "asString", |ctx, r, _| {
        Ok(Value::str(ctx.default_print(r)?))
    });

    let rf = "Reference";
    p.add(rf, "whenDown:", |ctx, r, a| {
        let Some(rv) = downcast::<RefVal>(r) else {
            return Ok(r.clone());
        };
        let (id, tgt) = (rv.id, rv.target.clone());
        let sys = sys_of(ctx)?;
        let block = transfer_in(ctx, &a[0]);
        let s2 = sys.clone();
        sys.rt.when_down(&tgt, id, move |cx, reason| {
            run_block_logged(&s2, cx, &block, &[reason.to_value()])
        });
        Ok(r.clone())
    });
    p.add(rf, "demonitor", |ctx, r, _| {
        if let Some(rv) = downcast::<RefVal>(r) {
            let (id, tgt) = (rv.id, rv.target.clone());
            sys_of(ctx)?.rt.demonitor(&tgt, id);
        }
        Ok(Value::True)
    });
    p.add(rf, "asString", |ctx, r, _| {
        Ok(Value::str(ctx.default_print(r)?))
    });

    p.add_class("Workspace", "actors", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        let actor = ctx.prog.core.actor.clone();
        Ok(Value::list(
            sys.rt
                .processes(false)
                .into_iter()
                .filter(|i| i.label == "actor" && matches!(i.proc.info(), Value::Class(_)))
                .map(|i| handle_for(i.proc, &actor)),
        ))
    });
}

/// The process an actor-handle receiver denotes.
pub struct Target {
    pub proc: ProcRef,
    pub class: ClassRef,
    pub proxy: bool,
}

pub fn target(ctx: &mut Ctx, r: &Value) -> Result<Target, Unwind> {
    if let Some(a) = downcast::<ActorRef>(r) {
        // A local proxy's Actor protocol (pid, isAlive, stop, monitor, names …) is its own
        // process's.
        if let Some(own) = &a.own {
            return Ok(Target {
                proc: own.clone(),
                class: a.class.clone(),
                proxy: false,
            });
        }
        return Ok(Target {
            proc: a.proc.clone(),
            class: a.class.clone(),
            proxy: a.proxy,
        });
    }
    if let Some(nr) = downcast::<NameRef>(r) {
        let (name, class) = (nr.name, nr.class.clone());
        let h = resolve_name(ctx, name, &class)?;
        return target(ctx, &h);
    }
    let n = ctx.class_name_of(r);
    Err(ctx.type_err(format!("{n} is not an actor")))
}

fn pid_proc(r: &Value) -> Option<ProcRef> {
    downcast::<PidVal>(r).map(|p| p.proc.clone())
}

pub fn pid_value(ctx: &Ctx, proc: ProcRef) -> Value {
    let class = ctx
        .prog
        .class_named("Pid")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(PidVal { proc, class })
}

fn is_stdout_transcript(ctx: &Ctx, p: &ProcRef) -> bool {
    ctx.proc
        .sys
        .as_ref()
        .and_then(|s| s.stdout_transcript.lock().clone())
        .is_some_and(|t| &t == p)
}

fn stop(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let t = target(ctx, r)?;
    if t.proxy || is_stdout_transcript(ctx, &t.proc) {
        return Ok(Value::sym("ok"));
    }
    let cx = need_cx(ctx)?;
    match cx.stop(&t.proc, Timeout::Infinity) {
        Err(CallError::Exiting(reason)) => Err(Unwind::Exit(reason.to_value())),
        _ => Ok(Value::sym("ok")),
    }
}

fn slot_index(ctx: &mut Ctx, r: &Value, name: &Value) -> Result<usize, Unwind> {
    let name = sym_arg(ctx, name, "field name")?;
    let c = ctx.class_of(r);
    match c.field_index(name) {
        Some(i) => Ok(i),
        None => Err(ctx.err(ErrorKind::KeyError, format!("key not found: #{name}"))),
    }
}

/// An exception value of `kind` (for `Result error:`).
pub fn error_value(ctx: &Ctx, kind: ErrorKind, msg: String) -> Value {
    error_value_hinted(ctx, kind, msg, None)
}

/// An exception value of `kind` with an optional hint (for `Result error:`).
pub fn error_value_hinted(ctx: &Ctx, kind: ErrorKind, msg: String, hint: Option<&str>) -> Value {
    let class = class_for_kind(&ctx.prog, kind);
    make_exception(
        &ctx.prog,
        &class,
        kind.sym(),
        msg,
        hint.map(str::to_string),
        None,
        None,
        None,
        Value::list(Vec::new()),
    )
}

fn name_error(ctx: &Ctx, e: &NameError, name: Sym) -> Value {
    let msg = match e {
        NameError::Registered => format!("name #{name} is already registered"),
        NameError::Reserved => {
            format!("name #{name} is reserved: names starting with bt_ belong to the runtime")
        }
        NameError::NoProc => format!("cannot register #{name}: the actor is not alive"),
    };
    error_value(ctx, ErrorKind::from_name(e.kind()), msg)
}

fn named(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let cls = class_arg(ctx, r, "named: receiver")?;
    let name = sym_arg(ctx, &a[0], "named: name")?;
    let sys = sys_of(ctx)?;
    let Some(p) = sys.rt.whereis(name) else {
        let e = error_value(
            ctx,
            ErrorKind::NameNotRegistered,
            format!("no actor registered as #{name}"),
        );
        return Ok(ctx.make_error(e));
    };
    let found = match p.info() {
        Value::Class(c) => c.clone(),
        _ => ctx.prog.core.actor.clone(),
    };
    if !std::sync::Arc::ptr_eq(&cls, &ctx.prog.core.actor) && !found.inherits_or_is(&cls) {
        let e = error_value(
            ctx,
            ErrorKind::WrongClass,
            format!("#{name} is a {}, not a {}", found.name, cls.name),
        );
        return Ok(ctx.make_error(e));
    }
    Ok(ctx.make_ok(native(NameRef {
        name,
        class_name: found.name,
        class: found,
        global: false,
    })))
}

fn spawn_sel(ctx: &mut Ctx, r: &Value, init: Option<&Value>, name: Option<Sym>) -> EvalResult {
    let cls = class_arg(ctx, r, "spawn receiver")?;
    match spawn_actor(ctx, &cls, init, name)? {
        Ok(h) if name.is_some() => Ok(ctx.make_ok(h)),
        Ok(h) => Ok(h),
        Err(e) => Ok(ctx.make_error(e)),
    }
}

/// Spawns an instance of `cls`: defaults, `spawnWith:` values, `initialize` inside the new
/// actor. `Ok(Err(e))` is a name error for a `Result`.
pub fn spawn_actor(
    ctx: &mut Ctx,
    cls: &ClassRef,
    init: Option<&Value>,
    name: Option<Sym>,
) -> Result<Result<Value, Value>, Unwind> {
    // A spawn is charged like any allocation (the counting allocator); a fork bomb of short
    // messages stops here once the account is over, without waiting for a hook.
    ctx.memory_check()?;
    let sys = sys_of(ctx)?;
    let facts = spawn_facts(ctx, cls);
    if facts.transcript {
        let opts = SpawnOpts {
            name,
            label: "actor",
            info: Value::Class(cls.clone()),
            ..SpawnOpts::default()
        };
        let b = Box::new(TranscriptActor::new(sys.clone(), false));
        return Ok(match sys.rt.spawn_opts(b, opts) {
            Ok(p) => Ok(ActorRef::value(p, cls.clone())),
            Err(e) => Err(name_error(ctx, &e, name.unwrap_or(Sym::new("")))),
        });
    }
    if cls.is_abstract {
        return Err(ctx.err(
            ErrorKind::InstantiationError,
            format!("Cannot instantiate abstract class {}", cls.name),
        ));
    }
    let mut fields = Vec::with_capacity(cls.field_names.len());
    for d in cls.field_defaults().iter() {
        match d {
            Some(code) => {
                let code = code.clone();
                fields.push(
                    ctx.run_fn(&code, &Value::Class(cls.clone()), Some(cls))
                        .map_err(|b| *b)?,
                );
            }
            None => fields.push(Value::Nil),
        }
    }
    match init {
        None => {}
        Some(Value::Dict(m)) => {
            for (k, v) in m.iter() {
                if let Some(i) = k.as_sym().and_then(|s| cls.field_index(s)) {
                    fields[i] = v.clone();
                }
            }
        }
        Some(other) => {
            let n = ctx.class_name_of(other);
            return Err(ctx.type_err(format!("spawnWith: expects a Dictionary, not {n}")));
        }
    }
    let init_runs = facts.initialize;
    if !init_runs {
        if let Some(i) = nil_typed_slot(&ctx.prog, cls, &fields) {
            return Err(nil_slot_error(ctx, cls, i));
        }
    }
    let fields: Vec<Value> = fields.iter().map(|f| transfer_in(ctx, f)).collect();
    let max_mailbox = if facts.max_mailbox {
        crate::interp::mailbox_limit::of_class(ctx, cls)?
    } else {
        0
    };
    let opts = SpawnOpts {
        name,
        label: "actor",
        info: Value::Class(cls.clone()),
        ..SpawnOpts::default()
    };
    // The handle answered by spawn is the one the actor keeps as `self`.
    let mut handle = Value::Nil;
    let spawned = sys.rt.spawn_with(opts, |p| {
        if max_mailbox > 0 {
            p.set_max_mailbox(max_mailbox);
        }
        handle = ActorRef::value(p.clone(), cls.clone());
        Box::new(BtActor::new(
            sys.clone(),
            cls.clone(),
            fields,
            Some(handle.clone()),
        ))
    });
    let p = match spawned {
        Ok(p) => p,
        Err(e) => return Ok(Err(name_error(ctx, &e, name.unwrap_or(Sym::new(""))))),
    };
    if init_runs {
        let cx = need_cx(ctx)?;
        let r = cx.call(&p, initialize_message(), Timeout::Infinity);
        match r {
            Ok(Value::Int(i)) => {
                sys.rt.kill(&p);
                return Err(nil_slot_error(ctx, cls, i as usize));
            }
            Ok(_) => {}
            Err(CallError::Raised(e)) => {
                sys.rt.kill(&p);
                let msg = match &exc_field(&e, F_MESSAGE) {
                    Value::Str(s) => s.to_string(),
                    _ => crate::interp::actor::send::describe_exception(&e),
                };
                return Err(ctx.err(
                    ErrorKind::InstantiationError,
                    format!("Cannot spawn {}: initialize failed: \"{msg}\"", cls.name),
                ));
            }
            Err(e) => {
                sys.rt.kill(&p);
                return Err(call_error(
                    ctx,
                    e,
                    &p,
                    cls,
                    Sym::new("initialize"),
                    Timeout::Infinity,
                ));
            }
        }
    }
    Ok(Ok(handle))
}

/// What a spawn of `cls` needs to know of its class chain: remembered for the last class
/// spawned in this context until the program's methods change (`ProcSlot::last_spawn`).
fn spawn_facts(ctx: &mut Ctx, cls: &ClassRef) -> SpawnFacts {
    let epoch = ctx.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
    if let Some((c, e, f)) = &ctx.proc.last_spawn {
        if *e == epoch && std::sync::Arc::ptr_eq(c, cls) {
            return *f;
        }
    }
    let f = SpawnFacts {
        transcript: is_transcript_class(cls),
        initialize: has_initialize(ctx, cls),
        max_mailbox: crate::interp::mailbox_limit::responds(ctx, cls),
    };
    ctx.proc.last_spawn = Some((cls.clone(), epoch, f));
    f
}

/// Is `cls` TranscriptStream or one of its subclasses? (By name along the chain: no class
/// table lookup on the spawn path.)
fn is_transcript_class(cls: &ClassRef) -> bool {
    static TS: std::sync::OnceLock<Sym> = std::sync::OnceLock::new();
    let ts = *TS.get_or_init(|| Sym::new("TranscriptStream"));
    let mut c: Option<&ClassRef> = Some(cls);
    while let Some(k) = c {
        if k.name == ts && k.builtin != crate::interp::class::Builtin::None {
            return true;
        }
        c = k.superclass.as_ref();
    }
    false
}
