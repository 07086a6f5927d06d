//! Method-cache hits without reference counting.
//!
//! A send is the evaluator's hottest path; cloning an `Arc` per send would cost two atomic
//! operations. A [`Hit`] instead holds plain pointers to the `CompiledMethod` and the defining
//! `Class`. They stay valid because a [`Program`](crate::interp::program::Program) never frees a
//! class or method it has installed before the Program itself is dropped: replaced or removed
//! ones are moved to its graveyard (`Program::retire`), and every `Ctx` holds an
//! `Arc<Program>`. This is the only `unsafe` in the evaluator.

// unsafe: method caches point at classes and methods uncounted (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Arc;

use crate::interp::eval::code::CompiledMethod;
use crate::value::class::Class;
use crate::value::ClassRef;

/// Where a replaced cache entry goes: kept alive until the program ends, since readers may
/// still hold it (`Program::retire`, which implements this).
pub(crate) trait Retire {
    /// Keeps `entry` alive for the life of the program.
    fn retire_entry(&self, entry: Box<dyn std::any::Any + Send + Sync>);
}

/// A method as cached: a copyable view of [`Method`](crate::interp::method_table::Method).
#[derive(Clone, Copy)]
pub(crate) enum HitKind {
    Prim(crate::interp::registry::Prim),
    Compiled(*const CompiledMethod),
    Getter(u32),
    Setter(u32),
    Constructor,
}

/// A looked-up method and the class that defines it.
#[derive(Clone, Copy)]
pub(crate) struct Hit {
    pub kind: HitKind,
    defc: *const Class,
    /// Arguments the selector takes (checked before a primitive runs).
    pub nargs: u8,
}

// SAFETY: a Hit only points at `CompiledMethod`s and `Class`es owned by a Program, which are
// `Send + Sync` and never freed while the Program lives (see the module doc); the pointers are
// only dereferenced by a Ctx that holds that Program.
unsafe impl Send for Hit {}
// SAFETY: as above; a Hit is an immutable pair of pointers to immutable-for-life data.
unsafe impl Sync for Hit {}

/// A send site's inline cache: the last (receiver class, method) pair seen there. Entries are
/// immutable and never freed while the program lives (replaced ones are retired), so a site
/// shared by several processes can be read without locks.
pub(crate) struct InlineCache {
    entry: AtomicPtr<IcEntry>,
    misses: AtomicU32,
}

pub(crate) struct IcEntry {
    key: usize,
    epoch: u64,
    hit: Hit,
    /// The method when the hit is a plain compiled method (`special` unset) whose parameter
    /// count is the selector's arity, else null: a send that pushed the selector's arguments
    /// runs it with no further test ([`IcEntry::plain`]).
    plain: *const CompiledMethod,
    /// Integer arithmetic was the built-in one when the entry was filled (read after the
    /// epoch the entry is valid for): no arithmetic override was installed up to that
    /// epoch, so a send that finds the entry valid may compute Integer operations and
    /// decide a guard inline with no further test ([`IcEntry::plain_int`]).
    int_arith: bool,
    /// What `Ctx::send_owned` learnt about the method at this site for this (key, epoch):
    /// 0 not yet asked, `i + 1` its tail `self withX: arg` stores field `i`, `u32::MAX` no
    /// such tail. The answer depends only on the site, the receiver's class and the epoch,
    /// so any process may record it; a relaxed atomic, since every writer stores the same.
    tail_field: AtomicU32,
}

impl IcEntry {
    /// The plain compiled method (a compiled method without `special` whose parameter count
    /// is the arity of the site's selector) and its defining class, if the hit is one: a
    /// send that pushed the selector's arguments runs it without looking at the hit.
    #[inline(always)]
    pub(crate) fn plain(&self) -> Option<(&CompiledMethod, &Class)> {
        if self.plain.is_null() {
            return None;
        }
        // SAFETY: `plain` is the hit's compiled method (non-null here), installed in or
        // retired into the Program like every method a hit points at (module doc); `&self`
        // is an entry that lives as long as that Program.
        Some((unsafe { &*self.plain }, self.hit.class()))
    }

    /// [`IcEntry::plain`] when Integer arithmetic was not overridden at the entry's epoch.
    #[inline(always)]
    pub(crate) fn plain_int(&self) -> Option<(&CompiledMethod, &Class)> {
        if !self.int_arith {
            return None;
        }
        self.plain()
    }

    /// The recorded tail-setter field (`Some(None)`: the method has none), or `None` when
    /// not recorded yet.
    #[inline(always)]
    pub(crate) fn tail_field(&self) -> Option<Option<usize>> {
        match self.tail_field.load(Ordering::Relaxed) {
            0 => None,
            u32::MAX => Some(None),
            i => Some(Some(i as usize - 1)),
        }
    }

    /// Records [`IcEntry::tail_field`].
    pub(crate) fn set_tail_field(&self, field: Option<usize>) {
        let v = match field {
            Some(i) if i < u32::MAX as usize - 1 => i as u32 + 1,
            _ => u32::MAX,
        };
        self.tail_field.store(v, Ordering::Relaxed);
    }

    /// The cached hit.
    #[inline(always)]
    pub(crate) fn hit(&self) -> Hit {
        self.hit
    }
}

// SAFETY: `plain` points, like the Hit's own pointers, at a `CompiledMethod` owned by the
// Program (`Send + Sync`, never freed while the Program lives); an entry is immutable once
// published.
unsafe impl Send for IcEntry {}
// SAFETY: as above.
unsafe impl Sync for IcEntry {}

/// After this many misses a site is megamorphic and stops caching (the per-process method
/// cache still serves it).
const MAX_MISSES: u32 = 8;

impl Default for InlineCache {
    fn default() -> Self {
        InlineCache {
            entry: AtomicPtr::new(std::ptr::null_mut()),
            misses: AtomicU32::new(0),
        }
    }
}

impl InlineCache {
    /// The cached hit for a receiver with dispatch key `key` at program epoch `epoch`.
    #[inline(always)]
    pub(crate) fn get(&self, key: usize, epoch: u64) -> Option<Hit> {
        let p = self.entry.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null entries were published by `fill` from `Box::into_raw` and are never
        // freed while the program (which owns the code holding this cache) lives: replaced ones
        // are retired into its graveyard.
        let e = unsafe { &*p };
        (e.key == key && e.epoch == epoch).then_some(e.hit)
    }

    /// The entry cached for dispatch key `key` at `epoch`, read once: the self-send fast path
    /// asks it for the plain method ([`IcEntry::plain`]) and falls back to its hit.
    #[inline(always)]
    pub(crate) fn entry(&self, key: usize, epoch: u64) -> Option<&IcEntry> {
        let p = self.entry.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: as in `get`: published by `fill`, never freed while the program (which owns
        // the code holding this cache, and so outlives `&self`) lives.
        let e = unsafe { &*p };
        (e.key == key && e.epoch == epoch).then_some(e)
    }

    /// Records a hit for later sends from this site. `int_arith`: Integer arithmetic is not
    /// overridden, read after `epoch` was (see [`IcEntry::plain_int`]).
    pub(crate) fn fill(
        &self,
        prog: &impl Retire,
        key: usize,
        epoch: u64,
        hit: Hit,
        int_arith: bool,
    ) {
        if self.misses.fetch_add(1, Ordering::Relaxed) >= MAX_MISSES {
            return;
        }
        let plain = match hit.compiled() {
            Some(cm) if !cm.code.special && cm.code.nparams == u32::from(hit.nargs) => {
                cm as *const CompiledMethod
            }
            _ => std::ptr::null(),
        };
        let new = Box::into_raw(Box::new(IcEntry {
            key,
            epoch,
            hit,
            plain,
            int_arith,
            tail_field: AtomicU32::new(0),
        }));
        let old = self.entry.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: `old` came from `Box::into_raw` and is no longer reachable from this cache;
            // readers that loaded it earlier may still use it, so it is kept alive (retired)
            // rather than freed.
            let b = unsafe { Box::from_raw(old) };
            prog.retire_entry(b);
        }
    }
}

impl Drop for InlineCache {
    fn drop(&mut self) {
        let p = *self.entry.get_mut();
        if !p.is_null() {
            // SAFETY: the code owning this cache is being dropped, so no reader can still hold
            // the current entry; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// A global-name site's cache (`Point` in `Point x: 1 y: 2`): the class the name resolved to
/// at a program epoch. Every change of the class table bumps the epoch, so a hit at the
/// current epoch is what the table lookup would answer. Entries are published and retired as
/// in [`InlineCache`].
#[derive(Default)]
pub(crate) struct GlobalCache {
    entry: AtomicPtr<GlobalEntry>,
}

struct GlobalEntry {
    epoch: u64,
    class: ClassRef,
}

impl GlobalCache {
    /// The cached class when it is valid at `epoch`.
    #[inline(always)]
    pub(crate) fn get(&self, epoch: u64) -> Option<&ClassRef> {
        let p = self.entry.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null entries were published by `fill` from `Box::into_raw` and are never
        // freed while the program that owns this site's code lives (replaced ones are retired).
        let e = unsafe { &*p };
        (e.epoch == epoch).then_some(&e.class)
    }

    /// Records that the name meant `class` at `epoch`.
    pub(crate) fn fill(&self, prog: &impl Retire, epoch: u64, class: ClassRef) {
        let new = Box::into_raw(Box::new(GlobalEntry { epoch, class }));
        let old = self.entry.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: as in `InlineCache::fill`: `old` came from `Box::into_raw`, readers may
            // still hold it, so it is retired rather than freed.
            let b = unsafe { Box::from_raw(old) };
            prog.retire_entry(b);
        }
    }
}

impl Drop for GlobalCache {
    fn drop(&mut self) {
        let p = *self.entry.get_mut();
        if !p.is_null() {
            // SAFETY: the code owning this cache is being dropped, so no reader holds the
            // current entry; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl Hit {
    /// A hit for a method of kind `kind` (`Method::hit`) defined in `defc`, sent as `sel`.
    pub(crate) fn new(kind: HitKind, defc: &ClassRef, sel: crate::value::Sym) -> Hit {
        let nargs = crate::interp::eval::code::sel_arity(sel.as_str()).min(255) as u8;
        Hit {
            kind,
            defc: Arc::as_ptr(defc),
            nargs,
        }
    }

    /// The defining class. The lifetime is unbounded: callers use it only while their context
    /// (and so the Program) is alive.
    pub(crate) fn class<'a>(&self) -> &'a Class {
        // SAFETY: `defc` came from `Arc::as_ptr` of a class the Program keeps alive for its
        // whole life (module doc); callers use the reference only during a send on a Ctx
        // holding that Program.
        unsafe { &*self.defc }
    }

    /// The compiled method, if this is one (same lifetime contract as [`Hit::class`]).
    pub(crate) fn compiled<'a>(&self) -> Option<&'a CompiledMethod> {
        match self.kind {
            // SAFETY: as for `class`: the method is installed in or retired into the Program.
            HitKind::Compiled(p) => Some(unsafe { &*p }),
            _ => None,
        }
    }

    pub(crate) fn is_prim(&self) -> bool {
        matches!(self.kind, HitKind::Prim(_))
    }
}

/// A counted reference to a class known by reference only (closures keep their defining
/// class alive).
pub(crate) fn class_arc(c: &Class) -> ClassRef {
    let p = c as *const Class;
    // SAFETY: every Class is allocated inside an `Arc` (classes are only created through
    // `Arc::new(Class::new(..))`) and `c` is alive, so the pointer is that Arc's and raising
    // its strong count before `from_raw` yields an independent owning reference.
    unsafe {
        Arc::increment_strong_count(p);
        Arc::from_raw(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::class::ClassExt;
    use crate::value::Sym;

    #[test]
    fn class_arc_shares_the_allocation() {
        let c: ClassRef = Arc::new(Class::new(
            Sym::new("HitTest"),
            None,
            crate::interp::class::ClassKind::Object,
            &[],
            false,
            false,
            crate::interp::class::Builtin::None,
        ));
        let r: &Class = &c;
        let again = class_arc(r);
        assert!(Arc::ptr_eq(&c, &again));
        assert_eq!(Arc::strong_count(&c), 2);
        drop(again);
        assert_eq!(Arc::strong_count(&c), 1);
    }

    #[test]
    fn hit_points_at_the_method() {
        let c: ClassRef = Arc::new(Class::new(
            Sym::new("HitTest2"),
            None,
            crate::interp::class::ClassKind::Object,
            &[],
            false,
            false,
            crate::interp::class::Builtin::None,
        ));
        let cm = Arc::new(CompiledMethod {
            selector: Sym::new("foo"),
            code: Arc::new(crate::interp::eval::FnCode::default()),
            class_side: false,
            source: String::new(),
            doc: None,
            sealed: false,
        });
        let h = crate::interp::eval::Method::Compiled(cm.clone()).hit(&c, Sym::new("foo"));
        assert!(std::ptr::eq(h.compiled().unwrap(), Arc::as_ptr(&cm)));
        assert!(std::ptr::eq(h.class(), Arc::as_ptr(&c)));
    }
}
