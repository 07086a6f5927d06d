//! Units of work: the rate at which primitives pay reductions for bulk work (a byte is one
//! unit, a `Value` element [`ELEM`], a keyed insertion [`KEYED`]; one reduction is
//! [`UNITS_PER_REDUCTION`]) and the sizes the charging methods of `Ctx` use (`eval::charge`,
//! whose module doc explains the rate). A leaf: plain numbers and a pure count, so the
//! primitive registry's costs can name them without the evaluator.

use crate::value::{Ref, Value};

/// log2 of the units one reduction pays for.
pub const CHARGE_SHIFT: u32 = 6;
/// Units of work one reduction pays for (a byte is one unit).
pub const UNITS_PER_REDUCTION: usize = 1 << CHARGE_SHIFT;
/// Units for one `Value` element copied or built (a Value is 16 bytes).
pub const ELEM: usize = 16;
/// Units for one element hashed/ordered into a Set, Bag or Dictionary (one reduction).
pub const KEYED: usize = 64;
/// Units a loop accumulates between calls of `Ctx::charge` (64 reductions).
pub const CHUNK: usize = 64 * UNITS_PER_REDUCTION;

/// About what a short String takes as an element of a List beyond its text: the element,
/// the shared String's header and the allocation's rounding (`split:`, `lines`, `asList`
/// of a String: reserved per part).
pub const PART_BYTES: usize = 64;

/// Elements a builder of unknown size adds between two reports to `Ctx::built`.
pub const BUILT_EVERY: usize = 1024;

/// Bytes below which `Ctx::reserve` does not check (the next hook call sees the growth).
pub const RESERVE_FREE: usize = 64 * 1024;

/// Units for appending `args` (Strings) to `acc` in place: the appended bytes, plus a copy
/// of `acc` when it is shared (the append copies it first).
pub fn append_units(acc: &Value, args: &[Value]) -> usize {
    let extra: usize = args.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
    let copy = match acc {
        Value::Str(s) if Ref::strong_count(s) > 1 => s.len(),
        _ => 0,
    };
    extra + copy
}
