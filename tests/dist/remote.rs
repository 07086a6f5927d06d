//! Remote actors between real bt nodes: remote spawn
//! and lookup, sends, casts and replies, errors relayed with their kind, `not_serialisable`,
//! timeouts, failure kinds (`node_down`, `actor_dead`, `timeout`, `no_such_process`), a node
//! killed mid-call, monitors across nodes and a supervisor on one node restarting a child
//! another node monitors. Harness: tests/dist/dist_common.rs (private port mapper, children killed
//! by guards).

use crate::dist_common;
use dist_common::*;

/// The serving node of these tests: a counter class, a self-registering supervised worker.
const SERVER: &str = r#"Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1
  add: k => self.n := self.n + k
  value => self.n
  echo: x => x
  sizeOf: x => x size
  fail => self.n := 99. self error: "boom"
  leak => self.n := self.n + 1. AtomicCounter new: #leak
  hang => Transcript showCr: "hanging". Timer sleep: 60000
  nap => Timer sleep: 300. self.n
  apply: b to: x => b value: x
  applyAll: bs to: x => bs collect: [:b | b value: x]
  applyAt: d to: x => (d at: #a) value: x
  describe: x => x printString
  sibling => Counter spawn
  withLog: l => #(l, Counter spawn)

Object subclass: Shared
  class square => [:x | x * x]

Object subclass: Finder
  class find: c => c apply: [:x | ^x * 2] to: 21. 0
  class stale => [:x | ^x]
  class chain: r to: c => r pass: [:x | ^x * 5] to: c. 0
  class findAll: c => c applyAll: #([:x | x], [:x | ^x * 10]) to: 2. 0
  class findAt: c => c applyAt: #{#a => [:x | ^x * 100]} to: 2. 0

Actor subclass: Ticketed
  state: ticket = (Counter named: #hits) unwrap increment
  ticket => self.ticket

Actor subclass: Worker
  state: jobs = 0
  class supervisionPolicy => #permanent
  initialize => self registerAs: #worker
  work => self.jobs := self.jobs + 1
  jobs => self.jobs

Supervisor subclass: WorkSup
  class children => #(Worker)
  class strategy => #oneForOne

WorkSup supervise
Counter spawnAs: #hits
Transcript showCr: "ready"
"#;

#[test]
fn remote_spawn_lookup_and_sends() {
    let epmd = Epmd::bt();
    let env = Env::new("rspawn", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], SERVER);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1
  value => self.n

Actor subclass: Missing

Supervisor subclass: WorkSup
  class children => #()

Object subclass: Shared
  class square => [:x | x * x]

Object subclass: Finder
  class find: c => c apply: [:x | ^x * 2] to: 21. 0
  class stale => [:x | ^x]
  class chain: r to: c => r pass: [:x | ^x * 5] to: c. 0

Actor subclass: Relay
  pass: b to: c => c apply: b to: 3. #fellThrough

Actor subclass: Ticketed
  state: ticket = nil
  ticket => self.ticket

Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  size => self.items size

try := [:b | b on: Error do: [:e | "{e kind printString} {e message}"]]
n := (Node named: #'bee@localhost') unwrap
c := (Counter spawnOn: n) unwrap
Transcript showCr: c printString
Transcript showCr: c increment printString
Transcript showCr: (c add: 10) printString
c increment!
Transcript showCr: c value printString
Transcript showCr: c isRemote printString
Transcript showCr: c node printString
Transcript showCr: c pid printString
Transcript showCr: (#(1) add: c) printString
Transcript showCr: (try value: [c fail])
Transcript showCr: c value printString
Transcript showCr: (try value: [c echo: (AtomicCounter new: #a)])
Transcript showCr: (try value: [c echo: #(1, #{#k => (AtomicCounter new: #b)})])
Transcript showCr: (try value: [c leak])
Transcript showCr: c value printString
Transcript showCr: (try value: [(c withTimeout: 50) nap])
Transcript showCr: (try value: [c noSuchThing])
Transcript showCr: ([c noSuchThing] on: Error do: [:e | "{e selector printString} {e hint}"])
Transcript showCr: (try value: [c size])
Transcript showCr: (c apply: Shared square to: 7) printString
k := 5
Transcript showCr: ([c apply: [:x | x + k] to: 1] on: Error do: [:e | e kind printString])
w := (Counter spawnWith: #{#n => 41} on: n) unwrap
Transcript showCr: w increment printString
Transcript showCr: (Counter spawnAs: #second on: n) printString
Transcript showCr: (Counter spawnAs: #second on: n) error kind printString
Transcript showCr: (Counter spawnWith: #{#n => 5} as: #third on: n) printString
Transcript showCr: (Counter spawnWith: #{#n => (AtomicCounter new: #c)} on: n) error message
Transcript showCr: (Counter named: #third on: n) unwrap value printString
Transcript showCr: (Counter named: #nobody on: n) error kind printString
Transcript showCr: (Counter named: #worker on: n) error kind printString
Transcript showCr: (Missing spawnOn: n) error kind printString
Transcript showCr: (Missing spawnOn: n) error message
Transcript showCr: ((Actor allRegisteredOn: n) unwrap collect: [:a | a printString]) printString
Transcript showCr: n supervisors unwrap printString
sup := n supervisors unwrap first
Transcript showCr: sup class printString
Transcript showCr: (sup isKindOf: Supervisor) printString
Transcript showCr: sup childCount printString
Transcript showCr: sup isAlive printString
Transcript showCr: (Counter spawnOn: Node current) printString
Transcript showCr: (try value: [Counter spawnOn: 42])
log := Log spawn
log registerAs: #log
h := (Actor named: #hits on: n) unwrap
Transcript showCr: h printString
Transcript showCr: (h echo: log) printString
Transcript showCr: (h echo: (Log named: #log) unwrap) printString
Transcript showCr: (h sizeOf: (Log named: #log) unwrap) printString
Transcript showCr: (h echo: c) printString
// An actor this node meets first in a reply prints with its class (a class table travels
// with actors between bt nodes).
Transcript showCr: c sibling printString
Transcript showCr: (c withLog: log) printString
// 8.6: a `^` in a block run on the other node during the call returns from its home
// method here; one whose home has returned raises runtime_error.
Transcript showCr: (Finder find: c) printString
Transcript showCr: (try value: [c apply: Finder stale to: 1])
// 2.8 and 8.6 together: through a local actor, then to the other node, and back.
Transcript showCr: (Finder chain: Relay spawn to: c) printString
// A field default that sends to an actor runs in a process there (it did not, once).
Transcript showCr: (try value: [(Ticketed spawnOn: n) unwrap ticket printString])
c stop
Transcript showCr: c isAlive printString
Transcript showCr: (try value: [c value])
Transcript showCr: sup children printString
Transcript showCr: sup stop printString
Transcript showCr: sup isAlive printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "ant@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&wild(&out)),
        [
            "Actor(Counter, 1.N.0)",
            "1",
            "11",
            "12",
            "true",
            "Node(bee@localhost)",
            "<1.N.0>",
            "#(1, Actor(Counter, 1.N.0))",
            // Errors relay with their kind; the callee's state is rolled back.
            "#user_error boom",
            "12",
            // Nothing crosses that cannot: the path names where it was found.
            "#not_serialisable AtomicCounter value at arg1 cannot cross a node boundary",
            "#not_serialisable AtomicCounter value at arg1[2]{#k} cannot cross a node boundary",
            // A result that cannot cross answers the caller; the method's changes stay.
            "#not_serialisable AtomicCounter value at result cannot cross a node boundary",
            "13",
            "#timeout <1.N.0> on bee@localhost did not answer 'nap' within 50 ms",
            // A message the actor does not understand fails as a local send does: no
            // method ran, so no `Counter>>` prefix; selector and hint kept.
            "#does_not_understand Counter does not understand 'noSuchThing'",
            "#noSuchThing Check spelling or use 'respondsTo:' to verify method exists",
            "#does_not_understand Counter does not understand 'size'",
            // Blocks cross with their code's identity: the same method source on both
            // nodes runs there; code that node does not have raises remote_code_mismatch.
            "49",
            "#remote_code_mismatch",
            "42",
            "Result ok: Actor(Counter, 1.N.0)",
            "#name_registered",
            "Result ok: Actor(Counter, 1.N.0)",
            // spawnWith: values are found at `state.key`, not in the request.
            "AtomicCounter value at state.n cannot cross a node boundary",
            "5",
            "#name_not_registered",
            "#wrong_class",
            "#class_not_found",
            "class Missing is not loaded on bee@localhost",
            // A supervisor there prints as a supervisor handle (its class is loaded here).
            "#(\"Supervisor(WorkSup, 1.N.0)\", \"Actor(Worker, 1.N.0)\", \"Actor(Counter, 1.N.0)\", \"Actor(Counter, 1.N.0)\", \"Actor(Counter, 1.N.0)\")",
            "#(Supervisor(WorkSup, 1.N.0))",
            // Its class is the supervisor's class loaded here; sends still go there.
            "WorkSup",
            "true",
            "1",
            "true",
            "Result ok: Actor(Counter, 0.N.0)",
            "#type_error spawnOn: expects a Node, not Integer",
            "Actor(Counter, registered, hits, bee@localhost)",
            // Actors of this node come back as themselves; a local name proxy keeps
            // resolving on its origin node (here) when used there.
            "Actor(Log, 0.N.0)",
            "Actor(Log, registered, log)",
            "0",
            "Actor(Counter, 1.N.0)",
            "Actor(Counter, 1.N.0)",
            "#(Actor(Log, 0.N.0), Actor(Counter, 1.N.0))",
            "42",
            "#runtime_error non-local return from a method that has already returned",
            "15",
            "1",
            "false",
            "#actor_dead <1.N.0> on bee@localhost is not alive",
            "#(#Worker)",
            "#ok",
            "false",
        ],
        "{err}"
    );
}

/// 8.8: `node_down` (unreachable, and at once for a call pending when its node dies —
/// not after the call's timeout), `actor_dead`, `no_such_process`; monitors across nodes
/// report `#noconnection` when the link drops.
#[test]
fn failure_kinds_and_a_node_killed_mid_call() {
    let epmd = Epmd::bt();
    let env = Env::new("rfail", epmd.port);
    let mut b = env.serve_src("bee@localhost", COOKIE, &[], SERVER);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  items => self.items
  size => self.items size

Actor subclass: Counter

try := [:b | b on: Error do: [:e | e kind printString]]
ghost := (Node named: #'ghost@localhost') unwrap
Transcript showCr: (Counter spawnOn: ghost) error kind printString
Transcript showCr: (try value: [(Actor named: #x on: ghost) unwrap])
n := (Node named: #'bee@localhost') unwrap
c := (Actor named: #hits on: n) unwrap
Transcript showCr: (Actor named: #hits on: n) unwrap value printString
w := (Actor named: #worker on: n) unwrap
p := (Actor named: #hits on: n) unwrap pid
Transcript showCr: (try value: [(Actor named: #nobody on: n) unwrap])
tmp := (Counter spawnAs: #tmp on: n) unwrap
t := (Actor named: #tmp on: n) unwrap
tmp kill
Transcript showCr: (try value: [t foo])
Transcript showCr: (try value: [tmp foo])
log := Log spawn
c monitor whenDown: [:r | log add: "down {r printString}"]
c onExit: [:r | log add: "exit {r printString}"]
Transcript showCr: "calling"
Transcript showCr: (try value: [(c withTimeout: 60000) hang])
[log size < 2] whileTrue: [Timer sleep: 5]
Transcript showCr: log items sort printString
Transcript showCr: (try value: [c value])
"#,
    );
    let mut a = env.spawn(COOKIE, &["--name", "ant@localhost", &client]);
    for want in [
        "#node_down",
        "#node_down",
        "0",
        "#name_not_registered",
        "#no_such_process",
        "#actor_dead",
        "calling",
    ] {
        a.expect(want);
    }
    b.expect("hanging");
    let killed = std::time::Instant::now();
    b.kill();
    a.expect("#node_down");
    // At once: the call's own timeout is 60 s.
    assert!(
        killed.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        killed.elapsed()
    );
    a.expect("#(\"down #noconnection\", \"exit #noconnection\")");
    a.expect("#node_down");
    let (code, _) = a.finish();
    assert_eq!(code, 0);
}

/// A supervisor on node B restarts a child that node A monitors: A sees the exit, and its
/// name proxy reaches the restarted child.
#[test]
fn a_remote_supervisor_restarts_a_monitored_child() {
    let epmd = Epmd::bt();
    let env = Env::new("rsup", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], SERVER);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  items => self.items
  size => self.items size

n := (Node named: #'bee@localhost') unwrap
// Supervisor selectors through the handles `aNode supervisors` answers.
sup := (n supervisors) unwrap first
Transcript showCr: sup printString
Transcript showCr: sup childCount printString
Transcript showCr: sup children printString
w := (Actor named: #worker on: n) unwrap
w work. w work
Transcript showCr: w jobs printString
old := w pid
log := Log spawn
w monitor whenDown: [:r | log add: r]
w kill
[log size < 1] whileTrue: [Timer sleep: 5]
Transcript showCr: log items printString
new := nil
[new := [w pid] on: Error do: [:e | old]. new =:= old] whileTrue: [Timer sleep: 5]
Transcript showCr: (new =:= old) printString
Transcript showCr: w jobs printString
w work
Transcript showCr: w jobs printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "ant@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&wild(&out)),
        [
            "Actor(WorkSup, 1.N.0)",
            "1",
            "#(#Worker)",
            "2",
            "#(#killed)",
            "false",
            "0",
            "1"
        ],
        "{err}"
    );
}

/// examples/cluster: the work queue on one node, workers under a supervisor on another; the
/// output is the one pinned for the single-process run (examples/cluster/cluster.stdout).
#[test]
fn the_cluster_example_runs_on_two_nodes() {
    let epmd = Epmd::bt();
    let env = Env::new("rcluster", epmd.port);
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cluster/cluster.bt");
    let want = include_str!("../../examples/cluster/cluster.stdout");
    let mut w = env.spawn(COOKIE, &["--name", "workers@localhost", "--serve", example]);
    w.expect("ready");
    let (code, out, err) = env.run(COOKIE, &["--name", "queue@localhost", example]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, want, "{err}");
}

/// Pids cross as Pids (a reference to the process, printed with the receiver's
/// connection index) and answer the Pid protocol there; a `^` in a block inside a
/// collection argument returns from its home method here.
#[test]
fn pids_cross_as_pids_and_nested_blocks_return_home() {
    let epmd = Epmd::bt();
    let env = Env::new("rpids", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], SERVER);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Counter
  state: n = 0
  value => self.n
  echo: x => x
  describe: x => x printString
  applyAll: bs to: x => bs collect: [:b | b value: x]
  applyAt: d to: x => (d at: #a) value: x

Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  items => self.items
  size => self.items size

Object subclass: Finder
  class find: c => c apply: [:x | ^x * 2] to: 21. 0
  class stale => [:x | ^x]
  class chain: r to: c => r pass: [:x | ^x * 5] to: c. 0
  class findAll: c => c applyAll: #([:x | x], [:x | ^x * 10]) to: 2. 0
  class findAt: c => c applyAt: #{#a => [:x | ^x * 100]} to: 2. 0

n := (Node named: #'bee@localhost') unwrap
c := (Counter spawnOn: n) unwrap
l := Counter spawn
Transcript showCr: (c echo: c pid) printString
Transcript showCr: (c echo: c pid) class printString
Transcript showCr: (c describe: c pid)
Transcript showCr: (c describe: l pid)
Transcript showCr: ((c echo: l pid) =:= l pid) printString
Transcript showCr: (c echo: #(l, l pid)) printString
Transcript showCr: (c echo: l) printString
t := (Counter spawnOn: n) unwrap
log := Log spawn
t onExit: [:r | log add: r]
tp := t pid
Transcript showCr: tp isAlive printString
Transcript showCr: (tp exit: #bye) printString
[log size < 1] whileTrue: [Timer sleep: 5]
Transcript showCr: log items printString
Transcript showCr: (tp exit: #bye) printString
Transcript showCr: tp kill printString
Transcript showCr: (Counter spawnOn: n) unwrap pid kill printString
Transcript showCr: (Finder findAll: c) printString
Transcript showCr: (Finder findAt: c) printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "ant@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&wild(&out)),
        [
            "<1.N.0>",
            "Pid",
            "<0.N.0>",
            "<1.N.0>",
            "true",
            // A pid met as an actor and as a Pid in one payload arrives as the actor.
            "#(Actor(Counter, 0.N.0), Actor(Counter, 0.N.0))",
            "Actor(Counter, 0.N.0)",
            "true",
            "true",
            "#(#bye)",
            "false",
            "false",
            "true",
            "20",
            "200",
        ],
        "{err}"
    );
}

/// A supervisor never owns a child on another node: a SupervisionSpec whose start method
/// answers a remote actor is refused (`supervisor_start_failed`, the message naming the
/// rule), not replaced by a local child; the same spec answering a local actor starts it.
#[test]
fn a_spec_whose_start_method_answers_a_remote_actor_is_refused() {
    let epmd = Epmd::bt();
    let env = Env::new("remotechild", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], SERVER);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Counter
  state: n = 0
  value => self.n
  class startOn: name => (Counter spawnOn: (Node named: name) unwrap) unwrap
  class startHere: k => Counter spawnWith: #{#n => k}

Supervisor subclass: Remote
  class children => #((SupervisionSpec id: #c actorClass: Counter restart: #permanent args: #(#'bee@localhost') shutdown: nil classMethod: #startOn: name: nil))

Supervisor subclass: Local
  class children => #((SupervisionSpec id: #c actorClass: Counter restart: #permanent args: #(7) shutdown: nil classMethod: #startHere: name: nil))

r := Remote supervise
Transcript showCr: r isError printString
Transcript showCr: r error kind printString
Transcript showCr: r error message
l := Local supervise
Transcript showCr: l isOk printString
Transcript showCr: (l unwrap which: #c) unwrap value printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "sup@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    let lines = lines(&out);
    assert_eq!(lines[0], "true", "{out}\n{err}");
    assert_eq!(lines[1], "#supervisor_start_failed", "{out}");
    assert!(
        lines[2].contains("remote children are started by the remote node's own supervisors"),
        "{out}"
    );
    assert_eq!(&lines[3..], ["true", "7"], "{out}\n{err}");
}
