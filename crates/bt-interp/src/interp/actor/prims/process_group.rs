//! `ProcessGroup`: named groups of actors, interoperable with Erlang's `pg` (default
//! scope). This node's memberships are kept in
//! [`Groups`](crate::interp::actor::groups::Groups) (one per actor system); the members on
//! other nodes are the distribution layer's (`crate::dist::pg`, reached through
//! `ProcessGroups::group_changed` / `group_remote_members` / `group_remote_which`), which
//! also tells the other nodes' `pg` scopes of every change here.
//!
//! As in `pg`: joining twice counts twice (and `leave:` removes one membership); a member
//! that dies leaves every group it was in; members of a node whose link drops are gone.
//! Decisions: `nextMember:` (round-robin over the members in a stable order: this node's by
//! process number, then the other nodes' by node and pid) beside `anyMember:` (random); a
//! process that is not an actor (the main script) may join too and is listed as an Actor
//! handle of its process.

use std::sync::Arc;

use crate::interp::actor::prims::actor::error_value;
use crate::interp::actor::send::handle_for;
use crate::interp::actor::{need_cx, sys_of, ActorSys};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::seq_arg;
use crate::value::{Sym, Value};

pub fn register(p: &mut Prims) {
    let c = "ProcessGroup";
    p.add_class(c, "join:", |ctx, _, a| join(ctx, &a[0]));
    p.add_class(c, "leave:", |ctx, _, a| leave(ctx, &a[0]));
    p.add_class(c, "members:", |ctx, _, a| {
        let g = group_arg(ctx, &a[0])?;
        Ok(Value::list(members(ctx, g)))
    });
    p.add_class(c, "localMembers:", |ctx, _, a| {
        let g = group_arg(ctx, &a[0])?;
        let sys = sys_of(ctx)?;
        let actor = ctx.prog.core.actor.clone();
        let v: Vec<Value> = sys
            .groups
            .local(g)
            .into_iter()
            .map(|p| handle_for(p, &actor))
            .collect();
        Ok(Value::list(v))
    });
    p.add_class(c, "which", |ctx, _, _| which(ctx));
    p.add_class(c, "anyMember:", |ctx, _, a| {
        let g = group_arg(ctx, &a[0])?;
        let all = members(ctx, g);
        if all.is_empty() {
            return Ok(empty(ctx, g));
        }
        let i = rand::Rng::gen_range(&mut rand::thread_rng(), 0..all.len());
        Ok(ctx.make_ok(all[i].clone()))
    });
    p.add_class(c, "nextMember:", |ctx, _, a| {
        let g = group_arg(ctx, &a[0])?;
        let all = members(ctx, g);
        if all.is_empty() {
            return Ok(empty(ctx, g));
        }
        let sys = sys_of(ctx)?;
        let i = {
            let mut st = sys.groups.inner.lock();
            let n = st.next.entry(g).or_insert(0);
            let i = *n % all.len();
            *n = i + 1;
            i
        };
        Ok(ctx.make_ok(all[i].clone()))
    });
    p.add_class(c, "cast:selector:withArguments:", |ctx, _, a| {
        let g = group_arg(ctx, &a[0])?;
        let sel = match &a[1] {
            Value::Symbol(s) => *s,
            _ => return Err(ctx.type_err("ProcessGroup cast: the selector must be a Symbol")),
        };
        let args = seq_arg(ctx, &a[2], "cast:selector:withArguments: arguments")?;
        let all = members(ctx, g);
        let n = all.len() as i64;
        for m in all {
            ctx.cast(&m, sel, &args)?;
        }
        Ok(Value::Int(n))
    });
}

fn empty(ctx: &mut Ctx, g: Sym) -> Value {
    let e = error_value(
        ctx,
        ErrorKind::NotFound,
        format!("group #{g} has no members"),
    );
    ctx.make_error(e)
}

fn group_arg(ctx: &Ctx, v: &Value) -> Result<Sym, Unwind> {
    match v {
        Value::Symbol(s) => Ok(*s),
        _ => Err(ctx.type_err("a process group is named by a Symbol")),
    }
}

/// Every member: this node's, then the other nodes'.
fn members(ctx: &mut Ctx, g: Sym) -> Vec<Value> {
    let Ok(sys) = sys_of(ctx) else {
        return Vec::new();
    };
    let actor = ctx.prog.core.actor.clone();
    let mut v: Vec<Value> = sys
        .groups
        .local(g)
        .into_iter()
        .map(|p| handle_for(p, &actor))
        .collect();
    if let Some(d) = ctx.prog.dist.get().cloned() {
        v.extend(d.group_remote_members(ctx, g));
    }
    v
}

fn which(ctx: &mut Ctx) -> EvalResult {
    let sys = sys_of(ctx)?;
    let mut names: Vec<Sym> = sys.groups.snapshot().into_iter().map(|(g, _)| g).collect();
    if let Some(d) = ctx.prog.dist.get().cloned() {
        names.extend(d.group_remote_which(ctx));
    }
    names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    names.dedup();
    Ok(Value::list(names.into_iter().map(Value::Symbol)))
}

fn join(ctx: &mut Ctx, g: &Value) -> EvalResult {
    let g = group_arg(ctx, g)?;
    let sys = sys_of(ctx)?;
    let me = need_cx(ctx)?.me().clone();
    let number = me.pid().number;
    let watch = {
        let mut st = sys.groups.inner.lock();
        st.members.entry(g).or_default().push(me.clone());
        st.watched.insert(number)
    };
    if watch {
        let weak = Arc::downgrade(&sys);
        sys.rt.on_exit(&me, move |_, _| {
            if let Some(sys) = weak.upgrade() {
                died(&sys, number);
            }
        });
    }
    if let Some(d) = ctx.prog.dist.get() {
        d.group_changed(g, number, 1, true);
    }
    Ok(Value::Nil)
}

fn leave(ctx: &mut Ctx, g: &Value) -> EvalResult {
    let g = group_arg(ctx, g)?;
    let sys = sys_of(ctx)?;
    let number = need_cx(ctx)?.pid().number;
    let left = {
        let mut st = sys.groups.inner.lock();
        let Some(ps) = st.members.get_mut(&g) else {
            return Ok(Value::False);
        };
        match ps.iter().position(|p| p.pid().number == number) {
            Some(i) => {
                ps.remove(i);
                if ps.is_empty() {
                    st.members.remove(&g);
                }
                true
            }
            None => false,
        }
    };
    if left {
        if let Some(d) = ctx.prog.dist.get() {
            d.group_changed(g, number, 1, false);
        }
    }
    Ok(Value::bool(left))
}

/// Process `number` exited: it leaves every group it was in.
fn died(sys: &ActorSys, number: u64) {
    let left: Vec<(Sym, usize)> = {
        let mut st = sys.groups.inner.lock();
        st.watched.remove(&number);
        let mut left = Vec::new();
        st.members.retain(|g, ps| {
            let before = ps.len();
            ps.retain(|p| p.pid().number != number);
            if ps.len() < before {
                left.push((*g, before - ps.len()));
            }
            !ps.is_empty()
        });
        left
    };
    if let Some(d) = sys.prog.dist.get() {
        for (g, n) in left {
            d.group_changed(g, number, n, false);
        }
    }
}
