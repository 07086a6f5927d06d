//! Primitive tables: Rust functions bound to stdlib selectors, one module per class family.
//!
//! Each module exposes `pub fn register(p: &mut Prims)`; [`register_all`] calls them all.
//! (interp-core owns this file and may reshape it.)

use crate::interp::eval::Prims;

pub mod binary;
pub mod character;
pub mod codec;
pub mod collections;
pub mod fault;
pub mod float;
pub mod integer;
pub mod num;
pub mod number;
pub mod string;
pub mod string_regex;
pub mod symbol;
pub mod text;

/// Registers the primitives of numbers, Characters, Strings, Symbols and Binaries.
pub fn register_all(p: &mut Prims) {
    number::register(p);
    integer::register(p);
    float::register(p);
    character::register(p);
    string::register(p);
    string_regex::register(p);
    binary::register(p);
    symbol::register(p);
    collections::register(p);
}

#[cfg(test)]
mod stdlib_tests;
