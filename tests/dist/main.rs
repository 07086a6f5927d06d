//! Integration tests of distribution, one test binary (`cargo test --profile ci --test
//! dist`): bt nodes, remote actors, clusters, deadlock detection across nodes, Erlang nodes
//! and processes in the same cluster, TLS distribution, hardening against misbehaving peers,
//! and the README's distribution examples — all with real `bt` and `erl` child processes on
//! 127.0.0.1.
//!
//! To add a test: put it in the module of its area, or add a file `tests/dist/NAME.rs` and a
//! `mod NAME;` line below. Harness: [`dist_common`] (a private port mapper per environment,
//! `HOME` in a temporary directory, waits on a child's output lines, a guard killing every
//! child).
//!
//! Why these can share a process: all state is in the children; each test's environment has
//! its own port mapper port, directory and cookie file, and the children's `HOME` is set on
//! their `Command`, never on the test process. Signals (`SIGSTOP`/`SIGCONT`) go to children
//! only.

mod cluster;
mod deadlock;
mod dist_common;
mod erl;
mod erl_deadlock;
mod erl_peer;
mod erl_proc;
mod erl_terms;
mod groups;
mod hardening;
mod heal;
mod manifest;
mod nodes;
mod readme;
mod remote;
#[path = "../reliability/rng.rs"]
mod rng;
mod rpc;
mod tls;
#[path = "../support/tools.rs"]
mod tools;
mod wire_property;
mod wire_values;
