//! The live roster and the restart bookkeeping of one supervisor as **one** structure
//! ([`Book`]), plus the strategy decisions as pure functions over it.
//!
//! Facts that must survive a restart are keyed by an identity that survives it: a static
//! child's position in the declaration ([`ChildKey::Static`]), a dynamic child's spawn number
//! ([`ChildKey::Dynamic`]). A nested supervisor's own book hangs off its record in the
//! parent, so it survives the nested supervisor's restarts: that hanging record is
//! [`SupShared`] (the book behind its lock, with the `startChild` results and the callers
//! waiting for restarts), defined here because a book holds the nested ones.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::runtime::cx::Completion;
use crate::runtime::process::ProcRef;
use crate::runtime::supervisor::history::{History, RestartEvent, RestartKind};
use crate::runtime::supervisor::intensity::Intensity;
use crate::runtime::supervisor::{AutoShutdown, ChildSpec, RestartType, Strategy, SupervisorSpec};
use crate::runtime::types::{ExitReason, Pid};
use crate::value::{Sym, Value};

/// The identity of a child that survives its restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChildKey {
    /// Position in the supervisor's declaration.
    Static(usize),
    /// Spawn number within the supervisor's current generation.
    Dynamic(u64),
}

/// Where a child is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildState {
    /// Declared but not started in this generation yet (not shown in snapshots).
    Pending,
    /// Has a live process.
    Running,
    /// Caught between its exit and its new process (shown as `#restarting`, nil pid).
    Restarting,
    /// A static child that ended for good: a tombstone with its last pid and times.
    Exited,
}

/// How a supervisor's run ended (read by its parent to tell giving up from shutting down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndKind {
    /// `stop`, or stopped by its parent.
    Stopped,
    /// Restart intensity exceeded: abnormal to the parent (escalation).
    GaveUp,
    /// `autoShutdown`: normal to the parent.
    AutoShutdown,
    /// A child failed to start during `supervise`.
    StartFailed,
}

/// One child: its spec, its current (or last) process and its history.
pub struct ChildRecord {
    pub key: ChildKey,
    pub spec: ChildSpec,
    /// Start arguments (the spec's, or the `startChild:` argument).
    pub args: Value,
    pub state: ChildState,
    /// The current process, or the last one (tombstones). Set only by [`Book::mark_running`].
    pub proc: Option<ProcRef>,
    /// `proc`'s pid, kept beside it so scans of many records need not touch the processes.
    last_pid: Option<Pid>,
    pub restart_count: u64,
    /// Unix ms when the current (or last) process started.
    pub started_at_ms: Option<u64>,
    pub started_mono: Option<Instant>,
    /// Unix ms when a tombstone's process ended.
    pub exited_at_ms: Option<u64>,
    /// The child ended by itself (not stopped by its supervisor): counts for auto-shutdown.
    pub ended_by_itself: bool,
    /// Whether this record has ever had a process (its next start is a restart).
    pub ever_started: bool,
    /// A nested supervisor's bookkeeping (survives its restarts).
    pub book: Option<Arc<SupShared>>,
    /// The last exits the supervisor handled for this child (survives its restarts).
    pub history: History,
}

impl ChildRecord {
    pub fn new(key: ChildKey, spec: ChildSpec, args: Value) -> ChildRecord {
        ChildRecord {
            key,
            spec,
            args,
            state: ChildState::Pending,
            proc: None,
            last_pid: None,
            restart_count: 0,
            started_at_ms: None,
            started_mono: None,
            exited_at_ms: None,
            ended_by_itself: false,
            ever_started: false,
            book: None,
            history: History::new(crate::runtime::supervisor::DEFAULT_HISTORY),
        }
    }
    pub fn pid(&self) -> Option<Pid> {
        self.last_pid
    }
    pub fn is_running(&self) -> bool {
        self.state == ChildState::Running
    }
    pub fn is_dynamic(&self) -> bool {
        matches!(self.key, ChildKey::Dynamic(_))
    }
    pub fn id(&self) -> Sym {
        self.spec.id
    }
}

/// The roster and bookkeeping of one supervisor, kept across its own restarts when it is a
/// nested child (generation, restart counts of static children).
pub struct Book {
    pub spec: Arc<SupervisorSpec>,
    /// The current (or last) supervisor process.
    pub proc: Option<ProcRef>,
    pub parent: Option<Pid>,
    /// 1 for the first run, +1 each time the parent starts it again.
    pub generation: u64,
    /// Restart operations over all generations.
    pub restarts_performed: u64,
    /// Static children (declaration order), then dynamic ones (start order).
    pub children: Vec<ChildRecord>,
    pub next_spawn: u64,
    pub intensity: Intensity,
    /// Set once the current run has ended.
    pub end: Option<EndKind>,
    pub started_at_ms: u64,
    pub started_mono: Instant,
}

impl Book {
    /// A fresh book (generation 0: the first `begin_generation` makes it 1).
    pub fn new(spec: Arc<SupervisorSpec>) -> Book {
        let children = spec
            .children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut r = ChildRecord::new(ChildKey::Static(i), c.clone(), c.args.clone());
                r.history = History::new(spec.history_limit);
                r
            })
            .collect();
        let intensity = Intensity::new(spec.max_restarts, spec.restart_window);
        Book {
            spec,
            proc: None,
            parent: None,
            generation: 0,
            restarts_performed: 0,
            children,
            next_spawn: 0,
            intensity,
            end: None,
            started_at_ms: 0,
            started_mono: Instant::now(),
        }
    }

    /// A new run of the supervisor: generation +1, dynamic children forgotten, every static
    /// child pending again (its next start counts as a restart if it ever ran).
    pub fn begin_generation(&mut self, proc: ProcRef, parent: Option<Pid>, now_ms: u64) {
        self.generation += 1;
        self.proc = Some(proc);
        self.parent = parent;
        self.end = None;
        self.intensity.reset();
        self.children.retain(|c| !c.is_dynamic());
        self.next_spawn = 0;
        let generation = self.generation;
        for c in &mut self.children {
            // A child that ran in the previous generation starts again because its
            // supervisor did (history: `parent`).
            if c.ever_started {
                let proc = c.proc.clone();
                c.history.push(RestartEvent::new(
                    now_ms,
                    &ExitReason::Shutdown,
                    RestartKind::Parent,
                    generation,
                    proc,
                ));
            }
            c.state = ChildState::Pending;
            c.ended_by_itself = false;
        }
        self.started_at_ms = now_ms;
        self.started_mono = Instant::now();
    }

    pub fn index_of_pid(&self, pid: Pid) -> Option<usize> {
        self.children
            .iter()
            .position(|c| c.is_running() && c.pid() == Some(pid))
    }

    /// Index of the child whose id is `id` (static children, first match).
    pub fn index_of_id(&self, id: Sym) -> Option<usize> {
        self.children.iter().position(|c| c.spec.id == id)
    }

    /// Records a new process for child `idx`; a restart if it ever ran before.
    pub fn mark_running(&mut self, idx: usize, proc: ProcRef, now_ms: u64) {
        let c = &mut self.children[idx];
        if c.ever_started {
            c.restart_count += 1;
        }
        c.ever_started = true;
        c.state = ChildState::Running;
        c.last_pid = Some(proc.pid());
        c.proc = Some(proc);
        c.started_at_ms = Some(now_ms);
        c.started_mono = Some(Instant::now());
        c.exited_at_ms = None;
        c.ended_by_itself = false;
    }

    /// Records in child `idx`'s history that its process ended (`reason`) and what the
    /// supervisor does about it (`kind`), at `now_ms` on the runtime clock.
    pub fn note_exit(&mut self, idx: usize, reason: &ExitReason, kind: RestartKind, now_ms: u64) {
        let generation = self.generation;
        let c = &mut self.children[idx];
        let proc = c.proc.clone();
        c.history
            .push(RestartEvent::new(now_ms, reason, kind, generation, proc));
    }

    pub fn mark_restarting(&mut self, idx: usize) {
        self.children[idx].state = ChildState::Restarting;
    }

    /// Child `idx` ended for good: a static child becomes a tombstone, a dynamic one is
    /// dropped.
    pub fn retire(&mut self, idx: usize, now_ms: u64, by_itself: bool) {
        if self.children[idx].is_dynamic() {
            self.children.remove(idx);
            return;
        }
        let c = &mut self.children[idx];
        c.state = ChildState::Exited;
        c.exited_at_ms = Some(now_ms);
        c.ended_by_itself = by_itself;
    }

    /// Adds a dynamic child record (pending) and answers its index.
    pub fn add_dynamic(&mut self, args: Value) -> Option<usize> {
        let template = self.spec.dynamic.clone()?;
        let key = ChildKey::Dynamic(self.next_spawn);
        self.next_spawn += 1;
        let mut r = ChildRecord::new(key, template, args);
        r.history = History::new(self.spec.history_limit);
        self.children.push(r);
        Some(self.children.len() - 1)
    }

    pub fn running_count(&self) -> usize {
        self.children.iter().filter(|c| c.is_running()).count()
    }

    /// Ids of the children running or restarting, in roster order.
    pub fn live_ids(&self) -> Vec<Sym> {
        self.children
            .iter()
            .filter(|c| matches!(c.state, ChildState::Running | ChildState::Restarting))
            .map(|c| c.spec.id)
            .collect()
    }

    /// Whether an auto-shutdown is due after child `idx` ended by itself.
    pub fn auto_shutdown_due(&self, idx: usize) -> bool {
        let c = &self.children[idx];
        if !c.spec.significant || c.is_dynamic() {
            return false;
        }
        match self.spec.auto_shutdown {
            AutoShutdown::Never => false,
            AutoShutdown::AnySignificant => true,
            AutoShutdown::AllSignificant => self
                .children
                .iter()
                .filter(|c| c.spec.significant && !c.is_dynamic())
                .all(|c| c.state == ChildState::Exited && c.ended_by_itself),
        }
    }
}

/// What to do when a child exits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Ends for good (tombstone or dropped); nothing else changes.
    End,
    /// Restart: stop `stop` (already in reverse declaration order), retire `retire`
    /// (temporary children taken down by the group), then start `start` in order.
    Restart {
        stop: Vec<usize>,
        retire: Vec<usize>,
        start: Vec<usize>,
    },
}

/// The decision for child `idx` exiting (normally or not), by its restart type and the
/// supervisor's strategy. Pure: reads the roster, changes nothing.
pub fn on_exit(book: &Book, idx: usize, normal: bool) -> Decision {
    let failed = &book.children[idx];
    if !failed.spec.restart.restarts(normal) {
        return Decision::End;
    }
    let range: Vec<usize> = match book.spec.strategy {
        Strategy::OneForOne | Strategy::SimpleOneForOne => {
            return Decision::Restart {
                stop: Vec::new(),
                retire: Vec::new(),
                start: vec![idx],
            }
        }
        Strategy::OneForAll => (0..book.children.len())
            .filter(|&i| !book.children[i].is_dynamic())
            .collect(),
        Strategy::RestForOne => (idx..book.children.len())
            .filter(|&i| !book.children[i].is_dynamic())
            .collect(),
    };
    group(book, idx, &range)
}

/// A group restart over `range` (declaration order) after `failed` exited.
fn group(book: &Book, failed: usize, range: &[usize]) -> Decision {
    let mut stop = Vec::new();
    let mut retire = Vec::new();
    let mut start = Vec::new();
    for &i in range {
        let c = &book.children[i];
        let temporary = c.spec.restart == RestartType::Temporary;
        if i != failed && c.is_running() {
            stop.push(i);
            if temporary {
                retire.push(i);
            }
        }
        if !temporary {
            start.push(i);
        }
    }
    stop.reverse();
    Decision::Restart {
        stop,
        retire,
        start,
    }
}

/// A supervisor's shared record: its book, the results of `startChild` requests waiting to
/// be picked up by their callers, and the callers waiting for a child's restarts.
pub struct SupShared {
    pub book: Mutex<Book>,
    pub(super) results: Mutex<HashMap<i64, ProcRef>>,
    watchers: Mutex<Watchers>,
}

/// Callers suspended in [`SupHandle::await_restarts`]. Lock order: `book` before `watchers`
/// (the supervisor wakes them after updating the book; a caller registers, then reads it).
#[derive(Default)]
struct Watchers {
    list: Vec<RestartWatch>,
    /// The supervisor process whose exit hook wakes every watcher (one hook per process).
    hooked: Option<Pid>,
}

/// One caller waiting until child `id` has been restarted `count` times.
struct RestartWatch {
    id: Sym,
    count: u64,
    done: Completion,
}

impl SupShared {
    pub fn new(spec: Arc<SupervisorSpec>) -> Arc<SupShared> {
        Arc::new(SupShared {
            book: Mutex::new(Book::new(spec)),
            results: Mutex::new(HashMap::new()),
            watchers: Mutex::new(Watchers::default()),
        })
    }
    /// The current (or last) process of this supervisor.
    pub fn proc(&self) -> Option<ProcRef> {
        self.book.lock().proc.clone()
    }

    /// The running process of child `id` once it has been restarted at least `n` times.
    pub(super) fn restarted(&self, id: Sym, n: u64) -> Option<ProcRef> {
        let b = self.book.lock();
        let c = &b.children[b.index_of_id(id)?];
        if c.restart_count >= n && c.is_running() {
            c.proc.clone()
        } else {
            None
        }
    }

    /// Registers a caller of [`SupHandle::await_restarts`]; the first one for a supervisor
    /// process also hooks its exit, which wakes them all.
    pub(super) fn watch(self: &Arc<Self>, sup: &ProcRef, id: Sym, count: u64, done: Completion) {
        let mut w = self.watchers.lock();
        w.list.retain(|x| !x.done.is_done());
        w.list.push(RestartWatch { id, count, done });
        if w.hooked == Some(sup.pid()) {
            return;
        }
        w.hooked = Some(sup.pid());
        let me = Arc::downgrade(self);
        let mut g = sup.0.inner.lock();
        if g.reason.is_some() {
            return;
        }
        g.extra().exit_hooks.push(Box::new(move |_, _| {
            if let Some(s) = me.upgrade() {
                let all = std::mem::take(&mut s.watchers.lock().list);
                for x in all {
                    x.done.complete(Value::Nil);
                }
            }
        }));
    }

    /// Wakes the watchers whose child has now been restarted often enough (called by the
    /// supervisor after each child start).
    pub(super) fn wake_watchers(&self) {
        let due: Vec<Completion> = {
            let b = self.book.lock();
            let mut w = self.watchers.lock();
            if w.list.is_empty() {
                return;
            }
            let (due, keep) = std::mem::take(&mut w.list).into_iter().partition(|x| {
                x.done.is_done()
                    || b.index_of_id(x.id).is_some_and(|i| {
                        let c = &b.children[i];
                        c.restart_count >= x.count && c.is_running()
                    })
            });
            w.list = keep;
            due.into_iter().map(|x: RestartWatch| x.done).collect()
        };
        for c in due {
            c.complete(Value::Nil);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::supervisor::{ChildSpec, StartFn};

    fn noop() -> StartFn {
        Arc::new(|_cx, _args| Err(Value::Nil))
    }

    fn spec(strategy: Strategy, kinds: &[RestartType]) -> Arc<SupervisorSpec> {
        let children = kinds
            .iter()
            .enumerate()
            .map(|(i, &r)| ChildSpec::worker(&format!("c{i}"), Value::Nil, noop()).with_restart(r))
            .collect();
        Arc::new(SupervisorSpec::new("S", Value::Nil, children).with_strategy(strategy))
    }

    /// A book whose children all count as running (no processes needed for the decisions).
    fn running(strategy: Strategy, kinds: &[RestartType]) -> Book {
        let mut b = Book::new(spec(strategy, kinds));
        for c in &mut b.children {
            c.state = ChildState::Running;
            c.ever_started = true;
        }
        b
    }

    use RestartType::{Permanent as P, Temporary as Tm, Transient as Tr};

    #[test]
    fn restart_types_follow_the_table() {
        assert!(P.restarts(true) && P.restarts(false));
        assert!(!Tr.restarts(true) && Tr.restarts(false));
        assert!(!Tm.restarts(true) && !Tm.restarts(false));
    }

    #[test]
    fn one_for_one_restarts_only_the_failed_child() {
        let b = running(Strategy::OneForOne, &[P, P, P]);
        assert_eq!(
            on_exit(&b, 1, false),
            Decision::Restart {
                stop: vec![],
                retire: vec![],
                start: vec![1]
            }
        );
    }

    #[test]
    fn temporary_and_normal_transient_exits_end() {
        let b = running(Strategy::OneForAll, &[Tm, Tr]);
        assert_eq!(on_exit(&b, 0, false), Decision::End);
        assert_eq!(on_exit(&b, 1, true), Decision::End);
        assert!(matches!(on_exit(&b, 1, false), Decision::Restart { .. }));
    }

    #[test]
    fn one_for_all_stops_others_in_reverse_and_drops_temporaries() {
        let mut b = running(Strategy::OneForAll, &[P, Tm, Tr, P]);
        // The transient child had already ended normally: it comes back with the group.
        b.children[2].state = ChildState::Exited;
        assert_eq!(
            on_exit(&b, 0, false),
            Decision::Restart {
                stop: vec![3, 1],
                retire: vec![1],
                start: vec![0, 2, 3]
            }
        );
    }

    #[test]
    fn rest_for_one_takes_the_later_children_only() {
        let b = running(Strategy::RestForOne, &[P, P, Tm, P]);
        assert_eq!(
            on_exit(&b, 1, false),
            Decision::Restart {
                stop: vec![3, 2],
                retire: vec![2],
                start: vec![1, 3]
            }
        );
    }

    #[test]
    fn tombstones_and_generations_keep_counts() {
        let mut b = Book::new(spec(Strategy::OneForOne, &[P, Tm]));
        for c in &mut b.children {
            c.ever_started = true;
            c.restart_count = 2;
            c.state = ChildState::Running;
        }
        b.retire(1, 1234, true);
        assert_eq!(b.children[1].state, ChildState::Exited);
        assert_eq!(b.children[1].exited_at_ms, Some(1234));
        assert_eq!(b.live_ids(), vec![Sym::new("c0")]);
        assert_eq!(b.running_count(), 1);
        // A dynamic child is dropped, not tombstoned.
        let mut d = Book::new(Arc::new(SupervisorSpec::dynamic(
            "D",
            Value::Nil,
            ChildSpec::worker("w", Value::Nil, noop()),
        )));
        let i = d.add_dynamic(Value::Nil).unwrap();
        assert_eq!(d.children[i].key, ChildKey::Dynamic(0));
        d.retire(i, 5, true);
        assert!(d.children.is_empty());
    }

    #[test]
    fn auto_shutdown_any_and_all() {
        let mk = |a: AutoShutdown| {
            let mut s = (*spec(Strategy::OneForOne, &[Tr, Tr, P])).clone();
            s.auto_shutdown = a;
            s.children[0].significant = true;
            s.children[1].significant = true;
            let mut b = Book::new(Arc::new(s));
            for c in &mut b.children {
                c.state = ChildState::Running;
            }
            b
        };
        let mut any = mk(AutoShutdown::AnySignificant);
        any.retire(0, 1, true);
        assert!(any.auto_shutdown_due(0));
        let mut all = mk(AutoShutdown::AllSignificant);
        all.retire(0, 1, true);
        assert!(!all.auto_shutdown_due(0));
        all.retire(1, 2, true);
        assert!(all.auto_shutdown_due(1));
        // Stopped by the supervisor does not count.
        let mut all2 = mk(AutoShutdown::AllSignificant);
        all2.retire(0, 1, false);
        all2.retire(1, 2, true);
        assert!(!all2.auto_shutdown_due(1));
        let mut never = mk(AutoShutdown::Never);
        never.retire(0, 1, true);
        assert!(!never.auto_shutdown_due(0));
    }
}
