//! The actor runtime: green processes on a small pool of worker threads.
//!
//! # Shape
//!
//! * A **process** is an actor (a [`Behaviour`] handling one message at a time) or a task (a
//!   closure run once: the main program, a REPL line, a timer or monitor callback). An idle
//!   process is a small record — its state, a locked `VecDeque` mailbox, a control-signal
//!   queue and a scheduling flag — and holds **no native stack**.
//! * When a process has work, a worker runs it on a **stackful coroutine** (corosensei) on a
//!   stack from a per-worker pool. Stacks are large `MAP_NORESERVE` reservations with a
//!   guard page ([`Config::stack_size`], default 64 MiB release / 512 MiB debug): pages are
//!   committed only when touched, so 10,000-deep interpreter recursion fits and costs memory
//!   only while used. The coroutine handles signals, then messages, until the mailbox is
//!   empty, then returns its stack.
//! * A **sync call** ([`Cx::call`]) queues the message with a reply slot and suspends the
//!   coroutine; the worker runs other processes; the reply, the timeout or the target's death
//!   resumes it. A suspended handler never blocks its thread.
//! * **Preemption**: the interpreter calls [`Cx::tick`] per reduction; every
//!   [`Config::reductions`] the coroutine yields to the back of its worker's queue.
//! * Suspended coroutines are **pinned** to their worker (no `unsafe impl Send`); idle
//!   workers steal not-yet-started work. Coroutines are capped (each stack is two kernel
//!   mappings; the kernel allows ~65k): beyond the cap, work waits for a free stack (see
//!   Limits).
//! * A handler panic is caught and becomes an actor crash (reason `{#panic, msg}`).
//! * The worker and timer threads start on first need (`threads`), and a thread outside
//!   the pool may run one process itself as the **guest** ([`RtHandle::send_and_drive`],
//!   `sched/guest.rs`): an embedding engine's evaluations run on the host's thread, so an
//!   engine that starts no actor or timer never starts a thread.
//!
//! # Example
//!
//! ```
//! use bt_runtime::runtime::{handler, Config, Cx, Message, Runtime, Timeout};
//! use bt_values::value::Value;
//!
//! let rt = Runtime::new(Config { workers: 1, ..Config::default() }).unwrap();
//! let mut count = 0;
//! let counter = rt.spawn(handler(move |_cx: &mut Cx<'_>, m: Message| {
//!     count += m.args[0].as_int().unwrap_or(0);
//!     Ok(Value::Int(count))
//! }));
//! let total = rt
//!     .block_on(move |cx| {
//!         for _ in 0..9 {
//!             cx.cast(&counter, Message::named("add:", vec![Value::Int(1)]));
//!         }
//!         // A call after casts is a barrier: it answers after them.
//!         cx.call(&counter, Message::named("add:", vec![Value::Int(1)]), Timeout::DEFAULT)
//!     })
//!     .unwrap();
//! assert_eq!(total.unwrap().as_int(), Some(10));
//! ```
//!
//! # API for the interpreter
//!
//! ```text
//! let rt = Runtime::new(Config::default())?;           // per Interpreter; drop = shutdown
//! rt.block_on(|cx| run_main(cx))                       // main program / REPL line (pid 1, 2, …)
//! let p = rt.spawn(MyActor { .. });                    // Behaviour::handle(&mut self, cx, msg)
//! cx.call(&p, Message::new(sel, args), Timeout::DEFAULT) -> Result<Value, CallError>
//!        // CallError::{Timeout, ActorDead, Deadlock, Raised(exception), Exiting(reason)}
//! cx.cast(&p, msg)                                     // FIFO per sender; calls act as barriers
//! cx.tick()?  cx.stack_remaining()  cx.sleep(ms)?  cx.pid()  cx.would_deadlock(pid)
//! cx.stop(&p, t)  rt.kill(&p)  rt.exit(&p, from, reason)  cx.stop_self()  p.is_alive()
//! rt.when_down(&p, rt.make_ref(), |cx, reason| ..)  rt.on_exit(..)  rt.demonitor(..)
//! rt.link(&a, &b)  rt.set_trap_exits(&p, true)  rt.monitor_signal(&p, &watcher)
//! rt.register(name, &p)  rt.unregister(&p)  rt.whereis(name)  rt.registered(false)
//! rt.after(ms, |cx| ..)  rt.every(ms, |cx| ..)  timer.cancel()  timer.is_active()
//! rt.processes(false) -> [ProcessInfo { pid, name, label, status, mailbox_len, started_at_ms }]
//! ```
//!
//! # Wiring the language surface (plan for the interpreter integration)
//!
//! * **Evaluation context.** The interpreter's `Ctx` holds the `&mut Cx` it is given (never a
//!   thread-local). `Ctx::tick` calls [`Cx::tick`] and maps [`Exiting`] to `Unwind::Exit`.
//!   Each activation checks its depth limit *and* `cx.stack_remaining() < ~128 KiB` and raises
//!   `stack_overflow` (an ordinary exception), so the guard page is never reached.
//! * **Main program / REPL line**: `rt.block_on(|cx| …)`, pid 1, 2, … (label `main`).
//! * **`Actor subclass:` instance** = a [`Behaviour`] holding the class and the field values.
//!   `handle` snapshots the fields, dispatches `msg.selector` with `msg.args` through the
//!   evaluator, and on an exception restores the snapshot and answers `Err(exception)` (the
//!   caller re-raises it: [`CallError::Raised`]). `terminate` runs `terminate:`.
//! * **`spawn` / `spawnWith:`**: `rt.spawn_opts(behaviour, SpawnOpts { info: class, .. })`,
//!   then a sync `initialize` call; if it raises, `rt.kill` and raise `instantiation_error`.
//!   `spawnAs:` passes `SpawnOpts::name` (atomic). Handle printString uses `ProcRef::pid`.
//! * **Sends**: if `p.pid() == cx.pid()` run the method directly (self-send); else
//!   `cx.call(&p, Message::new(sel, args), timeout)` mapping [`CallError::kind`] to the
//!   exception kind (`timeout`, `actor_dead`, `deadlock_detected`); `Exiting` unwinds.
//!   Postfix `!` is `cx.cast`; failures reach [`Behaviour::cast_failed`] (logged).
//!   `withTimeout:` proxies are actors forwarding with another [`Timeout`].
//! * **Lifecycle**: `stop` = [`Cx::stop`] (self: `stop_self`), `kill` = [`RtHandle::kill`],
//!   `isAlive` = [`ProcRef::is_alive`], `monitor` = [`RtHandle::make_ref`] +
//!   [`RtHandle::when_down`] per `whenDown:` block, `demonitor`, `onExit:` =
//!   [`RtHandle::on_exit`], `aPid exit:` = [`RtHandle::exit`]; reasons via
//!   [`ExitReason::to_value`].
//! * **Names**: [`RtHandle::register`] / `unregister` / `whereis` / `registered`, kinds via
//!   [`NameError::kind`]; `wrong_class` is checked by the interpreter against
//!   [`ProcRef::info`].
//! * **Class-side state**: one [`ProcLock`] per class; its waiters suspend.
//! * **Timer**: [`RtHandle::after`], [`RtHandle::every`], [`Cx::sleep`], [`TimerRef`].
//!   `Parallel`: `spawn_task` + [`TaskHandle::join_in`]. Snapshots: [`RtHandle::processes`].
//! * **Supervisors** (later): `SpawnOpts::link`/`trap_exits`, [`Signal::Exit`] and
//!   [`RtHandle::monitor_signal`] delivered to [`Behaviour::signal`] before user messages.
//!
//! # Limits
//!
//! * Preemption is cooperative: native code that never calls [`Cx::tick`] is not preempted.
//! * At the coroutine cap, work waits for a stack. The last eighth of the cap is kept for
//!   processes someone is blocked on (a queued sync call, a stop, a signal), and those are
//!   served first, so callers cannot starve their server of a stack. A chain of servers
//!   deeper than that reserve, all started at the cap, progresses only as calls time out
//!   (never with `Timeout::Infinity`). The default cap (~28,000, from the kernel's 65,530
//!   mappings) is far above the 10,000 suspended handlers required.
//! * A suspended coroutine resumes on the worker that created it; only not-yet-started work
//!   is stolen by idle workers.

//! # Modules
//!
//! | module | what |
//! |---|---|
//! | `types` | [`Pid`], [`Message`], [`ExitReason`], [`CallError`], [`Timeout`], [`Signal`] … |
//! | `api` | [`Runtime`], [`RtHandle`]'s methods, [`TaskHandle`], names, monitors, links, timers, snapshots |
//! | `config` | [`Config`], [`SimConfig`]: plain settings (names no other runtime module) |
//! | `cx` | [`Cx`]'s operations, the process context: call, cast, stop, sleep, tick, stack check |
//! | `process` | [`Behaviour`], [`ProcRef`], the [`Cx`] record, mailbox, exit handling; `process/run` the coroutine body, `process/lent` a process lent to a guest |
//! | `sched` | `Shared` (the runtime's state), [`RtHandle`] and [`SpawnOpts`] (defined here, used everywhere), run queues, stack cap, starting the threads, firing timers; `sched/worker` and `sched/guest` the workers' loops, coroutine slots and deadlines; `sched/sim` the deterministic scheduler (its state: `sched/sim/state`) |
//! | `lock` | [`ProcLock`]: re-entrant per process, waiters suspend (class-side state) |
//! | `spin` | the process record's lock: a spin lock released with a plain store |
//! | `waiter` | one-shot reply slots; the waiting chain for deadlock detection |
//! | `clock` | real or manual clock; `after`/`every` timers (generic over their actions) |
//! | `stack` | mmap'd coroutine stacks (with `clock`, the only `unsafe` code) |
//! | `supervisor` | native supervisors: strategies, restart intensity, roster + bookkeeping |
//! | `snapshot` | process snapshots (`default`/`system`/`from:`), JSON `bt.processes/1`, diffs |

mod api;
mod clock;
mod config;
mod cx;
mod lock;
mod mailbox;
mod process;
mod proctable;
mod sched;
mod shutdown;
pub mod snapshot;
mod spin;
mod stack;
pub mod supervisor;
mod threads;
mod types;
pub mod waiter;

pub use api::{
    Config, LogSink, ProcessInfo, RtHandle, Runtime, SpawnOpts, TaskHandle, DEFAULT_STACK_SIZE,
};
pub use clock::TimerRef;
pub use cx::{Completion, Cx};
pub use lock::{ProcLock, ProcLockGuard};
pub use process::{handler, Behaviour, FnBehaviour, LentJob, ProcRef};
pub use sched::sim::{mix_seed, SimConfig, Strategy};
pub use sched::{GuestDone, GuestStacks, IoWait};
pub use types::{
    CallError, ExitReason, Exiting, JoinError, Message, NameError, Pid, ProcStatus, Request,
    Signal, SupervisorRequest, Timeout,
};
pub use waiter::{RemoteChain, WaitedBy};

/// Whether a coroutine stack of `size` usable bytes can be mapped here (mapped and unmapped
/// once): a runtime whose stacks cannot be mapped would queue every process forever.
pub fn probe_stack(size: usize) -> std::io::Result<()> {
    stack::probe(size)
}
