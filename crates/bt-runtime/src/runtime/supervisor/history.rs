//! Restart history: per child, a bounded list of the last exits its supervisor handled —
//! when, why, what the supervisor did about it, and in which generation of the supervisor.
//!
//! It lives in the child's [`ChildRecord`] (so it survives the child's restarts, and a nested
//! supervisor's restarts too, like `restartCount`), is copied into snapshots, and is read by
//! `aNode restartHistory` in bt, by the JSON form (`restartHistory` of each node) and by the
//! live page. Times come from the runtime clock ([`crate::runtime::RtHandle::wall_ms`]), so a
//! manual test clock makes them deterministic.
//!
//! [`ChildRecord`]: crate::runtime::supervisor::ChildRecord

use std::collections::VecDeque;
use std::sync::Arc;

use crate::runtime::process::ProcRef;
use crate::runtime::types::{ExitReason, Pid};
use crate::value::{Sym, Value};

/// Events kept per child unless the supervisor spec says otherwise.
pub const DEFAULT_HISTORY: usize = 20;

/// What the supervisor did after a child's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartKind {
    /// The child's own exit; it was restarted.
    Exit,
    /// Stopped and restarted along with a failing sibling (`oneForAll`, `restForOne`).
    Group,
    /// Started again because its supervisor started a new generation.
    Parent,
    /// Not restarted: it ended for good (a tombstone, or a dynamic child dropped).
    Ended,
}

impl RestartKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RestartKind::Exit => "exit",
            RestartKind::Group => "group",
            RestartKind::Parent => "parent",
            RestartKind::Ended => "ended",
        }
    }
}

/// One handled exit.
#[derive(Clone, Debug)]
pub struct RestartEvent {
    /// Unix ms on the runtime clock when the supervisor handled it.
    pub at_ms: u64,
    /// The exit reason as a bt value (`#killed`, an exception …).
    pub reason: Value,
    /// A short text for JSON and the page (`killed`, `error: boom` …).
    pub reason_text: Arc<str>,
    pub kind: RestartKind,
    /// The supervisor's generation when it happened.
    pub generation: u64,
    /// The process that ended (kept so bt sees a Pid even after the runtime forgot it).
    pub proc: Option<ProcRef>,
}

impl RestartEvent {
    pub fn new(
        at_ms: u64,
        reason: &ExitReason,
        kind: RestartKind,
        generation: u64,
        proc: Option<ProcRef>,
    ) -> RestartEvent {
        RestartEvent {
            at_ms,
            reason: reason.to_value(),
            reason_text: reason_text(reason).into(),
            kind,
            generation,
            proc,
        }
    }
    /// The pid of the process that ended.
    pub fn pid(&self) -> Option<Pid> {
        self.proc.as_ref().map(ProcRef::pid)
    }
}

/// The last `limit` events of one child, oldest first.
#[derive(Clone, Debug)]
pub struct History {
    events: VecDeque<RestartEvent>,
    limit: usize,
    /// Events pushed out by the bound.
    pub dropped: u64,
}

impl History {
    pub fn new(limit: usize) -> History {
        History {
            events: VecDeque::new(),
            limit,
            dropped: 0,
        }
    }
    pub fn push(&mut self, e: RestartEvent) {
        if self.limit == 0 {
            self.dropped += 1;
            return;
        }
        if self.events.len() == self.limit {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(e);
    }
    pub fn len(&self) -> usize {
        self.events.len()
    }
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    pub fn limit(&self) -> usize {
        self.limit
    }
    pub fn iter(&self) -> impl Iterator<Item = &RestartEvent> {
        self.events.iter()
    }
    /// A copy for a snapshot (no allocation when empty).
    pub fn to_boxed(&self) -> Box<[RestartEvent]> {
        if self.events.is_empty() {
            Box::new([])
        } else {
            self.events.iter().cloned().collect()
        }
    }
}

/// Most of a reason's text: 200 characters.
const REASON_MAX: usize = 200;

/// `normal`, `killed`, `shutdown`, `noproc`, `panic: msg`, a Symbol's name, a String, or for
/// an exception `kind: message` (its `kind` and `message` fields).
pub fn reason_text(r: &ExitReason) -> String {
    let s = match r {
        ExitReason::Normal => "normal".to_string(),
        ExitReason::Killed => "killed".to_string(),
        ExitReason::Shutdown => "shutdown".to_string(),
        ExitReason::NoProc => "noproc".to_string(),
        ExitReason::Panic(m) => format!("panic: {m}"),
        ExitReason::Custom(v) => value_text(v),
    };
    if s.chars().count() > REASON_MAX {
        let mut t: String = s.chars().take(REASON_MAX).collect();
        t.push('…');
        t
    } else {
        s
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Symbol(s) => s.as_str().to_string(),
        Value::Str(s) => s.to_string(),
        Value::Object(inst) => {
            let field = |name: &str| {
                inst.class
                    .field_index(Sym::new(name))
                    .and_then(|i| inst.fields.get(i))
            };
            let kind = field("kind").and_then(|k| k.as_sym());
            let msg = field("message").and_then(|m| m.as_str().map(str::to_string));
            match (kind, msg) {
                (Some(k), Some(m)) if !m.is_empty() => format!("{}: {m}", k.as_str()),
                (Some(k), _) => k.as_str().to_string(),
                (None, Some(m)) => m,
                (None, None) => inst.class.name.as_str().to_string(),
            }
        }
        Value::Tuple(t) => {
            let parts: Vec<String> = t.iter().map(value_text).collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at: u64) -> RestartEvent {
        RestartEvent::new(at, &ExitReason::Killed, RestartKind::Exit, 1, None)
    }

    #[test]
    fn history_keeps_the_last_n() {
        let mut h = History::new(3);
        for t in 1..=5 {
            h.push(ev(t));
        }
        let at: Vec<u64> = h.iter().map(|e| e.at_ms).collect();
        assert_eq!(at, vec![3, 4, 5]);
        assert_eq!(h.dropped, 2);
        let mut none = History::new(0);
        none.push(ev(1));
        assert!(none.is_empty());
        assert_eq!(none.dropped, 1);
    }

    #[test]
    fn reasons_read_as_short_texts() {
        assert_eq!(reason_text(&ExitReason::Killed), "killed");
        assert_eq!(reason_text(&ExitReason::Panic("x".into())), "panic: x");
        assert_eq!(
            reason_text(&ExitReason::Custom(Value::sym("badState"))),
            "badState"
        );
        let long = "y".repeat(500);
        let t = reason_text(&ExitReason::Custom(Value::str(&long)));
        assert_eq!(t.chars().count(), REASON_MAX + 1);
    }
}
