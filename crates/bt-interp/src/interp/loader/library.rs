//! The built-in library's side of loading: its declarations are `'static` (parsed once per
//! process), so its primitives, standalone methods and documentation are resolved once and
//! shared by every program; its other methods are lowered on first use.

use crate::interp::class::ClassExt;
use std::collections::HashMap;
use std::sync::Arc;

use super::methods::lower_primitive;
use super::{install, Installed, SourceUnit};
use crate::interp::class::Class;
use crate::interp::eval::Method;
use crate::interp::program::Program;
use crate::syntax::ast::{self, Item, Member};
use crate::value::{ClassRef, Sym};

/// [`install_declarations`] for the built-in library, parsed once per process: its methods
/// are lowered on first use (`interp::lazy_method`) and their documentation is read from
/// the syntax trees ([`library_doc`]) instead of being copied into every program.
pub fn install_library(prog: &Program, units: &'static [SourceUnit]) -> Installed {
    // The documentation map is built on the first doc query, not at start-up.
    LIBRARY_UNITS.get_or_init(|| units);
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
    // Sized for the library's ~1,350 primitive declarations: filling it never rehashes.
    let memo = MEMO.get_or_init(|| {
        parking_lot::RwLock::new(Memo::with_capacity_and_hasher(2048, Default::default()))
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
type LibraryDocs = HashMap<(Sym, bool, Sym), &'static str, foldhash::fast::RandomState>;

static LIBRARY_DOCS: std::sync::OnceLock<LibraryDocs> = std::sync::OnceLock::new();
/// The library's units, kept by [`install_library`] for [`library_doc`]'s first call.
static LIBRARY_UNITS: std::sync::OnceLock<&'static [SourceUnit]> = std::sync::OnceLock::new();

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
pub fn library_doc(class: &Class, class_side: bool, sel: Sym) -> Option<&'static str> {
    let table = if class_side {
        class.class_methods().read()
    } else {
        class.methods().read()
    };
    match table.get(&sel)? {
        Method::Lazy(l) => l.doc(),
        Method::Prim(_) => {
            let units = *LIBRARY_UNITS.get()?;
            LIBRARY_DOCS
                .get_or_init(|| library_docs(units))
                .get(&(class.name, class_side, sel))
                .copied()
        }
        _ => None,
    }
}
