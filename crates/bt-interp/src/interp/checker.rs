//! The standard checker: the static checker (`crate::check`) loaded with the built-in library
//! this interpreter runs — the declarations of the embedded `stdlib/*.bt`, which name every
//! Rust primitive (`interp::prims::agreement_tests` keeps the two in step).

use crate::check::Checker;

/// The checker every command starts from ([`Checker::new`]: the stdlib's declarations).
pub fn standard_checker() -> Checker {
    Checker::new()
}
