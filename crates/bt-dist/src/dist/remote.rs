//! The calling side of remote actors: sync sends, casts,
//! node-service requests and monitors from a bt process to processes on another node.
//!
//! A send encodes its arguments first (so `not_serialisable`, with its path, is raised
//! before anything leaves), then suspends only the calling process while
//! [`super::conn::call`] waits for the reply on the node's network runtime. Replies from a
//! bt peer are `{ok, Value}`, `{error, Exception}` or `{exit, Reason}`; from an Erlang peer
//! the reply term itself is the value. Failures: `node_down` (cannot connect, or the link
//! dropped while waiting — pending calls fail at once), `actor_dead` (the process is not
//! running or exited before answering), `no_such_process` (no such registered name),
//! `timeout` (with the hint to use `withTimeout:`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use eetf::{Atom, Term, Tuple};
use erl_dist::term::PidOrAtom;

use super::conn;
use super::node::DistNode;
use super::state::CallDest;
use super::state::{stopped, Inner, Once};
use super::terms::peer_pid;
use crate::codec::etf;
use crate::interp::actor::{await_external, Done};
use crate::interp::distribution::{CallReply, Dest, NodeError};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::prims::parallel::{spawn_job, Outcome};
use crate::runtime::Timeout;
use crate::value::{Sym, Value};

pub use super::terms::SERVICE;
/// How long a node-service request may take (a remote spawn runs `initialize` there).
pub const SERVICE_TIMEOUT: Duration = Duration::from_millis(5000);

pub(crate) fn raise(ctx: &Ctx, e: NodeError) -> Unwind {
    match e.hint {
        Some(h) => ctx.err_hint(ErrorKind::from_name(e.kind), e.message, &h),
        None => ctx.err(ErrorKind::from_name(e.kind), e.message),
    }
}

/// `{Selector, [Args]}` (`{cast, Selector, [Args]}` for a cast), raising `not_serialisable`
/// with the argument's path when one cannot cross. To a bt peer (`bt`) it carries the class
/// table of the actors in the arguments (`codec::etf_classes`), which also asks for one in
/// the reply.
fn request(ctx: &Ctx, sel: Sym, args: &[Value], cast: bool, bt: bool) -> Result<Term, Unwind> {
    request_in(ctx, sel, args, cast, bt, Vec::new())
}

/// [`request`] carrying the waiting chain `chain` to a bt peer (`super::chain`).
fn request_in(
    ctx: &Ctx,
    sel: Sym,
    args: &[Value],
    cast: bool,
    bt: bool,
    chain: Vec<eetf::Pid>,
) -> Result<Term, Unwind> {
    let (targs, table) = crate::codec::etf_classes::collect(|| {
        let mut targs = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let root = super::peer::arg_root(i);
            targs.push(etf::to_term(ctx, a, &root)?);
        }
        Ok::<_, crate::codec::CodecError>(targs)
    });
    let targs = targs.map_err(|e| e.to_unwind(ctx))?;
    let mut parts = Vec::with_capacity(4);
    if cast {
        parts.push(etf::atom("cast"));
    }
    parts.push(Term::from(Atom::from(sel.as_str())));
    parts.push(etf::list(targs));
    if bt {
        parts.push(super::chain::attach(table, chain));
    }
    Ok(Term::from(Tuple::from(parts)))
}

/// Is `node` a connected bt peer? (No trip through the network runtime.)
fn connected_bt(d: &DistNode, node: Sym) -> bool {
    d.inner
        .state
        .lock()
        .peers
        .get(node.as_str())
        .is_some_and(|p| p.bt)
}

pub(super) fn call_dest(inner: &Inner, node: &str, dest: Dest) -> CallDest {
    match dest {
        Dest::Name(n) => CallDest::Name(n.as_str().to_string()),
        Dest::Pid { number, creation } => {
            let creation = match creation {
                0 => inner
                    .state
                    .lock()
                    .peers
                    .get(node)
                    .map(|p| p.creation)
                    .unwrap_or(0),
                c => c,
            };
            CallDest::Pid(peer_pid(node, number, creation))
        }
    }
}

/// A call of `request` to `dest` on `node` (connecting first), answering its reply.
pub(super) fn call(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    dest: Dest,
    request: Term,
    timeout: Option<Duration>,
    waiting: Option<Vec<eetf::Pid>>,
) -> Result<Result<CallReply, NodeError>, Unwind> {
    let from = ctx.pid;
    let to = node.as_str().to_string();
    let inner = d.inner.clone();
    await_external(ctx, "the distribution layer", move |done| {
        if inner.state.lock().peers.contains_key(&to) {
            // Connected: queue the request from this thread (sends stay in order with
            // casts and other calls of this process); only the timer is a task.
            let cd = call_dest(&inner, &to, dest);
            // Then poll briefly for the reply: one that comes in time resumes this
            // process without suspending it (no worker wake-up, `super::spin`).
            let got = Arc::new(AtomicBool::new(false));
            let g = got.clone();
            let done: Done<_> = Box::new(move |r| {
                done(r);
                g.store(true, Ordering::Release);
            });
            let done = Once::new(done, Err(stopped(&to)));
            if conn::start_call(&inner, from, &to, &cd, request, timeout, done, waiting) {
                // Reading the connection meanwhile: the reply is handled on this thread.
                let rs = inner.hub.reader(&inner, &to);
                super::spin::CALLERS.wait_for(&got, || {
                    if let Some(rs) = &rs {
                        rs.pump();
                    }
                });
            }
            return;
        }
        let done = Once::new(done, Err(stopped(&to)));
        d.spawn(async move {
            if let Err(e) = inner.ensure(&to).await {
                return done.call(Err(e));
            }
            // A pid needs the peer's creation, known once connected.
            let cd = call_dest(&inner, &to, dest);
            conn::call(inner, from, to, cd, request, timeout, done, waiting).await;
        });
    })
}

/// A sync send to `dest` on `node`: the reply's value, or its error raised here.
pub(crate) fn send(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    dest: Dest,
    sel: Sym,
    args: &[Value],
    timeout: Timeout,
) -> EvalResult {
    // Connected first (when not yet), so that a bt peer gets the class table and the
    // waiting chain from the first call on.
    let bt = bt_peer(d, ctx, node)?;
    // To a bt peer the chain travels with the request; to an Erlang peer it stays with the
    // pending call, for a call back from the callee (`super::erl_wait`).
    let mut chain = super::chain::outgoing(&d.inner, ctx);
    let waiting = (!bt).then(|| std::mem::take(&mut chain));
    if let Dest::Pid { number, creation } = dest {
        // The target waits on this process already (through other nodes): a cycle.
        if super::chain::holds(&chain, node, number) {
            let who = crate::interp::actor::prims::node::remote::remote_actor(
                ctx, node, number, creation, None,
            );
            use crate::interp::actor::prims::node::remote::RemoteActor;
            let who = crate::interp::actor::handle::downcast::<RemoteActor>(&who)
                .map(crate::value::NativeObj::print_string)
                .unwrap_or_default();
            return Err(ctx.err(
                ErrorKind::DeadlockDetected,
                super::chain::message(&who, sel.as_str()),
            ));
        }
    }
    let req = request_in(ctx, sel, args, false, bt, chain)?;
    // The live homes of the blocks sent, also inside collections and Value instances: a
    // `^` relayed from the callee returns there (the callee's node gives every block
    // of the request the call's relay home).
    let mut homes = Vec::new();
    for a in args {
        live_homes(ctx, a, 0, &mut homes);
    }
    homes.sort_unstable();
    homes.dedup();
    let t = match timeout {
        Timeout::Ms(ms) => Some(Duration::from_millis(ms)),
        Timeout::Infinity => None,
    };
    let r = call(d, ctx, node, dest, req, t, waiting)?;
    let reply = r.map_err(|mut e| {
        let who = match dest {
            Dest::Name(n) => format!("#{n} on {node}"),
            Dest::Pid { number, .. } => {
                let k = d.inner.state.lock().index_of(node.as_str());
                format!("<{k}.{number}.0> on {node}")
            }
        };
        match e.kind {
            "timeout" => {
                let ms = t.map(|t| t.as_millis()).unwrap_or(0);
                e.message = format!("{who} did not answer '{sel}' within {ms} ms");
            }
            "actor_dead" if e.message.ends_with("is not alive") => {
                e.message = format!("{who} is not alive");
            }
            _ => {}
        }
        raise(ctx, e)
    })?;
    if let Term::Tuple(t) = &reply.term {
        if let [Term::Atom(tag), v] = &t.elements[..] {
            if tag.name == "nlr" && reply.bt_peer {
                let value = etf::from_term(ctx, v, "result").map_err(|e| e.to_unwind(ctx))?;
                return match homes[..] {
                    [home] => Err(Unwind::Return { value, home }),
                    _ => Err(ctx.err(
                        ErrorKind::RuntimeError,
                        "non-local return from a method that has already returned",
                    )),
                };
            }
        }
    }
    decode_reply(ctx, node, &reply)
}

/// Collects the live homes of the blocks in `v` (as deep as the encoder goes).
fn live_homes(ctx: &Ctx, v: &Value, d: usize, out: &mut Vec<u64>) {
    if d > 64 {
        return;
    }
    let mut each = |x: &Value| live_homes(ctx, x, d + 1, out);
    match v {
        Value::Block(c) if c.home != u64::MAX && ctx.home_live(c.home) => out.push(c.home),
        Value::List(l) | Value::Queue(l) => l.iter().for_each(each),
        Value::Array(l) => l.iter().for_each(each),
        Value::Tuple(t) => t.iter().for_each(each),
        Value::Dict(m) => m.values().for_each(each),
        Value::Object(i) => i.fields.iter().for_each(&mut each),
        _ => {}
    }
}

/// A cast (`!`) to `dest` on `node`: encoded here, then fire and forget.
pub(crate) fn cast(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    dest: Dest,
    sel: Sym,
    args: &[Value],
) -> Result<(), Unwind> {
    let req = request(ctx, sel, args, true, connected_bt(d, node))?;
    let from = ctx.pid;
    let inner = d.inner.clone();
    let to = node.as_str().to_string();
    if inner.state.lock().peers.contains_key(&to) {
        // Connected: queued from this thread, in order with this process's other sends.
        let cd = call_dest(&inner, &to, dest);
        conn::cast(&inner, from, &to, &cd, req);
        return Ok(());
    }
    d.spawn(async move {
        if inner.ensure(&to).await.is_err() {
            return;
        }
        let cd = call_dest(&inner, &to, dest);
        conn::cast(&inner, from, &to, &cd, req);
    });
    Ok(())
}

/// Is `node` a bt peer? Connects first (`node_down` raised when it cannot).
pub(super) fn bt_peer(d: &DistNode, ctx: &mut Ctx, node: Sym) -> Result<bool, Unwind> {
    let inner = d.inner.clone();
    let to = node.as_str().to_string();
    if let Some(bt) = inner.state.lock().peers.get(&to).map(|p| p.bt) {
        return Ok(bt); // connected: no trip through the network runtime
    }
    let r = await_external(ctx, "the distribution layer", move |done| {
        let done = Once::new(done, Err(stopped(&to)));
        d.spawn(async move {
            let r = inner.ensure(&to).await;
            let bt = inner.state.lock().peers.get(&to).map(|p| p.bt);
            done.call(r.map(|_| bt.unwrap_or(false)));
        });
    })?;
    r.map_err(|e| raise(ctx, e))
}

/// A request to the node service of bt node `node`; `Ok(None)` if it is not a bt node.
pub(crate) fn service(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    op: &str,
    args: &[Value],
) -> Result<Option<Value>, Unwind> {
    if !bt_peer(d, ctx, node)? {
        return Ok(None);
    }
    let req = match request(ctx, Sym::new(op), args, false, false) {
        Ok(r) => r,
        Err(u) => return Err(spawn_state_error(ctx, op, args).unwrap_or(u)),
    };
    let dest = Dest::Name(Sym::new(SERVICE));
    let r = call(d, ctx, node, dest, req, Some(SERVICE_TIMEOUT), None)?;
    let reply = r.map_err(|e| {
        // The service itself is always registered: `no_such_process` cannot mean the name.
        raise(ctx, e)
    })?;
    decode_reply(ctx, node, &reply).map(Some)
}

/// The `not_serialisable` error of a remote spawn's `spawnWith:` values, at the path the
/// language gives them (`state.key`, not the service request's argument): the first state value that
/// cannot cross. None when the state is not what failed.
fn spawn_state_error(ctx: &Ctx, op: &str, args: &[Value]) -> Option<Unwind> {
    let Some(Value::Dict(d)) = args.get(1).filter(|_| op == "spawn") else {
        return None;
    };
    d.iter().find_map(|(k, v)| {
        let key = k.to_value();
        let name = match key.as_sym() {
            Some(s) => s.as_str().to_string(),
            None => crate::interp::print::simple_print(&key).unwrap_or_else(|| "...".to_string()),
        };
        etf::to_term(ctx, v, &format!("state.{name}"))
            .err()
            .map(|e| e.to_unwind(ctx))
    })
}

/// Monitors process `dest` on `node` (a pid, or a registered name there: an Erlang monitor
/// by name, `{Name, Node}`): `block` runs with the reason in a fresh process.
pub(crate) fn watch(
    d: &DistNode,
    ctx: &mut Ctx,
    node: Sym,
    dest: Dest,
    block: Value,
) -> Result<u64, Unwind> {
    let sys = crate::interp::actor::sys_of(ctx)?;
    let block = crate::interp::actor::send::transfer_in(ctx, &block);
    let from = ctx.pid;
    // Connects if needed; an unreachable node is a lost connection.
    let connected = bt_peer(d, ctx, node).is_ok();
    let down: Box<dyn FnOnce(Term) + Send> = Box::new(move |reason: Term| {
        let job = Box::new(move |ctx: &mut Ctx| {
            let v = etf::from_term(ctx, &reason, "reason").unwrap_or(Value::sym("error"));
            ctx.call_block(&block, &[v])
        });
        spawn_job(&sys, "monitor", job, |o| {
            if let Outcome::Err(e) = o {
                crate::base::log::warn(&format!(
                    "bt: error in a monitor callback: {}",
                    crate::interp::actor::send::describe_exception(&e)
                ));
            }
        });
    });
    if !connected {
        down(etf::atom("noconnection"));
        return Ok(0);
    }
    let to = match call_dest(&d.inner, node.as_str(), dest) {
        CallDest::Pid(p) => PidOrAtom::Pid(p),
        CallDest::Name(n) => PidOrAtom::Atom(Atom::from(n.as_str())),
    };
    Ok(super::watch::watch(&d.inner, from, node.as_str(), to, down))
}

/// A reply term as the caller's value or raised error.
pub(crate) fn decode_reply(ctx: &mut Ctx, node: Sym, reply: &CallReply) -> EvalResult {
    if !reply.bt_peer {
        return etf::from_term(ctx, &reply.term, "result").map_err(|e| e.to_unwind(ctx));
    }
    let unexpected = |ctx: &Ctx, t: &Term| {
        ctx.err(
            ErrorKind::RuntimeError,
            format!("unexpected reply from {node}: {t}"),
        )
    };
    let Term::Tuple(t) = &reply.term else {
        return Err(unexpected(ctx, &reply.term));
    };
    let (tag, body, pids) = match &t.elements[..] {
        [Term::Atom(tag), body] => (tag, body, Vec::new()),
        // A result with the class table of its actors (`codec::etf_classes`).
        [Term::Atom(tag), body, table] if tag.name == "ok" => {
            if let Some(d) = ctx.prog.dist.get() {
                crate::codec::etf_classes::remember(d.node_name().as_str(), table);
            }
            (tag, body, crate::codec::etf_classes::pids_of(table))
        }
        _ => return Err(unexpected(ctx, &reply.term)),
    };
    match tag.name.as_str() {
        "ok" => crate::codec::etf_classes::with_pids(pids, || etf::from_term(ctx, body, "result"))
            .map_err(|e| e.to_unwind(ctx)),
        "error" => {
            let exc = etf::from_term(ctx, body, "error").map_err(|e| e.to_unwind(ctx))?;
            if matches!(exc, Value::Object(_)) {
                return Err(Unwind::Error(exc));
            }
            // `#{kind => K, message => M}` from a node that could not build an exception.
            if let Value::Dict(m) = &exc {
                let kind = m.get(&Value::sym("kind")).and_then(|k| k.as_sym());
                let msg = match m.get(&Value::sym("message")) {
                    Some(Value::Str(s)) => s.to_string(),
                    _ => format!("{node} answered an error"),
                };
                if let Some(k) = kind {
                    return Err(ctx.err(ErrorKind::from_name(k.as_str()), msg));
                }
            }
            Err(ctx.err(
                ErrorKind::RuntimeError,
                format!("{node} answered an error: {}", reply.term),
            ))
        }
        "exit" => Err(ctx.err(
            ErrorKind::ActorDead,
            format!("the process on {node} exited while answering"),
        )),
        _ => Err(unexpected(ctx, &reply.term)),
    }
}
