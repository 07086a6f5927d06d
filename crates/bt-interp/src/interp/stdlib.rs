//! The built-in library written in bt: `stdlib/*.bt`, embedded in the binary and loaded when a
//! [`Interpreter`](crate::interp::Interpreter) starts (after the Rust primitives are installed). The file list
//! lives with the checker ([`crate::check::library`]), the lowest layer that reads it: the
//! checker learns every built-in class from these declarations.

pub use crate::check::library::STDLIB as FILES;
