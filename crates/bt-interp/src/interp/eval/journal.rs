//! An actor message's rollback journal: how a collection in an actor's state is updated in
//! place while the message's rollback copy still refers to it.
//!
//! Before each message an actor keeps a copy of its state slots (`actor::behaviour`'s
//! snapshot), put back if the message fails. The copy shares each slot's value, so
//! `self.items := self.items add: x` found its collection shared and copied it: growing a
//! slot one element per message was quadratic. With the journal, the first in-place update
//! of a slot in a message takes the collection out of the rollback copy (so the slot holds
//! the only reference and the update runs in place) and records how to take the update back
//! ([`Undo`]); later updates of that collection in the message add their records. The copy
//! is made whole again only when needed, by applying the slot's records to its collection,
//! latest first ([`Journal::restore`]): when the message fails, when the slot is assigned
//! another value, or when an update without a cheap record comes (then from a copy of the
//! collection, what every such update cost before).
//!
//! Data only (the evaluator's slot access, `field`, drives it; the records are made and
//! applied by the collection primitives through the registry's hooks).

use crate::interp::registry::Undo;
use crate::value::{Ref, Value};

/// The journal of the running actor message (a field of the evaluation context).
#[derive(Default)]
pub struct Journal {
    /// Whether the running message keeps one (set around an actor's message; a job run as
    /// the actor or an actor whose memory is metered keeps the plain copy).
    active: bool,
    /// The slots whose collection left the rollback copy: (slot, the collection's address).
    taken: Vec<(u32, usize)>,
    /// The undo records, oldest first: (slot, record).
    records: Vec<(u32, Undo)>,
}

/// Applies one undo record to a collection (the registry's `undo` hook).
pub type UndoFn = fn(&mut Value, Undo);

impl Journal {
    /// Starts the journal of a message.
    #[inline]
    pub fn begin(&mut self) {
        self.end();
        self.active = true;
    }

    /// Ends the message's journal (its records dropped: the message kept its changes, or
    /// [`Journal::roll_back`] has used them). A message that updated no collection in place
    /// left both lists empty: two tests, no call.
    #[inline]
    pub fn end(&mut self) {
        self.active = false;
        if !self.taken.is_empty() || !self.records.is_empty() {
            self.clear();
        }
    }

    #[inline(never)]
    fn clear(&mut self) {
        self.taken.clear();
        self.records.clear();
    }

    /// Whether some slot's collection is out of the rollback copy (an assignment to the
    /// slot must then [`Journal::release`] its old value).
    #[inline(always)]
    pub fn holds_any(&self) -> bool {
        !self.taken.is_empty()
    }

    /// Before the in-place update of slot `i`, whose value `recv` has been taken out of the
    /// slot: answers the update's undo record when the update may run in place under the
    /// journal (push it with [`Journal::record`] once the update succeeded). `undo_of` makes
    /// the record; `saved` is the rollback copy.
    pub fn before_update(
        &mut self,
        i: usize,
        recv: &Value,
        saved: &mut [Value],
        undo_of: impl FnOnce() -> Option<Undo>,
        undo: UndoFn,
    ) -> Option<Undo> {
        if !self.active {
            return None;
        }
        let addr = collection_addr(recv)?;
        if let Some(&(_, taken)) = self.taken.iter().find(|(j, _)| *j as usize == i) {
            if taken != addr {
                // Not reached: a slot's collection is released whenever the slot changes.
                debug_assert!(false, "a journaled slot holds another collection");
                return None;
            }
            if strong_count(recv) == 1 {
                if let Some(u) = undo_of() {
                    return Some(u);
                }
            }
            // No cheap record, or the collection is shared elsewhere (the update copies
            // it): the slot's value before the message, from a copy, goes back in `saved`.
            self.restore(i, recv.clone(), saved, undo);
            return None;
        }
        let shared_with_copy = strong_count(recv) == 2
            && saved
                .get(i)
                .is_some_and(|s| collection_addr(s) == Some(addr));
        if !shared_with_copy {
            return None;
        }
        let u = undo_of()?;
        saved[i] = Value::Nil;
        self.taken.push((i as u32, addr));
        Some(u)
    }

    /// Records an in-place update of slot `i` (made by [`Journal::before_update`]).
    pub fn record(&mut self, i: usize, u: Undo) {
        self.records.push((i as u32, u));
    }

    /// Before slot `i` is assigned another value: when its collection is journaled, `old`
    /// (the slot's value) is made back into the value before the message and put in
    /// `saved`; otherwise `old` is dropped.
    pub fn release(&mut self, i: usize, old: Value, saved: &mut [Value], undo: UndoFn) {
        let journaled = self
            .taken
            .iter()
            .any(|&(j, a)| j as usize == i && collection_addr(&old) == Some(a));
        if journaled {
            self.restore(i, old, saved, undo);
        }
    }

    /// A failed message: the journaled slots' collections are taken back (in place when
    /// nothing else holds them) into `saved`, which then becomes the state (and the failed
    /// state the next copy).
    pub fn roll_back(&mut self, fields: &mut Vec<Value>, saved: &mut Box<[Value]>, undo: UndoFn) {
        while let Some(&(i, _)) = self.taken.first() {
            let i = i as usize;
            let cur = fields
                .get_mut(i)
                .map(|f| std::mem::replace(f, Value::Nil))
                .unwrap_or(Value::Nil);
            if collection_addr(&cur).is_none_or(|a| self.taken[0].1 != a) {
                // Not reached (see `release`): drop the record rather than loop.
                debug_assert!(false, "a journaled slot holds another collection");
                self.taken.remove(0);
                continue;
            }
            self.restore(i, cur, saved, undo);
        }
        let failed = std::mem::replace(fields, std::mem::take(saved).into_vec());
        *saved = failed.into_boxed_slice();
        self.end();
    }

    /// Slot `i`'s value before the message, from its collection `cur` and the slot's records
    /// (latest first), into `saved[i]`; the slot leaves the journal.
    fn restore(&mut self, i: usize, mut cur: Value, saved: &mut [Value], undo: UndoFn) {
        self.taken.retain(|(j, _)| *j as usize != i);
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.records)
            .into_iter()
            .partition(|(j, _)| *j as usize == i);
        self.records = rest;
        for (_, u) in mine.into_iter().rev() {
            undo(&mut cur, u);
        }
        if let Some(s) = saved.get_mut(i) {
            *s = cur;
        }
    }
}

/// The address of a collection (or String) with in-place updates (its identity), or none.
fn collection_addr(v: &Value) -> Option<usize> {
    Some(match v {
        Value::List(r) | Value::Queue(r) => Ref::as_ptr(r) as usize,
        Value::Array(r) => Ref::as_ptr(r) as usize,
        Value::Dict(r) => Ref::as_ptr(r) as usize,
        Value::Set(r) => Ref::as_ptr(r) as usize,
        Value::Bag(r) => Ref::as_ptr(r) as usize,
        Value::Str(r) => Ref::as_ptr(r) as usize,
        _ => return None,
    })
}

/// The number of references to a collection's storage (0 for other values).
fn strong_count(v: &Value) -> usize {
    match v {
        Value::List(r) | Value::Queue(r) => Ref::strong_count(r),
        Value::Array(r) => Ref::strong_count(r),
        Value::Dict(r) => Ref::strong_count(r),
        Value::Set(r) => Ref::strong_count(r),
        Value::Bag(r) => Ref::strong_count(r),
        Value::Str(r) => Ref::strong_count(r),
        _ => 0,
    }
}
