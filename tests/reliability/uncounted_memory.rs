//! A host without the counting allocator: `max_memory` cannot be enforced there, so
//! `EngineBuilder::build` refuses it loudly and `try_build` answers the error that explains
//! it; `max_allocation` (the largest single step) is enforced by the explicit pre-charges
//! alone, and holds for every row of the memory table (tests/support/memory_rows.rs). This
//! binary installs no global allocator of its own.

use bt::Engine;

/// The child side of the memory table: `max_allocation` with no counting allocator.
#[test]
fn memory_row_child() {
    crate::memory_rows::run_row(|| {
        Engine::builder()
            .max_allocation(crate::memory_rows::LIMIT)
            .build()
    });
}

#[test]
fn without_the_counting_allocator_every_huge_step_is_refused_before_it_allocates() {
    assert!(!bt::memory::installed());
    let bad = crate::memory_rows::failing_rows("uncounted_memory::memory_row_child", false);
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn without_the_counting_allocator_a_memory_limit_is_refused_loudly() {
    assert!(!bt::memory::installed());
    for b in [
        Engine::builder().max_memory(64 << 20),
        Engine::builder().actor_max_memory(8 << 20),
    ] {
        let Err(er) = b.clone().try_build() else {
            panic!("try_build accepted a memory limit it cannot enforce");
        };
        assert_eq!(er.kind, "memory_accounting_unavailable");
        assert!(er.message.contains("bt::CountingAlloc"), "{}", er.message);
        let Err(panic) = std::panic::catch_unwind(move || b.build()) else {
            panic!("build accepted a memory limit it cannot enforce");
        };
        let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("bt::CountingAlloc"), "{text}");
        assert!(text.contains("try_build"), "{text}");
    }
    // The largest single step needs no allocator.
    let e = Engine::builder().max_allocation(1 << 20).build();
    assert_eq!(
        e.eval("(1 to: 1000) asList size").unwrap().as_i64(),
        Some(1000)
    );
    assert_eq!(
        e.eval("(1 to: 1000000) asList size").unwrap_err().kind,
        "memory_limit"
    );
}
