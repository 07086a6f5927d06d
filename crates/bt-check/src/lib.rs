//! The static checker of bt (docs/architecture.md, "Crates").

pub mod check;

pub(crate) use bt_base::diagnostic;
pub(crate) use bt_syntax::syntax;
