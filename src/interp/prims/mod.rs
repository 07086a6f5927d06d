//! Primitive tables: Rust functions bound to stdlib selectors, one module per class family.
//! Each module exposes `pub fn register(p: &mut Prims)`. (interp-core owns this file.)

pub mod collections;
