//! The built-in library's sources (`stdlib/*.bt`), embedded in the binary. They are the single
//! declaration of every built-in class: the checker reads its classes, selectors and
//! signatures from them ([`super::Checker::new`]) and the interpreter loads them over its
//! primitives (`interp::stdlib`), where `sel => @primitive` binds a selector to the Rust
//! function registered for the same class, side and selector. Add a file here to have it
//! read and loaded; files load as one unit, so their order does not matter.

pub const STDLIB: &[(&str, &str)] = &[
    ("Actor.bt", include_str!("../../../../stdlib/Actor.bt")),
    (
        "Announcement.bt",
        include_str!("../../../../stdlib/Announcement.bt"),
    ),
    (
        "Announcer.bt",
        include_str!("../../../../stdlib/Announcer.bt"),
    ),
    ("Array.bt", include_str!("../../../../stdlib/Array.bt")),
    ("Bag.bt", include_str!("../../../../stdlib/Bag.bt")),
    ("Binary.bt", include_str!("../../../../stdlib/Binary.bt")),
    ("Block.bt", include_str!("../../../../stdlib/Block.bt")),
    ("Boolean.bt", include_str!("../../../../stdlib/Boolean.bt")),
    (
        "Character.bt",
        include_str!("../../../../stdlib/Character.bt"),
    ),
    (
        "Collection.bt",
        include_str!("../../../../stdlib/Collection.bt"),
    ),
    (
        "Concurrency.bt",
        include_str!("../../../../stdlib/Concurrency.bt"),
    ),
    (
        "DateTime.bt",
        include_str!("../../../../stdlib/DateTime.bt"),
    ),
    (
        "Dictionary.bt",
        include_str!("../../../../stdlib/Dictionary.bt"),
    ),
    (
        "Duration.bt",
        include_str!("../../../../stdlib/Duration.bt"),
    ),
    (
        "Exception.bt",
        include_str!("../../../../stdlib/Exception.bt"),
    ),
    ("Erlang.bt", include_str!("../../../../stdlib/Erlang.bt")),
    ("File.bt", include_str!("../../../../stdlib/File.bt")),
    ("Float.bt", include_str!("../../../../stdlib/Float.bt")),
    ("Integer.bt", include_str!("../../../../stdlib/Integer.bt")),
    (
        "Interval.bt",
        include_str!("../../../../stdlib/Interval.bt"),
    ),
    ("Json.bt", include_str!("../../../../stdlib/Json.bt")),
    ("List.bt", include_str!("../../../../stdlib/List.bt")),
    ("Node.bt", include_str!("../../../../stdlib/Node.bt")),
    ("Number.bt", include_str!("../../../../stdlib/Number.bt")),
    ("Object.bt", include_str!("../../../../stdlib/Object.bt")),
    (
        "Observer.bt",
        include_str!("../../../../stdlib/Observer.bt"),
    ),
    (
        "ProcessNavigation.bt",
        include_str!("../../../../stdlib/ProcessNavigation.bt"),
    ),
    (
        "Protocols.bt",
        include_str!("../../../../stdlib/Protocols.bt"),
    ),
    ("Queue.bt", include_str!("../../../../stdlib/Queue.bt")),
    ("Random.bt", include_str!("../../../../stdlib/Random.bt")),
    (
        "Reflection.bt",
        include_str!("../../../../stdlib/Reflection.bt"),
    ),
    ("Regex.bt", include_str!("../../../../stdlib/Regex.bt")),
    ("Result.bt", include_str!("../../../../stdlib/Result.bt")),
    (
        "RetryPolicy.bt",
        include_str!("../../../../stdlib/RetryPolicy.bt"),
    ),
    ("Set.bt", include_str!("../../../../stdlib/Set.bt")),
    ("Stream.bt", include_str!("../../../../stdlib/Stream.bt")),
    ("String.bt", include_str!("../../../../stdlib/String.bt")),
    (
        "SupervisionSpec.bt",
        include_str!("../../../../stdlib/SupervisionSpec.bt"),
    ),
    (
        "Supervisor.bt",
        include_str!("../../../../stdlib/Supervisor.bt"),
    ),
    ("Symbol.bt", include_str!("../../../../stdlib/Symbol.bt")),
    ("System.bt", include_str!("../../../../stdlib/System.bt")),
    (
        "TestCase.bt",
        include_str!("../../../../stdlib/TestCase.bt"),
    ),
    ("Tuple.bt", include_str!("../../../../stdlib/Tuple.bt")),
    ("Types.bt", include_str!("../../../../stdlib/Types.bt")),
];

/// The syntax trees of [`STDLIB`] (in its order), parsed once per process with `@primitive`
/// bodies allowed and shared by everything that reads the library (the checker's class table,
/// the interpreter's loader): a process parses the library once, not once per reader. Files
/// that fail to parse contribute what was recovered. Method bodies are parsed on first read
/// (`syntax::parse_library`): a program runs a few dozen of the library's ~1,700 methods.
///
/// Two threads share the files (each takes the next unparsed one), so on two cores the
/// parse — the largest part of start-up — takes about half the wall time; the trees are the
/// same in the same order whichever thread parsed them (parsing interns nothing). When the
/// second thread cannot start, the calling thread parses them all.
pub fn parsed() -> &'static [crate::syntax::ast::Module] {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;
    static PARSED: OnceLock<Vec<crate::syntax::ast::Module>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let opts = crate::syntax::Options {
            allow_primitives: true,
        };
        let next = AtomicUsize::new(0);
        let slots: Vec<OnceLock<crate::syntax::ast::Module>> =
            STDLIB.iter().map(|_| OnceLock::new()).collect();
        let parse_from = |slots: &[OnceLock<crate::syntax::ast::Module>]| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((_, src)) = STDLIB.get(i) else { break };
            let _ = slots[i].set(crate::syntax::parse_library(src, opts).0);
        };
        std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("bt-stdlib-parse".into())
                .spawn_scoped(s, || parse_from(&slots));
            parse_from(&slots);
            if let Ok(h) = helper {
                let _ = h.join();
            }
        });
        slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_default())
            .collect()
    })
}
