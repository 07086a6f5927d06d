//! Erlang peers and bt actors (LANGUAGE.md 8.12): the interpreter-facing side of a named
//! node, in the distribution layer because it converts values to terms (`codec::etf`).
//!
//! * [`BtInbound`] — what the distribution layer asks of local processes when a peer
//!   addresses them: a `gen_server:call({Name, Node}, {Selector, Args})` runs the registered
//!   actor's method in a fresh process and replies `{ok, Result}` or `{error, Exception}`
//!   (the exception as a `'$beamtalk_class'` map); `gen_server:cast(…, {cast, Selector,
//!   Args})` sends without waiting; monitors and links watch processes; exit signals reach
//!   them. [`install`] puts it in place.
//! * [`call_remote`] — the network half of a send through `Actor named: #name on: aNode`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use eetf::{Atom, List, Term, Tuple};
use parking_lot::Mutex;

use crate::codec::etf::{self, atom};
use crate::interp::actor::{await_external, ActorSys, Done};
use crate::interp::actor_handle::ActorRef;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::actor_node::{CallReply, Distribution, Inbound, NodeError, Target};
use crate::interp::prims::parallel::{spawn_job, Outcome};
use crate::interp::value::{Sym, Value};
use crate::runtime::{ExitReason, Pid, ProcRef};

/// Installs this program's [`BtInbound`] in its distribution layer (a named node calls it
/// once, from the main process, before any statement runs).
pub fn install(ctx: &Ctx) {
    if let (Some(d), Some(sys)) = (ctx.prog.dist.get(), ctx.proc.sys.as_ref()) {
        d.set_inbound(Arc::new(BtInbound::new(sys)));
    }
}

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
            watches: Mutex::new(HashMap::new()),
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
fn error_term(kind: &str, message: &str) -> Term {
    let mut m = HashMap::new();
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
fn request_parts(t: &Term, cast: bool) -> Option<(String, Vec<Term>)> {
    let Term::Tuple(tu) = t else { return None };
    let e = &tu.elements[..];
    let (sel, args) = match (cast, e) {
        (false, [s, a]) => (s, a),
        (true, [Term::Atom(c), s, a]) if c.name == "cast" => (s, a),
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
    Some((sel.name.clone(), args))
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
    let Some(sym) = Sym::lookup(sel) else {
        return Err(ctx.err(
            "does_not_understand",
            format!("no method understands #{sel}"),
        ));
    };
    if sel_arity(sel) != args.len() {
        return Err(ctx.err(
            "arity_mismatch",
            format!(
                "Wrong number of arguments: {sel} expects {} but was called with {}",
                sel_arity(sel),
                args.len()
            ),
        ));
    }
    let mut vals = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let root = format!("arg{}", i + 1);
        vals.push(etf::from_term(ctx, a, &root).map_err(|e| e.to_unwind(ctx))?);
    }
    let class = match p.info() {
        Value::Class(c) => c.clone(),
        _ => ctx.prog.core.actor.clone(),
    };
    let h = ActorRef::value(p, class);
    ctx.send(&h, sym, &vals)
}

/// A reply term for a job's outcome, built inside the job's process.
fn reply_term(ctx: &mut Ctx, r: EvalResult) -> Term {
    match r {
        Ok(v) => match etf::to_term(ctx, &v, "result") {
            Ok(t) => Term::from(Tuple::from(vec![atom("ok"), t])),
            Err(e) => error_term(e.kind, &e.message),
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

impl Inbound for BtInbound {
    fn call(&self, target: Target, request: Term, reply: Done<Term>) {
        let Some(sys) = self.sys.upgrade() else {
            return reply(error_term("node_down", "the node is stopping"));
        };
        let Some(p) = self.proc(&sys, target) else {
            return reply(error_term("no_such_process", "no such process"));
        };
        let Some((sel, args)) = request_parts(&request, false) else {
            return reply(error_term(
                "badarg",
                "expected {Selector, Args} with an atom and a list",
            ));
        };
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
        let Some((sel, args)) = request_parts(&request, true) else {
            return;
        };
        let job = Box::new(move |ctx: &mut Ctx| run_request(ctx, p, &sel, &args));
        spawn_job(&sys, "dist", job, |o| {
            if let Outcome::Err(e) = o {
                eprintln!(
                    "bt: error in a cast from a peer: {}",
                    crate::interp::actor_send::describe_exception(&e)
                );
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

fn raise(ctx: &Ctx, e: NodeError) -> Unwind {
    match e.hint {
        Some(h) => ctx.err_hint(e.kind, e.message, &h),
        None => ctx.err(e.kind, e.message),
    }
}

/// A sync send through the Erlang distribution: `gen_server:call({name, node}, {sel, args})`
/// from the process `ctx` runs in (suspended meanwhile).
pub fn call_remote(
    d: &dyn Distribution,
    ctx: &mut Ctx,
    node: Sym,
    name: Sym,
    sel: Sym,
    args: &[Value],
) -> EvalResult {
    let mut targs = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let root = format!("arg{}", i + 1);
        targs.push(etf::to_term(ctx, a, &root).map_err(|e| e.to_unwind(ctx))?);
    }
    let request = Term::from(Tuple::from(vec![
        Term::from(Atom::from(sel.as_str())),
        Term::from(List::from(targs)),
    ]));
    let from = ctx.pid;
    let timeout = Some(std::time::Duration::from_millis(5000));
    let r: Result<CallReply, NodeError> =
        await_external(ctx, "the distribution layer", move |done| {
            d.call_name(from, node.as_str(), name.as_str(), request, timeout, done)
        })?;
    let reply = r.map_err(|e| raise(ctx, e))?;
    if !reply.bt_peer {
        return etf::from_term(ctx, &reply.term, "result").map_err(|e| e.to_unwind(ctx));
    }
    match &reply.term {
        Term::Tuple(t) if t.elements.len() == 2 => match &t.elements[0] {
            Term::Atom(a) if a.name == "ok" => {
                etf::from_term(ctx, &t.elements[1], "result").map_err(|e| e.to_unwind(ctx))
            }
            Term::Atom(a) if a.name == "error" => {
                let exc =
                    etf::from_term(ctx, &t.elements[1], "error").map_err(|e| e.to_unwind(ctx))?;
                if matches!(exc, Value::Object(_)) {
                    Err(Unwind::Error(exc))
                } else {
                    Err(ctx.err(
                        "runtime_error",
                        format!("{node} answered an error: {}", reply.term),
                    ))
                }
            }
            Term::Atom(a) if a.name == "exit" => Err(ctx.err(
                "actor_dead",
                format!("#{name} on {node} exited while answering"),
            )),
            _ => Err(ctx.err(
                "runtime_error",
                format!("unexpected reply from {node}: {}", reply.term),
            )),
        },
        other => Err(ctx.err(
            "runtime_error",
            format!("unexpected reply from {node}: {other}"),
        )),
    }
}
