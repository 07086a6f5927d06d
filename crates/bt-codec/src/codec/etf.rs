//! Values ↔ Erlang terms: what a bt value is on the Erlang distribution
//! wire, and what a term from a peer becomes in bt.
//!
//! | bt value | Erlang term |
//! |---|---|
//! | `nil`, `true`, `false` | the atoms `nil`, `true`, `false` |
//! | Integer (any size) | integer |
//! | Float | float |
//! | String | UTF-8 binary |
//! | Symbol | atom |
//! | List | list (built by [`list`]: `eetf` alone would write `[1,-1]` as the byte string `[1,255]`) |
//! | Tuple | tuple |
//! | Dictionary | map |
//! | Binary whose bytes are not UTF-8 | binary |
//! | actor or Pid of this node | pid (`<N.Number.0>` of this node, with its creation) |
//! | actor or Pid of another node | that node's pid |
//! | Value instance (exceptions included) | map: `'$beamtalk_class' => ClassName`, `'$beamtalk_version' => ShapeVersion`, one atom key per field |
//! | any other value (Array, Set, Bag, Queue, Character, UTF-8 Binary, Duration, Node, Result, Interval, Stream, class, Object instance, name proxy …) | `{'$bt', 1, WireBytes}`: the value in bt's own wire format v1 ([`super::wire`]), so two bt nodes round-trip it exactly |
//! | an opaque term received earlier | that term, unchanged |
//!
//! A bt Tuple whose first element is the Symbol `#'$bt'`, a Dictionary holding the key
//! `#'$beamtalk_class'`, the Symbols `#nil`, `#true`, `#false` (their atoms are the
//! constants), Symbols over 255 characters (Erlang's atom limit) and Binaries that are valid
//! UTF-8 (they would arrive as Strings) also travel as `{'$bt', 1, …}`, so every value
//! crosses exactly both ways (tests/dist/wire_property.rs checks it against `erl`).
//!
//! From a peer: atoms become Symbols (`true`/`false`/`nil` the constants) — but at most
//! [`MAX_PEER_ATOMS`] new Symbols per process lifetime are created from peers' atoms; later
//! unknown atoms stay opaque values, so a peer cannot grow the symbol table without bound.
//! Binaries become Strings when they are UTF-8, else Binaries; lists, tuples, maps and
//! integers as in the table; a `'$beamtalk_class'` map becomes an instance of that class
//! (fields the class lacks are dropped, missing ones take their defaults — the shape migration,
//! `shape_migration_failed` when a typed field has none; `shape_version_ahead` if the
//! version is newer than the local class); a pid of this node becomes the actor (or Pid)
//! of that process; a pid of another node a remote actor handle (on a named node); anything
//! else (funs, ports, references, improper
//! lists, bit strings) becomes an opaque value that prints in Erlang syntax and is sent
//! back as the same term.
//!
//! Bytes from the network go through [`super::etf_check`] before `eetf` decodes them.

use crate::interp::class::ClassExt;
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use eetf::{Atom, BigInteger, Binary, FixInteger, Float, ImproperList, List, Map, Term, Tuple};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::error::{kind, CodecError};
use super::walk::{classify, Item, RefKind, MAX_DEPTH};
use crate::interp::actor::handle::{native, ActorRef, PidVal};
use crate::interp::actor::prims::node::remote::{remote_actor, remote_pid, RemoteActor, RemotePid};
use crate::interp::class::ClassKind;
use crate::interp::eval::Ctx;
use crate::value::{ClassRef, Instance, NativeObj, Sym, Value};

/// New Symbols that atoms from peers may create in this process's lifetime.
pub(crate) const MAX_PEER_ATOMS: usize = 4096;
/// The tag of bt-only values: `{'$bt', 1, WireBytes}`.
pub(crate) const BT_TAG: &str = "$bt";
/// The class key of Value-instance maps.
pub(crate) const CLASS_KEY: &str = "$beamtalk_class";
/// The shape-version key of Value-instance maps.
pub(crate) const VERSION_KEY: &str = "$beamtalk_version";

static PEER_ATOMS: AtomicUsize = AtomicUsize::new(0);

/// How this node writes its own pids: name and creation.
#[derive(Clone, Debug)]
pub struct NodeId {
    pub name: String,
    pub creation: u32,
}

/// The node `ctx` runs on (`nonode@nohost`, creation 0, without distribution).
pub(crate) fn node_id(ctx: &Ctx) -> NodeId {
    match ctx.prog.dist.get() {
        Some(d) => NodeId {
            name: d.node_name().as_str().to_string(),
            creation: d.creation(),
        },
        None => NodeId {
            name: crate::interp::distribution::NO_NODE.to_string(),
            creation: 0,
        },
    }
}

/// An Erlang pid of process `number` on `node` (incarnation `creation`).
fn peer_pid(node: Sym, number: u64, creation: u32) -> eetf::Pid {
    eetf::Pid::new(
        node.as_str(),
        (number & 0xffff_ffff) as u32,
        (number >> 32) as u32,
        creation,
    )
}

/// An Erlang pid for a local process number.
pub fn local_pid(me: &NodeId, number: u64) -> eetf::Pid {
    eetf::Pid::new(
        me.name.as_str(),
        (number & 0xffff_ffff) as u32,
        (number >> 32) as u32,
        me.creation,
    )
}

/// A proper list term that `eetf` writes as Erlang does. `eetf` writes a list whose
/// elements are all integers below 256 as a STRING_EXT, one byte each, without checking
/// for negative ones (`[1,-1]` would arrive as `[1,255]`). Such a list is built as an
/// improper list whose tail is `[]`: `eetf` writes that as LIST_EXT, the elements and
/// NIL_EXT — byte for byte what `term_to_binary` answers for the proper list. Every list
/// bt sends is built here (or by [`exact`]).
pub fn list(elements: Vec<Term>) -> Term {
    if string_ext_would_corrupt(&elements) {
        Term::from(ImproperList::from((elements, Term::from(List::nil()))))
    } else {
        Term::from(List::from(elements))
    }
}

/// Would `eetf` write these list elements as a STRING_EXT that loses a negative integer?
fn string_ext_would_corrupt(elements: &[Term]) -> bool {
    let mut negative = false;
    for e in elements {
        match e {
            Term::FixInteger(i) if i.value < 0x100 => negative |= i.value < 0,
            _ => return false,
        }
    }
    negative && elements.len() <= u16::MAX as usize
}

/// `t` with every list that `eetf` would corrupt rebuilt by [`list`]: for terms taken from
/// a peer and sent on unchanged (opaque values). Nesting is bounded by
/// [`super::etf_check::MAX_DEPTH`], as the term was decoded.
pub fn exact(t: &Term) -> Term {
    if !needs_exact(t) {
        return t.clone();
    }
    match t {
        Term::List(l) => list(l.elements.iter().map(exact).collect()),
        Term::ImproperList(l) => Term::from(ImproperList::from((
            l.elements.iter().map(exact).collect(),
            exact(&l.last),
        ))),
        Term::Tuple(x) => Term::from(Tuple::from(
            x.elements.iter().map(exact).collect::<Vec<_>>(),
        )),
        Term::Map(m) => Term::from(Map::from(
            m.map
                .iter()
                .map(|(k, v)| (exact(k), exact(v)))
                .collect::<std::collections::HashMap<_, _>>(),
        )),
        Term::InternalFun(f) => match &**f {
            eetf::InternalFun::Old {
                module,
                pid,
                free_vars,
                index,
                uniq,
            } => Term::from(eetf::InternalFun::Old {
                module: module.clone(),
                pid: pid.clone(),
                free_vars: free_vars.iter().map(exact).collect(),
                index: *index,
                uniq: *uniq,
            }),
            eetf::InternalFun::New {
                module,
                arity,
                pid,
                free_vars,
                index,
                uniq,
                old_index,
                old_uniq,
            } => Term::from(eetf::InternalFun::New {
                module: module.clone(),
                arity: *arity,
                pid: pid.clone(),
                free_vars: free_vars.iter().map(exact).collect(),
                index: *index,
                uniq: *uniq,
                old_index: *old_index,
                old_uniq: *old_uniq,
            }),
        },
        _ => t.clone(),
    }
}

/// Does `t` hold a list that `eetf` would corrupt? (Iterative: any depth.)
fn needs_exact(t: &Term) -> bool {
    let mut todo = vec![t];
    while let Some(t) = todo.pop() {
        match t {
            Term::List(l) => {
                if string_ext_would_corrupt(&l.elements) {
                    return true;
                }
                todo.extend(&l.elements);
            }
            Term::ImproperList(l) => {
                todo.extend(&l.elements);
                todo.push(&l.last);
            }
            Term::Tuple(x) => todo.extend(&x.elements),
            Term::Map(m) => m.map.iter().for_each(|(k, v)| {
                todo.push(k);
                todo.push(v);
            }),
            Term::InternalFun(f) => match &**f {
                eetf::InternalFun::Old { free_vars, .. }
                | eetf::InternalFun::New { free_vars, .. } => todo.extend(free_vars),
            },
            _ => {}
        }
    }
    false
}

/// `nil`, `true`, `false`: the atoms of the constants.
fn is_constant_name(s: &str) -> bool {
    matches!(s, "nil" | "true" | "false")
}

pub fn atom(s: &str) -> Term {
    Term::from(Atom::from(s))
}

fn bin(b: &[u8]) -> Term {
    Term::from(Binary::from(b.to_vec()))
}

/// Encodes `v` (found at `root`, for error paths) as a term.
pub fn to_term(ctx: &Ctx, v: &Value, root: &str) -> Result<Term, CodecError> {
    let me = node_id(ctx);
    Enc { ctx, me, root }.term(v, 0).map_err(|e| {
        // The wire walker keeps the path from the root (`arg1[2]{#k}`): ask it where.
        match super::wire::encode_in(ctx, v, root) {
            Err(w) if w.kind == e.kind => w,
            _ => e,
        }
    })
}

struct Enc<'a> {
    ctx: &'a Ctx,
    me: NodeId,
    root: &'a str,
}

impl Enc<'_> {
    fn tagged(&self, v: &Value) -> Result<Term, CodecError> {
        let bytes = super::wire::encode_in(self.ctx, v, self.root)?;
        Ok(Term::from(Tuple::from(vec![
            atom(BT_TAG),
            Term::from(FixInteger::from(1)),
            Term::from(Binary::from(bytes)),
        ])))
    }

    fn term(&self, v: &Value, depth: usize) -> Result<Term, CodecError> {
        if depth > MAX_DEPTH {
            return Err(CodecError::new(
                kind::NOT_SERIALISABLE,
                format!(
                    "value at {} is nested too deeply to cross a node boundary",
                    self.root
                ),
                self.root,
            ));
        }
        if let Value::Native(n) = v {
            let any = n.0.as_any();
            if let Some(o) = any.downcast_ref::<ErlTerm>() {
                return Ok(exact(&o.term));
            }
            // Processes of other nodes are pids of those nodes.
            if let Some(a) = any.downcast_ref::<RemoteActor>() {
                let pid = peer_pid(a.node, a.number, a.creation);
                if a.class_name != self.ctx.prog.core.actor.name {
                    super::etf_classes::note(&pid, a.class_name);
                }
                return Ok(Term::from(pid));
            }
            if let Some(p) = any.downcast_ref::<RemotePid>() {
                let pid = peer_pid(p.node, p.number, p.creation);
                super::etf_classes::note_pid(&pid);
                return Ok(Term::from(pid));
            }
        }
        let node = Sym::new(&self.me.name);
        let item = match classify(v, node) {
            Ok(i) => i,
            Err(class) => return Err(CodecError::not_serialisable(&class, self.root.to_string())),
        };
        let d = depth + 1;
        Ok(match item {
            Item::Nil => atom("nil"),
            Item::Bool(b) => atom(if b { "true" } else { "false" }),
            Item::Int(i) => match i32::try_from(i) {
                Ok(x) => Term::from(FixInteger::from(x)),
                Err(_) => Term::from(BigInteger {
                    value: BigInt::from(i),
                }),
            },
            Item::BigInt(b) => Term::from(BigInteger { value: b.clone() }),
            Item::Float(f) => match Float::try_from(f) {
                Ok(x) => Term::from(x),
                Err(_) => self.tagged(v)?,
            },
            // `#nil`, `#true`, `#false` are not the constants; an atom holds 255 characters.
            Item::Symbol(s) if is_constant_name(s.as_str()) || s.as_str().chars().count() > 255 => {
                self.tagged(v)?
            }
            Item::Symbol(s) => atom(s.as_str()),
            // Bytes that read as UTF-8 would come back a String: those travel tagged.
            Item::Binary(b) if std::str::from_utf8(b).is_err() => bin(b),
            Item::Str(s) => bin(s.as_bytes()),
            Item::List(l) => {
                let mut out = Vec::with_capacity(l.len());
                for e in l.iter() {
                    out.push(self.term(e, d)?);
                }
                list(out)
            }
            Item::Tuple(t) => {
                if matches!(t.first(), Some(Value::Symbol(s)) if s.as_str() == BT_TAG) {
                    return self.tagged(v);
                }
                let mut out = Vec::with_capacity(t.len());
                for e in t {
                    out.push(self.term(e, d)?);
                }
                Term::from(Tuple::from(out))
            }
            Item::Dict(m) => {
                if m.get(&Value::sym(CLASS_KEY)).is_some() {
                    return self.tagged(v);
                }
                let mut out = std::collections::HashMap::new();
                for (k, x) in m.iter() {
                    out.insert(self.term(&k, d)?, self.term(x, d)?);
                }
                Term::from(Map::from(out))
            }
            Item::Instance(i) if plain_instance(self.ctx, &i.class) => {
                let mut out = std::collections::HashMap::new();
                out.insert(atom(CLASS_KEY), atom(i.class.name.as_str()));
                let ver = super::block::shape_version(&i.class);
                out.insert(
                    atom(VERSION_KEY),
                    Term::from(FixInteger::from(ver.clamp(0, i32::MAX as i64) as i32)),
                );
                for (name, x) in i.class.field_names.iter().zip(i.fields.iter()) {
                    out.insert(atom(name.as_str()), self.term(x, d)?);
                }
                Term::from(Map::from(out))
            }
            Item::Ref(r) if matches!(r.kind, RefKind::Actor | RefKind::Pid) && r.node == node => {
                let pid = local_pid(&self.me, r.number);
                if r.kind == RefKind::Actor {
                    super::etf_classes::note(&pid, r.class);
                } else {
                    super::etf_classes::note_pid(&pid);
                }
                Term::from(pid)
            }
            _ => self.tagged(v)?,
        })
    }
}

/// Value instances that cross as `'$beamtalk_class'` maps: user and library Value classes,
/// exceptions included; Node and Result (bt-only in 8.12) travel tagged.
fn plain_instance(ctx: &Ctx, c: &ClassRef) -> bool {
    c.kind == ClassKind::Value
        && !Arc::ptr_eq(c, &ctx.prog.core.result)
        && c.name.as_str() != "Node"
}

/// Decodes a term from a peer in `ctx`'s program.
pub fn from_term(ctx: &mut Ctx, t: &Term, root: &str) -> Result<Value, CodecError> {
    let me = node_id(ctx);
    Dec { me, root }.value(ctx, t, 0)
}

struct Dec<'a> {
    me: NodeId,
    root: &'a str,
}

/// A Symbol for an atom from a peer, within the budget of [`MAX_PEER_ATOMS`].
pub fn peer_symbol(name: &str) -> Option<Sym> {
    if let Some(s) = Sym::lookup(name) {
        return Some(s);
    }
    let n = PEER_ATOMS.fetch_add(1, Ordering::Relaxed);
    if n >= MAX_PEER_ATOMS {
        PEER_ATOMS.store(MAX_PEER_ATOMS, Ordering::Relaxed);
        return None;
    }
    Some(Sym::new(name))
}

impl Dec<'_> {
    fn value(&self, ctx: &mut Ctx, t: &Term, depth: usize) -> Result<Value, CodecError> {
        if depth > MAX_DEPTH {
            return Err(CodecError::new(
                kind::NOT_SERIALISABLE,
                format!(
                    "value at {} is nested deeper than {MAX_DEPTH} levels and cannot cross a node boundary",
                    self.root
                ),
                self.root,
            ));
        }
        let d = depth + 1;
        Ok(match t {
            Term::Atom(a) => match a.name.as_str() {
                "true" => Value::True,
                "false" => Value::False,
                "nil" => Value::Nil,
                n => match peer_symbol(n) {
                    Some(s) => Value::Symbol(s),
                    None => opaque(ctx, t),
                },
            },
            Term::FixInteger(i) => Value::Int(i.value as i64),
            Term::BigInteger(b) => match b.value.to_i64() {
                Some(i) => Value::Int(i),
                None => Value::BigInt(Arc::new(b.value.clone())),
            },
            Term::Float(f) => Value::float(f.value),
            Term::Binary(b) => match std::str::from_utf8(&b.bytes) {
                Ok(s) => Value::str(s),
                Err(_) => Value::Binary(Arc::new(b.bytes.clone())),
            },
            Term::ByteList(b) => Value::list(b.bytes.iter().map(|&x| Value::Int(x as i64))),
            // A proper list built as improper ([`list`]: small integers with a negative one)
            // is a List too.
            Term::ImproperList(l) if matches!(&*l.last, Term::List(n) if n.elements.is_empty()) => {
                let mut out = Vec::with_capacity(l.elements.len());
                for e in &l.elements {
                    out.push(self.value(ctx, e, d)?);
                }
                Value::list(out)
            }
            Term::List(l) => {
                let mut out = Vec::with_capacity(l.elements.len());
                for e in &l.elements {
                    out.push(self.value(ctx, e, d)?);
                }
                Value::list(out)
            }
            Term::Tuple(tu) => {
                if let [Term::Atom(a), Term::FixInteger(v), Term::Binary(b)] = &tu.elements[..] {
                    if a.name == BT_TAG {
                        if v.value != 1 {
                            return Err(CodecError::new(
                                kind::WIRE_VERSION_UNSUPPORTED,
                                format!("wire version {} is not supported", v.value),
                                self.root,
                            ));
                        }
                        return super::wire::decode_local(ctx, &b.bytes, self.root);
                    }
                }
                let mut out = Vec::with_capacity(tu.elements.len());
                for e in &tu.elements {
                    out.push(self.value(ctx, e, d)?);
                }
                Value::tuple(out)
            }
            Term::Map(m) => {
                if let Some(Term::Atom(cls)) = m.map.get(&atom(CLASS_KEY)) {
                    return self.instance(ctx, &cls.name, m, d);
                }
                let mut pairs = Vec::with_capacity(m.map.len());
                for (k, x) in &m.map {
                    pairs.push((self.value(ctx, k, d)?, self.value(ctx, x, d)?));
                }
                crate::interp::prims::collections::dict_from_pairs(pairs)
            }
            Term::Pid(p) if p.node.name == self.me.name && p.creation == self.me.creation => {
                let number = (p.id as u64) | ((p.serial as u64) << 32);
                match local_process(ctx, number, super::etf_classes::is_pid(p)) {
                    Some(v) => v,
                    None => opaque(ctx, t),
                }
            }
            // A process of another node: a remote actor handle (class unknown here).
            Term::Pid(p) if p.node.name != self.me.name && ctx.prog.dist.get().is_some() => {
                match peer_symbol(&p.node.name) {
                    Some(node) => {
                        let number = (p.id as u64) | ((p.serial as u64) << 32);
                        if super::etf_classes::is_pid(p) {
                            remote_pid(ctx, node, number, p.creation)
                        } else {
                            remote_actor(ctx, node, number, p.creation, None)
                        }
                    }
                    None => opaque(ctx, t),
                }
            }
            _ => opaque(ctx, t),
        })
    }

    fn instance(&self, ctx: &mut Ctx, cls: &str, m: &Map, d: usize) -> Result<Value, CodecError> {
        let class = Sym::lookup(cls)
            .and_then(|s| ctx.prog.class_named(s.as_str()))
            .filter(|c| c.kind == ClassKind::Value);
        let Some(class) = class else {
            return Err(CodecError::new(
                kind::CLASS_NOT_FOUND,
                format!(
                    "no Value class {cls} is loaded on this node (at {})",
                    self.root
                ),
                self.root,
            ));
        };
        if let Some(Term::FixInteger(v)) = m.map.get(&atom(VERSION_KEY)) {
            let local = super::block::shape_version(&class);
            if v.value as i64 > local {
                return Err(CodecError::new(
                    kind::SHAPE_VERSION_AHEAD,
                    format!(
                        "{cls} has shape version {} there but {local} here (at {})",
                        v.value, self.root
                    ),
                    self.root,
                ));
            }
        }
        // An older envelope is migrated forward by field name: a field it lacks takes
        // its default, or nil when its type admits nil (else `shape_migration_failed`).
        let mut fields = Vec::with_capacity(class.field_names.len());
        let mut defaults: Option<Vec<Value>> = None;
        for (i, name) in class.field_names.iter().enumerate() {
            if let Some(x) = m.map.get(&atom(name.as_str())) {
                fields.push(self.value(ctx, x, d)?);
                continue;
            }
            let migration_failed = |why: &str| {
                CodecError::new(
                    kind::SHAPE_MIGRATION_FAILED,
                    format!("cannot migrate {cls} at {}: {why}", self.root),
                    self.root,
                )
            };
            if class.field_defaults().get(i).is_some_and(|d| d.is_some()) {
                if defaults.is_none() {
                    defaults = Some(match &ctx.instantiate(&class) {
                        Ok(Value::Object(o)) => o.fields.to_vec(),
                        _ => return Err(migration_failed("a field default raised")),
                    });
                }
                let v = defaults.as_ref().and_then(|d| d.get(i).cloned());
                fields.push(v.unwrap_or(Value::Nil));
            } else if class
                .typed_slots()
                .iter()
                .any(|t| t.name == *name && !super::wire_decode::admits_nil(&t.ty))
            {
                return Err(migration_failed(&format!(
                    "field {name} has no default and its type excludes nil"
                )));
            } else {
                fields.push(Value::Nil);
            }
        }
        Ok(Value::Object(Arc::new(Instance {
            class,
            fields: fields.into_iter().collect(),
        })))
    }
}

/// The actor (or Pid, for a non-actor process or when `as_pid`) of a live local process.
fn local_process(ctx: &Ctx, number: u64, as_pid: bool) -> Option<Value> {
    let sys = ctx.proc.sys.as_ref()?;
    let pid = crate::runtime::Pid {
        node: 0,
        number,
        service: false,
    };
    let p = sys.rt.lookup(pid)?;
    Some(match p.info() {
        Value::Class(c) if !as_pid => ActorRef::value(p.clone(), c.clone()),
        _ => {
            let class = ctx
                .prog
                .class_named("Pid")
                .unwrap_or_else(|| ctx.prog.core.object.clone());
            native(PidVal { proc: p, class })
        }
    })
}

/// A term bt has no value for: kept as is, printed in Erlang syntax, sent back unchanged.
pub(crate) struct ErlTerm {
    pub term: Term,
    pub class: ClassRef,
}

fn opaque(ctx: &Ctx, t: &Term) -> Value {
    native(ErlTerm {
        term: t.clone(),
        class: ctx.prog.core.object.clone(),
    })
}

impl NativeObj for ErlTerm {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        let mut out = String::new();
        erl_text(&self.term, &mut out);
        out
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<ErlTerm>()
            .is_some_and(|o| o.term == self.term)
    }
    fn hash_code(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.term.to_string().hash(&mut h);
        h.finish()
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, self.term.to_string().chars().map(|c| c as u64).collect())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `t` as `~w` writes it: atoms quoted only where Erlang needs it, lists (improper ones
/// with `|`), tuples, maps `#{K => V}`; other terms as `eetf` shows them. Nesting is
/// bounded by [`super::etf_check::MAX_DEPTH`], as the term was decoded.
fn erl_text(t: &Term, out: &mut String) {
    let seq = |items: &[Term], out: &mut String| {
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            erl_text(x, out);
        }
    };
    match t {
        Term::Atom(a) => out.push_str(&atom_text(&a.name)),
        Term::List(l) => {
            out.push('[');
            seq(&l.elements, out);
            out.push(']');
        }
        Term::ImproperList(l) => {
            out.push('[');
            seq(&l.elements, out);
            match &*l.last {
                Term::List(x) if x.elements.is_empty() => {}
                last => {
                    out.push('|');
                    erl_text(last, out);
                }
            }
            out.push(']');
        }
        Term::Tuple(x) => {
            out.push('{');
            seq(&x.elements, out);
            out.push('}');
        }
        Term::Map(m) => {
            let mut pairs: Vec<(&Term, &Term)> = m.map.iter().collect();
            pairs.sort_by(|a, b| super::etf_bytes::cmp_exact(a.0, b.0));
            out.push_str("#{");
            for (i, (k, v)) in pairs.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                erl_text(k, out);
                out.push_str(" => ");
                erl_text(v, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// An atom as Erlang writes it: bare when it is a lower-case name that is not a keyword.
fn atom_text(a: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
        "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
        "rem", "try", "when", "xor",
    ];
    let bare = a.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        && !KEYWORDS.contains(&a);
    if bare {
        return a.to_string();
    }
    let mut s = String::from("'");
    for c in a.chars() {
        match c {
            '\'' => s.push_str("\\'"),
            '\\' => s.push_str("\\\\"),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

/// Encodes a term as external term format bytes.
pub fn term_bytes(t: &Term) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail except for atoms longer than 255 characters.
    let _ = t.encode(&mut out);
    out
}
