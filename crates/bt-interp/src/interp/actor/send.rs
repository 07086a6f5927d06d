//! Sends and casts to actors: which sends go through the runtime,
//! how arguments cross processes (blocks get a copy of what they captured), and how call
//! failures and escaped exceptions map to bt exceptions.
//!
//! A send to an actor handle from another process goes to the actor's mailbox when the
//! selector is one of the actor's own methods (declared in bt on an `Actor` subclass), a
//! user `doesNotUnderstand:args:`, or one of the state accessors (`fieldAt:` …). The
//! handle's built-in protocol (`stop`, `pid`, `isAlive`, `monitor`, `=`, `class`,
//! `printString` without an override …) runs in the caller. A send from the actor's own
//! process (`self foo`, or an alias of `self`) runs directly.

use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, ActorRef, NameRef};
use crate::interp::actor::target::SendTarget;
use crate::interp::actor::{cx_of, sys_of};
use crate::interp::class::{Builtin, ClassKind};
use crate::interp::error::ErrorKind;
use crate::interp::error::{exc_field, F_KIND, F_MESSAGE, F_SELECTOR, F_TRACE};
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::runtime::{CallError, Message, ProcRef, Timeout};
use crate::value::{fast_clone, ClassRef, Instance, Sym, Value};

pub(super) use super::transfer::{may_hold_block, spare_args, spare_args_in};
pub use super::transfer::{
    recycle_args, recycle_args_in, transfer, transfer_in, transfer_in_owned,
};

/// Built-in selectors of Actor that run inside the actor (they touch its state).
const REMOTE_BUILTINS: &[&str] = &["fieldAt:", "fieldAt:put:", "fieldNames"];
/// Selectors a name proxy answers itself, without resolving its name.
const NAME_LOCAL: &[&str] = &["registeredName", "isRegistered"];
/// Selectors any actor reference (a name proxy, a remote handle) answers from the reference
/// itself: printing, identity and class tests.
pub(crate) const REFERENCE_LOCAL: &[&str] = &[
    "printString",
    "displayString",
    "printOn:",
    "=",
    "==",
    "~=",
    "~~",
    "=:=",
    "=/=",
    "hash",
    "class",
    "isNil",
    "notNil",
    "yourself",
    "isKindOf:",
    "isMemberOf:",
];

impl SendTarget for ActorRef {
    /// A send from another process goes through the runtime when the method runs inside
    /// the actor ([`goes_remote`]); a `withTimeout:` proxy forwards ([`proxy_send`]).
    #[inline]
    fn send(&self, ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        if self.proxy {
            return proxy_send(ctx, self, recv, sel, args);
        }
        if self.proc.pid().number == ctx.pid || !goes_remote_memo(ctx, &self.class, recv, sel) {
            return None;
        }
        Some(remote_call(
            ctx,
            &self.proc,
            &self.class,
            sel,
            args,
            self.timeout,
        ))
    }

    /// [`SendTarget::send`]'s call through the runtime with the arguments moved from the
    /// stack into the message, when none of them can hold a block (those get relay homes:
    /// [`remote_call`], through `send`).
    #[inline]
    fn send_at(&self, ctx: &mut Ctx, recv: &Value, sel: Sym, base: usize) -> Option<EvalResult> {
        if self.proxy
            || self.proc.pid().number == ctx.pid
            || !goes_remote_memo(ctx, &self.class, recv, sel)
            || ctx.stack[base..].iter().any(may_hold_block)
        {
            return None;
        }
        if let Err(e) = ctx.tick() {
            ctx.stack.truncate(base);
            return Some(Err(e));
        }
        let mut out = spare_args_in(cx_of(ctx));
        // One argument (the usual call) is a pop and a push; `Drain` costs a loop and its
        // drop's tail move.
        if ctx.stack.len() == base + 1 {
            if let Some(v) = ctx.stack.pop() {
                out.push(v);
            }
        } else {
            out.extend(ctx.stack.drain(base..));
        }
        Some(
            call_with(ctx, &self.proc, &self.class, sel, out, self.timeout)
                .and_then(|v| checked_reply(ctx, v)),
        )
    }

    fn cast(
        &self,
        ctx: &mut Ctx,
        recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        let proc = match &self.own {
            // A local proxy: what TimeoutProxy understands runs on the proxy as a send does;
            // the rest goes to the target while the proxy lives (dropped after, as casts to
            // a dead actor are).
            Some(own) => {
                let forward =
                    matches!(sel.as_str(), "node" | "isRemote") || ctx.lookup(recv, sel).is_none();
                if !forward {
                    return None;
                }
                if !own.is_alive() {
                    return Some(Ok(()));
                }
                self.proc.clone()
            }
            None => self.proc.clone(),
        };
        cast_to(ctx, &proc, recv, sel, args)
    }
}

impl SendTarget for NameRef {
    /// Resolves the name at each send (`no_such_process` when nobody holds it) and sends to
    /// the actor holding it; printing, identity and the name's own queries stay here.
    fn send(&self, ctx: &mut Ctx, _recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult> {
        if REFERENCE_LOCAL.contains(&sel.as_str()) {
            return None;
        }
        if self.global {
            let (name, class) = (self.name, self.class.clone());
            return Some(resolve_global(ctx, name, &class).and_then(|h| ctx.send(&h, sel, args)));
        }
        if NAME_LOCAL.contains(&sel.as_str()) {
            return None;
        }
        let (name, class) = (self.name, self.class.clone());
        Some(resolve_name(ctx, name, &class).and_then(|h| ctx.send(&h, sel, args)))
    }

    fn cast(
        &self,
        ctx: &mut Ctx,
        recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        if self.global {
            let (name, class) = (self.name, self.class.clone());
            return Some(resolve_global(ctx, name, &class).and_then(|h| ctx.cast(&h, sel, args)));
        }
        let sys = sys_of(ctx).ok()?;
        let proc = sys.rt.whereis(self.name)?;
        cast_to(ctx, &proc, recv, sel, args)
    }
}

/// The holder of the global name `name` now, as the name proxy of its node (a local
/// `named:` proxy or a `named:on:` one), or `no_such_process` when the cluster has none.
pub fn resolve_global(ctx: &mut Ctx, name: Sym, class: &ClassRef) -> EvalResult {
    let r = ctx.send(
        &Value::Class(class.clone()),
        Sym::new("globalNamed:resolving:"),
        &[Value::Symbol(name), Value::False],
    )?;
    let ok = matches!(ctx.send(&r, Sym::new("isOk"), &[])?, Value::True);
    if ok {
        return ctx.send(&r, Sym::new("unwrap"), &[]);
    }
    let e = ctx.send(&r, Sym::new("error"), &[])?;
    let kind = ctx.send(&e, Sym::new("kind"), &[])?;
    if kind
        .as_sym()
        .is_some_and(|k| k.as_str() == "name_not_registered")
    {
        return Err(ctx.err(
            ErrorKind::NoSuchProcess,
            format!("no actor is registered globally as #{name}"),
        ));
    }
    Err(Unwind::Error(e))
}

/// The actor handle currently registered under `name`, or `no_such_process`.
pub fn resolve_name(ctx: &mut Ctx, name: Sym, class: &ClassRef) -> EvalResult {
    let sys = sys_of(ctx)?;
    match sys.rt.whereis(name) {
        Some(p) => {
            let c = match p.info() {
                Value::Class(c) => c.clone(),
                _ => class.clone(),
            };
            Ok(ActorRef::value(p, c))
        }
        None => Err(ctx.err(
            ErrorKind::NoSuchProcess,
            format!("no process registered as #{name}"),
        )),
    }
}

/// [`goes_remote`] for an actor handle of class `class`, remembered in the context for the
/// last (class, selector) until the program's methods change (epoch).
#[inline]
fn goes_remote_memo(ctx: &mut Ctx, class: &ClassRef, recv: &Value, sel: Sym) -> bool {
    let epoch = ctx.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
    if let Some((k, s, e, r)) = &ctx.proc.remote_memo {
        if Arc::ptr_eq(k, class) && *s == sel && *e == epoch {
            return *r;
        }
    }
    let r = goes_remote(ctx, recv, sel);
    ctx.proc.remote_memo = Some((class.clone(), sel, epoch, r));
    r
}

/// Does `sel` sent to the actor handle `recv` run inside the actor?
pub fn goes_remote(ctx: &mut Ctx, recv: &Value, sel: Sym) -> bool {
    match ctx.lookup(recv, sel) {
        Some(hit) => {
            let defc = hit.class();
            (defc.builtin == Builtin::None
                && defc.kind == ClassKind::Actor
                && !std::ptr::eq(defc, Arc::as_ptr(&ctx.prog.core.actor)))
                || REMOTE_BUILTINS.contains(&sel.as_str())
        }
        None => {
            let dnu = ctx.prog.syms.dnu;
            matches!(ctx.lookup(recv, dnu), Some(h) if !h.is_prim())
        }
    }
}

/// A synchronous call through the runtime, mapping failures to exceptions.
pub fn remote_call(
    ctx: &mut Ctx,
    proc: &ProcRef,
    class: &ClassRef,
    sel: Sym,
    args: &[Value],
    t: Timeout,
) -> EvalResult {
    // Arguments that cannot hold a block (numbers, strings, symbols, handles …) cross as
    // they are and bring no relay homes: no walk, no map.
    if !args.iter().any(may_hold_block) {
        let mut out = spare_args_in(cx_of(ctx));
        out.extend(args.iter().map(fast_clone));
        let v = call_with(ctx, proc, class, sel, out, t)?;
        return checked_reply(ctx, v);
    }
    // Blocks whose home is live here get relay homes: a `^` in them comes back.
    let (args, relays) = crate::interp::actor::relay::prepare_args(ctx, args);
    let v = call_with(ctx, proc, class, sel, args, t)?;
    let v = checked_reply(ctx, v)?;
    crate::interp::actor::relay::unwrap_reply(ctx, v, &relays)
}

/// The runtime's sync call of `sel` with the prepared `args` (see [`remote_call`]).
#[inline(always)]
fn call_with(
    ctx: &mut Ctx,
    proc: &ProcRef,
    class: &ClassRef,
    sel: Sym,
    args: Vec<Value>,
    t: Timeout,
) -> EvalResult {
    let r = match cx_of(ctx) {
        Some(cx) => cx.call(proc, Message::new(sel, args), t),
        None => {
            return Err(ctx.err(
                ErrorKind::RuntimeError,
                "actor sends need the actor runtime (not running in a process)",
            ))
        }
    };
    r.map_err(|e| call_error(ctx, e, proc, class, sel, t))
}

/// A reply as the caller receives it: under `actor_max_memory` it counts for the calling
/// actor (`memlimit`).
#[inline(always)]
fn checked_reply(ctx: &mut Ctx, v: Value) -> EvalResult {
    if crate::memory::coroutine_accounts()
        && crate::interp::actor::memlimit::count_reply(&ctx.actor_fields, &v)
    {
        return Err(ctx.limit_hit("memory_limit"));
    }
    Ok(v)
}

/// The exception (or exit) for a failed call.
pub fn call_error(
    ctx: &Ctx,
    e: CallError,
    proc: &ProcRef,
    class: &ClassRef,
    sel: Sym,
    t: Timeout,
) -> Unwind {
    let label = format!(
        "Actor({}, {})",
        class.name,
        crate::interp::actor::handle::pid_label(proc.pid())
    );
    match e {
        CallError::Raised(exc) => Unwind::Error(ctx.across_boundary(exc, class.name)),
        CallError::Exiting(r) => Unwind::Exit(r.to_value()),
        CallError::Timeout => {
            let ms = match t {
                Timeout::Ms(ms) => ms.to_string(),
                Timeout::Infinity => "infinity".to_string(),
            };
            ctx.err_hint(
                ErrorKind::Timeout,
                format!("{label} did not answer '{sel}' within {ms} ms"),
                "Use withTimeout: to wait longer",
            )
        }
        CallError::ActorDead => match proc.exit_reason() {
            // Why it ended, when it has (a call queued while it stops has no reason yet).
            Some(r) => ctx.err_hint(
                ErrorKind::ActorDead,
                format!("{label} is not alive"),
                format!("it ended with reason {}", reason_text(&r)),
            ),
            None => ctx.err(ErrorKind::ActorDead, format!("{label} is not alive")),
        },
        CallError::Deadlock => ctx.err(
            ErrorKind::DeadlockDetected,
            format!("deadlock: {label} is already waiting on this process ('{sel}')"),
        ),
    }
}

/// An exit reason as bt prints it: `#killed`, `#normal`, or the custom value's printString.
fn reason_text(r: &crate::runtime::ExitReason) -> String {
    let v = r.to_value();
    crate::interp::print::simple_print(&v)
        .map(|s| crate::diagnostic::cap_quote(&s, 80).into_owned())
        .unwrap_or_else(|| r.to_string())
}

/// A cast to the local actor `target` (the process of `recv`): queued when the method runs
/// in its own process (failures are the actor's to log); `None` runs it as a sync send.
fn cast_to(
    ctx: &mut Ctx,
    target: &ProcRef,
    recv: &Value,
    sel: Sym,
    args: &[Value],
) -> Option<Result<(), Unwind>> {
    if !goes_remote(ctx, recv, sel) {
        return None;
    }
    let args: Vec<Value> = args.iter().map(|a| transfer_in(ctx, a)).collect();
    let cx = cx_of(ctx)?;
    cx.cast(target, Message::new(sel, args));
    Some(Ok(()))
}

/// The REPL / `// =>` display of a value: an actor is asked for its own printString
/// with a 1000 ms timeout (falling back to its label); everything else as `print::top_display`.
pub fn top_display(ctx: &mut Ctx, v: &Value) -> Result<String, Unwind> {
    if let Some(a) = downcast::<ActorRef>(v) {
        let label = a.label();
        let ps = ctx.prog.syms.print_string;
        if a.proc.pid().number != ctx.pid && goes_remote(ctx, v, ps) {
            let (proc, class) = (a.proc.clone(), a.class.clone());
            return Ok(
                match &remote_call(ctx, &proc, &class, ps, &[], Timeout::Ms(1000)) {
                    Ok(Value::Str(s)) => s.to_string(),
                    _ => label,
                },
            );
        }
        if a.proc.pid().number != ctx.pid {
            return Ok(label);
        }
    }
    if let Some(nr) = downcast::<NameRef>(v) {
        // A name proxy answers its own printString (`Actor(Svc, registered, hits)`).
        return Ok(crate::value::NativeObj::print_string(nr));
    }
    crate::interp::print::top_display(ctx, v)
}

/// Kinds of exceptions raised by user code (`error:`, `signal`, tests): never prefixed.
const USER_KINDS: &[ErrorKind] = &[
    ErrorKind::UserError,
    ErrorKind::Signal,
    ErrorKind::AssertionFailed,
];

/// An exception escaping an actor's method, as re-raised in the caller: a fault
/// raised by bt itself gets `selector` = the innermost method of the actor that was running
/// and the message prefix `Class>>selector: ` (once).
pub fn prefix_error(exc: Value, class: &ClassRef, msg_sel: Sym) -> Value {
    let Value::Object(inst) = &exc else {
        return exc;
    };
    let kind = exc_field(&exc, F_KIND);
    if kind
        .as_sym()
        .is_some_and(|k| USER_KINDS.contains(&ErrorKind::from(k)))
    {
        return exc;
    }
    let msg = match &exc_field(&exc, F_MESSAGE) {
        Value::Str(s) => s.to_string(),
        _ => return exc,
    };
    if has_prefix(&msg) {
        return exc;
    }
    let chain: Vec<&'static str> = class.chain().iter().map(|c| c.name.as_str()).collect();
    let mut sel = msg_sel;
    if let Value::List(trace) = &exc_field(&exc, F_TRACE) {
        for t in trace.iter() {
            if let Some((c, s)) = t.as_str().and_then(|t| t.split_once(">>")) {
                if chain.contains(&c) {
                    sel = Sym::new(s);
                    break;
                }
            }
        }
    }
    let mut fields = inst.fields.to_vec();
    // `Counter>>divide: msg` for a keyword selector, `Counter>>total: msg` for a unary one.
    let sep = if sel.as_str().ends_with(':') {
        " "
    } else {
        ": "
    };
    fields[F_MESSAGE] = Value::str(format!("{}>>{}{sep}{}", class.name, sel, msg));
    fields[F_SELECTOR] = Value::Symbol(sel);
    Value::Object(Arc::new(Instance {
        class: inst.class.clone(),
        fields: fields.into(),
    }))
}

/// `Word>>sel: ` at the start of a message.
fn has_prefix(msg: &str) -> bool {
    let Some((head, _)) = msg.split_once(' ') else {
        return false;
    };
    if !head.ends_with(':') {
        return false;
    }
    match head.split_once(">>") {
        Some((c, s)) => {
            !c.is_empty()
                && c.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
                && !s.is_empty()
                && !s.contains(' ')
        }
        None => false,
    }
}

/// `ClassName (kind): message` of an exception value (for logs).
pub fn describe_exception(e: &Value) -> String {
    match e {
        Value::Object(i) => {
            let kind = exc_field(e, F_KIND)
                .as_sym()
                .map(|s| s.as_str())
                .unwrap_or("signal");
            let msg = match &exc_field(e, F_MESSAGE) {
                Value::Str(s) => s.to_string(),
                _ => i.class.name.as_str().to_string(),
            };
            format!("{} ({kind}): {msg}", i.class.name)
        }
        other => format!("{other:?}"),
    }
}

/// A send to a `withTimeout:` proxy: what class TimeoutProxy itself understands (Actor's
/// and Object's protocol: `stop` stops only the proxy, `printString`, `class`, `pid` …) runs
/// here; `node`, `isRemote` and every other message go to the target, with the proxy's
/// timeout when they run inside the target actor.
fn proxy_send(
    ctx: &mut Ctx,
    a: &ActorRef,
    recv: &Value,
    sel: Sym,
    args: &[Value],
) -> Option<EvalResult> {
    let forward = matches!(sel.as_str(), "node" | "isRemote") || ctx.lookup(recv, sel).is_none();
    if !forward {
        return None;
    }
    // A stopped or killed proxy forwards nothing (its target lives on).
    if let Some(own) = a.own.as_ref().filter(|p| !p.is_alive()) {
        let class = a.class.clone();
        return Some(Err(call_error(
            ctx,
            CallError::ActorDead,
            own,
            &class,
            sel,
            a.timeout,
        )));
    }
    let class = a.target_class();
    let target = ActorRef::value(a.proc.clone(), class.clone());
    if a.proc.pid().number == ctx.pid || !goes_remote(ctx, &target, sel) {
        return Some(ctx.send(&target, sel, args));
    }
    Some(remote_call(ctx, &a.proc, &class, sel, args, a.timeout))
}

/// An actor handle for `proc` whose class is recorded in its spawn info (or `fallback`).
pub fn handle_for(proc: ProcRef, fallback: &ClassRef) -> Value {
    let c = match proc.info() {
        Value::Class(c) => c.clone(),
        _ => fallback.clone(),
    };
    native(ActorRef {
        proc,
        class: c,
        timeout: Timeout::DEFAULT,
        proxy: false,
        own: None,
        state: None,
    })
}
