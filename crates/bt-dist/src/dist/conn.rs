//! One live connection's control messages: what a bt node does
//! with each message a peer sends, and the calls, casts and monitors it sends. The bytes
//! (frames, ticks, the output queue) are in [`super::conn_io`].
//!
//! Handled control messages: `REG_SEND` to `net_kernel` (`{is_auth, Node}` → `yes`: what
//! `net_adm:ping` asks) and to registered bt actors (`gen_server` calls and casts);
//! `SEND` of `gen_server` requests to a bt pid and of replies to this node's outgoing calls;
//! `MONITOR_P`/`DEMONITOR_P` on bt processes (by pid or registered name; `'DOWN'` carries the
//! actor's exit reason); `MONITOR_P_EXIT` for the monitors behind this node's calls;
//! `LINK`/`UNLINK_ID` and `EXIT`/`EXIT2` between peer and bt processes; `SPAWN_REQUEST`
//! (`erpc`, `rpc`, `spawn/4` into bt classes: [`super::rpc`]). Others are ignored.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use eetf::{Atom, Pid, Reference, Term, Tuple};
use erl_dist::message::Message;
use erl_dist::term::PidOrAtom;

pub(crate) use super::conn_io::start;
pub use super::conn_io::{queue_limit, ConnIo, Outbox, MAX_FRAME};
use super::state::{node_err, Inner, Once, Peer};
pub use super::state::{CallDest, PendingCall, Watch};
pub use super::terms::{atom, frame, peer_pid};
use super::terms::{call_number, local_number, my_pid, my_ref};
use crate::interp::distribution::{CallReply, Inbound, NodeError, Target};

pub(super) fn handle(inner: &Arc<Inner>, peer: &str, m: Message) {
    match m {
        Message::RegSend(m) => to_local(
            inner,
            peer,
            m.from_pid,
            Target::Name(name_sym(&m.to_name.name)),
            m.message,
            Some(&m.to_name.name),
        ),
        Message::Send(m) => to_pid(inner, peer, None, m.to_pid, m.message),
        Message::SendSender(m) => to_pid(inner, peer, Some(m.from_pid), m.to_pid, m.message),
        Message::MonitorP(m) => monitor(inner, peer, m.from_pid, m.to_proc, m.reference),
        Message::DemonitorP(m) => {
            let id = inner
                .state
                .lock()
                .peers
                .get_mut(peer)
                .and_then(|p| p.watches.remove(&m.reference.id));
            if let (Some(id), Some(ib)) = (id, inner.inbound()) {
                ib.unwatch(id);
            }
        }
        Message::MonitorPExit(m) => call_down(inner, &m.reference, m.reason),
        Message::PayloadMonitorPExit(m) => call_down(inner, &m.reference, m.reason),
        Message::Link(m) => link(inner, peer, m.from_pid, m.to_pid),
        Message::UnlinkId(m) => {
            unlink(inner, peer, &m.from_pid, &m.to_pid);
            let ack = Message::unlink_id_ack(m.id, m.to_pid, m.from_pid);
            inner.send_to(peer, frame(ack));
        }
        Message::Unlink(m) => unlink(inner, peer, &m.from_pid, &m.to_pid),
        Message::Exit(m) => exit(inner, peer, &m.from_pid, &m.to_pid, m.reason),
        Message::Exit2(m) => exit(inner, peer, &m.from_pid, &m.to_pid, m.reason),
        Message::PayloadExit(m) => exit(inner, peer, &m.from_pid, &m.to_pid, m.reason),
        Message::PayloadExit2(m) => exit(inner, peer, &m.from_pid, &m.to_pid, m.reason),
        Message::SpawnRequest(m) => {
            super::rpc::spawn_request(inner, peer, super::rpc::SpawnReq::from_message(m))
        }
        Message::SpawnRequestTt(m) => {
            let m = erl_dist::message::SpawnRequest {
                req_id: m.req_id,
                from_pid: m.from_pid,
                group_leader: m.group_leader,
                mfa: m.mfa,
                opt_list: m.opt_list,
                arg_list: m.arg_list,
            };
            super::rpc::spawn_request(inner, peer, super::rpc::SpawnReq::from_message(m))
        }
        _ => {}
    }
}

/// A message from `peer` that nests deeper than this node decodes, decoded with each
/// too-deep part replaced by `etf_check::CUT_ATOM`. A call is answered with a
/// `not_serialisable` error, a reply fails the call it answers, any other send is dropped;
/// other control messages (exit and down reasons) are handled with the cut reason. The log
/// says why; the link stays up.
pub(super) fn refuse_deep(inner: &Arc<Inner>, peer: &str, m: Message) {
    let msg = match &m {
        Message::RegSend(x) => x.message.clone(),
        Message::Send(x) => x.message.clone(),
        Message::SendSender(x) => x.message.clone(),
        _ => {
            log_deep(peer, "a control message (handled with its deep part cut)");
            return handle(inner, peer, m);
        }
    };
    let levels = crate::codec::etf_check::MAX_DEPTH;
    let msg = match gen_call(msg) {
        Err(msg) => msg,
        Ok((from, tag, _)) => {
            let why = format!(
                "the message is nested deeper than {levels} levels (more than a bt node accepts)"
            );
            let reply = super::peer::error_term("not_serialisable", &why);
            let t = Term::from(Tuple::from(vec![tag, reply]));
            // Logged before the answer: whoever the answer wakes may end the program.
            log_deep(peer, "a call (answered with not_serialisable)");
            inner.send_to(peer, frame(Message::send(from, t)));
            return;
        }
    };
    if let Term::Tuple(t) = &msg {
        if let [Term::Reference(r), _] = &t.elements[..] {
            if let Some(n) = call_number(inner, r) {
                // Logged before the call fails: its caller may end the program at once.
                log_deep(peer, "a reply (the call fails with not_serialisable)");
                let c = inner.calls.lock().remove(&n);
                if let Some(c) = c {
                    let why = format!(
                        "the reply from {} on {peer} is nested deeper than {levels} levels",
                        c.dest.label()
                    );
                    c.refuse(inner, node_err("not_serialisable", why, None));
                }
                return;
            }
        }
    }
    log_deep(peer, "a message (dropped)");
}

/// Logs a refused too-deep message: the first, then at each power of two (a peer sending
/// many cannot flood the log).
fn log_deep(peer: &str, what: &str) {
    static REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = REFUSED.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        crate::base::log::warn(&format!(
            "bt: refused {what} from {peer}: nested deeper than {} levels ({n} refused so far)",
            crate::codec::etf_check::MAX_DEPTH
        ));
    }
}

/// A registered name from a peer: only names already interned can be registered, so no
/// Symbol is created for it.
fn name_sym(name: &str) -> crate::value::Sym {
    crate::value::Sym::lookup(name).unwrap_or(crate::value::Sym::NONE)
}

/// `{'$gen_call', {From, Tag}, Request}` → (From, Tag, Request), taken apart without
/// copies; anything else back as it was.
fn gen_call(msg: Term) -> Result<(Pid, Term, Term), Term> {
    let Term::Tuple(t) = msg else { return Err(msg) };
    let [a, ft, req] = <[Term; 3]>::try_from(t.elements).map_err(tuple)?;
    match (a, ft) {
        (Term::Atom(a), Term::Tuple(ft)) if a.name == "$gen_call" => {
            match <[Term; 2]>::try_from(ft.elements) {
                Ok([Term::Pid(from), tag]) => Ok((from, tag, req)),
                Ok(ft) => Err(tuple(vec![Term::from(a), tuple(ft.into()), req])),
                Err(ft) => Err(tuple(vec![Term::from(a), tuple(ft), req])),
            }
        }
        (a, ft) => Err(tuple(vec![a, ft, req])),
    }
}

fn tuple(elements: Vec<Term>) -> Term {
    Term::from(Tuple::from(elements))
}

/// `{'$gen_cast', Request}` → Request; anything else back as it was.
fn gen_cast(msg: Term) -> Result<Term, Term> {
    match msg {
        Term::Tuple(t) if matches!(&t.elements[..], [Term::Atom(a), _] if a.name == "$gen_cast") => {
            Ok(t.elements
                .into_iter()
                .nth(1)
                .unwrap_or_else(|| atom("undefined")))
        }
        other => Err(other),
    }
}

/// A message for a local process (by name or pid) from `peer`.
fn to_local(
    inner: &Arc<Inner>,
    peer: &str,
    _from: Pid,
    target: Target,
    msg: Term,
    name: Option<&str>,
) {
    if name == Some(super::terms::PG_NAME)
        || matches!(target, Target::Number(super::terms::PG_NUMBER))
    {
        return super::pg::received(inner, peer, msg);
    }
    let msg = match gen_call(msg) {
        Err(msg) => msg,
        Ok((from, tag, req)) => {
            if name == Some("net_kernel") {
                // `net_adm:ping`: `{is_auth, Node}` → `yes`.
                let reply = Term::from(Tuple::from(vec![tag, atom("yes")]));
                inner.send_to(peer, frame(Message::send(from, reply)));
                return;
            }
            let Some(ib) = inner.inbound() else { return };
            let weak = Arc::downgrade(inner);
            let peer_s = peer.to_string();
            let to = from.clone();
            let reply: crate::interp::actor::Done<Term> = Box::new(move |reply| {
                if let Some(inner) = weak.upgrade() {
                    let t = Term::from(Tuple::from(vec![tag, reply]));
                    inner.send_to(&peer_s, frame(Message::send(to, t)));
                }
            });
            // A caller that processes of this node wait on (through an Erlang peer) carries
            // them along: a cycle back to one of them fails at once (`super::erl_wait`).
            super::erl_wait::call(inner, peer, ib, target, from, req, reply, start_call);
            return;
        }
    };
    if let Ok(req) = gen_cast(msg) {
        if let Some(ib) = inner.inbound() {
            ib.cast(target, req);
        }
    }
}

fn to_pid(inner: &Arc<Inner>, peer: &str, from: Option<Pid>, to: Pid, msg: Term) {
    // A reply to one of this node's calls: `{Ref, Reply}`.
    if let Term::Tuple(t) = &msg {
        if let [Term::Reference(r), _] = &t.elements[..] {
            if let Some(n) = call_number(inner, r) {
                let c = inner.calls.lock().remove(&n);
                if let (Some(c), Term::Tuple(mut t)) = (c, msg) {
                    let reply = t.elements.pop().unwrap_or_else(|| atom("undefined"));
                    c.finish(inner, reply);
                }
                return;
            }
        }
    }
    let Some(number) = local_number(inner, &to) else {
        return;
    };
    let from = from.unwrap_or_else(|| to.clone());
    to_local(inner, peer, from, Target::Number(number), msg, None);
}

/// `erlang:monitor(process, Pid | {Name, Node})` from a peer process.
fn monitor(inner: &Arc<Inner>, peer: &str, from: Pid, to: PidOrAtom, reference: Reference) {
    if matches!(&to, PidOrAtom::Atom(a) if a.name == "net_kernel" || a.name == super::terms::SERVICE)
    {
        return; // this node's net_kernel and node service (no processes) never exit
    }
    let Some(ib) = inner.inbound() else { return };
    let number = match &to {
        PidOrAtom::Pid(p) => local_number(inner, p).and_then(|n| ib.resolve(Target::Number(n))),
        PidOrAtom::Atom(a) => ib.resolve(Target::Name(name_sym(&a.name))),
    };
    let key = reference.id.clone();
    let Some(number) = number else {
        let m = Message::monitor_p_exit(to, from, reference, atom("noproc"));
        inner.send_to(peer, frame(m));
        return;
    };
    let k2 = key.clone();
    let id = watch_for_peer(
        inner,
        &*ib,
        peer,
        number,
        move |p| p.watches.remove(&k2).is_some(),
        move |reason| Message::monitor_p_exit(to, from, reference, reason),
    );
    if let Some(p) = inner.state.lock().peers.get_mut(peer) {
        p.watches.insert(key, id);
    }
}

/// Watches local process `number` for `peer` (a monitor or a link it holds here): when the
/// process ends, `take` removes the peer's record of the watch and, if it was still there
/// (not demonitored, unlinked or dropped with the connection), the peer gets `notice(reason)`.
fn watch_for_peer(
    inner: &Arc<Inner>,
    ib: &dyn Inbound,
    peer: &str,
    number: u64,
    take: impl FnOnce(&mut Peer) -> bool + Send + 'static,
    notice: impl FnOnce(Term) -> Message + Send + 'static,
) -> u64 {
    let weak: Weak<Inner> = Arc::downgrade(inner);
    let peer_s = peer.to_string();
    ib.watch(
        number,
        Box::new(move |reason| {
            let Some(inner) = weak.upgrade() else { return };
            let live = inner.state.lock().peers.get_mut(&peer_s).is_some_and(take);
            if live {
                inner.send_to(&peer_s, frame(notice(reason)));
            }
        }),
    )
}

fn pid_key(p: &Pid) -> Vec<u8> {
    crate::codec::etf::term_bytes(&Term::from(p.clone()))
}

fn link(inner: &Arc<Inner>, peer: &str, from: Pid, to: Pid) {
    let Some(ib) = inner.inbound() else { return };
    let Some(number) = local_number(inner, &to) else {
        return;
    };
    let key = (pid_key(&from), number);
    let k2 = key.clone();
    let id = watch_for_peer(
        inner,
        &*ib,
        peer,
        number,
        move |p| p.links.remove(&k2).is_some(),
        move |reason| Message::exit(to, from, reason),
    );
    if let Some(p) = inner.state.lock().peers.get_mut(peer) {
        p.links.insert(key, id);
    }
}

fn unlink(inner: &Arc<Inner>, peer: &str, from: &Pid, to: &Pid) {
    let Some(number) = local_number(inner, to) else {
        return;
    };
    let id = inner
        .state
        .lock()
        .peers
        .get_mut(peer)
        .and_then(|p| p.links.remove(&(pid_key(from), number)));
    if let (Some(id), Some(ib)) = (id, inner.inbound()) {
        ib.unwatch(id);
    }
}

fn exit(inner: &Arc<Inner>, peer: &str, from: &Pid, to: &Pid, reason: Term) {
    unlink(inner, peer, from, to);
    if matches!(&reason, Term::Atom(a) if a.name == "normal") {
        return;
    }
    if let (Some(n), Some(ib)) = (local_number(inner, to), inner.inbound()) {
        ib.exit(n, reason);
    }
}

impl CallDest {
    fn proc(&self) -> PidOrAtom {
        match self {
            CallDest::Name(n) => PidOrAtom::Atom(Atom::from(n.as_str())),
            CallDest::Pid(p) => PidOrAtom::Pid(p.clone()),
        }
    }
    /// `#name` or `<0.7.0>`, for messages.
    fn label(&self) -> String {
        match self {
            CallDest::Name(n) => format!("#{n}"),
            CallDest::Pid(p) => format!("process <{}.{}>", p.id, p.serial),
        }
    }
}

impl PendingCall {
    fn clear_deadline(&mut self) {
        if let Some((key, _, d)) = self.deadline.take() {
            d.remove(key);
        }
    }
}

impl PendingCall {
    pub fn fail(mut self, e: NodeError) {
        self.clear_deadline();
        if let Some(d) = self.done.take() {
            d.call(Err(e));
        }
    }

    fn demonitor(&self, inner: &Inner) {
        if self.monitored {
            let m =
                Message::demonitor_p(self.from.clone(), self.dest.proc(), self.reference.clone());
            inner.send_to(&self.peer, frame(m));
        }
    }

    /// The reply came but cannot be taken (nested too deeply): the call fails with `e`.
    fn refuse(self, inner: &Inner, e: NodeError) {
        self.demonitor(inner);
        self.fail(e);
    }

    fn finish(mut self, inner: &Inner, reply: Term) {
        self.clear_deadline();
        self.demonitor(inner);
        if self.bt && is_noproc(&reply) {
            let e = down_error(&self, &atom("noproc"));
            return self.fail(e);
        }
        if let Some(d) = self.done.take() {
            d.call(Ok(CallReply {
                term: reply,
                bt_peer: self.bt,
            }));
        }
    }
}

/// The monitor behind a call fired: the callee is not there (`noproc`) or exited. Or a
/// monitor this node's processes set on a peer process (`watch`) fired.
fn call_down(inner: &Inner, r: &Reference, reason: Term) {
    let Some(n) = call_number(inner, r) else {
        return;
    };
    let Some(c) = inner.calls.lock().remove(&n) else {
        let w = inner.watches.lock().remove(&n);
        if let Some(w) = w {
            (w.down)(reason);
        }
        return;
    };
    let e = down_error(&c, &reason);
    c.fail(e);
}

/// `{error, noproc}`: a bt peer's answer when the callee is not there.
fn is_noproc(t: &Term) -> bool {
    matches!(t, Term::Tuple(t) if matches!(&t.elements[..],
        [Term::Atom(e), Term::Atom(r)] if e.name == "error" && r.name == "noproc"))
}

/// Why call `c` failed when its callee is down with `reason`.
fn down_error(c: &PendingCall, reason: &Term) -> NodeError {
    match (reason, &c.dest) {
        (Term::Atom(a), CallDest::Name(name)) if a.name == "noproc" => node_err(
            "no_such_process",
            format!("no process is registered as #{name} on {}", c.peer),
            None,
        ),
        (Term::Atom(a), CallDest::Pid(_)) if a.name == "noproc" => node_err(
            "actor_dead",
            format!("{} on {} is not alive", c.dest.label(), c.peer),
            None,
        ),
        (Term::Atom(a), _) if a.name == "noconnection" => node_err(
            "node_down",
            format!("the connection to {} was lost", c.peer),
            None,
        ),
        (other, _) => node_err(
            "actor_dead",
            format!(
                "{} on {} exited ({other}) before answering",
                c.dest.label(),
                c.peer
            ),
            None,
        ),
    }
}

/// `gen_server:call({name, to}, request)` (or to a pid there) from local process `from`,
/// on a connected node.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call(
    inner: Arc<Inner>,
    from: u64,
    to: String,
    dest: CallDest,
    request: Term,
    timeout: Option<Duration>,
    done: Once<Result<CallReply, NodeError>>,
    waiting: Option<Vec<Pid>>,
) {
    start_call(&inner, from, &to, &dest, request, timeout, done, waiting);
}

/// The synchronous half of [`call`] (any thread): registers the pending call and queues the
/// monitor and the request. None when the link is gone (`done` has failed `node_down`).
/// `waiting`: the processes waiting on the caller, for a call to an Erlang peer (a cycle
/// back through the callee is then seen, `super::erl_wait`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_call(
    inner: &Arc<Inner>,
    from: u64,
    to: &str,
    dest: &CallDest,
    request: Term,
    timeout: Option<Duration>,
    done: Once<Result<CallReply, NodeError>>,
    waiting: Option<Vec<Pid>>,
) -> bool {
    let n = inner.serial.fetch_add(1, Ordering::Relaxed);
    let reference = my_ref(inner, n);
    let from_pid = my_pid(inner, from);
    let bt = inner.state.lock().peers.get(to).is_some_and(|p| p.bt);
    let deadline = timeout.map(|t| {
        let key = inner.deadlines.add(n, t);
        (key, t, inner.deadlines.clone())
    });
    inner.calls.lock().insert(
        n,
        PendingCall {
            peer: to.to_string(),
            dest: dest.clone(),
            bt,
            monitored: !bt,
            from: from_pid.clone(),
            reference: reference.clone(),
            done: Some(done),
            deadline,
            waiting: waiting
                .filter(|_| !bt)
                .map(|w| (w, super::state::Counted::new(inner))),
            probed: Vec::new(),
        },
    );
    let mon = (!bt).then(|| Message::monitor_p(from_pid.clone(), dest.proc(), reference.clone()));
    let tag = Term::from(reference);
    let msg = Term::from(Tuple::from(vec![
        atom("$gen_call"),
        Term::from(Tuple::from(vec![Term::from(from_pid.clone()), tag])),
        request,
    ]));
    let m = match dest {
        CallDest::Name(name) => Message::reg_send(from_pid, Atom::from(name.as_str()), msg),
        CallDest::Pid(p) => Message::send(p.clone(), msg),
    };
    // One push (one write): the monitor, if any, then the request.
    let mut bytes = mon.map(frame).unwrap_or_default();
    bytes.extend_from_slice(&frame(m));
    let sent = inner.send_to(to, bytes);
    if !sent {
        if let Some(c) = inner.calls.lock().remove(&n) {
            c.fail(node_err(
                "node_down",
                format!("the connection to {to} was lost"),
                None,
            ));
        }
        return false;
    }
    true
}

/// Call `n`'s deadline passed (`super::deadline::reap`, started by `super::node::start`): it fails with `timeout` and stops
/// watching the callee (a late reply finds no pending call and is dropped).
pub(crate) fn expire(inner: &Inner, n: u64) {
    let c = inner.calls.lock().remove(&n);
    if let Some(mut c) = c {
        let ms = c.deadline.as_ref().map(|d| d.1.as_millis()).unwrap_or(0);
        c.deadline = None; // already removed by the reaper
        if c.monitored {
            let m = Message::demonitor_p(c.from.clone(), c.dest.proc(), c.reference.clone());
            inner.send_to(&c.peer, frame(m));
        }
        let msg = format!(
            "{} on {} did not answer within {ms} ms",
            c.dest.label(),
            c.peer
        );
        c.fail(node_err(
            "timeout",
            msg,
            Some("Use withTimeout: to wait longer"),
        ));
    }
}

/// `gen_server:cast({name, to}, request)` (or to a pid there) on a connected node.
pub(crate) fn cast(inner: &Inner, from: u64, to: &str, dest: &CallDest, request: Term) {
    let msg = Term::from(Tuple::from(vec![atom("$gen_cast"), request]));
    let m = match dest {
        CallDest::Name(name) => {
            Message::reg_send(my_pid(inner, from), Atom::from(name.as_str()), msg)
        }
        CallDest::Pid(p) => Message::send(p.clone(), msg),
    };
    inner.send_to(to, frame(m));
}
