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
//! * The shared errors come from [`empty_err`], [`oob_err`] and [`index_arg`].
//!
//! Submodules: `generic` (the Collection protocol shared by every built-in collection), `seq`
//! (List and Array), `dict`, `set` (Set and Bag), `misc` (Queue and Tuple), `interval`,
//! `stream`, `sort` (a stable merge sort with a fallible comparator).

use std::sync::OnceLock;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::{Key, Ref, Sym, Value};

pub mod dict;
pub mod generic;
pub mod interval;
pub mod misc;
pub mod seq;
pub mod set;
pub mod sort;
pub mod stream;

/// A primitive that may update its receiver in place. The evaluator may call it with the only
/// reference to the receiver (for `x := x at: k put: v`), which makes updates O(1) amortised;
/// it answers the updated collection and leaves the receiver untouched when it raises.
pub use crate::interp::registry::InPlaceFn;

/// Registers every collection primitive.
pub fn register(p: &mut Prims) {
    p.hooks.in_place = in_place;
    generic::register(p);
    seq::register(p);
    dict::register(p);
    set::register(p);
    misc::register(p);
    interval::register(p);
    stream::register(p);
}

/// The in-place variant of an update selector for this receiver, if it has one (see
/// [`InPlaceFn`]). Selectors: List and Array `add:` `addFirst:`; Array `at:put:`; Dictionary `at:put:`
/// `removeKey:`; Set `add:` `remove:`; Bag `add:` `add:withCount:` `remove:`; Queue `enqueue:`.
pub fn in_place(recv: &Value, selector: Sym) -> Option<InPlaceFn> {
    struct UpdateSels {
        add: Sym,
        add_first: Sym,
        at_put: Sym,
        remove_key: Sym,
        remove: Sym,
        add_with_count: Sym,
        enqueue: Sym,
    }
    static S: OnceLock<UpdateSels> = OnceLock::new();
    let s = S.get_or_init(|| UpdateSels {
        add: Sym::new("add:"),
        add_first: Sym::new("addFirst:"),
        at_put: Sym::new("at:put:"),
        remove_key: Sym::new("removeKey:"),
        remove: Sym::new("remove:"),
        add_with_count: Sym::new("add:withCount:"),
        enqueue: Sym::new("enqueue:"),
    });
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
        _ => return None,
    })
}

/// Runs an [`InPlaceFn`] on a copy of the receiver (the ordinary, sharing-safe call).
pub(crate) fn on_copy(f: InPlaceFn, ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let mut r = recv.clone();
    f(ctx, &mut r, args)
}

/// `#(head | tail)`: a List from an element and an existing List (`None` when `tail` is not a
/// List: the evaluator raises `type_error`).
pub fn cons(head: Value, tail: &Value) -> Option<Value> {
    match tail {
        Value::List(l) => {
            let mut v = (**l).clone();
            v.push_front(head);
            Some(Value::List(Ref::new(v)))
        }
        _ => None,
    }
}

/// A Dictionary from key/value pairs (a repeated key keeps the last value).
pub fn dict_from_pairs(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
    Value::Dict(Ref::new(pairs.into_iter().collect()))
}

/// A Set from elements (duplicates by `=:=` dropped, kept in term order).
pub fn set_from(items: impl IntoIterator<Item = Value>) -> Value {
    Value::Set(Ref::new(items.into_iter().map(Key).collect()))
}

static NIL: Value = Value::Nil;

/// Argument `i` (nil if the evaluator passed fewer; it checks arity before calling).
pub(crate) fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&NIL)
}

/// Interned selectors used inside loops, looked up once.
pub(crate) struct Sels {
    pub plus: Sym,
    pub le: Sym,
    pub lt: Sym,
    pub slash: Sym,
    pub arity: Sym,
}

pub(crate) fn sels() -> &'static Sels {
    static S: OnceLock<Sels> = OnceLock::new();
    S.get_or_init(|| Sels {
        plus: Sym::new("+"),
        le: Sym::new("<="),
        lt: Sym::new("<"),
        slash: Sym::new("/"),
        arity: Sym::new("arity"),
    })
}

/// The class name of a built-in value, for messages (user instances: their class; class
/// objects: the class of the class as the class table has it).
pub(crate) fn class_name(ctx: &Ctx, v: &Value) -> String {
    match v {
        Value::Class(_) | Value::Meta(_) => ctx.class_of(v).name.as_str().to_string(),
        _ => crate::interp::prims::fault::class_name(v),
    }
}

/// `a String`, `an Integer`, `nil`.
pub(crate) fn article(ctx: &Ctx, v: &Value) -> String {
    if v.is_nil() {
        return "nil".into();
    }
    let n = class_name(ctx, v);
    let an = n.starts_with(['A', 'E', 'I', 'O', 'U']);
    format!("{} {n}", if an { "an" } else { "a" })
}

/// `type_error`: "`sel` expects X, got a Y".
pub(crate) fn expected(ctx: &Ctx, sel: &str, what: &str, got: &Value) -> Unwind {
    ctx.type_err(format!("{sel} expects {what}, got {}", article(ctx, got)))
}

/// `empty_collection`: `List is empty`.
pub(crate) fn empty_err(ctx: &Ctx, class: &str) -> Unwind {
    ctx.err(ErrorKind::EmptyCollection, format!("{class} is empty"))
}

/// `index_out_of_bounds`: `index out of bounds: 9 (size 3)`.
pub(crate) fn oob_err(ctx: &Ctx, index: impl std::fmt::Display, size: usize) -> Unwind {
    ctx.err(
        ErrorKind::IndexOutOfBounds,
        format!("index out of bounds: {index} (size {size})"),
    )
}

/// Checks an `at:`-style index against `size` with the collection rules: below 1 →
/// `index_out_of_bounds`; ≥ 1 on an empty receiver → `empty_collection` when `empty_rule`;
/// above `size` → `index_out_of_bounds`; not an Integer → `type_error`. Answers the 0-based
/// position.
pub(crate) fn index_arg(
    ctx: &Ctx,
    sel: &str,
    class: &str,
    idx: &Value,
    size: usize,
    empty_rule: bool,
) -> Result<usize, Unwind> {
    match idx {
        Value::Int(i) => {
            let i = *i;
            if i < 1 {
                Err(oob_err(ctx, i, size))
            } else if size == 0 && empty_rule {
                Err(empty_err(ctx, class))
            } else if i as u64 > size as u64 {
                Err(oob_err(ctx, i, size))
            } else {
                Ok(i as usize - 1)
            }
        }
        Value::BigInt(b) => {
            use num_traits::Signed;
            if size == 0 && empty_rule && b.is_positive() {
                Err(empty_err(ctx, class))
            } else {
                Err(oob_err(ctx, b, size))
            }
        }
        _ => Err(expected(ctx, sel, "an Integer index", idx)),
    }
}

/// A count argument (`take:`, `drop:` …): an Integer, negative treated as 0.
pub(crate) fn count_arg(ctx: &Ctx, sel: &str, v: &Value) -> Result<usize, Unwind> {
    match v {
        Value::Int(i) => Ok((*i).max(0) as usize),
        Value::BigInt(b) => {
            use num_traits::Signed;
            Ok(if b.is_positive() { usize::MAX } else { 0 })
        }
        _ => Err(expected(ctx, sel, "an Integer", v)),
    }
}

/// The Boolean a block answered, or `type_error`.
pub(crate) fn truth(ctx: &Ctx, sel: &str, v: &Value) -> Result<bool, Unwind> {
    match v {
        Value::True => Ok(true),
        Value::False => Ok(false),
        _ => Err(ctx.type_err(format!(
            "{sel} expects the block to answer a Boolean, got {}",
            article(ctx, v)
        ))),
    }
}

/// Calls a one-argument block and reads its Boolean answer.
pub(crate) fn test1(ctx: &mut Ctx, sel: &str, block: &Value, x: &Value) -> Result<bool, Unwind> {
    let r = ctx.call_block(block, std::slice::from_ref(x))?;
    truth(ctx, sel, &r)
}

/// The number of parameters a block takes (through `arity`, so any callable works); a value
/// that does not understand `arity` (`sort: #<`) is a `type_error` naming `sel`.
pub(crate) fn block_arity(ctx: &mut Ctx, sel: &str, block: &Value) -> Result<usize, Unwind> {
    if !matches!(block, Value::Block(_)) && !ctx.responds_to(block, sels().arity) {
        return Err(expected(ctx, sel, "a Block", block));
    }
    let a = ctx.send(block, sels().arity, &[])?;
    Ok(a.as_int().unwrap_or(0).max(0) as usize)
}

/// The elements of a built-in collection in iteration order (`do:` order): Dictionaries
/// answer their values, Bags each occurrence, Intervals their numbers. `None` for anything
/// else (Strings and Streams are handled by their own modules).
pub(crate) fn elems(v: &Value) -> Option<Box<dyn Iterator<Item = Value> + '_>> {
    Some(match v {
        Value::List(l) | Value::Queue(l) => Box::new(l.iter().cloned()),
        Value::Array(a) => Box::new(a.iter().cloned()),
        Value::Tuple(t) => Box::new(t.iter().cloned()),
        Value::Set(s) => Box::new(s.iter().map(|k| k.0.clone())),
        Value::Bag(b) => Box::new(
            b.iter()
                .flat_map(|(k, n)| std::iter::repeat_n(k.0.clone(), *n)),
        ),
        Value::Dict(d) => Box::new(d.values().cloned()),
        Value::Interval(iv) => Box::new(interval::iter(iv)),
        _ => return None,
    })
}

/// Elements of a collection argument (`withAll:`, `union:`, `zip:` …): built-in collections,
/// and Strings as their graphemes; otherwise `type_error`.
/// Charges the copy (`Ctx::charge`, a Value's worth an element), so an enormous Interval
/// argument meets the reduction limit instead of being materialised.
pub(crate) fn elems_arg(ctx: &mut Ctx, sel: &str, v: &Value) -> Result<Vec<Value>, Unwind> {
    use crate::interp::eval::charge::ELEM;
    if let Some(it) = elems(v) {
        return ctx.collect_vec_charged(it, ELEM);
    }
    match v {
        Value::Str(s) => {
            ctx.charge(s.len().saturating_mul(ELEM))?;
            Ok(graphemes(s))
        }
        _ => Err(expected(ctx, sel, "a collection", v)),
    }
}

/// A String's grapheme clusters as one-grapheme Strings.
pub(crate) fn graphemes(s: &str) -> Vec<Value> {
    use unicode_segmentation::UnicodeSegmentation;
    s.graphemes(true).map(Value::str).collect()
}

/// The number of elements (a Bag counts occurrences).
pub(crate) fn size_of(v: &Value) -> Option<usize> {
    Some(match v {
        Value::List(l) | Value::Queue(l) => l.len(),
        Value::Array(a) => a.len(),
        Value::Tuple(t) => t.len(),
        Value::Set(s) => s.len(),
        Value::Bag(b) => b.values().sum(),
        Value::Dict(d) => d.len(),
        Value::Interval(iv) => interval::len(iv),
        _ => return None,
    })
}

/// What `collect:`/`select:`/`reject:` answer for a receiver: the receiver's kind, a
/// List for an Interval.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Species {
    List,
    Array,
    Set,
    Bag,
    Queue,
    Tuple,
}

pub(crate) fn species_of(v: &Value) -> Species {
    match v {
        Value::Array(_) => Species::Array,
        Value::Set(_) => Species::Set,
        Value::Bag(_) => Species::Bag,
        Value::Queue(_) => Species::Queue,
        Value::Tuple(_) => Species::Tuple,
        _ => Species::List,
    }
}

impl Species {
    pub(crate) fn class_name(self) -> &'static str {
        match self {
            Species::List => "List",
            Species::Array => "Array",
            Species::Set => "Set",
            Species::Bag => "Bag",
            Species::Queue => "Queue",
            Species::Tuple => "Tuple",
        }
    }

    /// A collection of this species holding `items` (in order; Sets and Bags re-sort).
    pub(crate) fn build(self, items: Vec<Value>) -> Value {
        match self {
            Species::List => Value::List(Ref::new(items.into_iter().collect())),
            Species::Array => Value::Array(Ref::new(items.into())),
            Species::Queue => Value::Queue(Ref::new(items.into_iter().collect())),
            Species::Tuple => Value::Tuple(Ref::new(items)),
            Species::Set => set_from(items),
            Species::Bag => set::bag_from(items),
        }
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
                    let table = if m.class_side {
                        &prims.class_side
                    } else {
                        &prims.instance
                    };
                    assert!(
                        table.contains_key(&(class, m.selector.as_str())),
                        "{class}>>{} is declared @primitive but not registered",
                        m.selector
                    );
                }
            }
            assert!(n > 0, "{class}.bt declares no methods");
        }
    }
}
