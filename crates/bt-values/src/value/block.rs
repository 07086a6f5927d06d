//! Block closures as the values layer sees them: the closure's data — captured receiver and
//! cells, home, serial — and its code pointer.
//!
//! `Value::Block` holds a [`Closure`] (defined with `Value` in `value.rs`, as it holds a
//! receiver `Value`; re-exported here with [`VarCell`], the captured-variable cell). Its
//! compiled code belongs to the interpreter, which this layer does not name: [`Closure::code`]
//! is a [`Code`] (this file), a shared pointer to a type that implements [`BlockCode`]. Exactly one type does (the interpreter's `FnCode`, in
//! `interp::block_code`), so [`Code::get`] turns the pointer back into that type with a plain
//! cast — no virtual call and no type test on a block call. Term order and hashing read only
//! `serial` and the closure's address.

// unsafe: `Code` keeps a plain pointer to the code it owns and casts it back (SAFETY comments).
#![allow(unsafe_code)]

use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

pub use crate::value::{Closure, VarCell};

/// The compiled code of a block, opaque to the values layer.
///
/// # Safety
///
/// At most one type in the crate implements this trait (the interpreter's `FnCode`):
/// [`Code::get`] casts the pointer of every [`Code`] to the type it is asked for, which is
/// only sound when that is the type the `Code` was made from.
pub unsafe trait BlockCode: Any + Send + Sync {}

/// A shared pointer to a block's code: the owning `Arc` (kept for its count) and the plain
/// address of its contents (read on every block call).
#[derive(Clone)]
pub struct Code {
    owner: Arc<dyn BlockCode>,
    ptr: NonNull<()>,
}

// SAFETY: `ptr` points into the allocation `owner` keeps alive, whose contents are
// `Send + Sync` (a `BlockCode` bound); the pointer is only read through `&self`.
unsafe impl Send for Code {}
// SAFETY: as above.
unsafe impl Sync for Code {}

impl Code {
    /// Code made from the interpreter's compiled code.
    #[inline]
    pub fn new<T: BlockCode>(code: Arc<T>) -> Code {
        let ptr = NonNull::from(&*code).cast::<()>();
        Code { owner: code, ptr }
    }

    /// The code as the one type that implements [`BlockCode`].
    #[inline(always)]
    pub fn get<T: BlockCode>(&self) -> &T {
        debug_assert!(
            (&*self.owner as &dyn Any).is::<T>(),
            "BlockCode has one implementor"
        );
        // SAFETY: `T: BlockCode`, and the trait's contract says at most one type implements
        // it, so `T` is the type `new` was called with; `ptr` is that value's address, kept
        // alive by `owner` for as long as `&self` lives.
        unsafe { self.ptr.cast::<T>().as_ref() }
    }

    /// The shared pointer as the one type that implements [`BlockCode`].
    pub fn arc<T: BlockCode>(&self) -> Arc<T> {
        let p: *const T = self.get::<T>();
        // SAFETY: `p` is the contents' address of the `Arc<T>` that `owner` was made from
        // (see `get`), which is alive; raising its strong count first makes the `Arc`
        // built by `from_raw` an independent owner.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    }

    /// The address of the code (identity: the same code answers the same address).
    #[inline]
    pub fn addr(&self) -> *const () {
        self.ptr.as_ptr()
    }
}
