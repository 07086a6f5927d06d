//! Updates of a collection or String held in a local (`d := d at: k put: v`,
//! `s := s ++ a ++ b`): done in place when the local holds the only reference and the
//! selector is the primitive, else the ordinary send.

use crate::interp::eval::code::{Node, VarRef};
use crate::interp::eval::hit::InlineCache;
use crate::interp::eval::{Ctx, Flow, Frame};
use crate::value::{drop_fast, fast_clone, Value};

use super::op::{op, Op, Sub};
use super::operand::Arg;

/// `s := s ++ a ++ b …`: appends to the String in a local `s` in place when `s` holds the only
/// reference and String's `++` is the primitive; anything else takes the general path of
/// `Ctx::concat_in_place`. An operand `n printString` of a local holding an Integer is written
/// as digits straight into the String when Integer's `printString` is the primitive (no String
/// of its own made and dropped).
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
    let print_string = crate::value::Sym::new("printString");
    let pieces: Vec<Piece> = args
        .into_iter()
        .map(|n| match &n {
            Node::Send(s)
                if s.sel == print_string
                    && s.args.is_empty()
                    && matches!(s.recv, Node::Var(VarRef::Local(_))) =>
            {
                let Node::Var(VarRef::Local(i)) = s.recv else {
                    unreachable!("matched above")
                };
                Piece::IntPrint {
                    slot: i as usize,
                    sel: s.sel,
                    ic: InlineCache::default(),
                    send: Arg::new(n, sub),
                }
            }
            _ => Piece::Arg(Arg::new(n, sub)),
        })
        .collect();
    let rest = crate::interp::eval::code::InPlaceNode {
        var,
        sel,
        name,
        args: Vec::new(),
        loc,
    };
    let ic = InlineCache::default();
    op(move |c, f| {
        let mut parts: smallvec::SmallVec<[Part; 2]> = smallvec::SmallVec::new();
        for p in &pieces {
            parts.push(p.run(c, f)?);
        }
        if let VarRef::Local(i) = var {
            let slot = f.base + i as usize;
            if matches!(&c.stack[slot], Value::Str(_))
                && parts
                    .iter()
                    .all(|v| matches!(v, Part::Digits(_) | Part::Val(Value::Str(_))))
                && c.builtin_prim_at(&ic, &c.prog.core.string, sel)
            {
                c.tick()?;
                // The appended bytes (and a copy when shared) pay like `++`. Measured in
                // place: moving the String out of its slot and back ran the drop glue of
                // the `nil` left behind on every append.
                let acc = &c.stack[slot];
                let len = acc.as_str().map_or(0, str::len);
                let extra: usize = parts.iter().map(Part::len).sum();
                let copy = match acc {
                    Value::Str(s) if crate::value::Ref::strong_count(s) > 1 => len,
                    _ => 0,
                };
                c.charge_append_units(extra + copy, len)?;
                if let Value::Str(s) = &mut c.stack[slot] {
                    let m = crate::value::make_mut(s);
                    m.reserve(extra);
                    for p in &parts {
                        p.write(m);
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
        let vals = parts.into_iter().map(Part::into_value).collect();
        c.concat_in_place(&rest, f, recv, vals)
    })
}

/// An operand of an in-place append.
enum Piece {
    Arg(Arg),
    /// `n printString` of the local in `slot`.
    IntPrint {
        slot: usize,
        sel: crate::value::Sym,
        ic: InlineCache,
        send: Arg,
    },
}

/// An evaluated operand: a value, or the decimal digits of an Integer that stand for its
/// `printString`.
enum Part {
    Val(Value),
    Digits(Digits),
}

/// An `i64`'s decimal text, sign included, right-aligned in a buffer (ASCII only).
struct Digits {
    buf: [u8; 20],
    at: u8,
}

impl Digits {
    fn new(n: i64) -> Digits {
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut u = n.unsigned_abs();
        while u >= 100 {
            let k = (u % 100) as usize * 2;
            u /= 100;
            at -= 2;
            buf[at..at + 2].copy_from_slice(&PAIRS[k..k + 2]);
        }
        if u >= 10 {
            let k = u as usize * 2;
            at -= 2;
            buf[at..at + 2].copy_from_slice(&PAIRS[k..k + 2]);
        } else {
            at -= 1;
            buf[at] = b'0' + u as u8;
        }
        // i64::MIN has 19 digits: the sign always fits.
        if n < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        Digits { buf, at: at as u8 }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[usize::from(self.at)..]
    }
}

impl Piece {
    #[inline(always)]
    fn run(&self, c: &mut Ctx, f: &Frame) -> Result<Part, Box<crate::interp::eval::Unwind>> {
        match self {
            Piece::Arg(a) => a.run(c, f).map(Part::Val),
            Piece::IntPrint {
                slot,
                sel,
                ic,
                send,
            } => {
                if let Value::Int(n) = c.stack[f.base + slot] {
                    if c.builtin_prim_at(ic, &c.prog.core.integer, *sel) {
                        // The send it stands for would have counted a reduction.
                        c.tick()?;
                        return Ok(Part::Digits(Digits::new(n)));
                    }
                }
                send.run(c, f).map(Part::Val)
            }
        }
    }
}

impl Part {
    /// The bytes this operand appends.
    fn len(&self) -> usize {
        match self {
            Part::Val(v) => v.as_str().map_or(0, str::len),
            Part::Digits(d) => d.bytes().len(),
        }
    }

    fn write(&self, m: &mut String) {
        match self {
            Part::Val(v) => m.push_str(v.as_str().unwrap_or("")),
            Part::Digits(d) => m.extend(d.bytes().iter().map(|&b| char::from(b))),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Part::Val(v) => v,
            Part::Digits(d) => Value::str(String::from_utf8_lossy(d.bytes()).into_owned()),
        }
    }
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
