//! The primitive registry: every Rust function bound to a selector of a built-in class, keyed
//! by (class name, selector) on the instance or the class side.
//!
//! Each primitive module's `register(p)` adds its functions with [`Prims::add`] (instance
//! side) or [`Prims::add_class`]. A primitive must also be declared in `stdlib/*.bt` as
//! `selector => @primitive` on the same class and side — that declaration is what the checker
//! reads (`crates/bt-check/src/check/builtins.rs`); `prims::agreement_tests` fails when the two disagree.
//! Registering the same (class, side, selector) twice is an error: only the first registration
//! is used, and [`Prims::duplicates`] lists the others (a test requires it to be empty).
//!
//! A primitive whose work grows with its inputs declares how at registration —
//! `p.add("String", "++", concat).cost(Cost::InputBytes)` — and the send path charges those
//! units (`Cost::charge`, defined with the charging in `interp::eval::charge`) before calling
//! it; see [`Cost`]. The functions here take the context as `eval::context::Ctx`: the
//! registry holds them and never reads a context, so it does not name the evaluator.

use std::any::Any;
use std::collections::HashMap;

use crate::interp::eval::context::{Ctx, EvalResult, PrimFn, Unwind};
use crate::value::ClassRef;
use crate::value::Sym;
use crate::value::Value;
use big_units as big;

pub mod big_units;
pub mod input_units;

/// A process reference as the send path sees it (`interp::actor::target`, which asks the
/// registered kinds). Declared here, with the list of kinds [`Prims::send_target`] fills.
pub trait SendTarget: Send + Sync + 'static {
    /// A sync send of `sel` with `args` to `recv` (the value holding `self`): `Some` with the
    /// result when the reference handles it (through the runtime, another node, a name
    /// lookup); `None` for ordinary dispatch on the reference itself (its printing, identity,
    /// the handle's own protocol).
    fn send(&self, ctx: &mut Ctx, recv: &Value, sel: Sym, args: &[Value]) -> Option<EvalResult>;

    /// [`SendTarget::send`] with the arguments on the context's slot stack from `base` (a
    /// compiled send site pushed them there): `Some` when the reference handled the send,
    /// having taken the arguments off the stack (moved into the message: no copy of them,
    /// no reference counts); `None` (the default) leaves the stack as it was, for `send`.
    /// The reduction tick is the implementation's to take, as `Ctx::send_impl` does.
    fn send_at(
        &self,
        _ctx: &mut Ctx,
        _recv: &Value,
        _sel: Sym,
        _base: usize,
    ) -> Option<EvalResult> {
        None
    }

    /// A cast (`!`): `Some` when the message was queued for (or sent to) a process; `None`
    /// runs it as a sync send.
    fn cast(
        &self,
        _ctx: &mut Ctx,
        _recv: &Value,
        _sel: Sym,
        _args: &[Value],
    ) -> Option<Result<(), Unwind>> {
        None
    }
}

/// Finds the [`SendTarget`] of a native value's object, if it is of one registered kind.
pub type TargetOf = fn(&dyn Any) -> Option<&dyn SendTarget>;

/// The [`TargetOf`] of the reference kind `T`.
pub fn target_of<T: SendTarget>(obj: &dyn Any) -> Option<&dyn SendTarget> {
    obj.downcast_ref::<T>().map(|t| t as &dyn SendTarget)
}

/// How the work of a primitive grows with its inputs: the units charged before it runs (a
/// byte is one unit, see `interp::eval::charge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cost {
    /// Constant work (or work the primitive meters itself).
    #[default]
    Free,
    /// Linear in the inputs: the bytes of the receiver and of each String/Binary argument, a
    /// List/Array argument's elements and their bytes (`string::input_units`).
    InputBytes,
    /// [`Cost::InputBytes`] of a String receiver until its grapheme clusters are measured;
    /// constant after (`size`, `at:`: byte arithmetic or a short walk from the index, see
    /// `value::text`).
    Clusters,
    /// [`Cost::InputBytes`] for a primitive whose result is a new value about as large as
    /// its inputs (concatenation, a copy, a conversion): those bytes are also reserved
    /// before it runs (`Ctx::reserve`).
    Copy,
    /// [`Cost::Copy`] with a result up to `k` times the inputs' bytes (`asHex`: 2).
    Grow(u8),
    /// The size of `n` copies of the receiver (`repeat: n`).
    RepeatResult,
    /// The size of a result padded to `n` (`padLeft: n`): `max(n, receiver bytes)`.
    PadResult,
    /// A List of one Value a byte of a Binary receiver (`toBytes`).
    ByteValues,
    /// With a big Integer operand: the operands' bytes (addition, comparison, bit operations).
    BigLinear,
    /// With a big Integer operand: the product of the operands' sizes / 64 plus their bytes
    /// (multiplication, division, gcd, printing).
    BigProduct,
}

impl Cost {
    /// The units a call with receiver `r` and arguments `a` pays.
    pub fn units(self, r: &Value, a: &[Value]) -> usize {
        match self {
            Cost::Free => 0,
            Cost::InputBytes | Cost::Copy | Cost::Grow(_) => input_units::input_units(r, a),
            Cost::Clusters => match r {
                Value::Str(s) if s.is_measured() => 0,
                _ => input_units::input_units(r, a),
            },
            Cost::RepeatResult | Cost::PadResult => {
                let n = match a.first() {
                    Some(Value::Int(i)) => (*i).max(0) as usize,
                    _ => 0,
                };
                match r {
                    Value::Str(s) if self == Cost::RepeatResult => s.len().saturating_mul(n),
                    Value::Str(s) => n.max(s.len()),
                    _ => n,
                }
            }
            Cost::ByteValues => match r {
                Value::Binary(b) => b.len().saturating_mul(crate::interp::eval::units::ELEM),
                _ => 0,
            },
            Cost::BigLinear | Cost::BigProduct if !big::any_big(r, a) => 0,
            Cost::BigLinear => big::big_units(r, a, big::Growth::Linear),
            Cost::BigProduct => big::big_units(r, a, big::Growth::Product),
        }
    }

    /// The bytes of the result a call with `units` units allocates, for the costs that know
    /// it (reserved before the call: `Ctx::reserve`).
    pub(crate) fn result_bytes(self, units: usize) -> Option<usize> {
        match self {
            Cost::Copy | Cost::RepeatResult | Cost::PadResult | Cost::ByteValues => Some(units),
            Cost::Grow(k) => Some(units.saturating_mul(k as usize)),
            _ => None,
        }
    }
}

/// A registered primitive: its function and what a call costs.
#[derive(Clone, Copy)]
pub struct Prim {
    pub f: PrimFn,
    pub cost: Cost,
}

impl Prim {
    /// A primitive of constant cost.
    pub fn free(f: PrimFn) -> Prim {
        Prim {
            f,
            cost: Cost::Free,
        }
    }

    /// Declares the cost of a call (at registration: `p.add(..).cost(Cost::InputBytes)`).
    pub fn cost(&mut self, cost: Cost) -> &mut Prim {
        self.cost = cost;
        self
    }
}

/// (class name, selector) → primitive.
pub type PrimTable = HashMap<(&'static str, &'static str), Prim, foldhash::fast::RandomState>;

/// One registration: class name, selector, class side?, primitive.
pub type Entry = (&'static str, &'static str, bool, Prim);

/// The primitive tables of a program.
#[derive(Default)]
pub struct Prims {
    /// Every registration in order (a push each: nothing is hashed until the per-class
    /// index is made, once per process).
    pub entries: Vec<Entry>,
    /// The kinds of process reference a send to a native value is offered to, in
    /// registration order (`interp::actor::target`).
    pub send_targets: Vec<TargetOf>,
    /// What the evaluator asks of primitive modules without naming them.
    pub hooks: Hooks,
}

/// A collection update that mutates its receiver (in place when nothing else shares it):
/// `x := x add: y` runs one when `x` holds a collection whose class keeps the built-in
/// selector (`prims::collections::in_place`).
pub type InPlaceFn = fn(&mut Ctx, &mut Value, &[Value]) -> EvalResult;

/// How to take back one in-place collection update: recorded before the update runs and
/// applied, latest first, when an actor's message fails (its rollback journal,
/// `eval::journal`), so a collection in an actor's state is updated in place even while
/// the message's rollback copy refers to it.
pub enum Undo {
    /// Back to `n` elements (the update appended one: List/Array `add:`, Queue `enqueue:`),
    /// or a String back to `n` bytes (`++`).
    Truncate(usize),
    /// Element `i` (0-based) back to the value it had (Array `at:put:`).
    Put(usize, Value),
    /// The key back to the value it had, or absent (Dictionary `at:put:`, `removeKey:`).
    Key(Value, Option<Value>),
    /// The element back in the Set (`true`) or out of it (Set `add:`, `remove:`).
    Member(Value, bool),
}

/// The evaluator's questions to primitive modules, answered by functions those modules
/// install when they register (so the evaluator, classes, program and errors never name
/// `prims`). Each has a plain default for a registry without that module.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// The in-place variant of an update selector for this receiver, if it has one.
    pub in_place: fn(&Value, Sym) -> Option<InPlaceFn>,
    /// The record that takes back the in-place update `sel` with these arguments, read from
    /// the receiver before the update runs, when the update has a cheap one.
    pub undo_of: fn(&Value, Sym, &[Value]) -> Option<Undo>,
    /// Applies an undo record to the collection it was made for (copying it first when
    /// it is shared).
    pub undo: fn(&mut Value, Undo),
    /// The value of a capitalised name that is no class: a declared protocol's object.
    pub global: fn(&Ctx, Sym) -> Option<Value>,
    /// Does class `c` conform to the protocol `name` (a pattern's type test)?
    pub conforms: fn(&Ctx, &ClassRef, Sym) -> bool,
    /// The decimal printString of a big Integer, metered so a limit lands between pieces.
    pub big_int_string: fn(&mut Ctx, &Value) -> Result<String, Unwind>,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            in_place: |_, _| None,
            undo_of: |_, _, _| None,
            undo: |_, _| {},
            global: |_, _| None,
            conforms: |_, _, _| false,
            big_int_string: |_, v| Ok(crate::interp::print::simple_print(v).unwrap_or_default()),
        }
    }
}

impl Prims {
    /// Registers an instance-side primitive (of constant cost unless `.cost(..)` says).
    pub fn add(&mut self, class: &'static str, selector: &'static str, f: PrimFn) -> &mut Prim {
        self.insert(false, class, selector, f)
    }

    /// Registers a class-side primitive.
    pub fn add_class(
        &mut self,
        class: &'static str,
        selector: &'static str,
        f: PrimFn,
    ) -> &mut Prim {
        self.insert(true, class, selector, f)
    }

    fn insert(
        &mut self,
        class_side: bool,
        class: &'static str,
        selector: &'static str,
        f: PrimFn,
    ) -> &mut Prim {
        self.entries
            .push((class, selector, class_side, Prim::free(f)));
        &mut self.entries.last_mut().expect("just pushed").3
    }

    /// The primitives of one side keyed by (class, selector); of a (class, side, selector)
    /// registered more than once the first is kept.
    pub fn table(&self, class_side: bool) -> PrimTable {
        let mut t = PrimTable::default();
        for &(c, s, side, p) in &self.entries {
            if side == class_side {
                t.entry((c, s)).or_insert(p);
            }
        }
        t
    }

    /// (class, selector, class side?) registered more than once.
    pub fn duplicates(&self) -> Vec<(&'static str, &'static str, bool)> {
        let mut seen = std::collections::HashSet::new();
        self.entries
            .iter()
            .filter(|&&(c, s, side, _)| !seen.insert((c, s, side)))
            .map(|&(c, s, side, _)| (c, s, side))
            .collect()
    }

    /// Registers a kind of process reference: sends and casts to a native value of that kind
    /// go through its [`SendTarget`] (`p.send_target(
    /// target_of::<ActorRef>)`).
    pub fn send_target(&mut self, of: TargetOf) {
        self.send_targets.push(of);
    }

    /// The primitive registered for a class, side and selector (the first registration).
    pub fn get(&self, class: &str, class_side: bool, selector: &str) -> Option<Prim> {
        self.entries
            .iter()
            .find(|&&(c, s, side, _)| side == class_side && c == class && s == selector)
            .map(|e| e.3)
    }
}

/// The primitive tables every program uses, registered once per process (they depend on
/// nothing but the code), with a per-class index: creating a program (an `Engine`, a test
/// interpreter) neither registers them again nor scans them once per class.
pub struct SharedPrims {
    pub prims: Prims,
    /// (class name, class side?) → its primitives by selector (interned once).
    by_class: ByClass,
}

/// A class side's primitives by selector.
type ClassPrims = Vec<(Sym, Prim)>;

type ByClass = HashMap<(Sym, bool), ClassPrims, foldhash::fast::RandomState>;

impl SharedPrims {
    /// The primitives of `class` on one side (empty when it has none).
    /// Every (class name, side) and its primitives.
    pub fn by_class_iter(&self) -> impl Iterator<Item = (&(Sym, bool), &Vec<(Sym, Prim)>)> {
        self.by_class.iter()
    }

    pub fn of_class(&self, class: Sym, class_side: bool) -> &[(Sym, Prim)] {
        self.by_class
            .get(&(class, class_side))
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    /// The primitive registered for `class` and a selector on one side (the first
    /// registration).
    pub fn find(&self, class: Sym, class_side: bool, selector: Sym) -> Option<Prim> {
        self.of_class(class, class_side)
            .iter()
            .find(|(s, _)| *s == selector)
            .map(|e| e.1)
    }
}

impl std::ops::Deref for SharedPrims {
    type Target = Prims;
    fn deref(&self) -> &Prims {
        &self.prims
    }
}

impl SharedPrims {
    /// The tables `register` fills (every primitive module's registration,
    /// `prims::register_all`), indexed by class.
    pub fn build(register: fn(&mut Prims)) -> SharedPrims {
        // Sized above the registry (~1,340 primitives), so registering never grows it.
        let mut prims = Prims {
            entries: Vec::with_capacity(1536),
            ..Prims::default()
        };
        register(&mut prims);
        // Each list is in registration order (it fills method tables, which are hash maps).
        // A module registers a class's primitives together, so the class and its list are
        // looked up only when the class or side changes; class names are interned once
        // per class, not once per primitive.
        let mut class_syms: HashMap<&'static str, Sym, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(128, Default::default());
        let mut slot: HashMap<(Sym, bool), usize, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(192, Default::default());
        let mut groups: Vec<((Sym, bool), ClassPrims)> = Vec::with_capacity(192);
        let mut last: Option<(&'static str, bool, usize)> = None;
        let selectors = Sym::new_static_all(prims.entries.iter().map(|e| e.1));
        for (&(c, _, side, p), s) in prims.entries.iter().zip(selectors) {
            let g = match last {
                Some((lc, ls, g)) if ls == side && std::ptr::eq(lc, c) => g,
                _ => {
                    let cs = *class_syms.entry(c).or_insert_with(|| Sym::new_static(c));
                    let g = *slot.entry((cs, side)).or_insert_with(|| {
                        groups.push(((cs, side), Vec::new()));
                        groups.len() - 1
                    });
                    last = Some((c, side, g));
                    g
                }
            };
            groups[g].1.push((s, p));
        }
        let by_class: ByClass = groups.into_iter().collect();
        SharedPrims { prims, by_class }
    }
}
