//! [`CodecError`]: what goes wrong while encoding or decoding a value, as data (kind,
//! message, hint, path), convertible to a language exception with the kind's class.

use std::fmt;

use crate::interp::error::ErrorKind;
use crate::interp::error::{class_for_kind, make_exception};
use crate::interp::eval::{Ctx, Unwind};
use crate::interp::program::Program;
use crate::value::{Sym, Value};

/// Kinds the codec raises (all RuntimeErrors).
pub mod kind {
    pub(crate) const NOT_SERIALISABLE: &str = "not_serialisable";
    pub(crate) const CLASS_NOT_FOUND: &str = "class_not_found";
    pub(crate) const SHAPE_VERSION_AHEAD: &str = "shape_version_ahead";
    pub(crate) const SHAPE_MIGRATION_FAILED: &str = "shape_migration_failed";
    pub(crate) const WIRE_VERSION_UNSUPPORTED: &str = "wire_version_unsupported";
    pub(crate) const REMOTE_CODE_MISMATCH: &str = "remote_code_mismatch";
    pub(crate) const NODE_DOWN: &str = "node_down";
    pub(crate) const ACTOR_DEAD: &str = "actor_dead";
    /// Truncated or garbled bytes (not a message of any known shape).
    pub(crate) const MALFORMED_MESSAGE: &str = "malformed_message";
    /// A Value → Rust conversion (serde) whose target type does not fit the value.
    pub(crate) const TYPE_ERROR: &str = "type_error";
}

/// The hint of `remote_code_mismatch`.
pub(crate) const MISMATCH_HINT: &str =
    "the block's defining class is not loaded at the same version on this node";

/// An encoding or decoding failure. `path` is where in the payload it happened, in the 8.6
/// notation (`arg1.cache`, `result[3]`, `state.key{#k}`); `message` already mentions it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodecError {
    pub kind: &'static str,
    pub message: String,
    pub hint: Option<String>,
    pub path: String,
    /// `path` step by step, outermost first, when the conversion knows it (`to_rust`): what
    /// an embedder maps back to the source of the value (`Engine::eval_named_as`).
    pub steps: Vec<PathStep>,
}

/// One step of [`CodecError::steps`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A struct field, or a Dictionary entry under a Symbol or String key.
    Name(String),
    /// A 1-based element position.
    Index(usize),
    /// A Dictionary entry under an Integer key.
    Int(i64),
    /// Any other step (an entry under another kind of key).
    Other,
}

impl CodecError {
    pub fn new(kind: &'static str, message: impl Into<String>, path: impl Into<String>) -> Self {
        CodecError {
            kind,
            message: message.into(),
            hint: None,
            path: path.into(),
            steps: Vec::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `Foo value at arg1.cache cannot cross a node boundary`.
    pub fn not_serialisable(class: &str, path: String) -> Self {
        let msg = format!("{class} value at {path} cannot cross a node boundary");
        CodecError::new(kind::NOT_SERIALISABLE, msg, path)
    }

    /// Bytes that are not a well-formed message.
    pub fn malformed(what: impl fmt::Display, path: String) -> Self {
        let msg = if path.is_empty() {
            format!("malformed wire message: {what}")
        } else {
            format!("malformed wire message at {path}: {what}")
        };
        CodecError::new(kind::MALFORMED_MESSAGE, msg, path)
    }

    /// The exception value (class from the kind), e.g. for `Result error:`.
    pub(crate) fn to_exception(&self, prog: &Program) -> Value {
        let class = class_for_kind(prog, ErrorKind::from_name(self.kind));
        make_exception(
            prog,
            &class,
            Sym::new(self.kind),
            self.message.clone(),
            self.hint.clone(),
            None,
            None,
            None,
            Value::list([]),
        )
    }

    /// The error raised in `ctx` (stack trace and location of the running code).
    pub fn to_unwind(&self, ctx: &Ctx) -> Unwind {
        ctx.err_full(
            ErrorKind::from_name(self.kind),
            self.message.clone(),
            self.hint.clone(),
            None,
            None,
        )
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for CodecError {}
