//! Library methods lowered on first use ([`LazyMethod`], `Method::Lazy`).
//!
//! Every program (every `bt::Engine`) has its own class table and its own lowered code — a
//! script may redefine library methods, and send sites carry inline caches that point into
//! their program (`eval::hit`). Lowering all ~1,700 methods of the built-in library into each
//! new program was two thirds of creating an engine, for the few dozen a typical embedding
//! runs. So the library's methods are installed as `Method::Lazy`: the method's `&'static`
//! syntax tree (the library is parsed once per process, `Interpreter::load_stdlib`) and a
//! weak reference to its class; the first lookup lowers it (`Class::lookup`, or any reader
//! through [`crate::interp::eval::Method::forced`]) and keeps the result for the life of the
//! method. The lowering itself (`LazyMethod::force`) is defined by the lowering layer
//! (`lower/lazy.rs`); this file is the data. The code is still this program's own, so isolation is unchanged
//! (tests/engine/isolation.rs). A program made from the library image
//! (`interp::library_image`) makes a library method's `LazyMethod` only when the method is
//! first read (its slot in `interp::method_table`).
//!
//! The owner of the lowering (fields, class variables) is read from the class when the method
//! is first used. For library classes this is what loading saw, except when a user extends a
//! built-in class in place with new `classState:` variables of the same names a library method
//! reads as globals — such a method then sees the class variable.

use std::sync::{Arc, OnceLock, Weak};

use crate::interp::class::Class;
use crate::interp::eval::code::CompiledMethod;
use crate::syntax::ast::MethodDecl;
use crate::value::Sym;

/// A library method not lowered yet (or lowered on first use; see the module doc).
pub struct LazyMethod {
    pub selector: Sym,
    pub class_side: bool,
    pub(crate) decl: &'static MethodDecl,
    /// The class the method belongs to (its fields and class variables are read when lowering).
    pub(crate) class: Weak<Class>,
    pub(crate) code: OnceLock<Arc<CompiledMethod>>,
}

impl std::fmt::Debug for LazyMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LazyMethod({}, lowered: {})",
            self.selector,
            self.code.get().is_some()
        )
    }
}

impl LazyMethod {
    pub fn new(class: &Arc<Class>, decl: &'static MethodDecl) -> LazyMethod {
        LazyMethod::with_class(Arc::downgrade(class), decl)
    }

    /// A library method of the class `class` refers to (a program's slot of a shared base
    /// table, `interp::method_table`).
    pub fn with_class(class: Weak<Class>, decl: &'static MethodDecl) -> LazyMethod {
        LazyMethod {
            selector: Sym::new(&decl.selector),
            class_side: decl.class_side,
            decl,
            class,
            code: OnceLock::new(),
        }
    }

    /// The method's declaration (the library's syntax tree).
    pub fn decl(&self) -> &'static MethodDecl {
        self.decl
    }

    /// The lowered method, when it has been used.
    pub fn get(&self) -> Option<&Arc<CompiledMethod>> {
        self.code.get()
    }

    /// The method's documentation comment.
    pub fn doc(&self) -> Option<String> {
        self.decl.doc.as_ref().map(|d| d.text().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::class::ClassExt;
    use crate::interp::eval::Method;

    #[test]
    fn every_library_method_lowers_and_is_installed_lazily() {
        let vm = crate::interp::Interpreter::new(Default::default());
        let classes: Vec<_> = vm.prog.classes.read().values().cloned().collect();
        let (mut lazy, mut eager) = (0, 0);
        for c in classes {
            for table in [&c.methods(), &c.class_methods()] {
                for (sel, m) in table.read().iter() {
                    match m {
                        Method::Lazy(l) => {
                            lazy += 1;
                            if let Err(d) = l.check() {
                                panic!("{}>>{sel} does not lower: {:?}", c.name, d[0].message);
                            }
                        }
                        Method::Compiled(_) => eager += 1,
                        _ => {}
                    }
                }
            }
        }
        assert!(lazy > 100, "{lazy} lazy library methods");
        // Only standalone library methods (`Foo >> bar`) are lowered when the library loads.
        assert!(eager < 50, "{eager} library methods lowered up front");
    }

    /// A library method whose body (parsed on first use, `ast::Body`) has a syntax error
    /// answers the parser's diagnostic when lowered, and runs an empty body.
    #[test]
    fn a_library_body_with_a_syntax_error_reports_it_when_lowered() {
        let src: &'static str = Box::leak(
            "Object subclass: A\n  ok => 1\n  bad => 1 + + 2\n"
                .to_string()
                .into_boxed_str(),
        );
        let opts = crate::syntax::Options {
            allow_primitives: true,
        };
        let (module, diags) = crate::syntax::parse_library(src, opts);
        assert!(diags.is_empty(), "{diags:?}");
        let module: &'static crate::syntax::ast::Module = Box::leak(Box::new(module));
        let crate::syntax::ast::Item::Class(c) = &module.items[0] else {
            panic!("a class");
        };
        let decl = |i: usize| match &c.members[i] {
            crate::syntax::ast::Member::Method(m) => m,
            _ => panic!("a method"),
        };
        let owner = || crate::interp::lower::Owner::toplevel();
        assert!(crate::interp::lower::lower_decl(decl(0), owner()).is_ok());
        let errs = crate::interp::lower::lower_decl(decl(1), owner()).unwrap_err();
        assert_eq!(errs[0].code, "E0101", "{errs:?}");
        let lm = super::LazyMethod::with_class(std::sync::Weak::new(), decl(1));
        assert!(lm.check().is_err());
        assert_eq!(lm.force().code.nparams, 0);
    }
}
