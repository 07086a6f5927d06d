//! The methods every Value class has without declaring them — field getters, `withX:`
//! copy-setters and the keyword constructor — and the classes derived from a class by adding
//! a field (TestCase `self.x :=`). Part of the program layer: it names only the program, the
//! class layer and the method type.

use std::collections::HashMap;
use std::sync::Arc;

use crate::interp::class::{Builtin, Class, ClassExt, ClassKind};
use crate::interp::eval::Method;
use crate::interp::program::Program;
use crate::value::{ClassRef, Sym};

impl Program {
    /// Getters, `withX:` setters and the keyword constructor of a Value class, for the
    /// fields it declares itself (inherited ones come from the superclass), unless the class
    /// defines the selector.
    pub fn install_value_accessors(&self, c: &ClassRef) {
        if c.kind != ClassKind::Value || c.field_names.is_empty() {
            return;
        }
        let inherited = c
            .superclass
            .as_ref()
            .map(|s| s.field_names.len())
            .unwrap_or(0);
        {
            let mut m = c.methods().write();
            for (i, f) in c.field_names.iter().enumerate().skip(inherited) {
                m.insert_if_absent(*f, Method::Getter(i as u32));
                m.insert_if_absent(setter_sym(*f), Method::Setter(i as u32));
            }
        }
        c.class_methods()
            .write()
            .insert_if_absent(constructor_sym(&c.field_names), Method::Constructor);
        self.bump();
    }

    /// The class derived from `base` that adds field `name` (TestCase `self.x :=`).
    pub fn derived_class(&self, base: &ClassRef, name: Sym) -> ClassRef {
        let key = (Arc::as_ptr(base) as usize, name);
        let mut d = self.derived.lock();
        if let Some(c) = d.get(&key) {
            return c.clone();
        }
        let c = Arc::new(Class::new(
            base.name,
            Some(base.clone()),
            base.kind,
            &[(name, None)],
            false,
            false,
            Builtin::None,
        ));
        self.install_value_accessors(&c);
        d.insert(key, c.clone());
        c
    }
}

type SymMemo<K> = parking_lot::RwLock<HashMap<K, Sym, foldhash::fast::RandomState>>;

/// `withX:` for field `x`, interned once per process (every program installs the library's
/// accessors).
fn setter_sym(field: Sym) -> Sym {
    static MEMO: std::sync::OnceLock<SymMemo<Sym>> = std::sync::OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(s) = memo.read().get(&field) {
        return *s;
    }
    let s = Sym::new(&Class::setter_name(field.as_str()));
    memo.write().insert(field, s);
    s
}

/// The keyword constructor `a:b:` over all fields, interned once per process per field list.
fn constructor_sym(fields: &[Sym]) -> Sym {
    static MEMO: std::sync::OnceLock<SymMemo<Vec<Sym>>> = std::sync::OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(s) = memo.read().get(fields) {
        return *s;
    }
    let ctor: String = fields.iter().map(|f| format!("{f}:")).collect();
    let s = Sym::new(&ctor);
    memo.write().insert(fields.to_vec(), s);
    s
}
