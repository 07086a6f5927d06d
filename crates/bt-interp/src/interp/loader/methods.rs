//! Installing one method into a class: lowering a declaration (eagerly for user code), the
//! method table insert with its documentation, and the synthesized accessors of Value
//! classes (`x`, `withX:`, the keyword constructor). `install` in `loader.rs` decides what
//! to install; this is how.

use crate::interp::class::ClassExt;
use std::sync::Arc;

use super::*;

/// Lowers one method declaration for `class`.
pub(super) fn lower_method(
    prog: &Program,
    class: &ClassRef,
    md: &ast::MethodDecl,
    file: u32,
    stdlib: bool,
) -> Result<PendingMethod, Vec<Diagnostic>> {
    if let Some(p) = &md.primitive {
        let (selector, f) = lower_primitive(prog, class, md, p)?;
        return Ok(PendingMethod {
            class: class.clone(),
            class_side: md.class_side,
            selector,
            method: Method::Prim(f),
            doc: md.doc.as_ref().map(|d| d.text().into_owned()),
        });
    }
    let selector = Sym::new(&md.selector);
    let owner = Owner::of_class(class, md.class_side);
    let code = Lowerer::new(if stdlib { NO_FILE } else { file }, owner).method(md)?;
    Ok(PendingMethod {
        class: class.clone(),
        class_side: md.class_side,
        selector,
        method: Method::Compiled(Arc::new(CompiledMethod {
            selector,
            code,
            class_side: md.class_side,
            source: md.source.to_string(),
            doc: md.doc.as_ref().map(|d| d.text().into_owned()),
            sealed: md.sealed,
        })),
        doc: md.doc.as_ref().map(|d| d.text().into_owned()),
    })
}

/// The selector and registered primitive of `md`, a `=> @primitive p` declaration (an
/// error when `p` names no primitive of `class`).
pub(super) fn lower_primitive(
    prog: &Program,
    class: &ClassRef,
    md: &ast::MethodDecl,
    p: &ast::Ident,
) -> Result<(Sym, crate::interp::registry::Prim), Vec<Diagnostic>> {
    let selector = Sym::new(&md.selector);
    // A primitive's name not interned names no registered primitive.
    let name = if p.name == md.selector {
        Some(selector)
    } else {
        Sym::lookup(&p.name)
    };
    let f = name
        .and_then(|name| prog.prims.find(class.name, md.class_side, name))
        .or_else(|| prog.prims.find(class.name, md.class_side, selector));
    match f {
        Some(f) => Ok((selector, f)),
        None => Err(vec![Diagnostic::error(
            "E0308",
            format!(
                "unknown primitive '{}' for {}>>{}",
                p.name,
                class.name.as_str(),
                md.selector
            ),
            p.span,
        )]),
    }
}

pub(super) fn install_method(prog: &Program, pm: PendingMethod) {
    // A library `@primitive` declaration binds the primitive already installed: it is not an
    // override of Integer arithmetic.
    if !pm.class_side
        && !matches!(pm.method, Method::Prim(_))
        && Arc::ptr_eq(&pm.class, &prog.core.integer)
        && [
            "+", "-", "*", "<", ">", "<=", ">=", "==", "/=", "=:=", "=/=", "%",
        ]
        .contains(&pm.selector.as_str())
    {
        prog.arith_overridden
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // A library `@primitive` declaration of the primitive the class already has (installed
    // with the class, `Program::install_prims`): nothing to replace.
    if let Method::Prim(p) = &pm.method {
        let table = if pm.class_side {
            &pm.class.class_methods()
        } else {
            &pm.class.methods()
        };
        let same = matches!(table.read().get(&pm.selector),
            Some(Method::Prim(q)) if q.f as usize == p.f as usize && q.cost == p.cost);
        if same {
            if let Some(d) = pm.doc {
                insert_doc(&pm.class, pm.class_side, pm.selector, d);
            }
            return;
        }
    }
    if let Some(d) = pm.doc {
        insert_doc(&pm.class, pm.class_side, pm.selector, d);
    }
    prog.set_method(&pm.class, pm.class_side, pm.selector, pm.method);
}

pub(super) fn insert_doc(class: &ClassRef, class_side: bool, sel: Sym, d: String) {
    let key = if class_side {
        format!("class {sel}")
    } else {
        sel.as_str().to_string()
    };
    class.method_docs.write().insert(key, d);
}
