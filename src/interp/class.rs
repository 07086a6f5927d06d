//! Classes and metaclasses: class-table entries, method dictionaries, class-side state.
//!
//! A [`Class`] holds both sides of a class: `methods` (instance side) and `class_methods`
//! (class side). A class object is `Value::Class(c)`; its metaclass `Foo class` is
//! `Value::Meta(c)`. Class-side lookup walks `class_methods` up the superclass chain and then
//! continues with the instance side of `Class` (so metaclass superclasses parallel the class
//! chain and end in `Class`, LANGUAGE.md 5.4); messages to a metaclass value go to the instance
//! side of `Metaclass`.
//!
//! Built-in hierarchy (created in Rust by `interp::program::bootstrap`; kinds in brackets):
//! ```text
//! ProtoObject
//!   Object [object]
//!     Value [value] ── TestCase, Result, Announcement, SupervisionSpec, …
//!     Actor [actor] ── TranscriptStream
//!     Number [value] ── Integer ── Character ; Float
//!     String, Symbol, Binary, Boolean ── True, False ; UndefinedObject, Block
//!     Collection [value] ── List, Array, Dictionary, Set, Bag, Interval
//!     Tuple, Queue, Stream, Exception ── Error ── RuntimeError, TypeError, InstantiationError
//!     Class ── Metaclass ; Pid, Reference, Duration, Timer, Supervisor ── DynamicSupervisor, …
//! ```

use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::interp::eval::code::FnCode;
use crate::interp::eval::Method;
use crate::value::{ClassRef, Sym, Value};

/// What kind of class this is (LANGUAGE.md 5.1): decided by ancestry.
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

/// A re-entrant, per-process class-state lock (LANGUAGE.md 5.4): owner process id and depth.
#[derive(Default)]
pub struct ClassLock {
    pub state: Mutex<(u64, u32)>,
}

pub struct Class {
    pub name: Sym,
    pub superclass: Option<ClassRef>,
    pub kind: ClassKind,
    /// All field (Value) or state (Actor) slot names, inherited first.
    pub field_names: Vec<Sym>,
    pub methods: RwLock<MethodTable>,
    pub class_methods: RwLock<MethodTable>,
    /// `classState:` variables declared by this class (name, current value).
    pub class_state: Mutex<Vec<(Sym, Value)>>,
    /// Field defaults aligned with `field_names` (inherited first); None = nil.
    pub field_defaults: Vec<Option<Arc<FnCode>>>,
    pub is_abstract: bool,
    pub sealed: bool,
    pub builtin: Builtin,
    /// True for TestCase and its descendants (self.x := rebinding, 2.7).
    pub is_testcase: bool,
    pub doc: RwLock<Option<String>>,
    /// Docs of methods by selector (instance side, then class side with a `class ` prefix).
    pub method_docs: RwLock<HashMap<String, String>>,
    pub subclasses: RwLock<Vec<Weak<Class>>>,
    pub lock: ClassLock,
    /// Number of type parameters declared (`Result(T, E)` → 2); informative only.
    pub type_params: usize,
    /// Slots declared with a type and no default (inherited first; a redeclaration replaces
    /// the inherited entry): checked for nil after an actor's `initialize` (5.5).
    pub typed_slots: Vec<TypedSlot>,
    /// `handleScope: #process | #node` declared by this class (4.7); such values, and those
    /// of subclasses, are rejected by the value codec (8.6).
    pub handle_scope: Option<Sym>,
    /// The keyword constructor over all fields (`x:y:`; `Sym::NONE` without fields): the
    /// evaluator builds such instances straight from the arguments.
    pub ctor_sel: Sym,
}

/// A method dictionary: selector → method (foldhash: symbols are small integers, and SipHash
/// was a visible part of loading the library into every program).
pub type MethodTable = HashMap<Sym, Method, foldhash::fast::RandomState>;

/// A `state:`/`field:` slot declared `name :: Type` without a default.
#[derive(Clone, Debug)]
pub struct TypedSlot {
    pub name: Sym,
    pub ty: Arc<crate::syntax::ast::TypeExpr>,
}

/// The inherited typed slots minus those this class redeclares.
fn superclass_typed_slots(
    sup: Option<&ClassRef>,
    own: &[(Sym, Option<Arc<FnCode>>)],
) -> Vec<TypedSlot> {
    match sup {
        Some(s) => s
            .typed_slots
            .iter()
            .filter(|t| !own.iter().any(|(n, _)| *n == t.name))
            .cloned()
            .collect(),
        None => Vec::new(),
    }
}

impl Class {
    /// A new class; fields are the superclass's fields followed by `own_fields`.
    #[allow(clippy::too_many_arguments)] // a constructor mirroring the declaration's parts
    pub fn new(
        name: Sym,
        superclass: Option<ClassRef>,
        kind: ClassKind,
        own_fields: &[(Sym, Option<Arc<FnCode>>)],
        is_abstract: bool,
        sealed: bool,
        builtin: Builtin,
    ) -> Class {
        let mut field_names: Vec<Sym> = Vec::new();
        let mut field_defaults = Vec::new();
        let mut is_testcase = name.as_str() == "TestCase";
        if let Some(s) = &superclass {
            field_names.extend(s.field_names.iter().copied());
            field_defaults.extend(s.field_defaults.iter().cloned());
            is_testcase |= s.is_testcase;
        }
        for (n, d) in own_fields {
            if let Some(i) = field_names.iter().position(|f| f == n) {
                field_defaults[i] = d.clone();
            } else {
                field_names.push(*n);
                field_defaults.push(d.clone());
            }
        }
        let typed = superclass_typed_slots(superclass.as_ref(), own_fields);
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
            methods: RwLock::new(MethodTable::default()),
            class_methods: RwLock::new(MethodTable::default()),
            class_state: Mutex::new(Vec::new()),
            field_defaults,
            is_abstract,
            sealed,
            builtin,
            is_testcase,
            doc: RwLock::new(None),
            method_docs: RwLock::new(HashMap::new()),
            subclasses: RwLock::new(Vec::new()),
            lock: ClassLock::default(),
            type_params: 0,
            typed_slots: typed,
            handle_scope: None,
            ctor_sel,
        }
    }

    /// Adds the typed, default-less slots declared by this class itself (the loader calls it
    /// once after `new`; `slots` are (name, type) pairs).
    pub fn declare_typed_slots(&mut self, slots: Vec<(Sym, crate::syntax::ast::TypeExpr)>) {
        for (name, ty) in slots {
            self.typed_slots.retain(|t| t.name != name);
            self.typed_slots.push(TypedSlot {
                name,
                ty: Arc::new(ty),
            });
        }
    }

    pub fn name_str(&self) -> &'static str {
        self.name.as_str()
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
            if std::ptr::eq(k, other) {
                return true;
            }
            c = k.superclass.as_deref();
        }
        false
    }

    /// Instance-side lookup up the chain: the method and the class that defines it.
    pub fn lookup(self: &ClassRef, sel: Sym) -> Option<(Method, ClassRef)> {
        let mut c = Some(self);
        while let Some(k) = c {
            if let Some(m) = k.methods.read().get(&sel) {
                return Some((m.forced(), k.clone()));
            }
            c = k.superclass.as_ref();
        }
        None
    }

    /// Class-side lookup up the chain (without the `Class` fallback).
    pub fn lookup_class_side(self: &ClassRef, sel: Sym) -> Option<(Method, ClassRef)> {
        let mut c = Some(self);
        while let Some(k) = c {
            if let Some(m) = k.class_methods.read().get(&sel) {
                return Some((m.forced(), k.clone()));
            }
            c = k.superclass.as_ref();
        }
        None
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
