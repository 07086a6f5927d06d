//! `pid`, `isAlive`, `stop`, `kill` (and a Pid's `kill`/`exit:`) on processes of a plain
//! Erlang node — a name proxy `Actor named: #x on: erlNode`, or a pid an Erlang process
//! sent. A bt node answers these through its node service; an Erlang node has none, so
//! they become what an Erlang user writes (`crate::dist::erl_proc`): `erlang:whereis/1`
//! and `erlang:is_process_alive/1` through the node's `rex`, `exit(Pid, shutdown)` /
//! `exit(Pid, kill)` as distribution exit signals, answering once the process has exited;
//! `Actor allRegisteredOn: erlNode` is `erlang:registered()` there, as name proxies. What a
//! name proxy does with these is `peer.rs` (`name_op`).

use crate::interp::distribution::{Dest, ErlProc};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult};
use crate::runtime::Timeout;
use crate::value::{Sym, Value};

/// `Actor allRegisteredOn: erlNode`: a name proxy (`Actor named: #x on: erlNode`) for each
/// name `erlang:registered()` answers there, sorted by name.
pub fn registered(ctx: &mut Ctx, node: Sym) -> EvalResult {
    let names = erl(ctx, node, ErlProc::Registered)?;
    let mut names: Vec<Sym> = match &names {
        Value::List(l) => l.iter().filter_map(Value::as_sym).collect(),
        _ => Vec::new(),
    };
    names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let actor = ctx.prog.core.actor.name;
    let proxies = names
        .into_iter()
        .map(|n| crate::interp::actor::prims::node::handles::remote_name(ctx, node, n, actor))
        .collect::<Vec<_>>();
    Ok(Value::list(proxies))
}

/// Runs `op` on Erlang node `node`.
pub fn erl(ctx: &mut Ctx, node: Sym, op: ErlProc) -> EvalResult {
    match ctx.prog.dist.get().cloned() {
        Some(d) => d.erl_process(ctx, node, op),
        None => Err(ctx.err(ErrorKind::NodeDown, format!("cannot reach {node}"))),
    }
}

/// `isAlive` of a process on Erlang node `node` (false when the node cannot say).
pub fn alive(ctx: &mut Ctx, node: Sym, dest: Dest) -> EvalResult {
    match erl(ctx, node, ErlProc::Alive(dest)) {
        Err(crate::interp::eval::Unwind::Error(_)) => Ok(Value::False),
        r => r,
    }
}

/// An actor's `stop` (`kill` when `kill`) on a process of Erlang node `node`: `#ok` once
/// it has exited (also when it was not running: `stop` is idempotent).
pub fn stop(ctx: &mut Ctx, node: Sym, dest: Dest, kill: bool, timeout: Timeout) -> EvalResult {
    erl(
        ctx,
        node,
        ErlProc::Stop {
            dest,
            kill,
            timeout,
        },
    )
    .map(|_| Value::sym("ok"))
}
