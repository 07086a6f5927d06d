//! The primitives of processes, nodes and supervision: `Actor`, `Pid`, `Reference`
//! (`actor`), `Node` and the references to processes of other nodes (`node`, with `erl`,
//! `peer`, `remote`), cluster-wide names (`global_names`), `ProcessGroup`
//! (`process_group`), per-node queries (`node_query`), the observer's snapshots
//! (`observer`) and `Supervisor`/`ProcessNavigation` (`supervision`). Registered from
//! `prims::register_all` through [`register`].

use crate::interp::eval::Prims;

pub mod actor;
pub mod global_names;
pub mod node;
pub mod node_query;
pub mod observer;
pub mod process_group;
pub mod supervision;

/// Registers every primitive of this part (the process-reference kinds first: the send path
/// tries them in registration order).
pub fn register(p: &mut Prims) {
    actor::register(p);
    node::register(p);
    node_query::register(p);
    global_names::register(p);
    process_group::register(p);
    supervision::register(p);
    supervision::nav::register(p);
    observer::register(p);
}
