//! Reads of a send site's inline cache that let a fast path skip the send: whether a
//! built-in class's selector is still its primitive (`a at: k` on a local Array), and
//! whether a unary send to an instance is a Value-class getter (`p x`). The sends themselves
//! are in `send`.

use std::sync::Arc;

use crate::interp::eval::hit::{HitKind, InlineCache};
use crate::interp::eval::Ctx;
use crate::value::{ClassRef, Sym, Value};

impl Ctx {
    /// Whether `sel` sent to an instance of the built-in class `cls` (a receiver the caller
    /// has already matched by kind) runs a primitive, through the site's inline cache. Fast
    /// paths use it to skip the send only when no user method overrides the primitive.
    #[inline(always)]
    pub(crate) fn builtin_prim_at(&self, ic: &InlineCache, cls: &ClassRef, sel: Sym) -> bool {
        let key = Arc::as_ptr(cls) as usize;
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        if let Some(h) = ic.get(key, epoch) {
            return h.is_prim();
        }
        match self.lookup_in(cls, false, sel) {
            Some((m, d)) => {
                let h = m.hit(&d, sel);
                ic.fill(&*self.prog, key, epoch, h, self.int_arith_plain());
                h.is_prim()
            }
            None => false,
        }
    }

    /// The field index when `recv` is an instance and the site's cache holds a Value-class
    /// getter for its class at the current epoch (the caller then reads the field after the
    /// send's reduction; anything else takes the cached send).
    #[inline(always)]
    pub(crate) fn cached_getter(&self, ic: &InlineCache, recv: &Value) -> Option<usize> {
        let Value::Object(i) = recv else {
            return None;
        };
        let key = Arc::as_ptr(&i.class) as usize;
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        match ic.get(key, epoch)?.kind {
            HitKind::Getter(k) => Some(k as usize),
            _ => None,
        }
    }
}
