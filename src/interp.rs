//! The interpreter: values, classes, lowering, the evaluator, primitives, printing and term
//! order.
//!
//! ```text
//! AST ─▶ lower (slots, cells, inlined control flow) ─▶ eval::code::Node
//!     ─▶ eval (Ctx: one per process) ⇄ prims (Rust tables) ⇄ stdlib/*.bt
//! ```
//!
//! | module | what lives there |
//! |---|---|
//! | `value` | what a script can hold |
//! | `array`, `dict` | Array and Dictionary storage |
//! | `class` | classes, metaclasses, method dictionaries |
//! | `program` | the shared program: class table, files, protocols, output |
//! | `lower` | AST → evaluator form |
//! | `eval` | the tree-walker, dispatch, blocks, patterns |
//! | `loader` | installing declarations, running top-level statements |
//! | `error` | exceptions as values, kinds → classes, `BtError` |
//! | `prims` | Rust primitives |
//! | `print`, `order` | printing (part 10), term order and equality (5.12) |
//! | `actor`, `actor_*` | running on the actor runtime: processes, actor handles, sends |
//! | `vm` | the program-level API used by the CLI, REPL and test runner |

pub mod actor;
pub mod actor_behaviour;
pub mod actor_handle;
pub mod actor_send;
pub mod actor_slots;
pub mod array;
pub mod class;
pub mod dict;
pub mod error;
pub mod eval;
pub mod loader;
pub mod lower;
pub mod order;
pub mod prims;
pub mod print;
pub mod program;
pub mod stdlib;
pub mod value;
pub mod vm;

pub use vm::{BtError, LoadReport, TraceFrame, Vm, VmOptions};
#[cfg(test)]
mod tests;
