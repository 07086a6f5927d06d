//! Runtime values as [`NativeObj`]s: actor handles (also `withTimeout:` proxies), name-resolving
//! proxies, Pids, References, Timers, Durations and AtomicCounter handles.
//!
//! Identity and order: actors and pids by process number (a Pid
//! before the actor handles of the same process), name proxies last by name; References by
//! creation; Durations with the library objects, by length.

use std::any::Any;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::interp::eval::Ctx;
use crate::runtime::{Pid, ProcRef, Timeout, TimerRef};
use crate::value::{ClassRef, Native, NativeObj, Sym, Value};

/// Wraps a native object as a value.
pub fn native(v: impl NativeObj) -> Value {
    Value::Native(Arc::new(Native(Box::new(v))))
}

/// The native object of type `T` inside `v`, if any.
pub fn downcast<T: 'static>(v: &Value) -> Option<&T> {
    match v {
        Value::Native(n) => n.0.as_any().downcast_ref::<T>(),
        _ => None,
    }
}

/// `0.7.0` (a pid without the angle brackets).
pub fn pid_label(p: Pid) -> String {
    format!("{}.{}.{}", p.node, p.number, u8::from(p.service))
}

/// A handle to an actor process; with `proxy` it is a `withTimeout:` proxy (its sends use
/// `timeout`; `stop` stops only the proxy, never the target).
pub struct ActorRef {
    /// The actor the messages go to (for a proxy: its target).
    pub proc: ProcRef,
    pub class: ClassRef,
    pub timeout: Timeout,
    pub proxy: bool,
    /// A local `withTimeout:` proxy's own TimeoutProxy process: its identity, pid,
    /// liveness, `stop`, `kill`, monitors and names. None for plain handles and for proxies
    /// that arrived from another node (those have no process of their own).
    pub own: Option<ProcRef>,
    /// Set only on the `self` of a block that crossed to another process: the copy of
    /// the actor's state slots the block's `self.x` reads and writes there.
    pub state: Option<Arc<Mutex<Vec<Value>>>>,
}

impl ActorRef {
    pub fn value(proc: ProcRef, class: ClassRef) -> Value {
        native(ActorRef {
            proc,
            class,
            timeout: Timeout::DEFAULT,
            proxy: false,
            own: None,
            state: None,
        })
    }
    /// The class of the actor behind this handle: for a `withTimeout:` proxy (class
    /// TimeoutProxy) the class recorded in the target's spawn info.
    pub fn target_class(&self) -> ClassRef {
        match (self.proxy, self.proc.info()) {
            (true, Value::Class(c)) => c.clone(),
            _ => self.class.clone(),
        }
    }

    /// The process this handle stands for: a local proxy's own process, else the actor.
    pub fn identity(&self) -> &ProcRef {
        self.own.as_ref().unwrap_or(&self.proc)
    }

    /// `Actor(Counter, 0.7.0)`.
    pub fn label(&self) -> String {
        format!(
            "Actor({}, {})",
            self.class.name,
            pid_label(self.identity().pid())
        )
    }
}

impl NativeObj for ActorRef {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn class_ref(&self) -> Option<&ClassRef> {
        Some(&self.class)
    }
    fn print_string(&self) -> String {
        self.label()
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other.as_any().downcast_ref::<ActorRef>().is_some_and(|o| {
            o.identity().pid() == self.identity().pid()
                && o.proxy == self.proxy
                && o.proc.pid() == self.proc.pid()
        })
    }
    fn hash_code(&self) -> u64 {
        self.identity().pid().number
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let p = self.identity().pid();
        (
            5,
            vec![
                p.node as u64,
                p.number,
                u64::from(p.service),
                1 + self.proxy as u64,
            ],
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `Foo named: #n`: looks the name up again at every send; with `global`, `Foo named: #n
/// scope: #global`, which looks it up in the cluster registry at every send.
pub struct NameRef {
    pub name: Sym,
    pub class: ClassRef,
    /// The class name it prints with: `class`'s, or for a global name held on another node
    /// by an actor whose class is not loaded here, that actor's class name there.
    pub class_name: Sym,
    pub global: bool,
}

impl NativeObj for NameRef {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let scope = if self.global { "global" } else { "registered" };
        format!("Actor({}, {scope}, {})", self.class_name, self.name)
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<NameRef>()
            .is_some_and(|o| o.name == self.name && o.global == self.global)
    }
    fn hash_code(&self) -> u64 {
        self.name.index() as u64 ^ 0x4e41_4d45
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k = vec![u64::MAX, u64::MAX, u64::MAX];
        k.extend(self.name.as_str().chars().map(|c| c as u64));
        (5, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Implements [`NativeObj`] for a handle that holds its `class` and whose identity is a key:
/// equal iff the keys are equal (same concrete type), with the given printString, hash and
/// term-order key. Each part is a closure-like `|v| expr` over the object.
macro_rules! native_by_key {
    ($ty:ty {
        key: |$k:ident| $key:expr,
        print: |$p:ident| $print:expr,
        hash: |$h:ident| $hash:expr,
        order: |$o:ident| $order:expr $(,)?
    }) => {
        impl $crate::value::NativeObj for $ty {
            fn class(&self) -> $crate::value::ClassRef {
                self.class.clone()
            }
            fn print_string(&self) -> String {
                let $p = self;
                $print
            }
            fn equals(&self, other: &dyn $crate::value::NativeObj) -> bool {
                let mine = {
                    let $k = self;
                    $key
                };
                other
                    .as_any()
                    .downcast_ref::<$ty>()
                    .is_some_and(|$k| $key == mine)
            }
            fn hash_code(&self) -> u64 {
                let $h = self;
                $hash
            }
            fn order_key(&self) -> (u8, Vec<u64>) {
                let $o = self;
                $order
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
        }
    };
}
pub(crate) use native_by_key;

/// `NativeObj` for a value that only carries something between the runtime's parts inside a
/// message (a job, a relayed `^`) and never reaches bt code as data: equal only to itself,
/// printed as `$print`, sorting after everything else.
macro_rules! native_carrier {
    ($ty:ty, $print:expr) => {
        impl $crate::value::NativeObj for $ty {
            fn class(&self) -> $crate::value::ClassRef {
                self.class.clone()
            }
            fn print_string(&self) -> String {
                $print.to_string()
            }
            fn equals(&self, other: &dyn $crate::value::NativeObj) -> bool {
                std::ptr::eq(
                    self as *const $ty as *const u8,
                    other.as_any() as *const dyn std::any::Any as *const u8,
                )
            }
            fn hash_code(&self) -> u64 {
                0
            }
            fn order_key(&self) -> (u8, Vec<u64>) {
                (9, Vec::new())
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
        }
    };
}
pub(crate) use native_carrier;

/// A process id.
pub struct PidVal {
    pub proc: ProcRef,
    pub class: ClassRef,
}

native_by_key!(PidVal {
    key: |v| v.proc.pid(),
    print: |v| v.proc.pid().to_string(),
    hash: |v| v.proc.pid().number.wrapping_mul(31),
    order: |v| {
        let p = v.proc.pid();
        (5, vec![p.node as u64, p.number, u64::from(p.service), 0])
    },
});

/// A monitor reference (`#Ref<N>`).
pub struct RefVal {
    pub id: u64,
    pub target: ProcRef,
    pub class: ClassRef,
}

native_by_key!(RefVal {
    key: |v| v.id,
    print: |v| format!("#Ref<{}>", v.id),
    hash: |v| v.id,
    order: |v| (3, vec![v.id]),
});

/// A Timer (`after:do:` / `every:do:`).
pub struct TimerVal {
    pub timer: TimerRef,
    pub serial: u64,
    pub class: ClassRef,
}

native_by_key!(TimerVal {
    key: |v| v.serial,
    print: |_v| "Timer".to_string(),
    hash: |v| v.serial,
    order: |v| (9, name_key("Timer", &[v.serial])),
});

/// printString: non-zero parts largest first (`1h 30m 15s`, `0ms`, `-2s`).
pub fn print_duration(ms: i64) -> String {
    if ms == 0 {
        return "0ms".to_string();
    }
    let neg = ms < 0;
    let mut rest = ms.unsigned_abs();
    let mut parts = Vec::new();
    for (unit, name) in [
        (86_400_000u64, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
        (1, "ms"),
    ] {
        let n = rest / unit;
        rest %= unit;
        if n > 0 {
            parts.push(format!("{n}{name}"));
        }
    }
    let s = parts.join(" ");
    if neg {
        format!("-{s}")
    } else {
        s
    }
}

/// A length of time in milliseconds.
pub struct DurationVal {
    pub ms: i64,
    pub class: ClassRef,
}

native_by_key!(DurationVal {
    key: |v| v.ms,
    print: |v| print_duration(v.ms),
    hash: |v| v.ms as u64 ^ 0xD0_0000,
    order: |v| (9, name_key("Duration", &[(v.ms as u64) ^ (1 << 63)])),
});

/// An AtomicCounter handle (the value lives in the actor system, by name).
pub struct CounterVal {
    pub name: Sym,
    pub class: ClassRef,
}

native_by_key!(CounterVal {
    key: |v| v.name,
    print: |v| format!("AtomicCounter({})", v.name),
    hash: |v| v.name.index() as u64 ^ 0xC0_0000,
    order: |v| {
        let k: Vec<u64> = v.name.as_str().chars().map(|c| c as u64).collect();
        (9, name_key("AtomicCounter", &k))
    },
});

/// Rank-9 keys sort by class name first: the name's characters, a 0 separator, then `rest`.
fn name_key(class: &str, rest: &[u64]) -> Vec<u64> {
    let mut k: Vec<u64> = class.chars().map(|c| c as u64 + 1).collect();
    k.push(0);
    k.extend_from_slice(rest);
    k
}

/// A job for the main program's process (see `Interpreter::run`).
pub type Job = Box<dyn FnOnce(&mut Ctx) + Send>;

/// Carries a [`Job`] inside a message.
pub struct JobBox {
    pub job: Mutex<Option<Job>>,
    pub class: ClassRef,
}

native_carrier!(JobBox, "Job");
