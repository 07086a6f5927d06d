//! The evaluator. (Skeleton with the contract of NOTES.md — interp-core owns this file.)

use std::collections::HashMap;

use crate::interp::value::{ClassRef, Sym, Value};

pub type EvalResult = Result<Value, Unwind>;
pub type PrimFn = fn(&mut Ctx, &Value, &[Value]) -> EvalResult;

/// Non-local exits carried in `Err`: exceptions, `^` from a block, process termination.
pub enum Unwind {
    /// A raised exception (an `Instance` of an Exception class).
    Error(Value),
    /// `^ value` travelling to the activation `home`.
    Return { value: Value, home: u64 },
    /// The process is being killed / stopped.
    Exit(Value),
}

/// A block closure. (Fields owned by interp-core.)
pub struct Closure {}

/// A method in a method dictionary.
#[derive(Clone)]
pub enum Method {
    Prim(PrimFn),
}

/// Primitive tables: (class name, selector) → Rust function.
#[derive(Default)]
pub struct Prims {
    pub instance: HashMap<(&'static str, &'static str), PrimFn>,
    pub class_side: HashMap<(&'static str, &'static str), PrimFn>,
}

impl Prims {
    pub fn add(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.instance.insert((class, selector), f);
    }
    pub fn add_class(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.class_side.insert((class, selector), f);
    }
}

/// The evaluation context of one process. (Contract in NOTES.md; bodies by interp-core.)
pub struct Ctx {}

impl Ctx {
    pub fn send(&mut self, _recv: &Value, _sel: Sym, _args: &[Value]) -> EvalResult {
        todo!()
    }
    pub fn call_block(&mut self, _block: &Value, _args: &[Value]) -> EvalResult {
        todo!()
    }
    pub fn err(&self, _kind: &str, _msg: impl Into<String>) -> Unwind {
        todo!()
    }
    pub fn err_hint(
        &self,
        _kind: &str,
        _msg: impl Into<String>,
        _hint: impl Into<String>,
    ) -> Unwind {
        todo!()
    }
    pub fn arith_err(&self) -> Unwind {
        todo!()
    }
    pub fn type_err(&self, _msg: impl Into<String>) -> Unwind {
        todo!()
    }
    pub fn class_of(&self, _v: &Value) -> ClassRef {
        todo!()
    }
    pub fn class_named(&self, _name: &str) -> Option<ClassRef> {
        todo!()
    }
    pub fn print_string(&mut self, _v: &Value) -> Result<String, Unwind> {
        todo!()
    }
    pub fn display_string(&mut self, _v: &Value) -> Result<String, Unwind> {
        todo!()
    }
    pub fn tick(&mut self) -> Result<(), Unwind> {
        Ok(())
    }
}
