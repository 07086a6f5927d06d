//! A context's one-entry cache of the host function it called last (`engine::host`).
//!
//! Host functions live in `Program::host_fns` behind a lock, keyed by (class, selector);
//! looking one up per call cost a lock, a hash and an `Arc` clone and drop — four atomic
//! read-modify-writes per call. A [`Ctx`](crate::interp::eval::Ctx) keeps the function it
//! called last with the program epoch it was looked up at. Every registration installs a
//! method (`Program::set_method` bumps the epoch), so an entry of the current epoch is what the
//! table holds. A call moves the function out of the entry while it runs and back after it
//! (no reference counting), so a nested host call through the same context cannot drop a
//! running function. The entry itself ([`HostCache`](crate::interp::eval::HostCache)) is a
//! field of the context, so its type is declared in `eval.rs` beside the other caches of
//! `Ctx`; this file holds what reads and fills it.
//!
//! [`call`], the primitive every class-side host method is bound to, lives here too: a send
//! site naming a class (`Host inc: s`, `eval/compile/class_send.rs`) that finds this primitive
//! keeps the host function itself and calls it without this cache.

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, HostKey, Unwind};
use crate::interp::program::HostFn;
use crate::value::Value;

/// A host function's identity in a send: the defining class, the selector, and whether it
/// is an instance-side method (`engine::host_type`).
/// The primitive behind every class-side host method: the host function registered for the
/// defining class and selector of the send (`Program::host_fns`).
#[inline(never)]
pub fn call(ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let key = (ctx.cur_cls, ctx.cur_sel, false);
    call_cached(ctx, key, recv, args, |ctx, key| {
        let f = ctx.prog.host_fns.read().get(&(key.0, key.1)).cloned();
        f.ok_or_else(|| {
            ctx.err(
                ErrorKind::DoesNotUnderstand,
                format!("{} class does not understand '{}'", key.0, key.1),
            )
        })
    })
}

/// Is `f` the primitive [`call`]?
pub(crate) fn is_host_call(f: crate::interp::eval::PrimFn) -> bool {
    std::ptr::fn_addr_eq(f, call as crate::interp::eval::PrimFn)
}

/// Calls the host function of `key` (class, selector, instance side): the context's cached
/// one when it is of the current program epoch (no lock, hash or reference count per call),
/// else the one `find` looks up in `Program::host_fns`, which is then cached.
#[inline(always)]
pub fn call_cached(
    ctx: &mut Ctx,
    key: HostKey,
    recv: &Value,
    args: &[Value],
    find: impl FnOnce(&mut Ctx, HostKey) -> Result<HostFn, Unwind>,
) -> EvalResult {
    let epoch = ctx.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
    let f = match ctx.host_cache.take(epoch, key) {
        Some(f) => f,
        None => find(ctx, key)?,
    };
    let r = f(ctx, recv, args);
    // Back into the cache (a nested call through this context may have cached another).
    ctx.host_cache.put(epoch, key, f);
    r
}
