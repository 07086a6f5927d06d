//! The program: everything processes share — the class table, primitive tables, source files,
//! protocols, options and the output sink. One `Arc<Program>` per [`Interpreter`](crate::interp::Interpreter);
//! each process has its own [`Ctx`](crate::interp::eval::Ctx) pointing at it. Host functions
//! take the context as `eval::context::Ctx` (this file holds them and never reads a context,
//! so it does not name the evaluator).

use crate::interp::class::ClassExt;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};

use crate::interp::class::{Builtin, Class, ClassKind};
use crate::interp::method_table::Method;
use crate::value::{ClassRef, Sym, Value};

mod value_class;

/// Direct references to the built-in classes the evaluator needs on hot paths.
pub struct Core {
    pub proto_object: ClassRef,
    pub object: ClassRef,
    pub value: ClassRef,
    pub actor: ClassRef,
    pub class: ClassRef,
    pub metaclass: ClassRef,
    pub undefined: ClassRef,
    pub boolean: ClassRef,
    pub true_: ClassRef,
    pub false_: ClassRef,
    pub number: ClassRef,
    pub integer: ClassRef,
    pub float: ClassRef,
    pub character: ClassRef,
    pub string: ClassRef,
    pub symbol: ClassRef,
    pub binary: ClassRef,
    pub block: ClassRef,
    pub collection: ClassRef,
    pub list: ClassRef,
    pub array: ClassRef,
    pub tuple: ClassRef,
    pub dictionary: ClassRef,
    pub set: ClassRef,
    pub bag: ClassRef,
    pub queue: ClassRef,
    pub interval: ClassRef,
    pub exception: ClassRef,
    pub error: ClassRef,
    pub runtime_error: ClassRef,
    pub type_error: ClassRef,
    pub instantiation_error: ClassRef,
    pub result: ClassRef,
    pub compiled_method: ClassRef,
    pub testcase: ClassRef,
}

/// Selectors interned once.
#[derive(Clone)]
pub struct Syms {
    pub print_string: Sym,
    pub display_string: Sym,
    pub dnu: Sym,
    pub new: Sym,
    pub current: Sym,
    pub initialize: Sym,
    pub value: Sym,
    pub signal: Sym,
    pub user_error: Sym,
    pub badarith: Sym,
    pub if_true: Sym,
    pub if_false: Sym,
    pub if_true_if_false: Sym,
    pub if_false_if_true: Sym,
    pub and: Sym,
    pub or: Sym,
    pub while_true: Sym,
    pub while_false: Sym,
    pub times_repeat: Sym,
    pub to_do: Sym,
    pub le: Sym,
    pub ge: Sym,
    pub add: Sym,
}

/// A loaded source file (for `file:line:col` in reports).
pub struct SourceFile {
    pub path: String,
    pub src: Arc<str>,
    /// Where each line starts, computed on the first `line_col` (most inputs of an embedder's
    /// `eval` never report a position, and scanning them for lines was per-eval work).
    line_starts: std::sync::OnceLock<Vec<u32>>,
}

impl SourceFile {
    pub fn new(path: String, src: Arc<str>) -> SourceFile {
        SourceFile {
            path,
            src,
            line_starts: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0u32)
                .chain(
                    self.src
                        .bytes()
                        .enumerate()
                        .filter(|(_, b)| *b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect()
        })
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, pos: u32) -> (usize, usize) {
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = line_starts[line] as usize;
        let end = (pos as usize).min(self.src.len());
        let col = self
            .src
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(end - start);
        (line + 1, col + 1)
    }
}

/// A declared protocol.
#[derive(Clone, Debug)]
pub struct ProtocolInfo {
    pub name: Sym,
    pub extending: Option<Sym>,
    /// Instance-side required selectors declared here.
    pub selectors: Vec<Sym>,
    /// Class-side required selectors declared here.
    pub class_selectors: Vec<Sym>,
}

pub type OutputSink = Box<dyn FnMut(&str) + Send>;

/// A host function registered by an embedder (`bt::Engine::register_fn`): called with the
/// receiver and the arguments of a send whose method is the host trampoline.
pub type HostFn = Arc<
    dyn Fn(
            &mut crate::interp::eval::context::Ctx,
            &Value,
            &[Value],
        ) -> crate::interp::eval::context::EvalResult
        + Send
        + Sync,
>;

/// Free slots and files waiting for their blocks to go: the state of `Program::source_gc`,
/// which `interp::source_gc` (its functions, `impl Program`) keeps.
#[derive(Default)]
pub struct SourceGc {
    /// File ids whose slot holds a tombstone and may be reused.
    pub(crate) free: Vec<u32>,
    /// File ids released once none of their blocks is alive.
    pub(crate) pending: Vec<(u32, Vec<Weak<crate::interp::eval::code::FnCode>>)>,
    /// Top-level blocks the value codec encoded (they may come back from another node):
    /// kept alive, so their files are never released.
    pub(crate) pinned: Vec<Arc<crate::interp::eval::code::FnCode>>,
}

pub struct Program {
    /// Every class by name (`class_named` and `all_classes` take in the built-in library's
    /// classes first when they are taken in on first use).
    pub classes: RwLock<HashMap<Sym, ClassRef>>,
    /// The built-in library when its classes are taken in on first use
    /// (`loader::library::LazyLibrary`).
    pub library: std::sync::OnceLock<Arc<dyn crate::interp::class::PendingLibrary>>,
    pub core: Core,
    pub syms: Syms,
    /// Bumped whenever a method dictionary or the class table changes (method caches).
    pub epoch: AtomicU64,
    /// The primitive tables (shared by every program of the process).
    pub prims: &'static crate::interp::registry::SharedPrims,
    pub files: RwLock<Vec<SourceFile>>,
    pub protocols: RwLock<BTreeMap<Sym, ProtocolInfo>>,
    pub opts: InterpreterOptions,
    pub out: Mutex<OutputSink>,
    /// `System arguments`.
    pub args: RwLock<Vec<String>>,
    /// `Program commandName`.
    pub command_name: RwLock<String>,
    /// Set when a method is installed on a number class with an arithmetic selector: the
    /// evaluator's Integer fast paths are then disabled.
    pub arith_overridden: AtomicBool,
    /// TestCase classes derived to hold a field added by `self.x :=`.
    pub derived: Mutex<HashMap<(usize, Sym), ClassRef>>,
    pub block_serial: AtomicU64,
    /// The real blocks of each loaded file's top-level code, by file id (`FnCode::blocks`),
    /// so the value codec can find a top-level block's code again.
    pub unit_blocks: RwLock<HashMap<u32, Vec<Arc<crate::interp::eval::code::FnCode>>>>,
    /// Released and free slots of `files` (`interp::source_gc`).
    pub(crate) source_gc: Mutex<SourceGc>,
    /// Classes and methods replaced or removed while the program runs. They are kept until
    /// the program is dropped, because method caches point at them without counting
    /// (`eval::hit`).
    graveyard: Mutex<Vec<Retired>>,
    /// Host functions by (defining class name, selector), installed by an embedder; their
    /// methods are the primitive `engine::host::call` (per program, no global registry).
    pub host_fns: RwLock<HashMap<(Sym, Sym), HostFn, foldhash::fast::RandomState>>,
    /// Set (once) by an embedder with limits: makes the preemption hook (and its reduction
    /// step) installed for the length of one run — a main-program job (`MainActor`, given
    /// the main process), an actor's message or a timer/monitor callback
    /// (`ActorSys::take_ctx`, given None).
    pub ctx_hook: std::sync::OnceLock<CtxHookFactory>,
    /// Set (once) by an embedder with `actor_max_memory`: each actor's limit in bytes and
    /// the engine's account its account counts into (`interp::actor::memlimit`).
    pub actor_memory: std::sync::OnceLock<(usize, Option<&'static crate::memory::Account>)>,
    /// The most bytes one primitive may allocate in one step (`EngineBuilder::max_allocation`
    /// and `max_memory`; `usize::MAX` when unlimited), checked by `Ctx::reserve`.
    pub max_allocation: std::sync::atomic::AtomicUsize,
    /// Set by an embedder (`bt::Engine`): `Program exit:` in an actor or callback fails that
    /// message instead of ending the host process.
    pub embedded: AtomicBool,
    /// The distribution layer of a named node (`bt run --name`, `crate::dist`), used by the
    /// Node primitives; unset on `nonode@nohost`.
    pub dist: std::sync::OnceLock<Arc<dyn crate::interp::distribution::Distribution>>,
    /// The Erlang node `Erlang` calls without a native implementation are forwarded to
    /// (`bt run --erlang-peer NODE`, `prims::erlang`); unset: such calls are `undef`.
    pub erlang_peer: std::sync::OnceLock<crate::value::Sym>,
    /// Capabilities an embedding host granted (`capability`; only read when embedded).
    pub capabilities: crate::interp::capability::Grants,
}

/// See [`Program::ctx_hook`].
/// Called with the main process (a main-program job) or None (an actor run) and the
/// context's hook slot, which it fills (or, for the main context, may keep filled from the
/// previous job: one hook per main context); answers the reduction step.
pub type CtxHookFactory = Arc<
    dyn Fn(
            Option<&crate::runtime::ProcRef>,
            &mut Option<crate::interp::eval::context::PreemptHook>,
        ) -> u32
        + Send
        + Sync,
>;

/// Something a method cache may still point at.
pub enum Retired {
    Method(Method),
    Class(ClassRef),
    /// A replaced inline-cache entry of a send site (`eval::hit`).
    Other(Box<dyn std::any::Any + Send + Sync>),
}

struct Spec {
    name: &'static str,
    sup: Option<&'static str>,
    kind: ClassKind,
    builtin: Builtin,
    sealed: bool,
    fields: &'static [&'static str],
}

const fn spec(name: &'static str, sup: &'static str, kind: ClassKind, builtin: Builtin) -> Spec {
    Spec {
        name,
        sup: Some(sup),
        kind,
        builtin,
        sealed: false,
        fields: &[],
    }
}

use Builtin::{Abstract, NoNew, Plain};
use ClassKind::{Actor as KActor, Object as KObject, Value as KValue};

/// How an interpreter runs (`Interpreter::new`); kept with the program it configures.
#[derive(Clone, Debug)]
pub struct InterpreterOptions {
    /// Nested activations before `stack_overflow`.
    pub max_depth: usize,
    /// Pid numbers restart per Interpreter (golden tests).
    pub deterministic_pids: bool,
    /// `ProcessNavigation system` allowed (true under the command line).
    pub privileged: bool,
    /// Run the static checker before each unit.
    pub check: bool,
    /// Where the runtime log goes (None: the `log` facade).
    pub log: Option<bt_base::base::log::LogTarget>,
    /// Run every process under the deterministic scheduler (`bt test --seed`): one worker,
    /// choices from a PRNG, a virtual clock; the main program's jobs then run on the pool.
    pub sim: Option<crate::runtime::SimConfig>,
}

impl Default for InterpreterOptions {
    fn default() -> Self {
        InterpreterOptions {
            max_depth: 10_000,
            deterministic_pids: true,
            privileged: true,
            check: true,
            log: None,
            sim: None,
        }
    }
}

/// Exception fields, in order (getters are generated for each).
pub const EXCEPTION_FIELDS: &[&str] = &[
    "message",
    "kind",
    "hint",
    "selector",
    "errorClass",
    "reason",
    "stackTrace",
    "stackLocations",
    "detail",
];
pub const RESULT_FIELDS: &[&str] = &["okValue", "errReason", "isOk"];

/// The declared fields of a SupervisionNode, in declaration order (its snapshot values
/// answer them: `actor::prims::supervision`).
pub const SUPERVISION_NODE_FIELDS: [&str; 5] = [
    "pid",
    "registeredName",
    "kind",
    "behaviourClass",
    "childCount",
];

fn specs() -> Vec<Spec> {
    let mut v = vec![Spec {
        name: "ProtoObject",
        sup: None,
        kind: KObject,
        builtin: NoNew,
        sealed: false,
        fields: &[],
    }];
    v.extend([
        spec("Object", "ProtoObject", KObject, Plain),
        spec("Value", "Object", KValue, Plain),
        spec("Actor", "Object", KActor, Plain),
        spec("Server", "Actor", KActor, Plain),
        spec("Behaviour", "Object", KObject, Abstract),
        spec("Class", "Behaviour", KObject, NoNew),
        spec("Metaclass", "Class", KObject, NoNew),
        spec("Number", "Object", KValue, Abstract),
        spec("Integer", "Number", KValue, NoNew),
        spec("Character", "Integer", KValue, NoNew),
        spec("Float", "Number", KValue, NoNew),
        Spec {
            sealed: true,
            ..spec("String", "Object", KValue, NoNew)
        },
        spec("Symbol", "Object", KValue, NoNew),
        spec("Binary", "Object", KValue, NoNew),
        Spec {
            sealed: true,
            ..spec("Boolean", "Object", KValue, Abstract)
        },
        spec("True", "Boolean", KValue, NoNew),
        spec("False", "Boolean", KValue, NoNew),
        spec("UndefinedObject", "Object", KValue, NoNew),
        spec("Block", "Object", KValue, NoNew),
        spec("Collection", "Object", KValue, Abstract),
        spec("List", "Collection", KValue, Plain),
        spec("Array", "Collection", KValue, Plain),
        spec("Dictionary", "Collection", KValue, Plain),
        spec("Set", "Collection", KValue, Plain),
        spec("Bag", "Collection", KValue, Plain),
        spec("Interval", "Collection", KValue, NoNew),
        spec("Tuple", "Object", KValue, Plain),
        spec("Queue", "Object", KValue, Plain),
        spec("Stream", "Object", KValue, NoNew),
        Spec {
            fields: EXCEPTION_FIELDS,
            ..spec("Exception", "Object", KValue, Plain)
        },
        spec("Error", "Exception", KValue, Plain),
        spec("RuntimeError", "Error", KValue, Plain),
        spec("TypeError", "Error", KValue, Plain),
        spec("InstantiationError", "Error", KValue, Plain),
        Spec {
            sealed: true,
            fields: RESULT_FIELDS,
            ..spec("Result", "Value", KValue, Plain)
        },
        spec("CompiledMethod", "Object", KObject, NoNew),
        spec("Protocol", "Object", KObject, Plain),
        spec("Pid", "Object", KValue, NoNew),
        spec("Reference", "Object", KValue, NoNew),
        Spec {
            sealed: true,
            fields: &["name"],
            ..spec("Node", "Value", KValue, NoNew)
        },
        spec("Duration", "Object", KValue, NoNew),
        spec("Timer", "Object", KObject, NoNew),
        spec("TimeoutProxy", "Actor", KActor, Plain),
        spec("TranscriptStream", "Actor", KActor, Plain),
        spec("Supervisor", "Object", KObject, Plain),
        spec("DynamicSupervisor", "Supervisor", KObject, Plain),
        spec("SupervisionSpec", "Value", KValue, Plain),
        // Native snapshot values whose declared fields are reflected by `fieldNames`.
        Spec {
            fields: &["nodes"],
            ..spec("ProcessNavigation", "Value", KValue, Plain)
        },
        Spec {
            fields: &["flatNodes"],
            ..spec("SupervisionTree", "Value", KValue, Plain)
        },
        Spec {
            fields: &SUPERVISION_NODE_FIELDS,
            ..spec("SupervisionNode", "Value", KValue, Plain)
        },
        spec("TestCase", "Value", KValue, Plain),
        spec("TestResult", "Value", KValue, Plain),
        spec("TestRunner", "Object", KObject, Plain),
        spec("Time", "Object", KObject, Plain),
        spec("System", "Object", KObject, Plain),
        spec("Program", "Object", KObject, Plain),
        spec("Workspace", "Object", KObject, Plain),
        spec("Console", "Object", KObject, Plain),
        spec("Parallel", "Object", KObject, Plain),
        spec("AtomicCounter", "Object", KObject, NoNew),
        spec("Announcer", "Object", KObject, Plain),
        spec("SystemAnnouncer", "Announcer", KObject, Plain),
        spec("Subscription", "Object", KObject, NoNew),
        spec("Announcement", "Value", KValue, Abstract),
    ]);
    v
}

impl Program {
    /// The most bytes one primitive may allocate in one step (see `Program::max_allocation`).
    #[inline]
    pub fn max_allocation(&self) -> usize {
        self.max_allocation.load(Ordering::Relaxed)
    }

    /// Creates the built-in classes and installs the primitives.
    pub fn bootstrap(
        opts: InterpreterOptions,
        prims: &'static crate::interp::registry::SharedPrims,
    ) -> Program {
        let mut table: HashMap<Sym, ClassRef> = HashMap::new();
        for s in specs() {
            let sup = s.sup.map(|n| table[&Sym::new(n)].clone());
            let fields: Vec<(Sym, Option<Arc<crate::interp::eval::code::FnCode>>)> =
                s.fields.iter().map(|f| (Sym::new(f), None)).collect();
            let c = Class::new(
                Sym::new(s.name),
                sup.clone(),
                s.kind,
                &fields,
                s.builtin == Abstract,
                s.sealed,
                s.builtin,
            );
            let c = Arc::new(c);
            if let Some(p) = &sup {
                p.subclasses.write().push(Arc::downgrade(&c));
            }
            table.insert(c.name, c);
        }
        let prog = Program::assemble(opts, table, prims);
        let names: Vec<ClassRef> = prog.classes.read().values().cloned().collect();
        // The process's first program builds a class's primitive tables in place when they
        // are first read (`ClassRt::defer_prims`); the tables kept for copying
        // (`prim_table`) are made by the second, so a process that makes one program
        // (`bt run`) builds only the tables it reads, and does not build them twice and copy
        // them.
        let first = !BOOTSTRAPPED.swap(true, Ordering::AcqRel);
        for c in names {
            if first {
                prog.install_prims_fresh(&c);
            } else {
                prog.install_prims(&c, false);
            }
        }
        prog.bump();
        prog.install_value_accessors(&prog.core.exception);
        prog.install_value_accessors(&prog.core.result);
        prog
    }

    /// A program over the class table `table` (which holds the built-in classes), with
    /// nothing else loaded.
    pub(crate) fn assemble(
        opts: InterpreterOptions,
        table: HashMap<Sym, ClassRef>,
        prims: &'static crate::interp::registry::SharedPrims,
    ) -> Program {
        let core = core_of(&table);
        let syms = Syms::get();
        Program {
            classes: RwLock::new(table),
            library: std::sync::OnceLock::new(),
            core,
            syms,
            epoch: AtomicU64::new(1),
            prims,
            files: RwLock::new(Vec::new()),
            protocols: RwLock::new(BTreeMap::new()),
            opts,
            out: Mutex::new(Box::new(|s: &str| {
                use std::io::Write;
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(s.as_bytes());
                let _ = o.flush();
            })),
            args: RwLock::new(Vec::new()),
            command_name: RwLock::new("bt".to_string()),
            arith_overridden: AtomicBool::new(false),
            derived: Mutex::new(HashMap::new()),
            block_serial: AtomicU64::new(1),
            unit_blocks: RwLock::new(HashMap::new()),
            source_gc: Mutex::new(Default::default()),
            graveyard: Mutex::new(Vec::new()),
            host_fns: RwLock::new(HashMap::default()),
            ctx_hook: std::sync::OnceLock::new(),
            actor_memory: std::sync::OnceLock::new(),
            max_allocation: std::sync::atomic::AtomicUsize::new(usize::MAX),
            embedded: AtomicBool::new(false),
            dist: std::sync::OnceLock::new(),
            erlang_peer: std::sync::OnceLock::new(),
            capabilities: Default::default(),
        }
    }

    /// Defers the registered primitives of a fresh class `c` (no method yet) to the first
    /// read of its tables, where each side's table is built from the registry as
    /// `prim_table` builds the tables it keeps.
    fn install_prims_fresh(&self, c: &ClassRef) {
        if !self.prims.of_class(c.name, false).is_empty()
            || !self.prims.of_class(c.name, true).is_empty()
        {
            c.rt().defer_prims(self.prims);
        }
    }

    /// Installs the registered primitives of `c` (by class name). With `keep_existing`,
    /// selectors the class already defines are left alone.
    pub fn install_prims(&self, c: &ClassRef, keep_existing: bool) {
        for (class_side, table) in [(false, &c.methods()), (true, &c.class_methods())] {
            let prims = self.prims.of_class(c.name, class_side);
            if prims.is_empty() {
                continue;
            }
            let mut m = table.write();
            if m.is_empty() {
                // A fresh class (every class of a new program): a copy of the table built
                // once per process, without hashing each selector again.
                if let Some(t) = prim_table(self.prims, c.name, class_side) {
                    *m = t.clone();
                    continue;
                }
            }
            m.reserve(prims.len());
            for (s, f) in prims {
                if !(keep_existing && m.contains_key(s)) {
                    if let Some(old) = m.insert(*s, Method::Prim(*f)) {
                        self.retire(Retired::Method(old));
                    }
                }
            }
        }
        self.bump();
    }

    /// Keeps a replaced class or method alive until the program ends (see `eval::hit`).
    pub fn retire(&self, r: Retired) {
        self.graveyard.lock().push(r);
    }

    /// Installs (or replaces) a method; the replaced one is retired.
    pub fn set_method(&self, c: &ClassRef, class_side: bool, sel: Sym, m: Method) {
        let table = if class_side {
            &c.class_methods()
        } else {
            &c.methods()
        };
        let old = table.write().insert(sel, m);
        if let Some(old) = old {
            self.retire(Retired::Method(old));
        }
        self.bump();
    }

    /// Removes a method (retiring it); answers whether it existed.
    pub fn remove_method(&self, c: &ClassRef, class_side: bool, sel: Sym) -> bool {
        let table = if class_side {
            &c.class_methods()
        } else {
            &c.methods()
        };
        let old = table.write().remove(&sel);
        self.bump();
        match old {
            Some(m) => {
                self.retire(Retired::Method(m));
                true
            }
            None => false,
        }
    }

    /// Invalidates every method cache.
    pub fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
    }

    pub fn class_named(&self, name: &str) -> Option<ClassRef> {
        self.class_by_sym(Sym::new(name))
    }

    pub fn class_by_sym(&self, name: Sym) -> Option<ClassRef> {
        let found = self.classes.read().get(&name).cloned();
        if let Some(c) = found {
            if !c.rt().pending.load(Ordering::Acquire) {
                return Some(c);
            }
            // Taking its library declarations in may replace it (a built-in class the
            // library gives fields).
            c.take_in_library();
            return self.classes.read().get(&name).cloned();
        }
        // A library class not taken in yet.
        let lib = self.library.get()?;
        if !lib.take_in_named(name) {
            return None;
        }
        self.classes.read().get(&name).cloned()
    }

    /// Takes in the whole built-in library when its classes are taken in on first use (before
    /// anything that lists classes, subclasses or protocols).
    pub fn take_in_library(&self) {
        if let Some(lib) = self.library.get() {
            lib.take_in_all();
        }
    }

    /// The protocols by name (the whole library's taken in first).
    pub fn protocol_table(&self) -> &RwLock<BTreeMap<Sym, ProtocolInfo>> {
        self.take_in_library();
        &self.protocols
    }

    /// Registers (or replaces) a class in the table and links it under its superclass.
    pub fn register_class(&self, c: ClassRef) {
        if let Some(p) = &c.superclass {
            let mut subs = p.subclasses.write();
            // Only a replaced class leaves an entry to drop (and dead ones go with it): a
            // scan per new class made loading many siblings quadratic.
            if self.classes.read().contains_key(&c.name) {
                subs.retain(|w| w.upgrade().map(|k| k.name != c.name).unwrap_or(false));
            }
            subs.push(Arc::downgrade(&c));
        }
        let old = self.classes.write().insert(c.name, c.clone());
        if let Some(old) = old {
            // The subclasses of a redefined class are the new class's subclasses.
            if !Arc::ptr_eq(&old, &c) {
                let moved: Vec<_> = old.subclasses.read().clone();
                let mut subs = c.subclasses.write();
                for w in moved {
                    if w.upgrade().is_some() && !subs.iter().any(|k| Weak::ptr_eq(k, &w)) {
                        subs.push(w);
                    }
                }
            }
            self.retire(Retired::Class(old));
        }
        self.bump();
    }

    /// Removes a class (used when a file of a load unit turns out not to compile).
    pub fn unregister_class(&self, c: &ClassRef, previous: Option<ClassRef>) {
        if let Some(p) = &c.superclass {
            p.subclasses
                .write()
                .retain(|w| !Weak::ptr_eq(w, &Arc::downgrade(c)));
        }
        self.retire(Retired::Class(c.clone()));
        let mut t = self.classes.write();
        match previous {
            Some(p) => {
                t.insert(p.name, p);
            }
            None => {
                t.remove(&c.name);
            }
        }
        drop(t);
        self.bump();
    }

    /// `(path, line, col)` of a location, if it is in a user file.
    pub fn location(&self, loc: crate::interp::eval::code::Loc) -> Option<(String, usize, usize)> {
        let files = self.files.read();
        let f = files.get(loc.file as usize)?;
        let (l, c) = f.line_col(loc.pos);
        Some((f.path.clone(), l, c))
    }

    /// The source line of `loc` with a caret under it (`diagnostic::caret_excerpt`).
    pub fn caret_excerpt(&self, loc: crate::interp::eval::code::Loc) -> Option<String> {
        let files = self.files.read();
        let f = files.get(loc.file as usize)?;
        crate::diagnostic::caret_excerpt(&f.src, loc.pos as usize)
    }

    /// The caret excerpt of a `file:line:col` location (a `stackLocations` entry): the most
    /// recently loaded source of that path that has such a column.
    pub fn excerpt_at(&self, location: &str) -> Option<String> {
        let mut it = location.rsplitn(3, ':');
        let col: usize = it.next()?.parse().ok()?;
        let line: usize = it.next()?.parse().ok()?;
        let path = it.next()?;
        let files = self.files.read();
        files.iter().rev().filter(|f| f.path == path).find_map(|f| {
            let start: usize = f
                .src
                .split_inclusive('\n')
                .take(line.checked_sub(1)?)
                .map(str::len)
                .sum();
            let text = f.src.get(start..)?.split('\n').next()?;
            let (i, _) = text
                .char_indices()
                .chain([(text.len(), ' ')])
                .nth(col - 1)?;
            (!text.trim().is_empty())
                .then(|| crate::diagnostic::caret_excerpt(&f.src, start + i))
                .flatten()
        })
    }

    /// Writes text to the program's output (Transcript / show:).
    pub fn write_out(&self, s: &str) {
        (self.out.lock())(s);
    }

    /// Every class, sorted by name.
    pub fn all_classes(&self) -> Vec<ClassRef> {
        self.take_in_library();
        let mut v: Vec<ClassRef> = self.classes.read().values().cloned().collect();
        v.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
        v
    }
}

impl crate::interp::eval::hit::Retire for Program {
    fn retire_entry(&self, entry: Box<dyn std::any::Any + Send + Sync>) {
        self.retire(Retired::Other(entry));
    }
}

/// The primitives of `class` on one side as a method table, built once per process (engine
/// creation copies it into each program's fresh class instead of inserting ~1,200 selectors).
fn prim_table(
    shared: &'static crate::interp::registry::SharedPrims,
    class: Sym,
    class_side: bool,
) -> Option<&'static crate::interp::class::MethodTable> {
    type Tables =
        HashMap<(Sym, bool), crate::interp::class::MethodTable, foldhash::fast::RandomState>;
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let mut out = Tables::with_capacity_and_hasher(128, Default::default());
        for (&key, prims) in shared.by_class_iter() {
            out.insert(key, prims_table(prims));
        }
        out
    });
    tables.get(&(class, class_side))
}

/// Whether a program of this process has been bootstrapped (`Program::bootstrap`).
static BOOTSTRAPPED: AtomicBool = AtomicBool::new(false);

/// The method table of one class side's registered primitives.
pub(crate) fn prims_table(
    prims: &[(Sym, crate::interp::registry::Prim)],
) -> crate::interp::class::MethodTable {
    let mut t = crate::interp::class::MethodTable::default();
    t.reserve(prims.len());
    // Reversed: of a selector registered twice the first registration is kept.
    for (s, f) in prims.iter().rev() {
        t.insert(*s, Method::Prim(*f));
    }
    t
}

/// The built-in classes the evaluator reaches directly, from a class table that has them.
fn core_of(table: &HashMap<Sym, ClassRef>) -> Core {
    let g = |n: &str| table[&Sym::new(n)].clone();
    Core {
        proto_object: g("ProtoObject"),
        object: g("Object"),
        value: g("Value"),
        actor: g("Actor"),
        class: g("Class"),
        metaclass: g("Metaclass"),
        undefined: g("UndefinedObject"),
        boolean: g("Boolean"),
        true_: g("True"),
        false_: g("False"),
        number: g("Number"),
        integer: g("Integer"),
        float: g("Float"),
        character: g("Character"),
        string: g("String"),
        symbol: g("Symbol"),
        binary: g("Binary"),
        block: g("Block"),
        collection: g("Collection"),
        list: g("List"),
        array: g("Array"),
        tuple: g("Tuple"),
        dictionary: g("Dictionary"),
        set: g("Set"),
        bag: g("Bag"),
        queue: g("Queue"),
        interval: g("Interval"),
        exception: g("Exception"),
        error: g("Error"),
        runtime_error: g("RuntimeError"),
        type_error: g("TypeError"),
        instantiation_error: g("InstantiationError"),
        result: g("Result"),
        compiled_method: g("CompiledMethod"),
        testcase: g("TestCase"),
    }
}

impl Syms {
    /// The selectors, interned once per process.
    fn get() -> Syms {
        static SYMS: std::sync::OnceLock<Syms> = std::sync::OnceLock::new();
        SYMS.get_or_init(|| Syms {
            print_string: Sym::new("printString"),
            display_string: Sym::new("displayString"),
            dnu: Sym::new("doesNotUnderstand:args:"),
            new: Sym::new("new"),
            current: Sym::new("current"),
            initialize: Sym::new("initialize"),
            value: Sym::new("value"),
            signal: Sym::new("signal"),
            user_error: Sym::new("user_error"),
            badarith: Sym::new("badarith"),
            if_true: Sym::new("ifTrue:"),
            if_false: Sym::new("ifFalse:"),
            if_true_if_false: Sym::new("ifTrue:ifFalse:"),
            if_false_if_true: Sym::new("ifFalse:ifTrue:"),
            and: Sym::new("and:"),
            or: Sym::new("or:"),
            while_true: Sym::new("whileTrue:"),
            while_false: Sym::new("whileFalse:"),
            times_repeat: Sym::new("timesRepeat:"),
            to_do: Sym::new("to:do:"),
            le: Sym::new("<="),
            ge: Sym::new(">="),
            add: Sym::new("+"),
        })
        .clone()
    }
}
