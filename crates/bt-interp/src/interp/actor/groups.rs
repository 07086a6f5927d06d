//! This node's process-group memberships (one [`Groups`] per actor system); the primitives
//! of `ProcessGroup` that read and change them are `actor::prims::process_group`.

use std::collections::{HashMap, HashSet};

use parking_lot::Mutex;

use crate::runtime::ProcRef;
use crate::value::Sym;

/// This node's group memberships.
#[derive(Default)]
pub struct Groups {
    pub(crate) inner: Mutex<State>,
}

#[derive(Default)]
pub(crate) struct State {
    /// Members by group, one entry per join (a process joined twice is listed twice).
    pub(crate) members: HashMap<Sym, Vec<ProcRef>>,
    /// Processes whose exit is watched (once each).
    pub(crate) watched: HashSet<u64>,
    /// The round-robin position of each group (`nextMember:`).
    pub(crate) next: HashMap<Sym, usize>,
}

impl Groups {
    /// Every group with a member here and the process numbers (one per membership).
    pub fn snapshot(&self) -> Vec<(Sym, Vec<u64>)> {
        let st = self.inner.lock();
        st.members
            .iter()
            .map(|(g, ps)| (*g, ps.iter().map(|p| p.pid().number).collect()))
            .collect()
    }

    pub(crate) fn local(&self, group: Sym) -> Vec<ProcRef> {
        let st = self.inner.lock();
        let mut v = st.members.get(&group).cloned().unwrap_or_default();
        v.sort_by_key(|p| p.pid().number);
        v
    }
}
