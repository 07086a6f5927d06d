//! The primitive registry: every Rust function bound to a selector of a built-in class, keyed
//! by (class name, selector) on the instance or the class side.
//!
//! Each primitive module's `register(p)` adds its functions with [`Prims::add`] (instance
//! side) or [`Prims::add_class`]. A primitive must also be declared in `stdlib/*.bt` as
//! `selector => @primitive` on the same class and side — that declaration is what the checker
//! reads (`src/check/builtins.rs`); `prims::agreement_tests` fails when the two disagree.
//! Registering the same (class, side, selector) twice is an error: the second registration is
//! kept out and recorded in [`Prims::duplicates`], which a test requires to be empty.

use std::collections::HashMap;

use crate::interp::eval::PrimFn;

/// (class name, selector) → primitive.
pub type PrimTable = HashMap<(&'static str, &'static str), PrimFn>;

/// The primitive tables of a program.
#[derive(Default)]
pub struct Prims {
    pub instance: PrimTable,
    pub class_side: PrimTable,
    /// (class, selector, class side?) registered more than once (only the first is kept).
    pub duplicates: Vec<(&'static str, &'static str, bool)>,
}

impl Prims {
    /// Registers an instance-side primitive.
    pub fn add(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.insert(false, class, selector, f);
    }

    /// Registers a class-side primitive.
    pub fn add_class(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.insert(true, class, selector, f);
    }

    fn insert(&mut self, class_side: bool, class: &'static str, selector: &'static str, f: PrimFn) {
        let table = if class_side {
            &mut self.class_side
        } else {
            &mut self.instance
        };
        if table.contains_key(&(class, selector)) {
            self.duplicates.push((class, selector, class_side));
        } else {
            table.insert((class, selector), f);
        }
    }

    /// The primitive registered for a class, side and selector.
    pub fn get(&self, class: &str, class_side: bool, selector: &str) -> Option<PrimFn> {
        let table = if class_side {
            &self.class_side
        } else {
            &self.instance
        };
        table.get(&(class, selector)).copied()
    }
}
