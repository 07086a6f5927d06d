//! Methods ([`Method`]: a primitive, compiled code, an accessor, a library method lowered on
//! first use) and a class side's method dictionary ([`MethodTable`]): this program's own
//! methods over an optional [`BaseTable`] of the built-in library shared by every program of
//! the process.
//!
//! Every program (every `bt::Engine`, every `bt run`) has its own classes, and a script may
//! add, replace or remove methods of library classes. Copying the library's ~3,000 entries
//! into each new program was most of creating an engine, so a program made from the
//! library image (`interp::library_image`) starts each library class with an empty table of
//! its own over the image's base table:
//!
//! - a lookup reads the program's own entries first, then the base (unless the selector was
//!   removed in this program: `hidden`);
//! - installing or removing a method changes only the own entries (copy-on-write per
//!   selector), so other programs never see it;
//! - the base holds primitives, accessors and library methods as their `&'static` syntax
//!   trees. Code stays per program: a library method's [`LazyMethod`] (and the code it lowers
//!   on first use) is made in this table's slot for it the first time it is read, pointing at
//!   this program's class.
//!
//! Tables of classes a program declares itself have no base. Readers see one dictionary:
//! `get`, `contains_key`, `insert`, `remove`, `keys`, `iter` behave like a `HashMap`'s.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use crate::interp::class::Class;
use crate::interp::eval::code::CompiledMethod;
use crate::interp::eval::context::PrimFn;
use crate::interp::eval::hit::{Hit, HitKind};
use crate::interp::lazy_method::LazyMethod;
use crate::interp::registry::Prim;
use crate::syntax::ast::MethodDecl;
use crate::value::{ClassRef, Sym};

type Map<V> = HashMap<Sym, V, foldhash::fast::RandomState>;

/// A method in a method dictionary.
#[derive(Clone)]
pub enum Method {
    /// A Rust primitive and its declared cost.
    Prim(Prim),
    Compiled(Arc<CompiledMethod>),
    /// Value-class field getter (field index).
    Getter(u32),
    /// Value-class `withX:` copy-setter (field index).
    Setter(u32),
    /// Class-side keyword constructor over all fields.
    Constructor,
    /// A library method lowered on first use (`interp::lazy_method`); readers see it as
    /// `Compiled` through [`Method::forced`].
    Lazy(Arc<LazyMethod>),
}

impl Method {
    pub fn is_prim(&self) -> bool {
        matches!(self, Method::Prim(_))
    }

    /// The method as it runs: a `Lazy` one lowered (on first use) into `Compiled`.
    pub fn forced(&self) -> Method {
        match self {
            Method::Lazy(l) => Method::Compiled(l.force().clone()),
            m => m.clone(),
        }
    }

    /// The compiled method, lowering a lazy one.
    pub fn compiled(&self) -> Option<Arc<CompiledMethod>> {
        match self {
            Method::Compiled(cm) => Some(cm.clone()),
            Method::Lazy(l) => Some(l.force().clone()),
            _ => None,
        }
    }

    /// A primitive of constant cost.
    pub fn prim(f: PrimFn) -> Method {
        Method::Prim(Prim::free(f))
    }

    /// A method-cache hit for this method defined in `defc`, sent as `sel`. Both must be
    /// installed in (or retired into) the program of the context that will use the hit.
    pub(crate) fn hit(&self, defc: &ClassRef, sel: Sym) -> Hit {
        let kind = match self {
            Method::Prim(p) => HitKind::Prim(*p),
            Method::Compiled(cm) => HitKind::Compiled(Arc::as_ptr(cm)),
            // Lowered now if not yet; the lazy method (installed or retired) keeps it.
            Method::Lazy(l) => HitKind::Compiled(Arc::as_ptr(l.force())),
            Method::Getter(i) => HitKind::Getter(*i),
            Method::Setter(i) => HitKind::Setter(*i),
            Method::Constructor => HitKind::Constructor,
        };
        Hit::new(kind, defc, sel)
    }
}

/// The library's methods of one class side, built once per process
/// (`interp::library_image`) and shared by every program made from the image.
#[derive(Default)]
pub struct BaseTable {
    map: Map<BaseEntry>,
    lazy: u32,
}

/// One library method in a [`BaseTable`].
enum BaseEntry {
    /// A method with no per-program part: a primitive or an accessor.
    Ready(Method),
    /// A library method lowered per program on first use: its slot and declaration.
    Lazy(u32, &'static MethodDecl),
}

impl BaseTable {
    /// Adds a method with no per-program part (a primitive or a Value-class accessor);
    /// false for any other kind of method.
    pub fn add_ready(&mut self, sel: Sym, m: Method) -> bool {
        match m {
            Method::Prim(_) | Method::Getter(_) | Method::Setter(_) | Method::Constructor => {
                self.map.insert(sel, BaseEntry::Ready(m));
                true
            }
            Method::Compiled(_) | Method::Lazy(_) => false,
        }
    }

    /// Adds a library method that each program lowers on first use.
    pub fn add_lazy(&mut self, sel: Sym, decl: &'static MethodDecl) {
        self.map.insert(sel, BaseEntry::Lazy(self.lazy, decl));
        self.lazy += 1;
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A program's view of a [`BaseTable`]: the class the lazy methods belong to and their
/// per-program slots (allocated on the first lazy method read).
#[derive(Clone)]
struct Base {
    table: &'static BaseTable,
    class: Weak<Class>,
    slots: OnceLock<Box<[OnceLock<Method>]>>,
}

impl Base {
    fn method(&self, e: &'static BaseEntry) -> &Method {
        match e {
            BaseEntry::Ready(m) => m,
            BaseEntry::Lazy(i, decl) => {
                let slots = self.slots.get_or_init(|| {
                    (0..self.table.lazy)
                        .map(|_| OnceLock::new())
                        .collect::<Vec<_>>()
                        .into_boxed_slice()
                });
                slots[*i as usize].get_or_init(|| {
                    Method::Lazy(Arc::new(LazyMethod::with_class(self.class.clone(), decl)))
                })
            }
        }
    }
}

/// A method dictionary: selector → method (foldhash: symbols are small integers). See the
/// module doc for the shared base.
#[derive(Clone, Default)]
pub struct MethodTable {
    own: Map<Method>,
    base: Option<Base>,
    /// Base selectors removed in this program.
    hidden: Vec<Sym>,
}

impl MethodTable {
    /// A table over the shared `table` for `class` (whose methods the lazy entries are).
    pub fn with_base(table: &'static BaseTable, class: Weak<Class>) -> MethodTable {
        MethodTable {
            own: Map::default(),
            base: Some(Base {
                table,
                class,
                slots: OnceLock::new(),
            }),
            hidden: Vec::new(),
        }
    }

    fn base_entry(&self, sel: &Sym) -> Option<(&Base, &'static BaseEntry)> {
        let b = self.base.as_ref()?;
        let e = b.table.map.get(sel)?;
        if !self.hidden.is_empty() && self.hidden.contains(sel) {
            return None;
        }
        Some((b, e))
    }

    /// The method for `sel`, if any.
    #[inline]
    pub fn get(&self, sel: &Sym) -> Option<&Method> {
        if let Some(m) = self.own.get(sel) {
            return Some(m);
        }
        let (b, e) = self.base_entry(sel)?;
        Some(b.method(e))
    }

    pub fn contains_key(&self, sel: &Sym) -> bool {
        self.own.contains_key(sel) || self.base_entry(sel).is_some()
    }

    /// Installs `m`, answering the method it replaces.
    pub fn insert(&mut self, sel: Sym, m: Method) -> Option<Method> {
        if self.base.is_none() {
            return self.own.insert(sel, m);
        }
        let old = self.get(&sel).cloned();
        self.own.insert(sel, m);
        self.hidden.retain(|s| *s != sel);
        old
    }

    /// Installs `m` unless `sel` has a method.
    pub fn insert_if_absent(&mut self, sel: Sym, m: Method) {
        if !self.contains_key(&sel) {
            self.own.insert(sel, m);
            self.hidden.retain(|s| *s != sel);
        }
    }

    /// Removes the method for `sel`, answering it.
    pub fn remove(&mut self, sel: &Sym) -> Option<Method> {
        if self.base.is_none() {
            return self.own.remove(sel);
        }
        let old = self.get(sel).cloned();
        self.own.remove(sel);
        if self.base_entry(sel).is_some() {
            self.hidden.push(*sel);
        }
        old
    }

    /// Every selector with a method (own first, then the base's).
    pub fn keys(&self) -> impl Iterator<Item = &Sym> + '_ {
        self.own.keys().chain(self.base_keys())
    }

    fn base_keys(&self) -> impl Iterator<Item = &Sym> + '_ {
        self.base
            .iter()
            .flat_map(|b| b.table.map.keys())
            .filter(move |s| !self.own.contains_key(*s) && !self.hidden.contains(s))
    }

    /// Every (selector, method) (a library method not read before gets its `LazyMethod`).
    pub fn iter(&self) -> impl Iterator<Item = (&Sym, &Method)> + '_ {
        self.own.iter().chain(self.base.iter().flat_map(move |b| {
            b.table
                .map
                .iter()
                .filter(move |(s, _)| !self.own.contains_key(*s) && !self.hidden.contains(s))
                .map(move |(s, e)| (s, b.method(e)))
        }))
    }

    pub fn len(&self) -> usize {
        self.own.len() + self.base_keys().count()
    }

    pub fn is_empty(&self) -> bool {
        self.own.is_empty() && self.base_keys().next().is_none()
    }

    /// Room for `n` more methods of this program's own.
    pub fn reserve(&mut self, n: usize) {
        self.own.reserve(n);
    }

    /// True when this table reads through a shared base table.
    pub fn has_base(&self) -> bool {
        self.base.is_some()
    }
}

impl IntoIterator for MethodTable {
    type Item = (Sym, Method);
    type IntoIter = std::vec::IntoIter<(Sym, Method)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
            .map(|(s, m)| (*s, m.clone()))
            .collect::<Vec<_>>()
            .into_iter()
    }
}

impl FromIterator<(Sym, Method)> for MethodTable {
    fn from_iter<I: IntoIterator<Item = (Sym, Method)>>(it: I) -> Self {
        MethodTable {
            own: it.into_iter().collect(),
            base: None,
            hidden: Vec::new(),
        }
    }
}
