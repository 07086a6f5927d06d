//! The program-level API: one `Interpreter` is one running program (class table, bindings, the main
//! process's context). The CLI, the REPL and the test runner use only this.
//!
//! Each `Interpreter` owns an actor [`Runtime`]. The main program is a process of that runtime
//! (`<0.1.0>`, label `main`): every unit, REPL line and `eval` runs as a job of that process
//! on a coroutine stack, with one persistent context. The context checks its depth limit and
//! the coroutine's remaining native stack and raises `stack_overflow` before running out, so
//! a native overflow cannot happen.

// `BtError` is the documented error of the program API (docs/architecture.md); it is built once per failed
// unit, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use parking_lot::Mutex;

use crate::diagnostic::Diagnostic;
use crate::interp::actor::behaviour::{job_message, MainActor};
use crate::interp::actor::handle::{native, Job, JobBox};
use crate::interp::actor::ActorSys;
use crate::interp::error::to_bt_error;
use crate::interp::eval::{Ctx, Unwind};
use crate::interp::loader::{self, Session, SourceUnit};
use crate::interp::main_job::{BlockOut, Guest, JobSlot, MainState};
use crate::interp::program::Program;
use crate::runtime::{Config, GuestDone, ProcRef, Runtime, SpawnOpts};
use crate::value::Value;

pub use crate::interp::error::top::{BtError, TraceFrame};
pub use crate::interp::program::InterpreterOptions;

/// What loading a set of files produced.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Per file: warnings (parse/check/run failures, already rendered as text).
    pub warnings: Vec<(String, String)>,
    /// Diagnostics of severity warning/hint to print (rendered text).
    pub findings: Vec<String>,
    /// The first uncaught error raised by a top-level statement, if any.
    pub error: Option<BtError>,
}

pub struct Interpreter {
    pub prog: Arc<Program>,
    /// The main process, the session and the guest worker (`main_job::MainState`); locked
    /// for the length of one job (jobs of the main process run one at a time anyway).
    main: Mutex<MainState>,
    /// Jobs go to the worker pool instead of the calling thread (`run_main_on_pool`).
    main_on_pool: std::sync::atomic::AtomicBool,
    sys: Arc<ActorSys>,
    /// The job the main process runs next (`interp::main_job`).
    job_slot: Arc<JobSlot>,
    runtime: Option<Runtime>,
    /// Problems loading the built-in library (should be empty).
    pub stdlib_warnings: Vec<String>,
    /// The static checker's view of what is loaded (created on first use).
    checker: Mutex<Option<crate::check::Checker>>,
    check_opts: Mutex<crate::check::CheckOptions>,
    /// Warnings and hints of the last `eval`, rendered.
    findings: Mutex<Vec<String>>,
}

/// The checker with the built-in library and every primitive selector (the same one `bt check`
/// uses), built once per process.
fn base_checker() -> crate::check::Checker {
    crate::interp::checker::standard_checker()
}

/// Converts an unwind reaching the top into a BtError (a `Program exit:` becomes a
/// `ProgramExit` error whose message is the status).
fn top_error(ctx: &mut Ctx, u: Unwind) -> BtError {
    if let Some(code) = u.exit_code() {
        return BtError::Exit(code);
    }
    to_bt_error(ctx, u)
}

fn internal(m: &str) -> BtError {
    BtError::simple(
        "InternalError",
        "internal_error",
        &format!("internal error in the evaluator: {m}"),
    )
}

fn render(path: &str, src: &str, diags: &[Diagnostic]) -> String {
    crate::diagnostic::render(path, src, diags, crate::diagnostic::ColorChoice::Never)
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        self.sys.shutdown();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown();
        }
    }
}

/// Starts taking in the library classes nearly every program reaches (those of string and
/// integer literals, the Transcript, and so Object's) on a thread of its own, beside the
/// rest of start-up, on a second core: their files are decoded and, with `check`, the
/// checker's entries made (`Checker::prepare_in_background`; once per process). Making an
/// interpreter does it; `bt run` does it first thing, so that it starts earlier. Nothing
/// changes but when the work is done.
pub fn prepare_library(check: bool) {
    const COMMON: &[&str] = &["String", "Integer", "TranscriptStream"];
    crate::check::Checker::prepare_in_background(COMMON, check);
}

/// The coroutine stack a depth limit above the default needs (None: the default stack).
/// Coroutine stacks are lazily committed reservations sized for the depth limit (10,000
/// activations by default); `--max-depth` / `max_depth` scales them, up to 32 GiB.
pub fn stack_for_depth(max_depth: usize) -> Option<usize> {
    (max_depth > 10_000).then(|| {
        let per = crate::runtime::DEFAULT_STACK_SIZE / 10_000;
        per.saturating_mul(max_depth).min(32 << 30)
    })
}

/// Refuses a depth limit whose coroutine stack cannot be mapped here (every process would
/// wait for a stack forever): the message names the option (`--max-depth`, `max_depth`),
/// the size and the reason.
pub fn check_max_depth(max_depth: usize, option: &str) -> Result<(), String> {
    let Some(size) = stack_for_depth(max_depth) else {
        return Ok(());
    };
    crate::runtime::probe_stack(size).map_err(|e| {
        format!(
            "{option} {max_depth} needs coroutine stacks of {} MiB, which cannot be mapped \
             here ({e}); use a smaller {option} (10,000, the default, needs {} MiB) or \
             raise the address-space limit (ulimit -v)",
            size >> 20,
            crate::runtime::DEFAULT_STACK_SIZE >> 20
        )
    })
}

/// Sets a job's `done` signal when the job is over, also when it is dropped without running.
struct DoneOnDrop(GuestDone);

impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Starts the main program's process (`<0.1.0>` in a fresh runtime).
fn spawn_main(sys: &Arc<ActorSys>, slot: &Arc<JobSlot>) -> ProcRef {
    let mut ctx = Ctx::new(sys.prog.clone());
    ctx.proc.sys = Some(sys.clone());
    let opts = SpawnOpts {
        label: "main",
        ..SpawnOpts::default()
    };
    match sys.rt.spawn_opts(
        Box::new(MainActor {
            ctx: Some(ctx),
            slot: slot.clone(),
        }),
        opts,
    ) {
        Ok(p) => p,
        Err(_) => unreachable!("spawn without a name cannot fail"),
    }
}

/// A job of the main process (see [`Interpreter::try_run`]); the caller is the only user of
/// `st` for its length.
#[inline(always)]
fn run_job<R: Send>(
    sys: &Arc<ActorSys>,
    job_slot: &Arc<JobSlot>,
    on_pool: bool,
    st: &mut MainState,
    arm: impl FnOnce(u64) -> u32,
    f: impl FnOnce(&mut Ctx, &mut Session) -> R + Send,
) -> Result<R, String> {
    let armed = armed_main(sys, job_slot, st, arm);
    let sess = &mut st.session;
    // A panic of `f` is answered as an error by the one handler around the job's run
    // (`MainActor::job_panicked` on the calling thread's runner, `JobSlot::run` on a pool
    // worker), which resets the main context.
    let job = move |ctx: &mut Ctx| Ok::<R, String>(f(ctx, sess));
    // The calling thread runs the main process itself when it can (no hand-off to a worker
    // and back: `runtime::sched::guest`); else the job goes to the pool.
    let main = &st.main;
    let out = crate::interp::main_job::run_in_main(
        &sys.rt,
        job_slot,
        &mut st.guest,
        main,
        on_pool,
        armed,
        job,
        |done| job_to_pool(sys, main, done, job_slot),
    );
    job_ended(sys, job_slot, st, out)
}

/// The main process for the next job (a fresh one if the last was killed), with the job's
/// limits armed for it: the caller may arm them itself for the process it will run in.
#[inline(always)]
fn armed_main(
    sys: &Arc<ActorSys>,
    job_slot: &Arc<JobSlot>,
    st: &mut MainState,
    arm: impl FnOnce(u64) -> u32,
) -> crate::interp::main_job::Armed {
    if !st.main.is_alive() {
        st.main = spawn_main(sys, job_slot);
    }
    let pid = st.main.pid().number;
    crate::interp::main_job::Armed {
        pid,
        step: arm(pid),
    }
}

/// A job's answer; none when the main process died while running it (killed): a fresh one
/// is started for the next job and the caller gets an error.
#[inline(always)]
fn job_ended<T>(
    sys: &Arc<ActorSys>,
    job_slot: &Arc<JobSlot>,
    st: &mut MainState,
    out: Option<Result<T, String>>,
) -> Result<T, String> {
    match out {
        Some(r) => r,
        None => Err(main_exited(sys, job_slot, st)),
    }
}

/// A fresh main process for the next job after the last one exited, and the error of the
/// job that could not finish.
#[cold]
#[inline(never)]
fn main_exited(sys: &Arc<ActorSys>, job_slot: &Arc<JobSlot>, st: &mut MainState) -> String {
    st.main = spawn_main(sys, job_slot);
    "the main process exited".to_string()
}

/// A block call as a job of the main process ([`Interpreter::try_call_block_armed`]): as
/// [`run_job`], with a job made for the call (`main_job::BlockFrame`).
#[inline(always)]
fn call_block_job(
    sys: &Arc<ActorSys>,
    job_slot: &Arc<JobSlot>,
    on_pool: bool,
    st: &mut MainState,
    arm: impl FnOnce(u64) -> u32,
    block: &Arc<crate::interp::eval::Closure>,
    args: &[Value],
) -> BlockOut {
    let armed = armed_main(sys, job_slot, st, arm);
    let main = &st.main;
    let out = crate::interp::main_job::call_block_in_main(
        &sys.rt,
        job_slot,
        &mut st.guest,
        main,
        on_pool,
        armed,
        block,
        args,
        |done| job_to_pool(sys, main, done, job_slot),
    );
    match out {
        Some(r) => r,
        None => BlockOut::Failed(Box::new(main_exited(sys, job_slot, st))),
    }
}

/// Sends the job in the slot to the main process as a message a pool worker runs; the
/// message sets `done` when it is dropped, run or not.
fn job_to_pool(sys: &ActorSys, main: &ProcRef, done: &GuestDone, slot: &Arc<JobSlot>) {
    let signal = DoneOnDrop(done.clone());
    let slot = slot.clone();
    let job: Job = Box::new(move |ctx: &mut Ctx| {
        let _signal = signal;
        slot.run(ctx);
    });
    let msg = job_message(native(JobBox {
        job: Mutex::new(Some(job)),
        class: sys.prog.core.object.clone(),
    }));
    sys.rt.cast(main, msg);
}

/// Loads the library into a template program and keeps what programs can share (the
/// library image; None when it cannot be shared).
fn build_library_image() -> Option<crate::interp::library_image::LibraryImage> {
    let vm = Interpreter::loading_library(InterpreterOptions::default());
    let warnings = vm.library_problems(true);
    crate::interp::library_image::LibraryImage::of(&vm.prog, warnings)
}

impl Interpreter {
    /// A program with the built-in library: a copy of the process's library image
    /// (`interp::library_image`), or loaded into this program (the first of the process).
    pub fn new(opts: InterpreterOptions) -> Interpreter {
        let image = crate::interp::library_image::for_new_program(build_library_image);
        Interpreter::start(opts, image)
    }

    /// The process's library image, built now if it is not yet (None when the library
    /// cannot be shared; `interp::library_image`).
    pub fn library_image() -> Option<&'static crate::interp::library_image::LibraryImage> {
        crate::interp::library_image::image(build_library_image)
    }

    /// A program that loads the built-in library itself (not from the image).
    pub(crate) fn loading_library(opts: InterpreterOptions) -> Interpreter {
        Interpreter::start(opts, None)
    }

    fn start(
        opts: InterpreterOptions,
        image: Option<&'static crate::interp::library_image::LibraryImage>,
    ) -> Interpreter {
        let mut cfg = Config::default();
        if let Some(t) = &opts.log {
            cfg.log = t.0.clone();
        }
        if let Some(size) = stack_for_depth(opts.max_depth) {
            cfg.stack_size = size;
        }
        let privileged = opts.privileged;
        let simulated = opts.sim.is_some();
        cfg.sim = opts.sim.clone();
        if image.is_none() {
            prepare_library(opts.check);
        }
        let prog = Arc::new(match image {
            Some(img) => Program::from_image(opts, img),
            None => Program::bootstrap(opts, crate::interp::prims::shared()),
        });
        let runtime = match Runtime::new(cfg) {
            Ok(rt) => rt,
            Err(e) => panic!("bt: cannot start the actor runtime: {e}"),
        };
        let sys = ActorSys::new(runtime.handle(), prog.clone());
        sys.privileged
            .store(privileged, std::sync::atomic::Ordering::Relaxed);
        let job_slot = JobSlot::new();
        let main = spawn_main(&sys, &job_slot);
        let mut vm = Interpreter {
            prog: prog.clone(),
            main: Mutex::new(MainState {
                main,
                session: Session::default(),
                guest: Guest::default(),
            }),
            // Simulated: the calling thread only waits (the one worker makes every choice).
            main_on_pool: std::sync::atomic::AtomicBool::new(simulated),
            sys,
            job_slot,
            runtime: Some(runtime),
            stdlib_warnings: Vec::new(),
            checker: Mutex::new(None),
            check_opts: Mutex::new(crate::check::CheckOptions::default()),
            findings: Mutex::new(Vec::new()),
        };
        vm.stdlib_warnings = match image {
            Some(img) => img.warnings.clone(),
            None => vm.load_stdlib(),
        };
        vm
    }

    /// Whether the main program's process is the only one left, but for the standard-output
    /// transcript idle with nothing queued (it writes each text as it gets it): no actor or
    /// task runs or waits beside it, so a shutdown would end nothing that could still act
    /// or be seen (`bt run` then leaves the interpreter to the process's exit).
    pub fn only_main_process_left(&self) -> bool {
        if self.sys.rt.process_count() <= 1 {
            return true;
        }
        let main = self.main.lock().main.clone();
        let transcript = self.sys.stdout_transcript.lock().clone();
        self.sys.rt.processes(true).iter().all(|p| {
            p.proc == main
                || (Some(&p.proc) == transcript.as_ref()
                    && p.status == crate::runtime::ProcStatus::Idle
                    && p.mailbox_len == 0)
        })
    }

    /// The runtime handle of this Interpreter (embedders, tests).
    pub fn runtime(&self) -> crate::runtime::RtHandle {
        self.sys.rt.clone()
    }

    /// Runs the main program's jobs on the worker pool instead of on the calling thread.
    /// The calling thread as guest (the default) saves two thread hand-offs per job, which
    /// suits short jobs (an embedder's `eval`); but actors the job talks to run on the pool,
    /// so each sync send from the job is a round trip between two threads. `bt run`, whose
    /// one job is the whole program, sets this: the main process then shares a worker with
    /// the actors it calls (`runtime::sched`, sync calls run the callee next). Turning it
    /// on starts the pool's first worker at once, so that its thread starts while the caller
    /// still loads and checks the program (it would start with the first job).
    pub fn run_main_on_pool(&self, on: bool) {
        self.main_on_pool
            .store(on, std::sync::atomic::Ordering::Relaxed);
        if on {
            self.sys.rt.start_first_worker();
        }
    }

    /// Runs `f` with the main process context, as a job of the main program's process.
    pub fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Ctx, &mut Session) -> R + Send + 'static,
    ) -> R {
        match self.try_run(f) {
            Ok(r) => r,
            Err(m) => panic!("bt: internal error in the evaluator: {m}"),
        }
    }

    /// Like [`Interpreter::run`], but a panic inside the evaluator becomes `Err` (the context is reset;
    /// the bindings are kept). `f` may borrow from the caller: this returns only once the job
    /// is over or can no longer run (`interp::main_job`).
    pub fn try_run<R: Send>(
        &self,
        f: impl FnOnce(&mut Ctx, &mut Session) -> R + Send,
    ) -> Result<R, String> {
        // One lock for the call: jobs of the main process run one at a time.
        let mut g = self.main.lock();
        let on_pool = self.main_on_pool.load(std::sync::atomic::Ordering::Relaxed);
        run_job(&self.sys, &self.job_slot, on_pool, &mut g, |_| 0, f)
    }

    /// [`Interpreter::try_run`] for a caller that has the Interpreter to itself (an `Engine`
    /// holds its own lock around its Vm): the main state is reached without a lock.
    #[inline(always)]
    pub fn try_run_mut<R: Send>(
        &mut self,
        f: impl FnOnce(&mut Ctx, &mut Session) -> R + Send,
    ) -> Result<R, String> {
        self.try_run_armed(|_| 0, f)
    }

    /// [`Interpreter::try_run_mut`] for a caller that arms the job's limits itself: `arm`
    /// gets the pid number of the main process the job will run in and answers the
    /// reduction step it armed the main guard with (0: none armed; the job calls the hook
    /// factory, `Program::ctx_hook`, as any job does). See `main_job::Armed`.
    #[inline(always)]
    pub fn try_run_armed<R: Send>(
        &mut self,
        arm: impl FnOnce(u64) -> u32,
        f: impl FnOnce(&mut Ctx, &mut Session) -> R + Send,
    ) -> Result<R, String> {
        let on_pool = *self.main_on_pool.get_mut();
        run_job(
            &self.sys,
            &self.job_slot,
            on_pool,
            self.main.get_mut(),
            arm,
            f,
        )
    }

    /// [`Interpreter::try_run_armed`] for a block call (an engine's script call): `block`
    /// called with `args` in the main process; its error made into a [`BtError`] there.
    #[inline(always)]
    pub fn try_call_block_armed(
        &mut self,
        arm: impl FnOnce(u64) -> u32,
        block: &Arc<crate::interp::eval::Closure>,
        args: &[Value],
    ) -> BlockOut {
        let on_pool = *self.main_on_pool.get_mut();
        call_block_job(
            &self.sys,
            &self.job_slot,
            on_pool,
            self.main.get_mut(),
            arm,
            block,
            args,
        )
    }

    /// Defers the built-in library: its classes are taken in on first use
    /// (`loader::LazyLibrary`), so nothing of it is parsed or installed yet and nothing is
    /// reported here; what taking in reports is `loader::LazyLibrary::problems`.
    fn load_stdlib(&self) -> Vec<String> {
        loader::LazyLibrary::start(&self.prog);
        Vec::new()
    }

    /// What taking in the built-in library has reported so far (should be empty; the whole
    /// library is taken in first when `all` is set).
    pub fn library_problems(&self, all: bool) -> Vec<String> {
        if all {
            self.prog.take_in_library();
        }
        loader::LazyLibrary::problems(&self.prog)
    }

    /// Loads files as one unit: all declarations first, then statements in the order given.
    pub fn load_unit(&self, files: &[(String, String)]) -> LoadReport {
        let mut report = LoadReport::default();
        let mut units: Vec<SourceUnit> = Vec::new();
        for (path, src) in files {
            let (module, diags) = crate::syntax::parse(src);
            if diags.iter().any(|d| d.is_error()) {
                report
                    .warnings
                    .push((path.clone(), render(path, src, &diags)));
                continue;
            }
            let others: Vec<Diagnostic> = diags.into_iter().filter(|d| !d.is_error()).collect();
            if !others.is_empty() {
                report.findings.push(render(path, src, &others));
            }
            let file = self.prog.add_file(path, src);
            units.push(SourceUnit {
                path: path.clone(),
                src: src.clone().into(),
                module: std::borrow::Cow::Owned(module),
                file,
                stdlib: false,
            });
        }
        if self.prog.opts.check && !units.is_empty() {
            let opts = self.check_opts.lock().clone();
            let mut guard = self.checker.lock();
            let checker = guard.get_or_insert_with(base_checker);
            let files: Vec<crate::check::SourceFile> = units
                .iter()
                .map(|u| crate::check::SourceFile {
                    path: &u.path,
                    src: &u.src,
                    module: &u.module,
                })
                .collect();
            let findings = checker.check_unit(&files, &opts);
            let mut bad = vec![false; units.len()];
            for (i, u) in units.iter().enumerate() {
                let mine: Vec<Diagnostic> = findings
                    .iter()
                    .filter(|f| f.file == i)
                    .map(|f| f.diag.clone())
                    .collect();
                let (errs, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
                    mine.into_iter().partition(|d| d.is_error());
                if !others.is_empty() {
                    report.findings.push(render(&u.path, &u.src, &others));
                }
                if !errs.is_empty() {
                    bad[i] = true;
                    report
                        .warnings
                        .push((u.path.clone(), render(&u.path, &u.src, &errs)));
                    report
                        .error
                        .get_or_insert(BtError::compile(&u.path, &u.src, errs));
                }
            }
            let good: Vec<crate::check::SourceFile> = files
                .iter()
                .enumerate()
                .filter(|(i, _)| !bad[*i])
                .map(|(_, f)| *f)
                .collect();
            checker.remember(&good);
            drop(files);
            let mut i = 0;
            units.retain(|_| {
                i += 1;
                !bad[i - 1]
            });
        }
        let r = self.load_parsed(units, None);
        report.warnings.extend(r.warnings);
        report.findings.extend(r.findings);
        report.error = report.error.or(r.error);
        // Classes may have been (re)loaded at another shape version.
        if let Some(d) = self.prog.dist.get() {
            d.classes_reloaded();
        }
        report
    }

    /// Loads parsed units; `library` is the built-in library (the same units), whose
    /// methods are lowered on first use (`loader::install_library`).
    fn load_parsed<U>(&self, units: U, library: Option<&'static [SourceUnit]>) -> LoadReport
    where
        U: std::ops::Deref<Target = [SourceUnit]> + Send + 'static,
    {
        let prog = self.prog.clone();
        let stdlib = library.is_some();
        let r = self.try_run(move |ctx, session| {
            let mut report = LoadReport::default();
            let inst = match library {
                Some(lib) => loader::install_library(&prog, lib),
                None => loader::install_declarations(&prog, &units),
            };
            for p in &inst.problems {
                report
                    .warnings
                    .push((p.path.clone(), render(&p.path, &p.src, &p.diagnostics)));
            }
            for (path, e) in loader::init_class_state(ctx, &units, &inst) {
                let err = top_error(ctx, e);
                report.warnings.push((path, err.report_with_location()));
                report.error.get_or_insert(err);
            }
            for &fi in &inst.ok_files {
                let u = &units[fi];
                let code = match loader::lower_statements(&prog, u, session) {
                    Ok(Some(c)) => c,
                    Ok(None) => continue,
                    Err(d) => {
                        report
                            .warnings
                            .push((u.path.clone(), render(&u.path, &u.src, &d)));
                        if !stdlib {
                            report
                                .error
                                .get_or_insert(BtError::compile(&u.path, &u.src, d));
                        }
                        continue;
                    }
                };
                if let Err(e) = loader::run_statements(ctx, &code, session, false) {
                    let err = top_error(ctx, e);
                    report
                        .warnings
                        .push((u.path.clone(), err.report_with_location()));
                    let exit = err.exit_code().is_some();
                    report.error.get_or_insert(err);
                    if exit {
                        break;
                    }
                }
            }
            report
        });
        r.unwrap_or_else(|m| LoadReport {
            error: Some(internal(&m)),
            ..LoadReport::default()
        })
    }

    /// Evaluates one REPL input / btscript expression; top-level bindings persist. An input
    /// that raises leaves the bindings as they were.
    pub fn eval(&self, path: &str, src: &str) -> Result<Value, BtError> {
        self.findings.lock().clear();
        let (module, diags) = crate::syntax::parse(src);
        if diags.iter().any(|d| d.is_error()) {
            return Err(BtError::compile(path, src, diags));
        }
        if self.prog.opts.check {
            let opts = self.check_opts.lock().clone();
            let mut guard = self.checker.lock();
            let checker = guard.get_or_insert_with(base_checker);
            checker.add_bindings(self.binding_names());
            let file = crate::check::SourceFile {
                path,
                src,
                module: &module,
            };
            let diags = checker.check_input(file, &opts);
            let (errs, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
                diags.into_iter().partition(|d| d.is_error());
            if !errs.is_empty() {
                return Err(BtError::compile(path, src, errs));
            }
            if !others.is_empty() {
                self.findings.lock().push(render(path, src, &others));
            }
            checker.remember(&[file]);
        }
        let file = self.prog.add_file(path, src);
        // An input that declares nothing leaves no code behind but the blocks it made: its
        // source is released once they are gone (`interp::source_gc`). It installs nothing
        // either, so it leaves the program epoch (every method and inline cache) alone.
        let releasable = module
            .items
            .iter()
            .all(|it| matches!(it, crate::syntax::ast::Item::Stmt(_)));
        let unit = SourceUnit {
            path: path.to_string(),
            src: src.to_string().into(),
            module: std::borrow::Cow::Owned(module),
            file,
            stdlib: false,
        };
        let prog = &self.prog;
        let r = self.try_run(|ctx, session| {
            let mut root = None;
            let r = (|| {
                let units = std::slice::from_ref(&unit);
                let mut last_class = None;
                if !releasable {
                    let mut inst = loader::install_declarations(prog, units);
                    if !inst.problems.is_empty() {
                        let p = inst.problems.remove(0);
                        return Err(BtError::compile(path, src, p.diagnostics));
                    }
                    if let Some((_, e)) = loader::init_class_state(ctx, units, &inst)
                        .into_iter()
                        .next()
                    {
                        return Err(top_error(ctx, e));
                    }
                    last_class = inst.last_class();
                }
                let code = match loader::lower_statements(prog, &unit, session) {
                    Ok(Some(c)) => c,
                    Ok(None) => return Ok(last_class.map(Value::Class).unwrap_or(Value::Nil)),
                    Err(d) => return Err(BtError::compile(path, src, d)),
                };
                root = Some(code.clone());
                loader::run_statements(ctx, &code, session, true).map_err(|e| top_error(ctx, e))
            })();
            if releasable {
                prog.release_file(file, root.as_ref());
            }
            r
        });
        if releasable && r.is_err() {
            // The job did not run (its process died): nothing of the input is alive.
            self.prog.release_file(file, None);
        }
        r.unwrap_or_else(|m| Err(internal(&m)))
    }

    /// Top-level display.
    pub fn display(&self, v: &Value) -> String {
        let v = v.clone();
        self.try_run(
            move |ctx, _| match crate::interp::actor::top_display(ctx, &v) {
                Ok(s) => s,
                Err(e) => format!("<printString failed: {}>", to_bt_error(ctx, e).report()),
            },
        )
        .unwrap_or_else(|m| format!("<internal error: {m}>"))
    }

    /// What the REPL shows for a value: its `printString` (`#(1, 2.5, nil)`, `"abc"`,
    /// `#sym`); an actor is asked for its own, as [`Interpreter::display`] does.
    pub fn print_string(&self, v: &Value) -> String {
        let v = v.clone();
        self.try_run(move |ctx, _| {
            let r = match &v {
                Value::Native(_) => crate::interp::actor::top_display(ctx, &v),
                _ => ctx.print_string(&v),
            };
            match r {
                Ok(s) => s,
                Err(e) => format!("<printString failed: {}>", to_bt_error(ctx, e).report()),
            }
        })
        .unwrap_or_else(|m| format!("<internal error: {m}>"))
    }

    /// `System arguments` and `Program commandName`.
    pub fn set_args(&self, command: &str, args: Vec<String>) {
        *self.prog.args.write() = args;
        *self.prog.command_name.write() = command.to_string();
    }

    /// Redirects program output (Transcript, `show:`).
    pub fn set_output(&self, sink: crate::interp::program::OutputSink) {
        *self.prog.out.lock() = sink;
    }

    /// Sends `sel` with `args` to the class named `class` (e.g. `main:` for `--main`).
    /// The supervisors of this Interpreter's runtime (for snapshots served outside bt code).
    pub fn supervision(&self) -> crate::runtime::supervisor::Supervision {
        self.sys.supervision.clone()
    }

    pub fn send_to_class(
        &self,
        class: &str,
        sel: &str,
        args: Vec<Value>,
    ) -> Result<Value, BtError> {
        let prog = self.prog.clone();
        let class = class.to_string();
        let sel = sel.to_string();
        self.try_run(move |ctx, _| {
            let Some(c) = prog.class_named(&class) else {
                return Err(BtError::simple(
                    "RuntimeError",
                    "class_not_found",
                    &format!("Class '{class}' not found"),
                ));
            };
            ctx.send(&Value::Class(c), crate::value::Sym::new(&sel), &args)
                .map_err(|e| top_error(ctx, e))
        })
        .unwrap_or_else(|m| Err(internal(&m)))
    }

    /// Warnings and hints the checker reported for the last `eval` (rendered text).
    pub fn last_findings(&self) -> Vec<String> {
        self.findings.lock().clone()
    }

    /// Severity levels and `--warnings-as-errors` for the checker.
    pub fn set_check_options(&self, opts: crate::check::CheckOptions) {
        *self.check_opts.lock() = opts;
    }

    /// The names of the current top-level bindings (REPL completion, tests).
    pub fn binding_names(&self) -> Vec<String> {
        // Empty while a job runs (as when the session was lent to the job).
        let mut v: Vec<String> = match self.main.try_lock() {
            Some(st) => st
                .session
                .cells
                .keys()
                .map(|s| s.as_str().to_string())
                .collect(),
            None => Vec::new(),
        };
        v.sort();
        v
    }
}
