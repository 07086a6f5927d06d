//! The interpreter of bt: classes, lowering, the evaluator, primitives, printing and the
//! `Interpreter` (docs/architecture.md, "Crates").

pub mod interp;

pub(crate) use bt_base::{diagnostic, memory};
pub(crate) use bt_check::check;
pub(crate) use bt_runtime::runtime;
pub(crate) use bt_syntax::syntax;
pub(crate) use bt_values::value;
