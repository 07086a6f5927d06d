//! Updates of a collection or String held in a local (`d := d at: k put: v`,
//! `s := s ++ a ++ b`): done in place when the local holds the only reference and the
//! selector is the primitive, else the ordinary send.

use crate::interp::eval::code::VarRef;
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::{drop_fast, fast_clone, Value};

use super::op::{op, Op, Sub};
use super::operand::Arg;

/// `s := s ++ a ++ b …`: appends to the String in a local `s` in place when `s` holds the only
/// reference and String's `++` is the primitive; anything else takes the general path of
/// `Ctx::concat_in_place`.
pub(super) fn compile_concat(
    p: crate::interp::eval::code::InPlaceNode,
    keep: bool,
    sub: Sub,
) -> Op {
    let crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args,
        loc,
    } = p;
    let args: Vec<Arg> = args.into_iter().map(|n| Arg::new(n, sub)).collect();
    let rest = crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args: Vec::new(),
        loc,
    };
    let ic = InlineCache::default();
    op(move |c, f| {
        let mut vals: smallvec::SmallVec<[Value; 2]> = smallvec::SmallVec::new();
        for a in &args {
            vals.push(a.run(c, f)?);
        }
        if let VarRef::Local(i) = var {
            let slot = f.base + i as usize;
            if matches!(&c.stack[slot], Value::Str(_))
                && vals.iter().all(|v| matches!(v, Value::Str(_)))
                && c.builtin_prim_at(&ic, &c.prog.core.string, sel)
            {
                c.tick()?;
                // The appended bytes (and a copy when shared) pay like `++`. Measured in
                // place: moving the String out of its slot and back ran the drop glue of
                // the `nil` left behind on every append.
                let acc = &c.stack[slot];
                let units = crate::interp::eval::charge::append_units(acc, &vals);
                let len = acc.as_str().map_or(0, str::len);
                c.charge_append_units(units, len)?;
                if let Value::Str(s) = &mut c.stack[slot] {
                    let extra: usize = vals.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
                    let m = crate::value::make_mut(s);
                    m.reserve(extra);
                    for a in &vals {
                        m.push_str(a.as_str().unwrap_or(""));
                    }
                }
                return Ok(if keep {
                    c.stack[slot].clone()
                } else {
                    Value::Nil
                });
            }
        }
        c.set_loc(loc);
        let recv = c.take_var(f, var);
        c.concat_in_place(&rest, f, recv, vals.into_vec())
    })
}

/// `x := x add: e` and the other in-place selectors (see `Ctx::exec_in_place`).
pub(super) fn compile_in_place(
    p: crate::interp::eval::code::InPlaceNode,
    keep: bool,
    sub: Sub,
) -> Op {
    let crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args,
        loc,
    } = p;
    let nargs = crate::interp::eval::sel_arity(name);
    let ic = InlineCache::default();
    if let (VarRef::Local(i), "at:put:", 2) = (var, name, args.len()) {
        // `a := a at: k put: v` on a local Array: store into the slot's vector directly
        // (copied first only when shared); anything unusual takes the general path below.
        let mut args: Vec<Arg> = args.into_iter().map(|n| Arg::new(n, sub)).collect();
        let (Some(a1), Some(a0)) = (args.pop(), args.pop()) else {
            return Op::default();
        };
        let slow = in_place_rest(var, sel, nargs, loc, keep, ic);
        let ic = InlineCache::default();
        let i = i as usize;
        return op(move |c, f| {
            let k = a0.run(c, f)?;
            let v = a1.run(c, f)?;
            let slot = f.base + i;
            if matches!(&c.stack[slot], Value::Dict(_))
                && c.builtin_prim_at(&ic, &c.prog.core.dictionary, sel)
            {
                c.tick()?;
                if let Value::Dict(d) = &mut c.stack[slot] {
                    if let Some(old) = crate::value::dict::insert_shared(d, k, v) {
                        drop_fast(old);
                    }
                }
                return Ok(if keep {
                    c.stack[slot].clone()
                } else {
                    Value::Nil
                });
            }
            if let (Value::Int(ki), Value::Array(a)) = (&k, &c.stack[slot]) {
                let ki = *ki as usize;
                if ki >= 1 && ki <= a.len() && c.builtin_prim_at(&ic, &c.prog.core.array, sel) {
                    c.tick()?;
                    // An Integer: nothing to drop.
                    std::mem::forget(k);
                    if let Value::Array(a) = &mut c.stack[slot] {
                        crate::value::make_mut(a).set(ki - 1, v);
                    }
                    return Ok(if keep {
                        c.stack[slot].clone()
                    } else {
                        Value::Nil
                    });
                }
            }
            let base = c.stack.len();
            c.stack.push(k);
            c.stack.push(v);
            slow(c, f, base)
        });
    }
    if let VarRef::Local(i) = var {
        // The arguments as operand forms: a local or a literal is read inline, with no
        // dynamic call.
        let args: Vec<Arg> = args.into_iter().map(|n| Arg::new(n, sub)).collect();
        // An instance in a local (never one of the in-place collections): the receiver is
        // lent to the send as owned, so a Value-class `withX:` copy can reuse it.
        let i = i as usize;
        let ic2 = InlineCache::default();
        let list_ic = InlineCache::default();
        let list_add = name == "add:" && args.len() == 1;
        let rest = in_place_rest(var, sel, nargs, loc, keep, ic);
        return op(move |c, f| {
            let base = c.stack.len();
            for a in &args {
                let v = a.run(c, f)?;
                c.stack.push(v);
            }
            let slot = f.base + i;
            if list_add
                && matches!(&c.stack[slot], Value::List(_))
                && c.builtin_prim_at(&list_ic, &c.prog.core.list, sel)
            {
                // `l := l add: e` on a local List: append the argument itself (moved, no
                // lookup, no reference-count traffic); copied first only when shared.
                if let Err(e) = c.tick() {
                    c.stack.truncate(base);
                    return Err(e.into());
                }
                let v = c.stack.pop().unwrap_or(Value::Nil);
                if let Value::List(l) = &mut c.stack[slot] {
                    crate::value::make_mut(l).push_back(v);
                }
                return Ok(if keep {
                    c.stack[slot].clone()
                } else {
                    Value::Nil
                });
            }
            if !matches!(&c.stack[slot], Value::Object(_)) {
                return rest(c, f, base);
            }
            c.set_loc(loc);
            let mut recv = std::mem::replace(&mut c.stack[slot], Value::Nil);
            let r = c.send_owned(&ic2, &mut recv, sel, base);
            store_lent(c, slot, recv, r, keep)
        });
    }
    let args: Vec<Op> = args.into_iter().map(sub.expr).collect();
    let rest = in_place_rest(var, sel, nargs, loc, keep, ic);
    op(move |c, f| {
        let base = c.stack.len();
        for a in &args {
            let v = a.run(c, f)?;
            c.stack.push(v);
        }
        rest(c, f, base)
    })
}

/// Finishes `x := x sel …` whose receiver was lent out of local slot `slot`: the answer goes
/// into the slot (and is answered when `keep`), or on an error the receiver goes back.
#[inline(always)]
pub(super) fn store_lent(c: &mut Ctx, slot: usize, recv: Value, r: Flow, keep: bool) -> Flow {
    match r {
        Ok(v) => {
            drop_fast(recv);
            if keep {
                drop_fast(std::mem::replace(&mut c.stack[slot], fast_clone(&v)));
                Ok(v)
            } else {
                drop_fast(std::mem::replace(&mut c.stack[slot], v));
                Ok(Value::Nil)
            }
        }
        Err(e) => {
            c.stack[slot] = recv;
            Err(e)
        }
    }
}

pub(super) type RestFn = dyn Fn(&mut Ctx, &Frame, usize) -> Flow + Send + Sync;

/// The general in-place update once its arguments are at `stack[base..]`.
pub(super) fn in_place_rest(
    var: VarRef,
    sel: crate::value::Sym,
    nargs: usize,
    loc: crate::interp::eval::code::Loc,
    keep: bool,
    ic: InlineCache,
) -> Box<RestFn> {
    Box::new(move |c, f, base| {
        let nargs_given = c.stack.len() - base;
        c.set_loc(loc);
        let mut recv = c.take_var(f, var);
        if let Some(update) = (c.prog.prims.prims.hooks.in_place)(&recv, sel) {
            if nargs_given == nargs && c.lookup(&recv, sel).is_some_and(|h| h.is_prim()) {
                // The collection prim updates `recv` in place when nothing else shares it.
                let mut av = [Value::Nil, Value::Nil];
                for k in (0..nargs.min(2)).rev() {
                    av[k] = c.stack.pop().unwrap_or(Value::Nil);
                }
                let r = match c.tick() {
                    Ok(()) => update(c, &mut recv, &av[..nargs.min(2)]),
                    Err(e) => Err(e),
                };
                return match r {
                    Ok(v) => {
                        drop(recv);
                        if keep {
                            c.set_var(f, var, fast_clone(&v));
                            Ok(v)
                        } else {
                            c.set_var(f, var, v);
                            Ok(Value::Nil)
                        }
                    }
                    Err(e) => {
                        c.set_var(f, var, recv);
                        Err(Box::new(e))
                    }
                };
            }
        }
        if let VarRef::Local(i) = var {
            // Only this activation sees a local: lend it to the send.
            let r = c.send_cached(&ic, &recv, sel, base);
            store_lent(c, f.base + i as usize, recv, r, keep)
        } else {
            c.set_var(f, var, fast_clone(&recv));
            let v = c.send_cached(&ic, &recv, sel, base)?;
            c.set_var(f, var, fast_clone(&v));
            Ok(v)
        }
    })
}
