//! The interpreter's side of block closures: `FnCode` is the code a values-layer
//! [`Closure`] carries (`value::block::Code`), and the accessors that read it back.
//!
//! `value::block::BlockCode` is an `unsafe` trait with exactly one implementor — this one —
//! which is what lets `Code::get` hand back `&FnCode` with a plain pointer cast on every block
//! call (docs/architecture.md, "Classes and blocks in the values layer"). Do not implement it
//! for anything else.

// unsafe: the one `unsafe impl` of `value::block::BlockCode` (its contract is stated there).
#![allow(unsafe_code)]

use std::sync::Arc;

use crate::interp::eval::code::FnCode;
use crate::value::block::{BlockCode, Closure, Code};

// SAFETY: `FnCode` is the only type in the crate that implements `BlockCode` (the trait's
// contract), so `Code::get::<FnCode>` always casts back to the type the code was made from.
unsafe impl BlockCode for FnCode {}

/// The code of a new closure.
#[inline]
pub fn code_of(code: &Arc<FnCode>) -> Code {
    Code::new(code.clone())
}

/// The interpreter's side of a values-layer [`Closure`]: its compiled code. Import it to call
/// these on a closure.
pub trait ClosureExt {
    /// The block's compiled code.
    fn fn_code(&self) -> &FnCode;

    /// The block's compiled code as a shared pointer.
    fn fn_code_arc(&self) -> Arc<FnCode>;

    /// Number of parameters (`Block/N`).
    fn arity(&self) -> usize;
}

impl ClosureExt for Closure {
    /// The block's compiled code.
    #[inline(always)]
    fn fn_code(&self) -> &FnCode {
        self.code.get::<FnCode>()
    }

    /// The block's compiled code as a shared pointer.
    fn fn_code_arc(&self) -> Arc<FnCode> {
        self.code.arc::<FnCode>()
    }

    /// Number of parameters (`Block/N`).
    fn arity(&self) -> usize {
        self.fn_code().nparams as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn a_closure_gives_back_its_code() {
        let code = Arc::new(FnCode {
            nparams: 2,
            ..FnCode::default()
        });
        let c = Closure {
            code: code_of(&code),
            recv: Value::Nil,
            upvals: Box::new([]),
            home: 0,
            mclass: None,
            mside: false,
            serial: 7,
        };
        assert!(std::ptr::eq(c.fn_code(), &*code));
        assert_eq!(c.arity(), 2);
        let again = c.fn_code_arc();
        assert!(Arc::ptr_eq(&again, &code));
        assert_eq!(Arc::strong_count(&code), 3);
        drop(c);
        drop(again);
        assert_eq!(Arc::strong_count(&code), 1);
    }
}
