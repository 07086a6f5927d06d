//! [`EngineBuilder`]: the options of an [`Engine`] — limits, capabilities, output, checker —
//! and starting it.

use crate::interp::class::ClassExt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::limits::{self, Limits, Shared};
use super::{Engine, EngineError};
use crate::interp::capability::Capability;
use crate::interp::eval::Method;
use crate::interp::{Interpreter as Vm, InterpreterOptions as VmOptions};
use crate::value::Sym;

/// Options of an [`Engine`].
#[derive(Clone, Debug)]
pub struct EngineBuilder {
    pub(super) limits: Limits,
    max_depth: usize,
    capture_output: bool,
    check: bool,
    grants: Vec<Capability>,
    read_dirs: Vec<std::path::PathBuf>,
    write_dirs: Vec<std::path::PathBuf>,
    env_names: Vec<String>,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            limits: Limits::default(),
            max_depth: 10_000,
            capture_output: true,
            check: true,
            grants: Vec::new(),
            read_dirs: Vec::new(),
            write_dirs: Vec::new(),
            env_names: Vec::new(),
        }
    }
}

impl EngineBuilder {
    /// Ends an evaluation (`eval`, `eval_file`, `call`, `run`) after about `n` reductions
    /// (sends and loop iterations; bulk primitives pay for their work), within one
    /// preemption step (at most 4,000 reductions more). Each actor message and timer
    /// callback has a budget of its own (see [`Self::actor_max_reductions`]). Waiting
    /// (`Timer sleep:`, a reply) costs no reductions: combine with [`Self::timeout`].
    pub fn max_reductions(mut self, n: u64) -> Self {
        self.limits.max_reductions = Some(n);
        self
    }

    /// The reduction budget of each actor message and timer callback (default: the
    /// `max_reductions` of an evaluation). An actor that exceeds it crashes with exit reason
    /// `#reduction_limit` into its supervisor; a caller waiting on the message gets a
    /// `reduction_limit` error.
    pub fn actor_max_reductions(mut self, n: u64) -> Self {
        self.limits.actor_max_reductions = Some(n);
        self
    }

    /// The engine's total budget: reductions over every evaluation, actor message and timer
    /// callback of its life. Once spent, every run stops at its first step with
    /// `budget_exhausted` — also actors and timers a script left running.
    pub fn total_reductions(mut self, n: u64) -> Self {
        self.limits.total_reductions = Some(n);
        self
    }

    /// Ends an evaluation that is still running (or blocked) `d` after it started; each
    /// actor message and timer callback gets the same time of its own while it runs.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.limits.timeout = Some(d);
        self
    }

    /// Limits the heap the engine's scripts hold to about `bytes` (Strings, Binaries,
    /// collections, actors — everything the engine's threads allocate while it runs):
    /// an evaluation that outgrows it ends with `memory_limit`; at the limit every process
    /// the engine's scripts started stops, and the next evaluation runs normally. Needs
    /// [`crate::CountingAlloc`] as the host's global allocator (see `crate::memory`):
    /// without it [`Self::try_build`] answers an error and [`Self::build`] panics. Also
    /// bounds each single step as [`Self::max_allocation`] does.
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.limits.max_memory = Some(bytes);
        self
    }

    /// The most memory one step may allocate at once: a primitive whose result (a String,
    /// a collection, an Integer, printed or encoded text) would take more than `bytes` is
    /// refused with `memory_limit` before it allocates (`Ctx::reserve`). Needs no counting
    /// allocator, but does not bound what many small steps hold together — that is
    /// [`Self::max_memory`].
    pub fn max_allocation(mut self, bytes: usize) -> Self {
        self.limits.max_allocation = Some(bytes);
        self
    }

    /// Limits the memory each actor holds to about `bytes`: its state between messages and
    /// what a message allocates while it runs (see `bt::interp::actor::memlimit`). An actor
    /// that outgrows it crashes with exit reason `#memory_limit` into its supervisor (its
    /// state rolled back) and a caller waiting on the message gets a `memory_limit` error;
    /// the host, the calling script and other actors go on. Every actor has its own account
    /// (also those an actor spawns); [`Self::max_memory`] still bounds them all together.
    /// Needs [`crate::CountingAlloc`] like `max_memory` (without it [`Self::build`] panics).
    pub fn actor_max_memory(mut self, bytes: usize) -> Self {
        self.limits.actor_max_memory = Some(bytes);
        self
    }

    /// Nested activations before the catchable `stack_overflow` (default 10,000). Above
    /// the default the coroutine stacks grow with it (about 6.5 KiB an activation, reserved
    /// but committed only as used, up to 32 GiB); a depth whose stack cannot be mapped here
    /// is refused by [`Self::try_build`] (kind `invalid_max_depth`; [`Self::build`] panics).
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

    /// Grants a capability (none is granted by default): `File` (the whole file system;
    /// scoped: [`Self::allow_read`], [`Self::allow_write`]), `Env` (every environment
    /// variable; scoped: [`Self::allow_env`]), `Sys` (`System hostname`, `pid`), Console
    /// reading, distribution, `ProcessNavigation system`, timers, `Erlang`. A send needing
    /// one that is not granted raises `capability_denied` naming it and how to grant it.
    pub fn grant(mut self, c: Capability) -> Self {
        if !self.grants.contains(&c) {
            self.grants.push(c);
        }
        self
    }

    /// Lets scripts read files inside `dir` and below it (`File readAll:`, `lines:`,
    /// `listDirectory:`, `exists:` …) without granting the whole file system. The check
    /// resolves `..`, symlinks and relative paths first, so none of them leads out of
    /// `dir`; `dir` itself is resolved when the engine starts. Reading anywhere else raises
    /// `capability_denied` naming the path. Repeat for more directories.
    pub fn allow_read(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        self.read_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Lets scripts write inside `dir` and below it (`writeAll:contents:`,
    /// `appendAll:contents:`, `mkdir:`, `delete:`, `rename:to:` …), scoped like
    /// [`Self::allow_read`]. Writing does not imply reading.
    pub fn allow_write(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        self.write_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Lets scripts read the environment variable `name` (`System getEnv:`); every
    /// variable is `grant(Capability::Env)`.
    pub fn allow_env(mut self, name: impl Into<String>) -> Self {
        self.env_names.push(name.into());
        self
    }

    /// Grants every capability (what `bt run` and `bt test` have).
    pub fn grant_all(mut self) -> Self {
        self.grants = Capability::ALL.to_vec();
        self
    }

    /// Grants or withdraws `ProcessNavigation system` (kept for older hosts; see
    /// [`Self::grant`]).
    pub fn privileged(mut self, on: bool) -> Self {
        self.grants
            .retain(|c| *c != Capability::ProcessNavigationSystem);
        if on {
            self.grants.push(Capability::ProcessNavigationSystem);
        }
        self
    }

    /// Starts the engine and loads the standard library.
    ///
    /// # Panics
    ///
    /// With [`Self::max_memory`] or [`Self::actor_max_memory`] when [`crate::CountingAlloc`]
    /// is not the host's global allocator: such a limit could not be enforced, and an engine
    /// that accepted it would let a script hold any amount of memory. With a
    /// [`Self::max_depth`] whose coroutine stack cannot be mapped (every evaluation would
    /// wait for a stack forever). The message is the error [`Self::try_build`] answers
    /// instead.
    pub fn build(self) -> Engine {
        match self.try_build() {
            Ok(e) => e,
            Err(e) => panic!(
                "{}: {} ({}; or use EngineBuilder::try_build to handle this as an error)",
                e.kind,
                e.message,
                e.hint.as_deref().unwrap_or_default()
            ),
        }
    }

    /// [`Self::build`], refusing a memory limit the host cannot enforce (no
    /// [`crate::CountingAlloc`] installed): kind `memory_accounting_unavailable`.
    pub fn try_build(self) -> Result<Engine, EngineError> {
        let wants_memory =
            self.limits.max_memory.is_some() || self.limits.actor_max_memory.is_some();
        if wants_memory && !crate::memory::installed() {
            return Err(EngineError::usage(
                "memory_accounting_unavailable",
                "max_memory and actor_max_memory need bt::CountingAlloc as the global \
                 allocator to see memory a script holds; max_allocation needs none"
                    .to_string(),
            )
            .with_hint(
                "#[global_allocator] static A: bt::CountingAlloc = bt::CountingAlloc::system();",
            ));
        }
        if let Err(m) = crate::interp::interpreter::check_max_depth(self.max_depth, "max_depth") {
            return Err(EngineError::usage("invalid_max_depth", m));
        }
        Ok(self.start())
    }

    fn start(self) -> Engine {
        // The `Erlang` class's term functions reach the value codec through this hook.
        crate::interp::distribution::install_term_codec(&crate::codec::etf_bytes::TERM_CODEC);
        let grants = self.grants.clone();
        let logs = Arc::new(Mutex::new(super::LogBuffer::default()));
        let vm = Vm::new(VmOptions {
            max_depth: self.max_depth,
            deterministic_pids: true,
            privileged: grants.contains(&Capability::ProcessNavigationSystem),
            check: self.check,
            sim: None,
            log: Some(crate::base::log::LogTarget(super::LogBuffer::sink(&logs))),
        });
        super::host::quiet_host_panics();
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
        let denied = deny_ungranted(&vm, &grants);
        for d in &self.read_dirs {
            vm.prog.capabilities.allow_read(d);
        }
        for d in &self.write_dirs {
            vm.prog.capabilities.allow_write(d);
        }
        for n in &self.env_names {
            vm.prog.capabilities.allow_env(n);
        }
        let step_limit = [self.limits.max_allocation, self.limits.max_memory]
            .into_iter()
            .flatten()
            .min();
        if let Some(bytes) = step_limit {
            vm.prog
                .max_allocation
                .store(bytes, std::sync::atomic::Ordering::Relaxed);
        }
        let account = self.limits.max_memory.map(crate::memory::new_account);
        if let Some(bytes) = self.limits.actor_max_memory {
            crate::memory::enable_coroutine_accounts();
            let _ = vm.prog.actor_memory.set((bytes, account));
        }
        let shared = Arc::new(Shared::new(self.limits, account));
        // Every main-program job, actor message and timer/monitor callback runs under the
        // hooks (limits, cancellation, shutdown, the memory account).
        let hook = limits::hook_factory(shared.clone());
        let id = Arc::as_ptr(&hook) as *const () as usize;
        let _ = vm.prog.ctx_hook.set(hook);
        let rt = vm.runtime();
        if let Some(a) = account {
            rt.charge_threads_to(a);
        }
        if account.is_some() {
            *shared.rt.lock() = Some(rt.clone());
        }
        Engine {
            vm: Mutex::new(Some(vm)),
            shared,
            rt,
            output,
            logs,
            id,
            denied: Mutex::new(denied),
        }
    }
}

/// A method the engine replaced with `capability::denied` (restored by `Engine::grant`).
pub(super) type Denied = (Capability, crate::value::ClassRef, bool, Sym, Method);

/// Records the grants and replaces the methods of capabilities not granted with the
/// `capability_denied` primitive; answers the replaced methods.
fn deny_ungranted(vm: &Vm, grants: &[Capability]) -> Vec<Denied> {
    let prog = &vm.prog;
    let mut out = Vec::new();
    for c in grants {
        prog.capabilities.grant(*c);
    }
    for c in Capability::ALL {
        if grants.contains(&c) {
            continue;
        }
        for (class, class_side, sels) in c.selectors() {
            let Some(cls) = prog.class_named(class) else {
                continue;
            };
            for s in *sels {
                let sel = Sym::new(s);
                let table = if *class_side {
                    &cls.class_methods()
                } else {
                    &cls.methods()
                };
                let old = table.read().get(&sel).cloned();
                if let Some(old) = old {
                    out.push((c, cls.clone(), *class_side, sel, old));
                    prog.set_method(
                        &cls,
                        *class_side,
                        sel,
                        Method::prim(crate::interp::capability::denied),
                    );
                }
            }
        }
    }
    out
}
