//! Deadlock detection across nodes: a sync call that would close a
//! waiting cycle through other nodes fails at once with `deadlock_detected`, as a local one
//! does, instead of timing out. Cycles of two nodes (by handle and through a name proxy),
//! of three nodes, one that leaves a node and re-enters it, one through a local actor
//! first; chains without a cycle still answer. Harness: tests/dist/dist_common.rs (private port
//! mapper, children killed by guards).

use crate::dist_common;
use dist_common::*;

/// A serving node: `#back` calls what it is given, so a caller waiting on it that is
/// passed back closes a cycle.
const BACK: &str = r#"Actor subclass: Back
  callBack: a => a value
  callName: n => (Actor named: #front on: n) unwrap value
  via: c back: a => c callBack: a
  visit: x => x value
  poke: x => x poke

Back spawnAs: #back
Transcript showCr: "ready"
"#;

/// The calling node: `Front` waits on the other nodes while they call it (or its
/// `Helper`) back. Each line prints the kind and message of the error, or the answer; an
/// undetected cycle would print `#timeout` after 5 s.
const FRONT: &str = r#"Actor subclass: Front
  value => 42
  ask: b => b callBack: self
  askName: b => b callName: Node current
  ask: b via: c => b via: c back: self
  visit: b with: x => b visit: x
  reenter: b with: x => x peer: self. b poke: x
  through: l to: b => l pass: b back: self
  pokeLocal: x => x poke

Actor subclass: Helper
  state: peer = nil
  value => 7
  peer: p => self.peer := p
  poke => self.peer value
  pass: b back: a => b callBack: a

try := [:blk | blk on: Error do: [:e | "{e kind printString} {e message}"]]
bee := (Node named: #'bee@localhost') unwrap
cat := (Node named: #'cat@localhost') unwrap
b := (Actor named: #back on: bee) unwrap
c := (Actor named: #back on: cat) unwrap
f := (Front spawnAs: #front) unwrap
h := Helper spawn
// The local case, for the message.
h peer: f
Transcript showCr: (try value: [f pokeLocal: h])
Transcript showCr: (try value: [f ask: b])
Transcript showCr: (try value: [f askName: b])
Transcript showCr: (try value: [f ask: b via: c])
Transcript showCr: (try value: [f visit: b with: h])
Transcript showCr: (try value: [f reenter: b with: h])
Transcript showCr: (try value: [f through: h to: b])
// Nothing was left waiting: the actors still answer.
Transcript showCr: (f visit: b with: h) printString
Transcript showCr: (b visit: f) printString
"#;

#[test]
fn cycles_through_other_nodes_fail_at_once() {
    let epmd = Epmd::bt();
    let env = Env::new("deadlock", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], BACK);
    let _c = env.serve_src("cat@localhost", COOKIE, &[], BACK);
    let client = env.script("front.bt", FRONT);
    let (code, out, err) = env.run(COOKIE, &["--name", "ant@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&wild(&out)),
        [
            "#deadlock_detected Helper>>poke: deadlock: Actor(Front, 0.N.0) is already waiting on this process ('value')",
            // Detected by bee before it sends (its caller's chain holds Front).
            "#deadlock_detected Back>>callBack: deadlock: Actor(Front, 1.N.0) is already waiting on this process ('value')",
            // Through a name proxy: detected by ant when the call arrives.
            "#deadlock_detected Back>>callName: deadlock: #front on ant@localhost is already waiting on this process ('value')",
            // Three nodes: ant → bee → cat → ant, detected by cat.
            "#deadlock_detected Back>>callBack: deadlock: Actor(Front, 1.N.0) is already waiting on this process ('value')",
            // A chain without a cycle answers.
            "7",
            // Out of ant and back into it: the Helper's local call to Front is the cycle.
            "#deadlock_detected Helper>>poke: deadlock: Actor(Front, 0.N.0) is already waiting on this process ('value')",
            // Through a local actor first.
            "#deadlock_detected Back>>callBack: deadlock: Actor(Front, 1.N.0) is already waiting on this process ('value')",
            "7",
            "42",
        ],
        "{err}"
    );
}
