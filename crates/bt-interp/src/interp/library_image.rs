//! The built-in library as loaded, kept once per process ([`LibraryImage`]) so a new program
//! starts from a copy of its classes instead of loading the library again.
//!
//! Loading the whole library into a program (`Program::bootstrap`, then `loader::install_library`
//! over the parsed `stdlib/*.bt`) creates ~110 classes and
//! ~3,000 method-table entries and frees them again with the program: most of creating a
//! `bt::Engine`. What it produces is the same for every program, so the process does it once
//! into a template program and keeps:
//!
//! - each class's data (name, superclass, kind, fields, flags, docs, class variables, typed
//!   slots, field defaults) — field defaults only when they are literals (sendless code with
//!   no blocks holds no reference into a program, so programs share it);
//! - each class side's methods as a [`BaseTable`] (primitives and accessors as they are,
//!   library methods as their `&'static` syntax trees);
//! - the protocols and the program flags loading set.
//!
//! [`Program::from_image`] then makes a program's classes from it: fresh `Class` objects
//! (identity, class state, subclass lists and method tables stay per program) whose method
//! tables read through the shared base tables (`interp::method_table`): a program that
//! extends, redefines or removes a library method changes only its own entries, and library
//! methods are lowered into the program's own code on first use as before. Engines stay
//! isolated (tests/engine/shared_library.rs).
//!
//! The first program of a process takes the library in itself, class by class on first use
//! ([`for_new_program`] answers None; `loader::LazyLibrary`): a `bt run` makes one program,
//! and building the image costs a whole load plus the copy. The
//! second program builds the image, and every later one copies it. If the library ever
//! holds something the copy cannot share (a non-literal field default, a class variable
//! holding an object, top-level statements, an eagerly lowered method), no image is made
//! and every program loads the library as before (`tests` below fails first).

use crate::interp::class::ClassExt;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use crate::interp::class::{Builtin, Class, ClassKind, ClassLock, ClassRt, TypedSlot};
use crate::interp::eval::code::FnCode;
use crate::interp::eval::Method;
use crate::interp::method_table::{BaseTable, MethodTable};
use crate::interp::program::{InterpreterOptions, Program, ProtocolInfo};
use crate::value::{ClassRef, Sym, Value};

/// The library's classes, methods and protocols as loaded (see the module doc).
pub struct LibraryImage {
    /// Superclasses before subclasses.
    classes: Vec<ClassImage>,
    protocols: BTreeMap<Sym, ProtocolInfo>,
    arith_overridden: bool,
    /// What loading the library reported (should be empty).
    pub warnings: Vec<String>,
}

struct ClassImage {
    name: Sym,
    superclass: Option<usize>,
    kind: ClassKind,
    field_names: Vec<Sym>,
    class_state: Vec<(Sym, Value)>,
    is_abstract: bool,
    sealed: bool,
    builtin: Builtin,
    is_testcase: bool,
    doc: Option<String>,
    method_docs: HashMap<String, String>,
    type_params: usize,
    handle_scope: Option<Sym>,
    ctor_sel: Sym,
    field_defaults: Vec<Option<Arc<FnCode>>>,
    typed_slots: Vec<TypedSlot>,
    methods: BaseTable,
    class_methods: BaseTable,
}

static IMAGE: OnceLock<Option<LibraryImage>> = OnceLock::new();
static PROGRAMS: AtomicUsize = AtomicUsize::new(0);

/// The image a new program should be made from: None for the first program of the process
/// (it loads the library itself) and when the library cannot be shared. `build` makes the
/// image when it is not yet made (`Interpreter::library_image`: it loads the library into a
/// template program and takes [`LibraryImage::of`] it).
pub fn for_new_program(build: fn() -> Option<LibraryImage>) -> Option<&'static LibraryImage> {
    if let Some(img) = IMAGE.get() {
        return img.as_ref();
    }
    if PROGRAMS.fetch_add(1, Ordering::Relaxed) == 0 {
        return None;
    }
    image(build)
}

/// The image, made now by `build` if it is not yet (None when the library cannot be shared).
pub fn image(build: fn() -> Option<LibraryImage>) -> Option<&'static LibraryImage> {
    IMAGE.get_or_init(build).as_ref()
}

impl LibraryImage {
    /// What programs can share of `prog`, a template program that loaded the library
    /// (with what loading it reported); None when the library holds something a copy
    /// cannot share (see the module doc).
    pub fn of(prog: &Program, warnings: Vec<String>) -> Option<LibraryImage> {
        let mut classes = prog.all_classes();
        // Superclasses first (stable by name within a depth).
        classes.sort_by_key(|c| c.chain().len());
        let index: HashMap<*const Class, usize> = classes
            .iter()
            .enumerate()
            .map(|(i, c)| (Arc::as_ptr(c), i))
            .collect();
        let mut out = Vec::with_capacity(classes.len());
        for c in &classes {
            let superclass = match &c.superclass {
                Some(s) => Some(*index.get(&Arc::as_ptr(s))?),
                None => None,
            };
            let shareable = |d: &Option<Arc<FnCode>>| {
                d.as_ref()
                    .is_none_or(|code| code.sendless && code.blocks.is_empty())
            };
            if !c.field_defaults().iter().all(shareable) {
                return None;
            }
            let class_state = c.class_state.lock().clone();
            if !class_state
                .iter()
                .all(|(_, v)| crate::value::is_immediate(v) || matches!(v, Value::Str(_)))
            {
                return None;
            }
            out.push(ClassImage {
                name: c.name,
                superclass,
                kind: c.kind,
                field_names: c.field_names.clone(),
                class_state,
                is_abstract: c.is_abstract,
                sealed: c.sealed,
                builtin: c.builtin,
                is_testcase: c.is_testcase,
                doc: c.doc.read().clone(),
                method_docs: c.method_docs.read().clone(),
                type_params: c.type_params,
                handle_scope: c.handle_scope,
                ctor_sel: c.ctor_sel,
                field_defaults: c.field_defaults().to_vec(),
                typed_slots: c.typed_slots().to_vec(),
                methods: base_table(&c.methods().read())?,
                class_methods: base_table(&c.class_methods().read())?,
            });
        }
        let img = LibraryImage {
            classes: out,
            protocols: prog.protocols.read().clone(),
            arith_overridden: prog.arith_overridden.load(Ordering::Relaxed),
            warnings,
        };
        Some(img)
    }
}

/// A loaded method table as a shared base table (None if it holds code lowered already).
fn base_table(t: &MethodTable) -> Option<BaseTable> {
    if t.has_base() {
        return None;
    }
    let mut b = BaseTable::default();
    for (sel, m) in t.iter() {
        match m {
            Method::Lazy(l) => b.add_lazy(*sel, l.decl()),
            m => {
                if !b.add_ready(*sel, m.clone()) {
                    return None;
                }
            }
        }
    }
    Some(b)
}

impl Program {
    /// A program whose classes are a copy of the library image's (see the module doc).
    pub fn from_image(opts: InterpreterOptions, img: &'static LibraryImage) -> Program {
        let mut made: Vec<ClassRef> = Vec::with_capacity(img.classes.len());
        let mut table: HashMap<Sym, ClassRef> = HashMap::with_capacity(img.classes.len());
        for ci in &img.classes {
            let superclass = ci.superclass.map(|i| made[i].clone());
            let c = Arc::new_cyclic(|me| Class {
                name: ci.name,
                superclass: superclass.clone(),
                kind: ci.kind,
                field_names: ci.field_names.clone(),
                class_state: Mutex::new(ci.class_state.clone()),
                is_abstract: ci.is_abstract,
                sealed: ci.sealed,
                builtin: ci.builtin,
                is_testcase: ci.is_testcase,
                doc: RwLock::new(ci.doc.clone()),
                method_docs: RwLock::new(ci.method_docs.clone()),
                subclasses: RwLock::new(Vec::new()),
                lock: ClassLock::default(),
                type_params: ci.type_params,
                handle_scope: ci.handle_scope,
                ctor_sel: ci.ctor_sel,
                rt: Box::new(ClassRt {
                    methods: RwLock::new(MethodTable::with_base(&ci.methods, me.clone())),
                    class_methods: RwLock::new(MethodTable::with_base(
                        &ci.class_methods,
                        me.clone(),
                    )),
                    ..ClassRt::new(ci.field_defaults.clone(), ci.typed_slots.clone())
                }),
            });
            if let Some(s) = &superclass {
                s.subclasses.write().push(Arc::downgrade(&c));
            }
            table.insert(ci.name, c.clone());
            made.push(c);
        }
        let prog = Program::assemble(opts, table, crate::interp::prims::shared());
        *prog.protocols.write() = img.protocols.clone();
        prog.arith_overridden
            .store(img.arith_overridden, Ordering::Relaxed);
        prog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interpreter;

    /// A program made from the image has exactly the classes, methods and protocols of a
    /// program that loaded the library itself.
    #[test]
    fn a_program_from_the_image_equals_a_loaded_one() {
        let img = Interpreter::library_image().expect(
            "the library image could not be built: the library holds something programs \
             cannot share (see interp::library_image)",
        );
        let loaded = Interpreter::loading_library(InterpreterOptions::default());
        let copied = Program::from_image(InterpreterOptions::default(), img);
        assert_same_programs(&loaded.prog, &copied);
    }

    /// A program that takes the library in class by class (in an order unlike the library's)
    /// ends with the classes, methods, subclass lists and protocols of one that takes it in
    /// at once.
    #[test]
    fn lazy_and_whole_programs_agree() {
        let whole = Interpreter::loading_library(InterpreterOptions::default());
        whole.prog.take_in_library();
        let lazy = Interpreter::loading_library(InterpreterOptions::default());
        // A user class made before the library's other subclasses of Object are.
        lazy.eval("t", "Object subclass: LateUser\n  hi => 1\n")
            .unwrap();
        let mut names: Vec<&str> = crate::check::library::index().class_names().collect();
        names.sort();
        for n in names.iter().rev() {
            let c = lazy.prog.class_named(n).expect(n);
            let _ = c.methods().read().len();
        }
        whole
            .eval("t", "Object subclass: LateUser\n  hi => 1\n")
            .unwrap();
        assert_same_programs(&whole.prog, &lazy.prog);
    }

    fn assert_same_programs(loaded: &Program, copied: &Program) {
        let a = loaded.all_classes();
        let b = copied.all_classes();
        assert_eq!(a.len(), b.len());
        let describe = |m: &Method| match m {
            Method::Prim(p) => format!("prim {:x} {:?}", p.f as usize, p.cost),
            Method::Lazy(l) => format!("lazy {:p}", l.decl()),
            Method::Compiled(c) => format!("compiled {}", c.selector),
            Method::Getter(i) => format!("getter {i}"),
            Method::Setter(i) => format!("setter {i}"),
            Method::Constructor => "constructor".to_string(),
        };
        let table = |t: &MethodTable| {
            let mut v: Vec<(String, String)> = t
                .iter()
                .map(|(s, m)| (s.as_str().to_string(), describe(m)))
                .collect();
            v.sort();
            v
        };
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.name, y.name);
            assert!(!Arc::ptr_eq(x, y));
            let n = x.name;
            assert_eq!(
                x.superclass.as_ref().map(|s| s.name),
                y.superclass.as_ref().map(|s| s.name),
                "{n}"
            );
            assert_eq!(x.kind, y.kind, "{n}");
            assert_eq!(x.field_names, y.field_names, "{n}");
            assert_eq!(
                (x.is_abstract, x.sealed, x.builtin, x.is_testcase),
                (y.is_abstract, y.sealed, y.builtin, y.is_testcase),
                "{n}"
            );
            assert_eq!(*x.doc.read(), *y.doc.read(), "{n}");
            assert_eq!(*x.method_docs.read(), *y.method_docs.read(), "{n}");
            assert_eq!(
                (x.type_params, x.handle_scope, x.ctor_sel),
                (y.type_params, y.handle_scope, y.ctor_sel),
                "{n}"
            );
            let names = |c: &ClassRef| -> Vec<Sym> {
                c.class_state.lock().iter().map(|(s, _)| *s).collect()
            };
            assert_eq!(names(x), names(y), "{n}");
            let subs =
                |c: &ClassRef| -> Vec<Sym> { c.live_subclasses().iter().map(|s| s.name).collect() };
            assert_eq!(subs(x), subs(y), "{n}");
            assert_eq!(
                x.field_defaults()
                    .iter()
                    .map(Option::is_some)
                    .collect::<Vec<_>>(),
                y.field_defaults()
                    .iter()
                    .map(Option::is_some)
                    .collect::<Vec<_>>(),
                "{n}"
            );
            let slots =
                |c: &ClassRef| -> Vec<Sym> { c.typed_slots().iter().map(|t| t.name).collect() };
            assert_eq!(slots(x), slots(y), "{n}");
            assert_eq!(
                table(&x.methods().read()),
                table(&y.methods().read()),
                "{n}"
            );
            assert_eq!(
                table(&x.class_methods().read()),
                table(&y.class_methods().read()),
                "{n} class"
            );
            // Lazy methods of the copy belong to the copy's class.
            if let Some((_, Method::Lazy(l))) = y
                .methods()
                .read()
                .iter()
                .find(|(_, m)| matches!(m, Method::Lazy(_)))
            {
                let code = l.force();
                assert_eq!(code.code.nparams as usize, l.decl().params.len(), "{n}");
            }
        }
        let protos = |p: &Program| -> Vec<Sym> { p.protocols.read().keys().copied().collect() };
        assert_eq!(protos(loaded), protos(copied));
        assert_eq!(
            loaded.arith_overridden.load(Ordering::Relaxed),
            copied.arith_overridden.load(Ordering::Relaxed)
        );
    }
}
