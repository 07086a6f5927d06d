//! Reliability: values nested a million levels deep go through every
//! walk — drop, `=`/`=:=`/`==`, `hash`, term order (Set/Dictionary keys), printString,
//! displayString, interpolation — without crashing the process. Walks that build text may
//! answer a catchable `stack_overflow` instead of the text; nothing may die of a signal.
//!
//! Each case runs the `bt` binary as a child process, so a native stack overflow fails the
//! case instead of killing the test harness.

use std::time::Duration;

use crate::bt_run;

const N: usize = 1_000_000;

/// Runs `src` as a script and answers (exit code or signal description, stdout, stderr).
fn run_bt(src: &str) -> (String, String, String) {
    let name = format!("case{:x}", fxhash(src));
    let r = bt_run::bt_script("rely-deep", &["run"], &name, src, Duration::from_secs(300));
    let status = match r.code() {
        Some(c) => format!("exit {c}"),
        None => format!("signal ({:?})", r.status),
    };
    (status, r.stdout, r.stderr)
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Asserts a clean exit and answers stdout's lines.
fn lines_of(src: &str) -> Vec<String> {
    let (status, out, err) = run_bt(src);
    assert_eq!(
        status, "exit 0",
        "script:\n{src}\nstdout:\n{out}\nstderr:\n{err}"
    );
    out.lines().map(str::to_string).collect()
}

/// A List nested `N` levels: `#(#(#(… #() …)))`, built in `var`.
fn nested_list(var: &str, inner: &str) -> String {
    format!("{var} := {inner}.\n1 to: {N} do: [:i | {var} := #({var})].\n")
}

#[test]
fn dropping_a_deep_list_does_not_crash() {
    let src = format!(
        "{}x := nil.\nTranscript showCr: \"dropped\"\n",
        nested_list("x", "#()")
    );
    assert_eq!(lines_of(&src), ["dropped"]);
}

#[test]
fn dropping_a_deep_chain_of_value_instances_does_not_crash() {
    let src = format!(
        "Value subclass: Node2\n  field: next = nil\n  field: n = 0\n\n\
         x := nil.\n1 to: {N} do: [:i | x := Node2 next: x n: i].\n\
         Transcript showCr: x n printString.\n\
         y := x next.\nx := nil.\nTranscript showCr: y n printString.\n"
    );
    // `y` (the rest of the chain) is still alive when the script ends: it is dropped as the
    // program shuts down, on the process's main thread.
    assert_eq!(lines_of(&src), [N.to_string(), (N - 1).to_string()]);
}

#[test]
fn the_script_ending_with_a_deep_value_alive_exits_cleanly() {
    let src = format!("{}Transcript showCr: \"built\"\n", nested_list("x", "#()"));
    assert_eq!(lines_of(&src), ["built"]);
}

#[test]
fn equality_of_deep_values() {
    let src = format!(
        "{}{}{}\
         Transcript showCr: (x =:= y) printString.\n\
         Transcript showCr: (x == y) printString.\n\
         Transcript showCr: (x == z) printString.\n\
         Transcript showCr: (x =:= z) printString.\n",
        nested_list("x", "#()"),
        nested_list("y", "#()"),
        nested_list("z", "#(1)"),
    );
    assert_eq!(lines_of(&src), ["true", "true", "false", "false"]);
}

#[test]
fn hashing_of_deep_values() {
    let src = format!(
        "{}{}Transcript showCr: (x hash == y hash) printString.\n\
         d := #{{}}.\n1 to: {N} do: [:i | d := #{{#k => d}}].\n\
         e := #{{}}.\n1 to: {N} do: [:i | e := #{{#k => e}}].\n\
         Transcript showCr: (d hash == e hash) printString.\n\
         Transcript showCr: (d == e) printString.\n",
        nested_list("x", "#()"),
        nested_list("y", "#()"),
    );
    assert_eq!(lines_of(&src), ["true", "true", "true"]);
}

#[test]
fn term_order_of_deep_values() {
    let src = format!(
        "{}{}{}\
         s := (Set new add: x) add: y.\n\
         Transcript showCr: s size printString.\n\
         s := s add: z.\n\
         Transcript showCr: s size printString.\n\
         d := (#{{}} at: x put: 1) at: z put: 2.\n\
         Transcript showCr: (d at: y) printString.\n",
        nested_list("x", "#()"),
        nested_list("y", "#()"),
        nested_list("z", "#(1)"),
    );
    assert_eq!(lines_of(&src), ["1", "2", "1"]);
}

/// Text-building walks answer the text or raise a catchable `stack_overflow`.
fn text_or_overflow(expr: &str) {
    let src = format!(
        "{}r := [({expr}) size] on: Error do: [:e | e kind].\n\
         Transcript showCr: r printString.\n",
        nested_list("x", "#()")
    );
    let out = lines_of(&src);
    let full = (3 * (N + 1)).to_string();
    assert!(
        out == [full.clone()] || out == ["#stack_overflow"],
        "{expr}: {out:?}"
    );
}

#[test]
fn print_string_of_a_deep_value() {
    text_or_overflow("x printString");
}

#[test]
fn display_string_of_a_deep_value() {
    text_or_overflow("x displayString");
}

#[test]
fn interpolation_of_a_deep_value() {
    text_or_overflow("\"{x}\"");
}

#[test]
fn deep_values_inside_an_actor() {
    let src = format!(
        "Actor subclass: Deep\n  state: v = nil\n\n  build: n =>\n    x := #().\n    \
         1 to: n do: [:i | x := #(x)].\n    self.v := x.\n    \
         ^[x printString size] on: Error do: [:e | e kind]\n  \
         forget => self.v := nil. ^#forgotten\n\n\
         a := Deep spawn.\n\
         r := a build: {N}.\n\
         Transcript showCr: ((r == {}) or: [r == #stack_overflow]) printString.\n\
         Transcript showCr: a forget printString.\n",
        3 * (N + 1)
    );
    assert_eq!(lines_of(&src), ["true", "#forgotten"]);
}
