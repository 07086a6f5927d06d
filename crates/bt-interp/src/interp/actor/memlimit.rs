//! Per-actor memory limits (`EngineBuilder::actor_max_memory`): what an actor's
//! memory is, and the check after each message.
//!
//! **What an actor's memory is.** Each actor with a limit has its own
//! [`crate::memory::Account`], a child of the engine's account (when the engine has
//! `max_memory`: everything an actor counts also counts there, so the engine-wide limit still
//! holds over all actors). The account counts the bytes allocated minus the bytes freed while
//! the actor's coroutine runs: `BtActor::handle` charges the thread to it for the length of a
//! message, and the runtime switches the thread's account at every coroutine resume
//! (`memory::in_coroutine`, the one hook in `runtime::sched`), so the account follows the
//! actor across a sync call, `Timer sleep:` or preemption while other processes run on the
//! thread in between. The engine's preemption hook compares it with its limit every step of
//! reductions, and `Ctx::charge` refuses a bulk step (one huge primitive) that would take it
//! past the limit before it allocates: a bomb inside one message stops within one step.
//!
//! **Values that move.** Counting allocations is right within a message but drifts across
//! messages: a value the actor allocated and gave away (a reply, a cast argument) and that
//! another process frees stays counted here; a value another process allocated that this
//! actor frees is credited here. So after a message, when the count has passed half the
//! limit (or is below zero), it is re-based to the **deep size of the actor's state**
//! ([`deep_size`]): between messages an actor holds its state and nothing else. If the state
//! itself is over the limit the message fails with `memory_limit` and the actor crashes (its
//! state rolled back, as for any crash). The next re-base waits until the count has grown by
//! half the room left, so the walk costs at most a few passes over the state per limit's
//! worth of allocation.
//!
//! **Values received.** A message's values count for the receiver when it is delivered
//! ([`ActorMem::before_message`]: their deep size is added to the actor's own count, not
//! to the engine's, which counted them when they were allocated), so an actor that hoards
//! what it is sent meets its limit as one that allocates does; when the value is dropped
//! after the message the free credits it back. When the addition would pass the re-base
//! point, the count is re-based to the state and the message measured together, so a value
//! the state already holds and a message brings again is counted once. The deep size
//! walks Dictionary keys (a String key's text) and what blocks capture (their receiver and
//! the values of their captured variables).
//!
//! **Replies.** A value the actor's own sync call answers counts for it when the reply
//! arrives ([`count_reply`], called by `actor::send::remote_call`), like a message's values
//! at delivery, and the send fails with `memory_limit` at once when that takes the count
//! past the limit: an actor keeping what its calls answer (in a local during one message or
//! in its state) meets its limit as one that allocates does. Past half the limit only what
//! the state does not already hold is added.
//!
//! **Shared values count for every actor that holds them**.
//! Values are immutable and shared by reference, so a value one actor sent another is one
//! allocation both hold; each actor's count includes it. Charging the receiver only for
//! what it does not share with the sender would be unsafe: when the sender later drops
//! its reference nothing is freed (the receiver still holds it) and no account hears of
//! it, so two actors passing values back and forth could keep any amount alive under limits
//! each of them meets. Counting for each holder never understates what an actor keeps
//! alive, matches Erlang (a message is copied into the receiver's heap and
//! `max_heap_size` counts the copy), and cannot end the host early: the engine's
//! `max_memory` counts real bytes once (the allocator). The cost: size an actor's limit
//! for everything it holds, as if messages were copied. Within one actor a value is counted
//! once (the walk visits each shared part once; the re-bases measure state and message
//! together).

use crate::memory::Account;
use crate::value::{Ref, Value};

/// An actor's account and the count at which the next re-base happens.
pub struct ActorMem {
    acct: &'static Account,
    limit: usize,
    rebase_at: isize,
}

impl ActorMem {
    /// An account for a new actor of a program whose engine set `actor_max_memory`.
    pub fn for_program(prog: &crate::interp::program::Program) -> Option<ActorMem> {
        let &(limit, parent) = prog.actor_memory.get()?;
        Some(ActorMem {
            acct: crate::memory::new_actor_account(limit, parent),
            limit,
            rebase_at: half(limit),
        })
    }

    /// The account the actor's messages are charged to.
    pub fn account(&self) -> &'static Account {
        self.acct
    }

    /// After a message: re-bases the count to the deep size of `state` when it drifted far
    /// (see the module doc); answers true when the state is over the limit.
    pub fn after_message(&mut self, state: &[Value]) -> bool {
        crate::memory::flush();
        let used = self.acct.used_signed();
        if (0..=self.rebase_at).contains(&used) {
            return false;
        }
        let size = deep_size(state, self.limit.saturating_add(1));
        self.rebase(size);
        size > self.limit
    }
}

impl ActorMem {
    /// Before a message: its values count for the actor from delivery on (a value it keeps
    /// is then already counted, and the re-base below and after the message measures it
    /// once). When the count would pass `rebase_at`, it is re-based to the deep size of the
    /// state and the message together, so a value the state already holds and the message
    /// brings again counts once.
    pub fn before_message(&mut self, state: &[Value], args: &[Value]) {
        if !args.iter().any(on_heap) {
            return;
        }
        let cap = self.limit.saturating_add(1);
        let received = deep_size(args, cap);
        crate::memory::flush();
        let used = self.acct.used_signed();
        if used.saturating_add(to_isize(received)) <= self.rebase_at {
            self.acct.count_received(received);
            return;
        }
        let size = deep_size_all(&[state, args], cap);
        self.rebase(size);
    }

    fn rebase(&mut self, size: usize) {
        self.acct.set_used(size);
        let room = self.limit.saturating_sub(size);
        self.rebase_at = half(self.limit).max(to_isize(size.saturating_add(room / 2)));
    }
}

/// A value the running actor's sync call answered (`actor::send::remote_call`): it counts
/// for the actor from now on, as a message's values do from delivery, so an actor that
/// keeps what its calls answer — in a local during one message or in its state across
/// messages — meets its limit as one that allocates does (the callee allocated the value,
/// so the actor's allocation count never saw it). A drop credits it back. When the count
/// passes half the limit, only what `state` (the actor's fields) does not already hold is
/// added, so a value kept and answered again is counted once. Nothing happens outside an
/// actor with a limit (the thread's account is then an engine's, which counted the value
/// when it was allocated). Answers true when the count is now over the limit: the caller
/// fails the send with `memory_limit` at once (a loop of calls may run no reduction check
/// before it keeps the next reply).
#[cold]
#[inline(never)]
pub fn count_reply(state: &[Value], reply: &Value) -> bool {
    if !on_heap(reply) {
        return false;
    }
    let Some(acct) = crate::memory::current().filter(|a| a.is_actor()) else {
        return false;
    };
    let limit = acct.limit();
    let cap = limit.saturating_add(1);
    let received = deep_size(std::slice::from_ref(reply), cap);
    crate::memory::flush();
    let near = acct.used_signed().saturating_add(to_isize(received)) > half(limit);
    let add = if near && state.iter().any(on_heap) {
        let held = deep_size(state, cap);
        let both = deep_size_all(
            &[state, std::slice::from_ref(reply)],
            cap.saturating_add(held),
        );
        both.saturating_sub(held)
    } else {
        received
    };
    acct.count_received(add);
    acct.over_any()
}

impl Drop for ActorMem {
    fn drop(&mut self) {
        crate::memory::release_account(self.acct);
    }
}

fn half(limit: usize) -> isize {
    to_isize(limit / 2)
}

fn to_isize(n: usize) -> isize {
    n.min(isize::MAX as usize) as isize
}

/// Bytes of one value's own storage (headers and elements, not what the elements point to).
fn own_size(v: &Value) -> usize {
    const V: usize = std::mem::size_of::<Value>();
    const ARC: usize = 16;
    match v {
        Value::BigInt(b) => ARC + 32 + (b.bits() as usize).div_ceil(8),
        Value::Str(s) => ARC + 24 + s.capacity(),
        Value::Binary(b) => ARC + 24 + b.capacity(),
        Value::List(l) | Value::Queue(l) => ARC + 64 + l.len() * V,
        Value::Array(a) if a.is_compact() => ARC + 32 + a.len(),
        Value::Array(a) => ARC + 32 + a.len() * V,
        Value::Tuple(t) => ARC + 24 + t.capacity() * V,
        Value::Dict(d) => ARC + 64 + d.len() * 2 * V,
        Value::Set(s) => ARC + 64 + s.len() * V,
        Value::Bag(b) => ARC + 64 + b.len() * (V + 8),
        Value::Interval(_) => ARC + 3 * V + 8,
        Value::Object(o) => ARC + 8 + std::mem::size_of_val(&o.fields) + o.fields.len() * V,
        Value::Block(b) => ARC + std::mem::size_of_val(&**b) + b.upvals.len() * (ARC + V),
        // Immediates, symbols, classes and natives (handles, host objects) are not the
        // actor's to count.
        _ => 0,
    }
}

/// Whether `r` was already counted (a shared reference is counted once per walk).
fn first_visit<T>(r: &Ref<T>, seen: &mut std::collections::HashSet<usize>) -> bool {
    Ref::strong_count(r) == 1 || seen.insert(Ref::as_ptr(r) as *const () as usize)
}

/// True for a value with heap storage of its own (what [`deep_size`] may count).
fn on_heap(v: &Value) -> bool {
    matches!(
        v,
        Value::BigInt(_)
            | Value::Str(_)
            | Value::Binary(_)
            | Value::List(_)
            | Value::Queue(_)
            | Value::Array(_)
            | Value::Tuple(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::Bag(_)
            | Value::Interval(_)
            | Value::Object(_)
            | Value::Block(_)
    )
}

/// The approximate heap bytes reachable from `roots` (each shared part once), walked
/// iteratively (deep structures do not recurse); stops early once past `cap`. Dictionary
/// keys (a String key's text) and what a block captures (its receiver and the values in
/// its captured variables) are part of it.
pub fn deep_size(roots: &[Value], cap: usize) -> usize {
    deep_size_all(&[roots], cap)
}

/// [`deep_size`] of several root sets walked together: a part reachable from two of them
/// counts once.
pub fn deep_size_all(roots: &[&[Value]], cap: usize) -> usize {
    let mut w = Walk {
        seen: std::collections::HashSet::new(),
        total: 0,
        cap,
        cells: Vec::new(),
    };
    for r in roots {
        w.walk(r.iter());
    }
    // Values read out of captured variables (cloned from their cells, so they are walked
    // as owned roots; a cell's value met twice counts once through `seen`).
    while let Some(v) = w.cells.pop() {
        if w.total > w.cap {
            break;
        }
        w.walk(std::iter::once(&v));
    }
    w.total
}

struct Walk {
    seen: std::collections::HashSet<usize>,
    total: usize,
    cap: usize,
    cells: Vec<Value>,
}

impl Walk {
    fn walk<'a>(&mut self, roots: impl Iterator<Item = &'a Value>) {
        let seen = &mut self.seen;
        let mut work: Vec<&Value> = roots.filter(|v| on_heap(v)).collect();
        while let Some(v) = work.pop() {
            let fresh = match v {
                Value::BigInt(r) => first_visit(r, seen),
                Value::Str(r) => first_visit(r, seen),
                Value::Binary(r) => first_visit(r, seen),
                Value::List(r) | Value::Queue(r) => first_visit(r, seen),
                Value::Array(r) => first_visit(r, seen),
                Value::Tuple(r) => first_visit(r, seen),
                Value::Dict(r) => first_visit(r, seen),
                Value::Set(r) => first_visit(r, seen),
                Value::Bag(r) => first_visit(r, seen),
                Value::Interval(r) => first_visit(r, seen),
                Value::Object(r) => first_visit(r, seen),
                Value::Block(r) => first_visit(r, seen),
                _ => false,
            };
            if !fresh {
                continue;
            }
            self.total = self.total.saturating_add(own_size(v));
            if self.total > self.cap {
                return;
            }
            match v {
                Value::List(l) | Value::Queue(l) => work.extend(l.iter()),
                Value::Array(a) if !a.is_compact() => work.extend(a.iter()),
                Value::Tuple(t) => work.extend(t.iter()),
                Value::Dict(d) => {
                    // Key slots are in `own_size`; a stored key's own storage (a String
                    // key's text) is walked with the values.
                    for (k, e) in d.iter_unordered() {
                        if let Some(k) = k.stored() {
                            work.push(k);
                        }
                        work.push(e);
                    }
                }
                Value::Set(s) => work.extend(s.iter().map(|k| &k.0)),
                Value::Bag(b) => work.extend(b.keys().map(|k| &k.0)),
                Value::Object(o) => work.extend(o.fields.iter()),
                Value::Block(b) => {
                    work.push(&b.recv);
                    for c in b.upvals.iter() {
                        // A cell locked by a running block is skipped (never waited for).
                        if let Some(g) = c.try_lock() {
                            if on_heap(&g) {
                                self.cells.push(g.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_size_counts_contents_and_shared_parts_once() {
        let s = Value::str("x".repeat(10_000));
        let one = deep_size(std::slice::from_ref(&s), usize::MAX);
        assert!((10_000..10_200).contains(&one), "{one}");
        // The same String twice in a List: counted once.
        let l = Value::list(vec![s.clone(), s.clone()]);
        let two = deep_size(&[l], usize::MAX);
        assert!(two < one + 300, "{two}");
        // Two distinct Strings: counted twice.
        let l = Value::list(vec![s, Value::str("y".repeat(10_000))]);
        assert!(deep_size(&[l], usize::MAX) > 20_000);
    }

    #[test]
    fn deep_size_counts_string_keys_and_measures_roots_together_once() {
        let key = Value::str("k".repeat(50_000));
        let d = Value::Dict(crate::value::Ref::new(
            [(key.clone(), Value::Int(1))].into_iter().collect(),
        ));
        let size = deep_size(std::slice::from_ref(&d), usize::MAX);
        assert!(size > 50_000, "{size}");
        // The key and a message carrying it again, measured together: counted once.
        let both = deep_size_all(
            &[std::slice::from_ref(&d), std::slice::from_ref(&key)],
            usize::MAX,
        );
        assert!(both < size + 200, "{both} vs {size}");
    }

    #[test]
    fn a_reply_counts_for_an_actor_once_and_only_in_an_actor() {
        let kept = Value::str("k".repeat(300_000));
        let fresh = Value::str("f".repeat(300_000));
        let state = [kept.clone()];
        // An engine's account (not an actor's): the allocator counted the reply already.
        let engine = crate::memory::new_account(1 << 20);
        {
            let _s = crate::memory::Scope::enter(Some(engine));
            assert!(!count_reply(&state, &fresh));
            assert_eq!(engine.used_signed(), 0);
        }
        crate::memory::release_account(engine);
        let actor = crate::memory::new_actor_account(1 << 20, None);
        let _s = crate::memory::Scope::enter(Some(actor));
        // Under half the limit: the reply's deep size.
        assert!(!count_reply(&state, &fresh));
        let one = actor.used_signed();
        assert!((300_000..300_200).contains(&one), "{one}");
        // Past half: a reply the state already holds adds (almost) nothing, a fresh one
        // its size, and the account reports when it is over.
        assert!(!count_reply(&state, &fresh));
        let two = actor.used_signed();
        assert!(!count_reply(&state, &kept));
        assert!(
            actor.used_signed() - two < 200,
            "{}",
            actor.used_signed() - two
        );
        assert!(count_reply(&state, &Value::str("g".repeat(600_000))));
        drop(_s);
        crate::memory::release_account(actor);
    }

    #[test]
    fn deep_size_walks_a_deep_structure_without_recursing_and_stops_at_the_cap() {
        let mut v = Value::Nil;
        for i in 0..200_000 {
            v = Value::list(vec![v, Value::Int(i)]);
        }
        let full = deep_size(std::slice::from_ref(&v), usize::MAX);
        assert!(full > 200_000 * 32, "{full}");
        let capped = deep_size(std::slice::from_ref(&v), 1000);
        assert!(capped < 2000, "{capped}");
    }
}
