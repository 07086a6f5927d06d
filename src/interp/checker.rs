//! The standard checker: the static checker (`crate::check`) loaded with what this
//! interpreter provides — the embedded `stdlib/*.bt` declarations and every selector bound to a
//! Rust primitive. It lives here, not in `check`, because it needs the primitive tables.

use crate::check::Checker;

/// The checker every command starts from: the checker's built-in table, the declarations of
/// the embedded `stdlib/*.bt`, and every selector bound to a Rust primitive (so a DNU hint is
/// never given for a selector the run time understands). Built once per process.
pub fn standard_checker() -> Checker {
    static STANDARD: std::sync::OnceLock<Checker> = std::sync::OnceLock::new();
    STANDARD
        .get_or_init(|| {
            let mut c = Checker::new();
            c.add_stdlib_sources(crate::interp::stdlib::FILES);
            let mut prims = crate::interp::eval::Prims::default();
            crate::interp::prims::register_all(&mut prims);
            c.add_primitive_selectors(prims.instance.keys().map(|(cls, sel)| (*cls, *sel, false)));
            c.add_primitive_selectors(prims.class_side.keys().map(|(cls, sel)| (*cls, *sel, true)));
            c
        })
        .clone()
}
