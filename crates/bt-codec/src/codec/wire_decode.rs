//! Decoding v1 wire messages (format table in [`super::wire`]).
//!
//! Never panics on any input: every length is checked against the bytes left before
//! anything is allocated, nesting is bounded by [`MAX_DEPTH`], and every failure is a
//! [`CodecError`] (`malformed_message` for bytes that are not a message; `class_not_found`,
//! `shape_version_ahead`, `shape_migration_failed` for envelopes this node cannot take;
//! resolver errors for references) carrying the path where it happened.

use crate::interp::class::ClassExt;
use std::sync::Arc;

use num_bigint::{BigInt, Sign};

use crate::interp::actor::handle::{native, DurationVal};
use crate::interp::class::{Builtin, ClassKind};
use crate::interp::eval::Ctx;
use crate::interp::prims::collections::stream::{StreamObj, StreamParts};
use crate::syntax::ast::{TypeExpr, TypeKind};
use crate::value::array::ArrayData;
use crate::value::dict::Dict;
use crate::value::{ClassRef, Instance, Interval, Key, Native, Ref, Sym, Value};

use super::block::{resolve, shape_version, BlockId, Origin};
use super::error::{kind, CodecError};
use super::resolve::RefResolver;
use super::walk::{handle_scoped, RefKind, Seg, WireRef, WordMap, MAX_DEPTH};
use super::wire::{tag, MAGIC, WIRE_VERSION};

/// What decoding needs from the receiving node: a context of its program (classes, field
/// defaults) and a resolver for references. `root` names the payload in error paths.
pub struct DecodeCtx<'a> {
    pub ctx: &'a mut Ctx,
    pub resolver: &'a dyn RefResolver,
    pub root: &'a str,
}

/// Decodes one v1 message.
pub fn decode(bytes: &[u8], dc: &mut DecodeCtx<'_>) -> Result<Value, CodecError> {
    let mut d = Decoder {
        buf: bytes,
        pos: 0,
        names: Vec::new(),
        path: super::walk::Path::new(dc.root),
        shapes: WordMap::default(),
        dc,
    };
    if d.byte()? != MAGIC {
        return Err(d.bad("not a bt wire message (bad magic byte)"));
    }
    let version = d.varint()?;
    if version != WIRE_VERSION {
        return Err(CodecError::new(
            kind::WIRE_VERSION_UNSUPPORTED,
            format!(
                "wire format version {version} is not supported (this node speaks {WIRE_VERSION})"
            ),
            "",
        ));
    }
    let v = d.value()?;
    if d.pos != d.buf.len() {
        return Err(d.bad(format!("{} bytes after the value", d.buf.len() - d.pos)));
    }
    Ok(v)
}

struct Decoder<'b, 'c, 'd> {
    buf: &'b [u8],
    pos: usize,
    names: Vec<Sym>,
    path: super::walk::Path,
    /// Receiving class and its shape version, by name.
    shapes: WordMap<Sym, (ClassRef, i64)>,
    dc: &'c mut DecodeCtx<'d>,
}

fn small(code: u8) -> Value {
    match code {
        0 => Value::Nil,
        1 => Value::False,
        2 => Value::True,
        k => Value::Int(k as i64 - 3),
    }
}

/// Whether a declared type admits nil (unknown or generic names are taken to admit it).
pub(crate) fn admits_nil(t: &TypeExpr) -> bool {
    match &t.kind {
        TypeKind::Nil | TypeKind::Error => true,
        TypeKind::Named { name, .. } => {
            matches!(
                name.as_str(),
                "Nil" | "UndefinedObject" | "Dynamic" | "Object" | "ProtoObject" | "Any"
            ) || name.len() == 1
        }
        TypeKind::Union(ts) => ts.iter().any(admits_nil),
        TypeKind::Inter(ts) => ts.iter().all(admits_nil),
        TypeKind::Diff(a, b) => admits_nil(a) && !admits_nil(b),
        TypeKind::SelfType | TypeKind::Meta(_) | TypeKind::Symbol(_) => false,
        TypeKind::False | TypeKind::True => false,
    }
}

impl Decoder<'_, '_, '_> {
    fn bad(&self, what: impl std::fmt::Display) -> CodecError {
        CodecError::malformed(what, self.path.render())
    }

    fn at(&self, mut e: CodecError) -> CodecError {
        if e.path.is_empty() {
            e.path = self.path.render();
            e.message = format!("{} (at {})", e.message, e.path);
        }
        e
    }

    fn byte(&mut self) -> Result<u8, CodecError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.bad("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, CodecError> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let part = (b & 0x7f) as u64;
            if shift == 63 && part > 1 {
                return Err(self.bad("varint overflows 64 bits"));
            }
            n |= part << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(self.bad("varint longer than 10 bytes"))
    }

    fn int(&mut self) -> Result<i64, CodecError> {
        let z = self.varint()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A count of things that take at least one byte each (so never more than what is left).
    fn len(&mut self) -> Result<usize, CodecError> {
        let n = self.varint()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(self.bad(format!("length {n} exceeds the message")));
        }
        Ok(n as usize)
    }

    fn bytes(&mut self) -> Result<&[u8], CodecError> {
        let n = self.len()?;
        let b = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    fn string(&mut self) -> Result<String, CodecError> {
        let b = self.bytes()?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(self.bad("invalid UTF-8")),
        }
    }

    fn name(&mut self) -> Result<Sym, CodecError> {
        let i = self.varint()?;
        if i == 0 {
            let s = Sym::new(&self.string()?);
            self.names.push(s);
            return Ok(s);
        }
        self.names
            .get(i as usize - 1)
            .copied()
            .ok_or_else(|| self.bad(format!("name #{i} not defined")))
    }

    fn elems(&mut self, n: usize) -> Result<Vec<Value>, CodecError> {
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            self.path.push(Seg::Index(i + 1));
            v.push(self.value()?);
            self.path.pop();
        }
        Ok(v)
    }

    fn value(&mut self) -> Result<Value, CodecError> {
        if self.path.depth() >= MAX_DEPTH {
            return Err(self.bad(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let t = self.byte()?;
        Ok(match t {
            tag::NIL => Value::Nil,
            tag::FALSE => Value::False,
            tag::TRUE => Value::True,
            tag::INT => Value::Int(self.int()?),
            tag::BIGINT => {
                let neg = match self.byte()? {
                    0 => false,
                    1 => true,
                    _ => return Err(self.bad("bad sign byte")),
                };
                let mag = self.bytes()?;
                let sign = if neg { Sign::Minus } else { Sign::Plus };
                Value::from_bigint(BigInt::from_bytes_le(sign, mag))
            }
            tag::FLOAT => {
                let end = self.pos + 8;
                let b = self
                    .buf
                    .get(self.pos..end)
                    .ok_or_else(|| self.bad("truncated"))?;
                let bits = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                self.pos = end;
                Value::float(f64::from_bits(bits))
            }
            tag::CHAR => {
                let c = self.varint()?;
                let c = u32::try_from(c).ok().and_then(char::from_u32);
                Value::ch(c.ok_or_else(|| self.bad("invalid code point"))?)
            }
            tag::SYMBOL => Value::Symbol(self.name()?),
            tag::STRING => Value::str(self.string()?),
            tag::BINARY => Value::Binary(Ref::new(self.bytes()?.to_vec())),
            tag::LIST | tag::QUEUE | tag::ARRAY | tag::TUPLE | tag::SET => {
                let n = self.len()?;
                let v = self.elems(n)?;
                match t {
                    tag::LIST => Value::List(Ref::new(v.into_iter().collect())),
                    tag::QUEUE => Value::Queue(Ref::new(v.into_iter().collect())),
                    tag::ARRAY => Value::Array(Ref::new(v.into_iter().collect())),
                    tag::TUPLE => Value::tuple(v),
                    _ => Value::Set(Ref::new(v.into_iter().map(Key).collect())),
                }
            }
            tag::ARRAY_SMALL => {
                let b = self.bytes()?;
                Value::Array(Ref::new(b.iter().map(|c| small(*c)).collect::<ArrayData>()))
            }
            tag::DICT => {
                let n = self.len()?;
                let mut d = Dict::new();
                for _ in 0..n {
                    let k = self.value()?;
                    self.path.push(Seg::Key(k.clone()));
                    let v = self.value()?;
                    self.path.pop();
                    d.insert(k, v);
                }
                Value::Dict(Ref::new(d))
            }
            tag::BAG => {
                let n = self.len()?;
                let mut m = imbl::OrdMap::new();
                for i in 0..n {
                    self.path.push(Seg::Index(i + 1));
                    let k = self.value()?;
                    let c = self.varint()?;
                    if c == 0 || c > usize::MAX as u64 {
                        return Err(self.bad("bad Bag count"));
                    }
                    self.path.pop();
                    m.insert(Key(k), c as usize);
                }
                Value::Bag(Ref::new(m))
            }
            tag::INTERVAL => {
                let explicit = match self.byte()? {
                    0 => false,
                    1 => true,
                    _ => return Err(self.bad("bad Interval flags")),
                };
                let [from, to, step]: [Value; 3] = self
                    .elems(3)?
                    .try_into()
                    .map_err(|_| self.bad("Interval"))?;
                let num = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_));
                if !(num(&from) && num(&to) && num(&step)) {
                    return Err(self.bad("Interval bounds must be numbers"));
                }
                Value::Interval(Ref::new(Interval {
                    from,
                    to,
                    step,
                    explicit_step: explicit,
                }))
            }
            tag::DURATION => {
                let ms = self.int()?;
                let class = self.builtin("Duration")?;
                native(DurationVal { ms, class })
            }
            tag::INSTANCE => self.instance()?,
            tag::OBJECT => {
                let (c, _) = self.class(Some(ClassKind::Object))?;
                let v = self.dc.ctx.instantiate(&c);
                v.map_err(|_| {
                    self.at(CodecError::new(
                        kind::CLASS_NOT_FOUND,
                        format!("class {} could not be instantiated on this node", c.name),
                        "",
                    ))
                })?
            }
            tag::CLASS => Value::Class(self.class(None)?.0),
            tag::META => Value::Meta(self.class(None)?.0),
            tag::BLOCK => self.block()?,
            tag::REF => self.reference()?,
            tag::STREAM => self.stream()?,
            other => return Err(self.bad(format!("unknown tag 0x{other:02x}"))),
        })
    }

    fn builtin(&self, name: &str) -> Result<ClassRef, CodecError> {
        self.dc.ctx.prog.class_named(name).ok_or_else(|| {
            self.at(CodecError::new(
                kind::CLASS_NOT_FOUND,
                format!("class {name} is not loaded on this node"),
                "",
            ))
        })
    }

    /// A class by name (checking its kind when given) and its shape version here.
    fn class(&mut self, want: Option<ClassKind>) -> Result<(ClassRef, i64), CodecError> {
        let name = self.name()?;
        self.class_of(name, want)
    }

    fn class_of(
        &mut self,
        name: Sym,
        want: Option<ClassKind>,
    ) -> Result<(ClassRef, i64), CodecError> {
        let (c, v) = match self.shapes.get(&name) {
            Some(x) => x.clone(),
            None => {
                let c = self.dc.ctx.prog.class_by_sym(name).ok_or_else(|| {
                    self.at(CodecError::new(
                        kind::CLASS_NOT_FOUND,
                        format!("class {name} is not loaded on this node"),
                        "",
                    ))
                })?;
                let v = shape_version(&c);
                self.shapes.insert(name, (c.clone(), v));
                (c, v)
            }
        };
        if let Some(k) = want {
            if c.kind != k {
                let what = if k == ClassKind::Value {
                    "a Value"
                } else {
                    "an Object"
                };
                return Err(self.at(CodecError::new(
                    kind::CLASS_NOT_FOUND,
                    format!("class {name} is not {what} class on this node"),
                    "",
                )));
            }
            // Only classes whose instances are plain field records can be rebuilt from an
            // envelope / by class name: not Integer, Duration, Timer … (natives or
            // immediates), nor handles, nor abstract classes.
            let plain = match c.builtin {
                Builtin::None => true,
                Builtin::Plain => k == ClassKind::Object || !c.field_names.is_empty(),
                Builtin::NoNew => k == ClassKind::Value && !c.field_names.is_empty(),
                Builtin::Abstract => false,
            };
            if !plain || c.is_abstract || handle_scoped(&c) {
                return Err(self.at(CodecError::new(
                    kind::NOT_SERIALISABLE,
                    format!("a {name} cannot be rebuilt from a wire message"),
                    "",
                )));
            }
        }
        Ok((c, v))
    }

    /// An 8.7 envelope: class, shape version, fields by name; migrated forward if older.
    fn instance(&mut self) -> Result<Value, CodecError> {
        let class_name = self.name()?;
        let version = self.int()?;
        let n = self.len()?;
        let mut got: Vec<(Sym, Value)> = Vec::with_capacity(n);
        for _ in 0..n {
            let f = self.name()?;
            self.path.push(Seg::Field(f));
            let v = self.value()?;
            self.path.pop();
            got.push((f, v));
        }
        // Look the class up only now: the fields are read (and checked) either way.
        let (c, local) = self.class_of(class_name, Some(ClassKind::Value))?;
        if version > local {
            return Err(self.at(CodecError::new(
                kind::SHAPE_VERSION_AHEAD,
                format!(
                    "{} value has shape version {version}, newer than version {local} on this node",
                    c.name
                ),
                "",
            )));
        }
        // Same field set (the lengths match and every field is present: no duplicates).
        let exact = got.len() == c.field_names.len()
            && c.field_names
                .iter()
                .all(|f| got.iter().any(|(g, _)| g == f));
        let mut fields: Vec<Value> = vec![Value::Nil; c.field_names.len()];
        if exact {
            for (f, v) in got {
                if let Some(i) = c.field_index(f) {
                    fields[i] = v;
                }
            }
        } else {
            let mut defaults: Option<Vec<Value>> = None;
            for (i, f) in c.field_names.iter().enumerate() {
                if let Some(p) = got.iter().position(|(g, _)| g == f) {
                    fields[i] = std::mem::replace(&mut got[p].1, Value::Nil);
                    continue;
                }
                if c.field_defaults().get(i).is_some_and(|d| d.is_some()) {
                    if defaults.is_none() {
                        defaults = Some(self.defaults(&c, version, local)?);
                    }
                    fields[i] = defaults
                        .as_ref()
                        .and_then(|d| d.get(i).cloned())
                        .unwrap_or(Value::Nil);
                } else if let Some(t) = c.typed_slots().iter().find(|t| t.name == *f) {
                    if !admits_nil(&t.ty) {
                        return Err(self.migration_failed(
                            &c,
                            version,
                            local,
                            format!("field {f} has no default and its type excludes nil"),
                        ));
                    }
                }
            }
        }
        Ok(Value::Object(Arc::new(Instance {
            class: c,
            fields: fields.into(),
        })))
    }

    fn migration_failed(&self, c: &ClassRef, from: i64, to: i64, why: String) -> CodecError {
        self.at(CodecError::new(
            kind::SHAPE_MIGRATION_FAILED,
            format!(
                "cannot migrate {} from shape version {from} to {to}: {why}",
                c.name
            ),
            "",
        ))
    }

    /// The field defaults of `c`, evaluated here.
    fn defaults(&mut self, c: &ClassRef, from: i64, to: i64) -> Result<Vec<Value>, CodecError> {
        match &self.dc.ctx.instantiate(c) {
            Ok(Value::Object(i)) => Ok(i.fields.to_vec()),
            _ => Err(self.migration_failed(c, from, to, "a field default raised".into())),
        }
    }

    fn block(&mut self) -> Result<Value, CodecError> {
        let arity = u32::try_from(self.varint()?).map_err(|_| self.bad("arity"))?;
        let origin = match self.byte()? {
            0 => {
                let class = self.name()?;
                let class_side = self.byte()? == 1;
                let selector = self.name()?;
                Origin::Method {
                    class,
                    class_side,
                    selector,
                }
            }
            1 => Origin::Unit(self.string()?),
            2 => Origin::Unknown,
            _ => return Err(self.bad("bad block origin")),
        };
        let end = self.pos + 8;
        let fp = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.bad("truncated"))?;
        let fingerprint = u64::from_le_bytes(fp.try_into().unwrap_or([0; 8]));
        self.pos = end;
        let ordinal = u32::try_from(self.varint()?).map_err(|_| self.bad("ordinal"))?;
        let n = self.len()?;
        self.path.push(Seg::Field(Sym::new("self")));
        let recv = self.value()?;
        self.path.pop();
        let mut captured = Vec::with_capacity(n);
        for i in 0..n {
            self.path.push(Seg::Captured(i + 1));
            captured.push(self.value()?);
            self.path.pop();
        }
        let id = BlockId {
            origin,
            fingerprint,
            ordinal,
            arity,
        };
        Ok(resolve(self.dc.ctx, &id, recv, captured))
    }

    fn reference(&mut self) -> Result<Value, CodecError> {
        let kind =
            RefKind::from_code(self.byte()?).ok_or_else(|| self.bad("bad reference kind"))?;
        let node = self.name()?;
        let class = self.name()?;
        let number = self.varint()?;
        let service = match self.byte()? {
            0 => false,
            1 => true,
            _ => return Err(self.bad("bad service flag")),
        };
        let extra = self.varint()?;
        let name = if kind == RefKind::Name {
            Some(self.name()?)
        } else {
            None
        };
        let r = WireRef {
            kind,
            node,
            class,
            number,
            service,
            name,
            extra,
        };
        let resolver = self.dc.resolver;
        resolver.resolve(self.dc.ctx, &r).map_err(|e| self.at(e))
    }

    fn stream(&mut self) -> Result<Value, CodecError> {
        let source = self.byte()?;
        let nvals = self.len()?;
        let nsteps = self.len()?;
        let mut tags = Vec::with_capacity(nsteps);
        for _ in 0..nsteps {
            tags.push(self.byte()?);
        }
        self.path.push(Seg::Field(Sym::new("source")));
        let values = self.elems(nvals)?;
        self.path.pop();
        let vals = self.elems(nsteps)?;
        let parts = StreamParts {
            source,
            values,
            steps: tags.into_iter().zip(vals).collect(),
        };
        let class = self.builtin("Stream")?;
        let s = StreamObj::from_parts(class, parts).ok_or_else(|| self.bad("bad Stream"))?;
        Ok(Value::Native(Ref::new(Native(Box::new(s)))))
    }
}
