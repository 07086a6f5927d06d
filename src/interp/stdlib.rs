//! The built-in library written in bt: `stdlib/*.bt`, embedded in the binary and loaded when a
//! [`Vm`](crate::interp::Vm) starts (after the Rust primitives are installed). Add a file here
//! to have it loaded; files load as one unit, so their order does not matter.

pub const FILES: &[(&str, &str)] = &[("Result.bt", include_str!("../../stdlib/Result.bt"))];
