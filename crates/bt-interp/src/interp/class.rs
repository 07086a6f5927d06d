//! Classes and metaclasses: class-table entries, method dictionaries, class-side state.
//!
//! A [`Class`] holds both sides of a class: `methods()` (instance side) and `class_methods()`
//! (class side). The struct itself — identity, name, kind, field names, flags — belongs to the
//! values layer (`value::class`), so values can hold and order classes without naming the
//! interpreter; the method dictionaries, field-default code and typed slots are this module's
//! [`ClassRt`], kept in `Class::rt` and reached through the inherent accessors below (slow
//! paths only: method caches point at the `Class` itself). A class object is `Value::Class(c)`; its metaclass `Foo class` is
//! `Value::Meta(c)`. Class-side lookup walks `class_methods` up the superclass chain and then
//! continues with the instance side of `Class` (so metaclass superclasses parallel the class
//! chain and end in `Class`); messages to a metaclass value go to the instance
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

use parking_lot::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use crate::interp::eval::code::FnCode;
use crate::interp::method_table::Method;
use crate::value::{ClassRef, Sym};

// The class's data (identity, name, kind, fields, flags, docs, class state) is the values
// layer's; this module adds the interpreter's part and the behaviour that needs it.
pub use crate::value::class::{Builtin, Class, ClassKind, ClassLock};

/// The interpreter's part of a [`Class`] (kept in `Class::rt`, which the values layer does not
/// look into): method dictionaries, field-default code and typed slots.
pub struct ClassRt {
    pub methods: RwLock<MethodTable>,
    pub class_methods: RwLock<MethodTable>,
    /// Field defaults aligned with `field_names` (inherited first); None = nil.
    pub field_defaults: Vec<Option<Arc<FnCode>>>,
    /// Slots declared with a type and no default (inherited first; a redeclaration replaces
    /// the inherited entry): checked for nil after an actor's `initialize`.
    pub typed_slots: Vec<TypedSlot>,
    /// Set while the built-in library's declarations of this class are not taken in yet
    /// (`loader::library`): the first read of its method tables takes them in.
    pub pending: AtomicBool,
    /// What takes the library's declarations in (set with `pending`).
    pub library: OnceLock<Weak<dyn PendingLibrary>>,
    /// Set while the registry's primitives of this class are not in its method tables yet
    /// (a built-in class of the process's first program, `Program::bootstrap`): the first
    /// read of either table puts them in, before the library's declarations.
    pub prims_deferred: AtomicBool,
    /// The registry of the deferred primitives, and the one put-in of both sides.
    pub prims_from: OnceLock<&'static crate::interp::registry::SharedPrims>,
    pub prims_in: std::sync::Once,
}

/// The built-in library of a program whose library classes are taken in on first use
/// (`loader::library::LazyLibrary`).
pub trait PendingLibrary: Send + Sync {
    /// Takes in the library's declarations of `class` (and the files they need).
    fn take_in(&self, class: &Class);
    /// Takes in the library class called `name` when the library declares one not taken in
    /// yet; answers whether it did.
    fn take_in_named(&self, name: Sym) -> bool;
    /// Takes in the whole library.
    fn take_in_all(&self);
    fn as_any(&self) -> &dyn std::any::Any;
}

impl ClassRt {
    /// The tables and data of a class with nothing taken in from the library pending.
    pub fn new(field_defaults: Vec<Option<Arc<FnCode>>>, typed_slots: Vec<TypedSlot>) -> ClassRt {
        ClassRt {
            methods: RwLock::new(MethodTable::default()),
            class_methods: RwLock::new(MethodTable::default()),
            field_defaults,
            typed_slots,
            pending: AtomicBool::new(false),
            library: OnceLock::new(),
            prims_deferred: AtomicBool::new(false),
            prims_from: OnceLock::new(),
            prims_in: std::sync::Once::new(),
        }
    }

    /// Leaves the registered primitives of this class (none in its tables yet) to the first
    /// read of its method tables: a program reads the tables of a few of its ~80 built-in
    /// classes, and building them all was a tenth of `bt run`'s start-up.
    pub(crate) fn defer_prims(&self, prims: &'static crate::interp::registry::SharedPrims) {
        let _ = self.prims_from.set(prims);
        self.prims_deferred.store(true, Ordering::Release);
    }

    #[cold]
    #[inline(never)]
    fn put_prims_in(&self, class: &Class) {
        self.prims_in.call_once(|| {
            if let Some(prims) = self.prims_from.get() {
                for (class_side, table) in [(false, &self.methods), (true, &self.class_methods)] {
                    let p = prims.of_class(class.name, class_side);
                    if !p.is_empty() {
                        // Nothing has read the table yet, so no method cache can hold an
                        // entry of it: no epoch to bump.
                        *table.write() = crate::interp::program::prims_table(p);
                    }
                }
            }
            self.prims_deferred.store(false, Ordering::Release);
        });
    }

    /// Marks the class's library declarations as to be taken in by `library` on first use.
    pub fn defer_to(&self, library: Weak<dyn PendingLibrary>) {
        let _ = self.library.set(library);
        self.pending.store(true, Ordering::Release);
    }

    /// Puts the deferred primitives of `class` in and takes the library's declarations of it
    /// in, if they are still pending.
    #[inline]
    pub fn take_in(&self, class: &Class) {
        if self.prims_deferred.load(Ordering::Acquire) {
            self.put_prims_in(class);
        }
        if self.pending.load(Ordering::Acquire) {
            self.take_in_now(class);
        }
    }

    #[cold]
    #[inline(never)]
    fn take_in_now(&self, class: &Class) {
        match self.library.get().and_then(Weak::upgrade) {
            Some(l) => l.take_in(class),
            None => self.pending.store(false, Ordering::Release),
        }
    }
}

/// The part of a class made by something other than [`Class::new`] (a values-layer test):
/// empty tables, so lookups find nothing instead of failing.
static EMPTY_RT: std::sync::LazyLock<ClassRt> =
    std::sync::LazyLock::new(|| ClassRt::new(Vec::new(), Vec::new()));

/// A method dictionary: selector → method, over the library's shared table for a class made
/// from the library image (`interp::method_table`).
pub use crate::interp::method_table::MethodTable;

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
            .typed_slots()
            .iter()
            .filter(|t| !own.iter().any(|(n, _)| *n == t.name))
            .cloned()
            .collect(),
        None => Vec::new(),
    }
}

/// The interpreter's side of a values-layer [`Class`]: its [`ClassRt`] (methods, field
/// defaults, typed slots) and lookup. Import it to call these on a class.
pub trait ClassExt {
    /// A new class; fields are the superclass's fields followed by `own_fields`.
    #[allow(clippy::too_many_arguments)] // a constructor mirroring the declaration's parts
    fn new(
        name: Sym,
        superclass: Option<ClassRef>,
        kind: ClassKind,
        own_fields: &[(Sym, Option<Arc<FnCode>>)],
        is_abstract: bool,
        sealed: bool,
        builtin: Builtin,
    ) -> Self;

    /// The interpreter's part of this class.
    fn rt(&self) -> &ClassRt;

    /// Instance-side method dictionary.
    fn methods(&self) -> &RwLock<MethodTable>;

    /// Class-side method dictionary.
    fn class_methods(&self) -> &RwLock<MethodTable>;

    /// Takes in the built-in library's declarations of this class when they are pending
    /// (before reading its documentation or class variables; the method tables do it
    /// themselves).
    fn take_in_library(&self);

    /// Field defaults aligned with `field_names` (inherited first); None = nil.
    fn field_defaults(&self) -> &[Option<Arc<FnCode>>];

    /// Typed slots without a default (checked after an actor's `initialize`).
    fn typed_slots(&self) -> &[TypedSlot];

    /// Adds the typed, default-less slots declared by this class itself (the loader calls it
    /// once after `new`; `slots` are (name, type) pairs).
    fn declare_typed_slots(&mut self, slots: Vec<(Sym, crate::syntax::ast::TypeExpr)>);

    /// Instance-side lookup up the chain: the method and the class that defines it.
    fn lookup(self: &Arc<Self>, sel: Sym) -> Option<(Method, ClassRef)>;

    /// Class-side lookup up the chain (without the `Class` fallback).
    fn lookup_class_side(self: &Arc<Self>, sel: Sym) -> Option<(Method, ClassRef)>;
}

impl ClassExt for Class {
    /// A new class; fields are the superclass's fields followed by `own_fields`.
    #[allow(clippy::too_many_arguments)] // a constructor mirroring the declaration's parts
    fn new(
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
        if let Some(s) = &superclass {
            field_names.extend(s.field_names.iter().copied());
            field_defaults.extend(s.field_defaults().iter().cloned());
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
        let rt = ClassRt::new(field_defaults, typed);
        Class::from_parts(
            name,
            superclass,
            kind,
            field_names,
            is_abstract,
            sealed,
            builtin,
            Box::new(rt),
        )
    }

    /// The interpreter's part of this class.
    #[inline]
    fn rt(&self) -> &ClassRt {
        match self.rt.downcast_ref::<ClassRt>() {
            Some(rt) => rt,
            None => &EMPTY_RT,
        }
    }

    /// Instance-side method dictionary (the library's declarations of the class taken in
    /// first, when they are pending).
    #[inline]
    fn methods(&self) -> &RwLock<MethodTable> {
        let rt = self.rt();
        rt.take_in(self);
        &rt.methods
    }

    /// Class-side method dictionary (as `methods`).
    #[inline]
    fn class_methods(&self) -> &RwLock<MethodTable> {
        let rt = self.rt();
        rt.take_in(self);
        &rt.class_methods
    }

    fn take_in_library(&self) {
        self.rt().take_in(self);
    }

    /// Field defaults aligned with `field_names` (inherited first); None = nil.
    fn field_defaults(&self) -> &[Option<Arc<FnCode>>] {
        &self.rt().field_defaults
    }

    /// Typed slots without a default (checked after an actor's `initialize`).
    fn typed_slots(&self) -> &[TypedSlot] {
        &self.rt().typed_slots
    }

    /// Adds the typed, default-less slots declared by this class itself (the loader calls it
    /// once after `new`; `slots` are (name, type) pairs).
    fn declare_typed_slots(&mut self, slots: Vec<(Sym, crate::syntax::ast::TypeExpr)>) {
        let Some(rt) = self.rt.downcast_mut::<ClassRt>() else {
            return;
        };
        for (name, ty) in slots {
            rt.typed_slots.retain(|t| t.name != name);
            rt.typed_slots.push(TypedSlot {
                name,
                ty: Arc::new(ty),
            });
        }
    }

    /// Instance-side lookup up the chain: the method and the class that defines it.
    fn lookup(self: &ClassRef, sel: Sym) -> Option<(Method, ClassRef)> {
        let mut c = Some(self);
        while let Some(k) = c {
            if let Some(m) = k.methods().read().get(&sel) {
                return Some((m.forced(), k.clone()));
            }
            c = k.superclass.as_ref();
        }
        None
    }

    /// Class-side lookup up the chain (without the `Class` fallback).
    fn lookup_class_side(self: &ClassRef, sel: Sym) -> Option<(Method, ClassRef)> {
        let mut c = Some(self);
        while let Some(k) = c {
            if let Some(m) = k.class_methods().read().get(&sel) {
                return Some((m.forced(), k.clone()));
            }
            c = k.superclass.as_ref();
        }
        None
    }
}
