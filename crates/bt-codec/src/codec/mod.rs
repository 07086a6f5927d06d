//! The one value codec: how a run-time [`Value`]
//! leaves the interpreter — as bytes for another node, or as a Rust value for an embedder.
//!
//! - [`walk`]: the one walker. It decides what is copied, what is a reference (actors, pids,
//!   supervisor handles, name proxies), what goes by class name (class objects, Object-kind
//!   instances), how blocks travel (code identity + captured values) and what is rejected
//!   with `not_serialisable` — and keeps the path from the payload root for messages such as
//!   `AtomicCounter value at arg1.cache cannot cross a node boundary`.
//! - [`wire`]: binary wire format v1 (byte table there): [`wire::encode`] is a sink of the
//!   walker; [`wire::decode`] resolves classes, shape versions (with forward migration),
//!   blocks ([`block`]) and references ([`RefResolver`]) in the receiving program.
//! - [`serde`]: [`to_rust`] / [`from_rust`] between Values and Rust
//!   types.
//! - [`etf`]: values ↔ Erlang terms for the distribution wire; [`etf_check`] bounds
//!   what a peer's bytes may cost before they are decoded; [`etf_fast`] decodes and encodes
//!   the small terms of a frame's hot path without the general codec's overhead.
//! - [`CodecError`]: kind, message, hint, path; `to_unwind` raises it as a language error.
//!
//! Decoding needs a [`Ctx`](crate::interp::eval::Ctx), so it runs on an interpreter process
//! (stacks of 64 MiB and more); its recursion is bounded by [`walk::MAX_DEPTH`]. Encoding is
//! iterative and may run on any thread.
//!
//! Local sends never use this module (values are immutable and shared across processes);
//! the future `dist` (network) and `engine` (embedding) layers do.
//!
//! [`Value`]: crate::value::Value

pub mod block;
pub mod error;
pub mod etf;
pub mod etf_bytes;
pub mod etf_check;
pub mod etf_classes;
pub mod etf_fast;
pub mod resolve;
pub mod serde;
mod serde_de;
pub mod walk;
pub mod wire;
mod wire_decode;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_etf;
#[cfg(test)]
mod tests_etf_fast;
#[cfg(test)]
mod tests_serde;

pub use self::serde::{from_rust, to_rust};
pub use error::{CodecError, PathStep};
pub use resolve::{LocalResolver, RefResolver};
pub use wire::{decode, decode_local, encode, encode_in, DecodeCtx};
