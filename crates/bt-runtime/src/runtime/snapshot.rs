//! Process snapshots: an immutable picture of the live
//! supervision trees, taken by walking the supervisors once.
//!
//! For each supervisor the walk copies what it needs out of the [`Book`] under its lock,
//! releases the lock, then descends — a parent's lock is never held while reading a child.
//! It never messages a process, so it never blocks on a busy actor; a child caught between
//! its exit and its new process is a `#restarting` node with no pid. At most
//! [`SnapOptions::limit`] children are expanded per supervisor (else `truncated`), and the
//! walk stops at depth 64 with one warning line per omitted subtree.
//!
//! `default` vs `system` is decided by one deny-list, [`is_runtime_process`]. The JSON form
//! (schema `bt.processes/1`) lives in [`json`]; what changed between two snapshots in [`diff`].
//!
//! [`Book`]: crate::runtime::supervisor::Book

pub mod diff;
pub mod json;
pub mod transfer;

use std::sync::Arc;
use std::time::Instant;

use crate::runtime::api::{LogSink, ProcessInfo, RtHandle};
use crate::runtime::process::ProcRef;
use crate::runtime::supervisor::roster::SupShared;
use crate::runtime::supervisor::{
    AutoShutdown, ChildKey, ChildState, RestartEvent, Strategy, Supervision,
};
use crate::runtime::types::Pid;
use crate::value::{Sym, Value};

/// The default per-supervisor child cap.
pub const DEFAULT_LIMIT: usize = 200;
/// The depth guard (roots are depth 1).
pub const MAX_DEPTH: usize = 64;

/// `kind` of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    BeamtalkSupervisor,
    BeamtalkActor,
    OtpSupervisor,
    OtpProcess,
    Restarting,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::BeamtalkSupervisor => "beamtalkSupervisor",
            NodeKind::BeamtalkActor => "beamtalkActor",
            NodeKind::OtpSupervisor => "otpSupervisor",
            NodeKind::OtpProcess => "otpProcess",
            NodeKind::Restarting => "restarting",
        }
    }
    pub fn is_supervisor(self) -> bool {
        matches!(self, NodeKind::BeamtalkSupervisor | NodeKind::OtpSupervisor)
    }
}

/// `state` of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    Running,
    Restarting,
    Exited,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Running => "running",
            NodeState::Restarting => "restarting",
            NodeState::Exited => "exited",
        }
    }
}

/// Supervision data of a bt supervisor node.
#[derive(Clone, Debug, PartialEq)]
pub struct SupInfo {
    pub strategy: Strategy,
    pub max_restarts: u32,
    pub restart_window: u64,
    /// None for dynamic supervisors.
    pub auto_shutdown: Option<AutoShutdown>,
    pub generation: u64,
    pub restarts_performed: u64,
}

/// One process in a snapshot.
#[derive(Clone, Debug)]
pub struct SnapNode {
    pub pid: Option<Pid>,
    /// The process behind `pid` (kept so a tombstone's or a dead process's pid stays a Pid
    /// value after the runtime has forgotten the process).
    pub proc: Option<ProcRef>,
    pub registered_name: Option<Sym>,
    pub kind: NodeKind,
    /// The bt class (`Value::Class`), or nil for runtime processes.
    pub class: Value,
    pub state: NodeState,
    pub restart_count: u64,
    pub started_at: Option<u64>,
    pub exited_at: Option<u64>,
    pub uptime_ms: Option<u64>,
    pub child_count: usize,
    pub truncated: bool,
    /// Boxed: only supervisors have it, and a small node keeps big walks cache-friendly.
    pub supervision: Option<Box<SupInfo>>,
    /// A restarting child declared as a supervisor (counted as one in `totals`).
    pub declared_supervisor: bool,
    /// The identity that survives restarts (a supervised child's key in its supervisor),
    /// and the child id; None for roots and runtime processes. Diffs match nodes by them.
    pub key: Option<ChildKey>,
    pub id: Option<Sym>,
    /// The child's restart history, oldest first (empty for roots and runtime processes).
    pub history: Box<[RestartEvent]>,
    pub children: Vec<SnapNode>,
}

impl SnapNode {
    /// A node with the hand-built defaults of 7.3 for everything but these.
    pub fn new(proc: Option<ProcRef>, kind: NodeKind, class: Value, state: NodeState) -> SnapNode {
        SnapNode {
            pid: proc.as_ref().map(ProcRef::pid),
            proc,
            registered_name: None,
            kind,
            class,
            state,
            restart_count: 0,
            started_at: None,
            exited_at: None,
            uptime_ms: None,
            child_count: 0,
            truncated: false,
            supervision: None,
            declared_supervisor: false,
            key: None,
            id: None,
            history: Box::new([]),
            children: Vec::new(),
        }
    }

    /// Whether `totals` counts this node as a supervisor.
    pub fn counts_as_supervisor(&self) -> bool {
        self.kind.is_supervisor() || self.declared_supervisor
    }

    /// Pre-order walk with depth (roots are 1).
    pub fn walk<'a>(&'a self, depth: usize, f: &mut dyn FnMut(&'a SnapNode, usize)) {
        f(self, depth);
        for c in &self.children {
            c.walk(depth + 1, f);
        }
    }
}

/// `totals` of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub supervisors: usize,
    pub workers: usize,
    pub running: usize,
    pub exited: usize,
    pub restarts: u64,
    pub max_depth: usize,
}

/// A snapshot: a forest of nodes, where and when it was taken.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub roots: Vec<SnapNode>,
    /// Unix ms.
    pub captured_at: u64,
    pub node: String,
}

impl Snapshot {
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for r in &self.roots {
            r.walk(1, &mut |n, d| {
                if n.counts_as_supervisor() {
                    t.supervisors += 1;
                } else {
                    t.workers += 1;
                }
                match n.state {
                    NodeState::Running => t.running += 1,
                    NodeState::Exited => t.exited += 1,
                    NodeState::Restarting => {}
                }
                t.restarts += n.restart_count;
                t.max_depth = t.max_depth.max(d);
            });
        }
        t
    }

    /// Every node in pre-order.
    pub fn flat(&self) -> Vec<&SnapNode> {
        let mut v = Vec::new();
        for r in &self.roots {
            r.walk(1, &mut |n, _| v.push(n));
        }
        v
    }
}

/// Snapshot options.
#[derive(Clone)]
pub struct SnapOptions {
    /// Children expanded per supervisor (None: no cap).
    pub limit: Option<usize>,
    /// Node name reported in the snapshot.
    pub node: String,
    /// Where the depth-guard warning lines go (default: stderr).
    pub warn: LogSink,
}

impl Default for SnapOptions {
    fn default() -> Self {
        SnapOptions {
            limit: Some(DEFAULT_LIMIT),
            node: "nonode@nohost".to_string(),
            warn: bt_base::base::log::facade(),
        }
    }
}

/// The one deny-list: the runtime's own service processes (numbered `<0.N.1>`) and processes
/// registered under a `bt_` name never appear in `default`.
pub fn is_runtime_process(pid: Pid, name: Option<Sym>) -> bool {
    pid.service || name.is_some_and(|n| n.as_str().starts_with("bt_"))
}

/// Why `from:` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromError {
    /// The root is not alive (`stale_handle`).
    Stale(Pid),
}

impl FromError {
    pub fn kind(&self) -> &'static str {
        "stale_handle"
    }
    pub fn message(&self) -> String {
        match self {
            FromError::Stale(p) => format!("supervisor {p} is not alive"),
        }
    }
}

/// Live status of a process (`status`), read from its record without messaging it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// Class name, or the service/label name for runtime processes.
    pub module: String,
    pub queue_length: usize,
    /// Bytes the process holds in the runtime (`ProcRef::memory_bytes`).
    pub memory: usize,
    /// Casts dropped at a full mailbox (`maxMailbox`).
    pub dropped_casts: u64,
}

/// `status` of the process `pid`: None when it is dead (never blocks, never raises).
pub fn status(rt: &RtHandle, pid: Pid) -> Option<Status> {
    let p = rt.lookup(pid)?;
    if !p.is_alive() {
        return None;
    }
    let module = match p.info().class_object_name() {
        Some(c) => c.as_str().to_string(),
        None => p
            .name()
            .map_or_else(|| p.label().to_string(), |n| n.as_str().to_string()),
    };
    Some(Status {
        module,
        queue_length: p.mailbox_len(),
        memory: p.memory_bytes(),
        dropped_casts: p.dropped_casts(),
    })
}

struct Walker<'a> {
    opts: &'a SnapOptions,
    /// Read once per snapshot: clock reads can be syscalls on virtual machines.
    now: Instant,
}

/// What the walk copies out of one child record under its supervisor's lock.
struct ChildCopy {
    state: ChildState,
    proc: Option<ProcRef>,
    class: Value,
    restart_count: u64,
    started_at: Option<u64>,
    started_mono: Option<Instant>,
    exited_at: Option<u64>,
    declared_supervisor: bool,
    nested: Option<Arc<SupShared>>,
    key: ChildKey,
    id: Sym,
    history: Box<[RestartEvent]>,
}

impl Walker<'_> {
    fn uptime(&self, mono: Option<Instant>) -> Option<u64> {
        mono.map(|t| self.now.saturating_duration_since(t).as_millis() as u64)
    }

    /// A supervisor node for `shared`'s current run, at `depth`.
    fn supervisor(&self, shared: &SupShared, depth: usize) -> Option<SnapNode> {
        let (proc, info, class, started_at, started_mono, copies, running) = {
            let b = shared.book.lock();
            let proc = b.proc.clone()?;
            let spec = &b.spec;
            let info = SupInfo {
                strategy: spec.strategy,
                max_restarts: spec.max_restarts,
                restart_window: spec.restart_window,
                auto_shutdown: (!spec.is_dynamic()).then_some(spec.auto_shutdown),
                generation: b.generation,
                restarts_performed: b.restarts_performed,
            };
            let mut copies: Vec<ChildCopy> = Vec::with_capacity(b.children.len());
            copies.extend(
                b.children
                    .iter()
                    .filter(|c| c.state != ChildState::Pending)
                    .map(|c| ChildCopy {
                        state: c.state,
                        proc: c.proc.clone(),
                        class: c.spec.class.clone(),
                        restart_count: c.restart_count,
                        started_at: c.started_at_ms,
                        started_mono: c.started_mono,
                        exited_at: c.exited_at_ms,
                        declared_supervisor: c.spec.is_supervisor(),
                        nested: c.book.clone(),
                        key: c.key,
                        id: c.spec.id,
                        history: c.history.to_boxed(),
                    }),
            );
            (
                proc,
                info,
                spec.class.clone(),
                b.started_at_ms,
                b.started_mono,
                copies,
                b.running_count(),
            )
        };
        // The lock is released: now read processes and descend.
        let name = proc.name();
        let mut n = SnapNode::new(
            Some(proc),
            NodeKind::BeamtalkSupervisor,
            class,
            NodeState::Running,
        );
        n.registered_name = name;
        n.started_at = Some(started_at);
        n.uptime_ms = self.uptime(Some(started_mono));
        n.supervision = Some(Box::new(info));
        n.child_count = running;
        if self.opts.limit.is_some_and(|l| copies.len() > l) {
            n.truncated = true;
            return Some(n);
        }
        if depth >= MAX_DEPTH && !copies.is_empty() {
            n.truncated = true;
            (self.opts.warn)(&format!(
                "warning: supervision tree deeper than {MAX_DEPTH} levels; subtree below {} omitted",
                label(&n)
            ));
            return Some(n);
        }
        n.children = copies
            .into_iter()
            .map(|c| self.child(c, depth + 1))
            .collect();
        Some(n)
    }

    fn child(&self, mut c: ChildCopy, depth: usize) -> SnapNode {
        let (key, id, history) = (c.key, c.id, std::mem::take(&mut c.history));
        let mut n = self.child_node(c, depth);
        n.key = Some(key);
        n.id = Some(id);
        n.history = history;
        n
    }

    fn child_node(&self, c: ChildCopy, depth: usize) -> SnapNode {
        match c.state {
            ChildState::Running | ChildState::Pending => {
                let live_nested = c
                    .nested
                    .as_ref()
                    .filter(|nb| nb.proc().map(|p| p.pid()) == c.proc.as_ref().map(ProcRef::pid))
                    .and_then(|nb| self.supervisor(nb, depth));
                let mut n = match live_nested {
                    Some(n) => n,
                    None => {
                        let name = c.proc.as_ref().and_then(ProcRef::name);
                        let mut n = SnapNode::new(
                            c.proc,
                            NodeKind::BeamtalkActor,
                            c.class,
                            NodeState::Running,
                        );
                        n.registered_name = name;
                        n
                    }
                };
                n.restart_count = c.restart_count;
                n.started_at = c.started_at;
                n.uptime_ms = self.uptime(c.started_mono);
                n
            }
            ChildState::Restarting => {
                let mut n =
                    SnapNode::new(None, NodeKind::Restarting, c.class, NodeState::Restarting);
                n.restart_count = c.restart_count;
                n.declared_supervisor = c.declared_supervisor;
                n
            }
            ChildState::Exited => {
                let kind = if c.declared_supervisor {
                    NodeKind::BeamtalkSupervisor
                } else {
                    NodeKind::BeamtalkActor
                };
                let mut n = SnapNode::new(c.proc, kind, c.class, NodeState::Exited);
                n.restart_count = c.restart_count;
                n.started_at = c.started_at;
                n.exited_at = c.exited_at;
                n
            }
        }
    }
}

/// The label of a node in print formats and warnings: class name, else registered name.
pub fn label(n: &SnapNode) -> String {
    match class_name(&n.class) {
        Some(c) => c,
        None => n
            .registered_name
            .map_or_else(|| n.kind.as_str().to_string(), |s| s.as_str().to_string()),
    }
}

/// The class name of a node's class value (a Class, or a Symbol in native tests).
pub fn class_name(v: &Value) -> Option<String> {
    v.class_object_name().map(|s| s.as_str().to_string())
}

/// A single process as a one-node tree.
fn process_node(p: &ProcessInfo, kind: NodeKind, now_wall: u64) -> SnapNode {
    let class = match p.proc.info() {
        v if kind == NodeKind::BeamtalkActor && v.class_object_name().is_some() => v.clone(),
        _ => Value::Nil,
    };
    let mut n = SnapNode::new(Some(p.proc.clone()), kind, class, NodeState::Running);
    n.registered_name = p.name;
    n.started_at = Some(p.started_at_ms);
    n.uptime_ms = Some(now_wall.saturating_sub(p.started_at_ms));
    n
}

/// Numbers of the local user processes some live supervisor owns (and of the supervisors
/// themselves), sorted: merged against the ordered process table in one pass.
fn supervised(sup: &Supervision) -> Vec<u64> {
    let mut owned = Vec::new();
    for s in sup.all() {
        let b = s.book.lock();
        if let Some(p) = &b.proc {
            if p.is_alive() {
                owned.push(p.pid());
                owned.extend(
                    b.children
                        .iter()
                        .filter(|c| c.is_running())
                        .filter_map(|c| c.pid()),
                );
            }
        }
    }
    let mut numbers: Vec<u64> = owned
        .into_iter()
        .filter(|p| !p.service)
        .map(|p| p.number)
        .collect();
    numbers.sort_unstable();
    numbers
}

/// Live user actors that no supervisor owns, in spawn order. The process table is ordered
/// by number, like `owned`, so one merge pass skips the supervised ones without touching
/// their records; the table lock is held only for that pass.
fn unsupervised_actors(sup: &Supervision, owned: &[u64]) -> Vec<ProcRef> {
    let table = sup.rt().0.procs.lock();
    let mut j = 0;
    let mut out = Vec::new();
    for (number, p) in table.users() {
        while j < owned.len() && owned[j] < number {
            j += 1;
        }
        if owned.get(j) == Some(&number) {
            continue;
        }
        if p.label() == "actor" {
            out.push(p.clone());
        }
    }
    out
}

/// `ProcessNavigation default`: the user's supervisors (start order) with their subtrees,
/// then every live actor without a supervisor (spawn order). Never fails.
pub fn default_snapshot(sup: &Supervision, opts: &SnapOptions) -> Snapshot {
    let w = Walker {
        opts,
        now: Instant::now(),
    };
    let mut roots: Vec<SnapNode> = sup
        .top_level()
        .iter()
        .filter_map(|h| w.supervisor(&h.shared, 1))
        .collect();
    let owned = supervised(sup);

    let now_wall = sup.rt().wall_ms();
    // User actors in spawn order (the process table is ordered by number; services sort
    // after user processes). Copy the handles out, then read each one.
    for p in unsupervised_actors(sup, &owned) {
        let name = p.name();
        if p.is_alive() && !is_runtime_process(p.pid(), name) {
            let info = ProcessInfo {
                pid: p.pid(),
                name,
                label: p.label(),
                status: crate::runtime::ProcStatus::Idle,
                mailbox_len: 0,
                started_at_ms: p.started_at_ms(),
                proc: p,
            };
            roots.push(process_node(&info, NodeKind::BeamtalkActor, now_wall));
        }
    }
    Snapshot {
        roots,
        captured_at: sup.rt().wall_ms(),
        node: opts.node.clone(),
    }
}

/// `ProcessNavigation system`: a tree rooted at the runtime's own supervisor (`bt_runtime`,
/// pid `<N.0.1>`) over the service processes and every process that is not an actor, then
/// exactly the roots of `default`.
pub fn system_snapshot(sup: &Supervision, opts: &SnapOptions) -> Snapshot {
    let mut d = default_snapshot(sup, opts);
    d.roots.insert(0, runtime_root(sup, opts));
    d
}

/// The name of the runtime's own supervisor process, the root of `system`.
const RUNTIME_ROOT: &str = "bt_runtime";

/// The runtime's own supervisor process (`bt_runtime`), a service started on first use: it
/// takes no messages of its own; `system` lists the service processes and the processes
/// that are not actors under it.
fn runtime_root_proc(rt: &RtHandle) -> Option<ProcRef> {
    let name = Sym::new(RUNTIME_ROOT);
    if let Some(p) = rt.whereis(name) {
        return Some(p);
    }
    let opts = crate::runtime::SpawnOpts {
        name: Some(name),
        service: true,
        label: "runtime",
        ..crate::runtime::SpawnOpts::default()
    };
    match rt.spawn_opts(
        Box::new(crate::runtime::handler(|_, _| Ok(Value::Nil))),
        opts,
    ) {
        Ok(p) => Some(p),
        // Started by a concurrent `system` in between.
        Err(_) => rt.whereis(name),
    }
}

/// The `bt_runtime` node of `system`, with the service processes and the processes that are
/// not actors as its children.
fn runtime_root(sup: &Supervision, opts: &SnapOptions) -> SnapNode {
    let rt = sup.rt();
    let now_wall = rt.wall_ms();
    let root_proc = runtime_root_proc(rt);
    let root_pid = root_proc.as_ref().map(ProcRef::pid);
    let mut services = Vec::new();
    for p in rt.processes(true) {
        if Some(p.pid) == root_pid {
            continue;
        }
        let runtime = is_runtime_process(p.pid, p.name);
        if runtime || (p.label != "actor" && p.label != "supervisor") {
            services.push(process_node(&p, NodeKind::OtpProcess, now_wall));
        }
    }
    let mut root = SnapNode::new(
        root_proc.clone(),
        NodeKind::OtpSupervisor,
        Value::Nil,
        NodeState::Running,
    );
    root.pid = Some(root_pid.unwrap_or(Pid {
        node: rt.0.cfg.node,
        number: 0,
        service: true,
    }));
    if let Some(p) = &root_proc {
        root.started_at = Some(p.started_at_ms());
        root.uptime_ms = Some(now_wall.saturating_sub(p.started_at_ms()));
    }
    root.registered_name = Some(Sym::new(RUNTIME_ROOT));
    root.child_count = services.len();
    if opts.limit.is_some_and(|l| services.len() > l) {
        root.truncated = true;
    } else {
        root.children = services;
    }
    root
}

/// `ProcessNavigation from: pid` (and `from:limit:`): the subtree of a live supervisor, or a
/// one-node tree for another live process; `Stale` when it is not alive.
pub fn from_pid(sup: &Supervision, pid: Pid, opts: &SnapOptions) -> Result<Snapshot, FromError> {
    let w = Walker {
        opts,
        now: Instant::now(),
    };
    let runtime_root_pid = sup.rt().whereis(Sym::new(RUNTIME_ROOT)).map(|p| p.pid());
    let root = if let Some(h) = sup.by_pid(pid) {
        w.supervisor(&h.shared, 1)
    } else if runtime_root_pid == Some(pid) {
        // Re-rooting at the runtime's own supervisor: its subtree as `system` shows it.
        Some(runtime_root(sup, opts))
    } else {
        let rt = sup.rt();
        rt.lookup(pid).filter(ProcRef::is_alive).map(|p| {
            let info = ProcessInfo {
                pid,
                name: p.name(),
                label: p.label(),
                status: p.status(),
                mailbox_len: p.mailbox_len(),
                started_at_ms: p.started_at_ms(),
                proc: p.clone(),
            };
            let kind = if info.label == "actor" && !is_runtime_process(pid, info.name) {
                NodeKind::BeamtalkActor
            } else {
                NodeKind::OtpProcess
            };
            process_node(&info, kind, sup.rt().wall_ms())
        })
    };
    match root {
        Some(r) if r.pid == Some(pid) => Ok(Snapshot {
            roots: vec![r],
            captured_at: sup.rt().wall_ms(),
            node: opts.node.clone(),
        }),
        _ => Err(FromError::Stale(pid)),
    }
}
