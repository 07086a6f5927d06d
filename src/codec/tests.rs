//! Tests of the wire format.
