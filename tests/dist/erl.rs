//! bt and Erlang nodes in one cluster: real `erl` (OTP 25+, installed by
//! `.ci/run`) and `bt` processes on 127.0.0.1 with Erlang's `epmd` on a private port.
//! These pin the reply encoding an Erlang caller sees (docs/erlang-interop.md).

use crate::dist_common;
use dist_common::*;

/// The bt side of most tests: a registered counter and a victim actor.
const BT_SERVER: &str = r#"Value subclass: Point
  field: x = 0
  field: y = 0

Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1. ^self.n
  add: k => self.n := self.n + k. ^self.n
  echo: x => ^x
  point => ^Point new: #{#x => 3, #y => 4}
  fail => ^self error: "boom"
  me => ^self
  stopNow => self stop
  die => self kill

Counter spawnAs: #counter
Counter spawnAs: #victim
Counter spawnAs: #linked
Transcript showCr: "ready"
"#;

/// Prints each answer on its own line (`~w`: one line, deterministic).
const ERL_PRELUDE: &str = "P = fun(X) -> io:format(\"~w~n\", [X]) end, B = 'bt@127.0.0.1', ";

fn erl_code(body: &str) -> String {
    format!("{ERL_PRELUDE}{body}")
}

#[test]
fn erlang_pings_calls_and_casts_bt_actors() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("erlcalls", epmd.port);
    let _bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], BT_SERVER);
    let code = erl_code(
        r#"
P(net_adm:ping(B)),
P(gen_server:call({counter, B}, {increment, []})),
P(gen_server:call({counter, B}, {'add:', [5]})),
{error, #{'$beamtalk_class' := C, kind := K, message := M}} = gen_server:call({counter, B}, {fail, []}),
P({C, K, M}),
P(catch gen_server:call({nobody, B}, {increment, []})),
ok = gen_server:cast({counter, B}, {cast, increment, []}),
P(gen_server:call({counter, B}, {increment, []})),
P(gen_server:call({counter, B}, {'echo:', [[1, -2, 3.5, <<"text">>, atom, true, nil, {a, b}, 123456789012345678901234567890]]})),
P(gen_server:call({counter, B}, {'echo:', [#{k => [1], 2 => <<"v">>}]})),
{ok, Pt} = gen_server:call({counter, B}, {point, []}),
P([maps:get(K2, Pt) || K2 <- ['$beamtalk_class', '$beamtalk_version', x, y]]),
{error, #{kind := K3}} = gen_server:call({counter, B}, {'add:', [1, 2]}),
P(K3),
{error, #{kind := K4}} = gen_server:call({counter, B}, {nosuch, []}),
P(K4),
P(lists:member(B, nodes(hidden))),
halt()."#,
    );
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], &code);
    for want in [
        "pong",
        "{ok,1}",
        "{ok,6}",
        "{'Error',user_error,<<98,111,111,109>>}",
        "{'EXIT',{noproc,{gen_server,call,[{nobody,'bt@127.0.0.1'},{increment,[]}]}}}",
        "{ok,8}",
        "{ok,[1,-2,3.5,<<116,101,120,116>>,atom,true,nil,{a,b},123456789012345678901234567890]}",
        "{ok,#{2 => <<118>>,k => [1]}}",
        "['Point',1,3,4]",
        "arity_mismatch",
        "does_not_understand",
        "true",
    ] {
        erl.expect(want);
    }
    assert_eq!(erl.finish().0, 0);
}

/// `erlang:monitor(process, {Name, BtNode})` and links: `'DOWN'` carries the actor's exit
/// reason; `noconnection` when the bt node goes away.
#[test]
fn erlang_monitors_and_links_bt_actors() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("erlmon", epmd.port);
    let mut bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], BT_SERVER);
    let code = erl_code(
        r#"
Down = fun() -> receive {'DOWN', _, process, Obj, R} -> P({Obj, R}) end end,
process_flag(trap_exit, true),
R1 = erlang:monitor(process, {victim, B}),
gen_server:cast({victim, B}, {cast, die, []}),
Down(),
erlang:monitor(process, {victim, B}),
Down(),
{ok, Pid} = gen_server:call({linked, B}, {me, []}),
P(node(Pid) =:= B),
link(Pid),
gen_server:cast({linked, B}, {cast, stopNow, []}),
receive {'EXIT', Pid, ER} -> P({exit, ER}) end,
erlang:monitor(process, {counter, B}),
io:format("monitoring~n"),
Down(),
halt()."#,
    );
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], &code);
    erl.expect("{{victim,'bt@127.0.0.1'},killed}");
    erl.expect("{{victim,'bt@127.0.0.1'},noproc}");
    erl.expect("true");
    erl.expect("{exit,normal}");
    erl.expect("monitoring");
    bt.kill();
    erl.expect("{{counter,'bt@127.0.0.1'},noconnection}");
    assert_eq!(erl.finish().0, 0);
}

/// A bt actor calls an Erlang gen_server (`named:on:` → `gen_server:call` with
/// `{Selector, Args}`); the link to an Erlang node is hidden.
#[test]
fn bt_calls_an_erlang_gen_server() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("btcalls", epmd.port);
    let code = r#"Loop = fun L() -> receive {'$gen_call', From, Req} -> gen:reply(From, {got, Req}), L() end end,
register(echo, spawn(Loop)),
io:format("ready~n"),
receive after infinity -> ok end."#;
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], code);
    erl.expect("ready");
    let client = env.script(
        "client.bt",
        r#"// An actor others wait on: its calls to bt nodes would carry the waiting chain; an
// Erlang process sees the plain request.
Actor subclass: Fwd
  ask: e => e info: "y"

n := (Node named: #'e@127.0.0.1') unwrap
Transcript showCr: n ping printString
e := (Actor named: #echo on: n) unwrap
Transcript showCr: (e info: "x") printString
Transcript showCr: (Fwd spawn ask: e) printString
Transcript showCr: (e add: 3 to: #(1, 2)) printString
Transcript showCr: (e status) printString
Transcript showCr: n isConnected printString
Transcript showCr: Node connected printString
Transcript showCr: ([(Actor named: #nobody on: n) unwrap info: 1] on: Error do: [:x | x kind]) printString
"#,
    );
    let (status, out, err) = env.run(COOKIE, &["--name", "bt@127.0.0.1", &client]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "true",
            "{#got, {#info:, #(\"x\")}}",
            "{#got, {#info:, #(\"y\")}}",
            "{#got, {#add:to:, #(3, #(1, 2))}}",
            "{#got, {#status, #()}}",
            "true",
            "#()",
            "#no_such_process",
        ]
    );
    erl.kill();
}

/// A wrong cookie is refused both ways between bt and Erlang.
#[test]
fn wrong_cookie_between_bt_and_erlang() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("erlcookie", epmd.port);
    let mut bt = env.serve("bt@127.0.0.1", COOKIE, &[]);
    let code =
        erl_code("P(net_adm:ping(B)), io:format(\"ready~n\"), receive after infinity -> ok end.");
    let mut erl = env.erl("e@127.0.0.1", "WRONGCOOKIE", &[], &code);
    erl.expect("pang");
    erl.expect("ready");
    let client = env.script(
        "client.bt",
        "Transcript showCr: (Node named: #'e@127.0.0.1') unwrap ping printString\n",
    );
    let (status, out, err) = env.run(COOKIE, &["--name", "probe@127.0.0.1", &client]);
    assert_eq!((status, out.as_str()), (0, "false\n"), "{err}");
    let log = bt.kill();
    assert!(log.contains("the cookie does not match"), "{log}");
    erl.kill();
}

/// `monitor` / `whenDown:` / `demonitor` and `onExit:` from bt on Erlang processes, by pid
/// and through a name proxy (`MONITOR_P` by name): the block gets the Erlang exit reason,
/// `#noproc` for a name nobody holds, `#noconnection` when the Erlang node goes away.
#[test]
fn bt_monitors_erlang_processes() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("btmon", epmd.port);
    let code = r#"Worker = fun() -> receive {'$gen_call', From, {'quit:', [R]}} -> gen:reply(From, ok), exit(R) end end,
Loop = fun L() -> receive
    {'$gen_call', From, {spawnWorker, []}} -> gen:reply(From, spawn(Worker)), L();
    {'$gen_call', From, {'spawnWorkerAs:', [N]}} -> register(N, spawn(Worker)), gen:reply(From, ok), L()
  end end,
register(e, spawn(Loop)),
io:format("ready~n"),
receive after infinity -> ok end."#;
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], code);
    erl.expect("ready");
    let client = env.script(
        "client.bt",
        r#"n := (Node named: #'e@127.0.0.1') unwrap
e := (Actor named: #e on: n) unwrap
show := [:tag | [:r | Transcript showCr: "{tag} {r printString}"]]
w1 := e spawnWorker
(w1 monitor) whenDown: (show value: "pid monitor")
w1 quit: #boom
w2 := e spawnWorker
w2 onExit: (show value: "pid onExit")
w2 quit: #normal
e spawnWorkerAs: #w3
w3 := (Actor named: #w3 on: n) unwrap
(w3 monitor) whenDown: (show value: "name monitor")
w3 onExit: (show value: "name onExit")
w3 quit: #bye
((Actor named: #nobody on: n) unwrap monitor) whenDown: (show value: "nobody")
w4 := e spawnWorker
m := (w4 monitor) whenDown: (show value: "demonitored")
Transcript showCr: m demonitor printString
w4 quit: #gone
(e monitor) whenDown: (show value: "e monitor")
e onExit: (show value: "e onExit")
ep := e spawnWorker
(ep monitor) whenDown: (show value: "worker monitor")
Transcript showCr: "set"
"#,
    );
    let mut bt = env.spawn(COOKIE, &["--name", "bt@127.0.0.1", "--serve", &client]);
    let mut got: Vec<String> = (0..7).map(|_| bt.line()).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "name monitor #bye",
            "name onExit #bye",
            "nobody #noproc",
            "pid monitor #boom",
            "pid onExit #normal",
            "set",
            "true",
        ]
    );
    erl.kill();
    let mut got: Vec<String> = (0..3).map(|_| bt.line()).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "e monitor #noconnection",
            "e onExit #noconnection",
            "worker monitor #noconnection",
        ]
    );
    let (rest, err) = bt.drain();
    assert!(rest.is_empty(), "{rest:?} {err}");
}
