//! The interpreter: values, classes, the evaluator, primitives, printing and term order.
//!
//! `value` defines what a script can hold; `class` the class table; `eval` walks the AST;
//! `prims/*` bind Rust functions to stdlib selectors; `print` and `order` implement parts 10
//! and 5.12 of LANGUAGE.md.

pub mod class;
pub mod eval;
pub mod order;
pub mod prims;
pub mod print;
pub mod value;
pub mod vm;

pub use vm::{BtError, LoadReport, Vm, VmOptions};
