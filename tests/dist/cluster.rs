//! Cluster features between real `bt` nodes on loopback:
//! per-node queries and `ProcessNavigation on:` of a remote node, `bt observe NODE`,
//! global names, shape manifests. Harness: tests/dist/dist_common.rs (private port mapper, HOME in
//! a temporary directory, every child killed by a guard).

use crate::dist_common;

use dist_common::*;

/// A node with a supervisor whose child is killed over and over and an actor spawning and
/// stopping workers without pause, so its tree changes while it is being read.
const CHURN: &str = r#"Actor subclass: Worker
  class supervisionPolicy => #permanent
  state: n = 0
  bump => self.n := self.n + 1

Worker subclass: Special
  hello => #hi

Supervisor subclass: App
  class children => #(Worker)
  class strategy => #oneForOne
  class maxRestarts => 1000000

Actor subclass: Churner
  churn: app =>
    [true] whileTrue: [
      (Worker spawn) stop.
      ((app which: Worker) unwrap) ifNotNil: [:w | w kill].
      Timer sleep: 1]

app := (App supervise) unwrap
Special spawnAs: #special
c := Churner spawn
c churn: app!
Transcript showCr: "ready"
"#;

#[test]
fn per_node_queries_and_navigation_of_a_churning_node() {
    let epmd = Epmd::bt();
    let env = Env::new("queries", epmd.port);
    let _srv = env.serve_src("busy@localhost", COOKIE, &[], CHURN);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Worker
  state: n = 0
Worker subclass: Special
  hello => #hi

n := (Node named: #'busy@localhost') value
// Reading the tree many times while it changes: every answer is a consistent snapshot.
bad := 0
20 timesRepeat: [
  nav := (ProcessNavigation on: n) unwrap
  tree := nav tree
  (nav node =:= n) ifFalse: [bad := bad + 1]
  (tree node =:= n) ifFalse: [bad := bad + 1]
  (tree nodes allSatisfy: [:x | x node =:= n]) ifFalse: [bad := bad + 1]
  root := tree roots detect: [:r | r registeredName =:= #App] ifNone: [nil]
  (root notNil and: [root strategy =:= #oneForOne]) ifFalse: [bad := bad + 1]
  (tree size =:= ((tree totals at: #supervisors) + (tree totals at: #workers))) ifFalse: [bad := bad + 1]]
Transcript showCr: "consistent: {bad =:= 0}"
nav := (ProcessNavigation on: n) unwrap
special := nav tree nodes detect: [:x | x registeredName =:= #special]
Transcript showCr: special printString
Transcript showCr: special behaviourClass printString
Transcript showCr: (special pid printString startsWith: "<1.") printString
Transcript showCr: (special status at: #module) printString
Transcript showCr: (special status at: #queueLength) printString
Transcript showCr: (special asSupervisor) printString
restarted := (nav tree roots detect: [:r | r registeredName =:= #App]) children first
Transcript showCr: (restarted restartCount >= 0) printString
json := nav tree asJson
Transcript showCr: ((Json parse: json) unwrap at: "node") printString
Transcript showCr: (json includesSubstring: "Churner") printString
// The queries of 8.10 (the supervised Worker may be mid-restart, the churned one gone).
Transcript showCr: ((n actorsOf: Special) unwrap size) printString
Transcript showCr: ((n actorsOf: Worker) unwrap size >= 1) printString
Transcript showCr: ((n actors) unwrap size >= 2) printString
Transcript showCr: ((n supervisors) unwrap size) printString
s := (n actorsOf: Special) unwrap first
Transcript showCr: ((n actorAt: s) unwrap =:= s) printString
Transcript showCr: ((n actorAt: s pid printString) unwrap =:= s) printString
Transcript showCr: s hello printString
// `from:` a process of that node: the subtree is taken there.
sub := (ProcessNavigation from: (n supervisors) unwrap first) unwrap tree
Transcript showCr: "{sub root registeredName printString} {sub root node =:= n}"
Transcript showCr: (ProcessNavigation from: s) unwrap tree size printString
Transcript showCr: (n actorAt: "<0.999999.0>") printString
Transcript showCr: ((n processes) unwrap isKindOf: SupervisionTree) printString
Transcript showCr: (((n shapeManifest) unwrap at: #Node ifAbsent: [0]) =:= 1) printString
Transcript showCr: (n shapeSkew) printString
Transcript showCr: (Node current shapeSkew) printString
Transcript showCr: ((Node current supervisors) unwrap size) printString
Transcript showCr: ((Node current actorsOf: Worker) unwrap size) printString
// A node that is not there: Results, never exceptions.
gone := (Node named: #'gone@localhost') value
Transcript showCr: (gone actors) error kind printString
Transcript showCr: (ProcessNavigation on: gone) error kind printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "asker@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    let mut got = lines(&out);
    // The special actor's pid carries the asker's connection index of the busy node (1).
    let special = got.remove(1);
    assert!(
        special.starts_with("#SupervisionNode<#beamtalkActor Special <1.")
            && special.ends_with(".0>>"),
        "{special}"
    );
    assert_eq!(
        got,
        [
            "consistent: true",
            "Special",
            "true",
            "#Special",
            "0",
            "nil",
            "true",
            "\"busy@localhost\"",
            "true",
            "1",
            "true",
            "true",
            "1",
            "true",
            "true",
            "#hi",
            "#App true",
            "1",
            "Result ok: nil",
            "true",
            "true",
            "Result ok: #()",
            "Result ok: #()",
            "0",
            "0",
            "#node_down",
            "#node_down",
        ]
    );
}

/// `bt observe NODE`: a hidden observer node serves NODE's tree with the observer's HTTP
/// server (and `--once` prints it as JSON).
#[test]
fn bt_observe_serves_another_nodes_tree() {
    let epmd = Epmd::bt();
    let env = Env::new("observe", epmd.port);
    let _srv = env.serve_src("watched@localhost", COOKIE, &[], CHURN);
    let observe = |args: &[&str]| {
        let mut c = std::process::Command::new(BT);
        c.arg("observe").args(args);
        env.env(&mut c, COOKIE);
        c
    };
    let out = observe(&["watched@localhost", "--once"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema"], "bt.processes/1");
    assert_eq!(json["node"], "watched@localhost");
    let roots = json["roots"].as_array().unwrap();
    let app = roots
        .iter()
        .find(|r| r["class"] == "App")
        .expect("App root");
    assert_eq!(app["kind"], "beamtalkSupervisor");
    assert!(app["pid"].as_str().unwrap().starts_with("<1."), "{app}");
    assert!(roots.iter().any(|r| r["registeredName"] == "special"));

    // Served: the page's endpoints answer NODE's tree and the live status of its processes.
    let mut p = Proc::start(observe(&["watched@localhost", "--addr", "127.0.0.1:0"]));
    let line = p.line();
    let url = line
        .strip_prefix("observing watched@localhost on http://")
        .unwrap_or_else(|| panic!("{line}"));
    let addr: std::net::SocketAddr = url.trim_end_matches('/').parse().unwrap();
    let (status, body) = bt::observe::client::http_get(addr, "/runtime/processes").unwrap();
    assert!(status.contains("200"), "{status}");
    let tree: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(tree["node"], "watched@localhost");
    let special = tree["roots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["registeredName"] == "special")
        .expect("special")
        .clone();
    let pid = special["pid"]
        .as_str()
        .unwrap()
        .trim_matches(|c| c == '<' || c == '>');
    let (status, body) =
        bt::observe::client::http_get(addr, &format!("/runtime/status?pid={pid}")).unwrap();
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("Special"), "{body}");
    let (_, body) = bt::observe::client::http_get(addr, "/").unwrap();
    assert!(
        body.contains("<html") || body.contains("<!DOCTYPE"),
        "{body}"
    );
    p.kill();
}

/// A node holding `#svc` globally (and `#gkeep` through a supervision spec with
/// `scope: #global`), whose Keeper reports its own termination.
const GLOBAL_NODE: &str = r#"Actor subclass: Keeper
  where => Node current name asString
  terminate: reason => Transcript showCr: "terminated {reason printString}"

Actor subclass: Linker
  connectTo: name => ((Node named: name) value connect) isOk

Supervisor subclass: GApp
  class children => #((((SupervisionSpec new withActorClass: Keeper) withName: #gkeep scope: #global) withRestart: #permanent))

Transcript showCr: (Keeper spawnAs: #svc scope: #global) isOk printString
app := GApp supervise unwrap
// A restarted child registers its new process under the global name again.
k := (app which: Keeper) unwrap
old := k pid
k kill
[((app which: Keeper) unwrap ifNil: [k]) pid =:= old] whileTrue: [Timer sleep: 5]
[(Actor named: #gkeep scope: #global) isOk] whileFalse: [Timer sleep: 5]
Transcript showCr: ((Actor named: #gkeep scope: #global) unwrap pid =:= (app which: Keeper) unwrap pid) printString
Linker spawnAs: #linker
Transcript showCr: "ready"
"#;

/// 8.5: global registration and lookup across nodes, `reserved_name`, `type_error` for a
/// bad scope, supervision specs with `scope: #global`, the conflict rule after two
/// partitions heal (the later registrant stops with `#globalNameConflict`), and hidden
/// nodes kept out of the registry.
#[test]
fn global_names_and_the_conflict_rule_on_heal() {
    let epmd = Epmd::bt();
    let env = Env::new("global", epmd.port);
    // Two partitions: a and b are not connected, so both register #svc.
    let start = |name: &str, src: &str| {
        let file = env.script(&format!("{name}.bt"), src);
        let mut p = env.spawn(COOKIE, &["--name", name, "--serve", &file]);
        for want in ["true", "true", "ready"] {
            assert_eq!(p.line(), want);
        }
        p
    };
    let _a = start("ga@localhost", GLOBAL_NODE);
    let mut b = start("gb@localhost", &GLOBAL_NODE.replace("#gkeep", "#bkeep"));
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Keeper
  where => Node current name asString
ga := (Node named: #'ga@localhost') value
gb := (Node named: #'gb@localhost') value
ga connect. gb connect
Transcript showCr: (Keeper spawnAs: #svc scope: #global) error kind printString
Transcript showCr: (Keeper spawnAs: #gkeep scope: #global) error kind printString
Transcript showCr: (Keeper spawnAs: #bt_x scope: #global) error kind printString
Transcript showCr: ([Keeper spawnAs: #x scope: #planet] on: Error do: [:e | e kind]) printString
Transcript showCr: ((Actor named: #gkeep scope: #global) unwrap where) printString
Transcript showCr: (Actor named: #nothere scope: #global) error kind printString
// Heal: ga connects to gb. ga's Keeper started first and keeps #svc.
Transcript showCr: ((Actor named: #linker on: ga) unwrap connectTo: #'gb@localhost') printString
Transcript showCr: "healed"
"#,
    );
    let mut c = env.spawn(COOKIE, &["--name", "gc@localhost", &client]);
    for want in [
        "#name_registered",
        "#name_registered",
        "#reserved_name",
        "#type_error",
        "\"ga@localhost\"",
        "#name_not_registered",
        "true",
        "healed",
    ] {
        assert_eq!(c.line(), want);
    }
    let (status, _) = c.finish();
    assert_eq!(status, 0);
    // gb's registrant started later: it is stopped gracefully with the conflict reason.
    assert_eq!(b.line(), "terminated #globalNameConflict");
    let after = env.script(
        "after.bt",
        r#"Actor subclass: Keeper
  where => Node current name asString
(Node named: #'gb@localhost') value connect
Transcript showCr: ((Actor named: #svc scope: #global) unwrap where) printString
Transcript showCr: ((Actor named: #bkeep scope: #global) unwrap where) printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "gd@localhost", &after]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out), ["\"ga@localhost\"", "\"gb@localhost\""]);
    // A hidden node takes no part: it does not see #svc, and its own #svc conflicts with
    // nobody.
    let hidden = env.script(
        "hidden.bt",
        r#"Actor subclass: Keeper
(Node named: #'ga@localhost') value connect
Transcript showCr: (Actor named: #svc scope: #global) error kind printString
Transcript showCr: (Keeper spawnAs: #svc scope: #global) isOk printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "gh@localhost", "--hidden", &hidden]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out), ["#name_not_registered", "true"]);
    let (code, out, err) = env.run(COOKIE, &["--name", "ge@localhost", &after]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out), ["\"ga@localhost\"", "\"gb@localhost\""]);
}

/// 8.7 and 8.9 between two bt nodes whose `Pt` differs: manifests exchanged at connect
/// (NodeShapeSkew on both sides, `shapeSkew`, `shapeManifest`), an older envelope migrated
/// forward on a real send (the missing field takes its default), a newer one refused with
/// `shape_version_ahead`.
#[test]
fn shape_versions_skew_and_migration() {
    let epmd = Epmd::bt();
    let env = Env::new("shapes", epmd.port);
    let server = r#"Value subclass: Pt
  field: x = 0
  field: z = 7
  class shapeVersion => 2

Actor subclass: Echo
  zOf: p => p z
  make => Pt new

SystemAnnouncer current when: NodeShapeSkew do: [:e |
  Transcript showCr: "server skew {e className} {e localVersion} {e remoteVersion}"]
Echo spawnAs: #echo
Transcript showCr: "ready"
"#;
    let mut srv = env.serve_src("shp@localhost", COOKIE, &[], server);
    let client = env.script(
        "client.bt",
        r#"Value subclass: Pt
  field: x = 0

seen := AtomicCounter new: #skews
SystemAnnouncer current when: NodeShapeSkew do: [:e |
  Transcript showCr: "client skew {e node name} {e className} {e localVersion} {e remoteVersion}"
  seen increment]
n := (Node named: #'shp@localhost') value
n connect
[seen value =:= 0] whileTrue: [Timer sleep: 5]
Transcript showCr: (n shapeSkew) unwrap printString
Transcript showCr: ((n shapeManifest) unwrap at: #Pt) printString
echo := (Actor named: #echo on: n) unwrap
Transcript showCr: (echo zOf: (Pt new withX: 3)) printString
Transcript showCr: ([echo make] on: Error do: [:e | e kind]) printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "shc@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "client skew shp@localhost Pt 1 2",
            "#(#{#className => #Pt, #localVersion => 1, #remoteVersion => 2})",
            "2",
            "7",
            "#shape_version_ahead",
        ]
    );
    assert_eq!(srv.line(), "server skew Pt 2 1");
}

/// `named:scope: #global` answers a proxy that prints `Actor(Counter, global,
/// name)` and resolves through the cluster registry at each send: it stays global when it
/// crosses to another node and back, and follows the name when another node's actor holds
/// it next.
#[test]
fn a_global_name_proxy_resolves_in_the_registry_at_each_send() {
    let epmd = Epmd::bt();
    let env = Env::new("gproxy", epmd.port);
    let server = r#"Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1
  value => self.n
  echo: x => x
  where => Node current name asString

Actor subclass: Tally
  n => 7

Counter spawnAs: #held scope: #global
Counter spawnAs: #echo
Tally spawnAs: #tally scope: #global
Transcript showCr: "ready"
"#;
    let _srv = env.serve_src("gpa@localhost", COOKIE, &[], server);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1
  value => self.n
  echo: x => x
  where => Node current name asString

n := (Node named: #'gpa@localhost') unwrap
n connect
g := (Counter named: #held scope: #global) unwrap
Transcript showCr: g printString
Transcript showCr: g increment printString
Transcript showCr: g where
Transcript showCr: g isRemote printString
echo := (Counter named: #echo on: n) unwrap
back := echo echo: g
Transcript showCr: back printString
Transcript showCr: (back == g) printString
Transcript showCr: back value printString
// A class this node does not load: the proxy prints the holder's class name (and answers
// Actor as its class), here and after a trip through the other node.
t := (Actor named: #tally scope: #global) unwrap
Transcript showCr: t printString
Transcript showCr: t class printString
Transcript showCr: t n printString
Transcript showCr: (echo echo: t) printString
g stop
[(Counter spawnAs: #held scope: #global) isOk] whileFalse: [Timer sleep: 5]
Transcript showCr: g value printString
Transcript showCr: g where
Transcript showCr: g isRemote printString
g stop
[(Counter named: #held scope: #global) isOk] whileTrue: [Timer sleep: 5]
Transcript showCr: ([g value] on: Error do: [:e | e kind]) printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "gpb@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "Actor(Counter, global, held)",
            "1",
            "gpa@localhost",
            "true",
            "Actor(Counter, global, held)",
            "true",
            "1",
            "Actor(Tally, global, tally)",
            "Actor",
            "7",
            "Actor(Tally, global, tally)",
            // The name now belongs to this node's new actor.
            "0",
            "gpb@localhost",
            "false",
            "#no_such_process",
        ],
        "{err}"
    );
}
