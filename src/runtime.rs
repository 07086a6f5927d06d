//! The actor runtime: green processes on a small pool of worker threads.
//!
//! # Shape (DESIGN.md §5)
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
//!   mappings; the kernel allows ~65k): beyond the cap, work waits for a free stack.
//! * A handler panic is caught and becomes an actor crash (reason `{#panic, msg}`).
//!
//! # API for the interpreter
//!
//! ```text
//! let rt = Runtime::new(Config::default())?;           // per Vm; drop = shutdown
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
//! The interpreter's evaluation context holds the `&mut Cx` it is given (never a
//! thread-local); its activations check `cx.stack_remaining()` along with the depth limit so
//! `stack_overflow` is raised before the guard page is reached. Self-sends are the
//! interpreter's job (run directly); a call to self through the runtime reports `Deadlock`.
//!
//! # Modules
//!
//! | module | what |
//! |---|---|
//! | `types` | [`Pid`], [`Message`], [`ExitReason`], [`CallError`], [`Timeout`], [`Signal`] … |
//! | `api` | [`Runtime`], [`RtHandle`], [`Config`], [`SpawnOpts`], [`TaskHandle`], names, monitors, links, timers, snapshots |
//! | `cx` | [`Cx`], the process context: call, cast, stop, sleep, tick, stack check |
//! | `process` | [`Behaviour`], [`ProcRef`], mailbox, the coroutine body, exit handling |
//! | `sched` | workers, run queues, coroutine slots, deadlines, stack cap |
//! | `waiter` | one-shot reply slots; the waiting chain for deadlock detection |
//! | `clock` | real or manual clock; `after`/`every` timers |
//! | `stack` | mmap'd coroutine stacks (the only `unsafe` code) |

mod api;
mod clock;
mod cx;
mod process;
mod sched;
mod stack;
mod types;
mod waiter;

pub use api::{
    Config, LogSink, ProcessInfo, RtHandle, Runtime, SpawnOpts, TaskHandle, DEFAULT_STACK_SIZE,
};
pub use clock::TimerRef;
pub use cx::Cx;
pub use process::{handler, Behaviour, FnBehaviour, ProcRef};
pub use types::{
    CallError, ExitReason, Exiting, JoinError, Message, NameError, Pid, ProcStatus, Signal, Timeout,
};
