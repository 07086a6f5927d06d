//! A process-aware lock for class-side state: re-entrant within one
//! process, and a process waiting for it **suspends** (its worker thread keeps running other
//! processes). An OS mutex would block the worker while the holder is itself suspended in a
//! sync send, which can stall the whole pool.
//!
//! The lock is handed to waiters in FIFO order. A holder that exits while holding it
//! releases it when its guard drops (the killed process's code unwinds through the guard).

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::runtime::api::RtHandle;
use crate::runtime::cx::Cx;
use crate::runtime::types::{CallError, Exiting, Pid};
use crate::runtime::waiter::Waiter;
use crate::value::Value;

#[derive(Default)]
struct State {
    owner: Option<Pid>,
    depth: u32,
    waiters: VecDeque<(Pid, Arc<Waiter>)>,
}

/// A re-entrant lock owned by a process (see the module docs).
#[derive(Default)]
pub struct ProcLock {
    st: Mutex<State>,
}

/// Holds a [`ProcLock`] until dropped.
pub struct ProcLockGuard<'a> {
    lock: &'a ProcLock,
    rt: RtHandle,
}

impl ProcLock {
    pub fn new() -> ProcLock {
        ProcLock::default()
    }

    /// Takes the lock for the current process, suspending while another process holds it.
    /// Errs if the process is told to exit while waiting.
    pub fn lock(&self, cx: &mut Cx<'_>) -> Result<ProcLockGuard<'_>, Exiting> {
        let me = cx.pid();
        let w = {
            let mut s = self.st.lock();
            match s.owner {
                None => {
                    s.owner = Some(me);
                    s.depth = 1;
                    return Ok(self.guard(cx));
                }
                Some(o) if o == me => {
                    s.depth += 1;
                    return Ok(self.guard(cx));
                }
                Some(_) => {
                    let w = Waiter::new(None, None);
                    s.waiters.push_back((me, w.clone()));
                    w
                }
            }
        };
        match cx.wait(&w, None) {
            Ok(_) => Ok(self.guard(cx)),
            Err(e) => {
                let handed_to_me = {
                    let mut s = self.st.lock();
                    s.waiters.retain(|(_, x)| !Arc::ptr_eq(x, &w));
                    s.owner == Some(me)
                };
                if handed_to_me {
                    drop(self.guard(cx)); // ownership arrived as we were told to exit
                }
                Err(match e {
                    CallError::Exiting(r) => Exiting(r),
                    _ => Exiting(crate::runtime::types::ExitReason::Killed),
                })
            }
        }
    }

    fn guard(&self, cx: &Cx<'_>) -> ProcLockGuard<'_> {
        ProcLockGuard {
            lock: self,
            rt: cx.rt().clone(),
        }
    }

    /// The process holding the lock, if any.
    pub fn owner(&self) -> Option<Pid> {
        self.st.lock().owner
    }

    fn unlock(&self, rt: &RtHandle) {
        let next = {
            let mut s = self.st.lock();
            s.depth = s.depth.saturating_sub(1);
            if s.depth > 0 {
                return;
            }
            s.owner = None;
            match s.waiters.pop_front() {
                Some((pid, w)) => {
                    s.owner = Some(pid);
                    s.depth = 1;
                    Some(w)
                }
                None => None,
            }
        };
        if let Some(w) = next {
            w.complete(&rt.0, Ok(Value::Nil));
        }
    }
}

impl Drop for ProcLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.unlock(&self.rt);
    }
}
