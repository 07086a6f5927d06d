//! Collection primitives: List, Array, Dictionary, Set, Bag, Queue,
//! Tuple, Interval and the lazy Stream, over the persistent `imbl` structures of
//! [`Value`](crate::value::Value).
//!
//! Conventions:
//! * Every collection is immutable: an "update" answers a new collection. Updates are written
//!   once, as [`InPlaceFn`]s that mutate their receiver with `Ref::make_mut` (in place when the
//!   evaluator hands over the only reference, a cheap structural copy otherwise); the ordinary
//!   primitive wraps them over a clone of the receiver.
//! * Loops call `ctx.tick()?` and `ctx.call_block` per element and add no depth per iteration.
//! * The shared errors come from [`common::empty_err`], [`common::oob_err`] and
//!   [`common::index_arg`].
//!
//! Submodules: `common` (argument checks, errors and element access every collection module
//! uses), `progression` (an Interval's size and elements), `generic` (the Collection
//! protocol shared by every built-in collection), `seq` (List and Array), `dict`, `set` (Set
//! and Bag), `misc` (Queue and Tuple), `interval`, `stream`, `sort` (a stable merge sort with
//! a fallible comparator). This file keeps only what is its own: registering them and the
//! in-place dispatch; the submodules name `common`, never this file.

use std::sync::OnceLock;

use crate::interp::eval::Prims;
use crate::value::{Sym, Value};

pub mod common;
pub mod dict;
pub mod generic;
pub mod interval;
pub(crate) mod misc;
pub(crate) mod progression;
pub mod seq;
pub mod set;
pub mod sort;
pub mod stream;

/// A primitive that may update its receiver in place. The evaluator may call it with the only
/// reference to the receiver (for `x := x at: k put: v`), which makes updates O(1) amortised;
/// it answers the updated collection and leaves the receiver untouched when it raises.
pub use crate::interp::registry::{InPlaceFn, Undo};
pub use common::dict_from_pairs;

/// Registers every collection primitive.
pub fn register(p: &mut Prims) {
    p.hooks.in_place = in_place;
    p.hooks.undo_of = undo_of;
    p.hooks.undo = undo;
    generic::register(p);
    seq::register(p);
    dict::register(p);
    set::register(p);
    misc::register(p);
    interval::register(p);
    stream::register(p);
}

/// The selectors with an in-place variant.
struct UpdateSels {
    add: Sym,
    add_first: Sym,
    at_put: Sym,
    remove_key: Sym,
    remove: Sym,
    add_with_count: Sym,
    enqueue: Sym,
    concat: Sym,
}

fn update_sels() -> &'static UpdateSels {
    static S: OnceLock<UpdateSels> = OnceLock::new();
    S.get_or_init(|| UpdateSels {
        add: Sym::new("add:"),
        add_first: Sym::new("addFirst:"),
        at_put: Sym::new("at:put:"),
        remove_key: Sym::new("removeKey:"),
        remove: Sym::new("remove:"),
        add_with_count: Sym::new("add:withCount:"),
        enqueue: Sym::new("enqueue:"),
        concat: Sym::new("++"),
    })
}

/// The in-place variant of an update selector for this receiver, if it has one (see
/// [`InPlaceFn`]). Selectors: List and Array `add:` `addFirst:`; Array `at:put:`; Dictionary `at:put:`
/// `removeKey:`; Set `add:` `remove:`; Bag `add:` `add:withCount:` `remove:`; Queue `enqueue:`;
/// String `++` (asked for an actor's state slot: a local's `s := s ++ t` has its own path).
pub(crate) fn in_place(recv: &Value, selector: Sym) -> Option<InPlaceFn> {
    let s = update_sels();
    let sel = selector;
    Some(match recv {
        Value::List(_) | Value::Array(_) if sel == s.add => seq::add_in_place,
        Value::List(_) | Value::Array(_) if sel == s.add_first => seq::add_first_in_place,
        Value::Array(_) if sel == s.at_put => seq::at_put_in_place,
        Value::Dict(_) if sel == s.at_put => dict::at_put_in_place,
        Value::Dict(_) if sel == s.remove_key => dict::remove_key_in_place,
        Value::Set(_) if sel == s.add => set::set_add_in_place,
        Value::Set(_) if sel == s.remove => set::set_remove_in_place,
        Value::Bag(_) if sel == s.add => set::bag_add_in_place,
        Value::Bag(_) if sel == s.add_with_count => set::bag_add_with_count_in_place,
        Value::Bag(_) if sel == s.remove => set::bag_remove_in_place,
        Value::Queue(_) if sel == s.enqueue => misc::enqueue_in_place,
        Value::Str(_) if sel == s.concat => crate::interp::prims::string::append_in_place,
        _ => return None,
    })
}

/// The record that takes back the in-place update `selector` with `args` of `recv`, read
/// before the update runs (see [`Undo`]): for the appends (String `++` included), Array `at:put:` of an index in
/// range, Dictionary `at:put:`/`removeKey:` and Set `add:`/`remove:`. The others (`addFirst:`,
/// the Bag's) have none; an actor's journal keeps a copy of the collection for those.
pub(crate) fn undo_of(recv: &Value, selector: Sym, args: &[Value]) -> Option<Undo> {
    let s = update_sels();
    let sel = selector;
    let arg0 = args.first()?;
    Some(match recv {
        Value::List(l) | Value::Queue(l) if sel == s.add || sel == s.enqueue => {
            Undo::Truncate(l.len())
        }
        Value::Array(a) if sel == s.add => Undo::Truncate(a.len()),
        Value::Str(t) if sel == s.concat => Undo::Truncate(t.len()),
        Value::Array(a) if sel == s.at_put => {
            let i = match arg0 {
                Value::Int(i) if *i >= 1 => usize::try_from(*i - 1).ok()?,
                _ => return None,
            };
            Undo::Put(i, a.get(i)?.clone())
        }
        Value::Dict(d) if sel == s.at_put || sel == s.remove_key => {
            Undo::Key(arg0.clone(), d.get(arg0).cloned())
        }
        Value::Set(m) if sel == s.add || sel == s.remove => {
            Undo::Member(arg0.clone(), m.contains(crate::value::Key::from_ref(arg0)))
        }
        _ => return None,
    })
}

/// Applies an undo record made by [`undo_of`] for this collection (a copy first when it is
/// shared, as for any update).
pub(crate) fn undo(recv: &mut Value, u: Undo) {
    use crate::value::make_mut;
    match (recv, u) {
        (Value::List(l) | Value::Queue(l), Undo::Truncate(n)) => make_mut(l).truncate(n),
        (Value::Array(a), Undo::Truncate(n)) => make_mut(a).truncate(n),
        (Value::Str(t), Undo::Truncate(n)) => make_mut(t).truncate(n),
        (Value::Array(a), Undo::Put(i, old)) => make_mut(a).set(i, old),
        (Value::Dict(d), Undo::Key(k, Some(old))) => {
            crate::value::dict::insert_shared(d, k, old);
        }
        (Value::Dict(d), Undo::Key(k, None)) => {
            crate::value::dict::remove_shared(d, &k);
        }
        (Value::Set(m), Undo::Member(k, true)) => {
            make_mut(m).insert(crate::value::Key(k));
        }
        (Value::Set(m), Undo::Member(k, false)) => {
            make_mut(m).remove(&crate::value::Key(k));
        }
        // Not reached: a record is made for the kind of collection it is applied to.
        _ => debug_assert!(
            false,
            "an undo record applied to another kind of collection"
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::syntax::{parse_with, Options};

    /// The stdlib files of the collection classes parse, and every `@primitive` they declare
    /// is registered (so a declaration cannot drift from the Rust table).
    #[test]
    fn stdlib_collection_files_parse_and_bind() {
        let files = [
            (
                "Collection",
                include_str!("../../../../../stdlib/Collection.bt"),
            ),
            ("List", include_str!("../../../../../stdlib/List.bt")),
            ("Array", include_str!("../../../../../stdlib/Array.bt")),
            (
                "Dictionary",
                include_str!("../../../../../stdlib/Dictionary.bt"),
            ),
            ("Set", include_str!("../../../../../stdlib/Set.bt")),
            ("Bag", include_str!("../../../../../stdlib/Bag.bt")),
            ("Queue", include_str!("../../../../../stdlib/Queue.bt")),
            ("Tuple", include_str!("../../../../../stdlib/Tuple.bt")),
            (
                "Interval",
                include_str!("../../../../../stdlib/Interval.bt"),
            ),
            ("Stream", include_str!("../../../../../stdlib/Stream.bt")),
        ];
        // A collection's primitives may come from other modules (`atRandom` from `random`).
        let mut prims = crate::interp::eval::Prims::default();
        crate::interp::prims::register_all(&mut prims);
        for (class, src) in files {
            let (module, diags) = parse_with(
                src,
                Options {
                    allow_primitives: true,
                },
            );
            let errors: Vec<_> = diags.iter().map(|d| d.message.clone()).collect();
            assert!(errors.is_empty(), "{class}.bt: {errors:?}");
            let mut n = 0;
            for item in &module.items {
                let crate::syntax::ast::Item::Class(c) = item else {
                    continue;
                };
                assert_eq!(c.name.name, class);
                for m in &c.members {
                    let crate::syntax::ast::Member::Method(m) = m else {
                        continue;
                    };
                    n += 1;
                    if m.primitive.is_none() {
                        continue;
                    }
                    assert!(
                        prims
                            .get(class, m.class_side, m.selector.as_str())
                            .is_some(),
                        "{class}>>{} is declared @primitive but not registered",
                        m.selector
                    );
                }
            }
            assert!(n > 0, "{class}.bt declares no methods");
        }
    }
}
