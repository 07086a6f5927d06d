//! The evaluation context as the core types below the evaluator see it: its name ([`Ctx`])
//! and the shapes of the functions over it — a primitive ([`PrimFn`]), the frame compiled
//! code runs in ([`Frame`]), what evaluation answers ([`EvalResult`], [`Flow`], [`Unwind`])
//! and the preemption hook ([`PreemptHook`]).
//!
//! A method table, the program, compiled code and the inline caches hold functions of the
//! context (primitives, compiled closures, host functions), and the context holds them (its
//! program, its method cache). Those data modules name the context only as the type of such
//! functions, never reading its fields or calling its methods, so they name it here: [`Ctx`]
//! is the context type `eval.rs` fixes (`impl Bind for Evaluator`), and they need not name
//! the evaluator. A file that reads or runs a context names `eval::Ctx` itself and belongs
//! above `eval.rs` (docs/architecture.md, "Module cycles").
//!
//! Layer: a leaf (names only the values layer).

use std::sync::Arc;

use crate::value::block::VarCell;
use crate::value::class::Class;
use crate::value::{Sym, Value};

/// Fixes the context type the data modules name ([`Ctx`]): implemented once, by `eval.rs`.
pub trait Bind {
    /// The evaluation context (`eval::Ctx`).
    type Ctx: ?Sized;
}

/// The evaluator, which implements [`Bind`].
pub enum Evaluator {}

/// The evaluation context (`eval::Ctx`), for the types of functions over it.
pub type Ctx = <Evaluator as Bind>::Ctx;

pub type EvalResult = Result<Value, Unwind>;

/// The evaluator's internal result: the unwind is boxed so a result is two words and travels
/// in registers (errors and non-local returns are rare).
pub(crate) type Flow = Result<Value, Box<Unwind>>;

/// A primitive: the context, the receiver and the arguments.
pub type PrimFn = fn(&mut Ctx, &Value, &[Value]) -> EvalResult;

/// Preemption hook: called every `budget` reductions; may suspend the process (coroutine
/// yield) or end it with an `Err`.
pub type PreemptHook = Box<dyn FnMut() -> Result<(), Unwind> + Send>;

/// Non-local exits carried in `Err`: exceptions, `^` from a block, process termination.
pub enum Unwind {
    /// A raised exception (an `Instance` of an Exception class).
    Error(Value),
    /// `^ value` travelling to the activation `home`.
    Return { value: Value, home: u64 },
    /// The process is being killed / stopped. `Program exit: n` travels as
    /// `Exit(Tuple(#exit, n))` (see [`Unwind::program_exit`]).
    Exit(Value),
}

impl Unwind {
    /// The unwind of `Program exit: code`.
    pub fn program_exit(code: i64) -> Unwind {
        Unwind::Exit(Value::tuple(vec![Value::sym("exit"), Value::Int(code)]))
    }
    /// `Some(code)` when this is a `Program exit:` unwind.
    pub fn exit_code(&self) -> Option<i32> {
        if let Unwind::Exit(Value::Tuple(t)) = self {
            if t.len() == 2 && t[0].as_sym() == Some(Sym::new("exit")) {
                return t[1].as_int().map(|c| c as i32);
            }
        }
        None
    }
    /// The unwind that ends an evaluation at an embedder's limit (`kind` is e.g.
    /// `reduction_limit`): a process exit, so `on:do:` cannot catch it.
    pub fn limit(kind: &'static str) -> Unwind {
        Unwind::Exit(Value::tuple(vec![
            Value::sym("engine_limit"),
            Value::sym(kind),
        ]))
    }
    /// `Some(kind)` when this is a [`Unwind::limit`] unwind.
    pub fn limit_kind(&self) -> Option<Sym> {
        if let Unwind::Exit(Value::Tuple(t)) = self {
            if t.len() == 2 && t[0].as_sym() == Some(Sym::new("engine_limit")) {
                return t[1].as_sym();
            }
        }
        None
    }
}

/// The run-time context of one activation, passed by reference while a body runs.
pub(crate) struct Frame<'a> {
    pub recv: &'a Value,
    pub base: usize,
    pub cbase: usize,
    pub upvals: &'a [Arc<VarCell>],
    pub home: u64,
    pub mclass: Option<&'a Class>,
    pub mside: bool,
}
