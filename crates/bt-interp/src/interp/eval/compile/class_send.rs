//! Sends to a class named in the source whose method is a primitive (`Host inc: s`, an
//! embedder's host function; `Float pi`, `Dictionary new`).
//!
//! The general path evaluates the class name to a counted `Value::Class` (an `Arc` clone and
//! drop per send), pushes the arguments on the context's stack, probes the site's inline cache
//! and goes through `dispatch_at`/`finish_send`/`call_hit` to the primitive. Such a site
//! instead keeps one entry — the receiver as a `Value`, the primitive and the name of its
//! defining class — valid for one program epoch (every change of the class table or of a
//! method table bumps the epoch, so an entry of the current epoch is what the name and the
//! lookup would answer). A hit evaluates the arguments into a local array and calls the
//! primitive with the entry's receiver borrowed: no reference count, no stack traffic.
//! Anything else (a compiled method, an accessor, a name that is not a class, an epoch
//! change while the arguments ran) takes the general path, which also fills the entry.
//!
//! A host function's site keeps the function itself (no lookup in the context's
//! `interp::host_cache` per call); a registration changes the epoch like any method change.
//!
//! Entries are published and retired like the inline caches' (`eval::hit`): a replaced
//! entry goes to the program's graveyard, since another process may still be reading it.

// unsafe: the site's entry is read through a raw pointer (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::op::{op, Op};
use super::operand::{send_general, Arg};
use crate::interp::eval::code::Loc;
use crate::interp::eval::exec::drop_fast;
use crate::interp::eval::hit::{HitKind, InlineCache};
use crate::interp::eval::{Ctx, Flow};
use crate::interp::registry::{Cost, Prim};
use crate::value::{Sym, Value};

/// Refills after which a site stops caching (each refill retires an entry until the program
/// ends): a name whose class or method keeps changing takes the general path.
const MAX_FILLS: u32 = 8;

struct Entry {
    epoch: u64,
    /// The class the name resolved to, as the receiver.
    recv: Value,
    /// What the send runs: the primitive, or (`Point x: 1 y: 2`) the class's keyword
    /// constructor over all its fields.
    target: Target,
}

enum Target {
    Prim(PrimEntry),
    /// The Value-class constructor: the arguments become the new instance's fields.
    Ctor,
}

struct PrimEntry {
    prim: Prim,
    /// The name of the class defining the primitive (`Ctx::cur_cls` while it runs).
    defc: Sym,
    /// When the primitive is the host trampoline (`interp::host_cache::call`): the host
    /// function it would find for `defc` and the selector, called directly.
    host: Option<crate::interp::program::HostFn>,
}

/// The site's cache (see the module doc).
struct Site {
    entry: AtomicPtr<Entry>,
    fills: AtomicU32,
}

impl Site {
    #[inline(always)]
    fn get(&self, epoch: u64) -> Option<&Entry> {
        let p = self.entry.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null entries were published by `fill` from `Box::into_raw` and are never
        // freed while the program that owns this site's code lives (replaced ones are retired
        // into its graveyard); the caller's context holds that program.
        let e = unsafe { &*p };
        (e.epoch == epoch).then_some(e)
    }

    /// Whether the site still takes entries (it stops after [`MAX_FILLS`]).
    #[inline(always)]
    fn open(&self) -> bool {
        self.fills.load(Ordering::Relaxed) < MAX_FILLS
    }

    fn fill(&self, prog: &crate::interp::program::Program, e: Entry) {
        if self.fills.fetch_add(1, Ordering::Relaxed) >= MAX_FILLS {
            return;
        }
        let new = Box::into_raw(Box::new(e));
        let old = self.entry.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: `old` came from `Box::into_raw` and is no longer reachable from this
            // site; readers that loaded it earlier may still use it, so it is retired.
            let b = unsafe { Box::from_raw(old) };
            prog.retire(crate::interp::program::Retired::Other(b));
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let p = *self.entry.get_mut();
        if !p.is_null() {
            // SAFETY: the code owning this site is being dropped, so no reader holds the
            // current entry; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// `Name sel: args` (at most two arguments): `recv` is the compiled class name.
pub(super) fn compile(recv: Op, sel: Sym, args: Vec<Arg>, loc: Loc) -> Op {
    let site = Site {
        entry: AtomicPtr::new(std::ptr::null_mut()),
        fills: AtomicU32::new(0),
    };
    let ic = InlineCache::default();
    op(move |c, f| {
        let epoch = c.prog.epoch.load(Ordering::Acquire);
        if let Some(e) = site.get(epoch) {
            if let Target::Ctor = e.target {
                return construct(c, e, epoch, sel, loc, f, &args);
            }
            match args.as_slice() {
                [] => return call(c, e, epoch, sel, loc, &[]),
                [a] => {
                    let a = a.run(c, f)?;
                    let r = call(c, e, epoch, sel, loc, std::slice::from_ref(&a));
                    drop_fast(a);
                    return r;
                }
                [a, b] => {
                    let a = a.run(c, f)?;
                    let b = match b.run(c, f) {
                        Ok(b) => b,
                        Err(x) => {
                            drop_fast(a);
                            return Err(x);
                        }
                    };
                    let v = [a, b];
                    let r = call(c, e, epoch, sel, loc, &v);
                    let [a, b] = v;
                    drop_fast(a);
                    drop_fast(b);
                    return r;
                }
                _ => {}
            }
        }
        // The general path (as `compile_send`'s), filling the site on the way.
        let rv = recv.run(c, f)?;
        if matches!(rv, Value::Class(_)) && args.len() <= 2 && site.open() {
            if let Some(h) = c.lookup(&rv, sel) {
                if let (HitKind::Constructor, Value::Class(k)) = (h.kind, &rv) {
                    if sel == k.ctor_sel && args.len() == k.field_names.len() && !k.is_abstract {
                        let e = Entry {
                            epoch,
                            recv: rv.clone(),
                            target: Target::Ctor,
                        };
                        site.fill(&c.prog, e);
                    }
                }
                if let HitKind::Prim(p) = h.kind {
                    if usize::from(h.nargs) == args.len() {
                        let defc = h.class().name;
                        let host = if crate::interp::host_cache::is_host_call(p.f) {
                            c.prog.host_fns.read().get(&(defc, sel)).cloned()
                        } else {
                            None
                        };
                        let e = Entry {
                            epoch,
                            recv: rv.clone(),
                            target: Target::Prim(PrimEntry {
                                prim: p,
                                defc,
                                host,
                            }),
                        };
                        site.fill(&c.prog, e);
                    }
                }
            }
        }
        send_general(c, f, &ic, &rv, sel, &args, loc)
    })
}

/// `Point x: a y: b` from a filled site: the arguments evaluated in order become the fields
/// of the new instance (as `Ctx::dispatch_at` builds it for a `Constructor` hit, without the
/// stack, the lookup or a count on the class for the receiver); a program change while the
/// arguments ran sends the message the general way.
#[inline(always)]
fn construct(
    c: &mut Ctx,
    e: &Entry,
    epoch: u64,
    sel: Sym,
    loc: Loc,
    f: &crate::interp::eval::Frame,
    args: &[Arg],
) -> Flow {
    let mut fields = crate::value::Fields::new();
    for a in args {
        fields.push(a.run(c, f)?);
    }
    if c.prog.epoch.load(Ordering::Acquire) != epoch {
        c.set_loc(loc);
        return c.send(&e.recv, sel, &fields).map_err(Box::new);
    }
    c.tick()?;
    let Value::Class(k) = &e.recv else {
        return Ok(Value::Nil);
    };
    Ok(Value::Object(std::sync::Arc::new(crate::value::Instance {
        class: k.clone(),
        fields,
    })))
}

/// The primitive of entry `e` on its receiver (as `Ctx::call_hit` runs a primitive); a
/// program change while the arguments ran sends the message the general way.
#[inline(always)]
fn call(c: &mut Ctx, e: &Entry, epoch: u64, sel: Sym, loc: Loc, args: &[Value]) -> Flow {
    let Target::Prim(p) = &e.target else {
        return Ok(Value::Nil);
    };
    if c.prog.epoch.load(Ordering::Acquire) != epoch {
        c.set_loc(loc);
        return c.send(&e.recv, sel, args).map_err(Box::new);
    }
    c.tick()?;
    c.set_loc(loc);
    // As `Ctx::call_hit`: the outer selector and class come back when the primitive returns.
    let outer = (c.cur_sel, c.cur_cls);
    c.cur_sel = sel;
    c.cur_cls = p.defc;
    let r = if p.prim.cost != Cost::Free {
        p.prim.cost.charge(c, &e.recv, args)
    } else {
        Ok(())
    }
    .and_then(|()| match &p.host {
        Some(h) => h(c, &e.recv, args),
        None => (p.prim.f)(c, &e.recv, args),
    });
    (c.cur_sel, c.cur_cls) = outer;
    r.map_err(Box::new)
}
