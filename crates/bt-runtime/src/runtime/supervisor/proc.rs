//! The supervisor process, the per-runtime [`Supervision`] registry, and the client API
//! ([`SupHandle`]).
//!
//! A supervisor is an actor that traps exits and is linked to its children (and to its
//! parent supervisor). Exit signals are control signals, handled before user messages.
//! Its roster lives in a [`Book`](crate::runtime::supervisor::Book) behind a lock shared
//! with snapshots and handles (`roster::SupShared`), so queries (`children`, `childCount`,
//! `which:`) and snapshots never message it; operations that change the roster
//! (`terminate:`, `startChild`, `terminateChild:`) are messages, so the supervisor alone
//! serialises every change. Locks are never held across a call, a stop or a child start.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::runtime::api::{RtHandle, SpawnOpts};
use crate::runtime::cx::Cx;
use crate::runtime::process::{Behaviour, ProcRef};
use crate::runtime::supervisor::history::RestartKind;
use crate::runtime::supervisor::roster::{on_exit, ChildState, Decision, EndKind, SupShared};
use crate::runtime::supervisor::{ChildStart, Shutdown, SupervisorSpec};
use crate::runtime::types::{
    CallError, ExitReason, Message, Pid, Request, Signal, SupervisorRequest, Timeout,
};
use crate::runtime::waiter::Waiter;
use crate::value::{Sym, Value};

/// Unix wall-clock time in ms (`startedAt`, `exitedAt`, `capturedAt`).
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Suspends the calling process until `p` has exited and answers its exit reason (at once
/// if it already has). With a timeout, `Err(Timeout)` when it is still alive by then.
pub fn await_exit(cx: &mut Cx<'_>, p: &ProcRef, t: Timeout) -> Result<ExitReason, CallError> {
    let w = Waiter::new(Some(cx.pid()), None);
    {
        let mut g = p.0.inner.lock();
        if let Some(r) = &g.reason {
            return Ok((**r).clone());
        }
        let w2 = w.clone();
        g.extra()
            .exit_hooks
            .push(Box::new(move |sh, r: &ExitReason| {
                w2.complete(sh, Ok(r.to_value()));
            }));
    }
    let deadline = match t {
        Timeout::Ms(ms) => Some(cx.rt().now_ms().saturating_add(ms)),
        Timeout::Infinity => None,
    };
    cx.wait(&w, deadline)?;
    Ok(p.exit_reason().unwrap_or(ExitReason::NoProc))
}

/// Why a supervisor operation failed; [`SupError::kind`] is the bt error kind.
#[derive(Clone, Debug)]
pub enum SupError {
    /// The supervisor is not running (its last pid).
    Stale(Pid),
    /// `supervise`: a child failed to start (its id and the error text).
    StartFailed { child: Sym, message: String },
    /// `startChild`: the new child's start failed.
    ChildStartFailed(String),
    /// The supervisor's registered name is taken by another process.
    NameRegistered(Sym),
    /// There is no child with this id.
    NoChild(Sym),
    /// `await_restarts`: the child had not been restarted that often in time.
    NotRestarted { child: Sym, count: u64 },
    /// The call to the supervisor failed.
    Call(CallError),
}

impl SupError {
    pub fn kind(&self) -> &'static str {
        match self {
            SupError::Stale(_) => "stale_handle",
            SupError::StartFailed { .. } => "supervisor_start_failed",
            SupError::ChildStartFailed(_) => "child_start_failed",
            SupError::NameRegistered(_) => "name_registered",
            SupError::NoChild(_) => "not_found",
            SupError::NotRestarted { .. } => "timeout",
            SupError::Call(e) => e.kind().unwrap_or("actor_dead"),
        }
    }
    pub fn message(&self) -> String {
        match self {
            SupError::Stale(p) => format!("supervisor {p} is not alive"),
            SupError::StartFailed { child, message } => {
                format!("child {child} failed to start: {message}")
            }
            SupError::ChildStartFailed(m) => format!("child failed to start: {m}"),
            SupError::NameRegistered(n) => format!("name {n} is already registered"),
            SupError::NoChild(id) => format!("the supervisor has no child {id}"),
            SupError::NotRestarted { child, count } => {
                let times = if *count == 1 { "once" } else { "times" };
                let n = if *count == 1 {
                    String::new()
                } else {
                    format!("{count} ")
                };
                format!("child {child} was not restarted {n}{times} in time")
            }
            SupError::Call(e) => format!("{e:?}"),
        }
    }
}

#[derive(Default)]
struct Registry {
    /// Top-level supervisors started with `supervise`, in start order.
    top: Vec<Arc<SupShared>>,
    /// Every supervisor process (nested ones included), by pid.
    by_pid: HashMap<Pid, Arc<SupShared>>,
}

/// The supervisors of one runtime. The embedder keeps one next to its [`RtHandle`];
/// snapshots read it. Cheap to clone.
#[derive(Clone)]
pub struct Supervision {
    rt: RtHandle,
    reg: Arc<Mutex<Registry>>,
}

/// A handle on one run of a supervisor (stale once that process has exited).
#[derive(Clone)]
pub struct SupHandle {
    pub shared: Arc<SupShared>,
    pub proc: ProcRef,
}

impl std::fmt::Debug for SupHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SupHandle({})", self.proc.pid())
    }
}

impl Supervision {
    pub fn new(rt: RtHandle) -> Supervision {
        Supervision {
            rt,
            reg: Arc::new(Mutex::new(Registry::default())),
        }
    }

    pub fn rt(&self) -> &RtHandle {
        &self.rt
    }

    /// `App supervise`: starts the supervisor and its children (in order) and registers it
    /// under `name`; if one with this id is already running, answers it.
    pub fn supervise(
        &self,
        cx: &mut Cx<'_>,
        spec: Arc<SupervisorSpec>,
        name: Option<Sym>,
    ) -> Result<SupHandle, SupError> {
        if let Some(h) = self.current(spec.id) {
            return Ok(h);
        }
        let (proc, shared) = self.start(cx, spec.clone(), None, None)?;
        if let Some(n) = name {
            if self.rt.register(n, &proc).is_err() {
                let _ = cx.stop_with(&proc, ExitReason::Shutdown, Timeout::Infinity);
                return match self.current(spec.id) {
                    Some(h) => Ok(h),
                    None => Err(SupError::NameRegistered(n)),
                };
            }
        }
        let mut reg = self.reg.lock();
        reg.top.retain(|s| s.proc().is_some_and(|p| p.is_alive()));
        reg.top.push(shared.clone());
        Ok(SupHandle { shared, proc })
    }

    /// The running top-level supervisor with this id (`App current`).
    pub fn current(&self, id: Sym) -> Option<SupHandle> {
        let reg = self.reg.lock();
        reg.top.iter().find_map(|s| {
            let b = s.book.lock();
            match &b.proc {
                Some(p) if p.is_alive() && b.spec.id == id => Some(SupHandle {
                    shared: s.clone(),
                    proc: p.clone(),
                }),
                _ => None,
            }
        })
    }

    /// Live top-level supervisors in start order.
    pub fn top_level(&self) -> Vec<SupHandle> {
        let reg = self.reg.lock();
        reg.top
            .iter()
            .filter_map(|s| {
                let p = s.proc()?;
                p.is_alive().then(|| SupHandle {
                    shared: s.clone(),
                    proc: p,
                })
            })
            .collect()
    }

    /// The live supervisor (top-level or nested) running as `pid`.
    pub fn by_pid(&self, pid: Pid) -> Option<SupHandle> {
        let s = self.reg.lock().by_pid.get(&pid).cloned()?;
        let p = s.proc()?;
        (p.pid() == pid && p.is_alive()).then_some(SupHandle { shared: s, proc: p })
    }

    /// Every live supervisor's shared record.
    pub(crate) fn all(&self) -> Vec<Arc<SupShared>> {
        self.reg.lock().by_pid.values().cloned().collect()
    }

    /// Spawns a supervisor process (linked to `parent`, if any) over `book` (a nested
    /// child's book survives its restarts) and runs its initial child starts.
    fn start(
        &self,
        cx: &mut Cx<'_>,
        spec: Arc<SupervisorSpec>,
        book: Option<Arc<SupShared>>,
        parent: Option<ProcRef>,
    ) -> Result<(ProcRef, Arc<SupShared>), SupError> {
        let shared = book.unwrap_or_else(|| SupShared::new(spec.clone()));
        let behaviour = SupervisorProc {
            shared: shared.clone(),
            sup: self.clone(),
            parent: parent.as_ref().map(ProcRef::pid),
            log: parking_lot::Mutex::new(super::report::LogRate::default()),
        };
        let opts = SpawnOpts {
            label: "supervisor",
            info: spec.class.clone(),
            trap_exits: true,
            link: parent.clone(),
            ..SpawnOpts::default()
        };
        let proc = self
            .rt
            .spawn_opts(Box::new(behaviour), opts)
            .map_err(|e| SupError::ChildStartFailed(e.kind().to_string()))?;
        shared.book.lock().begin_generation(
            proc.clone(),
            parent.as_ref().map(ProcRef::pid),
            self.rt.wall_ms(),
        );
        {
            let mut reg = self.reg.lock();
            if reg.by_pid.len() > 64 {
                reg.by_pid
                    .retain(|_, s| s.proc().is_some_and(|p| p.is_alive()));
            }
            reg.by_pid.insert(proc.pid(), shared.clone());
        }
        match cx.call(
            &proc,
            sup_request(SupervisorRequest::Init),
            Timeout::Infinity,
        ) {
            Ok(_) => Ok((proc, shared)),
            Err(CallError::Raised(v)) => Err(start_failed(&v)),
            Err(e) => Err(SupError::Call(e)),
        }
    }
}

/// A supervisor request on the control path.
fn sup_request(r: SupervisorRequest) -> Message {
    Message::request(Request::Supervisor(r), Vec::new())
}

fn start_failed(v: &Value) -> SupError {
    match v {
        Value::Tuple(t) if t.len() == 2 => SupError::StartFailed {
            child: t[0].as_sym().unwrap_or_else(|| Sym::new("?")),
            message: t[1].as_str().unwrap_or("").to_string(),
        },
        other => SupError::StartFailed {
            child: Sym::new("?"),
            message: format!("{other:?}"),
        },
    }
}

impl SupHandle {
    pub fn pid(&self) -> Pid {
        self.proc.pid()
    }
    pub fn is_alive(&self) -> bool {
        self.proc.is_alive()
    }
    pub fn spec(&self) -> Arc<SupervisorSpec> {
        self.shared.book.lock().spec.clone()
    }
    fn live(&self) -> Result<(), SupError> {
        if self.is_alive() {
            Ok(())
        } else {
            Err(SupError::Stale(self.pid()))
        }
    }
    /// Generation and restarts performed.
    pub fn counters(&self) -> (u64, u64) {
        let b = self.shared.book.lock();
        (b.generation, b.restarts_performed)
    }

    /// Ids of the children running or restarting (`children` of a static supervisor).
    pub fn child_ids(&self) -> Result<Vec<Sym>, SupError> {
        self.live()?;
        Ok(self.shared.book.lock().live_ids())
    }

    /// Running children as (id, class, process), in roster order.
    pub fn running_children(&self) -> Result<Vec<(Sym, Value, ProcRef)>, SupError> {
        self.live()?;
        let b = self.shared.book.lock();
        Ok(b.children
            .iter()
            .filter(|c| c.is_running())
            .filter_map(|c| Some((c.spec.id, c.spec.class.clone(), c.proc.clone()?)))
            .collect())
    }

    /// Number of running children (`childCount`, `count`).
    pub fn child_count(&self) -> Result<usize, SupError> {
        self.live()?;
        Ok(self.shared.book.lock().running_count())
    }

    /// Restart count of the child with this id (static children), for tests and tools.
    pub fn restart_count(&self, id: Sym) -> Option<u64> {
        let b = self.shared.book.lock();
        b.index_of_id(id).map(|i| b.children[i].restart_count)
    }

    /// State of the child with this id.
    pub fn child_state(&self, id: Sym) -> Option<ChildState> {
        let b = self.shared.book.lock();
        b.index_of_id(id).map(|i| b.children[i].state)
    }

    /// The running child whose id is `id`.
    pub fn which_id(&self, id: Sym) -> Result<Option<ProcRef>, SupError> {
        Ok(self
            .running_children()?
            .into_iter()
            .find(|(i, _, _)| *i == id)
            .map(|(_, _, p)| p))
    }

    /// `terminate:` — stops the child with this id (`#shutdown`) and does not restart it.
    pub fn terminate(&self, cx: &mut Cx<'_>, id: Sym) -> Result<(), SupError> {
        self.live()?;
        self.request(cx, sup_request(SupervisorRequest::Terminate(id)))
            .map(|_| ())
    }

    /// `terminateChild:` — stops a dynamic (or any) child by process; idempotent.
    pub fn terminate_child(&self, cx: &mut Cx<'_>, child: &ProcRef) -> Result<(), SupError> {
        self.live()?;
        let msg = sup_request(SupervisorRequest::TerminatePid(child.pid()));
        self.request(cx, msg).map(|_| ())
    }

    /// `startChild` / `startChild:` of a dynamic supervisor (`args` nil → plain spawn).
    pub fn start_child(&self, cx: &mut Cx<'_>, args: Value) -> Result<ProcRef, SupError> {
        self.live()?;
        let req = cx.rt().make_ref() as i64;
        let msg = sup_request(SupervisorRequest::StartChild { args, req });
        match self.request(cx, msg) {
            Ok(_) => self
                .shared
                .results
                .lock()
                .remove(&req)
                .ok_or_else(|| SupError::ChildStartFailed("lost".into())),
            Err(SupError::Call(CallError::Raised(v))) => Err(SupError::ChildStartFailed(
                v.as_str().unwrap_or("initialize failed").to_string(),
            )),
            Err(e) => Err(e),
        }
    }

    /// Suspends the caller until the static child `id` has been restarted at least `n` times
    /// since the supervisor started (at once if it already has) and answers its running
    /// process. `Timeout` when that has not happened in time; `Stale` when the supervisor
    /// ends first (it gave up, or was stopped).
    pub fn await_restarts(
        &self,
        cx: &mut Cx<'_>,
        id: Sym,
        n: u64,
        t: Timeout,
    ) -> Result<ProcRef, SupError> {
        if self.shared.book.lock().index_of_id(id).is_none() {
            return Err(SupError::NoChild(id));
        }
        let deadline = match t {
            Timeout::Ms(ms) => Some(cx.rt().now_ms().saturating_add(ms)),
            Timeout::Infinity => None,
        };
        loop {
            self.live()?;
            if let Some(p) = self.shared.restarted(id, n) {
                return Ok(p);
            }
            let left = match deadline {
                Some(d) => Timeout::Ms(d.saturating_sub(cx.rt().now_ms())),
                None => Timeout::Infinity,
            };
            let shared = self.shared.clone();
            let sup = self.proc.clone();
            let waited = cx.wait_external(left, move |done| {
                shared.watch(&sup, id, n, done.clone());
                // The supervisor may have restarted the child (or ended) between the check
                // above and the registration: look again now that it would wake us.
                if shared.restarted(id, n).is_some() || !sup.is_alive() {
                    done.complete(Value::Nil);
                }
            });
            match waited {
                Ok(_) => {}
                Err(CallError::Timeout) => {
                    if let Some(p) = self.shared.restarted(id, n) {
                        return Ok(p);
                    }
                    self.live()?;
                    return Err(SupError::NotRestarted {
                        child: id,
                        count: n,
                    });
                }
                Err(e) => return Err(SupError::Call(e)),
            }
        }
    }

    /// A barrier: answers once the supervisor has handled every signal delivered to it
    /// before this call (exit signals are handled before messages).
    pub fn sync(&self, cx: &mut Cx<'_>) -> Result<(), SupError> {
        self.live()?;
        self.request(cx, sup_request(SupervisorRequest::Ping))
            .map(|_| ())
    }

    /// `stop`: stops every child (reverse start order, `#shutdown`), then the supervisor.
    pub fn stop(&self, cx: &mut Cx<'_>) {
        if self.is_alive() {
            let _ = cx.stop_with(&self.proc, ExitReason::Shutdown, Timeout::Infinity);
        }
    }

    fn request(&self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, SupError> {
        match cx.call(&self.proc, msg, Timeout::Infinity) {
            Ok(v) => Ok(v),
            Err(CallError::ActorDead) => Err(SupError::Stale(self.pid())),
            Err(e) => Err(SupError::Call(e)),
        }
    }
}

/// The supervisor's behaviour.
struct SupervisorProc {
    shared: Arc<SupShared>,
    sup: Supervision,
    parent: Option<Pid>,
    /// Rate limit of the restart-failure log lines.
    log: parking_lot::Mutex<super::report::LogRate>,
}

enum Started {
    Ok(ProcRef),
    Failed(String),
}

impl SupervisorProc {
    /// Unix ms on the runtime clock (deterministic under a manual test clock).
    fn now(&self) -> u64 {
        self.sup.rt().wall_ms()
    }

    /// Starts child `idx` (its state is already `Restarting`/`Pending`), inside this process.
    fn start_child(&self, cx: &mut Cx<'_>, idx: usize) -> Started {
        let (spec, args, nested) = {
            let b = self.shared.book.lock();
            let c = &b.children[idx];
            (c.spec.clone(), c.args.clone(), c.book.clone())
        };
        let me = cx.me().clone();
        let proc = match &spec.start {
            ChildStart::Worker(f) => match f(cx, &args) {
                Ok(p) => {
                    cx.rt().link(&me, &p);
                    p
                }
                Err(e) => return Started::Failed(describe(&e)),
            },
            ChildStart::Supervisor(sspec) => {
                let nested = nested.unwrap_or_else(|| {
                    let s = SupShared::new(sspec.clone());
                    self.shared.book.lock().children[idx].book = Some(s.clone());
                    s
                });
                match self
                    .sup
                    .start(cx, sspec.clone(), Some(nested), Some(me.clone()))
                {
                    Ok((p, _)) => p,
                    Err(e) => return Started::Failed(e.message()),
                }
            }
        };
        if let Some(n) = spec.name {
            if let Err(e) = cx.rt().register(n, &proc) {
                cx.rt().kill(&proc);
                return Started::Failed(format!("cannot register {n}: {}", e.kind()));
            }
        }
        self.shared
            .book
            .lock()
            .mark_running(idx, proc.clone(), self.now());
        self.shared.wake_watchers();
        Started::Ok(proc)
    }

    /// Stops one child: graceful `#shutdown` within its grace period, then kill.
    fn shutdown_child(&self, cx: &mut Cx<'_>, proc: &ProcRef, shutdown: Shutdown) {
        if !proc.is_alive() {
            return;
        }
        let t = match shutdown {
            Shutdown::Ms(ms) => Timeout::Ms(ms),
            Shutdown::Infinity => Timeout::Infinity,
        };
        match cx.stop_with(proc, ExitReason::Shutdown, t) {
            Ok(()) => {}
            Err(_) => {
                cx.rt().kill(proc);
            }
        }
    }

    /// Stops every running child in reverse roster order and retires it.
    fn shutdown_all(&self, cx: &mut Cx<'_>) {
        loop {
            let next = {
                let b = self.shared.book.lock();
                b.children
                    .iter()
                    .rposition(|c| c.is_running())
                    .map(|i| (i, b.children[i].proc.clone(), b.children[i].spec.shutdown))
            };
            let Some((idx, proc, shutdown)) = next else {
                break;
            };
            if let Some(p) = proc {
                self.shutdown_child(cx, &p, shutdown);
            }
            self.shared.book.lock().retire(idx, self.now(), false);
        }
    }

    /// Ends this supervisor's run: children first, then exit with `reason`.
    fn end(&self, cx: &mut Cx<'_>, kind: EndKind, reason: ExitReason) {
        self.shared.book.lock().end.get_or_insert(kind);
        self.shutdown_all(cx);
        cx.exit_self(reason);
    }

    fn initial_start(&self, cx: &mut Cx<'_>) -> Result<Value, Value> {
        let n = self.shared.book.lock().children.len();
        for idx in 0..n {
            if let Started::Failed(m) = self.start_child(cx, idx) {
                let id = self.shared.book.lock().children[idx].spec.id;
                self.end(cx, EndKind::StartFailed, ExitReason::Shutdown);
                return Err(Value::tuple(vec![Value::Symbol(id), Value::str(m)]));
            }
        }
        Ok(Value::sym("ok"))
    }

    /// One restart operation under the intensity budget; false if the supervisor gave up.
    fn count_restart(&self, cx: &mut Cx<'_>) -> bool {
        let now = cx.rt().now_ms();
        let ok = {
            let mut b = self.shared.book.lock();
            let ok = b.intensity.record(now);
            if ok {
                b.restarts_performed += 1;
            }
            ok
        };
        if !ok {
            cx.log(&format!(
                "supervisor {} gave up: restart intensity exceeded",
                cx.pid()
            ));
            self.end(cx, EndKind::GaveUp, ExitReason::Shutdown);
        }
        ok
    }

    fn child_exited(&self, cx: &mut Cx<'_>, from: Pid, reason: &ExitReason) {
        let (idx, decision) = {
            let b = self.shared.book.lock();
            let Some(idx) = b.index_of_pid(from) else {
                return;
            };
            let c = &b.children[idx];
            let normal = match c.book.as_ref().and_then(|nb| nb.book.lock().end) {
                Some(EndKind::Stopped) | Some(EndKind::AutoShutdown) => true,
                Some(EndKind::GaveUp) | Some(EndKind::StartFailed) => false,
                None => reason.is_normal(),
            };
            (idx, on_exit(&b, idx, normal))
        };
        match decision {
            Decision::End => {
                let due = {
                    let now = self.now();
                    let mut b = self.shared.book.lock();
                    b.note_exit(idx, reason, RestartKind::Ended, now);
                    // Retired first, so `#allSignificant` counts this child among the ended
                    // (a dynamic child, never significant, leaves the roster instead).
                    let dynamic = b.children[idx].is_dynamic();
                    b.retire(idx, now, true);
                    !dynamic && b.auto_shutdown_due(idx)
                };
                if due {
                    self.end(cx, EndKind::AutoShutdown, ExitReason::Shutdown);
                }
            }
            Decision::Restart {
                stop,
                retire,
                start,
            } => {
                {
                    let now = self.now();
                    let mut b = self.shared.book.lock();
                    b.note_exit(idx, reason, RestartKind::Exit, now);
                    for &i in &stop {
                        let kind = if retire.contains(&i) {
                            RestartKind::Ended
                        } else {
                            RestartKind::Group
                        };
                        b.note_exit(i, &ExitReason::Shutdown, kind, now);
                    }
                    for &i in &start {
                        b.mark_restarting(i);
                    }
                }
                if !self.count_restart(cx) {
                    return;
                }
                for &i in &stop {
                    let (proc, shutdown) = {
                        let b = self.shared.book.lock();
                        (b.children[i].proc.clone(), b.children[i].spec.shutdown)
                    };
                    if let Some(p) = proc {
                        self.shutdown_child(cx, &p, shutdown);
                    }
                }
                {
                    let mut b = self.shared.book.lock();
                    for &i in &retire {
                        b.retire(i, self.now(), false);
                    }
                }
                self.start_pending(cx, &start);
            }
        }
    }

    /// Starts the children `pending` in order. A start that fails is logged and counted
    /// against the intensity like a crash; the rest are retried through this process's own
    /// mailbox (`bt_retry`, as OTP's `try_again_restart`), so a `stop`, a kill or an exit
    /// signal that arrived meanwhile is handled first (retrying in a loop here would keep the
    /// supervisor deaf to `stop` for as long as the starts kept failing).
    fn start_pending(&self, cx: &mut Cx<'_>, pending: &[usize]) {
        for (k, &i) in pending.iter().enumerate() {
            let still_due = {
                let b = self.shared.book.lock();
                b.end.is_none()
                    && b.children
                        .get(i)
                        .is_some_and(|c| c.state == super::roster::ChildState::Restarting)
            };
            if !still_due {
                continue;
            }
            if let Started::Failed(m) = self.start_child(cx, i) {
                let line = format!("supervisor {}: restart failed: {m}", cx.pid());
                for l in self.log.lock().admit(cx.rt().now_ms(), line) {
                    cx.log(&l);
                }
                if !self.count_restart(cx) {
                    return;
                }
                let me = cx.me().clone();
                cx.cast(
                    &me,
                    sup_request(SupervisorRequest::Retry(pending[k..].to_vec())),
                );
                return;
            }
        }
    }

    fn terminate_index(&self, cx: &mut Cx<'_>, idx: Option<usize>) {
        let Some(idx) = idx else { return };
        let (proc, shutdown, running) = {
            let b = self.shared.book.lock();
            let c = &b.children[idx];
            (c.proc.clone(), c.spec.shutdown, c.is_running())
        };
        if !running {
            return;
        }
        if let Some(p) = proc {
            self.shutdown_child(cx, &p, shutdown);
        }
        let now = self.now();
        let mut b = self.shared.book.lock();
        b.note_exit(idx, &ExitReason::Shutdown, RestartKind::Ended, now);
        b.retire(idx, now, false);
    }
}

fn describe(v: &Value) -> String {
    super::report::describe(v)
}

impl Behaviour for SupervisorProc {
    fn handle(&mut self, cx: &mut Cx<'_>, msg: Message) -> Result<Value, Value> {
        let request = match msg.as_request() {
            Some(Request::Supervisor(r)) => r,
            _ => {
                return Err(Value::str(format!(
                    "supervisor does not understand {}",
                    msg.selector
                )))
            }
        };
        match request {
            SupervisorRequest::Init => self.initial_start(cx),
            SupervisorRequest::Ping => Ok(Value::sym("ok")),
            SupervisorRequest::Retry(pending) => {
                let pending = pending.clone();
                self.start_pending(cx, &pending);
                Ok(Value::Nil)
            }
            SupervisorRequest::Terminate(id) => {
                let idx = {
                    let b = self.shared.book.lock();
                    b.children
                        .iter()
                        .position(|c| c.spec.id == id && c.is_running())
                        .or_else(|| b.index_of_id(id))
                };
                self.terminate_index(cx, idx);
                Ok(Value::Nil)
            }
            SupervisorRequest::TerminatePid(pid) => {
                let idx = self.shared.book.lock().index_of_pid(pid);
                self.terminate_index(cx, idx);
                Ok(Value::Nil)
            }
            SupervisorRequest::StartChild { args, req } => {
                let Some(idx) = self.shared.book.lock().add_dynamic(args) else {
                    return Err(Value::str("not a dynamic supervisor"));
                };
                match self.start_child(cx, idx) {
                    Started::Ok(p) => {
                        self.shared.results.lock().insert(req, p);
                        Ok(Value::sym("ok"))
                    }
                    Started::Failed(m) => {
                        self.shared.book.lock().children.remove(idx);
                        Err(Value::str(m))
                    }
                }
            }
        }
    }

    fn signal(&mut self, cx: &mut Cx<'_>, sig: Signal) {
        if let Signal::Exit { from, reason } = sig {
            if Some(from) == self.parent {
                self.end(cx, EndKind::Stopped, reason);
                return;
            }
            self.child_exited(cx, from, &reason);
        }
    }

    fn terminate(&mut self, cx: &mut Cx<'_>, _reason: &ExitReason) {
        self.shared.book.lock().end.get_or_insert(EndKind::Stopped);
        self.shutdown_all(cx);
    }
}
