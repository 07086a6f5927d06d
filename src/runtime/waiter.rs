//! A one-shot reply slot that a suspended coroutine or a blocked OS thread waits on.
//!
//! A [`Waiter`] is completed exactly once (by the reply, a timeout, a death notice or a
//! kill — whichever comes first; later completions are ignored) and wakes at most one
//! waiter, so a suspended coroutine is resumed exactly once per wait.
//!
//! Reply waiters double as the links of the **waiting chain** used for deadlock detection:
//! each records the process that waits (`caller`) and the reply waiter of the message that
//! process was handling when it made the call (`parent`). A message that came from a caller
//! on another node ends its chain in a [`RemoteChain`] (deadlock detection across nodes).

use std::any::Any;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::runtime::sched::Shared;
use crate::runtime::types::{CallError, Pid};
use crate::value::Value;

/// Who to wake when a waiter completes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wake {
    /// A coroutine suspended on `worker` in `slot` (generation `gen`).
    Co { worker: usize, slot: u32, gen: u32 },
    /// An OS thread blocked on the condition variable.
    Thread,
}

struct State {
    done: bool,
    result: Option<Result<Value, CallError>>,
    target: Option<Wake>,
}

pub(crate) struct Waiter {
    state: Mutex<State>,
    cv: Condvar,
    /// The process waiting on this (for reply waiters), for deadlock detection.
    pub caller: Option<Pid>,
    /// The reply waiter of the message `caller` was handling when it made the call.
    pub parent: Option<Arc<Waiter>>,
    /// For a message from a caller on another node: the processes waiting on it there.
    pub remote: Option<Arc<RemoteChain>>,
}

/// The end of a waiting chain that lies on other nodes: the processes (of any node) waiting
/// on a call that came from another node. The distribution layer makes it from the request
/// and sends it on with the remote calls made while that call is handled.
pub struct RemoteChain {
    /// Numbers of this node's processes on the chain (it left this node and came back).
    pub local: Vec<u64>,
    /// The whole chain in the distribution layer's form (opaque here).
    pub wire: Box<dyn Any + Send + Sync>,
}

/// A link of a waiting chain that a process hands to a task it waits for without a call
/// (a `Parallel` block, an `announceAndWait:` handler): the task's calls then see the
/// process (and whatever waits on it) as waiting on them ([`crate::runtime::Cx::waited_by_me`],
/// [`crate::runtime::Cx::set_waited_by`]).
#[derive(Clone)]
pub struct WaitedBy(pub(crate) Arc<Waiter>);

impl Waiter {
    pub(crate) fn new(caller: Option<Pid>, parent: Option<Arc<Waiter>>) -> Arc<Waiter> {
        Waiter::new_for(caller, parent, None)
    }

    /// [`Waiter::new`] with the waker already registered (a sync call's reply slot: the
    /// caller suspends unconditionally, see [`Waiter::reset`]).
    pub(crate) fn new_for(
        caller: Option<Pid>,
        parent: Option<Arc<Waiter>>,
        target: Option<Wake>,
    ) -> Arc<Waiter> {
        Arc::new(Waiter {
            state: Mutex::new(State {
                done: false,
                result: None,
                target,
            }),
            cv: Condvar::new(),
            caller,
            parent,
            remote: None,
        })
    }

    /// The reply slot of a message from a caller on another node, which nobody here waits
    /// on: it only ends the chain of whoever handles the message.
    pub(crate) fn new_remote(chain: Arc<RemoteChain>) -> Arc<Waiter> {
        Arc::new(Waiter {
            state: Mutex::new(State {
                done: false,
                result: None,
                target: None,
            }),
            cv: Condvar::new(),
            caller: None,
            parent: None,
            remote: Some(chain),
        })
    }

    /// Makes a completed waiter that nobody else references ready for the next call of the
    /// same caller (`Cx::call` reuses its reply slot instead of allocating one per call).
    /// `target` is registered at once (no lock: nobody else holds the waiter): a coroutine
    /// caller then suspends without checking for an early completion, because a completion
    /// that comes before the suspension only queues the coroutine's resumption on its own
    /// worker, which cannot run it before the suspension is done.
    pub(crate) fn reset(&mut self, parent: Option<Arc<Waiter>>, target: Option<Wake>) {
        let s = self.state.get_mut();
        s.done = false;
        s.result = None;
        s.target = target;
        self.parent = parent;
    }

    /// Completes the waiter with `r` unless it already completed; wakes its waiter.
    /// Answers whether this call completed it.
    pub(crate) fn complete(&self, shared: &Shared, r: Result<Value, CallError>) -> bool {
        let target = {
            let mut s = self.state.lock();
            if s.done {
                return false;
            }
            s.done = true;
            s.result = Some(r);
            s.target.take()
        };
        match target {
            Some(Wake::Co { worker, slot, gen }) => shared.push_resume(worker, slot, gen),
            Some(Wake::Thread) => {
                self.cv.notify_all();
            }
            None => {}
        }
        true
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state.lock().done
    }

    /// Registers who to wake. Answers false (and registers nothing) if already complete, in
    /// which case the waiter must not suspend.
    pub(crate) fn set_target(&self, w: Wake) -> bool {
        let mut s = self.state.lock();
        if s.done {
            return false;
        }
        s.target = Some(w);
        true
    }

    /// Takes the result after completion.
    pub(crate) fn take(&self) -> Result<Value, CallError> {
        self.state
            .lock()
            .result
            .take()
            .unwrap_or(Err(CallError::ActorDead))
    }

    /// Blocks the calling OS thread until completion, then takes the result.
    pub(crate) fn wait_thread(&self) -> Result<Value, CallError> {
        let mut s = self.state.lock();
        while !s.done {
            s.target = Some(Wake::Thread);
            self.cv.wait(&mut s);
        }
        s.result.take().unwrap_or(Err(CallError::ActorDead))
    }
}

/// Whether `pid` is waiting somewhere along the chain starting at `w` (on this node, or
/// on the chain's part that came from other nodes).
pub(crate) fn chain_contains(mut w: Option<&Arc<Waiter>>, pid: Pid) -> bool {
    while let Some(x) = w {
        if x.caller == Some(pid) {
            return true;
        }
        if let Some(r) = &x.remote {
            return pid.node == 0 && !pid.service && r.local.contains(&pid.number);
        }
        w = x.parent.as_ref();
    }
    false
}

/// The processes waiting along the chain starting at `w`, nearest first, and the part of
/// the chain on other nodes.
pub(crate) fn chain_of(mut w: Option<&Arc<Waiter>>) -> (Vec<Pid>, Option<Arc<RemoteChain>>) {
    let mut pids = Vec::new();
    while let Some(x) = w {
        if let Some(p) = x.caller {
            pids.push(p);
        }
        if let Some(r) = &x.remote {
            return (pids, Some(r.clone()));
        }
        w = x.parent.as_ref();
    }
    (pids, None)
}
