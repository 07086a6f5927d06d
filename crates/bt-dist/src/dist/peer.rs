//! Erlang peers and bt actors: the interpreter-facing side of a named
//! node, in the distribution layer because it converts values to terms (`codec::etf`).
//!
//! * [`BtInbound`] — what the distribution layer asks of local processes when a peer
//!   addresses them: a `gen_server:call({Name, Node}, {Selector, Args})` runs the registered
//!   actor's method in a fresh process and replies `{ok, Result}` or `{error, Exception}`
//!   (the exception as a `'$beamtalk_class'` map); `gen_server:cast(…, {cast, Selector,
//!   Args})` sends without waiting; monitors and links watch processes; exit signals reach
//!   them. [`super::service::install`] puts it in place.
//!
//! A call to a bt actor is delivered straight into the actor's mailbox as a job that runs in
//! the actor (arguments decoded there, the method run as any message — its state rolled back
//! when it raises — and the reply encoded and sent from there); a reply that cannot be
//! encoded answers `not_serialisable` (the method's changes are kept: it completed). Calls
//! to other processes run in a fresh process; the node service `'$bt_node'` is answered by
//! [`super::service::NodeInbound`] before calls reach this handler.

/// Tables looked up per message: a fast seeded hasher (SipHash showed in profiles).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use eetf::{Term, Tuple};
use parking_lot::Mutex;

use crate::codec::etf::{self, atom};
use crate::interp::actor::handle::ActorRef;
use crate::interp::actor::handle::JobBox;
use crate::interp::actor::{ActorSys, Done};
use crate::interp::distribution::{Inbound, Target};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::parallel::{spawn_job, Outcome};
use crate::runtime::{ExitReason, Pid, ProcRef, RemoteChain};
use crate::value::{Sym, Value};

/// The [`Inbound`] of a program: holds its actor system weakly (the node outlives nothing).
pub struct BtInbound {
    sys: Weak<ActorSys>,
    watches: Mutex<HashMap<u64, (ProcRef, u64)>>,
    next: AtomicU64,
}

impl BtInbound {
    pub fn new(sys: &Arc<ActorSys>) -> BtInbound {
        BtInbound {
            sys: Arc::downgrade(sys),
            watches: Mutex::new(HashMap::default()),
            next: AtomicU64::new(1),
        }
    }

    fn proc(&self, sys: &ActorSys, t: Target) -> Option<ProcRef> {
        match t {
            Target::Name(n) => sys.rt.whereis(n),
            Target::Number(n) => sys.rt.lookup(Pid {
                node: 0,
                number: n,
                service: false,
            }),
        }
    }
}

/// `{error, Reason}` built without a process (no program classes needed).
pub(super) fn error_term(kind: &str, message: &str) -> Term {
    let mut m = std::collections::HashMap::new();
    m.insert(atom("kind"), atom(kind));
    m.insert(
        atom("message"),
        Term::from(eetf::Binary::from(message.as_bytes().to_vec())),
    );
    Term::from(Tuple::from(vec![
        atom("error"),
        Term::from(eetf::Map::from(m)),
    ]))
}

/// Splits `{Selector, Args}` (or `{cast, Selector, Args}` with `cast`).
pub(super) fn request_parts(t: &Term, cast: bool) -> Option<(String, Vec<Term>)> {
    request_with_classes(t, cast).map(|(s, a, _)| (s, a))
}

/// Splits a request that may carry a bt peer's class table (`codec::etf_classes`):
/// `{Selector, Args, Classes}` (`{cast, Selector, Args, Classes}`).
pub(super) fn request_with_classes(
    t: &Term,
    cast: bool,
) -> Option<(String, Vec<Term>, Option<Term>)> {
    let Term::Tuple(tu) = t else { return None };
    let e = &tu.elements[..];
    let (sel, args, classes) = match (cast, e) {
        (false, [s, a]) => (s, a, None),
        (false, [s, a, c @ Term::List(_)]) => (s, a, Some(c.clone())),
        (true, [Term::Atom(c), s, a]) if c.name == "cast" => (s, a, None),
        (true, [Term::Atom(c), s, a, t @ Term::List(_)]) if c.name == "cast" => {
            (s, a, Some(t.clone()))
        }
        _ => return None,
    };
    let Term::Atom(sel) = sel else { return None };
    let args = match args {
        Term::List(l) => l.elements.clone(),
        Term::ByteList(b) => b
            .bytes
            .iter()
            .map(|&x| Term::from(eetf::FixInteger::from(x as i32)))
            .collect(),
        _ => return None,
    };
    Some((sel.name.clone(), args, classes))
}

/// How many arguments `sel` takes (binary selectors 1, keywords one per colon).
fn sel_arity(sel: &str) -> usize {
    match sel.chars().next() {
        Some(c) if !(c.is_alphanumeric() || c == '_') => 1,
        _ => sel.matches(':').count(),
    }
}

/// Runs `sel` with `args` on the process `p` from the job's context.
fn run_request(ctx: &mut Ctx, p: ProcRef, sel: &str, args: &[Term]) -> EvalResult {
    let Some(sym) = crate::codec::etf::peer_symbol(sel) else {
        return Err(ctx.err(
            ErrorKind::DoesNotUnderstand,
            format!("no method understands '{sel}'"),
        ));
    };
    if sel_arity(sel) != args.len() {
        return Err(ctx.err(
            ErrorKind::ArityMismatch,
            format!(
                "Wrong number of arguments: {sel} expects {} but was called with {}",
                sel_arity(sel),
                args.len()
            ),
        ));
    }
    let mut vals = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let root = arg_root(i);
        vals.push(etf::from_term(ctx, a, &root).map_err(|e| e.to_unwind(ctx))?);
    }
    // A supervisor answers through its supervisor handle (`aNode supervisors`).
    let sup = ctx
        .proc
        .sys
        .as_ref()
        .and_then(|sys| sys.supervision.by_pid(p.pid()));
    let h = match sup {
        Some(s) => crate::interp::actor::prims::supervision::sup_value(ctx, s),
        None => {
            let class = match p.info() {
                Value::Class(c) => c.clone(),
                _ => ctx.prog.core.actor.clone(),
            };
            ActorRef::value(p, class)
        }
    };
    ctx.send(&h, sym, &vals)
}

/// A reply term for a job's outcome, built inside the job's process.
pub(super) fn reply_term(ctx: &mut Ctx, r: EvalResult) -> Term {
    match r {
        Ok(v) => match etf::to_term(ctx, &v, "result") {
            Ok(t) => Term::from(Tuple::from(vec![atom("ok"), t])),
            // The result cannot cross: the caller gets the error, the state stays.
            Err(e) => match e.to_unwind(ctx) {
                Unwind::Error(exc) => match etf::to_term(ctx, &exc, "error") {
                    Ok(t) => Term::from(Tuple::from(vec![atom("error"), t])),
                    Err(_) => error_term(e.kind, &e.message),
                },
                _ => error_term(e.kind, &e.message),
            },
        },
        Err(Unwind::Error(exc)) => match etf::to_term(ctx, &exc, "error") {
            Ok(t) => Term::from(Tuple::from(vec![atom("error"), t])),
            Err(e) => error_term(e.kind, &e.message),
        },
        Err(u) => {
            let reason = match u {
                Unwind::Exit(v) => v,
                _ => Value::sym("error"),
            };
            let t = etf::to_term(ctx, &reason, "reason").unwrap_or_else(|_| atom("error"));
            Term::from(Tuple::from(vec![atom("exit"), t]))
        }
    }
}

/// [`reply_term`] for a bt caller: a result carries the class table of the actors in it
/// (`{ok, Value, Classes}`, `codec::etf_classes`).
fn reply_with_classes(ctx: &mut Ctx, r: EvalResult) -> Term {
    match r {
        Ok(v) => match crate::codec::etf_classes::collect(|| etf::to_term(ctx, &v, "result")) {
            (Ok(t), table) => Term::from(Tuple::from(vec![atom("ok"), t, table])),
            (Err(_), _) => reply_term(ctx, Ok(v)),
        },
        r => reply_term(ctx, r),
    }
}

/// An exit reason as a term (`normal`, `killed`, the exception map …).
pub fn reason_term(ctx: &Ctx, r: &ExitReason) -> Term {
    match r {
        ExitReason::Normal => atom("normal"),
        ExitReason::Killed => atom("killed"),
        ExitReason::Shutdown => atom("shutdown"),
        ExitReason::NoProc => atom("noproc"),
        other => etf::to_term(ctx, &other.to_value(), "reason").unwrap_or_else(|_| atom("error")),
    }
}

/// Calls a reply callback exactly once: with the reply, or — dropped unanswered (the job's
/// message was dropped because the actor exited) — with `actor_dead`.
struct ReplyOnce(Option<Done<Term>>);

impl ReplyOnce {
    fn send(mut self, t: Term) {
        if let Some(f) = self.0.take() {
            f(t);
        }
    }
}

impl Drop for ReplyOnce {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(error_term(
                "actor_dead",
                "the actor exited before answering",
            ));
        }
    }
}

/// `reply` gets an error reply with a proper exception (kind, message), built in a fresh
/// process (the exception's class is the program's).
fn error_later(sys: &Arc<ActorSys>, kind: ErrorKind, message: String, reply: Done<Term>) {
    let slot: Arc<Mutex<Option<Done<Term>>>> = Arc::new(Mutex::new(Some(reply)));
    let s2 = slot.clone();
    let job = Box::new(move |ctx: &mut Ctx| {
        let t = error_reply(ctx, kind, message);
        if let Some(f) = s2.lock().take() {
            f(t);
        }
        Ok(Value::Nil)
    });
    spawn_job(sys, "dist", job, move |_| {
        if let Some(f) = slot.lock().take() {
            f(error_term(
                kind.name(),
                "the node could not build the error",
            ));
        }
    });
}

/// An error reply carrying a proper exception (kind, message) built in `ctx`.
fn error_reply(ctx: &mut Ctx, kind: ErrorKind, message: String) -> Term {
    let exc = crate::interp::actor::prims::actor::error_value(ctx, kind, message);
    reply_term(ctx, Err(Unwind::Error(exc)))
}

/// A user actor (its messages run bt methods) — one that can take a job in its mailbox
/// (a supervisor's class is a user class too, but not an actor class).
/// Hands `job` to the bt actor `p` as a message: it runs inside the actor, between its other
/// messages. A job that is not delivered (the actor exited) is dropped.
/// With `chain` (a bt caller's waiting chain, `super::chain`) the actor's own waiting chain
/// ends in it while the job runs.
fn cast_job(
    sys: &ActorSys,
    p: &ProcRef,
    job: crate::interp::actor::handle::Job,
    chain: Option<RemoteChain>,
) {
    let boxed = crate::interp::actor::handle::native(JobBox {
        job: Mutex::new(Some(job)),
        class: sys.prog.core.object.clone(),
    });
    let msg = crate::interp::actor::behaviour::job_message(boxed);
    match chain {
        Some(c) => sys.rt.cast_waited(p, msg, Arc::new(c)),
        None => sys.rt.cast(p, msg),
    };
}

fn is_bt_actor(p: &ProcRef) -> Option<crate::value::ClassRef> {
    match p.info() {
        Value::Class(c)
            if c.builtin == crate::interp::class::Builtin::None
                && c.kind == crate::interp::class::ClassKind::Actor =>
        {
            Some(c.clone())
        }
        _ => None,
    }
}

/// The path root of argument `i` (0-based) in codec errors: `arg1` … (no allocation for
/// the first few, which is every call but rare ones).
pub(crate) fn arg_root(i: usize) -> std::borrow::Cow<'static, str> {
    const ROOTS: [&str; 6] = ["arg1", "arg2", "arg3", "arg4", "arg5", "arg6"];
    match ROOTS.get(i) {
        Some(r) => std::borrow::Cow::Borrowed(r),
        None => std::borrow::Cow::Owned(format!("arg{}", i + 1)),
    }
}

/// Runs request `sel`/`args` inside the actor whose process runs `ctx`: as a message of
/// its own (state rolled back when the method raises), answering the reply term.
fn run_in_actor(
    ctx: &mut Ctx,
    class: &crate::value::ClassRef,
    sel: &str,
    args: &[Term],
    classes: Option<&Term>,
) -> Term {
    // A selector this node has never seen is understood by none of its classes: the same
    // does_not_understand as a local send's (selector and hint included, no `Class>>` prefix:
    // no method of the actor ran).
    let Some(sym) = crate::codec::etf::peer_symbol(sel) else {
        return error_reply(
            ctx,
            ErrorKind::DoesNotUnderstand,
            format!("{} does not understand '{sel}'", class.name),
        );
    };
    let me = ctx.proc.actor().cloned().unwrap_or(Value::Nil);
    if !ctx.responds_to(&me, sym) && !crate::interp::actor::send::goes_remote(ctx, &me, sym) {
        let u = ctx.dnu_error(&me, sym);
        return reply_term(ctx, Err(u));
    }
    if sel_arity(sel) != args.len() {
        let m = format!(
            "Wrong number of arguments: {sel} expects {} but was called with {}",
            sel_arity(sel),
            args.len()
        );
        return error_reply(ctx, ErrorKind::ArityMismatch, m);
    }
    if let (Some(t), Some(d)) = (classes, ctx.prog.dist.get()) {
        crate::codec::etf_classes::remember(d.node_name().as_str(), t);
    }
    // A bt caller (it sends a class table) relays a `^` of its blocks back: they get
    // this call's remote home.
    let home = classes.map(|_| crate::interp::actor::relay::next_relay_home());
    if let Some(h) = home {
        ctx.proc.relays.push(h);
    }
    let pids = classes
        .map(crate::codec::etf_classes::pids_of)
        .unwrap_or_default();
    let mut vals = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let root = arg_root(i);
        let v = crate::codec::block::with_home(home.unwrap_or(u64::MAX), || {
            crate::codec::etf_classes::with_pids(pids.clone(), || etf::from_term(ctx, a, &root))
        });
        match v {
            Ok(v) => vals.push(v),
            Err(e) => {
                let u = e.to_unwind(ctx);
                return reply_term(ctx, Err(u));
            }
        }
    }
    let saved = ctx.actor_fields.clone();
    let r = ctx.send(&me, sym, &vals);
    match r {
        Ok(v) if classes.is_some() => reply_with_classes(ctx, Ok(v)),
        Ok(v) => reply_term(ctx, Ok(v)),
        // A `^` of the caller's block: `{nlr, Value}` returns from its home method there.
        // The method did not fail: its changes stay.
        Err(Unwind::Return { value, home: h }) if Some(h) == home => {
            match etf::to_term(ctx, &value, "result") {
                Ok(t) => Term::from(Tuple::from(vec![atom("nlr"), t])),
                Err(e) => {
                    let u = e.to_unwind(ctx);
                    reply_term(ctx, Err(u))
                }
            }
        }
        Err(Unwind::Return { .. }) => {
            ctx.actor_fields = saved;
            let m = "non-local return from a method that has already returned".to_string();
            error_reply(ctx, ErrorKind::RuntimeError, m)
        }
        Err(Unwind::Error(e)) => {
            ctx.actor_fields = saved;
            let e = crate::interp::actor::send::prefix_error(e, class, sym);
            reply_term(ctx, Err(Unwind::Error(e)))
        }
        Err(u) => {
            ctx.actor_fields = saved;
            reply_term(ctx, Err(u))
        }
    }
}

impl Inbound for BtInbound {
    fn call(&self, target: Target, from: eetf::Pid, request: Term, reply: Done<Term>) {
        self.call_waited(target, from, request, Vec::new(), reply)
    }

    fn call_waited(
        &self,
        target: Target,
        from: eetf::Pid,
        request: Term,
        waits: Vec<eetf::Pid>,
        reply: Done<Term>,
    ) {
        let Some(sys) = self.sys.upgrade() else {
            return reply(error_term("node_down", "the node is stopping"));
        };
        let Some(p) = self.proc(&sys, target) else {
            // The caller makes `no_such_process` (a name) or `actor_dead` (a pid) of it.
            return reply(Term::from(Tuple::from(vec![atom("error"), atom("noproc")])));
        };
        let Some((sel, args, classes)) = request_with_classes(&request, false) else {
            return reply(error_term(
                "badarg",
                "expected {Selector, Args} with an atom and a list",
            ));
        };
        if let Some(class) = is_bt_actor(&p) {
            // A bt caller (it sends a class table) carries its waiting chain: a target on it
            // closes a cycle through nodes.
            // So does an Erlang caller that processes here wait on (`super::erl_wait`).
            let chain = match (&classes, sys.prog.dist.get()) {
                (Some(t), Some(d)) => {
                    Some((super::chain::incoming(d.node_name().as_str(), from, t), d))
                }
                (None, Some(d)) if !waits.is_empty() => {
                    let me = d.node_name();
                    Some((super::chain::from_erlang(me.as_str(), from, waits), d))
                }
                _ => None,
            };
            let chain = match chain {
                Some((c, d)) if c.local.contains(&p.pid().number) => {
                    let who = match target {
                        Target::Name(n) => format!("#{n} on {}", d.node_name()),
                        Target::Number(n) => format!("<0.{n}.0> on {}", d.node_name()),
                    };
                    let msg = super::chain::message(&who, &sel);
                    if classes.is_some() {
                        return reply(error_term("deadlock_detected", &msg));
                    }
                    // An Erlang caller gets the exception map (docs/erlang-interop.md),
                    // built in a process of its own.
                    return error_later(&sys, ErrorKind::DeadlockDetected, msg, reply);
                }
                c => c.map(|(c, _)| c),
            };
            // Straight into the actor's mailbox: no process of its own, two fewer wakes.
            let reply = ReplyOnce(Some(reply));
            let job: crate::interp::actor::handle::Job = Box::new(move |ctx: &mut Ctx| {
                let t = run_in_actor(ctx, &class, &sel, &args, classes.as_ref());
                reply.send(t);
            });
            // Not delivered (the actor exited): the job drops and answers `actor_dead`.
            cast_job(&sys, &p, job, chain);
            return;
        }
        let slot: Arc<Mutex<Option<Done<Term>>>> = Arc::new(Mutex::new(Some(reply)));
        let s2 = slot.clone();
        let job = Box::new(move |ctx: &mut Ctx| {
            let r = run_request(ctx, p, &sel, &args);
            let t = reply_term(ctx, r);
            if let Some(f) = s2.lock().take() {
                f(t);
            }
            Ok(Value::Nil)
        });
        spawn_job(&sys, "dist", job, move |o| {
            if let Some(f) = slot.lock().take() {
                let why = match o {
                    Outcome::Exited(_) => "the request's process was killed",
                    _ => "the request ended without a reply",
                };
                f(error_term("actor_dead", why));
            }
        });
    }

    fn cast(&self, target: Target, request: Term) {
        let Some(sys) = self.sys.upgrade() else {
            return;
        };
        let Some(p) = self.proc(&sys, target) else {
            return;
        };
        let Some((sel, args, classes)) = request_with_classes(&request, true) else {
            return;
        };
        if let Some(class) = is_bt_actor(&p) {
            let job: crate::interp::actor::handle::Job = Box::new(move |ctx: &mut Ctx| {
                let t = run_in_actor(ctx, &class, &sel, &args, classes.as_ref());
                if let Term::Tuple(t) = &t {
                    if matches!(t.elements.first(), Some(Term::Atom(a)) if a.name != "ok") {
                        let why = t.elements.get(1).map(|e| e.to_string()).unwrap_or_default();
                        let msg = format!("error in a cast from a peer to {}: {why}", class.name);
                        crate::interp::actor::cx_log(ctx, &msg);
                    }
                }
            });
            cast_job(&sys, &p, job, None);
            return;
        }
        let job = Box::new(move |ctx: &mut Ctx| run_request(ctx, p, &sel, &args));
        let rt = sys.rt.clone();
        spawn_job(&sys, "dist", job, move |o| {
            if let Outcome::Err(e) = o {
                rt.log(&format!(
                    "bt: error in a cast from a peer: {}",
                    crate::interp::actor::send::describe_exception(&e)
                ));
            }
        });
    }

    fn resolve(&self, target: Target) -> Option<u64> {
        let sys = self.sys.upgrade()?;
        self.proc(&sys, target)
            .filter(|p| p.is_alive())
            .map(|p| p.pid().number)
    }

    fn watch(&self, number: u64, down: Done<Term>) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(sys) = self.sys.upgrade() else {
            down(atom("noproc"));
            return id;
        };
        let Some(p) = self.proc(&sys, Target::Number(number)) else {
            down(atom("noproc"));
            return id;
        };
        let r = sys.rt.make_ref();
        self.watches.lock().insert(id, (p.clone(), r));
        let s2 = sys.clone();
        sys.rt.when_down(&p, r, move |cx, reason| {
            let t = crate::interp::actor::with_fresh_ctx(&s2, cx, |ctx| reason_term(ctx, &reason));
            down(t);
        });
        id
    }

    fn unwatch(&self, id: u64) -> bool {
        let Some((p, r)) = self.watches.lock().remove(&id) else {
            return false;
        };
        match self.sys.upgrade() {
            Some(sys) => sys.rt.demonitor(&p, r),
            None => false,
        }
    }

    fn exit(&self, number: u64, reason: Term) {
        let Some(sys) = self.sys.upgrade() else {
            return;
        };
        let Some(p) = self.proc(&sys, Target::Number(number)) else {
            return;
        };
        let r = match &reason {
            Term::Atom(a) if a.name == "normal" => return,
            Term::Atom(a) if a.name == "kill" || a.name == "killed" => ExitReason::Killed,
            Term::Atom(a) => match Sym::lookup(&a.name) {
                Some(s) => ExitReason::Custom(Value::Symbol(s)),
                None => ExitReason::Custom(Value::sym("error")),
            },
            _ => ExitReason::Custom(Value::sym("error")),
        };
        let from = Pid {
            node: 1,
            number: 0,
            service: true,
        };
        sys.rt.exit(&p, from, r);
    }
}
