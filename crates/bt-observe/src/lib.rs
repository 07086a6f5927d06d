//! The observer of bt: the HTTP server of `bt run --observe`, the live page, `bt top`
//! (docs/architecture.md, "Crates").

pub mod observe;

pub(crate) use bt_base::base;
#[cfg(feature = "dist")]
pub(crate) use bt_dist::dist;
#[cfg(feature = "dist")]
pub(crate) use bt_interp::interp;
pub(crate) use bt_runtime::runtime;
