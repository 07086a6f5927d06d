//! The one walker over run-time values.
//!
//! [`classify`] decides, in one place, what every kind of [`Value`] is on the wire:
//!
//! | value | [`Item`] |
//! |---|---|
//! | nil, Booleans, Integers, Floats, Characters, Symbols, Strings, Binaries, Durations | copied as themselves |
//! | List, Array, Tuple, Dictionary, Set, Bag, Queue, Interval, Stream | copied; elements (a Stream's blocks too) walked |
//! | instances of Value-kind classes (Results, exceptions, Nodes included) | [`Item::Instance`]: class name, shape version, fields by name |
//! | instances of Object-kind classes without `handleScope:` | [`Item::ObjectByClass`]: the class name only |
//! | class objects, metaclasses | [`Item::Class`] / [`Item::Meta`]: by name |
//! | blocks | [`Item::Block`]: code identity ([`super::block`]) + `self` + captured values |
//! | actors (and `withTimeout:` proxies), Pids, name proxies, supervisor handles, monitor References | [`Item::Ref`]: node name + pid + class name |
//! | AtomicCounter, Timer, Announcer, Subscription, `handleScope:` classes, other natives | rejected: `not_serialisable` |
//!
//! [`walk`] visits a value depth first, pre-order, handing each node's [`Item`] to a
//! [`Sink`] and keeping the [`Path`] from the payload root, so a rejection names where the
//! value was found (`AtomicCounter value at arg1.cache cannot cross a node boundary`). The
//! children of a node follow its item in a fixed order (documented on each [`Item`] variant);
//! the binary encoder ([`super::wire`]) is such a sink. The serde deserializer
//! ([`crate::codec::serde`]) pulls instead of being pushed, so it calls [`classify`] per node
//! and reports paths with the same [`Seg`]s; the rules and the path notation exist only here.
//!
//! Path notation: the root (`arg1`, `result`, `state.key`), then `.field` for Value
//! fields, `[i]` (1-based) for elements of Lists, Arrays, Tuples, Sets, Bags, Queues and
//! Stream steps, `{key}` for Dictionary entries (the key's printString), `.from` / `.to` /
//! `.by` for Interval bounds, `.self` and `.captured[i]` for a block's receiver and captured
//! values, `.source` for a Stream's source.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use num_bigint::BigInt;

use crate::interp::actor::handle::{
    downcast, ActorRef, CounterVal, DurationVal, NameRef, PidVal, RefVal, TimerVal,
};
use crate::interp::actor::prims::node::peer::RemoteName;
use crate::interp::actor::prims::node::remote::{RemoteActor, RemotePid};
use crate::interp::actor::prims::supervision::SupRef;
use crate::interp::class::ClassKind;
use crate::interp::eval::Closure;
use crate::interp::prims::collections::stream::{StreamObj, StreamParts};
use crate::runtime::{Pid, Timeout};
use crate::value::array::ArrayData;
use crate::value::dict::Dict;
use crate::value::{ClassRef, Instance, Interval, Key, Sym, Value};

use super::error::CodecError;

/// Deepest nesting the walker (and the decoder) accepts; deeper payloads are rejected with
/// `not_serialisable` rather than risking the native stack.
pub const MAX_DEPTH: usize = 1000;

/// Name of a node without distribution.
pub const NO_NODE: &str = "nonode@nohost";

/// One step of a [`Path`].
#[derive(Clone, Debug)]
pub enum Seg {
    /// `.name` — a Value field (or a named part: `.self`, `.source`).
    Field(Sym),
    /// `[i]` — a 1-based element position (List, Array, Tuple, Set, Bag, Queue, steps).
    Index(usize),
    /// `{key}` — a Dictionary entry, by its key.
    Key(Value),
    /// `.captured[i]` — a block's captured variable.
    Captured(usize),
}

/// Where in a payload a value sits: the root name (`arg1`, `result`, `state.key`) and the
/// steps below it. Rendering happens only for error messages.
#[derive(Clone, Debug, Default)]
pub struct Path {
    root: String,
    segs: Vec<Seg>,
}

impl Path {
    pub fn new(root: &str) -> Self {
        Path {
            root: root.to_string(),
            segs: Vec::new(),
        }
    }
    pub fn push(&mut self, s: Seg) {
        self.segs.push(s);
    }
    pub fn pop(&mut self) {
        self.segs.pop();
    }
    pub fn depth(&self) -> usize {
        self.segs.len()
    }
    /// `arg1.cache[3]{#k}`; of a deep path the first and last six steps, the ones between
    /// counted (`arg1[1][1]…(988 more levels)…[1]`), so an error about a value nested a
    /// thousand levels deep stays one readable line.
    pub fn render(&self) -> String {
        let mut s = self.root.clone();
        let n = self.segs.len();
        for (i, seg) in self.segs.iter().enumerate() {
            if n > 12 && (6..n - 6).contains(&i) {
                if i == 6 {
                    let _ = write!(s, "…({} more levels)…", n - 12);
                }
                continue;
            }
            let _ = match seg {
                Seg::Field(f) => write!(s, ".{f}"),
                Seg::Index(i) => write!(s, "[{i}]"),
                Seg::Key(k) => write!(s, "{{{}}}", key_text(k)),
                Seg::Captured(i) => write!(s, ".captured[{i}]"),
            };
        }
        s
    }
}

fn key_text(k: &Value) -> String {
    crate::interp::print::simple_print(k).unwrap_or_else(|| "...".to_string())
}

/// What a reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    Actor,
    /// A `withTimeout:` proxy of an actor (`extra` = timeout in ms, `u64::MAX` = infinity).
    Proxy,
    Pid,
    /// `Foo named: #n` (resolves the name at each send, on the node it names).
    Name,
    /// A supervisor handle (`extra` = 1 for a DynamicSupervisor).
    Supervisor,
    /// A monitor Reference (`extra` = its id; the pid is the monitored process).
    Monitor,
}

impl RefKind {
    pub(crate) fn code(self) -> u8 {
        self as u8
    }
    pub(crate) fn from_code(c: u8) -> Option<RefKind> {
        use RefKind::*;
        [Actor, Proxy, Pid, Name, Supervisor, Monitor]
            .get(c as usize)
            .copied()
    }
}

/// A reference as it travels: enough for the receiving node's [`super::RefResolver`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRef {
    pub kind: RefKind,
    /// The node the process lives on (`name@host`).
    pub node: Sym,
    /// The class of the actor / supervisor (`Pid`, `Reference` for those kinds).
    pub class: Sym,
    pub number: u64,
    pub service: bool,
    /// The registered name of a [`RefKind::Name`] proxy.
    pub name: Option<Sym>,
    pub extra: u64,
}

/// One node of a value, as the walker sees it. Children are walked after it, in the order
/// given on each variant.
pub enum Item<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    BigInt(&'a BigInt),
    Float(f64),
    Char(char),
    Symbol(Sym),
    Str(&'a str),
    Binary(&'a [u8]),
    /// Milliseconds.
    Duration(i64),
    /// Children: the elements.
    List(&'a imbl::Vector<Value>),
    /// Children: the elements.
    Array(&'a ArrayData),
    /// Children: the elements.
    Tuple(&'a [Value]),
    /// Children: key, value, key, value … in term order.
    Dict(&'a Dict),
    /// Children: the elements in term order.
    Set(&'a imbl::OrdSet<Key>),
    /// Children: each element followed by a [`Sink::count`].
    Bag(&'a imbl::OrdMap<Key, usize>),
    /// Children: the elements, front first.
    Queue(&'a imbl::Vector<Value>),
    /// Children: from, to, step.
    Interval(&'a Interval),
    /// Children: per field in field-name order, a [`Sink::field`] then the value.
    Instance(&'a Instance),
    ObjectByClass(&'a ClassRef),
    Class(&'a ClassRef),
    Meta(&'a ClassRef),
    /// Children: `self` of the creating activation, then the captured values.
    Block(&'a Closure),
    /// Children: the source values, then the step values (blocks, or a drop count).
    Stream(Box<StreamParts>),
    Ref(WireRef),
}

/// Built-in classes whose values are bound to their node or process.
const HANDLE_SCOPED: &[&str] = &["AtomicCounter", "Timer", "Announcer", "Subscription"];

/// True when instances of `c` may not leave their node (built-in handles, `handleScope:`).
pub(crate) fn handle_scoped(c: &ClassRef) -> bool {
    static SYMS: std::sync::OnceLock<Vec<Sym>> = std::sync::OnceLock::new();
    let syms = SYMS.get_or_init(|| HANDLE_SCOPED.iter().map(|n| Sym::new(n)).collect());
    let mut k = Some(c);
    while let Some(cls) = k {
        if cls.handle_scope.is_some() || syms.contains(&cls.name) {
            return true;
        }
        k = cls.superclass.as_ref();
    }
    false
}

/// A hasher for keys that are already well-spread words (Syms, addresses): one multiply.
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A map keyed by words, hashed with [`WordHasher`].
pub(crate) type WordMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<WordHasher>>;

fn pid_ref(kind: RefKind, node: Sym, class: Sym, pid: Pid, extra: u64) -> WireRef {
    WireRef {
        kind,
        node,
        class,
        number: pid.number,
        service: pid.service,
        name: None,
        extra,
    }
}

/// What `v` is on the wire (see the module table). `Err` carries the class name of a value
/// that may not cross (the caller adds the path). `node` names this node, for references to
/// local processes.
pub fn classify(v: &Value, node: Sym) -> Result<Item<'_>, String> {
    Ok(match v {
        Value::Nil => Item::Nil,
        Value::True => Item::Bool(true),
        Value::False => Item::Bool(false),
        Value::Int(i) => Item::Int(*i),
        Value::BigInt(b) => Item::BigInt(b),
        Value::Float(x) => Item::Float(x.get()),
        Value::Char(c) => Item::Char(c.get()),
        Value::Symbol(s) => Item::Symbol(*s),
        Value::Str(s) => Item::Str(s),
        Value::Binary(b) => Item::Binary(b),
        Value::List(l) => Item::List(l),
        Value::Array(a) => Item::Array(a),
        Value::Tuple(t) => Item::Tuple(t),
        Value::Dict(d) => Item::Dict(d),
        Value::Set(s) => Item::Set(s),
        Value::Bag(b) => Item::Bag(b),
        Value::Queue(q) => Item::Queue(q),
        Value::Interval(i) => Item::Interval(i),
        Value::Object(inst) => {
            if handle_scoped(&inst.class) {
                return Err(inst.class.name.as_str().to_string());
            }
            match inst.class.kind {
                ClassKind::Value => Item::Instance(inst),
                _ => Item::ObjectByClass(&inst.class),
            }
        }
        Value::Class(c) => Item::Class(c),
        Value::Meta(c) => Item::Meta(c),
        Value::Block(b) => Item::Block(b),
        Value::Native(_) => return classify_native(v, node),
    })
}

fn classify_native(v: &Value, node: Sym) -> Result<Item<'_>, String> {
    if let Some(a) = downcast::<ActorRef>(v) {
        let (kind, extra) = match (a.proxy, a.timeout) {
            (false, _) => (RefKind::Actor, 0),
            (true, Timeout::Ms(ms)) => (RefKind::Proxy, ms),
            (true, Timeout::Infinity) => (RefKind::Proxy, u64::MAX),
        };
        let pid = a.proc.pid();
        return Ok(Item::Ref(pid_ref(kind, node, a.class.name, pid, extra)));
    }
    if let Some(p) = downcast::<PidVal>(v) {
        let pid = p.proc.pid();
        return Ok(Item::Ref(pid_ref(RefKind::Pid, node, p.class.name, pid, 0)));
    }
    if let Some(n) = downcast::<NameRef>(v) {
        return Ok(Item::Ref(WireRef {
            kind: RefKind::Name,
            node,
            class: n.class_name,
            number: 0,
            service: false,
            name: Some(n.name),
            // A global name proxy stays global (it resolves in the cluster registry).
            extra: n.global as u64,
        }));
    }
    if let Some(s) = downcast::<SupRef>(v) {
        let pid = s.h.pid();
        let r = pid_ref(
            RefKind::Supervisor,
            node,
            s.class.name,
            pid,
            s.dynamic as u64,
        );
        return Ok(Item::Ref(r));
    }
    if let Some(r) = downcast::<RefVal>(v) {
        let pid = r.target.pid();
        return Ok(Item::Ref(pid_ref(
            RefKind::Monitor,
            node,
            r.class.name,
            pid,
            r.id,
        )));
    }
    // Handles of other nodes' processes travel as references to those nodes (a name
    // proxy keeps resolving on its origin node).
    if let Some(a) = downcast::<RemoteActor>(v) {
        let (kind, extra) = match (a.proxy, a.timeout) {
            (false, _) => (RefKind::Actor, 0),
            (true, Timeout::Ms(ms)) => (RefKind::Proxy, ms),
            (true, Timeout::Infinity) => (RefKind::Proxy, u64::MAX),
        };
        let pid = Pid {
            node: 0,
            number: a.number,
            service: false,
        };
        return Ok(Item::Ref(pid_ref(kind, a.node, a.class_name, pid, extra)));
    }
    if let Some(p) = downcast::<RemotePid>(v) {
        let pid = Pid {
            node: 0,
            number: p.number,
            service: false,
        };
        return Ok(Item::Ref(pid_ref(
            RefKind::Pid,
            p.node,
            p.class.name,
            pid,
            0,
        )));
    }
    if let Some(n) = downcast::<RemoteName>(v) {
        return Ok(Item::Ref(WireRef {
            kind: RefKind::Name,
            node: n.node,
            class: n.class_name,
            number: 0,
            service: false,
            name: Some(n.name),
            extra: 0,
        }));
    }
    if let Some(d) = downcast::<DurationVal>(v) {
        return Ok(Item::Duration(d.ms));
    }
    if let Some(s) = downcast::<StreamObj>(v) {
        return Ok(Item::Stream(Box::new(s.parts())));
    }
    if downcast::<CounterVal>(v).is_some() {
        return Err("AtomicCounter".into());
    }
    if downcast::<TimerVal>(v).is_some() {
        return Err("Timer".into());
    }
    // Process-navigation snapshots, CompiledMethods, jobs: not (yet) wire values.
    match v {
        Value::Native(n) => Err(n.0.class().name.as_str().to_string()),
        _ => Err("?".into()),
    }
}

/// Receives the nodes of a walk (see [`Item`] for what follows each one).
pub trait Sink {
    /// One node; answer false to skip its children (the sink wrote them itself).
    fn item(&mut self, item: &Item<'_>, path: &Path) -> Result<bool, CodecError>;
    /// Before each field value of an [`Item::Instance`].
    fn field(&mut self, name: Sym) -> Result<(), CodecError>;
    /// After each element of an [`Item::Bag`]: its count.
    fn count(&mut self, n: usize) -> Result<(), CodecError>;
}

/// How many blocks / Streams deep the walk may go: their captured values are snapshots the
/// walk owns, walked by a nested call (everything else is walked without recursion).
pub(crate) const MAX_OWNED_DEPTH: usize = 64;

/// One step of a container's children.
enum Step<'a> {
    /// Walk this value under this path segment.
    Val(Seg, &'a Value),
    /// Walk a snapshot the walk owns (a block's captured value, a Stream part).
    Owned(Seg, Value),
    Field(Sym),
    Count(usize),
}

type Steps<'a> = Box<dyn Iterator<Item = Step<'a>> + 'a>;

/// Walks `v` into `sink`, keeping the path below `path`'s root. `node` names this node.
///
/// Iterative (an explicit stack of child iterators), so deep values cost heap, not native
/// stack; nesting is still bounded by [`MAX_DEPTH`] so the decoder can take what was sent.
pub fn walk(v: &Value, node: Sym, path: &mut Path, sink: &mut dyn Sink) -> Result<(), CodecError> {
    walk_at(v, node, path, sink, 0, &mut WordMap::default())
}

/// Field orders by class address, for the duration of one walk (classes outlive it).
type Orders = WordMap<usize, Arc<[usize]>>;

fn too_deep(path: &Path, what: &str) -> CodecError {
    let p = path.render();
    let msg = format!("value at {p} is nested deeper than {what} and cannot cross a node boundary");
    CodecError::new(super::error::kind::NOT_SERIALISABLE, msg, p)
}

fn walk_at(
    v: &Value,
    node: Sym,
    path: &mut Path,
    sink: &mut dyn Sink,
    owned_depth: usize,
    orders: &mut Orders,
) -> Result<(), CodecError> {
    if owned_depth > MAX_OWNED_DEPTH {
        return Err(too_deep(path, &format!("{MAX_OWNED_DEPTH} blocks")));
    }
    let base = path.depth();
    let mut stack: Vec<Steps<'_>> = Vec::new();
    if let Some(steps) = visit(v, node, path, sink, orders)? {
        stack.push(steps);
    }
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
                if path.depth() > base {
                    path.pop();
                }
            }
            Some(Step::Field(f)) => sink.field(f)?,
            Some(Step::Count(n)) => sink.count(n)?,
            Some(Step::Owned(seg, x)) => {
                path.push(seg);
                walk_at(&x, node, path, sink, owned_depth + 1, orders)?;
                path.pop();
            }
            Some(Step::Val(seg, x)) => {
                path.push(seg);
                if path.depth() >= MAX_DEPTH {
                    return Err(too_deep(path, &format!("{MAX_DEPTH} levels")));
                }
                match visit(x, node, path, sink, orders)? {
                    Some(steps) => stack.push(steps),
                    None => path.pop(),
                }
            }
        }
    }
    Ok(())
}

/// Classifies one value, hands it to the sink and answers its children (None: a leaf, or
/// the sink wrote them itself).
fn visit<'a>(
    v: &'a Value,
    node: Sym,
    path: &Path,
    sink: &mut dyn Sink,
    orders: &mut Orders,
) -> Result<Option<Steps<'a>>, CodecError> {
    let item = classify(v, node).map_err(|c| CodecError::not_serialisable(&c, path.render()))?;
    if !sink.item(&item, path)? {
        return Ok(None);
    }
    fn indexed<'a>(it: impl Iterator<Item = &'a Value> + 'a) -> Steps<'a> {
        Box::new(it.enumerate().map(|(i, x)| Step::Val(Seg::Index(i + 1), x)))
    }
    Ok(Some(match item {
        Item::List(l) | Item::Queue(l) => indexed(l.iter()),
        Item::Array(a) => indexed(a.iter()),
        Item::Tuple(t) => indexed(t.iter()),
        Item::Set(s) => indexed(s.iter().map(|k| &k.0)),
        Item::Dict(d) => Box::new(d.iter().flat_map(|(k, x)| {
            let key = match k.stored() {
                Some(r) => Step::Val(Seg::Key(k.to_value()), r),
                // An Integer key the Dictionary stores as its `i64`.
                None => Step::Owned(Seg::Key(k.to_value()), k.to_value()),
            };
            [key, Step::Val(Seg::Key(k.to_value()), x)]
        })),
        Item::Bag(b) => Box::new(
            b.iter()
                .enumerate()
                .flat_map(|(i, (k, n))| [Step::Val(Seg::Index(i + 1), &k.0), Step::Count(*n)]),
        ),
        Item::Interval(iv) => Box::new(
            [("from", &iv.from), ("to", &iv.to), ("by", &iv.step)]
                .into_iter()
                .map(|(n, x)| Step::Val(Seg::Field(Sym::new(n)), x)),
        ),
        Item::Instance(inst) => {
            let order = orders
                .entry(Arc::as_ptr(&inst.class) as usize)
                .or_insert_with(|| field_order(&inst.class).into())
                .clone();
            Box::new((0..order.len()).flat_map(move |j| {
                let i = order[j];
                let name = inst.class.field_names[i];
                let x = inst.fields.get(i).unwrap_or(&NIL);
                [Step::Field(name), Step::Val(Seg::Field(name), x)]
            }))
        }
        Item::Block(b) => {
            // Snapshots of the cells (never hold a cell's lock across the walk).
            let captured: Vec<Value> = b.upvals.iter().map(|c| c.lock().clone()).collect();
            let me = Step::Val(Seg::Field(Sym::new("self")), &b.recv);
            Box::new(
                std::iter::once(me).chain(
                    captured
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Step::Owned(Seg::Captured(i + 1), x)),
                ),
            )
        }
        Item::Stream(parts) => {
            let StreamParts { values, steps, .. } = *parts;
            let src = values
                .into_iter()
                .map(|x| Step::Owned(Seg::Field(Sym::new("source")), x));
            let ops = steps
                .into_iter()
                .enumerate()
                .map(|(i, (_, x))| Step::Owned(Seg::Index(i + 1), x));
            Box::new(src.chain(ops))
        }
        _ => return Ok(None),
    }))
}

/// Field positions in field-NAME order (how Value instances print and compare).
pub(crate) fn field_order(c: &ClassRef) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..c.field_names.len()).collect();
    idx.sort_by(|&a, &b| c.field_names[a].as_str().cmp(c.field_names[b].as_str()));
    idx
}

/// A `nil` to lend out (a `&Value::Nil` temporary cannot outlive its statement).
static NIL: Value = Value::Nil;
