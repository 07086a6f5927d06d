//! The data of a class, as the values layer sees it: identity, name, kind, field names.
//!
//! `Value::Class`, `Value::Meta` and `Instance::class` hold a [`ClassRef`] to this struct.
//! Term order, printing of names and the runtime's process labels read only its data
//! fields. What the interpreter adds — method dictionaries, field-default code, typed slots —
//! lives in [`Class::rt`], a box this layer does not look into: `interp::class` defines that
//! part (`ClassRt`) and its accessors (`methods()`, `lookup` …) as inherent methods, and reads
//! it only on slow paths (method-table walks on a cache miss, instantiation with defaults,
//! reflection). Method caches point at a `Class` directly, so a cache hit never touches `rt`.
//! This is what keeps the values layer below the interpreter (docs/architecture.md, "The
//! value cycle").

use parking_lot::{Mutex, RwLock};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::value::{ClassRef, Sym, Value};

/// What kind of class this is: decided by ancestry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    Value,
    Actor,
    Object,
}

/// How instances of a built-in class are represented (decides `new`/`new:` policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// A class declared in bt (user or stdlib): instances are `Value::Object`.
    None,
    /// Built-in class whose instances are made by Rust code or library constructors only:
    /// `new`/`new:` raise `instantiation_error`.
    NoNew,
    /// Built-in class whose `new` is provided by a primitive (collections …) or is an ordinary
    /// Object/Value instance (Object, Value, Exception …).
    Plain,
    /// Abstract built-in (Number, Collection, Boolean …).
    Abstract,
}

/// A re-entrant, per-process class-state lock: owner process id and depth.
#[derive(Default)]
pub struct ClassLock {
    pub state: Mutex<(u64, u32)>,
}

/// A class: both sides of it (a class object is `Value::Class(c)`, its metaclass
/// `Value::Meta(c)`). Built by `interp::class` (`Class::new`), which fills [`Class::rt`].
pub struct Class {
    pub name: Sym,
    pub superclass: Option<ClassRef>,
    pub kind: ClassKind,
    /// All field (Value) or state (Actor) slot names, inherited first.
    pub field_names: Vec<Sym>,
    /// `classState:` variables declared by this class (name, current value).
    pub class_state: Mutex<Vec<(Sym, Value)>>,
    pub is_abstract: bool,
    pub sealed: bool,
    pub builtin: Builtin,
    /// True for TestCase and its descendants (self.x := rebinding).
    pub is_testcase: bool,
    pub doc: RwLock<Option<String>>,
    /// Docs of methods by selector (instance side, then class side with a `class ` prefix).
    pub method_docs: RwLock<HashMap<String, String>>,
    pub subclasses: RwLock<Vec<Weak<Class>>>,
    pub lock: ClassLock,
    /// Number of type parameters declared (`Result(T, E)` → 2); informative only.
    pub type_params: usize,
    /// `handleScope: #process | #node` declared by this class; such values, and those
    /// of subclasses, are rejected by the value codec.
    pub handle_scope: Option<Sym>,
    /// The keyword constructor over all fields (`x:y:`; `Sym::NONE` without fields): the
    /// evaluator builds such instances straight from the arguments.
    pub ctor_sel: Sym,
    /// The interpreter's part (method dictionaries, field defaults, typed slots): opaque
    /// here, read through `interp::class`'s accessors.
    pub rt: Box<dyn Any + Send + Sync>,
}

impl Class {
    /// A class from its data; `field_names` are complete (inherited first), `rt` is the
    /// interpreter's part. `is_testcase` is derived from the name and the superclass, and
    /// the all-fields constructor selector from the field names.
    #[allow(clippy::too_many_arguments)] // a constructor mirroring the declaration's parts
    pub fn from_parts(
        name: Sym,
        superclass: Option<ClassRef>,
        kind: ClassKind,
        field_names: Vec<Sym>,
        is_abstract: bool,
        sealed: bool,
        builtin: Builtin,
        rt: Box<dyn Any + Send + Sync>,
    ) -> Class {
        let is_testcase =
            name.as_str() == "TestCase" || superclass.as_ref().is_some_and(|s| s.is_testcase);
        let ctor_sel = if field_names.is_empty() {
            Sym::NONE
        } else {
            Sym::new(
                &field_names
                    .iter()
                    .map(|f| format!("{f}:"))
                    .collect::<String>(),
            )
        };
        Class {
            name,
            superclass,
            kind,
            field_names,
            class_state: Mutex::new(Vec::new()),
            is_abstract,
            sealed,
            builtin,
            is_testcase,
            doc: RwLock::new(None),
            method_docs: RwLock::new(HashMap::new()),
            subclasses: RwLock::new(Vec::new()),
            lock: ClassLock::default(),
            type_params: 0,
            handle_scope: None,
            ctor_sel,
            rt,
        }
    }

    /// Index of a field by name.
    pub fn field_index(&self, name: Sym) -> Option<usize> {
        self.field_names.iter().position(|f| *f == name)
    }

    /// The superclass chain starting with this class.
    pub fn chain(self: &ClassRef) -> Vec<ClassRef> {
        let mut out = vec![self.clone()];
        let mut c = self.superclass.clone();
        while let Some(k) = c {
            c = k.superclass.clone();
            out.push(k);
        }
        out
    }

    /// True when `self` is `other` or inherits from it.
    pub fn inherits_or_is(&self, other: &Class) -> bool {
        let mut c: Option<&Class> = Some(self);
        while let Some(k) = c {
            // By identity, or by name: a redefined class replaces the one its subclasses
            // and instances were made from.
            if std::ptr::eq(k, other) || k.name == other.name {
                return true;
            }
            c = k.superclass.as_deref();
        }
        false
    }

    /// Finds a class variable visible from this class (own first, then superclasses):
    /// the class that declares it.
    pub fn class_var_owner(self: &ClassRef, name: Sym) -> Option<ClassRef> {
        let mut c = Some(self);
        while let Some(k) = c {
            if k.class_state.lock().iter().any(|(n, _)| *n == name) {
                return Some(k.clone());
            }
            c = k.superclass.as_ref();
        }
        None
    }

    /// Live direct subclasses, sorted by name.
    pub fn live_subclasses(&self) -> Vec<ClassRef> {
        let mut v: Vec<ClassRef> = self
            .subclasses
            .read()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        v.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
        v.dedup_by(|a, b| Arc::ptr_eq(a, b));
        v
    }

    /// Selector-name of the `with`-setter for a field: `x` → `withX:`.
    pub fn setter_name(field: &str) -> String {
        let mut s = String::from("with");
        let mut cs = field.chars();
        if let Some(c) = cs.next() {
            s.extend(c.to_uppercase());
            s.push_str(cs.as_str());
        }
        s.push(':');
        s
    }
}

impl std::fmt::Debug for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Class({})", self.name)
    }
}
