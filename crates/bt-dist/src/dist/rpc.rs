//! `rpc` and `erpc` from Erlang and Elixir nodes into bt classes.
//!
//! `erpc:call(BtNode, 'Calc', 'add:to:', [2, 3])` does not talk to a server: it sends a
//! `SPAWN_REQUEST` control message for `erpc:execute_call(Ref, M, F, A)` with the options
//! `monitor` and `{reply, error_only}`, and reads the result from the exit reason of the
//! spawned process's `'DOWN'` message (`{Ref, return, V}`, `{Ref, error, Reason, Stack}`,
//! `{Ref, exit, Reason}`, `{Ref, throw, V}`). `rpc:call/4,5` is `erpc:call` with the
//! exceptions turned into `{badrpc, …}`; `erpc:cast` and `rpc:cast` spawn
//! `erpc:execute_cast(M, F, A)`; `spawn/4` and `spawn_link/4` spawn `M:F(A…)` itself.
//!
//! A bt node answers each request with a fresh bt process that runs the class-side method
//! of the class named by the module (function = selector): it first sends `SPAWN_REPLY`
//! with its pid (and the link/monitor flags asked for), runs the method, and on its end
//! sends `MONITOR_P_EXIT` (monitor) and `EXIT` (link) with the reason `erpc` expects. A
//! class that is not loaded, a selector the class side does not understand, or an argument
//! count that does not fit the selector is Erlang's `undef` with the stack
//! `[{M, F, Args, []}]`, as a remote node reports an unknown function; a bt exception is
//! `error` with the exception map (as a `gen_server:call` error reply carries it); a process
//! exit while it runs is `exit`. Other modules (`erlang`, `lists`, …) are not bt
//! classes: `undef`, like a module that is not loaded. The node advertises
//! `DFLAG_SPAWN` ([`super::handshake`]); without it Erlang answers `notsup` itself.

use std::sync::Arc;

use eetf::{Atom, FixInteger, List, Pid, Reference, Term, Tuple};
use erl_dist::message::Message;
use erl_dist::term::PidOrAtom;
use parking_lot::Mutex;

use super::state::Inner;
use super::terms::frame;
use crate::codec::etf::{self, atom};
use crate::interp::actor::cx_of;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::parallel::{spawn_job, Outcome};
use crate::value::{Sym, Value};

/// A peer's `spawn_request`, decoded.
pub(super) struct SpawnReq {
    pub req_id: Reference,
    pub from: Pid,
    pub module: String,
    pub function: String,
    pub opts: Vec<Term>,
    pub args: Vec<Term>,
}

impl SpawnReq {
    pub(super) fn from_message(m: erl_dist::message::SpawnRequest) -> SpawnReq {
        SpawnReq {
            req_id: m.req_id,
            from: m.from_pid,
            module: m.mfa.module.name,
            function: m.mfa.function.name,
            opts: m.opt_list.elements,
            args: m.arg_list.elements,
        }
    }

    /// A `SPAWN_REQUEST` (29) or `SPAWN_REQUEST_TT` (30) frame body `erl_dist` could not read:
    /// its argument list was written as a byte string (`[2, 3]` is `STRING_EXT`).
    pub(super) fn from_bytes(mut bytes: &[u8]) -> Option<SpawnReq> {
        let ctl = Term::decode(&mut bytes).ok()?;
        let Term::Tuple(t) = ctl else { return None };
        let e = &t.elements;
        let op = match e.first() {
            Some(Term::FixInteger(i)) => i.value,
            _ => return None,
        };
        if !(op == 29 && e.len() == 6 || op == 30 && e.len() == 7) {
            return None;
        }
        let (Term::Reference(req_id), Term::Pid(from), Term::Tuple(mfa)) = (&e[1], &e[2], &e[4])
        else {
            return None;
        };
        let [Term::Atom(m), Term::Atom(f), _] = &mfa.elements[..] else {
            return None;
        };
        let args = list_elements(&Term::decode(&mut bytes).ok()?)?;
        Some(SpawnReq {
            req_id: (**req_id).clone(),
            from: from.clone(),
            module: m.name.clone(),
            function: f.name.clone(),
            opts: list_elements(&e[5])?,
            args,
        })
    }
}

/// The elements of a proper list term (a byte string's as integers).
fn list_elements(t: &Term) -> Option<Vec<Term>> {
    match t {
        Term::List(l) => Some(l.elements.clone()),
        Term::ByteList(b) => Some(
            b.bytes
                .iter()
                .map(|&x| Term::from(FixInteger::from(x as i32)))
                .collect(),
        ),
        _ => None,
    }
}

/// What the spawned process runs and how its end is reported.
enum Kind {
    /// `erpc:execute_call(Ref, M, F, A)`: the exit reason carries the result.
    Call(Term),
    /// `erpc:execute_cast(M, F, A)`: the result is dropped.
    Cast,
    /// `M:F(A…)` itself (`spawn/4`): exits `normal` on success.
    Plain,
}

/// What the spawned process's end tells its requester.
struct Notify {
    peer: String,
    from: Pid,
    req_id: Reference,
    monitor: bool,
    link: bool,
    /// Its pid, once it has sent `SPAWN_REPLY`.
    me: Option<Pid>,
}

impl Notify {
    /// The requester learns that the process ended with `reason`.
    fn ended(self, inner: &Inner, reason: Term) {
        let Some(me) = self.me else {
            // Never started: the spawn failed.
            let m = Message::spawn_reply(
                self.req_id,
                self.from,
                FixInteger::from(0),
                PidOrAtom::Atom(Atom::from("system_limit")),
            );
            inner.send_to(&self.peer, frame(m));
            return;
        };
        let mut bytes = Vec::new();
        if self.monitor {
            let m = Message::monitor_p_exit(
                PidOrAtom::Pid(me.clone()),
                self.from.clone(),
                self.req_id,
                reason.clone(),
            );
            bytes.extend(frame(m));
        }
        if self.link {
            bytes.extend(frame(Message::exit(me, self.from, reason)));
        }
        if !bytes.is_empty() {
            inner.send_to(&self.peer, bytes);
        }
    }
}

fn has_opt(opts: &[Term], name: &str) -> bool {
    opts.iter().any(|o| match o {
        Term::Atom(a) => a.name == name,
        // `{monitor, MonitorOpts}`
        Term::Tuple(t) => matches!(t.elements.first(), Some(Term::Atom(a)) if a.name == name),
        _ => false,
    })
}

fn tuple(v: Vec<Term>) -> Term {
    Term::from(Tuple::from(v))
}

/// Handles a peer's `spawn_request`: a fresh bt process runs the class-side method.
pub(super) fn spawn_request(inner: &Arc<Inner>, peer: &str, req: SpawnReq) {
    let notify = Notify {
        peer: peer.to_string(),
        from: req.from.clone(),
        req_id: req.req_id.clone(),
        monitor: has_opt(&req.opts, "monitor"),
        link: has_opt(&req.opts, "link"),
        me: None,
    };
    // What to run: `erpc`'s wrappers carry the real module, function and arguments.
    let (kind, m, f, a) = match (req.module.as_str(), req.function.as_str(), &req.args[..]) {
        ("erpc", "execute_call", [r, Term::Atom(m), Term::Atom(f), a]) => match list_elements(a) {
            Some(a) => (Kind::Call(r.clone()), m.name.clone(), f.name.clone(), a),
            None => (
                Kind::Call(r.clone()),
                m.name.clone(),
                f.name.clone(),
                vec![],
            ),
        },
        ("erpc", "execute_cast", [Term::Atom(m), Term::Atom(f), a]) => {
            let a = list_elements(a).unwrap_or_default();
            (Kind::Cast, m.name.clone(), f.name.clone(), a)
        }
        _ => (Kind::Plain, req.module, req.function, req.args),
    };
    let Some(sys) = inner.global.sys() else {
        return notify.ended(inner, atom("noproc"));
    };
    let slot = Arc::new(Mutex::new(Some(notify)));
    let weak = Arc::downgrade(inner);
    let (s2, w2) = (slot.clone(), weak.clone());
    let job = Box::new(move |ctx: &mut Ctx| -> EvalResult {
        let Some(inner) = w2.upgrade() else {
            return Ok(Value::Nil);
        };
        let number = cx_of(ctx).map(|cx| cx.pid().number).unwrap_or(0);
        let me = super::terms::my_pid(&inner, number);
        if let Some(n) = s2.lock().as_mut() {
            let flags = n.link as i32 | (n.monitor as i32) << 1;
            let m = Message::spawn_reply(
                n.req_id.clone(),
                n.from.clone(),
                FixInteger::from(flags),
                PidOrAtom::Pid(me.clone()),
            );
            inner.send_to(&n.peer, frame(m));
            n.me = Some(me);
        }
        let reason = run(ctx, &kind, &m, &f, &a);
        let n = s2.lock().take();
        if let Some(n) = n {
            n.ended(&inner, reason);
        }
        Ok(Value::Nil)
    });
    spawn_job(&sys, "rpc", job, move |o| {
        // Killed before it reported its end.
        let n = slot.lock().take();
        if let (Some(n), Some(inner)) = (n, weak.upgrade()) {
            let reason = match o {
                Outcome::Exited(_) => atom("killed"),
                _ => atom("normal"),
            };
            n.ended(&inner, reason);
        }
    });
}

/// Runs class `m`'s class-side method `f` with `a`: the exit reason the requester sees.
fn run(ctx: &mut Ctx, kind: &Kind, m: &str, f: &str, a: &[Term]) -> Term {
    let outcome = apply(ctx, m, f, a);
    let stack = || {
        let frame = tuple(vec![
            atom(m),
            atom(f),
            etf::list(a.iter().map(etf::exact).collect()),
            Term::from(List::nil()),
        ]);
        etf::list(vec![frame])
    };
    let reply = outcome.map(|r| super::peer::reply_term(ctx, r));
    match kind {
        Kind::Call(r) => match reply {
            None => tuple(vec![r.clone(), atom("error"), atom("undef"), stack()]),
            Some(Term::Tuple(t)) => {
                let mut e = t.elements;
                let v = e.pop().unwrap_or_else(|| atom("nil"));
                match e.first() {
                    Some(Term::Atom(k)) if k.name == "ok" => {
                        tuple(vec![r.clone(), atom("return"), v])
                    }
                    Some(Term::Atom(k)) if k.name == "exit" => {
                        tuple(vec![r.clone(), atom("exit"), v])
                    }
                    _ => tuple(vec![r.clone(), atom("error"), v, stack()]),
                }
            }
            Some(other) => tuple(vec![r.clone(), atom("error"), other, stack()]),
        },
        Kind::Cast | Kind::Plain => match reply {
            None => tuple(vec![atom("undef"), stack()]),
            Some(Term::Tuple(t)) => {
                let mut e = t.elements;
                let v = e.pop().unwrap_or_else(|| atom("nil"));
                match e.first() {
                    Some(Term::Atom(k)) if k.name == "ok" => atom("normal"),
                    Some(Term::Atom(k)) if k.name == "exit" => v,
                    _ => tuple(vec![v, stack()]),
                }
            }
            Some(_) => atom("normal"),
        },
    }
}

/// How many arguments `sel` takes (binary selectors 1, keywords one per colon).
fn sel_arity(sel: &str) -> usize {
    match sel.chars().next() {
        Some(c) if !(c.is_alphanumeric() || c == '_') => 1,
        _ => sel.matches(':').count(),
    }
}

/// The class-side send `m f: a…`, or None when there is no such function (`undef`).
fn apply(ctx: &mut Ctx, m: &str, f: &str, a: &[Term]) -> Option<EvalResult> {
    let cls = Sym::lookup(m).and_then(|s| ctx.prog.class_by_sym(s))?;
    let sel = Sym::lookup(f)?;
    let recv = Value::Class(cls);
    if sel_arity(f) != a.len() || !ctx.responds_to(&recv, sel) {
        return None;
    }
    let mut vals = Vec::with_capacity(a.len());
    for (i, t) in a.iter().enumerate() {
        match etf::from_term(ctx, t, &format!("arg{}", i + 1)) {
            Ok(v) => vals.push(v),
            Err(e) => return Some(Err(e.to_unwind(ctx))),
        }
    }
    Some(ctx.send(&recv, sel, &vals).map_err(|u| match u {
        // A non-local return that left the method: nothing to return to here.
        Unwind::Return { .. } => ctx.type_err("a block's ^ left the rpc call"),
        other => other,
    }))
}
