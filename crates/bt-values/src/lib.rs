//! The values layer of bt: [`value::Value`], its collections' storage, term order and
//! equality, the data of classes and blocks (docs/architecture.md, "Crates").

pub mod value;

pub(crate) use bt_base::base;
