//! Bulk primitives pay reductions (`Ctx::charge`): one primitive call doing work in
//! proportion to a huge input meets the engine's reduction limit and deadline instead of
//! running to the end unchecked. Each test asserts the limit's kind, never a time.

use std::time::Duration;

use crate::common;
use common::{err, int};

use bt::{Engine, Limit};

fn assert_reductions(e: &Engine, src: &str) {
    let er = err(e, src);
    assert_eq!(er.limit, Some(Limit::Reductions), "{src}: {er}");
    assert_eq!(er.kind, "reduction_limit", "{src}");
}

#[test]
fn a_huge_interval_as_list_meets_the_reduction_limit() {
    let e = Engine::builder().max_reductions(20_000).build();
    assert_reductions(&e, "(1 to: 50000000) asList");
    assert_reductions(&e, "(1 to: 50000000) asArray");
    assert_reductions(&e, "(1 to: 50000000) asSet");
    assert_reductions(&e, "(50000000 to: 1 by: -1) reversed");
    // Small work under the limit still runs, and the engine is usable after a hit.
    assert_eq!(int(&e, "(1 to: 1000) asList size"), 1000);
}

#[test]
fn a_failed_primitive_leaves_no_half_built_value() {
    let e = Engine::builder().max_reductions(20_000).build();
    e.eval("x := 1").unwrap();
    assert_reductions(&e, "x := (1 to: 50000000) asList");
    assert_eq!(int(&e, "x"), 1);
}

#[test]
fn huge_new_with_all_meets_the_reduction_limit() {
    let e = Engine::builder().max_reductions(20_000).build();
    // Compact (one byte an element) and wide (a Value an element) Arrays, and a List.
    assert_reductions(&e, "Array new: 100000000 withAll: 0");
    assert_reductions(&e, "Array new: 100000000 withAll: \"x\"");
    assert_reductions(&e, "List new: 100000000 withAll: 0");
    assert_eq!(int(&e, "(Array new: 1000 withAll: 0) size"), 1000);
}

#[test]
fn a_big_sort_meets_the_reduction_limit() {
    let e = Engine::builder().max_reductions(300_000).build();
    e.eval("a := (1 to: 200000) asArray").unwrap();
    assert_reductions(&e, "a reversed sort");
    assert_reductions(&e, "a sort: [:x :y | x >= y]");
}

#[test]
fn huge_strings_meet_the_reduction_limit() {
    let e = Engine::builder().max_reductions(20_000).build();
    assert_reductions(&e, "\"ab\" repeat: 100000000");
    assert_reductions(&e, "\"x\" padLeft: 100000000");
    // An 800 KB String (built under the limit) copied, reversed and upcased 40 times.
    e.eval("s := \"abcdefgh\" repeat: 100000").unwrap();
    assert_reductions(
        &e,
        "t := s. 1 to: 40 do: [:i | t := t ++ s reverse asUppercase]. t size",
    );
    assert_reductions(&e, "((1 to: 10) collect: [:i | s]) join: \",\"");
}

#[test]
fn big_integers_and_printing_meet_the_reduction_limit() {
    let e = Engine::builder().max_reductions(20_000).build();
    assert_reductions(&e, "(3 ** 100000000) isNil");
    assert_reductions(&e, "200000 factorial isNil");
    assert_reductions(&e, "(1 bitShift: 200000000) isNil");
    // A 125 KB Integer is cheap to make; multiplying or printing it is not.
    e.eval("x := 1 bitShift: 1000000").unwrap();
    assert_reductions(&e, "(x * x) isNil");
    assert_reductions(&e, "x printString size");
    assert_eq!(int(&e, "(x + 1 - x) + (2 ** 10)"), 1025);
    e.eval("a := (1 to: 50000) asArray").unwrap();
    assert_reductions(
        &e,
        "a printString. a printString. a printString. a printString",
    );
}

#[test]
fn a_huge_primitive_meets_the_deadline() {
    // 10^11 elements: without charging this would run until memory ran out; the deadline
    // is checked at the budget crossings the charges make.
    let e = Engine::builder().timeout(Duration::from_millis(50)).build();
    let er = err(&e, "((1 to: 100000000000) select: [:i | i < 0]) size");
    assert_eq!(er.limit, Some(Limit::Deadline), "{er}");
    assert_eq!(er.kind, "deadline");
    // A List of them (1.6 TB) is larger than any machine: refused before it starts.
    let er = err(&e, "(1 to: 100000000000) asList size");
    assert_eq!(er.limit, Some(Limit::Memory), "{er}");
    assert!(er.message.contains("machine's memory"), "{er}");
    let er = err(&e, "(1 to: 500000000) inject: 0 into: [:a :b | a + b]");
    assert_eq!(er.kind, "deadline");
}

#[test]
fn an_actor_running_a_huge_primitive_meets_its_limit() {
    // An actor's message is limited like an evaluation: a bulk primitive inside it ends the
    // message with an error of the limit's kind, and the actor crashes (a runaway actor goes
    // to its supervisor).
    let e = Engine::builder().max_reductions(20_000).build();
    e.eval("Actor subclass: Bulk\n  big => (1 to: 50000000) asList size\n  ping => #pong\n")
        .unwrap();
    e.eval("b := Bulk spawn").unwrap();
    let er = err(&e, "b big");
    assert_eq!(er.kind, "reduction_limit");
    assert_eq!(e.eval("b isAlive").unwrap().as_bool(), Some(false));
}

#[test]
fn regex_and_binary_work_over_huge_inputs_is_charged() {
    // 12 MB costs 187,500 reductions to build or scan once (a reduction per 64 bytes): one
    // pass fits under the limit, two do not.
    let e = Engine::builder().max_reductions(200_000).build();
    e.eval("s := \"abcdefgh\" repeat: 1500000").unwrap();
    assert_eq!(
        e.eval("s matchesRegex: \"z\"").unwrap().as_bool(),
        Some(false)
    );
    assert_reductions(&e, "s matchesRegex: \"z\"\ns matchesRegex: \"y\"");
    assert_reductions(
        &e,
        "s replaceAllRegex: \"a\" with: \"b\"\ns splitRegex: \"c\"",
    );
    e.eval("b := s asBinary").unwrap();
    assert_reductions(&e, "b asHex\nb asBase64");
}

#[test]
fn actors_inside_huge_primitives_do_not_starve_others() {
    // Fairness without a clock: two actors (as many as the runtime has workers) each count
    // themselves started, run one huge `asList` and count themselves done afterwards. The
    // main program waits until both have started, then must get a worker back — and an
    // answer from a third actor — while both are still inside their primitive: the done
    // count is 0. Without charging, neither would yield before its List was built and the
    // count would be at least 1.
    let e = Engine::builder().build();
    e.eval(
        "Actor subclass: Bulk\n  big => (AtomicCounter named: #bulkStarted) increment. (1 to: 20000000) asList size. (AtomicCounter named: #bulkDone) increment\n  ping => #pong\n",
    )
    .unwrap();
    e.eval("done := AtomicCounter new: #bulkDone\nstarted := AtomicCounter new: #bulkStarted")
        .unwrap();
    e.eval("a := Bulk spawn\nb := Bulk spawn\np := Bulk spawn")
        .unwrap();
    e.eval("a big!\nb big!\n[started value < 2] whileTrue: [Timer sleep: 1]")
        .unwrap();
    assert_eq!(e.eval("p ping").unwrap().as_text(), Some("pong"));
    assert_eq!(int(&e, "done value"), 0);
}

#[test]
fn comparing_and_hashing_huge_values_is_charged() {
    let e = Engine::builder().max_reductions(50_000).build();
    e.eval("a := (1 to: 100000) asArray\nb := (1 to: 100000) asArray")
        .unwrap();
    assert_reductions(&e, "1 to: 10 do: [:i | a == b]");
    assert_reductions(&e, "1 to: 10 do: [:i | a hash]");
    // Against a small value the comparison is immediate and free.
    assert_eq!(
        int(
            &e,
            "n := 0\n1 to: 1000 do: [:i | (a == nil) ifFalse: [n := n + 1]]\nn"
        ),
        1000
    );
}

/// Growing an Array one element at a time, in a variable or in an actor's state slot, updates
/// it in place: linear in reductions. A copy of a shared Array pays its elements, so a loop
/// that keeps every old version (and copies each time) is quadratic and meets the limit.
#[test]
fn growing_an_array_element_by_element_is_linear_in_a_variable_and_an_actor_slot() {
    let e = Engine::builder().max_reductions(1_000_000).build();
    e.eval(
        "Actor subclass: Acc\n  state: xs = #[]\n  \
         fill: n => 1 to: n do: [:i | self.xs := self.xs add: i]. ^self.xs size\n",
    )
    .unwrap();
    assert_eq!(int(&e, "(Acc spawn) fill: 40000"), 40000);
    assert_eq!(
        int(
            &e,
            "xs := #[]. 1 to: 40000 do: [:i | xs := xs add: i]. xs size"
        ),
        40000
    );
    // 40,000 copies of up to 40,000 elements: 200M reductions.
    assert_reductions(
        &e,
        "xs := #[]. old := nil. 1 to: 40000 do: [:i | old := xs. xs := xs add: i]. xs size",
    );
    // In an actor the limit ends the message (the caller gets an error of its kind).
    let er = err(
        &e,
        "Actor subclass: Keep\n  state: xs = #[]\n  state: old = nil\n  \
         fill: n => 1 to: n do: [:i | self.old := self.xs. self.xs := self.xs add: i]. ^self.xs size\n\n\
         (Keep spawn) fill: 40000",
    );
    assert_eq!(er.kind, "reduction_limit", "{er}");
}

/// `inject:into:` building a collection: the accumulator is moved into the block, whose
/// last statement `acc add: x` on its own parameter then updates it in place. Without that,
/// each step copied the accumulator (40,000 copies of up to 40,000 elements: 200M
/// reductions for the Array).
#[test]
fn inject_into_building_a_collection_is_linear() {
    let e = Engine::builder().max_reductions(1_000_000).build();
    assert_eq!(
        int(
            &e,
            "((1 to: 40000) inject: #[] into: [:acc :i | acc add: i]) size"
        ),
        40000
    );
    assert_eq!(
        int(
            &e,
            "((1 to: 40000) asList inject: #[] into: [:acc :i | acc add: i]) size"
        ),
        40000
    );
    // The same block keeping its parameter in another block copies (as it must: the kept
    // block sees the accumulator it was given) and meets the limit.
    assert_reductions(
        &e,
        "kept := nil. ((1 to: 40000) inject: #[] into: [:acc :i | kept := [acc]. acc add: i]) size",
    );
}

#[test]
fn indexing_a_string_by_position_is_linear() {
    let e = Engine::builder().max_reductions(2_000_000).build();
    let count_a = |var: &str| {
        format!(
            "c := 0. 1 to: {var} size do: [:i | ({var} at: i) =:= \"a\" ifTrue: [c := c + 1]]. c"
        )
    };
    // 100,000 graphemes read one position at a time: each `at:` and `size` after the first
    // is constant work once the text is known to be one grapheme a byte.
    e.eval("s := \"ab\" repeat: 50000").unwrap();
    assert_eq!(int(&e, &count_a("s")), 50000);
    // Built by appending, the text keeps what is known of it.
    e.eval("t := \"\". 1 to: 50000 do: [:i | t := t ++ \"ab\"]")
        .unwrap();
    assert_eq!(int(&e, &count_a("t")), 50000);

    // Text with clusters of several bytes (a CR LF pair, a letter and a combining accent)
    // is indexed on first use: reading it by position is linear too.
    let accent = "e\u{301}";
    e.eval(&format!(
        "u := (\"ab\" repeat: 25000) ++ String crlf ++ \"{accent}\" ++ (\"ab\" repeat: 25000)"
    ))
    .unwrap();
    assert_eq!(int(&e, "u size"), 100002);
    assert_eq!(int(&e, &count_a("u")), 50000);
}
