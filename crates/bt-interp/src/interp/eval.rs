//! The evaluator: a recursive tree-walker over the lowered form of [`code`].
//!
//! [`Ctx`] is the evaluation context of one process (the main program, later each actor): its
//! slot and cell stacks, activation depth, method cache, reduction budget and preemption hook.
//! Everything shared between processes (class table, files, options) lives in the
//! [`Program`](crate::interp::program::Program) behind an `Arc`. Nothing here is thread-local
//! and no lock or borrow is held across a send, so a `Ctx` can run on a stackful coroutine.
//!
//! Submodules: `code` (the lowered IR), `exec` (node evaluation and inlined control flow),
//! `send` (dispatch, method cache, activations, DNU), `pattern` (match and destructuring),
//! `charge` (reductions for bulk work in primitives: `Ctx::charge`), `units` (the rate of
//! charging: a leaf), `context` (the context's name for the core types below this file, and
//! `Unwind`, `EvalResult`, `PrimFn`, `Frame`: a leaf).
//!
//! Layer: this file is the top of the core types. It names the program, the method tables,
//! compiled code (`code`, `compile`'s forms), the inline caches (`hit`), the process slot and
//! the registry; they name the context only as `context::Ctx`, which this file fixes to
//! [`Ctx`] (`impl Bind for Evaluator`), so none of them names this file. `field` (listed
//! with the core types) and `exec`, `send`, `entry`, `owned`, `pattern`, `class_side`, `site`
//! and `charge` (evaluation) are `impl Ctx` blocks above it that no core data file names.
//! Nothing here names lowering, loading, the actor glue or the primitives.

#[cfg(test)]
mod cache_tests;
pub mod charge;
mod class_side;
pub mod code;
pub mod compile;
pub mod context;
mod entry;
mod exec;
mod field;
pub(crate) mod hit;
pub mod journal;
mod owned;
mod pattern;
mod send;
mod site;
pub mod units;

use std::sync::Arc;

use crate::interp::class::Class;
pub use crate::interp::error::ErrorKind;
use crate::interp::program::{HostFn, Program};
use crate::value::{ClassRef, Sym, Value};

/// A method in a method dictionary (`interp::method_table`).
pub use crate::interp::method_table::Method;
pub use code::sel_arity;
pub use code::{CompiledMethod, FnCode, Loc};
pub use context::{EvalResult, PreemptHook, PrimFn, Unwind};
pub(crate) use context::{Flow, Frame};
pub(crate) use send::REMOTE_HOME;

// Closures and captured cells are values-layer types (`Value::Block` holds them); their code
// is this layer's `FnCode`, reached through `Closure::fn_code` (interp/block_code.rs).
pub use crate::value::block::{Closure, VarCell};

/// Primitive tables: see [`crate::interp::registry`].
pub use crate::interp::registry::Prims;

/// One running method activation (for `^` homes and `stackTrace`).
#[derive(Clone, Copy)]
pub(crate) struct Activation {
    pub home: u64,
    pub class: Sym,
    pub sel: Sym,
    pub class_side: bool,
    /// Where the caller was when it made this activation (the call site, for tracebacks).
    pub call_loc: Loc,
}

pub(crate) struct CacheEntry {
    key: usize,
    sel: Sym,
    /// Keeps the receiver class alive so its address cannot be reused while cached.
    #[allow(dead_code)] // held for its Drop, never read
    cls: Option<ClassRef>,
    hit: Option<hit::Hit>,
}

/// A host function's key: (class, selector, instance side).
pub(crate) type HostKey = (Sym, Sym, bool);

/// A running class method of a class with class variables that does not touch them itself.
/// The class methods of the same class it calls log the class variables they change; if it
/// raises, each logged variable still holding the value this process wrote goes back to its
/// value before the first change. The scope holds no lock, so a process it waits for may
/// use the class meanwhile. Run by `Ctx::run_class_state_scope`.
pub(crate) struct StateScope {
    pub(crate) target: ClassRef,
    /// (class of the chain, variable, value before the first change, value after the last).
    pub(crate) undo: Vec<(ClassRef, Sym, Value, Value)>,
}

/// The host function a context called last, with the program epoch and key it was looked up
/// at (`interp::host_cache`, which holds what reads and fills it).
pub(crate) struct HostCache {
    epoch: u64,
    key: HostKey,
    f: Option<HostFn>,
}

impl Default for HostCache {
    fn default() -> Self {
        HostCache {
            epoch: 0,
            key: (Sym::NONE, Sym::NONE, false),
            f: None,
        }
    }
}

impl HostCache {
    /// Takes the cached function for `key` when it was looked up at `epoch`.
    #[inline(always)]
    pub(crate) fn take(&mut self, epoch: u64, key: HostKey) -> Option<HostFn> {
        if self.epoch == epoch && self.key == key {
            self.f.take()
        } else {
            None
        }
    }

    /// Keeps `f` for the next call of `key` at `epoch` (replacing whatever is there).
    #[inline(always)]
    pub(crate) fn put(&mut self, epoch: u64, key: HostKey, f: HostFn) {
        self.epoch = epoch;
        self.key = key;
        self.f = Some(f);
    }
}

const CACHE_SIZE: usize = 1024;

/// The entries an inline cache starts with: a short program (hello sends a few dozen
/// messages) never writes a full-size cache, which is 12 pages of a main context's, written
/// in whole when it is made and at every change of the program's epoch.
const CACHE_START: usize = 64;

/// Reductions the `ensure:`/`ifCurtailed:` blocks of a run that met a limit (or was killed)
/// may still use, together, while the exit unwinds ([`Ctx::run_cleanup`]).
pub const CLEANUP_ALLOWANCE: u32 = 1000;

// The data modules below name this context as `context::Ctx`.
impl context::Bind for context::Evaluator {
    type Ctx = Ctx;
}

/// The evaluation context of one process.
pub struct Ctx {
    pub prog: Arc<Program>,
    pub(crate) stack: Vec<Value>,
    pub(crate) cells: Vec<Arc<VarCell>>,
    pub(crate) depth: usize,
    /// Nested activations before `stack_overflow`.
    pub max_depth: usize,
    /// Lowest native stack address evaluation may reach (0 = unchecked).
    pub(crate) stack_limit: usize,
    /// Where a main-program job last set `stack_limit` (the position in its frame and the
    /// floor of the stack it ran on; `process::in_main_process`): a job entered from the
    /// same place on the same stack keeps the limit.
    pub(crate) stack_for: (usize, usize),
    pub(crate) next_home: u64,
    pub(crate) acts: Vec<Activation>,
    /// The inline cache: starts at [`CACHE_START`] entries (or fewer) and doubles up to
    /// `cache_cap` as misses come (`Ctx::lookup`).
    pub(crate) cache: Vec<CacheEntry>,
    cache_epoch: u64,
    pub(crate) cache_cap: u32,
    /// Misses since the cache last grew.
    pub(crate) cache_misses: u32,
    reductions: u32,
    /// Reductions between calls of `preempt`.
    pub budget: u32,
    pub preempt: Option<PreemptHook>,
    /// The embedder's limit that ended this run (`reduction_limit`, `memory_limit`, …), once
    /// one did: sticky until the next run ([`Ctx::restart_budget`]), so every later tick or
    /// charge of the run unwinds again and a block run during the unwind (`ensure:`) gets at
    /// most [`CLEANUP_ALLOWANCE`] reductions (see `Ctx::limit_hit`).
    pub(crate) limit_hit: Option<&'static str>,
    /// Total reductions counted so far.
    pub reduction_count: u64,
    /// This process's number (0 until the runtime assigns one).
    pub pid: u64,
    /// This process's token for the captured variables it owns (`VarCell`: the address of
    /// its runtime process record; 0 outside a process, which owns no cells). Set with `pid`.
    pub owner: u64,
    /// The running actor's `state:` slots (set by the runtime around a handler).
    pub actor_fields: Vec<Value>,
    /// The running actor's copy of its slots from before the message, put back when the
    /// message fails (set with `actor_fields`; see `journal`).
    pub actor_saved: Box<[Value]>,
    /// The running message's rollback journal (`journal`).
    pub journal: journal::Journal,
    /// Per-process data of the runtime (its process context, mailbox handle, …).
    pub ext: Option<Box<dyn std::any::Any + Send>>,
    pub(crate) cur_loc: Loc,
    /// Where the last exception was created: (exception pointer, location).
    pub(crate) err_loc: std::cell::Cell<Option<(usize, Loc)>>,
    pub cur_sel: Sym,
    pub cur_cls: Sym,
    /// The running class methods that roll back the class-state changes of the class methods
    /// they call (`eval/class_side.rs`), innermost last.
    pub(crate) state_scopes: Vec<StateScope>,
    /// The host function called last (`engine::host`, `interp::host_cache`).
    pub(crate) host_cache: HostCache,
    /// The process this context runs in (runtime context, actor system); see `interp::actor`.
    pub proc: crate::interp::process::ProcSlot,
}

/// An inline cache of `n` empty entries.
pub(crate) fn empty_cache(n: usize) -> Vec<CacheEntry> {
    (0..n)
        .map(|_| CacheEntry {
            key: 0,
            sel: Sym::NONE,
            cls: None,
            hit: None,
        })
        .collect()
}

impl Ctx {
    /// A context for a long evaluation (the main program, a host call): a large inline
    /// cache and room for deep evaluation stacks.
    pub fn new(prog: Arc<Program>) -> Ctx {
        Ctx::with_sizes(prog, CACHE_SIZE, 1024, 256)
    }

    /// A context whose inline cache has up to `cache` entries (a power of two) and whose operand
    /// and activation stacks start with room for `stack` and `acts` entries. Each vector is
    /// allocated at its final size: a process's context made large and shrunk would leave a
    /// freed hole in the allocator per process, which the long-lived allocations between
    /// two spawns split (the heap then grows by about the hole per process).
    pub fn with_sizes(prog: Arc<Program>, cache: usize, stack: usize, acts: usize) -> Ctx {
        let max_depth = prog.opts.max_depth;
        let cache_cap = cache as u32;
        let cache = empty_cache(cache.min(CACHE_START));
        Ctx {
            prog,
            stack: Vec::with_capacity(stack),
            cells: Vec::with_capacity(64),
            depth: 0,
            max_depth,
            stack_limit: 0,
            stack_for: (0, 0),
            next_home: 1,
            acts: Vec::with_capacity(acts),
            cache,
            cache_epoch: u64::MAX,
            cache_cap,
            cache_misses: 0,
            reductions: 4000,
            budget: 4000,
            preempt: None,
            limit_hit: None,
            reduction_count: 0,
            pid: 0,
            owner: 0,
            actor_fields: Vec::new(),
            actor_saved: Box::default(),
            journal: Default::default(),
            ext: None,
            cur_loc: Loc {
                file: code::NO_FILE,
                pos: 0,
            },
            err_loc: std::cell::Cell::new(None),
            cur_sel: Sym::new("value"),
            cur_cls: Sym::new("Object"),
            state_scopes: Vec::new(),
            host_cache: Default::default(),
            proc: Default::default(),
        }
    }

    /// Declares the native stack this context runs on: `top` is an address near the top of
    /// the stack (the current frame) and `size` the usable bytes below it. Evaluation raises
    /// `stack_overflow` before it comes within a safety margin of the end.
    pub fn set_native_stack(&mut self, top: usize, size: usize) {
        const MARGIN: usize = 256 * 1024;
        self.stack_limit = top.saturating_sub(size.saturating_sub(MARGIN));
    }

    /// Sets `set_native_stack` from the current position for a stack of `size` bytes.
    pub fn set_native_stack_here(&mut self, size: usize) {
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        self.set_native_stack(here, size);
    }

    /// Full dispatch (user overrides honoured).
    pub fn send(&mut self, recv: &Value, sel: Sym, args: &[Value]) -> EvalResult {
        self.send_impl(recv, sel, args).map_err(|b| *b)
    }

    /// Calls a block with arguments (`arity_mismatch` checked).
    pub fn call_block(&mut self, block: &Value, args: &[Value]) -> EvalResult {
        match block {
            // The caller's reference keeps the block alive for the call: no count.
            Value::Block(c) => self.invoke_block(c, args).map_err(|b| *b),
            other => {
                let name = self.class_name_of(other);
                Err(self.type_err(format!("expected a Block, got {name}")))
            }
        }
    }

    /// Calls a block with arguments moved into it (each left `nil`; see
    /// [`Ctx::invoke_block_moving`]).
    pub fn call_block_moving(&mut self, block: &Value, args: &mut [Value]) -> EvalResult {
        match block {
            Value::Block(c) => self.invoke_block_moving(c, args).map_err(|b| *b),
            _ => self.call_block(block, args),
        }
    }

    /// An exception of the class mapped from `kind`.
    pub fn err(&self, kind: ErrorKind, msg: impl Into<String>) -> Unwind {
        self.raise_kind(kind, msg.into(), None)
    }

    /// The same with a hint.
    pub fn err_hint(
        &self,
        kind: ErrorKind,
        msg: impl Into<String>,
        hint: impl Into<String>,
    ) -> Unwind {
        self.raise_kind(kind, msg.into(), Some(hint.into()))
    }

    pub fn type_err(&self, msg: impl Into<String>) -> Unwind {
        self.err(ErrorKind::TypeError, msg)
    }

    /// The class of any value (a class object's class is `Class`; a metaclass's `Metaclass`).
    pub fn class_of(&self, v: &Value) -> ClassRef {
        let c = &self.prog.core;
        match v {
            Value::Nil => c.undefined.clone(),
            Value::True => c.true_.clone(),
            Value::False => c.false_.clone(),
            Value::Int(_) | Value::BigInt(_) => c.integer.clone(),
            Value::Float(_) => c.float.clone(),
            Value::Char(_) => c.character.clone(),
            Value::Symbol(_) => c.symbol.clone(),
            Value::Str(_) => c.string.clone(),
            Value::Binary(_) => c.binary.clone(),
            Value::List(_) => c.list.clone(),
            Value::Array(_) => c.array.clone(),
            Value::Tuple(_) => c.tuple.clone(),
            Value::Dict(_) => c.dictionary.clone(),
            Value::Set(_) => c.set.clone(),
            Value::Bag(_) => c.bag.clone(),
            Value::Queue(_) => c.queue.clone(),
            Value::Interval(_) => c.interval.clone(),
            Value::Object(i) => i.class.clone(),
            Value::Class(_) => c.class.clone(),
            Value::Meta(_) => c.metaclass.clone(),
            Value::Block(_) => c.block.clone(),
            Value::Native(n) => n.0.class(),
        }
    }

    /// The class whose name reports errors for `v`: `Foo class` for class-side receivers.
    pub fn class_name_of(&self, v: &Value) -> String {
        match v {
            Value::Class(c) => format!("{} class", c.name),
            Value::Meta(_) => "Metaclass".to_string(),
            other => self.class_of(other).name.as_str().to_string(),
        }
    }

    pub fn class_named(&self, name: &str) -> Option<ClassRef> {
        self.prog.class_named(name)
    }

    /// `printString`, honouring user overrides.
    pub fn print_string(&mut self, v: &Value) -> Result<String, Unwind> {
        let r = self.send(v, self.prog.syms.print_string, &[])?;
        match &r {
            Value::Str(s) => Ok(s.as_str().to_string()),
            other => self.default_print(other),
        }
    }

    /// `displayString`, honouring user overrides.
    pub fn display_string(&mut self, v: &Value) -> Result<String, Unwind> {
        match v {
            Value::Str(s) => return Ok(s.as_str().to_string()),
            Value::Symbol(s) => return Ok(s.as_str().to_string()),
            _ => {}
        }
        let r = self.send(v, self.prog.syms.display_string, &[])?;
        match &r {
            Value::Str(s) => Ok(s.as_str().to_string()),
            other => self.default_print(other),
        }
    }

    /// The text a `{…}` of an interpolated String shows, as a String or Symbol value: a
    /// String or Symbol itself (shared, not copied), else its `displayString`.
    pub fn display_value(&mut self, v: Value) -> Result<Value, Unwind> {
        if matches!(v, Value::Str(_) | Value::Symbol(_)) {
            return Ok(v);
        }
        let r = self.send(&v, self.prog.syms.display_string, &[])?;
        match r {
            Value::Str(_) => Ok(r),
            other => Ok(Value::str(self.default_print(&other)?)),
        }
    }

    /// Joins the pieces of an interpolated String (literal text and [`Ctx::display_value`]s,
    /// in order) into one String, reserving its exact size before it copies a byte: a
    /// String shown many times (`"{s}{s}{s}"`) is refused at a memory limit, not built.
    pub fn interpolate(&mut self, pieces: &[Piece<'_>]) -> Result<Value, Unwind> {
        let total = pieces
            .iter()
            .fold(0usize, |n, p| n.saturating_add(p.text().len()));
        self.reserve(total)?;
        self.built(total)?;
        let mut s = String::with_capacity(total);
        for p in pieces {
            s.push_str(p.text());
        }
        Ok(Value::str(s))
    }

    /// Counts one reduction; every `budget` reductions calls the preemption hook.
    #[inline]
    pub fn tick(&mut self) -> Result<(), Unwind> {
        self.reductions -= 1;
        if self.reductions == 0 {
            return self.tick_slow();
        }
        Ok(())
    }

    #[cold]
    fn tick_slow(&mut self) -> Result<(), Unwind> {
        if let Some(kind) = self.limit_hit {
            // The run already met a limit: every tick unwinds again at once.
            self.reductions = 1;
            return Err(Unwind::limit(kind));
        }
        self.reductions = self.budget.max(1);
        self.reduction_count += self.budget as u64;
        // The embedder's limits first: a run they stop ends here, without first yielding
        // to the back of the run queue with its coroutine (and its stack) held.
        if let Some(h) = self.preempt.as_mut() {
            if let Err(u) = h() {
                return Err(self.note_limit(u));
            }
        }
        // Lets other processes run; a process told to exit unwinds.
        if let Some(cx) = self.proc.cx() {
            cx.yield_now().map_err(|e| Unwind::Exit(e.0.to_value()))?;
        }
        Ok(())
    }

    /// Sets the reductions between calls of `preempt` and restarts the count from there
    /// (the embedding API counts reductions in its hook; `tick` is unchanged). A new run:
    /// forgets the limit the last one met.
    pub fn restart_budget(&mut self, budget: u32) {
        self.budget = budget.max(1);
        self.reductions = self.budget;
        self.limit_hit = None;
    }

    /// The unwind of an embedder's limit met inside this run (`kind` e.g. `memory_limit`,
    /// from a bulk step refused before it allocates). The limit is sticky for the rest of the
    /// run: every later tick or charge unwinds with it again, and what is left of the
    /// reduction budget shrinks to [`CLEANUP_ALLOWANCE`] for the blocks its unwind runs.
    pub fn limit_hit(&mut self, kind: &'static str) -> Unwind {
        if self.limit_hit.is_none() {
            self.limit_hit = Some(kind);
            self.reductions = self.reductions.clamp(1, CLEANUP_ALLOWANCE);
        }
        Unwind::limit(self.limit_hit.unwrap_or(kind))
    }

    /// Records `u` as the run's limit when it is one (an unwind from the preemption hook).
    fn note_limit(&mut self, u: Unwind) -> Unwind {
        match u.limit_kind() {
            Some(k) => self.limit_hit(k.as_str()),
            None => u,
        }
    }

    /// The limit this run met, if any (see [`Ctx::limit_hit`]).
    pub fn limit_met(&self) -> Option<&'static str> {
        self.limit_hit
    }

    /// Runs `cleanup` (an `ensure:` or `ifCurtailed:` block) for a body that ended with
    /// `unwind`. For an exit (a limit, a kill, `Program exit:`) the block runs under at most
    /// [`CLEANUP_ALLOWANCE`] reductions and whatever it does — raise, return non-locally,
    /// meet a limit of its own — the exit goes on; nothing can catch it or replace it.
    /// Otherwise the block's own error or return replaces the body's, as in Smalltalk.
    pub fn run_cleanup(&mut self, cleanup: &Value, unwind: Unwind) -> Unwind {
        if !matches!(unwind, Unwind::Exit(_)) {
            return match self.call_block(cleanup, &[]) {
                Ok(_) => unwind,
                Err(u) => u,
            };
        }
        self.reductions = self.reductions.clamp(1, CLEANUP_ALLOWANCE);
        let _ = self.call_block(cleanup, &[]);
        unwind
    }

    /// Restores a consistent state after a panic escaped an evaluation (the evaluator's
    /// stacks may have been left mid-activation).
    pub fn reset_after_panic(&mut self) {
        self.stack.clear();
        self.cells.clear();
        self.acts.clear();
        self.depth = 0;
    }

    /// Current nesting depth (activations).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Raises `stack_overflow` when the native stack is nearly exhausted (for primitives
    /// that recurse natively, e.g. printing deeply nested values).
    pub fn check_native_stack(&self) -> Result<(), Unwind> {
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        if here < self.stack_limit {
            return Err(self.stack_overflow());
        }
        Ok(())
    }

    pub(crate) fn stack_overflow(&self) -> Unwind {
        self.err(
            ErrorKind::StackOverflow,
            format!(
                "stack depth limit exceeded: {} nested activations",
                self.max_depth
            ),
        )
    }

    /// Is `v` an instance of `cls` or a subclass?
    pub fn is_kind_of(&self, v: &Value, cls: &Class) -> bool {
        match v {
            Value::Class(_) => self.prog.core.class.inherits_or_is(cls),
            _ => self.class_of(v).inherits_or_is(cls),
        }
    }
}

/// A piece of an interpolated String as both evaluators hand it to [`Ctx::interpolate`]: the
/// literal text, or what a `{…}` shows ([`Ctx::display_value`]: a String or Symbol).
pub enum Piece<'a> {
    Lit(&'a str),
    Shown(Value),
}

impl Piece<'_> {
    fn text(&self) -> &str {
        match self {
            Piece::Lit(t) => t,
            Piece::Shown(Value::Str(s)) => s.as_str(),
            Piece::Shown(Value::Symbol(s)) => s.as_str(),
            Piece::Shown(_) => "",
        }
    }
}
