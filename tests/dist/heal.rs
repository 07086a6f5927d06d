//! Healing: a node stopped past the tick (SIGSTOP) and resumed (SIGCONT). A node
//! with a seed list (`--connect`) reconnects by itself with backoff and the global registry
//! resyncs; while the link is down a global lookup of a name held there answers `node_down`;
//! a node without seeds reconnects on its next send. Every wait is on an event line.

use crate::dist_common;
use dist_common::*;

const HOLDER: &str = r#"Actor subclass: Keeper
  ping => #pong

Keeper spawnAs: #gk scope: #global
Transcript showCr: "ready"
"#;

/// The seeded node's script: prints what it sees at each stage and waits on announcements.
const SEEDED: &str = r#"Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  has: x => ^self.items includes: x

log := Log spawn
SystemAnnouncer current when: NodeUp do: [:e | log add: "up {e node name}"]
SystemAnnouncer current when: NodeDown do: [:e | log add: "down {e node name}"]
Transcript showCr: Node connected printString
[(Actor named: #gk scope: #global) isOk] whileFalse: [Timer sleep: 5]
Transcript showCr: ((Actor named: #gk scope: #global) unwrap ping) printString
Transcript showCr: "stop bee"
[log has: "down bee@localhost"] whileFalse: [Timer sleep: 5]
Transcript showCr: (Actor named: #gk scope: #global) error kind printString
Transcript showCr: "continue bee"
[log has: "up bee@localhost"] whileFalse: [Timer sleep: 5]
[(Actor named: #gk scope: #global) isOk] whileFalse: [Timer sleep: 5]
Transcript showCr: ((Actor named: #gk scope: #global) unwrap ping) printString
"#;

#[test]
fn a_seeded_node_reconnects_after_a_partition_and_the_registry_resyncs() {
    let epmd = Epmd::bt();
    let env = Env::new("heal", epmd.port);
    let bee = env.serve_src("bee@localhost", COOKIE, &["--net-tick", "2"], HOLDER);
    let script = env.script("seeded.bt", SEEDED);
    let mut ant = env.spawn(
        COOKIE,
        &[
            "--name",
            "ant@localhost",
            "--net-tick",
            "2",
            "--connect",
            "bee@localhost",
            &script,
        ],
    );
    ant.expect("#(Node(bee@localhost))");
    ant.expect("#pong");
    ant.expect("stop bee");
    signal(bee.pid(), libc::SIGSTOP);
    ant.expect("#node_down");
    ant.expect("continue bee");
    signal(bee.pid(), libc::SIGCONT);
    ant.expect("#pong");
    assert_eq!(ant.finish().0, 0);
}

/// Without seeds, the next send to an actor on the healed node reconnects.
#[test]
fn the_next_send_reconnects_after_a_partition() {
    let epmd = Epmd::bt();
    let env = Env::new("healsend", epmd.port);
    let bee = env.serve_src(
        "bee@localhost",
        COOKIE,
        &["--net-tick", "2"],
        "Actor subclass: Keeper\n  ping => #pong\n\nKeeper spawnAs: #k\nTranscript showCr: \"ready\"\n",
    );
    let script = env.script(
        "client.bt",
        r#"Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  has: x => ^self.items includes: x

log := Log spawn
SystemAnnouncer current when: NodeDown do: [:e | log add: "down {e node name}"]
bee := (Node named: #'bee@localhost') unwrap
k := (Actor named: #k on: bee) unwrap
Transcript showCr: k ping printString
Transcript showCr: "stop bee"
[log has: "down bee@localhost"] whileFalse: [Timer sleep: 5]
Transcript showCr: bee isConnected printString
Transcript showCr: "continue bee"
Transcript showCr: ([k ping] on: Error do: [:e | e kind]) printString
Transcript showCr: bee isConnected printString
"#,
    );
    let mut ant = env.spawn(
        COOKIE,
        &["--name", "ant@localhost", "--net-tick", "2", &script],
    );
    ant.expect("#pong");
    ant.expect("stop bee");
    signal(bee.pid(), libc::SIGSTOP);
    ant.expect("false");
    ant.expect("continue bee");
    signal(bee.pid(), libc::SIGCONT);
    ant.expect("#pong");
    ant.expect("true");
    assert_eq!(ant.finish().0, 0);
}
