//! The value codec of bt: the walker, the binary wire format, Erlang terms and serde to and
//! from Rust (docs/architecture.md, "Crates").

pub mod codec;

pub(crate) use bt_interp::interp;
pub(crate) use bt_runtime::runtime;
pub(crate) use bt_syntax::syntax;
pub(crate) use bt_values::value;
