//! The interpreter: classes, lowering, the evaluator, primitives, printing, and running on
//! the actor runtime. Values, their storage and term order are the layer below
//! ([`crate::value`]).
//!
//! ```text
//! AST ─▶ lower (slots, cells, inlined control flow) ─▶ eval::code::Node
//!     ─▶ eval (Ctx: one per process) ⇄ prims (Rust tables) ⇄ stdlib/*.bt
//! ```
//!
//! | module | what lives there |
//! |---|---|
//! | `class` | classes, metaclasses, method dictionaries |
//! | `program` | the shared program: class table, files, protocols, output |
//! | `lower` | AST → evaluator form |
//! | `eval` | the tree-walker, dispatch, blocks, patterns |
//! | `loader` | installing declarations, running top-level statements |
//! | `error` | exceptions as values, kinds → classes, `BtError` |
//! | `prims` | Rust primitives |
//! | `print` | printing (part 10) |
//! | `actor` (+ `actor/`) | running on the actor runtime: processes, actor handles, sends |
//! | `checker` | the standard checker: stdlib declarations + primitive selectors |
//! | `interpreter` | [`Interpreter`]: one running program (class table, runtime, main process); the API the CLI, REPL, test runner and engine use |

pub mod actor;
pub mod checker;
pub mod class;
pub mod error;
pub mod eval;
pub mod interpreter;
pub mod loader;
pub mod lower;
pub mod mailbox_limit;
pub mod offload;
pub mod prims;
pub mod print;
pub mod program;
pub mod stdlib;

// Old paths still written by branches in flight (remote, cluster): `interp::value` (now
// `crate::value`) and the actor files (now `interp::actor::{behaviour, handle, send}`). Only
// files those branches edit still use them; once they have merged, run
//   sed -i -E 's/\b(crate|bt)::interp::value\b/\1::value/g;
//              s/\binterp::actor_(behaviour|handle|send)\b/interp::actor::\1/g' $(git ls-files '*.rs')
// and delete these two lines. (`interp::{array, dict, order, actor_slots, vm, Vm, VmOptions}`
// and the `cli::check` re-exports are gone.)
pub use crate::value;
pub use actor::{behaviour as actor_behaviour, handle as actor_handle, send as actor_send};

pub use interpreter::{BtError, Interpreter, InterpreterOptions, LoadReport, TraceFrame};

#[cfg(test)]
mod tests;
