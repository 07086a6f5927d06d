//! Reliability: the program ends promptly even while an actor is
//! inside a long primitive, and `perform:` cast with `!` queues instead of waiting.
//!
//! Runs the `bt` binary as a child process; deadlines only turn a hang into a failure.

use std::time::Duration;

use crate::bt_run;

/// Runs `src`; answers (exit code, stdout, stderr) or panics after `limit`.
fn run_script(name: &str, src: &str, limit: Duration) -> (Option<i32>, String, String) {
    let r = bt_run::bt_script("rely-rt", &["run"], name, src, limit);
    (r.code(), r.stdout, r.stderr)
}

/// An actor that reports it started, then spends minutes in one bignum conversion (a single
/// opaque library call: it cannot be interrupted inside).
const CRUNCH: &str = r#"
Actor subclass: Busy
  crunch =>
    (AtomicCounter named: #started) increment
    (3 ** 100000000) printString size
"#;

fn wait_started() -> &'static str {
    "[(AtomicCounter named: #started) value =:= 0] whileTrue: [Timer sleep: 1]\n"
}

#[test]
fn program_exit_does_not_wait_for_an_actor_inside_a_long_primitive() {
    let src = format!(
        "{CRUNCH}\nAtomicCounter new: #started\nb := Busy spawn\nb crunch!\n{}\
         Transcript showCr: \"exiting\"\nProgram exit: 0\n",
        wait_started()
    );
    // Before the fix the exit joined the worker thread: minutes.
    let (code, out, err) = run_script("exit", &src, Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "exiting\n");
}

#[test]
fn the_script_ending_does_not_wait_for_an_actor_inside_a_long_primitive() {
    let src = format!(
        "{CRUNCH}\nAtomicCounter new: #started\nb := Busy spawn\nb crunch!\n{}\
         Transcript showCr: \"done\"\n",
        wait_started()
    );
    let (code, out, err) = run_script("end", &src, Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "done\n");
}

#[test]
fn perform_cast_queues() {
    // `slow` waits for a gate that only the main program opens after its cast: a
    // synchronous `perform:` would wait forever.
    let src = r#"
Actor subclass: Slow
  state: n = 0
  slow =>
    [(AtomicCounter named: #gate) value =:= 0] whileTrue: [Timer sleep: 1]
    self.n := self.n + 1
  slowWith: k =>
    [(AtomicCounter named: #gate) value =:= 0] whileTrue: [Timer sleep: 1]
    self.n := self.n + k
  n => self.n

gate := AtomicCounter new: #gate
a := Slow spawn
a perform: #slow!
a perform: #slowWith: withArguments: #(10)!
Transcript showCr: "queued"
gate increment
Transcript showCr: a n printString
"#;
    let (code, out, err) = run_script("perform", src, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "queued\n11\n");
}

/// Finding 7: `class maxMailbox => N` bounds the casts an actor's mailbox holds; the rest
/// are dropped and counted, and the actor's SupervisionNode status shows the count and the
/// bytes it holds.
#[test]
fn max_mailbox_bounds_queued_casts() {
    let src = r#"
Actor subclass: Sink
  class supervisionPolicy => #permanent
  class maxMailbox => 100
  state: n = 0
  block =>
    (AtomicCounter named: #inside) increment
    [(AtomicCounter named: #gate) value =:= 0] whileTrue: [Timer sleep: 1]
  add: x => self.n := self.n + 1
  n => self.n

Actor subclass: Open
  class supervisionPolicy => #permanent
  add: x => x

Supervisor subclass: SinkSup
  class children => #(Sink, Open)

gate := AtomicCounter new: #gate
AtomicCounter new: #inside
app := SinkSup supervise unwrap
s := (app which: Sink) unwrap
o := (app which: Open) unwrap
s block!
[(AtomicCounter named: #inside) value =:= 0] whileTrue: [Timer sleep: 1]
1 to: 1000 do: [:i | s add: "a message of some length"!]
node := ((ProcessNavigation from: app) unwrap tree findClass: Sink) first
st := node statusDetails
Transcript showCr: (st at: #queueLength) printString
Transcript showCr: (st at: #droppedCasts) printString
Transcript showCr: ((st at: #memory) > (100 * 16)) printString
Transcript showCr: (((ProcessNavigation from: app) unwrap tree findClass: Open) first statusDetails at: #droppedCasts) printString
gate increment
Transcript showCr: s n printString
app stop
"#;
    let (code, out, err) = run_script("mailbox", src, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "100\n900\ntrue\n0\n100\n");
}

/// A `--max-depth` whose coroutine stack cannot be mapped (here: the address space limited to
/// 4 GiB, the depth asking for 32 GiB) is refused at start with an error naming the flag,
/// instead of queueing the program until a stack is free — forever. Depths that fit run.
#[test]
fn a_max_depth_whose_stack_cannot_be_mapped_is_refused_at_start() {
    let src = "Transcript showCr: 42 printString\n";
    let vm = Some(4 << 20);
    for cmd in [
        &["run", "--max-depth", "1000000000"][..],
        &["run", "--max-depth", "2000000"],
    ] {
        let r = bt_run::bt_script_in("rely-depth", cmd, "deep", src, Duration::from_secs(60), vm);
        assert_eq!(r.code(), Some(2), "{cmd:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("--max-depth {}", cmd[2])),
            "{cmd:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("cannot be mapped"),
            "{cmd:?}: {}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("work is queued"),
            "{cmd:?}: {}",
            r.stderr
        );
    }
    let r = bt_run::bt_script_in(
        "rely-depth",
        &["run", "--max-depth", "20000"],
        "fits",
        src,
        Duration::from_secs(60),
        vm,
    );
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "42\n");
}

/// With no limit at all (`bt run`), one step larger than the machine's memory is refused
/// before it allocates — and before it pays its reductions, which took days for
/// `"x" repeat: 2 ** 50` — with a `memory_limit` error and status 1, never an abort.
#[test]
fn a_step_larger_than_the_machine_is_refused_at_once_under_bt_run() {
    for (name, step) in [
        ("repeat", "(\"x\" repeat: 2 ** 50) size"),
        ("as_list", "(1 to: 2 ** 50) asList size"),
        ("pad", "(\"x\" padLeft: 2 ** 50) size"),
        (
            "handled",
            "([(\"x\" repeat: 2 ** 50) size] on: Error do: [:e | 0])",
        ),
    ] {
        let src = format!("Transcript showCr: {step} printString\n");
        let (code, out, err) = run_script(name, &src, Duration::from_secs(60));
        assert_eq!(code, Some(1), "{name}: {out}{err}");
        assert!(err.contains("memory_limit"), "{name}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("abort"),
            "{name}: {err}"
        );
        assert_eq!(out, "", "{name}");
    }
}
