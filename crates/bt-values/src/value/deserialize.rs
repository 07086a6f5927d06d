//! `Value: Deserialize`, so that a Value is a serde type like any other: a host function may
//! take a `Value` argument (the embedding crate's `FromValue` covers every `DeserializeOwned`
//! type), and a Rust struct deserialized from a Value may keep a field as a `Value`.
//!
//! A Value deserializes only from bt's own deserializer (the codec's): `Value::deserialize`
//! asks for the newtype struct [`TOKEN`]; that deserializer answers by handing the value it
//! reads over through [`hand_over`] and visiting unit, and the visitor takes it back — the
//! same Value (shared, not copied: actors, pids and blocks stay what they are). Any other
//! deserializer answers an error.

use std::cell::RefCell;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::Value;

/// The newtype-struct name by which `Value::deserialize` asks for the Value itself.
pub const TOKEN: &str = "$bt::Value";

thread_local! {
    static HANDED: RefCell<Option<Value>> = const { RefCell::new(None) };
}

/// Called by a deserializer of Values asked for [`TOKEN`], just before it visits unit.
pub fn hand_over(v: Value) {
    HANDED.with(|h| *h.borrow_mut() = Some(v));
}

struct Taker;

impl<'de> Visitor<'de> for Taker {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a bt value (only bt's own deserializer makes one)")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        HANDED
            .with(|h| h.borrow_mut().take())
            .ok_or_else(|| E::custom("a bt value (only bt's own deserializer makes one)"))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_newtype_struct(TOKEN, Taker)
    }
}
