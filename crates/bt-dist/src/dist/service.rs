//! The node service `'$bt_node'`: everything other
//! bt nodes ask of this node as a whole, in one table of operations — remote spawn and
//! lookups ([`super::service_ops`]), the per-node queries ([`super::query`]), and the casts
//! of the global registry ([`super::global`]) and of shape manifests ([`super::shapes`]).
//!
//! Every bt node answers gen_server calls and casts to the reserved registered name
//! [`SERVICE`]: a request is `{Op, [Args]}`. The service is not a bt process:
//! [`NodeInbound`] wraps the program's [`Inbound`] ([`super::peer::BtInbound`]), recognises
//! the name and runs the operation; a monitor on the name never fires. An operation is one
//! of (the [`Op`] kinds):
//!
//! | kind | runs | reply |
//! |---|---|---|
//! | [`Op::Table`] | on the connection's task, from the runtime's tables (terms in, term out) | `{ok, T}` / `{error, {Kind, Message}}` |
//! | [`Op::Bt`] | with a pooled bt context on the connection's task when `inline` says so (`spawn` of a class without `initialize`, lookups), else in a fresh bt process (`stop`, a spawn that runs `initialize`) | `{ok, Value}` / `{error, Exception}`, as a call to an actor |
//! | [`Op::Cast`] | on the connection's task (a `gen_server:cast`) | none |
//!
//! A spawn answers without any process of the service: the actor is created from the
//! connection's task and the reply frame is written to the socket from there (or, with
//! `initialize`, from the process that ran it). A new operation is one line in the table
//! (`table()`), pointing at its module.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use eetf::{Binary, Term, Tuple};
use parking_lot::{Mutex, RwLock};

use super::node::DistNode;
use super::peer::{error_term, reply_term, request_parts};
use super::state::Inner;
pub use super::terms::SERVICE;
use crate::codec::etf::{self, atom};
use crate::interp::actor::{ActorSys, Done};
use crate::interp::distribution::{Inbound, NodeLinks, Target};
use crate::interp::eval::{Ctx, EvalResult};
use crate::interp::prims::parallel::{spawn_job, Outcome};
use crate::value::{Sym, Value};

/// The process number the service resolves to for monitors (never a real process).
const SENTINEL: u64 = u64::MAX >> 1;
/// Watch ids of monitors on the service (never fire), apart from the program's.
const WATCH_BIT: u64 = 1 << 63;

/// What a [`Op::Table`] operation answers: the term inside `{ok, …}`, or kind and message.
pub type Answer = Result<Term, (&'static str, String)>;

/// An operation of the node service.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    /// Answered from the runtime's tables: `(system, node, op name, argument terms)`.
    Table(fn(&ActorSys, Option<&Inner>, &str, &[Term]) -> Answer),
    /// Runs bt code on the decoded arguments; `inline` tells whether it may run without a
    /// process of its own (else it gets a fresh one).
    Bt {
        run: fn(&mut Ctx, &[Value]) -> EvalResult,
        inline: fn(&Ctx, &[Value]) -> bool,
    },
    /// A cast: `(node, op name, argument terms)`.
    Cast(fn(&Inner, &str, &[Term])),
}

fn always(_: &Ctx, _: &[Value]) -> bool {
    true
}

fn never(_: &Ctx, _: &[Value]) -> bool {
    false
}

fn table() -> &'static RwLock<HashMap<&'static str, Op>> {
    static OPS: OnceLock<RwLock<HashMap<&'static str, Op>>> = OnceLock::new();
    OPS.get_or_init(|| {
        use super::service_ops as s;
        let mut m: HashMap<&'static str, Op> = HashMap::new();
        let bt = |run, inline| Op::Bt { run, inline };
        m.insert("spawn", bt(s::spawn, s::spawn_inline));
        m.insert("whereis", bt(s::whereis, always));
        m.insert("registered", bt(s::registered, always));
        m.insert("alive", bt(s::alive, always));
        m.insert("kill", bt(s::kill, always));
        m.insert("exit", bt(s::exit, always));
        m.insert("stop", bt(s::stop, never));
        for q in super::query::QUERIES {
            m.insert(q, Op::Table(super::query::answer));
        }
        m.insert("globalAdd", Op::Cast(super::global::handle));
        m.insert("globalRemove", Op::Cast(super::global::handle));
        m.insert("shapes", Op::Cast(super::shapes::received));
        RwLock::new(m)
    })
}

/// The operation called `name`, if any.
pub(crate) fn op(name: &str) -> Option<Op> {
    table().read().get(name).copied()
}

/// Installs the program's inbound handler ([`super::peer::BtInbound`]) wrapped by the node
/// service. A named node calls it once, from the main process, before any statement runs.
pub fn install(ctx: &Ctx, node: &Arc<DistNode>) {
    if let Some(sys) = ctx.proc.sys.as_ref() {
        let inner: Arc<dyn Inbound> = Arc::new(super::peer::BtInbound::new(sys));
        node.inner.global.set_sys(sys);
        let q = NodeInbound::new(inner, sys, Arc::downgrade(&node.inner));
        node.set_inbound(Arc::new(q));
        // The program's idle workers read the connections (`super::hub`).
        sys.rt.set_io(Some(node.inner.hub.driver()));
    }
}

/// An [`Inbound`] that answers the node service and hands everything else on.
pub struct NodeInbound {
    inner: Arc<dyn Inbound>,
    sys: Weak<ActorSys>,
    node: Weak<Inner>,
    service: Sym,
    pg: Sym,
    watches: AtomicU64,
}

impl NodeInbound {
    pub(crate) fn new(inner: Arc<dyn Inbound>, sys: &Arc<ActorSys>, node: Weak<Inner>) -> Self {
        NodeInbound {
            inner,
            sys: Arc::downgrade(sys),
            node,
            // Interned now: the connection only looks names up (a peer cannot create them).
            service: Sym::new(SERVICE),
            pg: Sym::new(super::terms::PG_NAME),
            watches: AtomicU64::new(0),
        }
    }

    fn is_service(&self, t: Target) -> bool {
        matches!(t, Target::Name(n) if n == self.service) || matches!(t, Target::Number(SENTINEL))
    }
}

fn table_reply(a: Answer) -> Term {
    match a {
        Ok(t) => Term::from(Tuple::from(vec![atom("ok"), t])),
        Err((kind, msg)) => Term::from(Tuple::from(vec![
            atom("error"),
            Term::from(Tuple::from(vec![
                atom(kind),
                Term::from(Binary::from(msg.into_bytes())),
            ])),
        ])),
    }
}

impl Inbound for NodeInbound {
    fn call(&self, target: Target, from: eetf::Pid, request: Term, reply: Done<Term>) {
        if !self.is_service(target) {
            return self.inner.call(target, from, request, reply);
        }
        let Some(sys) = self.sys.upgrade() else {
            return reply(error_term("node_down", "the node is stopping"));
        };
        let Some((name, args)) = request_parts(&request, false) else {
            return reply(error_term(
                "badarg",
                "expected {Op, Args} with an atom and a list",
            ));
        };
        match op(&name) {
            Some(Op::Table(f)) => {
                let node = self.node.upgrade();
                reply(table_reply(f(&sys, node.as_deref(), &name, &args)))
            }
            Some(Op::Bt { run, inline }) => run_bt(&sys, run, inline, args, reply),
            Some(Op::Cast(_)) | None => {
                let msg = format!("no operation #{name}");
                reply(table_reply(Err(("does_not_understand", msg))))
            }
        }
    }

    fn call_waited(
        &self,
        target: Target,
        from: eetf::Pid,
        request: Term,
        waits: Vec<eetf::Pid>,
        reply: Done<Term>,
    ) {
        if !self.is_service(target) {
            return self.inner.call_waited(target, from, request, waits, reply);
        }
        self.call(target, from, request, reply)
    }

    fn cast(&self, target: Target, request: Term) {
        if !self.is_service(target) {
            return self.inner.cast(target, request);
        }
        let (Some((name, args)), Some(node)) =
            (request_parts(&request, false), self.node.upgrade())
        else {
            return;
        };
        if let Some(Op::Cast(f)) = op(&name) {
            f(&node, &name, &args);
        }
    }

    fn resolve(&self, target: Target) -> Option<u64> {
        if self.is_service(target) {
            return Some(SENTINEL);
        }
        // The process-group scope (`super::pg`), by pid or by its name.
        if matches!(target, Target::Number(super::terms::PG_NUMBER))
            || matches!(target, Target::Name(n) if n == self.pg)
        {
            return Some(super::terms::PG_NUMBER);
        }
        self.inner.resolve(target)
    }

    fn watch(&self, number: u64, down: Done<Term>) -> u64 {
        if number == SENTINEL || number == super::terms::PG_NUMBER {
            drop(down); // the service and the group scope never exit
            return WATCH_BIT | self.watches.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.watch(number, down)
    }

    fn unwatch(&self, id: u64) -> bool {
        if id & WATCH_BIT != 0 {
            return true;
        }
        self.inner.unwatch(id)
    }

    fn exit(&self, number: u64, reason: Term) {
        if number != SENTINEL && number != super::terms::PG_NUMBER {
            self.inner.exit(number, reason);
        }
    }
}

/// Decodes the arguments in `ctx`: their values, or the reply term of the failure.
fn decode_args(ctx: &mut Ctx, args: &[Term]) -> Result<Vec<Value>, Term> {
    let mut vals = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        match etf::from_term(ctx, a, &format!("arg{}", i + 1)) {
            Ok(v) => vals.push(v),
            Err(e) => {
                let u = e.to_unwind(ctx);
                return Err(reply_term(ctx, Err(u)));
            }
        }
    }
    Ok(vals)
}

/// Runs a [`Op::Bt`] operation: here with a pooled context when `inline` allows, else in a
/// fresh process.
fn run_bt(
    sys: &Arc<ActorSys>,
    run: fn(&mut Ctx, &[Value]) -> EvalResult,
    inline: fn(&Ctx, &[Value]) -> bool,
    args: Vec<Term>,
    reply: Done<Term>,
) {
    let mut ctx = sys.take_ctx();
    let vals = match decode_args(&mut ctx, &args) {
        Ok(v) => v,
        Err(t) => {
            sys.put_ctx(ctx);
            return reply(t);
        }
    };
    if inline(&ctx, &vals) {
        let r = run(&mut ctx, &vals);
        let t = reply_term(&mut ctx, r);
        sys.put_ctx(ctx);
        return reply(t);
    }
    sys.put_ctx(ctx);
    drop(vals);
    let slot: Arc<Mutex<Option<Done<Term>>>> = Arc::new(Mutex::new(Some(reply)));
    let s2 = slot.clone();
    let job = Box::new(move |ctx: &mut Ctx| {
        let t = match decode_args(ctx, &args) {
            Ok(vals) => {
                let r = run(ctx, &vals);
                reply_term(ctx, r)
            }
            Err(t) => t,
        };
        if let Some(f) = s2.lock().take() {
            f(t);
        }
        Ok(Value::Nil)
    });
    spawn_job(sys, "dist", job, move |o| {
        if let Some(f) = slot.lock().take() {
            let why = match o {
                Outcome::Exited(_) => "the request's process was killed",
                _ => "the request ended without a reply",
            };
            f(error_term("actor_dead", why));
        }
    });
}
