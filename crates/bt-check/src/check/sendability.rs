//! Sendability tiers: which static types may cross a process or node
//! boundary. A Value or collection type takes the weakest tier of its fields or elements;
//! `Unknown` never makes anything weaker (the checker stays silent about what it cannot see).

use super::classtable::{ClassTable, HandleScope, Kind};
use super::types::{Hierarchy, Ty};

/// Tiers, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Process,
    Node,
    SendableRef,
    Sendable,
    Unknown,
}

pub const SENDABLE: &[&str] = &[
    "Number",
    "Integer",
    "Float",
    "Character",
    "String",
    "Binary",
    "Symbol",
    "Boolean",
    "True",
    "False",
    "UndefinedObject",
    "Duration",
    "Node",
    "Reference",
];

pub const COLLECTIONS: &[&str] = &[
    "List",
    "Array",
    "Set",
    "Bag",
    "Tuple",
    "Queue",
    "Dictionary",
    "Result",
    "Stream",
];

/// The weakest of two tiers (`Unknown` is neutral).
pub(crate) fn weakest(a: Tier, b: Tier) -> Tier {
    match (a, b) {
        (Tier::Unknown, x) | (x, Tier::Unknown) => x,
        (x, y) => x.min(y),
    }
}

pub fn tier(table: &ClassTable, t: &Ty) -> Tier {
    tier_depth(table, t, 0)
}

fn tier_depth(table: &ClassTable, t: &Ty, depth: usize) -> Tier {
    if depth > 8 {
        return Tier::Unknown;
    }
    match t {
        Ty::Nil | Ty::Sym(_) | Ty::Meta(_) => Tier::Sendable,
        Ty::Union(ms) => ms
            .iter()
            .map(|m| tier_depth(table, m, depth + 1))
            .fold(Tier::Unknown, weakest),
        Ty::Inst(c, args) => {
            for info in table.chain(c) {
                match info.handle_scope {
                    Some(HandleScope::Process) => return Tier::Process,
                    Some(HandleScope::Node) => return Tier::Node,
                    None => {}
                }
            }
            if SENDABLE.contains(&c.as_str()) {
                return Tier::Sendable;
            }
            if c == "Interval" {
                return Tier::Sendable;
            }
            if COLLECTIONS.contains(&c.as_str()) {
                return args
                    .iter()
                    .map(|a| tier_depth(table, a, depth + 1))
                    .fold(Tier::Unknown, weakest);
            }
            let is = |sup: &str| table.inherits(c, sup) == Some(true);
            if is("Pid") || is("Supervisor") || is("DynamicSupervisor") {
                return Tier::SendableRef;
            }
            match table.kind_of(c) {
                Some(Kind::Actor) => Tier::SendableRef,
                Some(Kind::Value) if !table.get(c).is_some_and(|i| i.origin.is_library()) => table
                    .all_slots(c)
                    .iter()
                    .map(|s| {
                        s.ty.as_ref()
                            .map(|t| tier_depth(table, t, depth + 1))
                            .unwrap_or(Tier::Unknown)
                    })
                    .fold(Tier::Unknown, weakest),
                _ => Tier::Unknown,
            }
        }
        _ => Tier::Unknown,
    }
}
