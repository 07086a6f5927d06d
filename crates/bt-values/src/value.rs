//! Run-time values: everything a script can hold.
//!
//! A [`Value`] is 16 bytes: immediates (nil, booleans, small integers, floats, characters,
//! symbols) inline, everything else behind [`Ref`] (an `Arc`). Values are immutable and
//! `Send + Sync`, so they cross actors and threads without copying. Collections use persistent
//! structures from `imbl`, so `d := d at: k put: v` in a loop is not quadratic.
//!
//! Runtime handles (actors, pids, timers, supervisors, streams …) are [`Value::Native`]: a
//! trait object, so the runtime can add kinds without growing this enum.
//!
//! This is the values layer (docs/architecture.md): Value, its collections' storage
//! ([`array`], [`dict`]), standard term order ([`order`]), and the data of classes
//! ([`class`]) and block closures ([`Closure`], here; its code in [`block`]). It sits above
//! `base` and below the runtime and names nothing above it: the interpreter's part of a class
//! is an opaque box in [`class::Class::rt`], a block's code a [`block::Code`]
//! (docs/architecture.md, "Classes and blocks in the values layer").
//!
//! The types are mutually recursive (a Value holds an Array, an Array holds Values), the
//! files are not: the storage of Arrays ([`array::compact`]), Dictionaries ([`dict::table`])
//! and captured variables ([`varcell`]) is generic over what it holds, instantiated here for
//! `Value`, so it names nothing of this file; what orders, compares and hashes Values
//! ([`order`], with the `Term` impl the Dictionary's table needs) names this file, and this
//! file names none of it (docs/architecture.md, "Module cycles").

// unsafe: in-place updates test uniqueness with plain loads of the Arc counts (each block has a SAFETY comment).
#![allow(unsafe_code)]

pub mod array;
pub mod block;
pub mod class;
pub mod deserialize;
pub mod dict;
pub mod order;
pub mod text;
mod value_ext;
pub mod varcell;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use num_bigint::BigInt;

pub use crate::base::sym::Sym;
use crate::value::block::Code;
use crate::value::class::Class;

/// The one shared-pointer type (change here to change everywhere).
pub type Ref<T> = Arc<T>;
pub type ClassRef = Ref<Class>;

/// A captured variable ([`varcell::OwnedCell`]): shared by the declaring activation and its
/// closures.
pub type VarCell = crate::value::varcell::OwnedCell<Value>;

/// The contents of `a` to mutate in place when no other `Ref` or weak reference shares it.
///
/// Same answer as `Arc::get_mut`, without its compare-and-swap on the weak count (a locked
/// instruction on every in-place update: `a := a at: i put: v`, `d := d at: k put: v`, a
/// Value-class setter on an unshared instance). With `&mut` on the only strong reference and
/// no weak ones, nothing else can reach the allocation or make a new reference to it.
#[inline(always)]
pub fn unique_mut<T>(a: &mut Ref<T>) -> Option<&mut T> {
    if Ref::strong_count(a) == 1 && Ref::weak_count(a) == 0 {
        // Pairs with the release decrement of any other reference dropped before the check,
        // so its writes to the contents are visible (as `Arc::get_mut` does).
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: we hold the only strong reference exclusively (`&mut`) and there are no
        // weak references, so no other thread can read, write or re-share the contents while
        // the returned borrow (tied to `a`) lives; a new reference could only be made from
        // `a` itself, which the borrow blocks.
        Some(unsafe { &mut *(Ref::as_ptr(a) as *mut T) })
    } else {
        None
    }
}

/// `Arc::make_mut` with the cheap uniqueness test of [`unique_mut`]: in place when unshared,
/// otherwise on a fresh copy that `a` then holds.
#[inline(always)]
pub fn make_mut<T: Clone>(a: &mut Ref<T>) -> &mut T {
    if Ref::strong_count(a) == 1 && Ref::weak_count(a) == 0 {
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: as in `unique_mut`.
        return unsafe { &mut *(Ref::as_ptr(a) as *mut T) };
    }
    Ref::make_mut(a)
}

/// A Float payload: an f64 kept as its bits.
///
/// Every payload of [`Value`] is one 8-byte integer or pointer, so rustc lays a Value out as
/// a pair of words (tag, payload) and moves it in two registers. With an `f64` or a `char`
/// payload the enum becomes an opaque 16-byte blob that is written piecewise and read back
/// with one 16-byte load — a store-forwarding stall on every value returned by an evaluator
/// closure (measured: `c := j` in a loop went from 16 ns to a few).
#[derive(Clone, Copy)]
pub struct F64(u64);

impl F64 {
    #[inline(always)]
    pub fn new(x: f64) -> F64 {
        F64(x.to_bits())
    }
    #[inline(always)]
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl fmt::Debug for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.get())
    }
}

/// A Character payload: a `char` widened to a word (see [`F64`] for why).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ch(u64);

impl Ch {
    #[inline(always)]
    pub fn new(c: char) -> Ch {
        Ch(c as u64)
    }
    #[inline(always)]
    pub fn get(self) -> char {
        // Only `new` builds a Ch, so the code point is always valid.
        char::from_u32(self.0 as u32).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

impl fmt::Display for Ch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// An instance of a Value-kind or Object-kind class (including exceptions and Result):
/// its class and its fields in the class's field order (inherited first).
pub struct Instance {
    pub class: ClassRef,
    pub fields: Fields,
}

/// An instance's field values: up to three live inline, so a small Value-class copy
/// (`withX:`) is one allocation.
pub type Fields = smallvec::SmallVec<[Value; 3]>;

/// A copy of an instance's fields (the hot path of Value-class `withX:` copies: no generic
/// iterator machinery for the inline case).
#[inline]
pub fn clone_fields(f: &[Value]) -> Fields {
    match f {
        [] => Fields::new(),
        [a] => Fields::from_buf_and_len([a.clone(), Value::Nil, Value::Nil], 1),
        [a, b] => Fields::from_buf_and_len([a.clone(), b.clone(), Value::Nil], 2),
        [a, b, c] => Fields::from_buf([a.clone(), b.clone(), c.clone()]),
        more => Fields::from_vec(more.to_vec()),
    }
}

/// Clones a value, copying immediates inline (the general clone is an out-of-line call).
#[inline(always)]
pub fn fast_clone(v: &Value) -> Value {
    if is_immediate(v) {
        // SAFETY: an immediate owns nothing (no reference count, no heap data: its payload
        // is one plain word), so a bitwise copy is an independent, valid Value; dropping
        // either copy frees nothing. One tag test instead of a jump table per variant.
        unsafe { std::ptr::read(v) }
    } else {
        v.clone()
    }
}

/// Whether `v` owns nothing (no reference count, no heap data).
#[inline(always)]
pub fn is_immediate(v: &Value) -> bool {
    matches!(
        v,
        Value::Nil
            | Value::True
            | Value::False
            | Value::Int(_)
            | Value::Float(_)
            | Value::Char(_)
            | Value::Symbol(_)
    )
}

/// Drops a value, skipping the out-of-line drop for immediates.
#[inline(always)]
pub fn drop_fast(v: Value) {
    if is_immediate(&v) {
        // Nothing to free; `forget` also skips the drop glue, which a `match` arm that does
        // not move `v` would still run (Value has a Drop impl, so the glue is a call).
        std::mem::forget(v);
    } else {
        drop(v);
    }
}

/// A runtime-provided object (actor handle, pid, timer, supervisor handle, stream, …).
/// Implementors decide identity, printing and ordering; the interpreter dispatches to the
/// class named by [`NativeObj::class`].
pub trait NativeObj: Send + Sync + Any {
    /// The bt class this object is an instance of.
    fn class(&self) -> ClassRef;
    /// The class by reference when the object holds it (method dispatch then needs no
    /// reference-count traffic); `None` falls back to [`NativeObj::class`].
    fn class_ref(&self) -> Option<&ClassRef> {
        None
    }
    /// Default printString (used when no user override applies).
    fn print_string(&self) -> String;
    /// Structural/identity equality with another native of the same concrete type.
    fn equals(&self, other: &dyn NativeObj) -> bool;
    fn hash_code(&self) -> u64;
    /// Position within its term-order rank: (rank, key) compared lexicographically.
    fn order_key(&self) -> (u8, Vec<u64>);
    fn as_any(&self) -> &dyn Any;
}

/// A run-time value. Keep this 16 bytes (pinned by a test): think before growing it.
#[derive(Clone)]
pub enum Value {
    Nil,
    True,
    False,
    /// Integers that fit in i64 (the fast path).
    Int(i64),
    /// Integers outside i64; always normalised (never holds a value that fits in i64).
    BigInt(Ref<BigInt>),
    Float(F64),
    Char(Ch),
    Symbol(Sym),
    Str(Ref<text::Text>),
    Binary(Ref<Vec<u8>>),
    /// `#( )` — a List.
    List(Ref<imbl::Vector<Value>>),
    /// `#[ ]` — an Array: a flat vector (compact for small immediates, see
    /// [`crate::value::array`]), copied on write when shared.
    Array(Ref<crate::value::array::compact::CompactVec<Value>>),
    /// `{a, b}` — a Tuple.
    Tuple(Ref<Vec<Value>>),
    /// `#{ }` — keys in standard term order (storage: [`crate::value::dict::Dict`]).
    Dict(Ref<crate::value::dict::table::Table<Value>>),
    Set(Ref<imbl::OrdSet<Key>>),
    /// Element → count, in term order.
    Bag(Ref<imbl::OrdMap<Key, usize>>),
    Queue(Ref<imbl::Vector<Value>>),
    Interval(Ref<Interval>),
    /// A user/stdlib class instance (Value or Object kind), Results and exceptions included.
    Object(Ref<Instance>),
    /// A class object.
    Class(ClassRef),
    /// The metaclass of a class (`Foo class`).
    Meta(ClassRef),
    Block(Ref<Closure>),
    Native(Ref<Native>),
}

/// A block closure (`Value::Block`): the code is the interpreter's ([`block`]), the rest
/// is what term order, hashing and the codec read.
pub struct Closure {
    pub code: Code,
    /// `self` of the activation that created the block.
    pub recv: Value,
    pub upvals: Box<[Arc<VarCell>]>,
    /// The method activation a `^` inside returns from.
    pub home: u64,
    /// Class defining the enclosing method (for `super` and fields), and its side.
    pub mclass: Option<ClassRef>,
    pub mside: bool,
    /// Creation order (standard term order of blocks).
    pub serial: u64,
}

/// Boxed so `Value::Native` stays one word.
pub struct Native(pub Box<dyn NativeObj>);

/// `a to: b by: step` with Integer or Float bounds.
#[derive(Clone, Debug)]
pub struct Interval {
    pub from: Value,
    pub to: Value,
    pub step: Value,
    /// Whether `by:` was given (affects printing).
    pub explicit_step: bool,
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("nil"),
            Value::True => f.write_str("true"),
            Value::False => f.write_str("false"),
            Value::Int(i) => write!(f, "{i}"),
            Value::BigInt(b) => write!(f, "{b}"),
            Value::Float(x) => write!(f, "{:?}", x.get()),
            Value::Char(c) => write!(f, "${c}"),
            Value::Symbol(s) => write!(f, "{s:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            _ => f.write_str("<value>"),
        }
    }
}

impl Value {
    pub fn bool(b: bool) -> Value {
        if b {
            Value::True
        } else {
            Value::False
        }
    }
    /// A Float value.
    #[inline(always)]
    pub fn float(x: f64) -> Value {
        Value::Float(F64::new(x))
    }
    /// A Character value.
    #[inline(always)]
    pub fn ch(c: char) -> Value {
        Value::Char(Ch::new(c))
    }
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Ref::new(text::Text::from(s.into())))
    }
    pub fn sym(s: &str) -> Value {
        Value::Symbol(Sym::new(s))
    }
    pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(Ref::new(items.into_iter().collect()))
    }
    /// A List of `items`, moved over from the back a slice at a time with the vector shrunk
    /// after each, so a long one is held about once while it changes storage, not twice
    /// (3,000,000 Integers: 48 MB, not 96). For results gathered in a vector first.
    pub fn list_from_vec(mut items: Vec<Value>) -> Value {
        /// Elements moved per slice (1 MiB of Values).
        const SLICE: usize = 1 << 16;
        if items.len() <= SLICE {
            return Value::list(items);
        }
        let mut out = imbl::Vector::new();
        while !items.is_empty() {
            let at = items.len().saturating_sub(SLICE);
            let mut front: imbl::Vector<Value> = items.drain(at..).collect();
            items.shrink_to_fit();
            front.append(out);
            out = front;
        }
        Value::List(Ref::new(out))
    }
    pub fn array(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Array(Ref::new(items.into_iter().collect()))
    }
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Ref::new(items))
    }
    /// Normalises a BigInt: small values become `Int`.
    pub fn from_bigint(b: BigInt) -> Value {
        use num_traits::ToPrimitive;
        match b.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::BigInt(Ref::new(b)),
        }
    }
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }
    /// The name a process-info value stands for: a class object's name, or a Symbol (the
    /// runtime labels processes with either; it never looks inside a class itself).
    pub fn class_object_name(&self) -> Option<Sym> {
        match self {
            Value::Class(c) => Some(c.name),
            Value::Symbol(s) => Some(*s),
            _ => None,
        }
    }
    pub fn as_sym(&self) -> Option<Sym> {
        match self {
            Value::Symbol(s) => Some(*s),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// A Value used as a Dictionary key or Set element: ordered by the standard term order,
/// equal exactly when `=:=` (the impls are in [`order`]).
#[derive(Clone)]
#[repr(transparent)]
pub struct Key(pub Value);

impl Key {
    /// A borrowed value seen as a key (for lookups without cloning it).
    #[inline]
    pub fn from_ref(v: &Value) -> &Key {
        // SAFETY: `Key` is `#[repr(transparent)]` over `Value`, so both references have the
        // same layout and validity; the lifetime is carried over unchanged.
        unsafe { &*(v as *const Value as *const Key) }
    }
}

mod deep_drop;

#[cfg(test)]
mod tests {
    use super::*;

    /// Values are copied everywhere: keep them two words.
    #[test]
    fn value_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    /// A vector longer than one slice becomes the List of its elements in order, at every
    /// length around the slice boundaries.
    #[test]
    fn a_long_vector_becomes_its_list_in_order() {
        for n in [0, 1, 65_535, 65_536, 65_537, 200_003] {
            let v: Vec<Value> = (0..n).map(|i| Value::Int(i as i64)).collect();
            let list = Value::list_from_vec(v);
            let Value::List(l) = &list else {
                panic!("not a List");
            };
            assert_eq!(l.len(), n);
            assert!(l
                .iter()
                .enumerate()
                .all(|(i, x)| matches!(x, Value::Int(j) if *j == i as i64)));
        }
    }

    #[test]
    fn unique_mut_only_for_the_sole_reference() {
        let mut a = Ref::new(vec![1, 2]);
        let p = Ref::as_ptr(&a);
        unique_mut(&mut a).expect("unshared").push(3);
        assert_eq!(Ref::as_ptr(&a), p);
        let b = a.clone();
        assert!(unique_mut(&mut a).is_none());
        make_mut(&mut a).push(4);
        assert_eq!(*b, vec![1, 2, 3], "the shared copy is untouched");
        assert_eq!(*a, vec![1, 2, 3, 4]);
        let w = Ref::downgrade(&a);
        assert!(
            unique_mut(&mut a).is_none(),
            "a weak reference could upgrade"
        );
        drop(w);
        assert!(unique_mut(&mut a).is_some());
    }

    #[test]
    fn unique_mut_after_a_clone_is_dropped_on_another_thread() {
        let mut a = Ref::new(vec![0u64; 4]);
        for round in 0..100u64 {
            let b = a.clone();
            let t = std::thread::spawn(move || {
                let sum: u64 = b.iter().sum();
                drop(b);
                sum
            });
            let seen = t.join().expect("reader thread");
            assert_eq!(seen, round * 4);
            for x in make_mut(&mut a).iter_mut() {
                *x += 1;
            }
        }
        assert_eq!(*a, vec![100u64; 4]);
    }

    #[test]
    fn symbols_are_one_word_even_optional() {
        assert_eq!(std::mem::size_of::<Sym>(), 8);
        assert_eq!(std::mem::size_of::<Option<Sym>>(), 8);
        assert_eq!(
            Sym::new(Sym::new("zz_probe").as_str()),
            Sym::new("zz_probe")
        );
    }

    #[test]
    fn float_and_char_payloads_round_trip() {
        for x in [0.0, -0.0, 1.5, f64::INFINITY, f64::MIN_POSITIVE, 1e300] {
            assert_eq!(F64::new(x).get().to_bits(), x.to_bits());
        }
        assert!(F64::new(f64::NAN).get().is_nan());
        for c in ['a', '\0', 'é', '😀', char::MAX] {
            assert_eq!(Ch::new(c).get(), c);
        }
    }

    #[test]
    fn clone_fields_copies_every_length() {
        for n in 0..6 {
            let src: Vec<Value> = (0..n).map(|i| Value::str(format!("f{i}"))).collect();
            let c = clone_fields(&src);
            assert_eq!(c.len(), n as usize);
            for (a, b) in c.iter().zip(&src) {
                assert_eq!(a.as_str(), b.as_str());
            }
        }
    }

    #[test]
    fn symbols_intern() {
        assert_eq!(Sym::new("foo"), Sym::new("foo"));
        assert_ne!(Sym::new("foo"), Sym::new("bar"));
        assert_eq!(Sym::new("at:put:").as_str(), "at:put:");
    }

    fn assert_send_sync<T: Send + Sync>() {}
    #[test]
    fn values_are_send_sync() {
        assert_send_sync::<Value>();
    }
}
