//! The actor runtime of bt: scheduler, mailboxes, timers, registry, supervisors, snapshots
//! (docs/architecture.md, "Crates").

pub mod runtime;

pub(crate) use bt_base::memory;
pub(crate) use bt_values::value;
