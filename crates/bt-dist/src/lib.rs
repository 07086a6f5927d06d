//! Distribution for bt: named nodes, the name registry, the cookie handshake, Erlang interop
//! and TLS (docs/architecture.md, "Crates").

pub mod dist;

pub(crate) use bt_base::base;
pub(crate) use bt_codec::codec;
pub(crate) use bt_interp::interp;
pub(crate) use bt_runtime::runtime;
pub(crate) use bt_values::value;
