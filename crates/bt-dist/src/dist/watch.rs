//! Monitors local processes hold on peer processes ([`Watch`]): starting one (a
//! `MONITOR_P` to the peer) and cancelling it. The peer's `'DOWN'` and a lost link end
//! them in [`super::conn`] and [`super::node`].

use std::sync::atomic::Ordering;

use eetf::Term;
use erl_dist::message::Message;
use erl_dist::term::PidOrAtom;

use super::state::{Inner, Watch};
use super::terms::{atom, frame, my_pid, my_ref};

/// Monitors `to` (a pid or a registered name) on connected peer `peer` from local process
/// `from`: answers the watch id.
pub(crate) fn watch(
    inner: &Inner,
    from: u64,
    peer: &str,
    to: PidOrAtom,
    down: Box<dyn FnOnce(Term) + Send>,
) -> u64 {
    let n = inner.serial.fetch_add(1, Ordering::Relaxed);
    let reference = my_ref(inner, n);
    let from = my_pid(inner, from);
    let m = Message::monitor_p(from.clone(), to.clone(), reference.clone());
    inner.watches.lock().insert(
        n,
        Watch {
            peer: peer.to_string(),
            from,
            to,
            reference,
            down,
        },
    );
    if !inner.send_to(peer, frame(m)) {
        let w = inner.watches.lock().remove(&n);
        if let Some(w) = w {
            (w.down)(atom("noconnection"));
        }
    }
    n
}

/// Cancels a watch; true if it had not fired.
pub(crate) fn unwatch(inner: &Inner, id: u64) -> bool {
    let w = inner.watches.lock().remove(&id);
    match w {
        Some(w) => {
            let m = Message::demonitor_p(w.from, w.to, w.reference);
            inner.send_to(&w.peer, frame(m));
            true
        }
        None => false,
    }
}
