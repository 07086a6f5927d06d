//! What every collection module shares: the argument checks and errors of the collection
//! primitives, the elements and size of any built-in collection, the copy-then-update wrapper
//! of the in-place updates, and constructors (Set, Bag, Dictionary from elements). The
//! primitive modules beside it (`generic`, `seq`, `dict`, `set`, `misc`, `interval`,
//! `stream`) and `parallel_collect` import it; it names none of them.

use std::sync::OnceLock;

use super::progression;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::interp::registry::InPlaceFn;
use crate::value::{Key, Ref, Sym, Value};

/// Runs an [`InPlaceFn`] on a copy of the receiver (the ordinary, sharing-safe call).
pub(crate) fn on_copy(f: InPlaceFn, ctx: &mut Ctx, recv: &Value, args: &[Value]) -> EvalResult {
    let mut r = recv.clone();
    f(ctx, &mut r, args)
}

/// A Dictionary from key/value pairs (a repeated key keeps the last value).
pub fn dict_from_pairs(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
    Value::Dict(Ref::new(pairs.into_iter().collect()))
}

/// A Set from elements (duplicates by `=:=` dropped, kept in term order).
pub(crate) fn set_from(items: impl IntoIterator<Item = Value>) -> Value {
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
        Value::Interval(iv) => Box::new(progression::iter(iv)),
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
        Value::Interval(iv) => progression::len(iv),
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
            Species::Bag => bag_from(items),
        }
    }
}

/// A Bag from elements (each occurrence counted).
pub(crate) fn bag_from(items: Vec<Value>) -> Value {
    let mut m = imbl::OrdMap::<Key, usize>::new();
    for e in items {
        *m.entry(Key(e)).or_insert(0) += 1;
    }
    Value::Bag(Ref::new(m))
}
