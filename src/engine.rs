//! The embedding API: [`Engine`] runs bt scripts inside a Rust program (configuration,
//! automation) — DESIGN.md §9.
//!
//! ```
//! let engine = bt::Engine::builder().max_reductions(1_000_000).build();
//! engine.register_fn("Host", "double:", |args: &[bt::Value]| {
//!     let n = args[0].as_i64().ok_or("double: expects an Integer")?;
//!     Ok(bt::Value::Int(n * 2))
//! }).unwrap();
//! engine.eval("x := Host double: 21").unwrap();
//! assert_eq!(engine.eval("x + 1").unwrap().as_i64(), Some(43));
//! ```
//!
//! An engine wraps one [`Interpreter`]: the main program is a process of the Interpreter's actor runtime with
//! one persistent context, so bindings and classes persist between `eval` calls as in the
//! REPL. Evaluations are serialised (one at a time per engine; `Engine` is `Send + Sync`, so
//! an `Arc<Engine>` may be shared between threads). Host functions run inside the evaluation
//! and must not call back into the same engine. Values made of numbers, strings, symbols and
//! collections of them may be passed to any engine; instances, classes and blocks belong to
//! the engine that made them (its method caches assume its own classes) — do not pass them
//! to another engine.
//!
//! Limits ([`EngineBuilder`]): `max_reductions` and `timeout` end the evaluation with an
//! [`EngineError`] whose `limit` is set, which `on:do:` cannot catch and `ensure:` cannot
//! swallow, also when the evaluation is blocked; each actor message and timer callback runs
//! under the same limits of its own (see `limits`). `max_depth` raises the ordinary,
//! catchable `stack_overflow`. There is no memory limit: accounting would need hooks at
//! every String/collection growth site, the evaluator's in-place fast paths included, and a
//! partial count would be a limit a script escapes (`s := s ++ s` doubles in place).
//! A script may still keep actors busy between evaluations with messages it sends itself
//! or with `Timer every:do:` — each run is bounded, their number is not.
//!
//! Submodules: `error` ([`EngineError`], [`HostError`]), `limits` (the preemption-hook
//! guard), `host` (the host-function trampoline), `value_ext` (accessors on [`Value`]).

pub mod error;
mod host;
pub mod limits;
mod value_ext;

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

pub use error::{EngineError, ErrorInfo, HostError, Limit};

use crate::interp::eval::Method;
use crate::interp::{Interpreter, InterpreterOptions};
use crate::value::{Sym, Value};
use limits::{Limits, Trip, Watchdog};

/// A bt interpreter embedded in a Rust program. Create with [`Engine::new`] or
/// [`Engine::builder`].
pub struct Engine {
    vm: Interpreter,
    /// One evaluation at a time: the Interpreter lends its session to each job.
    gate: Mutex<()>,
    limits: Limits,
    trip: Arc<Trip>,
    /// Captured program output (`Transcript show:`), when capturing.
    output: Option<Arc<Mutex<String>>>,
    watchdog: Arc<Watchdog>,
}

/// Options of an [`Engine`].
#[derive(Clone, Debug)]
pub struct EngineBuilder {
    limits: Limits,
    max_depth: usize,
    capture_output: bool,
    check: bool,
    privileged: bool,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            limits: Limits::default(),
            max_depth: 10_000,
            capture_output: true,
            check: true,
            privileged: false,
        }
    }
}

impl EngineBuilder {
    /// Ends an evaluation (`eval`, `eval_file`, `call`) after about `n` reductions (sends
    /// and loop iterations), within one preemption step (at most 4,000 reductions more).
    /// Each actor message and timer callback has the same budget of its own. Waiting
    /// (`Timer sleep:`, a reply) costs no reductions: combine with [`Self::timeout`].
    pub fn max_reductions(mut self, n: u64) -> Self {
        self.limits.max_reductions = Some(n);
        self
    }

    /// Ends an evaluation that is still running (or blocked) `d` after it started; each
    /// actor message and timer callback gets the same time of its own while it runs.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.limits.timeout = Some(d);
        self
    }

    /// Nested activations before the catchable `stack_overflow` (default 10,000).
    pub fn max_depth(mut self, n: usize) -> Self {
        self.max_depth = n.max(1);
        self
    }

    /// With `true` (the default) program output goes to a buffer read by
    /// [`Engine::take_output`]; with `false` it goes to the process's standard output.
    pub fn capture_output(mut self, on: bool) -> Self {
        self.capture_output = on;
        self
    }

    /// Run the static checker before each evaluation (default on; its errors are
    /// [`EngineError`]s with diagnostic codes).
    pub fn check(mut self, on: bool) -> Self {
        self.check = on;
        self
    }

    /// Allow `ProcessNavigation system` (off by default for embedded scripts).
    pub fn privileged(mut self, on: bool) -> Self {
        self.privileged = on;
        self
    }

    /// Starts the engine and loads the standard library.
    pub fn build(self) -> Engine {
        let vm = Interpreter::new(InterpreterOptions {
            max_depth: self.max_depth,
            deterministic_pids: true,
            privileged: self.privileged,
            check: self.check,
        });
        let output = if self.capture_output {
            let buf = Arc::new(Mutex::new(String::new()));
            let b = buf.clone();
            vm.set_output(Box::new(move |s: &str| b.lock().push_str(s)));
            Some(buf)
        } else {
            None
        };
        vm.prog
            .embedded
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let trip = Arc::new(Trip::default());
        let watchdog = Arc::new(Watchdog::default());
        if self.limits.any() {
            // Each main-program job counts against the current evaluation; each actor
            // message and timer/monitor callback runs under the same limits of its own.
            let make = limits::hook_factory(self.limits, trip.clone(), watchdog.clone());
            let _ = vm.prog.ctx_hook.set(make);
        }
        Engine {
            vm,
            gate: Mutex::new(()),
            limits: self.limits,
            trip,
            output,
            watchdog,
        }
    }
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// An engine with the standard library, output captured and no limits but the default
    /// depth (10,000 activations).
    pub fn new() -> Engine {
        EngineBuilder::default().build()
    }

    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// Runs `source` — class definitions, standalone methods and statements, like a REPL
    /// input — and answers the last statement's value (the class for a source that only
    /// declares one). Top-level bindings and classes persist for later calls; an input that
    /// raises leaves the bindings as they were.
    pub fn eval(&self, source: &str) -> Result<Value, EngineError> {
        self.eval_named("eval", source)
    }

    /// [`Engine::eval`], converting the result to a Rust type with serde (a script's
    /// Dictionary becomes a config struct; see [`crate::codec::to_rust`] for the mapping).
    pub fn eval_as<T: serde::de::DeserializeOwned>(&self, source: &str) -> Result<T, EngineError> {
        let v = self.eval(source)?;
        crate::codec::to_rust(&v).map_err(EngineError::from_codec)
    }

    /// [`Engine::eval`] with `path` naming the source in locations and diagnostics.
    pub fn eval_named(&self, path: &str, source: &str) -> Result<Value, EngineError> {
        let _g = self.gate.lock();
        self.limited(|vm| {
            vm.eval(path, source)
                .map_err(|e| EngineError::from_bt(e, path, source))
        })
    }

    /// Reads and evaluates a file (see [`Engine::eval`]).
    pub fn eval_file(&self, path: impl AsRef<std::path::Path>) -> Result<Value, EngineError> {
        let p = path.as_ref();
        let src = std::fs::read_to_string(p).map_err(|e| {
            EngineError::simple(
                "IoError",
                "io_error",
                format!("cannot read {}: {e}", p.display()),
            )
        })?;
        self.eval_named(&p.display().to_string(), &src)
    }

    /// Sends `selector` with `args` to the class named `class` (`call("Config", "build:",
    /// …)`), under the engine's limits. Arity is checked like any send.
    pub fn call(&self, class: &str, selector: &str, args: &[Value]) -> Result<Value, EngineError> {
        let _g = self.gate.lock();
        let args = args.to_vec();
        self.limited(|vm| {
            vm.send_to_class(class, selector, args)
                .map_err(|e| EngineError::from_bt(e, "call", ""))
        })
    }

    /// Makes `f` answer the class-side message `selector` of `class` (created as an Object
    /// subclass when it does not exist): `engine.register_fn("Host", "double:", …)` then
    /// `Host double: 21` in a script. A wrong number of arguments raises `arity_mismatch`; a
    /// [`HostError`] (or a panic) is raised as an exception of its kind, which the script may
    /// catch with `on:do:`. Registering the same selector again replaces the function;
    /// redefining the class in a script drops its host functions.
    pub fn register_fn<F>(&self, class: &str, selector: &str, f: F) -> Result<(), EngineError>
    where
        F: Fn(&[Value]) -> Result<Value, HostError> + Send + Sync + 'static,
    {
        if !host::valid_class_name(class) {
            return Err(EngineError::simple(
                "RuntimeError",
                "type_error",
                format!("not a class name: {class:?}"),
            ));
        }
        let Some(header) = host::header(selector) else {
            return Err(EngineError::simple(
                "RuntimeError",
                "type_error",
                format!("not a selector: {selector:?}"),
            ));
        };
        let _g = self.gate.lock();
        let prog = self.vm.prog.clone();
        // Declared in bt first: the class table and the checker learn the class and selector.
        let decl = if prog.class_named(class).is_some() {
            format!("{class} class >> {header} -> Dynamic => nil\n")
        } else {
            format!("Object subclass: {class}\n  class {header} -> Dynamic => nil\n")
        };
        let path = format!("host:{class}>>{selector}");
        self.limited(|vm| {
            vm.eval(&path, &decl)
                .map_err(|e| EngineError::from_bt(e, &path, &decl))
        })?;
        let Some(cls) = prog.class_named(class) else {
            return Err(EngineError::simple(
                "RuntimeError",
                "class_not_found",
                format!("Class '{class}' not found"),
            ));
        };
        let f: Arc<host::HostClosure> = Arc::new(f);
        let key = (cls.name, Sym::new(selector));
        prog.host_fns.write().insert(
            key,
            Arc::new(move |ctx, _recv, args| host::run(ctx, &*f, args)),
        );
        prog.set_method(&cls, true, key.1, Method::Prim(host::call));
        Ok(())
    }

    /// Grants scripts a capability (LANGUAGE.md 13): embedded scripts are denied `File` until
    /// the host grants `Capability::File` (`bt::interp::prims::capability`).
    pub fn grant(&self, c: crate::interp::prims::capability::Capability) {
        self.vm.prog.capabilities.grant(c);
    }

    /// Takes the program output captured since the last call (empty when the engine was
    /// built with `capture_output(false)`).
    pub fn take_output(&self) -> String {
        match &self.output {
            Some(b) => std::mem::take(&mut *b.lock()),
            None => String::new(),
        }
    }

    /// The value's `printString` (user overrides honoured), under the engine's limits.
    pub fn print_string(&self, v: &Value) -> Result<String, EngineError> {
        let _g = self.gate.lock();
        let v = v.clone();
        self.limited(|vm| {
            let r = vm.try_run(move |ctx, _| {
                ctx.print_string(&v).map_err(|e| {
                    EngineError::from_bt(crate::interp::error::to_bt_error(ctx, e), "print", "")
                })
            });
            match r {
                Ok(r) => r,
                Err(m) => Err(EngineError::simple("InternalError", "internal_error", m)),
            }
        })
    }

    /// The REPL's display of a value (LANGUAGE.md 10.3: Strings quoted, …), under the
    /// engine's limits (a display a limit ended reads `<printString failed: …>`).
    pub fn display(&self, v: &Value) -> String {
        let _g = self.gate.lock();
        self.limited(|vm| Ok(vm.display(v)))
            .unwrap_or_else(|e| format!("<printString failed: {e}>"))
    }

    /// The names of the top-level bindings made so far.
    pub fn binding_names(&self) -> Vec<String> {
        let _g = self.gate.lock();
        self.vm.binding_names()
    }

    /// Runs `f` (the engine's jobs on the Interpreter) as one evaluation under the limits: the hooks
    /// of `hook_factory` count its jobs' reductions, the watchdog its deadline; a limit that
    /// tripped decides the result.
    fn limited<R>(
        &self,
        f: impl FnOnce(&Interpreter) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        if !self.limits.any() {
            return f(&self.vm);
        }
        self.trip.reset();
        let timer = self
            .limits
            .timeout
            .map(|t| self.watchdog.arm(&self.vm, t, &self.trip));
        let r = f(&self.vm);
        if let Some(timer) = timer {
            self.watchdog.disarm(timer);
        }
        if let Some(l) = self.trip.get() {
            let detail = match l {
                Limit::Reductions => format!(
                    "more than {} reductions",
                    self.limits.max_reductions.unwrap_or(0)
                ),
                Limit::Deadline => format!(
                    "still running after {:?}",
                    self.limits.timeout.unwrap_or_default()
                ),
            };
            return Err(EngineError::limit(l, detail));
        }
        r
    }
}
