//! Compile once, run many: [`Script`] is a bt block made from the source once (parsed,
//! checked and lowered by one `eval`); each [`crate::Engine::run`] calls the block with its
//! arguments, without touching the front end again.

use crate::engine::error::EngineError;
use crate::engine::limits::Shared;
use crate::interp::main_job::BlockOut;
use crate::interp::Interpreter as Vm;
use crate::value::Value;

/// A compiled script of an [`crate::Engine`] (see [`crate::Engine::compile`]). It belongs
/// to the engine that compiled it.
#[derive(Clone)]
pub struct Script {
    block: Value,
    arity: usize,
}

impl Script {
    pub(crate) fn new(block: Value, arity: usize) -> Script {
        Script { block, arity }
    }

    pub(crate) fn block(&self) -> &Value {
        &self.block
    }

    /// The number of arguments [`crate::Engine::run`] passes.
    pub fn arity(&self) -> usize {
        self.arity
    }
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Script({} argument(s))", self.arity)
    }
}

/// The block literal wrapping `source` (`[:x :y | …]`), each statement line indented.
pub(crate) fn block_source(params: &[&str], source: &str) -> String {
    let mut s = String::from("[");
    for p in params {
        s.push(':');
        s.push_str(p);
        s.push(' ');
    }
    if !params.is_empty() {
        s.push('|');
    }
    s.push('\n');
    for line in source.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s.push(']');
    s
}

/// Calls the script's block on the main process (the block's code directly,
/// `Ctx::invoke_block`: what `Ctx::call_block` does for a block, one call less).
#[inline(always)]
pub(crate) fn run(
    vm: &mut Vm,
    shared: &Shared,
    block: &Value,
    args: &[Value],
) -> Result<Value, EngineError> {
    // The evaluation arms the main guard itself (`Shared::arm_call`): the job does not
    // call the hook factory.
    let arm = |pid| shared.arm_call(pid);
    if let Value::Block(c) = block {
        // A job made for a block call (`main_job::BlockFrame`).
        return match vm.try_call_block_armed(arm, c, args) {
            BlockOut::Value(v) => Ok(v),
            BlockOut::Error(e) => Err(EngineError::from_bt(*e, None)),
            BlockOut::Failed(m) => Err(EngineError::usage("internal_error", *m)),
        };
    }
    let r = vm.try_run_armed(arm, move |ctx, _| {
        ctx.call_block(block, args)
            .map_err(|u| EngineError::from_bt(crate::interp::error::to_bt_error(ctx, u), None))
    });
    match r {
        Ok(r) => r,
        Err(m) => Err(EngineError::usage("internal_error", m)),
    }
}
