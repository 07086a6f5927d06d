//! Tests of the serde bridge.
