//! The built-in library's side of loading: its declarations are `'static` (parsed once per
//! process), so its primitives, standalone methods and documentation are resolved once and
//! shared by every program; its other methods are lowered on first use.

use crate::interp::class::ClassExt;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use super::methods::lower_primitive;
use super::{install, Installed, SourceUnit};
use crate::interp::class::Class;
use crate::interp::eval::Method;
use crate::interp::program::Program;
use crate::syntax::ast::{self, Item, Member};
use crate::value::{ClassRef, Sym};

/// [`install_declarations`] for files of the built-in library, parsed once per process: its
/// methods are lowered on first use (`interp::lazy_method`) and their documentation is read
/// from the syntax trees ([`library_doc`]) instead of being copied into every program.
pub fn install_library(prog: &Program, units: &'static [SourceUnit]) -> Installed {
    install(prog, units, true, &|prog, c, md| {
        if md.primitive.is_some() {
            return library_prim(prog, c, md);
        }
        let l = crate::interp::lazy_method::LazyMethod::new(c, md);
        Some((l.selector, Method::Lazy(Arc::new(l))))
    })
}

/// The primitive a library `@primitive` declaration binds, with its selector: looked up once
/// per process (the library's declarations are `'static`, so their address is the key).
/// None when it names no primitive (the ordinary path reports it).
fn library_prim(
    prog: &Program,
    c: &ClassRef,
    md: &'static ast::MethodDecl,
) -> Option<(Sym, Method)> {
    type Memo =
        HashMap<usize, Option<(Sym, crate::interp::registry::Prim)>, foldhash::fast::RandomState>;
    static MEMO: std::sync::OnceLock<parking_lot::RwLock<Memo>> = std::sync::OnceLock::new();
    // Sized for the primitive declarations of the files most programs take in (~500); the
    // whole library's ~1,350 grow it once. Sized for the whole library, its 135 KB were
    // touched at every start.
    let memo = MEMO.get_or_init(|| {
        parking_lot::RwLock::new(Memo::with_capacity_and_hasher(512, Default::default()))
    });
    let key = md as *const ast::MethodDecl as usize;
    // A class of the library's name: the same declaration resolves the same way.
    if let Some(r) = memo.read().get(&key) {
        return r.map(|(s, p)| (s, Method::Prim(p)));
    }
    // The primitive alone: its documentation is read from the syntax tree (`library_doc`).
    let r = md
        .primitive
        .as_ref()
        .and_then(|p| lower_primitive(prog, c, md, p).ok());
    memo.write().insert(key, r);
    r.map(|(s, p)| (s, Method::Prim(p)))
}

/// The method of a library standalone declaration (`Foo >> bar`, `Foo class >> bar`) with its
/// side set, made once per process (the library's syntax trees are `'static`, so the
/// declaration's address is the key), so it can be lowered on first use like the others.
pub(super) fn library_standalone(sm: &ast::StandaloneMethod) -> &'static ast::MethodDecl {
    type Memo = HashMap<usize, &'static ast::MethodDecl, foldhash::fast::RandomState>;
    static MEMO: std::sync::OnceLock<parking_lot::Mutex<Memo>> = std::sync::OnceLock::new();
    let key = sm as *const ast::StandaloneMethod as usize;
    let mut memo = MEMO.get_or_init(Default::default).lock();
    memo.entry(key).or_insert_with(|| {
        let mut md = sm.method.clone();
        md.class_side = sm.class_side;
        Box::leak(Box::new(md))
    })
}

/// Documentation of the library's methods by (class, class side, selector).
type LibraryDocs = HashMap<(Sym, bool, Sym), &'static ast::Doc, foldhash::fast::RandomState>;

static LIBRARY_DOCS: std::sync::OnceLock<LibraryDocs> = std::sync::OnceLock::new();

fn library_docs(units: &'static [SourceUnit]) -> LibraryDocs {
    let mut out = LibraryDocs::default();
    for u in units {
        for it in &u.module.items {
            match it {
                Item::Class(c) => {
                    let cname = Sym::new(&c.name.name);
                    for m in &c.members {
                        if let Member::Method(md) = m {
                            if let Some(d) = &md.doc {
                                out.insert((cname, md.class_side, Sym::new(&md.selector)), d);
                            }
                        }
                    }
                }
                Item::Method(sm) => {
                    if let Some(d) = &sm.method.doc {
                        let key = (
                            Sym::new(&sm.class_name.name),
                            sm.class_side,
                            Sym::new(&sm.method.selector),
                        );
                        out.insert(key, d);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The documentation comment the built-in library gives `class>>sel` (the class side with
/// `class_side`), when its method there is still the library's (a primitive or a method
/// lowered on first use): library docs are not copied into each program's `method_docs`.
pub fn library_doc(class: &Class, class_side: bool, sel: Sym) -> Option<String> {
    let table = if class_side {
        class.class_methods().read()
    } else {
        class.methods().read()
    };
    match table.get(&sel)? {
        Method::Lazy(l) => l.doc(),
        Method::Prim(_) => LIBRARY_DOCS
            .get_or_init(|| library_docs(all_units()))
            .get(&(class.name, class_side, sel))
            .map(|d| d.text().into_owned()),
        _ => None,
    }
}

/// The library file `i` as a load unit (parsed now if it is not yet).
fn unit(i: usize) -> SourceUnit {
    let (name, src) = crate::check::library::STDLIB[i];
    SourceUnit {
        path: format!("stdlib/{name}"),
        src: std::borrow::Cow::Borrowed(src),
        module: std::borrow::Cow::Borrowed(crate::check::library::module(i)),
        file: crate::interp::eval::code::NO_FILE,
        stdlib: true,
    }
}

/// The library files `files` as one load unit, made once per process for each set of files
/// (the loader borrows the library's declarations for the life of the process).
fn units_of(files: &[usize]) -> &'static [SourceUnit] {
    type Made = HashMap<Vec<usize>, &'static [SourceUnit], foldhash::fast::RandomState>;
    static MADE: std::sync::OnceLock<parking_lot::Mutex<Made>> = std::sync::OnceLock::new();
    let mut made = MADE.get_or_init(Default::default).lock();
    made.entry(files.to_vec())
        .or_insert_with(|| Box::leak(files.iter().map(|&i| unit(i)).collect::<Box<[_]>>()))
}

/// Every library file as one load unit (the whole library parsed).
pub fn all_units() -> &'static [SourceUnit] {
    static ALL: std::sync::OnceLock<&'static [SourceUnit]> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let n = crate::check::library::parsed().len();
        units_of(&(0..n).collect::<Vec<_>>())
    })
}

/// The built-in library of a program, taken in class by class on first use: a program starts
/// with the built-in classes and their primitives (`Program::bootstrap`), and the library's
/// declarations of a class — its methods written in bt, documentation, class variables, the
/// classes the library alone declares — are installed when the class is first looked at
/// (its method tables read, its name looked up, reflection on it), together with the files
/// they need ([`crate::check::library::Index::closure`]: its superclasses' files and the
/// files that extend it), as one load unit. What lists classes, subclasses or protocols
/// takes in the whole library first ([`Program::take_in_library`]). A class is the same
/// whichever way it was taken in: `tests::lazy_and_whole_programs_agree`.
pub struct LazyLibrary {
    prog: Weak<Program>,
    state: parking_lot::ReentrantMutex<std::cell::RefCell<Taken>>,
}

#[derive(Default)]
struct Taken {
    /// Files installed (or being installed) into the program.
    files: Vec<bool>,
    all: bool,
    /// Classes the library's files registered (for the order of subclass lists).
    registered: Vec<Weak<Class>>,
    /// What installing library files reported (should stay empty).
    problems: Vec<String>,
    /// Installs in progress on the thread holding the lock: a take-in nested in one (the
    /// files being installed look up their own classes) must not mark anything complete,
    /// or another thread would read a class whose methods are still being installed.
    installing: u32,
}

impl LazyLibrary {
    /// Defers the library of `prog` (a program fresh from `Program::bootstrap`): every built-in
    /// class the library declares or extends is marked pending.
    pub fn start(prog: &Arc<Program>) {
        let ix = crate::check::library::index();
        let lib = Arc::new(LazyLibrary {
            prog: Arc::downgrade(prog),
            state: parking_lot::ReentrantMutex::new(std::cell::RefCell::new(Taken {
                files: vec![false; ix.files.len()],
                ..Taken::default()
            })),
        });
        let weak: Weak<dyn crate::interp::class::PendingLibrary> = {
            let w: Weak<LazyLibrary> = Arc::downgrade(&lib);
            w
        };
        for c in prog.classes.read().values() {
            if !ix.class_files(c.name.as_str()).is_empty() {
                c.rt().defer_to(weak.clone());
            }
        }
        let _ = prog.library.set(lib);
    }

    /// What installing library files has reported so far.
    pub fn problems(prog: &Program) -> Vec<String> {
        prog.library
            .get()
            .and_then(|l| {
                let any: &dyn std::any::Any = l.as_any();
                any.downcast_ref::<LazyLibrary>()
                    .map(|l| l.state.lock().borrow().problems.clone())
            })
            .unwrap_or_default()
    }

    /// Installs the files `classes` need that are not installed yet, as one unit, and clears
    /// the pending mark of every class they complete.
    fn take_in_classes(&self, classes: &[&str]) {
        let Some(prog) = self.prog.upgrade() else {
            return;
        };
        let guard = self.state.lock();
        let ix = crate::check::library::index();
        if guard.borrow().installing > 0 && {
            let t = guard.borrow();
            classes
                .iter()
                .all(|c| ix.class_files(c).first().is_none_or(|&f| t.files[f]))
        } {
            // Nested in an install of this thread, for classes whose files are in: taken in
            // files always come with their whole closure (a file's classes' files and their
            // superclasses'), so nothing is missing, and a nested take-in marks nothing
            // complete. The installing files look up their own classes a few hundred times;
            // each closure walk was ~6,600 instructions.
            return;
        }
        let (files, complete) = ix.closure_with_classes(classes);
        let new: Vec<usize> = {
            let mut t = guard.borrow_mut();
            let new: Vec<usize> = files.into_iter().filter(|&f| !t.files[f]).collect();
            for &f in &new {
                t.files[f] = true;
            }
            new
        };
        if !new.is_empty() {
            self.install(&prog, &new);
        }
        if guard.borrow().installing > 0 {
            // Nested in an install of this thread: the outermost take-in marks its classes.
            return;
        }
        let table = prog.classes.read();
        for name in complete {
            if let Some(c) = table.get(&Sym::new(name)) {
                c.rt()
                    .pending
                    .store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }

    fn install(&self, prog: &Program, files: &[usize]) {
        let units = units_of(files);
        let before: std::collections::HashSet<*const Class> =
            prog.classes.read().values().map(Arc::as_ptr).collect();
        let guard = self.state.lock();
        guard.borrow_mut().installing += 1;
        let inst = install_library(prog, units);
        let mut t = guard.borrow_mut();
        t.installing -= 1;
        for p in &inst.problems {
            let line = format!(
                "{}: {}",
                p.path,
                crate::diagnostic::render(
                    &p.path,
                    &p.src,
                    &p.diagnostics,
                    crate::diagnostic::ColorChoice::Never
                )
            );
            bt_base::base::log::warn(&line);
            t.problems.push(line);
        }
        for c in prog.classes.read().values() {
            if !before.contains(&Arc::as_ptr(c)) {
                t.registered.push(Arc::downgrade(c));
            }
        }
    }

    /// Puts each class's subclass list in the order a load of the whole library at once
    /// makes: the built-in classes, then the library's in the order it creates them, then
    /// the others as they came.
    fn order_subclasses(&self, prog: &Program) {
        let rank = creation_order();
        let guard = self.state.lock();
        let t = guard.borrow();
        let registered: std::collections::HashSet<*const Class> =
            t.registered.iter().map(Weak::as_ptr).collect();
        for c in prog.classes.read().values() {
            let mut subs = c.subclasses.write();
            subs.sort_by_key(|w| match w.upgrade() {
                Some(k) if registered.contains(&Arc::as_ptr(&k)) => {
                    (1, rank.get(k.name.as_str()).copied().unwrap_or(usize::MAX))
                }
                Some(k) if k.builtin != crate::interp::class::Builtin::None => (0, 0),
                _ => (2, 0),
            });
        }
    }
}

/// The order in which a load of the whole library creates its classes (`loader::install`:
/// passes over the classes in file order, each made once its superclass is).
fn creation_order() -> HashMap<&'static str, usize> {
    let ix = crate::check::library::index();
    let mut pending: Vec<(&'static str, &'static str)> = ix
        .files
        .iter()
        .flat_map(|f| f.classes.iter().copied())
        .collect();
    let declared: std::collections::HashSet<&str> = pending.iter().map(|(c, _)| *c).collect();
    let mut made: HashMap<&'static str, usize> = HashMap::new();
    let mut progress = true;
    while progress && !pending.is_empty() {
        progress = false;
        let mut rest = Vec::new();
        for (c, sup) in pending {
            if sup == "nil" || made.contains_key(sup) || !declared.contains(sup) || sup == c {
                progress = true;
                let n = made.len();
                made.entry(c).or_insert(n);
            } else {
                rest.push((c, sup));
            }
        }
        pending = rest;
    }
    made
}

impl crate::interp::class::PendingLibrary for LazyLibrary {
    fn take_in(&self, class: &Class) {
        let guard = self.state.lock();
        self.take_in_classes(&[class.name.as_str()]);
        if guard.borrow().installing > 0 {
            // Nested in an install of this thread: its class is not complete yet.
            return;
        }
        // A class the library replaced (the table now holds the new one) is done too.
        class
            .rt()
            .pending
            .store(false, std::sync::atomic::Ordering::Release);
    }

    fn take_in_named(&self, name: Sym) -> bool {
        let ix = crate::check::library::index();
        if !ix.is_class(name.as_str()) {
            return false;
        }
        let guard = self.state.lock();
        let todo = ix
            .class_files(name.as_str())
            .iter()
            .any(|&f| !guard.borrow().files[f]);
        if todo {
            self.take_in_classes(&[name.as_str()]);
        }
        todo
    }

    fn take_in_all(&self) {
        let guard = self.state.lock();
        if guard.borrow().all {
            return;
        }
        guard.borrow_mut().all = true;
        let Some(prog) = self.prog.upgrade() else {
            return;
        };
        // Every file, those that declare no class (protocols) too.
        let new: Vec<usize> = {
            let mut t = guard.borrow_mut();
            let new: Vec<usize> = (0..t.files.len()).filter(|&f| !t.files[f]).collect();
            for &f in &new {
                t.files[f] = true;
            }
            new
        };
        if !new.is_empty() {
            self.install(&prog, &new);
        }
        // Nested in an install of this thread, the classes stay marked: the outermost
        // take-in clears its own, and each other one is cleared at its next use (every file
        // is in by then, so that take-in installs nothing).
        if guard.borrow().installing == 0 {
            for c in prog.classes.read().values() {
                c.rt()
                    .pending
                    .store(false, std::sync::atomic::Ordering::Release);
            }
        }
        self.order_subclasses(&prog);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
