//! Process operations on a plain Erlang node: what `pid`, `isAlive`,
//! `stop`, `kill` and a Pid's `kill`/`exit:` do when the process lives on an Erlang node,
//! which has no bt node service (`'$bt_node'`, [`super::service`]) to ask.
//!
//! They do what an Erlang user would write:
//! * `pid` of a name proxy: `erlang:whereis(Name)` there, through its `rex` server (the
//!   request `rpc:call/4` sends: `{call, erlang, whereis, [Name], user}`); nil → the proxy
//!   raises `no_such_process`, as for a bt node.
//! * `isAlive`: `whereis` for a name, `erlang:is_process_alive(Pid)` for a pid (asked on
//!   the process's own node, where it answers for local pids).
//! * `kill`: `exit(Pid, kill)` — an `EXIT2` signal from the calling process — answering
//!   once the process is gone: a monitor (`MONITOR_P`) set just before the signal, on the
//!   same connection and so seen first by the process, reports its exit.
//! * `stop`: a supervisor's shutdown: `exit(Pid, shutdown)`, then, if the process traps
//!   exits and is still running after 5000 ms (a supervisor's default shutdown time; a
//!   `withTimeout:` proxy's `stop` stops only the proxy), `exit(Pid, kill)`;
//!   it answers once the process has exited ("`stop` answers once
//!   the actor has exited").
//! * `Actor allRegisteredOn:`: `erlang:registered()` there (name proxies, sorted).
//! * A Pid's `exit: reason`: `is_process_alive`, then `exit(Pid, Reason)`; answers whether
//!   it was alive (a process that traps exits gets `{'EXIT', From, Reason}` as a message).

use std::sync::Arc;
use std::time::Duration;

use eetf::{Atom, Pid, Term, Tuple};
use erl_dist::message::Message;
use erl_dist::term::PidOrAtom;
use parking_lot::Mutex;

use super::node::DistNode;
use super::remote::{bt_peer, call, call_dest, raise, SERVICE_TIMEOUT};
use super::state::CallDest;
use super::state::{node_err, stopped, Once};
use super::terms::{atom, frame};
use crate::interp::actor::await_external;
use crate::interp::distribution::{Dest, ErlProc, NodeError};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::runtime::Timeout;
use crate::value::{Sym, Value};

/// Runs `op` against Erlang node `node` from the process `ctx` runs in.
pub(crate) fn run(d: &DistNode, ctx: &mut Ctx, node: Sym, op: ErlProc) -> EvalResult {
    match op {
        ErlProc::Whereis(name) => {
            match rpc(
                d,
                ctx,
                node,
                "whereis",
                Term::from(Atom::from(name.as_str())),
            )? {
                Term::Pid(p) => Ok(pid_value(ctx, node, &p)),
                Term::Atom(a) if a.name == "undefined" => Ok(Value::Nil),
                other => Err(unexpected(ctx, node, &other)),
            }
        }
        ErlProc::Registered => {
            let t = rpc_n(d, ctx, node, "registered", Vec::new())?;
            crate::codec::etf::from_term(ctx, &t, "result").map_err(|e| e.to_unwind(ctx))
        }
        ErlProc::Alive(dest) => alive(d, ctx, node, dest).map(Value::bool),
        ErlProc::Signal(dest, reason) => {
            let reason =
                crate::codec::etf::to_term(ctx, &reason, "reason").map_err(|e| e.to_unwind(ctx))?;
            let was = alive(d, ctx, node, dest)?;
            let pid = pid_of(d, node, dest);
            let from = super::terms::my_pid(&d.inner, ctx.pid);
            let m = Message::exit2(from, pid, reason);
            d.inner.send_to(node.as_str(), frame(m));
            Ok(Value::bool(was))
        }
        ErlProc::Stop {
            dest,
            kill,
            timeout,
        } => {
            // Connected first: the pid needs the peer's creation.
            bt_peer(d, ctx, node)?;
            let pid = pid_of(d, node, dest);
            stop(d, ctx, node, pid, kill, timeout).map(Value::bool)
        }
        ErlProc::Apply {
            module,
            function,
            args,
        } => {
            let mut terms = Vec::with_capacity(args.len());
            for a in &args {
                terms.push(
                    crate::codec::etf::to_term(ctx, a, "argument").map_err(|e| e.to_unwind(ctx))?,
                );
            }
            // No time limit, as `rpc:call/4`: the call ends with its answer, or NodeDown
            // when the connection to the peer is lost.
            let t = rex_call(
                d,
                ctx,
                node,
                module.as_str(),
                function.as_str(),
                terms,
                None,
            )?;
            crate::codec::etf::from_term(ctx, &t, "result").map_err(|e| e.to_unwind(ctx))
        }
    }
}

/// `Module:Fun(Args…)` on `node` through its `rex` server (the request `rpc:call/4`
/// sends): the reply term as it came (`{badrpc, Reason}` when the call failed).
fn rex_call(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    module: &str,
    fun: &str,
    args: Vec<Term>,
    timeout: Option<Duration>,
) -> Result<Term, Unwind> {
    let request = Term::from(Tuple::from(vec![
        atom("call"),
        atom(module),
        atom(fun),
        crate::codec::etf::list(args),
        atom("user"),
    ]));
    let rex = Dest::Name(Sym::new("rex"));
    let r = call(d, ctx, node, rex, request, timeout, None)?;
    let reply = r.map_err(|e| raise(ctx, e))?;
    Ok(reply.term)
}

/// `erlang:Fun(Arg)` on `node` through its `rex` server.
fn rpc(d: &DistNode, ctx: &mut Ctx, node: Sym, fun: &str, arg: Term) -> Result<Term, Unwind> {
    rpc_n(d, ctx, node, fun, vec![arg])
}

/// `erlang:Fun(Args…)` on `node` through its `rex` server (`rpc:call/4`'s request).
fn rpc_n(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    fun: &str,
    args: Vec<Term>,
) -> Result<Term, Unwind> {
    let arity = args.len();
    let term = rex_call(d, ctx, node, "erlang", fun, args, Some(SERVICE_TIMEOUT))?;
    if let Term::Tuple(t) = &term {
        if let [Term::Atom(a), why] = &t.elements[..] {
            if a.name == "badrpc" {
                let msg = format!("erlang:{fun}/{arity} on {node} failed: {why}");
                return Err(ctx.err(ErrorKind::RuntimeError, msg));
            }
        }
    }
    Ok(term)
}

fn alive(d: &DistNode, ctx: &mut Ctx, node: Sym, dest: Dest) -> Result<bool, Unwind> {
    let (fun, arg) = match dest {
        Dest::Name(n) => ("whereis", Term::from(Atom::from(n.as_str()))),
        Dest::Pid { .. } => {
            // Connected first: the pid needs the peer's creation.
            bt_peer(d, ctx, node)?;
            ("is_process_alive", Term::from(pid_of(d, node, dest)))
        }
    };
    Ok(match rpc(d, ctx, node, fun, arg)? {
        Term::Pid(_) => true,
        Term::Atom(a) => a.name == "true",
        _ => false,
    })
}

fn pid_of(d: &DistNode, node: Sym, dest: Dest) -> Pid {
    match call_dest(&d.inner, node.as_str(), dest) {
        CallDest::Pid(p) => p,
        // Names are resolved by the caller first (`whereis`); not reached.
        CallDest::Name(_) => super::terms::peer_pid(node.as_str(), 0, 0),
    }
}

/// A Pid value for Erlang pid `p` of `node`.
fn pid_value(ctx: &Ctx, node: Sym, p: &Pid) -> Value {
    let number = (p.id as u64) | ((p.serial as u64) << 32);
    crate::interp::actor::prims::node::remote::remote_pid(ctx, node, number, p.creation)
}

fn unexpected(ctx: &Ctx, node: Sym, t: &Term) -> Unwind {
    ctx.err(
        ErrorKind::RuntimeError,
        format!("unexpected answer from {node}: {t}"),
    )
}

/// The waiting caller of [`stop`]: answered once, by the monitor or the timer.
type Slot = Arc<Mutex<Option<Once<Result<bool, NodeError>>>>>;

fn answer(slot: &Slot, r: Result<bool, NodeError>) -> bool {
    let once = slot.lock().take();
    match once {
        Some(o) => {
            o.call(r);
            true
        }
        None => false,
    }
}

/// Monitors `pid`, sends it an exit signal (`kill`, or `shutdown` then `kill` after
/// `timeout`) and answers once it has exited: whether it was alive.
fn stop(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    pid: Pid,
    kill: bool,
    timeout: Timeout,
) -> Result<bool, Unwind> {
    let from = ctx.pid;
    let inner = d.inner.clone();
    let to = node.as_str().to_string();
    let label = format!("<{}.{}> on {node}", pid.id, pid.serial);
    let r = await_external(ctx, "the distribution layer", move |done| {
        let slot: Slot = Arc::new(Mutex::new(Some(Once::new(done, Err(stopped(&to))))));
        let s2 = slot.clone();
        let peer = to.clone();
        let down: Box<dyn FnOnce(Term) + Send> = Box::new(move |reason| {
            let r = match &reason {
                Term::Atom(a) if a.name == "noproc" => Ok(false),
                Term::Atom(a) if a.name == "noconnection" => Err(node_err(
                    "node_down",
                    format!("the connection to {peer} was lost"),
                    None,
                )),
                _ => Ok(true),
            };
            answer(&s2, r);
        });
        let watch = super::watch::watch(&inner, from, &to, PidOrAtom::Pid(pid.clone()), down);
        let me = super::terms::my_pid(&inner, from);
        let signal = |why: &str| frame(Message::exit2(me.clone(), pid.clone(), atom(why)));
        inner.send_to(&to, signal(if kill { "kill" } else { "shutdown" }));
        let Timeout::Ms(ms) = timeout else { return };
        let t = Duration::from_millis(ms);
        let i2 = inner.clone();
        let kill_after = (!kill).then(|| signal("kill"));
        d.spawn(async move {
            super::net::sleep(t).await;
            if slot.lock().is_none() {
                return;
            }
            if let Some(k) = kill_after {
                // Still running after `shutdown` (it traps exits): as a supervisor does.
                i2.send_to(&to, k);
                super::net::sleep(t).await;
            }
            let e = node_err(
                "timeout",
                format!("{label} did not exit within {ms} ms"),
                Some("Check later with isAlive: the node may be overloaded"),
            );
            if answer(&slot, Err(e)) {
                super::watch::unwatch(&i2, watch);
            }
        });
    })?;
    r.map_err(|e| raise(ctx, e))
}
