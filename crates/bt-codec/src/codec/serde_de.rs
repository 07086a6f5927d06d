//! `serde::Deserializer` over a `&Value` (the table is in [`super::serde`]). Each node is
//! classified by the walker's [`classify`]; errors collect the path on the way out.

use num_traits::ToPrimitive;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::value::{Sym, Value};

use super::serde::Error;
use super::walk::{classify, field_order, Item, Seg, NO_NODE};

/// Deserializes from one Value.
#[derive(Clone, Copy)]
pub(crate) struct ValueDe<'de>(pub &'de Value);

fn unsupported(what: &str) -> Error {
    Error::new(format!("{what} has no Rust counterpart"))
}

fn item(v: &Value) -> Result<Item<'_>, Error> {
    classify(v, Sym::new(NO_NODE)).map_err(|c| Error::new(format!("{c} value cannot leave bt")))
}

/// Elements of a sequence-like Value, if it is one.
fn seq_elems(v: &Value) -> Option<Vec<&Value>> {
    Some(match v {
        Value::List(l) | Value::Queue(l) => l.iter().collect(),
        Value::Array(a) => a.iter().collect(),
        Value::Tuple(t) => t.iter().collect(),
        Value::Set(s) => s.iter().map(|k| &k.0).collect(),
        _ => return None,
    })
}

impl<'de> de::Deserializer<'de> for ValueDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let v = self.0;
        match item(v)? {
            Item::Nil => visitor.visit_unit(),
            Item::Bool(b) => visitor.visit_bool(b),
            Item::Int(i) => visitor.visit_i64(i),
            Item::BigInt(b) => {
                if let Some(u) = b.to_u64() {
                    visitor.visit_u64(u)
                } else if let Some(u) = b.to_u128() {
                    visitor.visit_u128(u)
                } else if let Some(i) = b.to_i128() {
                    visitor.visit_i128(i)
                } else {
                    Err(Error::new(format!(
                        "integer {b} is too large for any Rust integer"
                    )))
                }
            }
            Item::Float(x) => visitor.visit_f64(x),
            Item::Char(c) => visitor.visit_char(c),
            Item::Symbol(s) => visitor.visit_borrowed_str(s.as_str()),
            Item::Str(s) => visitor.visit_borrowed_str(s),
            Item::Binary(b) => visitor.visit_borrowed_bytes(b),
            Item::Duration(ms) => visitor.visit_i64(ms),
            Item::List(_) | Item::Array(_) | Item::Tuple(_) | Item::Queue(_) | Item::Set(_) => {
                let elems = seq_elems(v).unwrap_or_default();
                visitor.visit_seq(Seq {
                    it: elems.into_iter(),
                    i: 0,
                })
            }
            Item::Dict(d) => visitor.visit_map(Map {
                it: d
                    .iter()
                    .map(|(k, x)| (KeyDe::of(&k), x))
                    .collect::<Vec<_>>()
                    .into_iter(),
                cur: None,
            }),
            Item::Instance(inst) => {
                let entries: Vec<(KeyDe<'de>, &'de Value)> = field_order(&inst.class)
                    .into_iter()
                    .map(|i| {
                        let name = inst.class.field_names[i];
                        (KeyDe::Name(name), inst.fields.get(i).unwrap_or(&NIL))
                    })
                    .collect();
                visitor.visit_map(Map {
                    it: entries.into_iter(),
                    cur: None,
                })
            }
            Item::Bag(_) => Err(unsupported("a Bag")),
            Item::Interval(_) => Err(unsupported("an Interval")),
            Item::ObjectByClass(c) => Err(unsupported(&format!("an instance of {}", c.name))),
            Item::Class(c) | Item::Meta(c) => Err(unsupported(&format!("the class {}", c.name))),
            Item::Block(_) => Err(unsupported("a Block")),
            Item::Stream(_) => Err(unsupported("a Stream")),
            Item::Ref(r) => Err(unsupported(&format!(
                "a reference to a {} process",
                r.class
            ))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == crate::value::deserialize::TOKEN {
            // `Value::deserialize`: the Value itself (value::deserialize).
            crate::value::deserialize::hand_over(self.0.clone());
            return visitor.visit_unit();
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A one-character String or Symbol is a char too.
        let s = match self.0 {
            Value::Str(s) => s.as_str(),
            Value::Symbol(s) => s.as_str(),
            _ => return self.deserialize_any(visitor),
        };
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => visitor.visit_char(c),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Symbol(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Str(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Dict(d) if d.len() == 1 => {
                let (k, x) = d.iter().next().ok_or_else(|| Error::new("empty"))?;
                visitor.visit_enum(Enum {
                    key: KeyDe::of(&k),
                    content: x,
                })
            }
            _ => Err(Error::new(
                "expected a Symbol or a one-entry Dictionary for an enum",
            )),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            // `Vec<u8>` and friends read a Binary as a sequence of bytes.
            Value::Binary(b) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(b.iter().copied()))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 str string
        byte_buf unit unit_struct tuple tuple_struct map struct identifier ignored_any
    }
}

/// A map key: a Value, or a field name of a Value instance.
#[derive(Clone, Copy)]
enum KeyDe<'de> {
    Value(&'de Value),
    /// An Integer key of a Dictionary that stores its keys as `i64`s.
    Int(i64),
    Name(Sym),
}

impl<'de> KeyDe<'de> {
    fn of(k: &crate::value::dict::KeyRef<'de>) -> KeyDe<'de> {
        match k.stored() {
            Some(v) => KeyDe::Value(v),
            None => KeyDe::Int(k.as_int().unwrap_or(0)),
        }
    }

    fn seg(self) -> Seg {
        match self {
            KeyDe::Value(k) => Seg::Key(k.clone()),
            KeyDe::Int(i) => Seg::Key(Value::Int(i)),
            KeyDe::Name(n) => Seg::Field(n),
        }
    }

    fn deserialize<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        match self {
            KeyDe::Value(kv) => seed.deserialize(ValueDe(kv)),
            KeyDe::Int(i) => seed.deserialize(IntDe(i)),
            KeyDe::Name(n) => seed.deserialize(de::value::BorrowedStrDeserializer::new(n.as_str())),
        }
    }
}

/// An Integer key that is not stored as a `Value`: deserializes exactly as [`ValueDe`] of
/// `Value::Int` does.
struct IntDe(i64);

impl<'de> de::Deserializer<'de> for IntDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(Error::new(
            "expected a Symbol or a one-entry Dictionary for an enum",
        ))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Seq<'de> {
    it: std::vec::IntoIter<&'de Value>,
    i: usize,
}

impl<'de> de::SeqAccess<'de> for Seq<'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.it.next() {
            None => Ok(None),
            Some(v) => {
                self.i += 1;
                let i = self.i;
                seed.deserialize(ValueDe(v))
                    .map(Some)
                    .map_err(|e| e.at(Seg::Index(i)))
            }
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.it.len())
    }
}

struct Map<'de> {
    it: std::vec::IntoIter<(KeyDe<'de>, &'de Value)>,
    cur: Option<(KeyDe<'de>, &'de Value)>,
}

impl<'de> de::MapAccess<'de> for Map<'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.it.next() else {
            return Ok(None);
        };
        self.cur = Some((k, v));
        k.deserialize(seed).map(Some).map_err(|e| e.at(k.seg()))
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((k, v)) = self.cur.take() else {
            return Err(Error::new("map value without a key"));
        };
        seed.deserialize(ValueDe(v)).map_err(|e| e.at(k.seg()))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.it.len())
    }
}

/// `#{#Variant => content}`.
struct Enum<'de> {
    key: KeyDe<'de>,
    content: &'de Value,
}

impl<'de> de::EnumAccess<'de> for Enum<'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let v = self.key.deserialize(seed)?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Enum<'de> {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        match self.content {
            Value::Nil => Ok(()),
            _ => Err(Error::new("a unit variant takes no content").at(self.key.seg())),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(ValueDe(self.content))
            .map_err(|e| e.at(self.key.seg()))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(ValueDe(self.content), visitor)
            .map_err(|e| e.at(self.key.seg()))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_map(ValueDe(self.content), visitor)
            .map_err(|e| e.at(self.key.seg()))
    }
}

/// A `nil` to lend out (a `&Value::Nil` temporary cannot outlive its statement).
static NIL: Value = Value::Nil;
