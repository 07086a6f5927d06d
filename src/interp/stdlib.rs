//! The built-in library written in bt: `stdlib/*.bt`, embedded in the binary and loaded when a
//! [`Interpreter`](crate::interp::Interpreter) starts (after the Rust primitives are installed). Add a file here
//! to have it loaded; files load as one unit, so their order does not matter.

pub const FILES: &[(&str, &str)] = &[
    (
        "Announcement.bt",
        include_str!("../../stdlib/Announcement.bt"),
    ),
    ("Array.bt", include_str!("../../stdlib/Array.bt")),
    ("Bag.bt", include_str!("../../stdlib/Bag.bt")),
    ("Binary.bt", include_str!("../../stdlib/Binary.bt")),
    ("Character.bt", include_str!("../../stdlib/Character.bt")),
    ("Collection.bt", include_str!("../../stdlib/Collection.bt")),
    ("DateTime.bt", include_str!("../../stdlib/DateTime.bt")),
    ("Dictionary.bt", include_str!("../../stdlib/Dictionary.bt")),
    ("File.bt", include_str!("../../stdlib/File.bt")),
    ("Float.bt", include_str!("../../stdlib/Float.bt")),
    ("Integer.bt", include_str!("../../stdlib/Integer.bt")),
    ("Interval.bt", include_str!("../../stdlib/Interval.bt")),
    ("Json.bt", include_str!("../../stdlib/Json.bt")),
    ("List.bt", include_str!("../../stdlib/List.bt")),
    ("Number.bt", include_str!("../../stdlib/Number.bt")),
    ("Observer.bt", include_str!("../../stdlib/Observer.bt")),
    ("Protocols.bt", include_str!("../../stdlib/Protocols.bt")),
    ("Queue.bt", include_str!("../../stdlib/Queue.bt")),
    ("Random.bt", include_str!("../../stdlib/Random.bt")),
    ("Regex.bt", include_str!("../../stdlib/Regex.bt")),
    ("Result.bt", include_str!("../../stdlib/Result.bt")),
    (
        "RetryPolicy.bt",
        include_str!("../../stdlib/RetryPolicy.bt"),
    ),
    ("Set.bt", include_str!("../../stdlib/Set.bt")),
    ("Stream.bt", include_str!("../../stdlib/Stream.bt")),
    ("String.bt", include_str!("../../stdlib/String.bt")),
    (
        "SupervisionSpec.bt",
        include_str!("../../stdlib/SupervisionSpec.bt"),
    ),
    ("Symbol.bt", include_str!("../../stdlib/Symbol.bt")),
    ("TestCase.bt", include_str!("../../stdlib/TestCase.bt")),
    ("Tuple.bt", include_str!("../../stdlib/Tuple.bt")),
];
