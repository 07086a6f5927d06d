//! Primitive tables: Rust functions bound to selectors of built-in classes.
//!
//! Each module exposes `pub fn register(p: &mut Prims)` ([`Prims`](crate::interp::registry::Prims)); [`register_all`]
//! calls them all when the class table is built, and every registered primitive is installed
//! on its class. Each one must be declared in `stdlib/*.bt` as `selector => @primitive` on the
//! same class and side — the declaration the checker reads — and may be registered once:
//! `agreement_tests` fails otherwise (see docs/architecture.md, "How to add a primitive").

/// Defines the ordering primitives `lt` `gt` `le` `ge` (`<` `>` `<=` `>=`) of a module over
/// its `compare(&Value, &Value) -> Ordering` (the class's own order, term order for a
/// receiver and argument of different kinds). Needs `Ordering`, `Ctx`, `EvalResult` and
/// `Value` in scope.
macro_rules! ordering_prims {
    () => {
        fn cmp_prim(r: &Value, a: &[Value], ok: fn(Ordering) -> bool) -> EvalResult {
            Ok(Value::bool(ok(compare(r, &a[0]))))
        }
        fn lt(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o == Ordering::Less)
        }
        fn gt(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o == Ordering::Greater)
        }
        fn le(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o != Ordering::Greater)
        }
        fn ge(_: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            cmp_prim(r, a, |o| o != Ordering::Less)
        }
    };
}

pub mod announce;
pub mod atomic;
pub mod binary;
pub mod block;
pub mod boolean;
pub mod character;
pub mod class;
pub mod codec;
pub mod collections;
pub mod console;
pub mod datetime;
pub mod duration;
pub mod erlang;
pub mod exception;
pub mod fault;
pub mod file;
pub mod file_lines;
pub mod json;
pub mod json_parse;
pub mod number;
pub mod object;
pub mod parallel;
pub mod parallel_collect;
pub mod protocol;
pub mod random;
pub mod reflection;
pub mod regex;
pub mod search_eq;
pub mod string;
pub mod symbol;
pub mod timer;
pub mod transcript;

#[cfg(test)]
mod agreement_tests;

use crate::interp::eval::Prims;

pub mod args;
pub use args::{class_arg, seq_arg, sym_arg, sym_list, value_of, value_with_optional};

/// Registers every primitive module.
/// The primitive tables every program uses, registered once per process (they depend on
/// nothing but the code): what `Program::bootstrap` installs.
pub fn shared() -> &'static crate::interp::registry::SharedPrims {
    static SHARED: std::sync::OnceLock<crate::interp::registry::SharedPrims> =
        std::sync::OnceLock::new();
    SHARED.get_or_init(|| crate::interp::registry::SharedPrims::build(register_all))
}

pub fn register_all(p: &mut Prims) {
    object::register(p);
    boolean::register(p);
    block::register(p);
    exception::register(p);
    class::register(p);
    reflection::register(p);
    number::register(p);
    number::integer::register(p);
    number::float::register(p);
    character::register(p);
    string::register(p);
    string::regex::register(p);
    binary::register(p);
    symbol::register(p);
    collections::register(p);
    // The actor runtime's classes (Actor, Pid, Reference, Timer, Duration, AtomicCounter,
    // TranscriptStream, Workspace actors).
    crate::interp::actor::prims::register(p);
    duration::register(p);
    timer::register(p);
    atomic::register(p);
    transcript::register(p);
    console::register(p);
    parallel::register(p);
    announce::register(p);
    // Batteries.
    json::register(p);
    file::register(p);
    datetime::register(p);
    regex::register(p);
    erlang::register(p);
    random::register(p);
    protocol::register(p);
}
