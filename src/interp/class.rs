//! Classes and metaclasses: the class table entries, method dictionaries, class-side state.
//! (Skeleton — interp-core owns this file and fills it in.)

use parking_lot::RwLock;
use std::collections::HashMap;

use crate::interp::eval::Method;
use crate::interp::value::{ClassRef, Sym, Value};

/// What kind of class this is (LANGUAGE.md 5.1): decided by ancestry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    Value,
    Actor,
    Object,
}

pub struct Class {
    pub name: Sym,
    pub superclass: Option<ClassRef>,
    pub kind: ClassKind,
    /// All field (Value) or state (Actor) slot names, inherited first.
    pub field_names: Vec<Sym>,
    pub methods: RwLock<HashMap<Sym, Method>>,
    pub class_methods: RwLock<HashMap<Sym, Method>>,
    pub class_state: parking_lot::Mutex<Vec<(Sym, Value)>>,
}
