//! Values ⇄ Rust types through serde ("a script's Dictionary becomes a config
//! struct").
//!
//! [`to_rust`] deserializes any `T: DeserializeOwned` from a `&Value` (the deserializer in
//! `serde_de.rs` asks the walker's [`classify`](super::walk::classify) what each node is, so
//! what a Value "is" has one definition):
//!
//! | Value | Rust |
//! |---|---|
//! | Dictionary (any keys) | struct (String or Symbol keys naming the fields), map, enum `{#Variant => content}` |
//! | Value instance | struct / map of its fields by name |
//! | List, Array, Tuple, Queue, Set | seq, tuple, tuple struct |
//! | Integer (big ones too) | any integer type, range-checked; f32/f64 |
//! | Float | f32/f64 |
//! | String, Symbol | String/&str, char (one character), unit enum variant |
//! | Character | char |
//! | Binary | bytes / `Vec<u8>` (as a seq) |
//! | nil | `None`, `()` |
//! | Duration | its milliseconds |
//!
//! [`from_rust`] builds Values from any `T: Serialize`:
//!
//! | Rust | Value |
//! |---|---|
//! | struct, struct variant content | Dictionary with **Symbol** keys (`#{#port => 80}`): field names are identifiers, which a Smalltalk user writes as Symbols |
//! | map (`HashMap<String, _>` …) | Dictionary whose keys are the serialized keys (Strings stay Strings: map keys are data) |
//! | seq (`Vec`, slices, sets) | List |
//! | tuple, tuple struct | Tuple |
//! | `None`, `()`, unit struct | nil |
//! | unit variant | Symbol (`#Red`) |
//! | newtype / tuple / struct variant | `#{#Variant => content}` (serde's external tagging) |
//! | integers | Integer (u64/i128/u128 beyond i64 become big Integers) |
//! | f32/f64, bool, char, &str/String, bytes | Float, Boolean, Character, String, Binary |
//!
//! Errors are [`CodecError`]s of kind `type_error` whose path says where the mismatch was,
//! in the 8.6 notation (`{#server}{#port}`, `[3]`, `.field`).

use std::fmt;

use num_bigint::BigInt;
use serde::ser::{self, Serialize};

use crate::value::dict::Dict;
use crate::value::{Ref, Sym, Value};

use super::error::{kind, CodecError, PathStep};
use super::walk::{Path, Seg};

/// Converts a Value into a Rust value of type `T`.
pub fn to_rust<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, CodecError> {
    T::deserialize(super::serde_de::ValueDe(v)).map_err(Error::into_codec)
}

/// Converts a Rust value into a Value.
pub fn from_rust<T: Serialize + ?Sized>(x: &T) -> Result<Value, CodecError> {
    x.serialize(Ser).map_err(Error::into_codec)
}

/// The serde error of both directions: a message and the path to where it happened,
/// innermost segment first (each container adds its own segment on the way out).
#[derive(Debug)]
pub struct Error {
    msg: String,
    rev: Vec<Seg>,
}

impl Error {
    pub(crate) fn new(msg: impl Into<String>) -> Error {
        Error {
            msg: msg.into(),
            rev: Vec::new(),
        }
    }
    /// Adds the segment of the container the error came out of.
    pub(crate) fn at(mut self, seg: Seg) -> Error {
        self.rev.push(seg);
        self
    }
    fn into_codec(self) -> CodecError {
        let mut p = Path::new("");
        let mut steps = Vec::with_capacity(self.rev.len());
        for s in self.rev.into_iter().rev() {
            steps.push(match &s {
                Seg::Field(f) => PathStep::Name(f.as_str().to_string()),
                Seg::Index(i) => PathStep::Index(*i),
                Seg::Key(Value::Int(i)) => PathStep::Int(*i),
                Seg::Key(Value::Symbol(k)) => PathStep::Name(k.as_str().to_string()),
                Seg::Key(Value::Str(k)) => PathStep::Name(k.as_str().to_string()),
                _ => PathStep::Other,
            });
            p.push(s);
        }
        let path = p.render();
        let message = if path.is_empty() {
            self.msg
        } else {
            format!("{} at {path}", self.msg)
        };
        let mut e = CodecError::new(kind::TYPE_ERROR, message, path);
        e.steps = steps;
        e
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(msg.to_string())
    }
}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(msg.to_string())
    }
}

/// The serializer: builds one Value.
struct Ser;

fn sym_dict(entries: Vec<(Value, Value)>) -> Value {
    Value::Dict(Ref::new(entries.into_iter().collect::<Dict>()))
}

fn variant(name: &str, content: Value) -> Value {
    sym_dict(vec![(Value::sym(name), content)])
}

impl ser::Serializer for Ser {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = SeqSer;
    type SerializeMap = MapSer;
    type SerializeStruct = MapSer;
    type SerializeStructVariant = MapSer;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        Ok(Value::bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, Error> {
        Ok(Value::from_bigint(BigInt::from(v)))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(Value::from_bigint(BigInt::from(v)))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, Error> {
        Ok(Value::from_bigint(BigInt::from(v)))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        Ok(Value::float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        Ok(Value::float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        Ok(Value::ch(v))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::str(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        Ok(Value::Binary(Ref::new(v.to_vec())))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::Nil)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Value, Error> {
        v.serialize(Ser)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(Value::Nil)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, Error> {
        Ok(Value::Nil)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<Value, Error> {
        Ok(Value::sym(v))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Value, Error> {
        v.serialize(Ser)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        var: &'static str,
        v: &T,
    ) -> Result<Value, Error> {
        let inner = v
            .serialize(Ser)
            .map_err(|e| e.at(Seg::Key(Value::sym(var))))?;
        Ok(variant(var, inner))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer, Error> {
        Ok(SeqSer::new(len, SeqKind::List))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer, Error> {
        Ok(SeqSer::new(Some(len), SeqKind::Tuple))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<SeqSer, Error> {
        Ok(SeqSer::new(Some(len), SeqKind::Tuple))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        var: &'static str,
        len: usize,
    ) -> Result<SeqSer, Error> {
        Ok(SeqSer::new(Some(len), SeqKind::Variant(var)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapSer, Error> {
        Ok(MapSer::new(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<MapSer, Error> {
        Ok(MapSer::new(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        var: &'static str,
        _: usize,
    ) -> Result<MapSer, Error> {
        Ok(MapSer::new(Some(var)))
    }
}

enum SeqKind {
    List,
    Tuple,
    Variant(&'static str),
}

struct SeqSer {
    items: Vec<Value>,
    kind: SeqKind,
}

impl SeqSer {
    fn new(len: Option<usize>, kind: SeqKind) -> SeqSer {
        SeqSer {
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            kind,
        }
    }
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let i = self.items.len() + 1;
        self.items
            .push(v.serialize(Ser).map_err(|e| e.at(Seg::Index(i)))?);
        Ok(())
    }
    fn finish(self) -> Value {
        match self.kind {
            SeqKind::List => Value::list(self.items),
            SeqKind::Tuple => Value::tuple(self.items),
            SeqKind::Variant(var) => variant(var, Value::tuple(self.items)),
        }
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for SeqSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

struct MapSer {
    entries: Vec<(Value, Value)>,
    key: Option<Value>,
    variant: Option<&'static str>,
}

impl MapSer {
    fn new(variant: Option<&'static str>) -> MapSer {
        MapSer {
            entries: Vec::new(),
            key: None,
            variant,
        }
    }
    fn field<T: Serialize + ?Sized>(&mut self, name: &'static str, v: &T) -> Result<(), Error> {
        let k = Value::Symbol(Sym::new(name));
        let x = v.serialize(Ser).map_err(|e| e.at(Seg::Key(k.clone())))?;
        self.entries.push((k, x));
        Ok(())
    }
    fn finish(self) -> Value {
        let d = sym_dict(self.entries);
        match self.variant {
            Some(var) => variant(var, d),
            None => d,
        }
    }
}

impl ser::SerializeMap for MapSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error> {
        self.key = Some(k.serialize(Ser)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let k = self.key.take().unwrap_or(Value::Nil);
        let x = v.serialize(Ser).map_err(|e| e.at(Seg::Key(k.clone())))?;
        self.entries.push((k, x));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStruct for MapSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        k: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.field(k, v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStructVariant for MapSer {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        k: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.field(k, v)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}
