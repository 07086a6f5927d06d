//! The embedding API: [`Engine`] runs bt scripts inside a Rust program (configuration,
//! automation). The user guide is docs/embedding.md.
//!
//! ```
//! let engine = bt::Engine::builder().max_reductions(1_000_000).build();
//! engine.register_fn("Host", "double:", |n: i64| n * 2).unwrap();
//! engine.eval("x := Host double: 21").unwrap();
//! assert_eq!(engine.eval("x + 1").unwrap().as_i64(), Some(43));
//! ```
//!
//! An engine wraps one [`Vm`]: the main program is a process of the Vm's actor runtime with
//! one persistent context, so bindings and classes persist between `eval` calls as in the
//! REPL. Evaluations are serialised (one at a time per engine; `Engine` is `Send + Sync`, so
//! an `Arc<Engine>` may be shared between threads). A host function calling back into the
//! engine running it gets the error `reentrant_call` (it would wait for itself). Values made
//! of numbers, strings, symbols and collections of them may be passed to any engine;
//! instances, classes and blocks belong to the engine that made them.
//!
//! Limits and capabilities are options of the [`EngineBuilder`] (`builder`); the limits'
//! design is in `limits` and `crate::memory`, capabilities in `crate::interp::capability`.
//!
//! Submodules: `builder` ([`EngineBuilder`]), `error` ([`EngineError`], [`HostError`]),
//! `limits` (guards, watchdog, [`CancelHandle`]), `host` (host functions: the trampoline,
//! typed arguments and results), `script` (compile once, run many), `value_ext`
//! (accessors on [`Value`]).

mod builder;
pub mod error;
pub mod host;
pub mod host_type;
pub mod limits;
mod script;
mod value_span;

use std::sync::Arc;

use parking_lot::Mutex;

pub use builder::EngineBuilder;
pub use error::{EngineError, EngineErrorKind, ErrorInfo, HostError, Limit};
pub use host::{FromValue, HostFn, IntoValue};
pub use host_type::{HostRef, TypeBuilder};
pub use limits::CancelHandle;
pub use script::Script;

pub use crate::interp::capability::Capability;
use crate::interp::eval::Method;
use crate::interp::Interpreter as Vm;
use crate::value::{Sym, Value};
use limits::{Shared, Watchdog};

/// A bt interpreter embedded in a Rust program. Create with [`Engine::new`] or
/// [`Engine::builder`].
pub struct Engine {
    /// The Vm; also the gate that serialises evaluations. None after `shutdown`.
    vm: Mutex<Option<Vm>>,
    shared: Arc<Shared>,
    rt: crate::runtime::RtHandle,
    /// Captured program output (`Transcript show:`), when capturing.
    output: Option<Arc<Mutex<String>>>,
    /// The runtime log kept for the host (`take_logs`).
    logs: Arc<Mutex<LogBuffer>>,
    /// Tells this engine's host functions apart on a thread (`host::in_host_fn`).
    id: usize,
    /// Methods replaced because their capability is not granted (`Engine::grant` restores).
    denied: Mutex<Vec<builder::Denied>>,
}

/// Longest run of literal characters (digits of a number) an engine with limits parses:
/// converting a decimal literal is quadratic in its length and cannot be interrupted, so a
/// 4M-digit literal would run far past any deadline. 100,000 digits convert in ~10 ms.
pub const MAX_LITERAL_DIGITS: usize = 100_000;

/// Log lines an engine keeps for [`Engine::take_logs`] before it drops further ones.
pub const MAX_KEPT_LOG_LINES: usize = 10_000;

/// The log lines kept for the host.
#[derive(Default)]
pub(crate) struct LogBuffer {
    lines: Vec<String>,
    dropped: u64,
}

impl LogBuffer {
    /// The runtime's log sink: into the buffer (bounded), and to the `log` facade.
    pub(crate) fn sink(buf: &Arc<Mutex<LogBuffer>>) -> crate::base::log::LogSink {
        let b = buf.clone();
        let facade = crate::base::log::facade();
        Arc::new(move |line: &str| {
            {
                let mut g = b.lock();
                if g.lines.len() < MAX_KEPT_LOG_LINES {
                    g.lines.push(line.to_string());
                } else {
                    g.dropped += 1;
                }
            }
            facade(line)
        })
    }
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shared.rt.lock().take();
        // The Vm (its runtime threads) first: then no thread is charged to the account.
        drop(self.vm.get_mut().take());
        if let Some(a) = self.shared.account {
            crate::memory::release_account(a);
        }
    }
}

impl Engine {
    /// An engine with the standard library, output captured, no capabilities and no limits
    /// but the default depth (10,000 activations).
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
        self.eval_named_as("eval", source)
    }

    /// [`Engine::eval_named`], converting the result with serde like [`Engine::eval_as`]. A
    /// value of the wrong type is reported at its place: the error's message names its path
    /// (`.server.port`), its location is the line and column of the value in `source` (the
    /// literal the path leads to; an expression that computed it), and its miette rendering
    /// shows that line with the value underlined.
    pub fn eval_named_as<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        source: &str,
    ) -> Result<T, EngineError> {
        let v = self.eval_named(path, source)?;
        let _mem = crate::memory::Scope::enter(self.shared.account);
        crate::codec::to_rust(&v).map_err(|e| {
            let span = value_span::value_span(source, &e.steps);
            EngineError::from_codec(e).at_value(path, source, span)
        })
    }

    /// Reads a file, evaluates it and converts the result (see [`Engine::eval_named_as`]): a
    /// config file whose errors point into it.
    pub fn eval_file_as<T: serde::de::DeserializeOwned>(
        &self,
        path: impl AsRef<std::path::Path>,
    ) -> Result<T, EngineError> {
        let p = path.as_ref();
        let src = std::fs::read_to_string(p)
            .map_err(|e| EngineError::io(format!("cannot read {}: {e}", p.display())))?;
        self.eval_named_as(&p.display().to_string(), &src)
    }

    /// [`Engine::eval`] with `path` naming the source in locations and diagnostics.
    pub fn eval_named(&self, path: &str, source: &str) -> Result<Value, EngineError> {
        // Before the deadline starts: refusing is instant, the parse would not be.
        if let Some(e) = self.literal_guard(path, source) {
            return Err(e);
        }
        self.limited(|vm| {
            vm.eval(path, source).map_err(|e| {
                EngineError::from_bt(e, Some((path.to_string(), Arc::from(source)))).and_source(vm)
            })
        })
    }

    /// Reads and evaluates a file (see [`Engine::eval`]).
    pub fn eval_file(&self, path: impl AsRef<std::path::Path>) -> Result<Value, EngineError> {
        let p = path.as_ref();
        let src = std::fs::read_to_string(p)
            .map_err(|e| EngineError::io(format!("cannot read {}: {e}", p.display())))?;
        self.eval_named(&p.display().to_string(), &src)
    }

    /// Sends `selector` with `args` to the class named `class` (`call("Config", "build:",
    /// …)`), under the engine's limits. Arity is checked like any send.
    pub fn call(&self, class: &str, selector: &str, args: &[Value]) -> Result<Value, EngineError> {
        let args = args.to_vec();
        self.limited(|vm| {
            vm.send_to_class(class, selector, args)
                .map_err(|e| EngineError::from_bt(e, None).and_source(vm))
        })
    }

    /// Sends `selector` with `args` to `receiver` — any value a script answered, an actor
    /// handle included (`e.send(&counter, "increment", &[])`: a synchronous call to the
    /// actor, as `counter increment` in a script) — under the engine's limits. The error of
    /// an actor's failed message (or of a dead actor) is the answer's error.
    pub fn send(
        &self,
        receiver: &Value,
        selector: &str,
        args: &[Value],
    ) -> Result<Value, EngineError> {
        let (recv, sel, args) = (receiver.clone(), Sym::new(selector), args.to_vec());
        self.limited(move |vm| {
            let r = vm.try_run_mut(move |ctx, _| {
                ctx.send(&recv, sel, &args).map_err(|u| {
                    EngineError::from_bt(crate::interp::error::to_bt_error(ctx, u), None)
                })
            });
            match r {
                Ok(r) => r,
                Err(m) => Err(EngineError::usage("internal_error", m)),
            }
        })
    }

    /// Casts `selector` with `args` to `receiver` (`counter increment!` in a script): an
    /// actor queues the message and this returns at once, without its answer; any other
    /// value is sent the message synchronously.
    pub fn cast(
        &self,
        receiver: &Value,
        selector: &str,
        args: &[Value],
    ) -> Result<(), EngineError> {
        let (recv, sel, args) = (receiver.clone(), Sym::new(selector), args.to_vec());
        self.limited(move |vm| {
            let r = vm.try_run_mut(move |ctx, _| {
                ctx.cast(&recv, sel, &args).map_err(|u| {
                    EngineError::from_bt(crate::interp::error::to_bt_error(ctx, u), None)
                })
            });
            match r {
                Ok(r) => r,
                Err(m) => Err(EngineError::usage("internal_error", m)),
            }
        })
    }

    /// [`Self::send`] as a future, for async hosts: the send runs on a thread of its own
    /// (the engine's evaluation lock and the wait for an actor's reply never block the
    /// caller's executor thread); the future completes with the answer. Needs the engine in
    /// an `Arc`.
    pub fn send_async(
        self: &Arc<Self>,
        receiver: &Value,
        selector: &str,
        args: &[Value],
    ) -> SendFuture {
        let state = Arc::new(Mutex::new(SendState::default()));
        let (engine, st) = (self.clone(), state.clone());
        let (recv, sel, args) = (receiver.clone(), selector.to_string(), args.to_vec());
        let spawned = std::thread::Builder::new()
            .name("bt-send".into())
            .spawn(move || {
                let r = engine.send(&recv, &sel, &args);
                let waker = {
                    let mut g = st.lock();
                    g.result = Some(r);
                    g.waker.take()
                };
                if let Some(w) = waker {
                    w.wake();
                }
            });
        if let Err(e) = spawned {
            state.lock().result = Some(Err(EngineError::usage(
                "internal_error",
                format!("cannot start a thread for the send: {e}"),
            )));
        }
        SendFuture { state }
    }

    /// Makes `f` answer the class-side message `selector` of `class` (created as an Object
    /// subclass when it does not exist): `engine.register_fn("Host", "double:", …)` then
    /// `Host double: 21` in a script. `f` is either a closure over Rust types
    /// (`|n: i64, name: String| -> Result<Vec<String>, HostError>`; arguments convert with
    /// [`FromValue`] — integers, floats, bool, String, Vec, HashMap, Option, any serde type,
    /// [`Value`] — and a wrong one raises `type_error` naming the argument and the path in
    /// it; results convert with [`IntoValue`]) or the raw form `|args: &[Value]| -> Result<
    /// Value, HostError>`. A wrong number of arguments raises `arity_mismatch`; a
    /// [`HostError`] (or a panic) is raised as an exception of its kind, which the script may
    /// catch with `on:do:`. Registering the same selector again replaces the function;
    /// redefining the class in a script drops its host functions.
    pub fn register_fn<M, F: HostFn<M>>(
        &self,
        class: &str,
        selector: &str,
        f: F,
    ) -> Result<(), EngineError> {
        let arity = f.arity();
        let run = f.into_closure();
        self.install_host(class, selector, arity, run)
    }

    /// An asynchronous host function: `f` gets the arguments and a [`host::Reply`] to
    /// answer from any thread, later (a thread pool, an async runtime, a callback). Only the
    /// calling bt process waits; other actors keep running. An unanswered reply times out
    /// after `timeout` with kind `timeout`.
    pub fn register_async_fn<F>(
        &self,
        class: &str,
        selector: &str,
        timeout: std::time::Duration,
        f: F,
    ) -> Result<(), EngineError>
    where
        F: Fn(Vec<Value>, host::Reply) + Send + Sync + 'static,
    {
        let arity = selector_arity(selector);
        let run = host::async_closure(timeout, f);
        self.install_host(class, selector, arity, run)
    }

    /// Registers the Rust type `T` as the bt class `class` (created as an Object subclass
    /// when it does not exist); add constructors, methods and fields on the answered
    /// [`TypeBuilder`]. Scripts hold handles to the structs (see `host_type`).
    pub fn register_type<T: Send + 'static>(
        &self,
        class: &str,
    ) -> Result<TypeBuilder<'_, T>, EngineError> {
        if !host::valid_class_name(class) {
            return Err(EngineError::usage(
                "type_error",
                format!("not a class name: {class:?}"),
            ));
        }
        let path = format!("host:{class}");
        self.limited(|vm| {
            if vm.prog.class_named(class).is_some() {
                return Ok(());
            }
            let decl = format!("Object subclass: {class}\n");
            let src: Arc<str> = Arc::from(decl.as_str());
            vm.eval(&path, &decl)
                .map(|_| ())
                .map_err(|e| EngineError::from_bt(e, Some((path.clone(), src))))
        })?;
        Ok(TypeBuilder::new(self, class))
    }

    fn install_host(
        &self,
        class: &str,
        selector: &str,
        arity: Option<usize>,
        run: crate::interp::program::HostFn,
    ) -> Result<(), EngineError> {
        self.install_host_side(class, selector, arity, run, true)
    }

    pub(crate) fn install_host_side(
        &self,
        class: &str,
        selector: &str,
        arity: Option<usize>,
        run: crate::interp::program::HostFn,
        class_side: bool,
    ) -> Result<(), EngineError> {
        if !host::valid_class_name(class) {
            return Err(EngineError::usage(
                "type_error",
                format!("not a class name: {class:?}"),
            ));
        }
        let Some(header) = host::header(selector) else {
            return Err(EngineError::usage(
                "type_error",
                format!("not a selector: {selector:?}"),
            ));
        };
        if let Some(n) = arity.filter(|n| Some(*n) != selector_arity(selector)) {
            return Err(EngineError::usage(
                "arity_mismatch",
                format!(
                    "{selector} takes {} argument(s), the function {n}",
                    selector_arity(selector).unwrap_or(0)
                ),
            ));
        }
        // Declared in bt first: the class table and the checker learn the class and selector.
        let side = if class_side { "class " } else { "" };
        let decl_src = |exists: bool| {
            if exists {
                format!("{class} {side}>> {header} -> Dynamic => nil\n")
            } else {
                format!("Object subclass: {class}\n  {side}{header} -> Dynamic => nil\n")
            }
        };
        let path = format!("host:{class}>>{selector}");
        let cls = self.limited(|vm| {
            let decl = decl_src(vm.prog.class_named(class).is_some());
            let src: Arc<str> = Arc::from(decl.as_str());
            vm.eval(&path, &decl)
                .map_err(|e| EngineError::from_bt(e, Some((path.clone(), src))))?;
            vm.prog.class_named(class).ok_or_else(|| {
                EngineError::usage("class_not_found", format!("Class '{class}' not found"))
            })
        })?;
        let guard = self.vm.lock();
        let Some(vm) = guard.as_ref() else {
            return Err(self.stopped());
        };
        let sel = Sym::new(selector);
        if class_side {
            vm.prog.host_fns.write().insert((cls.name, sel), run);
            vm.prog
                .set_method(&cls, true, sel, Method::prim(host::call));
        } else {
            let key = (host_type::instance_key(class), sel);
            vm.prog.host_fns.write().insert(key, run);
            vm.prog
                .set_method(&cls, false, sel, host_type::instance_method());
        }
        Ok(())
    }

    /// Compiles `source` (statements, no declarations) once; [`Engine::run`] runs it many
    /// times without parsing or checking again. With `params` the script takes arguments
    /// (`engine.compile_fn(&["x"], "x * 2")`). It sees the top-level bindings made so far.
    pub fn compile(&self, source: &str) -> Result<Script, EngineError> {
        self.compile_fn(&[], source)
    }

    /// [`Engine::compile`] with named parameters.
    pub fn compile_fn(&self, params: &[&str], source: &str) -> Result<Script, EngineError> {
        let text = script::block_source(params, source);
        let block = self.eval_named("script", &text)?;
        Ok(Script::new(block, params.len()))
    }

    /// Runs a compiled script with `args` under the engine's limits.
    pub fn run(&self, script: &Script, args: &[Value]) -> Result<Value, EngineError> {
        if args.len() != script.arity() {
            return Err(EngineError::usage(
                "arity_mismatch",
                format!(
                    "the script takes {} argument(s), got {}",
                    script.arity(),
                    args.len()
                ),
            ));
        }
        self.limited(|vm| script::run(vm, &self.shared, script.block(), args))
    }

    /// Takes the program output captured since the last call (empty when the engine was
    /// built with `capture_output(false)`).
    pub fn take_output(&self) -> String {
        match &self.output {
            Some(b) => std::mem::take(&mut *b.lock()),
            None => String::new(),
        }
    }

    /// Takes the runtime log lines kept since the last call (failed casts, supervisor
    /// reports, actor errors …): already rate-limited per call site, at most
    /// [`MAX_KEPT_LOG_LINES`] kept (then a line counting the lines dropped). The engine
    /// never writes them to standard error; each line also goes to the `log` facade (target
    /// `bt`, level warn) for a host that installed a logger.
    pub fn take_logs(&self) -> Vec<String> {
        let mut b = self.logs.lock();
        let mut lines = std::mem::take(&mut b.lines);
        if b.dropped > 0 {
            lines.push(format!("… {} more log lines dropped", b.dropped));
            b.dropped = 0;
        }
        lines
    }

    /// The value's `printString` (user overrides honoured), under the engine's limits.
    pub fn print_string(&self, v: &Value) -> Result<String, EngineError> {
        let v = v.clone();
        self.limited(|vm| {
            let r = vm.try_run(move |ctx, _| {
                ctx.print_string(&v).map_err(|e| {
                    EngineError::from_bt(crate::interp::error::to_bt_error(ctx, e), None)
                })
            });
            match r {
                Ok(r) => r,
                Err(m) => Err(EngineError::usage("internal_error", m)),
            }
        })
    }

    /// A value as text for the host, under the engine's limits (a display a limit ended
    /// reads `<printString failed: …>`): the REPL's display (Strings without quotes,
    /// Symbols without `#`), except that a List shows its `printString`
    /// (`#(1.5, nil, "s")`) — the REPL's JSON rendering would show Floats and nil inside it
    /// as strings.
    pub fn display(&self, v: &Value) -> String {
        let list = matches!(v, Value::List(_));
        self.limited(|vm| {
            Ok(if list {
                vm.print_string(v)
            } else {
                vm.display(v)
            })
        })
        .unwrap_or_else(|e| format!("<printString failed: {e}>"))
    }

    /// The names of the top-level bindings made so far.
    pub fn binding_names(&self) -> Vec<String> {
        match self.vm.lock().as_ref() {
            Some(vm) => vm.binding_names(),
            None => Vec::new(),
        }
    }

    /// Source texts the engine holds now: those of declarations and of blocks still alive
    /// (an `eval` that declares nothing releases its source once its blocks are gone).
    pub fn loaded_sources(&self) -> usize {
        match self.vm.lock().as_ref() {
            Some(vm) => vm.prog.live_files(),
            None => 0,
        }
    }

    /// Grants scripts a capability after the engine started (see [`EngineBuilder::grant`]).
    pub fn grant(&self, c: Capability) {
        let guard = self.vm.lock();
        let Some(vm) = guard.as_ref() else { return };
        vm.prog.capabilities.grant(c);
        let mut denied = self.denied.lock();
        for (cap, cls, side, sel, m) in std::mem::take(&mut *denied) {
            if cap == c {
                vm.prog.set_method(&cls, side, sel, m);
            } else {
                denied.push((cap, cls, side, sel, m));
            }
        }
    }

    /// A handle that cancels this engine's evaluations from another thread.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle {
            shared: self.shared.clone(),
            rt: self.rt.clone(),
        }
    }

    /// The processes the engine's scripts started that are alive now (actors, supervisors,
    /// timer callbacks running); the main program's own process is not counted.
    pub fn processes(&self) -> usize {
        // A process that exits meanwhile may be freed here, with its last reference.
        let _mem = crate::memory::Scope::enter(self.shared.account);
        let all = self.rt.user_processes();
        let n = all.iter().filter(|p| p.label() != "main").count();
        drop(all);
        n
    }

    /// Bytes counted against `max_memory` now (None without a memory limit).
    pub fn memory_used(&self) -> Option<usize> {
        self.shared.account.map(|a| {
            crate::memory::flush();
            a.used()
        })
    }

    /// Stops the engine: the running evaluation (if any) ends with `shutdown`, every actor,
    /// timer and callback a script started stops, the runtime's threads end. Later calls
    /// answer `shutdown` errors. Waits for a running evaluation to unwind (the host function
    /// it may be in must return).
    pub fn shutdown(&self) {
        self.shared
            .shutdown
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shared.watchdog.fire(&self.rt, None, Limit::Shutdown);
        if host::in_host_fn(self.id()) {
            // Called from a host function of this engine: the evaluation unwinds at its next
            // step and the Vm goes with the engine.
            return;
        }
        let vm = self.vm.lock().take();
        drop(vm);
    }

    fn id(&self) -> usize {
        self.id
    }

    fn stopped(&self) -> EngineError {
        EngineError::limit(Limit::Shutdown, "the engine was shut down".to_string())
    }

    /// Runs `f` (the engine's jobs on the Vm) as one evaluation under the limits: the hooks
    /// of `limits::hook_factory` count its jobs' reductions, the watchdog its deadline and
    /// cancellation; a limit that tripped decides the result.
    fn limited<R>(
        &self,
        f: impl FnOnce(&mut Vm) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        if host::in_host_fn(self.id()) {
            return Err(EngineError::usage(
                "reentrant_call",
                "a host function called back into the engine that is running it".to_string(),
            )
            .with_hint("return a value and let the script continue, or use another Engine"));
        }
        // The engine's lock gives the Vm to this evaluation alone (`&mut`): its jobs reach
        // the main process without the Interpreter's own lock (`Interpreter::try_run_mut`).
        let mut guard = self.vm.lock();
        let Some(vm) = guard.as_mut() else {
            return Err(self.stopped());
        };
        let sh = &self.shared;
        if let Some(l) = sh.refuses_start() {
            // At the memory limit the processes the scripts started stop; their memory comes
            // back in a moment, and this evaluation runs once it has.
            if l != Limit::Memory || !sh.recover_memory() {
                return Err(self.limit_error(l));
            }
        }
        let _mem = crate::memory::Scope::enter(sh.account);
        // One store starts the evaluation (clears the trip); one swap ends it.
        let id = sh.watchdog.begin();
        let timer = sh
            .limits
            .timeout
            .map(|t| Watchdog::arm(sh, &self.rt, id, t));
        let r = f(vm);
        let tripped = sh.watchdog.end(timer).or_else(|| match &r {
            // A limit the run met itself (a step refused before it allocated: `Ctx::reserve`).
            Err(e) => match e.error_kind {
                EngineErrorKind::Limit(l) => Some(l),
                _ if e.message.contains("#memory_limit") => Some(Limit::Memory),
                _ => None,
            },
            _ => None,
        });
        if let Some(l) = tripped {
            return Err(self.limit_error(l));
        }
        r
    }

    fn limit_error(&self, l: Limit) -> EngineError {
        let lim = &self.shared.limits;
        let detail = match l {
            Limit::Reductions => {
                format!("more than {} reductions", lim.max_reductions.unwrap_or(0))
            }
            Limit::Deadline => format!("still running after {:?}", lim.timeout.unwrap_or_default()),
            Limit::Memory => match (self.shared.account, lim.max_allocation) {
                (Some(a), _) => format!("more than {} bytes in use", a.limit()),
                (None, Some(n)) => format!("a single step of more than {n} bytes"),
                (None, None) => format!(
                    "a single step larger than this machine's memory ({} bytes)",
                    crate::memory::machine_memory()
                ),
            },
            Limit::Cancelled => "cancelled by the host".to_string(),
            Limit::Budget => format!(
                "more than {} reductions over the engine's life",
                lim.total_reductions.unwrap_or(0)
            ),
            Limit::Shutdown => "the engine was shut down".to_string(),
        };
        EngineError::limit(l, detail)
    }

    /// A source whose literals are too long to parse within limits (see
    /// [`MAX_LITERAL_DIGITS`]); only with a reduction, time or budget limit set.
    fn literal_guard(&self, path: &str, src: &str) -> Option<EngineError> {
        let lim = &self.shared.limits;
        if lim.max_reductions.is_none() && lim.timeout.is_none() && lim.total_reductions.is_none() {
            return None;
        }
        let (start, end) = long_number(src.as_bytes(), MAX_LITERAL_DIGITS)?;
        let d = crate::diagnostic::Diagnostic::error(
            "E0101",
            format!(
                "number literal of {} characters is longer than an engine with limits parses ({MAX_LITERAL_DIGITS})",
                end - start
            ),
            crate::base::span::Span::new(start, end),
        );
        let bt = crate::interp::BtError::compile(path, src, vec![d]);
        Some(EngineError::from_bt(
            bt,
            Some((path.to_string(), Arc::from(src))),
        ))
    }
}

/// The arity of a selector (`at:put:` 2, `+` 1, `now` 0).
fn selector_arity(sel: &str) -> Option<usize> {
    host::header(sel)?;
    Some(crate::interp::eval::sel_arity(sel))
}

impl EngineError {
    /// Attaches the source of the file the error points into, from the files the Vm loaded.
    fn and_source(self, vm: &Vm) -> EngineError {
        if self.has_source() {
            return self;
        }
        let Some((file, _, _)) = self.location.clone() else {
            return self;
        };
        let files = vm.prog.files.read();
        match files.iter().rev().find(|f| f.path == file) {
            Some(f) => self.with_source(file, f.src.clone()),
            None => self,
        }
    }
}

/// The first run of digits (with the letters and `_` a number literal may hold) longer than
/// `max` that the lexer would read as a number literal: one linear pass that skips String
/// bodies (but not the code of their `{…}` interpolations), comments, quoted Symbols and
/// Character literals, so a long String of digits is no number literal.
fn long_number(b: &[u8], max: usize) -> Option<(usize, usize)> {
    // Brace depth of each interpolation entered (innermost last); in a String body when
    // `in_str`.
    let mut interps: Vec<u32> = Vec::new();
    let mut in_str = false;
    let mut i = 0;
    while i < b.len() {
        if in_str {
            match b[i] {
                b'"' if b.get(i + 1) == Some(&b'"') => i += 2,
                b'"' => {
                    in_str = false;
                    i += 1;
                }
                b'\\' => i += 2,
                b'{' => {
                    interps.push(1);
                    in_str = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match b[i] {
            b'"' => {
                in_str = true;
                i += 1;
            }
            b'{' => {
                if let Some(d) = interps.last_mut() {
                    *d += 1;
                }
                i += 1;
            }
            b'}' => {
                if let Some(d) = interps.last_mut() {
                    *d -= 1;
                    if *d == 0 {
                        interps.pop();
                        in_str = true;
                    }
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |n| i + 2 + n + 2);
            }
            b'#' if b.get(i + 1) == Some(&b'\'') => {
                i = b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |n| i + 2 + n + 1);
            }
            // `$"`, `${`, `$7`: one Character, whatever it is.
            b'$' => i += 2,
            c if c.is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i - start > max {
                    return Some((start, i));
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[derive(Default)]
struct SendState {
    result: Option<Result<Value, EngineError>>,
    waker: Option<std::task::Waker>,
}

/// The future of [`Engine::send_async`]: the answer of the send.
pub struct SendFuture {
    state: Arc<Mutex<SendState>>,
}

impl std::future::Future for SendFuture {
    type Output = Result<Value, EngineError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let mut g = self.state.lock();
        match g.result.take() {
            Some(r) => std::task::Poll::Ready(r),
            None => {
                g.waker = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

impl std::fmt::Debug for SendFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SendFuture")
    }
}
