//! The kinds of exceptions bt itself raises, as an enum with each kind's
//! spec name and exception class. User code raises any kind it likes
//! (`Exception signalKind: #my_kind …`): those are [`ErrorKind::Other`].

use crate::value::Sym;

/// The exception class a kind maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindClass {
    TypeError,
    InstantiationError,
    RuntimeError,
    Error,
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $v:ident = $name:literal => $class:ident,)*) => {
        /// A kind of exception.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $($(#[$doc])* $v,)*
            /// Any other kind: user kinds, and reasons such as `badarith` given as a kind.
            Other(Sym),
        }

        impl ErrorKind {
            /// Every built-in kind, in the order of the 5.10 table.
            pub const BUILT_IN: &'static [ErrorKind] = &[$(ErrorKind::$v,)*];

            /// The kind's name as the spec writes it (`type_error`), the Symbol user code sees.
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$v => $name,)*
                    ErrorKind::Other(s) => s.as_str(),
                }
            }

            /// The kind named `name`: a built-in one, else [`ErrorKind::Other`].
            pub fn from_name(name: &str) -> ErrorKind {
                match name {
                    $($name => ErrorKind::$v,)*
                    other => ErrorKind::Other(Sym::new(other)),
                }
            }

            /// The exception class of this kind.
            pub fn class(self) -> KindClass {
                match self {
                    $(ErrorKind::$v => KindClass::$class,)*
                    ErrorKind::Other(s) if s.as_str() == "badarith" => KindClass::TypeError,
                    // The reasons the Erlang class raises: RuntimeErrors.
                    ErrorKind::Other(s)
                        if matches!(
                            s.as_str(),
                            "badarg" | "badkey" | "badmap" | "function_clause" | "undef"
                        ) =>
                    {
                        KindClass::RuntimeError
                    }
                    ErrorKind::Other(_) => KindClass::Error,
                }
            }
        }
    };
}

kinds! {
    TypeError = "type_error" => TypeError,
    InvalidNodeName = "invalid_node_name" => TypeError,
    InstantiationError = "instantiation_error" => InstantiationError,
    DoesNotUnderstand = "does_not_understand" => RuntimeError,
    ArityMismatch = "arity_mismatch" => RuntimeError,
    ImmutableValue = "immutable_value" => RuntimeError,
    RuntimeError = "runtime_error" => RuntimeError,
    IndexOutOfBounds = "index_out_of_bounds" => RuntimeError,
    EmptyCollection = "empty_collection" => RuntimeError,
    EmptyQueue = "empty_queue" => RuntimeError,
    NotFound = "not_found" => RuntimeError,
    KeyError = "key_error" => RuntimeError,
    ParseError = "parse_error" => RuntimeError,
    RegexError = "regex_error" => RuntimeError,
    StackOverflow = "stack_overflow" => RuntimeError,
    Timeout = "timeout" => RuntimeError,
    ActorDead = "actor_dead" => RuntimeError,
    DispatchError = "dispatch_error" => RuntimeError,
    DeadlockDetected = "deadlock_detected" => RuntimeError,
    NoSuchProcess = "no_such_process" => RuntimeError,
    NameRegistered = "name_registered" => RuntimeError,
    NameNotRegistered = "name_not_registered" => RuntimeError,
    ReservedName = "reserved_name" => RuntimeError,
    WrongClass = "wrong_class" => RuntimeError,
    StaleHandle = "stale_handle" => RuntimeError,
    SupervisorStartFailed = "supervisor_start_failed" => RuntimeError,
    ChildStartFailed = "child_start_failed" => RuntimeError,
    TerminateFailed = "terminate_failed" => RuntimeError,
    PermissionDenied = "permission_denied" => RuntimeError,
    ClassNotFound = "class_not_found" => RuntimeError,
    NodeDown = "node_down" => RuntimeError,
    RemoteCodeMismatch = "remote_code_mismatch" => RuntimeError,
    NotSerialisable = "not_serialisable" => RuntimeError,
    ShapeVersionAhead = "shape_version_ahead" => RuntimeError,
    ShapeMigrationFailed = "shape_migration_failed" => RuntimeError,
    WireVersionUnsupported = "wire_version_unsupported" => RuntimeError,
    /// Not in the 5.10 table: a distribution frame that does not decode.
    MalformedMessage = "malformed_message" => RuntimeError,
    InsecureDistribution = "insecure_distribution" => RuntimeError,
    /// `anObject error: "…"`.
    UserError = "user_error" => Error,
    /// `signal` / `signal:` (the exception's class is the one signalled).
    Signal = "signal" => Error,
    /// A failed test assertion.
    AssertionFailed = "assertion_failed" => Error,
    /// File system failures of the batteries.
    FileNotFound = "file_not_found" => Error,
    IsADirectory = "is_a_directory" => Error,
    IoError = "io_error" => Error,
    /// A `File` send without the file capability (13).
    CapabilityDenied = "capability_denied" => Error,
}

impl ErrorKind {
    /// The kind as a Symbol (the exception's `kind` field).
    pub fn sym(self) -> Sym {
        match self {
            ErrorKind::Other(s) => s,
            k => Sym::new(k.name()),
        }
    }
}

impl From<Sym> for ErrorKind {
    fn from(s: Sym) -> ErrorKind {
        ErrorKind::from_name(s.as_str())
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_classes_follow_the_table() {
        for k in ErrorKind::BUILT_IN {
            assert_eq!(ErrorKind::from_name(k.name()), *k);
            assert!(!matches!(k, ErrorKind::Other(_)));
        }
        assert_eq!(ErrorKind::TypeError.class(), KindClass::TypeError);
        assert_eq!(ErrorKind::InvalidNodeName.class(), KindClass::TypeError);
        assert_eq!(ErrorKind::KeyError.class(), KindClass::RuntimeError);
        assert_eq!(ErrorKind::UserError.class(), KindClass::Error);
        let mine = ErrorKind::from_name("my_kind");
        assert_eq!(mine, ErrorKind::Other(Sym::new("my_kind")));
        assert_eq!(mine.name(), "my_kind");
        assert_eq!(mine.class(), KindClass::Error);
        assert_eq!(
            ErrorKind::from_name("badarith").class(),
            KindClass::TypeError
        );
    }
}
