//! The interpreter: classes, lowering, the evaluator, primitives, printing, and running on
//! the actor runtime. Values, their storage and term order are the layer below
//! ([`crate::value`]).
//!
//! ```text
//! AST ─▶ lower (slots, cells, inlined control flow) ─▶ eval::code::Node
//!     ─▶ eval (Ctx: one per process) ⇄ prims (Rust tables) ⇄ stdlib/*.bt
//! ```
//!
//! The modules form layers, lowest first: leaves → core types (`Ctx`, `Program`, method
//! tables, compiled code, the primitive registry, the process slot) → evaluation (`impl Ctx`:
//! exec, send, errors, printing) → `lower` → `loader` → `actor` glue → `prims` → the program
//! API (`interpreter`). A file names only its own layer and those below
//! (docs/internals/interpreter.md, "Layers"; checked by tests/lang/module_cycles.rs).
//!
//! | module | what lives there |
//! |---|---|
//! | `class` | classes, metaclasses, method dictionaries |
//! | `program` | the shared program: class table, files, protocols, output |
//! | `lower` | AST → evaluator form |
//! | `eval` | the tree-walker, dispatch, blocks, patterns |
//! | `loader` | installing declarations, running top-level statements |
//! | `distribution` | the distribution interface: small traits the network side (`bt-dist`) implements |
//! | `error` | exceptions as values, kinds → classes, `BtError` |
//! | `prims` | Rust primitives |
//! | `print` | printing |
//! | `process` | a context's process: the process slot of a `Ctx`, preemption, the actor system and its pool of contexts |
//! | `actor` (+ `actor/`) | running on the actor runtime: processes, actor handles, sends |
//! | `checker` | the standard checker: stdlib declarations + primitive selectors |
//! | `interpreter` | [`Interpreter`]: one running program (class table, runtime, main process); the API the CLI, REPL, test runner and engine use |

pub mod actor;
pub mod block_code;
pub mod capability;
pub mod checker;
pub mod class;
pub mod distribution;
pub mod error;
pub mod eval;
pub mod host_cache;
pub mod interpreter;
pub mod lazy_method;
pub mod library_image;
pub mod loader;
pub mod lower;
pub mod mailbox_limit;
pub mod main_job;
pub mod method_table;
pub mod prims;
pub mod print;
pub mod process;
pub mod program;
pub mod registry;
pub mod source_gc;
pub mod stdlib;

pub use interpreter::{BtError, Interpreter, InterpreterOptions, LoadReport, TraceFrame};

#[cfg(test)]
mod tests;
