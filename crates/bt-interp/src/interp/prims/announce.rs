//! Announcements: Announcer, Subscription, SystemAnnouncer.
//!
//! An Announcer is a node-bound handle ([`AnnouncerVal`]) to a shared subscription list. The
//! list is behind a `parking_lot` mutex that is held only to add, remove or select
//! subscriptions — never across a send, a block run or a wait — so handlers may subscribe and
//! unsubscribe freely.
//!
//! * `when: aClass do: aBlock` / `when:doOnce:` / `when: aClass send: #sel to: anObject`
//!   answer a Subscription; an announcement is delivered to every subscription whose class is
//!   the announcement's class or a superclass of it, in subscription order. A handler block
//!   may take 0, 1 (the announcement) or 2 (the announcement and the announcer) arguments;
//!   `send:to:` passes as many as the selector takes, the same way.
//! * `announce:` is asynchronous: it appends the selected handlers to the announcer's
//!   delivery queue and answers. One delivering process per announcer (label `announcer`,
//!   started when the queue fills, gone when it is empty) runs them in announcement order,
//!   each in a fresh process (label `callback`), waiting for each to finish before it starts
//!   the next — so every subscriber sees one announcer's announcements in the order they were
//!   made. A handler still running after 5000 ms is left running and delivery goes on (the
//!   order then holds for the handlers that finish in time). A handler unsubscribed before
//!   its turn is skipped.
//!   `announceAndWait:` queues its handlers on the same queue and waits until they have run
//!   (after the announcements made before it), each in a fresh process waited up to 5000 ms
//!   (`announceAndWait:timeout:` sets that per-handler limit; Integer ms, Duration or
//!   `#infinity`); a handler still running at its limit is logged and left running (like a
//!   sync send that timed out). Made by the handler being delivered, or by a process it
//!   waits on, its handlers run at once instead (queued, they would wait for their caller).
//!   Both answer the announcement; a class given instead of an instance is instantiated with
//!   its defaults (as in Pharo).
//! * Handler errors are logged to standard error (`error in announcement handler: …`), never
//!   raised in the announcer.
//! * A `doOnce` subscription is claimed atomically when an announcement selects it, so it
//!   runs once even when two processes announce at the same time.
//! * `unsubscribe: x` removes every subscription whose subscriber is `x`: the target of
//!   `send:to:`, the handler block itself, or a Subscription; it answers the announcer.
//!   Subscription `unsubscribe` answers true if the subscription was active.
//! * `SystemAnnouncer current` is one announcer per Vm (`ActorSys::system_announcer`);
//!   `SystemAnnouncer new` raises `instantiation_error`.
//! * On a named node, the first `SystemAnnouncer current` installs the distribution layer's
//!   `PeerEvents` callback: a visible peer's link coming up or going down is announced as
//!   NodeUp / NodeDown (reason `connectionClosed`, `disconnect`, …), and a shape skew as
//!   NodeShapeSkew; NodeUp/NodeDown/NodeShapeSkew are declared in stdlib/Announcement.bt.
//!   The distribution layer reports on its own threads, so it queues a builder on the
//!   SystemAnnouncer's delivery queue ([`announce_in_callback`]); the delivering process makes
//!   the announcement and runs its handlers, so link changes reach every subscriber in the
//!   order they were reported.
//! * printString: the bare class name (`Announcer`, `SystemAnnouncer`, `Subscription`).

use crate::interp::block_code::ClosureExt;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::interp::actor::handle::{downcast, native, native_by_key};
use crate::interp::actor::prims::node::node_value;
use crate::interp::actor::send::{describe_exception, transfer, transfer_in};
use crate::interp::actor::{cx_log, need_cx, sys_of, ActorSys};
use crate::interp::distribution::PeerEvents;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::duration::timeout_arg;
use crate::interp::prims::parallel::{spawn_job, Job};
use crate::runtime::{CallError, Completion, Pid, Timeout, WaitedBy};
use crate::value::dict::Dict;
use crate::value::{ClassRef, Sym, Value};

static SERIAL: AtomicU64 = AtomicU64::new(1);

fn serial() -> u64 {
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// What a subscription does with an announcement.
enum Action {
    Block(Value),
    Send(Sym, Value),
}

struct Sub {
    id: u64,
    /// Deliver instances of this class and its subclasses.
    on: ClassRef,
    action: Action,
    once: bool,
    active: AtomicBool,
}

impl Sub {
    /// Whether `unsubscribe: x` names this subscription.
    fn subscriber_is(&self, x: &Value) -> bool {
        use crate::value::order::strict_eq;
        match &self.action {
            Action::Send(_, target) => strict_eq(target, x),
            Action::Block(b) => match (b, x) {
                (Value::Block(a), Value::Block(c)) => a.serial == c.serial,
                _ => false,
            },
        }
    }
}

/// The shared part of an announcer: its subscriptions and its queue of `announce:`
/// deliveries.
struct Core {
    id: u64,
    subs: Mutex<Vec<Arc<Sub>>>,
    delivery: Mutex<Delivery>,
}

/// What an announcer has still to deliver asynchronously, in announcement order, and whether
/// its delivering process runs.
#[derive(Default)]
struct Delivery {
    queue: VecDeque<Item>,
    running: bool,
    /// The delivering process while it runs.
    deliverer: Option<Pid>,
    /// The handler process it waits for (set by the handler as it starts).
    handler: Option<Pid>,
}

/// One entry of a [`Delivery`] queue.
enum Item {
    /// Run this subscription's handler with this (transferred) announcement; waited for up
    /// to [`HANDLER_TURN`] (`announce:`) or the caller's limit (`announceAndWait:`).
    Handler(Arc<Sub>, Value, Option<Waited>),
    /// Build announcements in the delivering process (the runtime's own events: NodeUp,
    /// NodeDown, NodeShapeSkew) and deliver them before the next entry.
    Build(Builder),
    /// The handlers an `announceAndWait:` queued before this have run: answer its caller.
    Done(Completion),
}

/// A handler queued by `announceAndWait:`: its caller waits on it (a sync send back to the
/// caller is a cycle) up to `limit` (a late handler is logged and left running).
struct Waited {
    limit: Timeout,
    by: WaitedBy,
}

/// Makes the runtime's events in a process of the node (see [`announce_in_callback`]).
type Builder = Box<dyn FnOnce(&mut Ctx) -> Result<Events, Unwind> + Send>;

/// An Announcer handle (also SystemAnnouncer and user subclasses).
pub struct AnnouncerVal {
    core: Arc<Core>,
    class: ClassRef,
}

/// A Subscription handle.
pub struct SubscriptionVal {
    sub: Arc<Sub>,
    owner: Weak<Core>,
    class: ClassRef,
}

fn order_key(class: &ClassRef, id: u64) -> (u8, Vec<u64>) {
    let mut k: Vec<u64> = class.name.as_str().chars().map(|c| c as u64 + 1).collect();
    k.push(0);
    k.push(id);
    (9, k)
}

native_by_key!(AnnouncerVal {
    key: |v| v.core.id,
    print: |v| v.class.name.as_str().to_string(),
    hash: |v| v.core.id ^ 0xA7_0000_0000,
    order: |v| order_key(&v.class, v.core.id),
});
native_by_key!(SubscriptionVal {
    key: |v| v.sub.id,
    print: |v| v.class.name.as_str().to_string(),
    hash: |v| v.sub.id ^ 0x5B_0000_0000,
    order: |v| order_key(&v.class, v.sub.id),
});

pub fn register(p: &mut Prims) {
    let a = "Announcer";
    p.add_class(a, "new", |ctx, r, _| {
        let class = match r {
            Value::Class(c) => c.clone(),
            _ => class_named(ctx, "Announcer"),
        };
        if let Some(sa) = ctx.prog.class_named("SystemAnnouncer") {
            if class.inherits_or_is(&sa) {
                return Err(ctx.err_hint(
                    ErrorKind::InstantiationError,
                    format!("{} is the node's announcer", class.name.as_str()),
                    "Use SystemAnnouncer current",
                ));
            }
        }
        Ok(new_announcer(class))
    });
    p.add_class("SystemAnnouncer", "current", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        Ok(system_announcer(ctx, &sys))
    });
    p.add(a, "when:do:", |ctx, r, a| {
        let act = block_action(ctx, &a[1])?;
        subscribe(ctx, r, &a[0], act, false)
    });
    p.add(a, "when:doOnce:", |ctx, r, a| {
        let act = block_action(ctx, &a[1])?;
        subscribe(ctx, r, &a[0], act, true)
    });
    p.add(a, "when:send:to:", |ctx, r, a| {
        let Some(sel) = a[1].as_sym() else {
            let n = ctx.class_name_of(&a[1]);
            return Err(ctx.type_err(format!("send: expects a Symbol, not {n}")));
        };
        if sel_arity(sel) > 2 {
            return Err(ctx.err(
                ErrorKind::ArityMismatch,
                format!("#{} takes more than 2 arguments", sel.as_str()),
            ));
        }
        let target = transfer_in(ctx, &a[2]);
        subscribe(ctx, r, &a[0], Action::Send(sel, target), false)
    });
    p.add(a, "announce:", |ctx, r, a| announce(ctx, r, &a[0], None));
    p.add(a, "announceAndWait:", |ctx, r, a| {
        announce(ctx, r, &a[0], Some(Timeout::DEFAULT))
    });
    p.add(a, "announceAndWait:timeout:", |ctx, r, a| {
        let t = timeout_arg(ctx, &a[1])?;
        announce(ctx, r, &a[0], Some(t))
    });
    p.add(a, "unsubscribe:", |ctx, r, a| {
        let core = core_of(ctx, r)?;
        let target = downcast::<SubscriptionVal>(&a[0]).map(|s| s.sub.id);
        let removed: Vec<Arc<Sub>> = {
            let mut g = core.subs.lock();
            let (gone, kept): (Vec<_>, Vec<_>) = g
                .drain(..)
                .partition(|s| Some(s.id) == target || s.subscriber_is(&a[0]));
            *g = kept;
            gone
        };
        for s in &removed {
            s.active.store(false, Ordering::SeqCst);
        }
        Ok(r.clone())
    });
    p.add(a, "subscriptionCount", |ctx, r, _| {
        let core = core_of(ctx, r)?;
        let n = core.subs.lock().len();
        Ok(Value::Int(n as i64))
    });

    let s = "Subscription";
    p.add(s, "unsubscribe", |_, r, _| {
        let Some(sv) = downcast::<SubscriptionVal>(r) else {
            return Ok(Value::False);
        };
        let was = sv.sub.active.swap(false, Ordering::SeqCst);
        if let Some(core) = sv.owner.upgrade() {
            core.subs.lock().retain(|x| x.id != sv.sub.id);
        }
        Ok(Value::bool(was))
    });
    p.add(s, "isActive", |_, r, _| {
        Ok(Value::bool(
            downcast::<SubscriptionVal>(r).is_some_and(|sv| sv.sub.active.load(Ordering::SeqCst)),
        ))
    });
}

fn class_named(ctx: &Ctx, name: &str) -> ClassRef {
    ctx.prog
        .class_named(name)
        .unwrap_or_else(|| ctx.prog.core.object.clone())
}

fn new_announcer(class: ClassRef) -> Value {
    native(AnnouncerVal {
        core: Arc::new(Core {
            id: serial(),
            subs: Mutex::new(Vec::new()),
            delivery: Mutex::new(Delivery::default()),
        }),
        class,
    })
}

/// The node's announcer, made on first use.
pub fn system_announcer(ctx: &Ctx, sys: &Arc<ActorSys>) -> Value {
    let mut g = sys.system_announcer.lock();
    match &*g {
        Some(v) => v.clone(),
        None => {
            let v = new_announcer(class_named(ctx, "SystemAnnouncer"));
            *g = Some(v.clone());
            drop(g);
            // A named node reports its visible peers from now on (nobody could have
            // subscribed before the announcer existed).
            if let Some(d) = ctx.prog.dist.get() {
                d.set_peer_events(peer_events(Arc::downgrade(sys)));
            }
            v
        }
    }
}

/// NodeUp / NodeDown for a link change reported by the distribution layer (on its own
/// thread): queued on the SystemAnnouncer, whose delivering process builds the announcement.
fn peer_events(sys: Weak<ActorSys>) -> PeerEvents {
    Arc::new(move |node: &str, down: Option<&str>| {
        let Some(sys) = sys.upgrade() else {
            return;
        };
        let node = Sym::new(node);
        let down = down.map(Sym::new);
        announce_in_callback(&sys, move |ctx| {
            let n = node_value(ctx, node)?;
            let mut pairs = vec![(Value::sym("node"), n)];
            let cls = match down {
                None => "NodeUp",
                Some(r) => {
                    pairs.push((Value::sym("reason"), Value::Symbol(r)));
                    "NodeDown"
                }
            };
            Ok(vec![(cls, pairs)])
        });
    })
}

/// The events of one [`announce_in_callback`]: a class name and its fields for `new:`.
type Events = Vec<(&'static str, Vec<(Value, Value)>)>;

/// Announces on the SystemAnnouncer the events `build` describes, each made with
/// `Class new: aDictionary` (classes that are not loaded are skipped). `build` runs in the
/// announcer's delivering process, after the announcements queued before it, so the runtime's
/// events keep the order in which the distribution layer reported them. Nothing happens
/// before the SystemAnnouncer exists (nobody can have subscribed).
fn announce_in_callback(
    sys: &Arc<ActorSys>,
    build: impl FnOnce(&mut Ctx) -> Result<Events, Unwind> + Send + 'static,
) {
    let Some(ann) = sys.system_announcer.lock().clone() else {
        return;
    };
    let Some(a) = downcast::<AnnouncerVal>(&ann) else {
        return;
    };
    let core = a.core.clone();
    enqueue(sys, &core, &ann, [Item::Build(Box::new(build))]);
}

/// NodeShapeSkew: one announcement per (class, local version, remote version) that
/// differs with `node`, from a fresh process (called by the distribution layer).
pub fn announce_shape_skew(sys: &Arc<ActorSys>, node: Sym, skews: Vec<(Sym, i64, i64)>) {
    announce_in_callback(sys, move |ctx| {
        let n = node_value(ctx, node)?;
        Ok(skews
            .iter()
            .map(|(name, local, remote)| {
                let pairs = vec![
                    (Value::sym("node"), n.clone()),
                    (Value::sym("className"), Value::Symbol(*name)),
                    (Value::sym("localVersion"), Value::Int(*local)),
                    (Value::sym("remoteVersion"), Value::Int(*remote)),
                ];
                ("NodeShapeSkew", pairs)
            })
            .collect())
    });
}

fn core_of(ctx: &Ctx, r: &Value) -> Result<Arc<Core>, Unwind> {
    match downcast::<AnnouncerVal>(r) {
        Some(a) => Ok(a.core.clone()),
        None => Err(ctx.err(
            ErrorKind::RuntimeError,
            "not an announcer handle (create one with Announcer new)",
        )),
    }
}

/// Arguments a selector takes (`foo` 0, `+` 1, `at:put:` 2).
fn sel_arity(sel: Sym) -> usize {
    let s = sel.as_str();
    let colons = s.matches(':').count();
    if colons > 0 {
        colons
    } else if s
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        0
    } else {
        1
    }
}

fn block_action(ctx: &Ctx, b: &Value) -> Result<Action, Unwind> {
    match b {
        Value::Block(c) if c.arity() <= 2 => Ok(Action::Block(transfer_in(ctx, b))),
        Value::Block(c) => Err(ctx.err(
            ErrorKind::ArityMismatch,
            format!(
                "an announcement handler takes at most 2 arguments, not {}",
                c.arity()
            ),
        )),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("do: expects a Block, not {n}")))
        }
    }
}

fn subscribe(ctx: &Ctx, r: &Value, on: &Value, action: Action, once: bool) -> EvalResult {
    let core = core_of(ctx, r)?;
    let Value::Class(on) = on else {
        let n = ctx.class_name_of(on);
        return Err(ctx.type_err(format!("when: expects an announcement class, not {n}")));
    };
    let sub = Arc::new(Sub {
        id: serial(),
        on: on.clone(),
        action,
        once,
        active: AtomicBool::new(true),
    });
    core.subs.lock().push(sub.clone());
    Ok(native(SubscriptionVal {
        sub,
        owner: Arc::downgrade(&core),
        class: class_named(ctx, "Subscription"),
    }))
}

/// The subscriptions an announcement of class `cls` goes to, in subscription order; `doOnce`
/// ones are claimed (deactivated and removed) here.
fn select(core: &Core, cls: &ClassRef) -> Vec<Arc<Sub>> {
    let mut g = core.subs.lock();
    let mut out = Vec::new();
    g.retain(|s| {
        if !cls.inherits_or_is(&s.on) || !s.active.load(Ordering::SeqCst) {
            return true;
        }
        if s.once {
            if s.active.swap(false, Ordering::SeqCst) {
                out.push(s.clone());
            }
            return false;
        }
        out.push(s.clone());
        true
    });
    out
}

/// The job that runs one handler in its own process; it logs its own error. A handler the
/// delivering process runs (`core`) first records itself as the one being waited for, so
/// that an `announceAndWait:` it makes on the same announcer is not queued behind itself.
fn handler_job(sub: &Sub, event: Value, announcer: Value, core: Option<Arc<Core>>) -> Job {
    let (sel, target) = match &sub.action {
        Action::Block(b) => (None, transfer(b)),
        Action::Send(sel, t) => (Some(*sel), transfer(t)),
    };
    Box::new(move |ctx: &mut Ctx| {
        if let (Some(core), Some(cx)) = (&core, crate::interp::actor::cx_of(ctx)) {
            core.delivery.lock().handler = Some(cx.pid());
        }
        let r = match sel {
            None => {
                let n = match &target {
                    Value::Block(c) => c.arity(),
                    _ => 0,
                };
                let args = [event, announcer];
                ctx.call_block(&target, &args[..n.min(2)])
            }
            Some(sel) => {
                let n = sel_arity(sel);
                let args = [event, announcer];
                ctx.send(&target, sel, &args[..n.min(2)])
            }
        };
        if let Err(Unwind::Error(e)) = &r {
            let line = describe_exception(e);
            cx_log(ctx, &format!("error in announcement handler: {line}"));
        }
        r
    })
}

/// `announce:` (wait = None) and `announceAndWait:` (the per-handler limit).
///
/// `announceAndWait:` queues its handlers behind the announcements made before it and waits
/// until the delivering process has run them, so one announcer's announcements reach every
/// subscriber in the order they were made, whichever of the two made them. Made by a
/// handler the delivering process is waiting for (or by a process that handler waits on),
/// it runs its handlers at once instead: queued, they would wait for the handler that waits
/// for them.
fn announce(ctx: &mut Ctx, r: &Value, ev: &Value, wait: Option<Timeout>) -> EvalResult {
    let core = core_of(ctx, r)?;
    let sys = sys_of(ctx)?;
    let event = match ev {
        Value::Class(c) => ctx.instantiate(&c.clone())?,
        v => v.clone(),
    };
    let cls = ctx.class_of(&event);
    let subs = select(&core, &cls);
    let shipped = transfer_in(ctx, &event);
    let Some(t) = wait else {
        let items = subs
            .into_iter()
            .map(|sub| Item::Handler(sub, transfer(&shipped), None));
        enqueue(&sys, &core, r, items);
        return Ok(event);
    };
    let nested = {
        let cx = need_cx(ctx)?;
        let d = core.delivery.lock();
        let me = cx.pid();
        d.deliverer == Some(me) || d.handler.is_some_and(|h| h == me || cx.would_deadlock(h))
    };
    if nested {
        for sub in subs {
            let job = handler_job(&sub, transfer(&shipped), r.clone(), None);
            let by = need_cx(ctx)?.waited_by_me();
            let job = crate::interp::prims::parallel::waited_job(by, job);
            wait_for_handler(ctx, job, t, Some(&cls))?;
        }
        return Ok(event);
    }
    if subs.is_empty() {
        return Ok(event);
    }
    let cx = need_cx(ctx)?;
    let items: Vec<Item> = subs
        .into_iter()
        .map(|sub| {
            let by = cx.waited_by_me();
            Item::Handler(sub, transfer(&shipped), Some(Waited { limit: t, by }))
        })
        .collect();
    let waited = cx.wait_external(Timeout::Infinity, |c| {
        enqueue(&sys, &core, r, items.into_iter().chain([Item::Done(c)]));
    });
    if let Err(CallError::Exiting(reason)) = waited {
        return Err(Unwind::Exit(reason.to_value()));
    }
    Ok(event)
}

/// Runs `job` in a fresh process and waits for it up to `t`; a handler still running then
/// is logged (when `late` names its announcement's class) and left running. An error when
/// this process is exiting.
fn wait_for_handler(
    ctx: &mut Ctx,
    job: Job,
    t: Timeout,
    late: Option<&ClassRef>,
) -> Result<(), Unwind> {
    let sys = sys_of(ctx)?;
    let cx = need_cx(ctx)?;
    let waited = cx.wait_external(t, move |c| {
        spawn_job(&sys, "callback", job, move |_| c.complete(Value::Nil));
    });
    match waited {
        Err(CallError::Exiting(reason)) => return Err(Unwind::Exit(reason.to_value())),
        Err(CallError::Timeout) => {
            if let Some(cls) = late {
                let within = match t {
                    Timeout::Ms(ms) => format!("{ms} ms"),
                    Timeout::Infinity => "time".to_string(),
                };
                let c = cls.name.as_str();
                cx_log(
                    ctx,
                    &format!("announcement handler for {c} did not finish within {within}"),
                );
            }
        }
        _ => {}
    }
    Ok(())
}

/// How long the delivering process waits for one handler before it starts the next one: a
/// handler that runs longer is left running, and the ones after it are no longer ordered
/// after it.
const HANDLER_TURN: Timeout = Timeout::DEFAULT;

/// Appends `items` to the announcer's delivery queue and starts its delivering process if it
/// is not running.
fn enqueue(
    sys: &Arc<ActorSys>,
    core: &Arc<Core>,
    announcer: &Value,
    items: impl IntoIterator<Item = Item>,
) {
    let start = {
        let mut d = core.delivery.lock();
        d.queue.extend(items);
        let start = !d.running && !d.queue.is_empty();
        d.running |= start;
        start
    };
    if !start {
        return;
    }
    let core = core.clone();
    let announcer = transfer(announcer);
    let job: Job = Box::new(move |ctx: &mut Ctx| {
        deliver(ctx, &core, &announcer);
        Ok(Value::Nil)
    });
    spawn_job(sys, "announcer", job, |_| {});
}

/// The body of an announcer's delivering process: runs the queued handlers one after
/// another, each in a fresh process (waiting up to [`HANDLER_TURN`], or an
/// `announceAndWait:` caller's limit, for each), and answers the waiting callers, until the
/// queue is empty.
fn deliver(ctx: &mut Ctx, core: &Arc<Core>, announcer: &Value) {
    /// Clears `running` however the loop ends, so a later `announce:` starts a new
    /// delivering process. When this process is killed, the `announceAndWait:` callers still
    /// queued are answered (their handlers dropped) rather than left waiting for a delivery
    /// that may never come; `announce:` handlers stay queued for the next one.
    struct Running<'a>(&'a Core);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            let waiting: Vec<Completion> = {
                let mut d = self.0.delivery.lock();
                d.running = false;
                d.deliverer = None;
                d.handler = None;
                let mut waiting = Vec::new();
                d.queue.retain_mut(|item| match item {
                    Item::Handler(_, _, Some(_)) => false,
                    Item::Done(c) => {
                        waiting.push(c.clone());
                        false
                    }
                    _ => true,
                });
                waiting
            };
            for c in waiting {
                c.complete(Value::Nil);
            }
        }
    }
    let Ok(me) = need_cx(ctx).map(|cx| cx.pid()) else {
        return;
    };
    core.delivery.lock().deliverer = Some(me);
    let guard = Running(core);
    loop {
        let item = {
            let mut d = core.delivery.lock();
            match d.queue.pop_front() {
                Some(item) => item,
                None => {
                    d.running = false;
                    d.deliverer = None;
                    std::mem::forget(guard);
                    return;
                }
            }
        };
        let ok = match item {
            Item::Handler(sub, event, waited) => {
                run_handler(ctx, core, &sub, event, announcer, waited)
            }
            Item::Build(build) => build_and_run(ctx, core, announcer, build),
            Item::Done(c) => {
                c.complete(Value::Nil);
                true
            }
        };
        if !ok {
            // This process is exiting: the guard lets the next `announce:` restart delivery.
            return;
        }
    }
}

/// Builds the runtime's events and runs their handlers at once (in order). False if this
/// process is exiting.
fn build_and_run(ctx: &mut Ctx, core: &Arc<Core>, announcer: &Value, build: Builder) -> bool {
    let made = build(ctx).and_then(|events| {
        let mut out = Vec::new();
        for (cls, pairs) in events {
            let Some(class) = ctx.prog.class_named(cls) else {
                continue;
            };
            let dict: Dict = pairs.into_iter().collect();
            let ev = ctx.send(
                &Value::Class(class),
                Sym::new("new:"),
                &[Value::Dict(Arc::new(dict))],
            )?;
            out.push(ev);
        }
        Ok(out)
    });
    let events = match made {
        Ok(events) => events,
        Err(Unwind::Error(e)) => {
            let line = describe_exception(&e);
            cx_log(ctx, &format!("error in callback: {line}"));
            return true;
        }
        Err(_) => return false,
    };
    for ev in events {
        let cls = ctx.class_of(&ev);
        for sub in select(core, &cls) {
            if !run_handler(ctx, core, &sub, transfer(&ev), announcer, None) {
                return false;
            }
        }
    }
    true
}

/// Runs one handler in a fresh process and waits for it up to [`HANDLER_TURN`] (or, for an
/// `announceAndWait:`, its caller's limit, a late handler logged). False if this process is
/// exiting.
fn run_handler(
    ctx: &mut Ctx,
    core: &Arc<Core>,
    sub: &Sub,
    event: Value,
    announcer: &Value,
    waited: Option<Waited>,
) -> bool {
    if !sub.active.load(Ordering::SeqCst) && !sub.once {
        // Unsubscribed after the announcement selected it.
        return true;
    }
    let late = waited.is_some().then(|| ctx.class_of(&event));
    let job = handler_job(sub, event, transfer(announcer), Some(core.clone()));
    let (job, t) = match waited {
        Some(w) => (
            crate::interp::prims::parallel::waited_job(w.by, job),
            w.limit,
        ),
        None => (job, HANDLER_TURN),
    };
    let ok = wait_for_handler(ctx, job, t, late.as_ref()).is_ok();
    core.delivery.lock().handler = None;
    ok
}
