//! Native supervisors with OTP's vocabulary.
//!
//! * [`history`] — the bounded restart history of each child (for snapshots and the observer).
//! * [`intensity`] — the restart-intensity tracker: a small pure type, time passed in.
//! * [`roster`] — the live roster and the observable bookkeeping as **one** structure
//!   ([`Book`]), and the strategy decisions as pure functions over it.
//! * [`proc`] — the supervisor process (a [`crate::runtime::Behaviour`] trapping exits),
//!   the [`Supervision`] registry a runtime's embedder keeps, and the client API.
//!
//! The supervisor does not know the interpreter: a worker child is started through a
//! [`StartFn`] callback run inside the supervisor's own process (the interpreter's callback
//! spawns the actor and runs its `initialize`).

pub mod history;
pub mod intensity;
pub mod proc;
pub mod report;
pub mod roster;

use std::sync::Arc;

use crate::runtime::cx::Cx;
use crate::runtime::process::ProcRef;
use crate::value::{Sym, Value};

pub use history::{History, RestartEvent, RestartKind, DEFAULT_HISTORY};
pub use intensity::Intensity;
pub use proc::{await_exit, SupError, SupHandle, Supervision};
pub use roster::{Book, ChildKey, ChildRecord, ChildState, Decision, EndKind};

/// Whether a child is brought back when it exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartType {
    Permanent,
    Transient,
    Temporary,
}

impl RestartType {
    /// Restarted after an exit with this reason?
    pub fn restarts(self, normal_exit: bool) -> bool {
        match self {
            RestartType::Permanent => true,
            RestartType::Transient => !normal_exit,
            RestartType::Temporary => false,
        }
    }
    pub fn from_symbol(s: &str) -> Option<RestartType> {
        match s {
            "permanent" => Some(RestartType::Permanent),
            "transient" => Some(RestartType::Transient),
            "temporary" => Some(RestartType::Temporary),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RestartType::Permanent => "permanent",
            RestartType::Transient => "transient",
            RestartType::Temporary => "temporary",
        }
    }
}

/// Which children a restart takes along; `SimpleOneForOne` is the dynamic form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    OneForOne,
    OneForAll,
    RestForOne,
    SimpleOneForOne,
}

impl Strategy {
    pub fn from_symbol(s: &str) -> Option<Strategy> {
        match s {
            "oneForOne" => Some(Strategy::OneForOne),
            "oneForAll" => Some(Strategy::OneForAll),
            "restForOne" => Some(Strategy::RestForOne),
            "simpleOneForOne" => Some(Strategy::SimpleOneForOne),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::OneForOne => "oneForOne",
            Strategy::OneForAll => "oneForAll",
            Strategy::RestForOne => "restForOne",
            Strategy::SimpleOneForOne => "simpleOneForOne",
        }
    }
}

/// Whether a supervisor stops itself when significant children end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoShutdown {
    Never,
    AnySignificant,
    AllSignificant,
}

impl AutoShutdown {
    pub fn from_symbol(s: &str) -> Option<AutoShutdown> {
        match s {
            "never" => Some(AutoShutdown::Never),
            "anySignificant" => Some(AutoShutdown::AnySignificant),
            "allSignificant" => Some(AutoShutdown::AllSignificant),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            AutoShutdown::Never => "never",
            AutoShutdown::AnySignificant => "anySignificant",
            AutoShutdown::AllSignificant => "allSignificant",
        }
    }
}

/// Grace period for stopping a child before it is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    Ms(u64),
    Infinity,
}

/// Starts one worker child inside the supervisor's process: spawn the actor, run its
/// `initialize`, answer its process (or the exception that made the start fail). `args` is
/// the spec's args (static children) or the `startChild:` argument (dynamic children).
pub type StartFn = Arc<dyn Fn(&mut Cx<'_>, &Value) -> Result<ProcRef, Value> + Send + Sync>;

/// How a child is started.
#[derive(Clone)]
pub enum ChildStart {
    /// An actor, through the embedder's callback.
    Worker(StartFn),
    /// A nested supervisor, started natively.
    Supervisor(Arc<SupervisorSpec>),
}

/// One statically declared child (or the template of a dynamic supervisor's children).
#[derive(Clone)]
pub struct ChildSpec {
    /// The child id (the spec's `id`, else the class name).
    pub id: Sym,
    /// The bt class (for snapshots and `which:`), or nil.
    pub class: Value,
    pub restart: RestartType,
    pub shutdown: Shutdown,
    pub significant: bool,
    /// Registered under this name on every (re)start.
    pub name: Option<Sym>,
    /// Start arguments handed to the [`StartFn`] (nil: plain `spawn`).
    pub args: Value,
    pub start: ChildStart,
}

impl ChildSpec {
    /// A worker child with the defaults of 6.3 (temporary, 5000 ms shutdown).
    pub fn worker(id: &str, class: Value, start: StartFn) -> ChildSpec {
        ChildSpec {
            id: Sym::new(id),
            class,
            restart: RestartType::Temporary,
            shutdown: Shutdown::Ms(5000),
            significant: false,
            name: None,
            args: Value::Nil,
            start: ChildStart::Worker(start),
        }
    }
    /// A nested supervisor child: permanent, `#infinity` shutdown.
    pub fn supervisor(spec: Arc<SupervisorSpec>) -> ChildSpec {
        ChildSpec {
            id: spec.id,
            class: spec.class.clone(),
            restart: RestartType::Permanent,
            shutdown: Shutdown::Infinity,
            significant: false,
            name: None,
            args: Value::Nil,
            start: ChildStart::Supervisor(spec),
        }
    }
    pub fn with_restart(mut self, r: RestartType) -> ChildSpec {
        self.restart = r;
        self
    }
    pub fn with_shutdown(mut self, s: Shutdown) -> ChildSpec {
        self.shutdown = s;
        self
    }
    pub fn with_significant(mut self, b: bool) -> ChildSpec {
        self.significant = b;
        self
    }
    pub fn with_name(mut self, n: &str) -> ChildSpec {
        self.name = Some(Sym::new(n));
        self
    }
    pub fn is_supervisor(&self) -> bool {
        matches!(self.start, ChildStart::Supervisor(_))
    }
}

/// A supervisor's configuration (the class side of 6.1 / 6.2).
#[derive(Clone)]
pub struct SupervisorSpec {
    /// Its id in a parent (the class name).
    pub id: Sym,
    /// The bt class, or nil.
    pub class: Value,
    pub strategy: Strategy,
    pub max_restarts: u32,
    /// Restart window in seconds.
    pub restart_window: u64,
    pub auto_shutdown: AutoShutdown,
    /// Static children in start order (empty for a dynamic supervisor).
    pub children: Vec<ChildSpec>,
    /// The template of a dynamic supervisor's children.
    pub dynamic: Option<ChildSpec>,
    /// Restart-history events kept per child ([`history`]).
    pub history_limit: usize,
}

impl SupervisorSpec {
    /// A static supervisor with the defaults of 6.1.
    pub fn new(id: &str, class: Value, children: Vec<ChildSpec>) -> SupervisorSpec {
        SupervisorSpec {
            id: Sym::new(id),
            class,
            strategy: Strategy::OneForOne,
            max_restarts: 10,
            restart_window: 60,
            auto_shutdown: AutoShutdown::Never,
            children,
            dynamic: None,
            history_limit: DEFAULT_HISTORY,
        }
    }
    /// A dynamic supervisor over `template`.
    pub fn dynamic(id: &str, class: Value, template: ChildSpec) -> SupervisorSpec {
        SupervisorSpec {
            strategy: Strategy::SimpleOneForOne,
            dynamic: Some(template),
            ..SupervisorSpec::new(id, class, Vec::new())
        }
    }
    pub fn with_strategy(mut self, s: Strategy) -> SupervisorSpec {
        self.strategy = s;
        self
    }
    pub fn with_intensity(mut self, max_restarts: u32, window_s: u64) -> SupervisorSpec {
        self.max_restarts = max_restarts;
        self.restart_window = window_s;
        self
    }
    /// Keeps the last `n` restart-history events per child.
    pub fn with_history_limit(mut self, n: usize) -> SupervisorSpec {
        self.history_limit = n;
        self
    }
    pub fn with_auto_shutdown(mut self, a: AutoShutdown) -> SupervisorSpec {
        self.auto_shutdown = a;
        self
    }
    pub fn is_dynamic(&self) -> bool {
        self.dynamic.is_some()
    }
}
