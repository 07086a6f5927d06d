//! The actor runtime: scheduler, coroutines, mailboxes, timers, registry, supervisors.
