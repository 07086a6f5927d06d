//! The public face of the runtime: [`Runtime`] (owns the threads), [`RtHandle`] (a cheap
//! handle usable from any thread or process), spawning, task processes, names, monitors,
//! links, timers and introspection.

use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::runtime::clock::TimerRef;
pub use crate::runtime::config::{Config, DEFAULT_STACK_SIZE};
use crate::runtime::cx::Cx;
use crate::runtime::process::{
    deliver_exit, enqueue, fire_monitor, push_signal, Behaviour, Body, Envelope, ExitHook, Monitor,
    MonitorAction, ProcRef, Sched,
};
use crate::runtime::sched::Shared;
pub use crate::runtime::sched::{RtHandle, SpawnOpts};
use crate::runtime::stack::max_map_count;
use crate::runtime::types::{
    CallError, ExitReason, JoinError, Message, NameError, Pid, ProcStatus, Signal,
};
use crate::runtime::waiter::{RemoteChain, Waiter};
use crate::value::{Sym, Value};

/// Where log lines (failed casts, runtime warnings) go.
pub use crate::runtime::config::LogSink;

/// One live process, as listed by [`RtHandle::processes`].
#[derive(Clone, Debug)]
pub struct ProcessInfo {
    pub pid: Pid,
    pub proc: ProcRef,
    pub name: Option<Sym>,
    pub label: &'static str,
    pub status: ProcStatus,
    pub mailbox_len: usize,
    pub started_at_ms: u64,
}

/// Owns a runtime's worker and timer threads. Derefs to [`RtHandle`]. Dropping it shuts the
/// runtime down.
pub struct Runtime {
    handle: RtHandle,
}

impl Runtime {
    /// A runtime; its worker threads (and the timer thread on the real clock) start when
    /// first needed. Errors are kept for callers (a thread that cannot start is logged and
    /// tried again at the next wake-up).
    pub fn new(mut cfg: Config) -> std::io::Result<Runtime> {
        if cfg.sim.is_some() {
            cfg.workers = 1;
            cfg.manual_clock = true;
            // 0: each process run draws its budget from the PRNG (`Cx::new`).
            cfg.reductions = 0;
        }
        let maps = max_map_count().unwrap_or(65_530);
        let workers = cfg.workers.clamp(1, 64);
        cfg.workers = workers;
        let by_maps = (maps.saturating_sub(8192) / 2)
            .saturating_sub(workers * cfg.pooled_stacks_per_worker)
            .max(16);
        let max_cos = if cfg.max_coroutines == 0 {
            by_maps
        } else {
            cfg.max_coroutines.min(by_maps)
        };
        let shared = Arc::new(Shared::new(cfg, max_cos));
        // The worker and timer threads start on first need (`runtime::threads`).
        shared.threads.set_owner(&shared);
        Ok(Runtime {
            handle: RtHandle(shared),
        })
    }

    pub fn handle(&self) -> RtHandle {
        self.handle.clone()
    }

    /// [`Runtime::shutdown_within`] two seconds (what dropping the runtime does).
    pub fn shutdown(self) {
        self.shutdown_within(Duration::from_secs(2));
    }

    /// Kills every process (reason `shutdown`), waits up to `grace` for their coroutines to
    /// finish, then stops the threads. Coroutines that ignore their kill are abandoned
    /// (their stacks leak) rather than unwound by force.
    pub fn shutdown_within(mut self, grace: Duration) {
        self.stop_threads(grace);
    }

    fn stop_threads(&mut self, grace: Duration) {
        let sh = &self.handle.0;
        if sh.shutdown.load(Ordering::SeqCst) {
            return;
        }
        sh.stopping.store(true, Ordering::SeqCst);
        let all: Vec<ProcRef> = sh.procs.lock().values().cloned().collect();
        for p in all {
            crate::runtime::process::finish(sh, &p, ExitReason::Shutdown);
        }
        // A worker parked at the deterministic scheduler's gate runs again once it sees
        // `stopping`: tell it now rather than at its next poll.
        if sh.sim.is_some() {
            sh.wake_all();
        }
        sh.timers.shutdown();
        {
            let deadline = std::time::Instant::now() + grace;
            let mut stuck = super::shutdown::Stuck::new(sh.workers.len());
            let mut g = sh.drained.0.lock();
            while sh.busy_cos() > 0 {
                // Coroutines still alive only because their worker is inside one long call
                // (they were told to exit and would at their next check point): stop waiting.
                if sh.busy_cos() <= stuck.count(&sh.workers) {
                    break;
                }
                let slice = std::time::Instant::now() + super::shutdown::POLL;
                if sh
                    .drained
                    .1
                    .wait_until(&mut g, slice.min(deadline))
                    .timed_out()
                    && std::time::Instant::now() >= deadline
                {
                    break;
                }
            }
        }
        sh.shutdown.store(true, Ordering::SeqCst);
        sh.release_io();
        sh.wake_all();
        // Join the workers that are free; a worker stuck inside a resume is left to finish
        // on its own (it holds what it uses): process exit must not wait for it.
        let (workers, timer) = sh.threads.take();
        for (i, t) in workers.into_iter().enumerate() {
            let busy = sh.workers[i].driving.load(Ordering::Relaxed) != 0;
            if !busy {
                t.join();
            }
        }
        if let Some(t) = timer {
            let _ = t.join();
        }
        sh.names.lock().clear();
    }
}

impl std::ops::Deref for Runtime {
    type Target = RtHandle;
    fn deref(&self) -> &RtHandle {
        &self.handle
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop_threads(Duration::from_secs(2));
    }
}

/// The result of a task process (see [`RtHandle::spawn_task`]).
pub struct TaskHandle<T> {
    proc: ProcRef,
    slot: Arc<Mutex<Option<T>>>,
    done: Arc<Waiter>,
    rt: RtHandle,
    _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static> TaskHandle<T> {
    pub fn proc(&self) -> &ProcRef {
        &self.proc
    }

    /// The task's value if it exited normally; a task that was killed (or crashed) reports
    /// its exit reason even if its abandoned code produced a value afterwards.
    fn result(&self, r: Result<Value, CallError>) -> Result<T, JoinError> {
        match r {
            Err(CallError::Exiting(ExitReason::Normal)) => match self.slot.lock().take() {
                Some(v) => Ok(v),
                None => Err(JoinError::Exited(ExitReason::Normal)),
            },
            Err(CallError::Exiting(reason)) => Err(JoinError::Exited(reason)),
            _ => Err(JoinError::Exited(
                self.proc.exit_reason().unwrap_or(ExitReason::Normal),
            )),
        }
    }

    /// Blocks the calling OS thread until the task finishes. Refused on a worker thread of
    /// the same runtime (it would stall that worker): use [`TaskHandle::join_in`] there.
    pub fn join(self) -> Result<T, JoinError> {
        if self.rt.0.current_worker().is_some() {
            return Err(JoinError::OnWorkerThread);
        }
        if self.rt.0.sim.is_some() {
            // The deterministic scheduler runs while an outside thread waits (its gate).
            let w = self.done.clone();
            self.rt.0.sim_wait_for(Box::new(move || w.is_done()));
            let r = self.done.wait_thread();
            self.rt.0.sim_job_over();
            return self.result(r);
        }
        let r = self.done.wait_thread();
        self.result(r)
    }

    /// Suspends the calling process until the task finishes.
    pub fn join_in(self, cx: &mut Cx<'_>) -> Result<T, JoinError> {
        let r = cx.wait(&self.done, None);
        if let Some(reason) = cx.exiting() {
            return Err(JoinError::Exiting(reason));
        }
        self.result(r)
    }
}

impl RtHandle {
    /// Starts the pool's first worker thread now, unless one runs already, instead of when
    /// work is first queued for the pool (`runtime::threads`): for a caller that knows work
    /// is coming (`bt run`, whose whole program is a job on the pool), so that the thread
    /// starts while the caller still prepares that work. A simulated runtime starts its
    /// worker as before.
    pub fn start_first_worker(&self) {
        if self.0.sim.is_none() {
            self.0.threads.start_first_early();
        }
    }

    /// Writes a line to the runtime's log sink, rate-limited per call site
    /// (`base::log::Limiter`).
    #[track_caller]
    pub fn log(&self, line: &str) {
        self.0.log(line)
    }

    /// Takes the object this pool worker thread keeps ([`RtHandle::worker_local_put`]) if
    /// it is a `T` for which `fits` holds; `None` on other threads.
    #[inline]
    pub fn worker_local_take<T: 'static>(&self, fits: impl FnOnce(&T) -> bool) -> Option<Box<T>> {
        self.0.worker_local_take(fits)
    }

    /// Keeps `v` on this pool worker thread until the next [`RtHandle::worker_local_take`];
    /// gives it back when the thread is no pool worker of this runtime or keeps one already.
    #[inline]
    pub fn worker_local_put<T: 'static>(&self, v: Box<T>) -> Option<Box<T>> {
        self.0.worker_local_put(v)
    }

    /// Spawns an actor (idle until its first message).
    pub fn spawn(&self, b: impl Behaviour) -> ProcRef {
        match self.spawn_opts(Box::new(b), SpawnOpts::default()) {
            Ok(p) => p,
            Err(_) => unreachable!("spawn without a name cannot fail"),
        }
    }

    /// Spawns an actor with options (a name makes spawn-and-register atomic).
    pub fn spawn_opts(&self, b: Box<dyn Behaviour>, opts: SpawnOpts) -> Result<ProcRef, NameError> {
        self.0.spawn_proc(Body::Actor(b), opts, None)
    }

    /// Spawns an actor whose behaviour is made from its own process handle (so it can keep a
    /// handle to itself without a second lookup). `make` runs before the process is visible.
    pub fn spawn_with(
        &self,
        opts: SpawnOpts,
        make: impl FnOnce(&ProcRef) -> Box<dyn Behaviour>,
    ) -> Result<ProcRef, NameError> {
        self.0
            .spawn_proc_with(false, |p| Body::Actor(make(p)), opts, None)
    }

    /// Runs `f` once in a new process (the main program, a REPL line, a callback); the
    /// process exits when `f` returns. Task processes take no messages.
    pub fn spawn_task<T, F>(&self, f: F) -> TaskHandle<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Cx<'_>) -> T + Send + 'static,
    {
        self.spawn_task_opts(
            SpawnOpts {
                label: "task",
                ..SpawnOpts::default()
            },
            f,
        )
    }

    pub fn spawn_task_opts<T, F>(&self, opts: SpawnOpts, f: F) -> TaskHandle<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Cx<'_>) -> T + Send + 'static,
    {
        let slot = Arc::new(Mutex::new(None));
        let done = Waiter::new(None, None);
        let s2 = slot.clone();
        let d2 = done.clone();
        let body = Body::Task(Box::new(move |cx: &mut Cx<'_>| {
            let v = f(cx);
            *s2.lock() = Some(v);
        }));
        let opts = SpawnOpts { name: None, ..opts };
        let hook: ExitHook = Box::new(move |sh: &Shared, r: &ExitReason| {
            d2.complete(sh, Err(CallError::Exiting(r.clone())));
        });
        let proc = match self.0.spawn_proc(body, opts, Some(hook)) {
            Ok(p) => p,
            Err(_) => unreachable!("spawn without a name cannot fail"),
        };
        TaskHandle {
            proc,
            slot,
            done,
            rt: self.clone(),
            _t: PhantomData,
        }
    }

    /// Runs `f` as a process and blocks the calling OS thread for its result (the main
    /// program and each REPL line). Refused on a worker thread.
    pub fn block_on<T, F>(&self, f: F) -> Result<T, JoinError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Cx<'_>) -> T + Send + 'static,
    {
        if self.0.current_worker().is_some() {
            return Err(JoinError::OnWorkerThread);
        }
        if self.0.stopping.load(Ordering::SeqCst) {
            return Err(JoinError::ShuttingDown);
        }
        self.spawn_task_opts(
            SpawnOpts {
                label: "main",
                ..SpawnOpts::default()
            },
            f,
        )
        .join()
    }

    /// The live process with this pid.
    pub fn lookup(&self, pid: Pid) -> Option<ProcRef> {
        self.0.procs.lock().get(&(pid.service, pid.number)).cloned()
    }

    /// An asynchronous send from anywhere; false if the target takes no messages.
    pub fn cast(&self, to: &ProcRef, msg: Message) -> bool {
        enqueue(&self.0, to, Envelope::User { msg, reply: None }).is_ok()
    }

    /// [`RtHandle::cast`] of a message that callers on another node wait on (the message
    /// answers them itself): while `to` handles it, its waiting chain ends in `chain`, so a
    /// sync call back to one of them fails with `Deadlock` (deadlock detection across nodes).
    pub fn cast_waited(&self, to: &ProcRef, msg: Message, chain: Arc<RemoteChain>) -> bool {
        let reply = Some(Waiter::new_remote(chain));
        enqueue(&self.0, to, Envelope::User { msg, reply }).is_ok()
    }

    /// Asks `to` to stop after the messages already queued; later sends fail. `waiter`, if
    /// given, completes once it has exited. False if it had already exited.
    pub fn request_stop(
        &self,
        to: &ProcRef,
        waiter: Option<Arc<Waiter>>,
        reason: ExitReason,
    ) -> bool {
        let schedule = {
            let mut g = to.0.inner.lock();
            if g.reason.is_some() {
                return false;
            }
            if let Some(w) = waiter {
                g.extra().stop_waiters.push(w);
            }
            if g.accepting {
                g.accepting = false;
                g.mailbox.push_back(Envelope::Stop(reason));
            }
            if g.sched == Sched::Idle && g.body.is_some() {
                g.sched = Sched::Scheduled;
                true
            } else {
                crate::runtime::process::note_queued(to, &g);
                false
            }
        };
        if schedule {
            self.0.schedule(to.clone());
        }
        true
    }

    /// Graceful stop without waiting (see [`Cx::stop`] to wait for the exit).
    pub fn stop(&self, to: &ProcRef) -> bool {
        self.request_stop(to, None, ExitReason::Normal)
    }

    /// Immediate exit with reason `killed`, overtaking queued messages (their sync senders
    /// get `actor_dead`); `terminate` does not run. False if it had already exited.
    pub fn kill(&self, to: &ProcRef) -> bool {
        crate::runtime::process::finish(&self.0, to, ExitReason::Killed)
    }

    /// An exit signal (`aPid exit: reason`): `Killed` cannot be trapped; a trapping process
    /// receives others as [`Signal::Exit`]; otherwise a non-normal reason ends the process.
    pub fn exit(&self, to: &ProcRef, from: Pid, reason: ExitReason) -> bool {
        if !to.is_alive() {
            return false;
        }
        if matches!(reason, ExitReason::Killed) {
            return self.kill(to);
        }
        deliver_exit(&self.0, to, from, reason);
        true
    }

    /// Links two processes (exit signals flow both ways). If either has exited, the other
    /// gets its exit signal at once (reason `noproc`).
    pub fn link(&self, a: &ProcRef, b: &ProcRef) {
        if a == b {
            return;
        }
        let a_ok = {
            let mut g = a.0.inner.lock();
            let ok = g.reason.is_none() && b.is_alive();
            if ok && !g.extra().links.contains(b) {
                g.extra().links.push(b.clone());
            }
            ok
        };
        let b_ok = {
            let mut g = b.0.inner.lock();
            let ok = g.reason.is_none() && a_ok;
            if ok && !g.extra().links.contains(a) {
                g.extra().links.push(a.clone());
            }
            ok
        };
        if !a_ok || !b_ok {
            self.unlink(a, b);
            let (live, dead) = if a.is_alive() { (a, b) } else { (b, a) };
            if live.is_alive() {
                deliver_exit(&self.0, live, dead.pid(), ExitReason::NoProc);
            }
        }
    }

    pub fn unlink(&self, a: &ProcRef, b: &ProcRef) {
        if let Some(e) = a.0.inner.lock().extra.as_mut() {
            e.links.retain(|x| x != b);
        }
        if let Some(e) = b.0.inner.lock().extra.as_mut() {
            e.links.retain(|x| x != a);
        }
    }

    pub fn set_trap_exits(&self, p: &ProcRef, on: bool) {
        p.0.inner.lock().extra().trap_exits = on;
    }

    /// A fresh reference number (`#Ref<N>`), from a per-runtime counter.
    pub fn make_ref(&self) -> u64 {
        self.0.next_ref.fetch_add(1, Ordering::Relaxed)
    }

    fn add_monitor(&self, target: &ProcRef, m: Monitor) {
        let m = {
            let mut g = target.0.inner.lock();
            if g.reason.is_none() {
                g.extra().monitors.push(m);
                return;
            }
            m
        };
        fire_monitor(&self.0, target.pid(), m, ExitReason::NoProc);
    }

    /// Runs `f` once, in a fresh process, with the exit reason when `target` exits (at once,
    /// with `noproc`, if it already has). Several callbacks may share one `reference`.
    pub fn when_down<F>(&self, target: &ProcRef, reference: u64, f: F)
    where
        F: FnOnce(&mut Cx<'_>, ExitReason) + Send + 'static,
    {
        let action = MonitorAction::Callback(Box::new(f));
        self.add_monitor(target, Monitor { reference, action });
    }

    /// `onExit:` — like [`RtHandle::when_down`] with a reference of its own.
    pub fn on_exit<F>(&self, target: &ProcRef, f: F)
    where
        F: FnOnce(&mut Cx<'_>, ExitReason) + Send + 'static,
    {
        let r = self.make_ref();
        self.when_down(target, r, f);
    }

    /// A monitor delivering [`Signal::Down`] to `watcher`'s control queue (supervisors).
    pub fn monitor_signal(&self, target: &ProcRef, watcher: &ProcRef) -> u64 {
        let reference = self.make_ref();
        let action = MonitorAction::Signal(watcher.clone());
        self.add_monitor(target, Monitor { reference, action });
        reference
    }

    /// Cancels every callback registered under `reference` on `target`; true if any was
    /// pending.
    pub fn demonitor(&self, target: &ProcRef, reference: u64) -> bool {
        let mut g = target.0.inner.lock();
        match g.extra.as_mut() {
            Some(e) => {
                let before = e.monitors.len();
                e.monitors.retain(|m| m.reference != reference);
                e.monitors.len() != before
            }
            None => false,
        }
    }

    /// Sends a control signal (handled before queued user messages).
    pub fn signal(&self, to: &ProcRef, sig: Signal) -> bool {
        push_signal(&self.0, to, sig)
    }

    /// Registers `p` under `name` (replacing its previous name, if any). `bt_` names are
    /// reserved for runtime services.
    pub fn register(&self, name: Sym, p: &ProcRef) -> Result<(), NameError> {
        if name.as_str().starts_with("bt_") && !p.pid().service {
            return Err(NameError::Reserved);
        }
        let mut names = self.0.names.lock();
        if let Some(q) = names.get(&name) {
            return if q == p {
                Ok(())
            } else {
                Err(NameError::Registered)
            };
        }
        let old = {
            let mut g = p.0.inner.lock();
            if g.reason.is_some() {
                return Err(NameError::NoProc);
            }
            g.extra().name.replace(name)
        };
        if let Some(o) = old {
            names.remove(&o);
        }
        names.insert(name, p.clone());
        Ok(())
    }

    /// Removes `p`'s name, if any (idempotent).
    pub fn unregister(&self, p: &ProcRef) {
        let mut names = self.0.names.lock();
        let name = p.0.inner.lock().extra.as_mut().and_then(|x| x.name.take());
        if let Some(n) = name {
            names.remove(&n);
        }
    }

    /// The live process registered under `name`.
    pub fn whereis(&self, name: Sym) -> Option<ProcRef> {
        self.0.names.lock().get(&name).cloned()
    }

    /// Every registered (name, process), in pid order; services only if asked.
    pub fn registered(&self, include_services: bool) -> Vec<(Sym, ProcRef)> {
        let mut v: Vec<_> = self
            .0
            .names
            .lock()
            .iter()
            .filter(|(_, p)| include_services || !p.pid().service)
            .map(|(n, p)| (*n, p.clone()))
            .collect();
        v.sort_by_key(|(_, p)| p.pid());
        v
    }

    /// Live processes in spawn order (user processes, then services if asked).
    pub fn processes(&self, include_services: bool) -> Vec<ProcessInfo> {
        let all: Vec<ProcRef> = self
            .0
            .procs
            .lock()
            .iter()
            .filter(|((service, _), _)| include_services || !*service)
            .map(|(_, p)| p.clone())
            .collect();
        all.into_iter()
            .map(|p| {
                let (name, mailbox_len) = {
                    let g = p.0.inner.lock();
                    (g.name(), g.mailbox.len())
                };
                ProcessInfo {
                    pid: p.pid(),
                    name,
                    label: p.label(),
                    status: p.status(),
                    mailbox_len,
                    started_at_ms: p.started_at_ms(),
                    proc: p,
                }
            })
            .collect()
    }

    /// Charges every thread this runtime starts from now on to the memory account `a` (an
    /// embedding engine with `max_memory`; call before the first process runs).
    pub fn charge_threads_to(&self, a: &'static crate::memory::Account) {
        self.0.threads.charge_to(a);
    }

    /// Live user processes (not services) in spawn order, without their details.
    pub fn user_processes(&self) -> Vec<ProcRef> {
        self.0
            .procs
            .lock()
            .iter()
            .filter(|((service, _), _)| !*service)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Kills every live user process not labelled `keep` (oldest first) and fences the
    /// runtime: until [`RtHandle::lift_spawn_fence`], every user process spawned with another
    /// label is killed as it is made. The fence is set under the process table's lock that a
    /// spawn inserts under, so no process escapes the sweep by being spawned during it.
    /// The timers the scripts made ([`RtHandle::script_after`], [`RtHandle::script_every`])
    /// are cancelled too, so none starts a process again once the fence is lifted. Answers
    /// how many processes it killed.
    pub fn stop_user_processes(&self, keep: &'static str) -> usize {
        self.0.timers.cancel_scripts();
        let victims: Vec<ProcRef> = {
            let mut t = self.0.procs.lock();
            t.fence = Some(keep);
            t.users()
                .filter(|(_, p)| p.label() != keep)
                .map(|(_, p)| p.clone())
                .collect()
        };
        victims.iter().filter(|p| self.kill(p)).count()
    }

    /// Ends the fence of [`RtHandle::stop_user_processes`]: spawns work again.
    pub fn lift_spawn_fence(&self) {
        self.0.procs.lock().fence = None;
    }

    /// Number of live processes (services included).
    pub fn process_count(&self) -> usize {
        self.0.procs.lock().len()
    }

    /// Runs `f` in a fresh process after `ms` milliseconds of runtime clock.
    pub fn after<F>(&self, ms: u64, f: F) -> TimerRef
    where
        F: FnOnce(&mut Cx<'_>) + Send + 'static,
    {
        self.0.threads.ensure_timer();
        self.0.timers.after(self.now_ms() + ms, Box::new(f), false)
    }

    /// [`RtHandle::after`] for a timer a script made (`Timer after:do:`): cancelled by
    /// [`RtHandle::stop_user_processes`] with the scripts' processes.
    pub fn script_after<F>(&self, ms: u64, f: F) -> TimerRef
    where
        F: FnOnce(&mut Cx<'_>) + Send + 'static,
    {
        self.0.threads.ensure_timer();
        self.0.timers.after(self.now_ms() + ms, Box::new(f), true)
    }

    /// Runs `f` in a fresh process every `ms` milliseconds until cancelled.
    pub fn every<F>(&self, ms: u64, f: F) -> TimerRef
    where
        F: Fn(&mut Cx<'_>) + Send + Sync + 'static,
    {
        self.0.threads.ensure_timer();
        self.0
            .timers
            .every(self.now_ms() + ms.max(1), ms, Arc::new(f), false)
    }

    /// [`RtHandle::every`] for a timer a script made (`Timer every:do:`): cancelled by
    /// [`RtHandle::stop_user_processes`] with the scripts' processes.
    pub fn script_every<F>(&self, ms: u64, f: F) -> TimerRef
    where
        F: Fn(&mut Cx<'_>) + Send + Sync + 'static,
    {
        self.0.threads.ensure_timer();
        self.0
            .timers
            .every(self.now_ms() + ms.max(1), ms, Arc::new(f), true)
    }

    /// Timers not yet fired (one-shot) or not yet cancelled-and-due (periodic).
    pub fn pending_timers(&self) -> usize {
        self.0.timers.pending()
    }

    /// Runtime clock, ms since start.
    pub fn now_ms(&self) -> u64 {
        self.0.clock.now_ms()
    }

    /// Unix time in ms on the runtime clock (a manual clock starts at the epoch, 0).
    pub fn wall_ms(&self) -> u64 {
        self.0.clock.wall_ms()
    }

    /// Advances the manual clock by `ms`, firing due timers and expiring due waits. Answers
    /// false (and does nothing) on the real clock.
    pub fn advance(&self, ms: u64) -> bool {
        let Some(now) = self.0.clock.advance(ms) else {
            return false;
        };
        self.0.fire_timers(now);
        self.0.wake_all();
        true
    }

    /// Waits (this OS thread) until `done` is set by a job this thread gave the runtime.
    /// Under the deterministic scheduler this also opens its gate: it runs steps only while
    /// an outside thread waits for a job (`sched/sim.rs`).
    pub fn wait_job(&self, done: &crate::runtime::sched::GuestDone) {
        if self.0.sim.is_some() {
            self.0.sim_job(done);
            done.wait();
            self.0.sim_job_over();
            return;
        }
        done.wait();
    }

    /// Whether this runtime runs under the deterministic scheduler (virtual clock).
    pub fn is_simulated(&self) -> bool {
        self.0.sim.is_some()
    }

    /// Under the deterministic scheduler: restarts its PRNG from the seed mixed with
    /// `salt` (a test's number), so a test's schedule does not depend on which tests ran
    /// before it.
    pub fn sim_reseed(&self, salt: u64) {
        self.0.sim_reseed(salt)
    }

    /// A number from the deterministic scheduler's PRNG (seeds of `Random new` under it);
    /// None when not simulated.
    pub fn sim_random(&self) -> Option<u64> {
        self.0.sim.as_ref().map(|s| s.core.lock().draw())
    }

    /// Scheduling steps since the last [`RtHandle::sim_reseed`] (0 when not simulated).
    pub fn sim_steps(&self) -> u64 {
        self.0.sim_steps()
    }

    /// The deadlock or livelock the deterministic scheduler found since it was last asked
    /// (it then ended the main program's process): what each process waits on.
    pub fn sim_take_verdict(&self) -> Option<String> {
        self.0.sim_take_verdict()
    }

    /// Coroutines alive now (running or suspended), and the cap.
    pub fn coroutines(&self) -> (usize, usize) {
        (self.0.busy_cos(), self.0.max_cos)
    }

    /// Delivers `msg` to `p` and runs `p` on the calling thread until `done` is set (a guest
    /// worker, `sched::guest`): an embedding host's call without two thread hand-offs.
    /// `Err(msg)` when the calling thread cannot be the guest (a worker of this runtime, or
    /// the runtime is stopping): nothing was delivered. `Ok(false)`: `p` no longer accepts
    /// messages (the message is dropped).
    pub fn send_and_drive(
        &self,
        stacks: &mut crate::runtime::sched::GuestStacks,
        p: &ProcRef,
        msg: Message,
        done: &crate::runtime::sched::GuestDone,
    ) -> Result<bool, Message> {
        crate::runtime::sched::drive_guest(&self.0, stacks, p, msg, done)
    }

    /// [`RtHandle::send_and_drive`] for a job the calling thread lends `p`: when the guest's
    /// runner is parked and `p` is idle with nothing queued, `p`'s behaviour runs `job`
    /// directly (`Behaviour::run_job`); else `fallback` makes the message carrying the job
    /// and it is delivered as by `send_and_drive`. `Err(())`, having called nothing, when
    /// the calling thread cannot be the guest.
    #[allow(clippy::result_unit_err)] // `Err(())`: "not the guest", nothing more to say (doc above)
    #[inline(always)] // the kept-process entry (`guest::call_kept`) in its caller's frame
    pub fn drive_job(
        &self,
        stacks: &mut crate::runtime::sched::GuestStacks,
        p: &ProcRef,
        job: crate::runtime::process::LentJob,
        fallback: &mut dyn FnMut() -> Option<Message>,
        done: &crate::runtime::sched::GuestDone,
    ) -> Result<bool, ()> {
        crate::runtime::sched::drive_guest_job(&self.0, stacks, p, job, fallback, done)
    }

    /// Installs the input idle workers wait on ([`IoWait`], a named node's connections),
    /// or removes it; starts the workers.
    pub fn set_io(&self, io: Option<Arc<dyn crate::runtime::sched::IoWait>>) {
        self.0.set_io(io)
    }

    /// Worker threads.
    pub fn workers(&self) -> usize {
        self.0.workers.len() - 1 // the last queue is the guest's
    }

    /// Worker threads started so far (they start on first need, `runtime::threads`).
    pub fn started_workers(&self) -> usize {
        self.0.threads.workers.lock().len()
    }
}
