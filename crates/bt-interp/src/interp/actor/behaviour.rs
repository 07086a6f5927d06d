//! The runtime behaviours of bt processes: user actors ([`BtActor`]: state slots, message
//! dispatch, rollback, `initialize`/`terminate:`), the main program ([`MainActor`]: runs the
//! `Interpreter`'s jobs with one persistent context) and transcripts ([`TranscriptActor`]).

use crate::interp::class::ClassExt;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::interp::actor::handle::{downcast, ActorRef, JobBox};
use crate::interp::actor::send::{
    describe_exception, prefix_error, transfer_in, transfer_in_owned,
};
use crate::interp::actor::slots::nil_typed_slot;
use crate::interp::actor::{in_pooled_process, run_lending, ActorSys};
use crate::interp::class::Builtin;
use crate::interp::error::ErrorKind;
use crate::interp::error::{class_for_kind, make_exception};
use crate::interp::eval::{Ctx, Unwind};
use crate::runtime::{Behaviour, Cx, ExitReason, Message, Request};
use crate::value::{drop_fast, fast_clone, ClassRef, Sym, Value};

/// The message that runs `initialize` in a new actor (a lifecycle request, not a selector).
pub fn initialize_message() -> Message {
    Message::request(Request::Initialize, Vec::new())
}

/// The message that runs a main-program job (a [`JobBox`] native) in the main process.
pub fn job_message(job: Value) -> Message {
    Message::request(Request::Job, vec![job])
}

/// An instance of an `Actor subclass:`.
pub struct BtActor {
    pub sys: Arc<ActorSys>,
    pub class: ClassRef,
    pub fields: Vec<Value>,
    /// The rollback copy of `fields` (`snapshot`; a boxed slice: an idle actor stays small).
    saved: Box<[Value]>,
    me: Option<Value>,
    /// The actor's memory account when its engine sets `actor_max_memory` (made on the
    /// first message; `memlimit`).
    mem: Option<Box<crate::interp::actor::memlimit::ActorMem>>,
}

impl BtActor {
    /// `me` is the actor's own handle when the spawner already made one (shared, so an
    /// actor costs one handle), else it is made on the first message.
    pub fn new(
        sys: Arc<ActorSys>,
        class: ClassRef,
        fields: Vec<Value>,
        me: Option<Value>,
    ) -> BtActor {
        BtActor {
            sys,
            class,
            fields,
            saved: Box::default(),
            me,
            mem: None,
        }
    }

    /// Makes the actor's own handle if the spawner did not.
    fn ensure_me(&mut self, cx: &Cx<'_>) {
        if self.me.is_none() {
            self.me = Some(ActorRef::value(cx.me().clone(), self.class.clone()));
        }
    }

    /// Runs `f` as this actor (its state in the context, `self` its handle).
    fn run<R>(&mut self, cx: &mut Cx<'_>, f: impl FnOnce(&mut Ctx, &Value) -> R) -> R {
        self.ensure_me(cx);
        let state = (&mut self.fields, &mut self.saved);
        match self.me.as_ref() {
            Some(me) => run_as(&self.sys, me, state, cx, f),
            None => run_as(&self.sys, &Value::Nil, state, cx, f),
        }
    }
}

/// Runs `f` in a pooled context as the actor `me` with state `fields` and its rollback copy
/// `saved` (both moved into the context for the run and back; `me` is lent to it, not
/// cloned: `run_lending`).
#[inline(always)]
fn run_as<R>(
    sys: &Arc<ActorSys>,
    me: &Value,
    (fields, saved): (&mut Vec<Value>, &mut Box<[Value]>),
    cx: &mut Cx<'_>,
    f: impl FnOnce(&mut Ctx, &Value) -> R,
) -> R {
    let mut ctx = sys.take_ctx_in(cx);
    std::mem::swap(&mut ctx.actor_fields, fields);
    std::mem::swap(&mut ctx.actor_saved, saved);
    let r = run_lending(&mut ctx, me, |ctx| {
        in_pooled_process(ctx, cx, |ctx| f(ctx, me))
    });
    std::mem::swap(&mut ctx.actor_fields, fields);
    std::mem::swap(&mut ctx.actor_saved, saved);
    sys.put_ctx_in(cx, ctx);
    r
}

/// The rollback copy of the actor's state before a message (`saved`, put back when the
/// message fails): element by element, immediates copied inline, when the shape is the
/// same as last time (always, for an actor whose state slots are fixed).
#[inline(always)]
fn snapshot(saved: &mut Box<[Value]>, fields: &[Value]) {
    if saved.len() != fields.len() {
        *saved = fields.into();
        return;
    }
    for (s, f) in saved.iter_mut().zip(fields) {
        drop_fast(std::mem::replace(s, fast_clone(f)));
    }
}

/// Runs message `sel` with `args` on the actor `me` of class `class` (what `ctx.send(me,
/// sel, args)` does in the actor's own process, where the handle's send is not
/// intercepted): one reduction, the method looked up (or the one the last actor message in
/// this context ran, when class, selector and the program's epoch are the same:
/// `ProcSlot::last_method`, kept by the pooled context, not by each actor), and a compiled
/// method's arguments moved onto the stack, not copied.
#[inline(always)]
fn dispatch(
    ctx: &mut Ctx,
    class: &ClassRef,
    me: &Value,
    sel: Sym,
    args: &mut Vec<Value>,
) -> Result<Value, Unwind> {
    ctx.tick()?;
    let epoch = ctx.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
    let hit = match &ctx.proc.last_method {
        Some((c, s, e, h)) if *s == sel && *e == epoch && Arc::ptr_eq(c, class) => *h,
        _ => match ctx.lookup(me, sel) {
            Some(h) => {
                ctx.proc.last_method = Some((class.clone(), sel, epoch, h));
                h
            }
            None => return ctx.dnu(me, sel, args).map_err(|b| *b),
        },
    };
    if let Some(cm) = hit.compiled() {
        if cm.code.nparams as usize == args.len() {
            let base = ctx.stack.len();
            ctx.stack.append(args);
            return ctx.invoke_at(cm, hit.class(), me, base).map_err(|b| *b);
        }
    }
    ctx.call_hit(hit, me, sel, args).map_err(|b| *b)
}

/// Puts the rollback copy back as the state (the failed state becomes the next copy), for a
/// message run without the journal (`Journal::roll_back` for one with it).
#[cold]
fn roll_back(fields: &mut Vec<Value>, saved: &mut Box<[Value]>) {
    let failed = std::mem::replace(fields, std::mem::take(saved).into_vec());
    *saved = failed.into_boxed_slice();
}

/// `initialize` for every class of the chain that defines it, parent first.
fn run_initialize(ctx: &mut Ctx, me: &Value, class: &ClassRef) -> Result<Value, Unwind> {
    let sel = ctx.prog.syms.initialize;
    for c in class.chain().iter().rev() {
        if c.builtin != Builtin::None {
            continue;
        }
        let m = c
            .methods()
            .read()
            .get(&sel)
            .map(crate::interp::eval::Method::forced);
        if let Some(m) = m {
            ctx.call_method(&m, c, me, sel, &[]).map_err(|b| *b)?;
        }
    }
    Ok(Value::Nil)
}

/// Does some class of the chain define `sel` in bt?
pub fn chain_defines(class: &ClassRef, sel: Sym) -> bool {
    let mut c: Option<&ClassRef> = Some(class);
    while let Some(k) = c {
        if k.builtin == Builtin::None && k.methods().read().contains_key(&sel) {
            return true;
        }
        c = k.superclass.as_ref();
    }
    false
}

/// Does some class of the chain define `initialize` in bt?
pub fn has_initialize(ctx: &Ctx, class: &ClassRef) -> bool {
    chain_defines(class, ctx.prog.syms.initialize)
}

impl Behaviour for BtActor {
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        // With `actor_max_memory` the message runs charged to the actor's account.
        let scope = if crate::memory::coroutine_accounts() {
            self.memory_scope(&msg.args)
        } else {
            None
        };
        let sel = msg.selector;
        let r = self.handle_message(cx, msg);
        match scope {
            None => r,
            Some(scope) => self.after_memory(cx, scope, sel, r),
        }
    }

    fn terminate(&mut self, cx: &mut Cx<'_>, reason: &ExitReason) {
        self.terminate_actor(cx, reason)
    }

    fn cast_failed(&mut self, cx: &mut Cx<'_>, selector: Sym, error: Value) {
        self.log_cast_failure(cx, selector, error)
    }
}

impl BtActor {
    /// Charges the thread to the actor's memory account (made on the first message) when
    /// its engine sets `actor_max_memory`, and counts the message's values `args` to it
    /// (`memlimit`).
    #[cold]
    #[inline(never)]
    fn memory_scope(&mut self, args: &[Value]) -> Option<crate::memory::Scope> {
        if self.mem.is_none() {
            self.sys.prog.actor_memory.get()?;
            self.mem =
                crate::interp::actor::memlimit::ActorMem::for_program(&self.sys.prog).map(Box::new);
        }
        let mem = self.mem.as_mut()?;
        let scope = crate::memory::Scope::enter(Some(mem.account()));
        mem.before_message(&self.fields, args);
        Some(scope)
    }

    /// After a message under `actor_max_memory`: when the state the message left is over
    /// the limit, the message fails and the actor crashes with `#memory_limit`, as when the
    /// limit trips during the message.
    #[cold]
    #[inline(never)]
    fn after_memory(
        &mut self,
        cx: &mut Cx<'_>,
        scope: crate::memory::Scope,
        sel: Sym,
        r: Result<Value, Value>,
    ) -> Result<Value, Value> {
        drop(scope);
        let over = self
            .mem
            .as_mut()
            .is_some_and(|m| m.after_message(&self.fields));
        if !over {
            return r;
        }
        if r.is_ok() {
            roll_back(&mut self.fields, &mut self.saved);
        }
        let kind = ErrorKind::from_name("memory_limit");
        let prog = &self.sys.prog;
        let e = make_exception(
            prog,
            &class_for_kind(prog, kind),
            kind.sym(),
            "memory limit exceeded".to_string(),
            None,
            None,
            None,
            None,
            Value::list(Vec::new()),
        );
        cx.exit_self(ExitReason::Custom(Value::Symbol(kind.sym())));
        Err(prefix_error(e, &self.class, sel))
    }

    /// One message (see `Behaviour::handle`; the memory account is set around it).
    #[inline(always)]
    fn handle_message(&mut self, cx: &mut Cx<'_>, mut msg: Message) -> Result<Value, Value> {
        let req = msg.as_request();
        if let Some(Request::Job) = req {
            // A job run as this actor (a peer's call, `crate::dist::peer`): it answers its
            // caller itself and restores the state when the method it runs raises.
            let job = msg
                .args
                .first()
                .and_then(downcast::<JobBox>)
                .and_then(|b| b.job.lock().take());
            if let Some(job) = job {
                self.run(cx, |ctx, _| job(ctx));
            }
            return Ok(Value::Nil);
        }
        snapshot(&mut self.saved, &self.fields);
        let init = matches!(req, Some(Request::Initialize));
        self.ensure_me(cx);
        let Some(me) = self.me.as_ref() else {
            return Ok(Value::Nil); // not reached: `ensure_me` made the handle
        };
        let class = &self.class;
        let mut crash = None;
        // The journal lets the message update its state's collections in place; an actor
        // whose memory is metered keeps the plain copy (`after_memory` may roll back a
        // message that succeeded).
        let journal = self.mem.is_none();
        let state = (&mut self.fields, &mut self.saved);
        let r = run_as(&self.sys, me, state, cx, |ctx, me| {
            if journal {
                ctx.journal.begin();
            }
            let r = (|| {
                // Blocks of the caller whose `^` returns there: live while this runs. (A
                // context comes from the pool with none.)
                if msg.args.iter().any(super::transfer::may_hold_block) {
                    ctx.proc.relays = crate::interp::actor::relay::message_relays(&msg.args);
                }
                let sel = if init {
                    ctx.prog.syms.initialize
                } else {
                    msg.selector
                };
                let r = if init {
                    // Answers the index of a typed slot left nil, or nil.
                    run_initialize(ctx, me, class).map(|_| {
                        match nil_typed_slot(&ctx.prog, class, &ctx.actor_fields) {
                            Some(i) => Value::Int(i as i64),
                            None => Value::Nil,
                        }
                    })
                } else {
                    dispatch(ctx, class, me, msg.selector, &mut msg.args)
                };
                match r {
                    Ok(v) => Ok(transfer_in_owned(ctx, v)),
                    Err(Unwind::Error(e)) => Err(prefix_error(e, class, sel)),
                    // The method was left by a caller's block: its changes stay.
                    Err(Unwind::Return { value, home }) if ctx.proc.relays.contains(&home) => {
                        let value = transfer_in(ctx, &value);
                        Ok(crate::interp::actor::relay::relayed(ctx, value, home))
                    }
                    Err(Unwind::Return { .. }) => Err(runtime_error(
                        ctx,
                        "non-local return from a method that has already returned",
                    )),
                    Err(u) => {
                        if let Some(code) = u.exit_code() {
                            if !ctx.prog.embedded.load(std::sync::atomic::Ordering::Relaxed) {
                                ctx.prog.write_out("");
                                std::process::exit(code);
                            }
                            let m = format!(
                                "Program exit: {code} outside the main program of an embedded engine"
                            );
                            if let Unwind::Error(e) = ctx.err(ErrorKind::RuntimeError, m) {
                                return Err(e);
                            }
                        }
                        // An embedder's limit ended this message: the actor crashes with the
                        // limit's kind as exit reason (into its supervisor) and the caller gets
                        // an error of that kind.
                        if let Some(kind) = u.limit_kind() {
                            crash = Some(kind);
                            let kind = kind.as_str();
                            let m = format!("{} exceeded", kind.replace('_', " "));
                            if let Unwind::Error(e) = ctx.err(ErrorKind::from_name(kind), m) {
                                return Err(prefix_error(e, class, sel));
                            }
                        }
                        Err(Value::Nil)
                    }
                }
            })();
            if r.is_err() {
                let undo = ctx.prog.prims.prims.hooks.undo;
                ctx.journal
                    .roll_back(&mut ctx.actor_fields, &mut ctx.actor_saved, undo);
            }
            ctx.journal.end();
            r
        });
        crate::interp::actor::send::recycle_args_in(cx, msg.args);
        if let Some(kind) = crash {
            cx.exit_self(crate::runtime::ExitReason::Custom(Value::Symbol(kind)));
        }
        r
    }

    fn terminate_actor(&mut self, cx: &mut Cx<'_>, reason: &ExitReason) {
        let sel = Sym::new("terminate:");
        if !chain_defines(&self.class, sel) {
            return;
        }
        let reason = reason.to_value();
        let class = self.class.clone();
        let err = self.run(cx, |ctx, me| match ctx.send(me, sel, &[reason]) {
            Err(Unwind::Error(e)) => Some(describe_exception(&prefix_error(e, &class, sel))),
            _ => None,
        });
        if let Some(e) = err {
            cx.log(&format!("error in {}>>terminate: {e}", self.class.name));
        }
    }

    fn log_cast_failure(&mut self, cx: &mut Cx<'_>, selector: Sym, error: Value) {
        if error.is_nil() {
            return;
        }
        // Where it failed: the innermost located frame of the exception.
        let at = match &crate::interp::error::exc_field(&error, crate::interp::error::F_LOCS) {
            Value::List(l) => l.iter().find_map(|v| match v {
                Value::Str(s) => Some(format!(" at {}", s.as_str())),
                _ => None,
            }),
            _ => None,
        }
        .unwrap_or_default();
        cx.log(&format!(
            "error in cast {} to Actor({}, {}){at}: {}",
            selector,
            self.class.name,
            crate::interp::actor::handle::pid_label(cx.pid()),
            describe_exception(&error)
        ));
    }
}

fn runtime_error(ctx: &Ctx, msg: &str) -> Value {
    let class = class_for_kind(&ctx.prog, ErrorKind::RuntimeError);
    make_exception(
        &ctx.prog,
        &class,
        ErrorKind::RuntimeError.sym(),
        msg.to_string(),
        None,
        None,
        None,
        None,
        Value::list(Vec::new()),
    )
}

/// The main program's process: runs each job the `Interpreter` sends it with one persistent context.
pub struct MainActor {
    pub ctx: Option<Ctx>,
    /// Where an argument-less job message finds its job (`interp::main_job`).
    pub slot: Arc<crate::interp::main_job::JobSlot>,
}

impl Behaviour for MainActor {
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        if !msg.is_job() {
            return Ok(Value::Nil);
        }
        // No argument: the job waits in the shared slot; else it travels in a JobBox.
        let boxed = match msg.args.first() {
            None => None,
            Some(a) => match downcast::<JobBox>(a).and_then(|b| b.job.lock().take()) {
                Some(j) => Some(j),
                None => return Ok(Value::Nil),
            },
        };
        let slot = &self.slot;
        run_main_job(
            self.ctx.as_mut(),
            cx,
            None,
            move |ctx: &mut Ctx| match boxed {
                Some(j) => j(ctx),
                None => slot.run(ctx),
            },
        );
        Ok(Value::Nil)
    }

    /// A job lent on the guest's claimed path (`interp::main_job`): as `handle` of a job
    /// message, without the message and the slot.
    fn run_job(&mut self, cx: &mut Cx<'_>, job: crate::runtime::LentJob) {
        // SAFETY: the guest lends only jobs made by `main_job::Frame::lend`, whose caller
        // waits until the job is over, and runs them on its runner, on the caller's thread
        // (`runtime::sched::guest`); this is the job's only run.
        #[allow(unsafe_code)]
        let armed = unsafe { crate::interp::main_job::armed_step(job, cx.pid().number) };
        // SAFETY: as above.
        #[allow(unsafe_code)]
        run_main_job(self.ctx.as_mut(), cx, armed, move |ctx: &mut Ctx| unsafe {
            crate::interp::main_job::run_lent_here(job, ctx)
        });
    }

    /// A lent job's panic (caught by the runner's one handler around the job): answered as
    /// the caller's error; the main context is reset as after any job, and the process
    /// goes on.
    fn job_panicked(
        &mut self,
        _cx: &mut Cx<'_>,
        job: crate::runtime::LentJob,
        payload: &(dyn std::any::Any + Send),
    ) -> bool {
        let Some(ctx) = self.ctx.as_mut() else {
            return false;
        };
        ctx.reset_after_panic();
        crate::interp::process::left_by_panic(ctx);
        // SAFETY: as in `run_job`; the job panicked before it signalled its caller (the
        // signal is the trampoline's last step), which still waits on this thread.
        #[allow(unsafe_code)]
        unsafe {
            crate::interp::main_job::fail_lent(
                job,
                crate::interp::main_job::panic_text(payload),
                true,
            )
        };
        true
    }
}

/// Runs one job in the main context (`armed`: the step its caller armed the main guard
/// with, `main_job::Armed`).
#[inline(always)]
fn run_main_job(
    ctx: Option<&mut Ctx>,
    cx: &mut Cx<'_>,
    armed: Option<u32>,
    job: impl FnOnce(&mut Ctx),
) {
    let Some(ctx) = ctx else { return };
    // An embedder's limits bind each job (`Program::ctx_hook`); the main context keeps its
    // hook between jobs (re-armed here, or by the job's caller), so a job allocates nothing.
    match armed {
        Some(step) if ctx.preempt.is_some() => ctx.restart_budget(step),
        _ => {
            if let Some(make) = ctx.prog.ctx_hook.get() {
                let step = make(Some(cx.me()), &mut ctx.preempt);
                ctx.restart_budget(step);
            }
        }
    }
    crate::interp::process::in_main_process(ctx, cx, job);
    // Whatever a job left behind (it always unwinds fully) must not leak into the next.
    ctx.depth = 0;
}

/// Lines kept by a transcript (`recent`).
const RECENT_MAX: usize = 1000;

/// A TranscriptStream: the standard-output one writes through the program's output sink;
/// others only capture.
pub struct TranscriptActor {
    pub sys: Arc<ActorSys>,
    pub stdout: bool,
    lines: VecDeque<String>,
    partial: String,
}

impl TranscriptActor {
    pub fn new(sys: Arc<ActorSys>, stdout: bool) -> TranscriptActor {
        TranscriptActor {
            sys,
            stdout,
            lines: VecDeque::new(),
            partial: String::new(),
        }
    }

    fn write(&mut self, s: &str) {
        if self.stdout {
            self.sys.prog.write_out(s);
        }
        for ch in s.chars() {
            if ch == '\n' {
                let line = std::mem::take(&mut self.partial);
                self.lines.push_back(line);
                if self.lines.len() > RECENT_MAX {
                    self.lines.pop_front();
                }
            } else {
                self.partial.push(ch);
            }
        }
    }
}

impl Behaviour for TranscriptActor {
    fn handle(&mut self, _cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        match msg.selector.as_str() {
            "bt_write:" => {
                if let Some(s) = msg.args.first().and_then(|a| a.as_str()) {
                    let s = s.to_string();
                    self.write(&s);
                }
                Ok(Value::Nil)
            }
            "recent" => {
                let mut v: Vec<Value> = self.lines.iter().map(|l| Value::str(l.clone())).collect();
                if !self.partial.is_empty() {
                    v.push(Value::str(self.partial.clone()));
                }
                Ok(Value::list(v))
            }
            "clear" => {
                self.lines.clear();
                self.partial.clear();
                Ok(Value::Nil)
            }
            _ => Ok(Value::Nil),
        }
    }
}
