//! What the checker knows about the built-in classes that is not a class protocol: the root
//! of the hierarchy and the kinds of the root classes. Every built-in class,
//! its superclass, modifiers, selectors and signatures come from the declarations of
//! `stdlib/*.bt` ([`super::library::STDLIB`]), which the interpreter loads over its primitives
//! — one declaration per built-in. A library class's declared selectors are its whole protocol
//! (a test in `interp::prims` keeps them in step with what the run time implements), so DNU
//! findings are given for them.

use super::classtable::{ClassInfo, ClassTable, Kind, Origin};

/// Classes whose kind is not inherited: the root of the hierarchy and the roots of the three
/// kinds. Every other class takes its kind from its chain; the stdlib gives each its
/// superclass.
pub(crate) const ROOT_KINDS: &[(&str, Kind)] = &[
    ("ProtoObject", Kind::Object),
    ("Object", Kind::Object),
    ("Value", Kind::Value),
    ("Actor", Kind::Actor),
];

impl ClassTable {
    /// The root classes alone (no selectors yet: the stdlib declares them).
    pub(crate) fn load_roots(&mut self) {
        for (name, kind) in ROOT_KINDS {
            let mut info = ClassInfo::new(name, Origin::Builtin);
            info.kind = Some(*kind);
            info.complete_inst = true;
            info.complete_class = true;
            self.classes.insert(name.to_string(), info);
        }
    }
}
