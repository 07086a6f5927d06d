//! Engines made from the process's library image (`bt::interp::library_image`) read the
//! library's methods through method tables shared by every engine of the process
//! (`bt::interp::method_table`): these tests check that adding, replacing or removing a
//! library method, or redeclaring a library class, in one engine never reaches another —
//! made before or after it, on any thread — and that lazily lowered library code belongs to
//! the engine that lowered it.

use crate::common;
use common::{err, int};

use bt::Engine;

/// Builds the image first, so the engines of these tests are copies of it (the first
/// program of a process loads the library itself).
fn from_image() {
    assert!(
        bt::interp::Interpreter::library_image().is_some(),
        "the library image could not be built"
    );
}

#[test]
fn removing_a_library_method_in_one_engine_leaves_the_others_alone() {
    from_image();
    let a = Engine::new();
    let b = Engine::new();
    // A primitive and a library (bt) method.
    a.eval("Integer removeSelector: #gcd:").unwrap();
    a.eval("RetryPolicy removeSelector: #intervalForAttempt:")
        .unwrap();
    assert_eq!(err(&a, "12 gcd: 8").kind, "does_not_understand");
    assert_eq!(
        err(&a, "RetryPolicy new intervalForAttempt: 2").kind,
        "does_not_understand"
    );
    assert_eq!(
        a.eval("Integer canUnderstand: #gcd:").unwrap().as_bool(),
        Some(false)
    );
    let c = Engine::new();
    for e in [&b, &c] {
        assert_eq!(int(e, "12 gcd: 8"), 4);
        assert_eq!(
            e.eval("Integer canUnderstand: #gcd:").unwrap().as_bool(),
            Some(true)
        );
    }
    assert_eq!(
        int(&b, "RetryPolicy new intervalForAttempt: 2"),
        int(&c, "RetryPolicy new intervalForAttempt: 2")
    );
    // Defined again in `a`: its own method, the others unchanged.
    a.eval("Integer >> gcd: n => 7").unwrap();
    assert_eq!(int(&a, "12 gcd: 8"), 7);
    assert_eq!(int(&b, "12 gcd: 8"), 4);
    assert_eq!(int(&c, "12 gcd: 8"), 4);
}

#[test]
fn redeclaring_a_library_class_stays_in_its_engine() {
    from_image();
    let a = Engine::new();
    let b = Engine::new();
    let before = int(&b, "RetryPolicy new intervalForAttempt: 3");
    a.eval("Value subclass: RetryPolicy\n  field: x = 5\n  intervalForAttempt: n => self.x * n")
        .unwrap();
    assert_eq!(int(&a, "RetryPolicy new intervalForAttempt: 3"), 15);
    // A library class extended in place (no new fields) by a declaration.
    a.eval("Object subclass: Announcer\n  extra => 42").unwrap();
    assert_eq!(int(&a, "Announcer new extra"), 42);
    let c = Engine::new();
    for e in [&b, &c] {
        assert_eq!(int(e, "RetryPolicy new intervalForAttempt: 3"), before);
        assert_eq!(err(e, "RetryPolicy new x").kind, "does_not_understand");
        assert_eq!(err(e, "Announcer new extra").kind, "does_not_understand");
    }
}

#[test]
fn engines_on_many_threads_change_the_same_library_methods_independently() {
    from_image();
    let threads: Vec<_> = (1..=6)
        .map(|k: i64| {
            std::thread::spawn(move || {
                let e = Engine::new();
                e.eval(&format!("Integer >> twice => self * {k}")).unwrap();
                e.eval(&format!("String >> size => {k}")).unwrap();
                if k % 2 == 0 {
                    e.eval("Integer removeSelector: #isPrime").unwrap();
                }
                for _ in 0..20 {
                    assert_eq!(int(&e, "3 twice"), 3 * k);
                    assert_eq!(int(&e, "\"abc\" size"), k);
                    // Library methods lowered on first use, in every engine at once.
                    assert_eq!(int(&e, "(1 to: 4) inject: 0 into: [:s :x | s + x]"), 10);
                    let prime = e.eval("7 isPrime");
                    if k % 2 == 0 {
                        assert_eq!(prime.unwrap_err().kind, "does_not_understand");
                    } else {
                        assert_eq!(prime.unwrap().as_bool(), Some(true));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let e = Engine::new();
    assert_eq!(err(&e, "3 twice").kind, "does_not_understand");
    assert_eq!(int(&e, "\"abc\" size"), 3);
    assert_eq!(e.eval("7 isPrime").unwrap().as_bool(), Some(true));
}

#[test]
fn library_code_lowered_by_an_engine_belongs_to_it() {
    from_image();
    let sum = "(1 to: 10) inject: 0 into: [:s :x | s + x]";
    let a = Engine::new();
    assert_eq!(int(&a, sum), 55);
    assert_eq!(int(&a, "RetryPolicy new intervalForAttempt: 2"), {
        let b = Engine::new();
        int(&b, "RetryPolicy new intervalForAttempt: 2")
    });
    drop(a);
    // Lowered again for this engine after the first one is gone.
    let b = Engine::new();
    assert_eq!(int(&b, sum), 55);
    // Replaced after it ran (its inline caches are warm): only here.
    b.eval("Collection >> inject: a into: blk => 0").unwrap();
    b.eval("Interval >> inject: a into: blk => -1").unwrap();
    assert_eq!(int(&b, sum), -1);
    let c = Engine::new();
    assert_eq!(int(&c, sum), 55);
    assert_eq!(int(&c, "#(1, 2, 3) inject: 0 into: [:s :x | s + x]"), 6);
}
