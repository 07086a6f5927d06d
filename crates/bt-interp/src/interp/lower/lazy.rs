//! Lowering a library method on first use: [`LazyMethod::force`] (reached from
//! `Method::forced` and `Class::lookup`) and [`lower_decl`]. The method type itself is a
//! program-layer data type (`interp::lazy_method`); lowering it belongs here, above the
//! evaluator's types.

use std::sync::Arc;

use crate::interp::eval::code::{CompiledMethod, FnCode, NO_FILE};
use crate::interp::lazy_method::LazyMethod;
use crate::interp::lower::{Lowerer, Owner};
use crate::syntax::ast::MethodDecl;

impl LazyMethod {
    /// The lowered method (lowered now on first use).
    pub fn force(&self) -> &Arc<CompiledMethod> {
        self.code.get_or_init(|| {
            let md = self.decl;
            let owner = match self.class.upgrade() {
                Some(c) => Owner::of_class(&c, md.class_side),
                // Only a retired method of a dropped class: nothing can run it.
                None => Owner::toplevel(),
            };
            let code = match lower_decl(md, owner) {
                Ok(code) => code,
                // The library parses and lowers without errors (the test below lowers every
                // method); should one not, it runs an empty body.
                Err(_) => Arc::new(FnCode {
                    nparams: md.params.len() as u32,
                    nslots: md.params.len() as u32,
                    ..Default::default()
                }),
            };
            Arc::new(CompiledMethod {
                selector: self.selector,
                code,
                class_side: md.class_side,
                source: md.source.to_string(),
                doc: md.doc.as_ref().map(|d| d.text().into_owned()),
                sealed: md.sealed,
            })
        })
    }

    /// Lowers the method now and reports what lowering said (tests).
    pub fn check(&self) -> Result<(), Vec<crate::diagnostic::Diagnostic>> {
        let md = self.decl;
        let owner = match self.class.upgrade() {
            Some(c) => Owner::of_class(&c, md.class_side),
            None => Owner::toplevel(),
        };
        lower_decl(md, owner).map(|_| ())
    }
}

/// Lowers a library method; a body with syntax errors (parsed now, on first use: see
/// `ast::Body`) answers them instead.
pub(crate) fn lower_decl(
    md: &'static MethodDecl,
    owner: Owner,
) -> Result<Arc<FnCode>, Vec<crate::diagnostic::Diagnostic>> {
    let errors = md.body.errors();
    if errors.iter().any(|d| d.is_error()) {
        return Err(errors.to_vec());
    }
    Lowerer::new(NO_FILE, owner).method(md)
}
