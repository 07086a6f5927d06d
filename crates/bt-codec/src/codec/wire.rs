//! Binary wire format, version 1: [`encode`] a [`Value`] into bytes, [`decode`] them back.
//!
//! A message is a header and one value:
//!
//! | bytes | meaning |
//! |---|---|
//! | `B7` | magic |
//! | varint | wire-format version (1; anything else → `wire_version_unsupported`) |
//! | value | the payload; nothing may follow it |
//!
//! Every value is one tag byte and its payload. Integers are LEB128 varints (`zz` =
//! zig-zag for signed ones); a *name* (Symbol, class, field, selector, node) is interned per
//! message: varint `0` then `len` + UTF-8 defines the next name (numbered from 1), varint `i`
//! repeats name `i`.
//!
//! | tag | value | payload |
//! |---|---|---|
//! | `00` `01` `02` | nil, false, true | — |
//! | `03` | Integer (i64) | zz varint |
//! | `04` | Integer (big) | sign byte (0 / 1 = negative), varint len, magnitude little-endian |
//! | `05` | Float | 8 bytes, IEEE 754 bits little-endian (NaN payloads and -0.0 kept) |
//! | `06` | Character | varint code point |
//! | `07` | Symbol | name |
//! | `08` / `09` | String / Binary | varint len, bytes (UTF-8 for String) |
//! | `0A` `0B` `0D` `0F` `11` | List, Array, Tuple, Set, Queue | varint n, n values (Set in term order) |
//! | `0C` | Array of small immediates | varint n, n bytes: 0 nil, 1 false, 2 true, 3+k Integer k (k ≤ 252) |
//! | `0E` | Dictionary | varint n, n × (key, value) in term order |
//! | `10` | Bag | varint n, n × (value, varint count) |
//! | `12` | Interval | flags (bit 0: explicit step), from, to, step |
//! | `13` | Value instance (versioned envelope) | name class, varint shape version, varint n, n × (name field, value), fields in name order |
//! | `14` | Object-kind instance | name class (decoded as a fresh instance) |
//! | `15` / `16` | class / metaclass | name class |
//! | `17` | Block | varint arity, origin (`00` method: name class, side byte, name selector; `01` unit: String path; `02` unknown), 8-byte fingerprint, varint ordinal, varint n, value `self`, n captured values |
//! | `18` | reference | kind byte (actor, proxy, pid, name, supervisor, monitor), name node, name class, varint pid number, service byte, varint extra (timeout ms / dynamic / ref id), for a name proxy: name registered name |
//! | `19` | Duration | zz varint milliseconds |
//! | `1A` | Stream | source byte, varint source-value count, varint step count, one byte per step, then the source values and the step values |
//!
//! The encoder is a [`Sink`] of the one walker ([`super::walk`]), which decides what may
//! cross and keeps the path for `not_serialisable`. The decoder lives in `wire_decode.rs`.

use std::sync::Arc;

use num_bigint::Sign;

use crate::interp::eval::Ctx;
use crate::interp::program::Program;
use crate::value::{Sym, Value};

use super::block::{identity, shape_version, Origin};
use super::error::CodecError;
use super::walk::{walk, Item, Path, Sink, WordMap, NO_NODE};

pub use super::wire_decode::{decode, DecodeCtx};

pub(crate) const MAGIC: u8 = 0xB7;
pub(crate) const WIRE_VERSION: u64 = 1;

pub(crate) mod tag {
    pub(crate) const NIL: u8 = 0x00;
    pub(crate) const FALSE: u8 = 0x01;
    pub(crate) const TRUE: u8 = 0x02;
    pub(crate) const INT: u8 = 0x03;
    pub(crate) const BIGINT: u8 = 0x04;
    pub(crate) const FLOAT: u8 = 0x05;
    pub(crate) const CHAR: u8 = 0x06;
    pub(crate) const SYMBOL: u8 = 0x07;
    pub(crate) const STRING: u8 = 0x08;
    pub(crate) const BINARY: u8 = 0x09;
    pub(crate) const LIST: u8 = 0x0A;
    pub(crate) const ARRAY: u8 = 0x0B;
    pub(crate) const ARRAY_SMALL: u8 = 0x0C;
    pub(crate) const TUPLE: u8 = 0x0D;
    pub(crate) const DICT: u8 = 0x0E;
    pub(crate) const SET: u8 = 0x0F;
    pub(crate) const BAG: u8 = 0x10;
    pub(crate) const QUEUE: u8 = 0x11;
    pub(crate) const INTERVAL: u8 = 0x12;
    pub(crate) const INSTANCE: u8 = 0x13;
    pub(crate) const OBJECT: u8 = 0x14;
    pub(crate) const CLASS: u8 = 0x15;
    pub(crate) const META: u8 = 0x16;
    pub(crate) const BLOCK: u8 = 0x17;
    pub(crate) const REF: u8 = 0x18;
    pub(crate) const DURATION: u8 = 0x19;
    pub(crate) const STREAM: u8 = 0x1A;
}

/// What the encoder needs to know about the sending node.
#[derive(Clone)]
pub(crate) struct EncodeOpts {
    /// This node's name (references to local processes carry it).
    pub node: Sym,
    /// Names top-level source units in block identities (optional).
    pub prog: Option<Arc<Program>>,
}

impl Default for EncodeOpts {
    fn default() -> Self {
        EncodeOpts {
            node: Sym::new(NO_NODE),
            prog: None,
        }
    }
}

impl EncodeOpts {
    /// The options of the node `ctx` runs on.
    pub(crate) fn of(ctx: &Ctx) -> EncodeOpts {
        EncodeOpts {
            node: crate::interp::actor::prims::node::current_name(ctx),
            prog: Some(ctx.prog.clone()),
        }
    }
}

/// Encodes `v` (found at `root`: `arg1`, `result`, `state.key` …) as a v1 message, for a
/// node without distribution (`nonode@nohost`).
pub fn encode(v: &Value, root: &str) -> Result<Vec<u8>, CodecError> {
    encode_with(v, root, &EncodeOpts::default())
}

/// [`encode`] as the node `ctx` runs on.
pub fn encode_in(ctx: &Ctx, v: &Value, root: &str) -> Result<Vec<u8>, CodecError> {
    encode_with(v, root, &EncodeOpts::of(ctx))
}

/// Decodes a message in `ctx`'s program, resolving references with a [`LocalResolver`]
/// (this node's processes; `node_down` for others). `root` names the payload in errors.
///
/// [`LocalResolver`]: super::LocalResolver
pub fn decode_local(ctx: &mut Ctx, bytes: &[u8], root: &str) -> Result<Value, CodecError> {
    let r = super::LocalResolver::new(ctx);
    decode(
        bytes,
        &mut DecodeCtx {
            ctx,
            resolver: &r,
            root,
        },
    )
}

pub(crate) fn encode_with(v: &Value, root: &str, opts: &EncodeOpts) -> Result<Vec<u8>, CodecError> {
    let mut enc = Encoder {
        out: Vec::with_capacity(64),
        names: WordMap::default(),
        shapes: WordMap::default(),
        prog: opts.prog.as_deref(),
    };
    enc.out.push(MAGIC);
    put_varint(&mut enc.out, WIRE_VERSION);
    walk(v, opts.node, &mut Path::new(root), &mut enc)?;
    Ok(enc.out)
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub(crate) fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}

struct Encoder<'p> {
    out: Vec<u8>,
    names: WordMap<Sym, u64>,
    shapes: WordMap<usize, i64>,
    prog: Option<&'p Program>,
}

impl Encoder<'_> {
    fn name(&mut self, s: Sym) {
        if let Some(&i) = self.names.get(&s) {
            put_varint(&mut self.out, i);
            return;
        }
        let i = self.names.len() as u64 + 1;
        self.names.insert(s, i);
        self.out.push(0);
        self.bytes(s.as_str().as_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        put_varint(&mut self.out, b.len() as u64);
        self.out.extend_from_slice(b);
    }
    fn head(&mut self, t: u8, n: usize) {
        self.out.push(t);
        put_varint(&mut self.out, n as u64);
    }
}

/// The byte of a small-immediate Array element (see the tag table), if it is one.
fn small_code(v: &Value) -> Option<u8> {
    match v {
        Value::Nil => Some(0),
        Value::False => Some(1),
        Value::True => Some(2),
        Value::Int(i) if (0..=252).contains(i) => Some(*i as u8 + 3),
        _ => None,
    }
}

impl Sink for Encoder<'_> {
    fn item(&mut self, item: &Item<'_>, _path: &Path) -> Result<bool, CodecError> {
        match item {
            Item::Nil => self.out.push(tag::NIL),
            Item::Bool(false) => self.out.push(tag::FALSE),
            Item::Bool(true) => self.out.push(tag::TRUE),
            Item::Int(i) => {
                self.out.push(tag::INT);
                put_varint(&mut self.out, zigzag(*i));
            }
            Item::BigInt(b) => {
                let (sign, mag) = b.to_bytes_le();
                self.out.push(tag::BIGINT);
                self.out.push((sign == Sign::Minus) as u8);
                self.bytes(&mag);
            }
            Item::Float(x) => {
                self.out.push(tag::FLOAT);
                self.out.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Item::Char(c) => {
                self.out.push(tag::CHAR);
                put_varint(&mut self.out, *c as u64);
            }
            Item::Symbol(s) => {
                self.out.push(tag::SYMBOL);
                self.name(*s);
            }
            Item::Str(s) => {
                self.out.push(tag::STRING);
                self.bytes(s.as_bytes());
            }
            Item::Binary(b) => {
                self.out.push(tag::BINARY);
                self.bytes(b);
            }
            Item::Duration(ms) => {
                self.out.push(tag::DURATION);
                put_varint(&mut self.out, zigzag(*ms));
            }
            Item::List(l) => self.head(tag::LIST, l.len()),
            Item::Queue(q) => self.head(tag::QUEUE, q.len()),
            Item::Array(a) => {
                if a.is_compact() {
                    // Every element is a small immediate: one byte each, children skipped.
                    self.head(tag::ARRAY_SMALL, a.len());
                    for x in a.iter() {
                        self.out.push(small_code(x).unwrap_or(0));
                    }
                    return Ok(false);
                }
                self.head(tag::ARRAY, a.len());
            }
            Item::Tuple(t) => self.head(tag::TUPLE, t.len()),
            Item::Dict(d) => self.head(tag::DICT, d.len()),
            Item::Set(s) => self.head(tag::SET, s.len()),
            Item::Bag(b) => self.head(tag::BAG, b.len()),
            Item::Interval(iv) => {
                self.out.push(tag::INTERVAL);
                self.out.push(iv.explicit_step as u8);
            }
            Item::Instance(inst) => {
                let key = Arc::as_ptr(&inst.class) as usize;
                let v = match self.shapes.get(&key) {
                    Some(v) => *v,
                    None => {
                        let v = shape_version(&inst.class);
                        self.shapes.insert(key, v);
                        v
                    }
                };
                self.out.push(tag::INSTANCE);
                self.name(inst.class.name);
                put_varint(&mut self.out, zigzag(v));
                put_varint(&mut self.out, inst.class.field_names.len() as u64);
            }
            Item::ObjectByClass(c) => {
                self.out.push(tag::OBJECT);
                self.name(c.name);
            }
            Item::Class(c) => {
                self.out.push(tag::CLASS);
                self.name(c.name);
            }
            Item::Meta(c) => {
                self.out.push(tag::META);
                self.name(c.name);
            }
            Item::Block(b) => {
                let id = identity(b, self.prog);
                self.out.push(tag::BLOCK);
                put_varint(&mut self.out, id.arity as u64);
                match &id.origin {
                    Origin::Method {
                        class,
                        class_side,
                        selector,
                    } => {
                        self.out.push(0);
                        self.name(*class);
                        self.out.push(*class_side as u8);
                        self.name(*selector);
                    }
                    Origin::Unit(p) => {
                        self.out.push(1);
                        self.bytes(p.as_bytes());
                    }
                    Origin::Unknown => self.out.push(2),
                }
                self.out.extend_from_slice(&id.fingerprint.to_le_bytes());
                put_varint(&mut self.out, id.ordinal as u64);
                // Then `self` and the captured values (the walker), preceded by their count.
                // The count is written before `self` so the decoder can size its buffer.
                put_varint(&mut self.out, b.upvals.len() as u64);
            }
            Item::Ref(r) => {
                self.out.push(tag::REF);
                self.out.push(r.kind.code());
                self.name(r.node);
                self.name(r.class);
                put_varint(&mut self.out, r.number);
                self.out.push(r.service as u8);
                put_varint(&mut self.out, r.extra);
                if let Some(n) = r.name {
                    self.name(n);
                }
            }
            Item::Stream(p) => {
                self.out.push(tag::STREAM);
                self.out.push(p.source);
                put_varint(&mut self.out, p.values.len() as u64);
                put_varint(&mut self.out, p.steps.len() as u64);
                for (t, _) in &p.steps {
                    self.out.push(*t);
                }
            }
        }
        Ok(true)
    }

    fn field(&mut self, name: Sym) -> Result<(), CodecError> {
        self.name(name);
        Ok(())
    }

    fn count(&mut self, n: usize) -> Result<(), CodecError> {
        put_varint(&mut self.out, n as u64);
        Ok(())
    }
}
