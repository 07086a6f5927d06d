//! Deadlock detection through an Erlang process (docs/remote-actors.md
//! "Deadlocks"): a bt actor waits on an Erlang gen_server that calls back a bt process
//! waiting on it — the call back is answered `{error, #{kind => deadlock_detected, …}}` at
//! once instead of both calls timing out. Real `erl` (OTP 25+) and `bt` on 127.0.0.1 with
//! a private `epmd` (tests/dist/dist_common.rs; no sleeps, children killed by guards).

use crate::dist_common;
use dist_common::*;

/// The Erlang side: `e` calls back whatever it is asked to and answers what it got,
/// `{Kind, Class, Message}` for an error.
const ERL: &str = r#"B = 'bt@127.0.0.1',
Show = fun({error, #{kind := K, message := M} = X}) -> {K, maps:get('$beamtalk_class', X, none), M};
          ({'EXIT', {Why, _}}) -> {exit, Why};
          (Other) -> Other end,
Loop = fun L() -> receive
    {'$gen_call', From, {'callBack:', [Name]}} ->
        gen:reply(From, Show(catch gen_server:call({Name, B}, {value, []}))), L();
    {'$gen_call', From, {'callPid:', [Pid]}} ->
        gen:reply(From, Show(catch gen_server:call(Pid, {value, []}))), L();
    {'$gen_call', From, {'callBackTwice:', [Name]}} ->
        R1 = Show(catch gen_server:call({Name, B}, {value, []})),
        gen:reply(From, [R1, Show(catch gen_server:call({Name, B}, {value, []}))]), L();
    {'$gen_call', From, {whoami, []}} -> gen:reply(From, self()), L()
  end end,
register(e, spawn(Loop)),
% Counts the questions bt asks `rex` (who is this caller?), from a trace of what it receives.
Count = fun C(N) -> receive
    {trace, _, 'receive', {'$gen_call', _, {call, erlang, process_info, _, _}}} -> C(N + 1);
    {'$gen_call', From, {count, []}} -> gen:reply(From, N), C(N);
    _ -> C(N)
  end end,
register(cnt, spawn(fun() -> Count(0) end)),
erlang:trace(whereis(rex), true, ['receive', {tracer, whereis(cnt)}]),
io:format("ready~n"),
receive after infinity -> ok end."#;

/// The bt side. Each line is what `e` answered to the call back, or the error the bt call
/// raised; an undetected cycle would print a `timeout` after 5 s.
const BT_CLIENT: &str = r#"Actor subclass: Front
  state: e = nil
  value => 42
  ask: e name: n => e callBack: n
  askTwice: e name: n => e callBackTwice: n
  askSelf: e => e callPid: self
  via: h ask: e => h ask: e name: #front

Actor subclass: Relay
  state: target = nil
  target: t => self.target := t
  value => self.target value
  ask: e name: n => e callBack: n

try := [:blk | blk on: Error do: [:x | "{x kind printString} {x message}"]]
n := (Node named: #'e@127.0.0.1') unwrap
e := (Actor named: #e on: n) unwrap
f := (Front spawnAs: #front) unwrap
(Front spawnAs: #other) unwrap
r := (Relay spawnAs: #relay) unwrap
r target: f
h := Relay spawn
// Through a name proxy: `e` calls #front back, which waits on it.
Transcript showCr: (try value: [f ask: e name: #front]) printString
// Through a pid of `e`, and `e` calls back by pid.
ep := e whoami
Transcript showCr: (try value: [f ask: ep name: #front]) printString
Transcript showCr: (try value: [f askSelf: e]) printString
// Through a local actor first: #front waits on h, which waits on `e`.
Transcript showCr: (try value: [f via: h ask: e]) printString
// `e` calls #relay, which is not waiting, but #relay then calls #front, which is.
Transcript showCr: (try value: [f ask: e name: #relay]) printString
// Twice in one call: the second call back is known to come from `e` (`rex` asked once).
cnt := (Actor named: #cnt on: n) unwrap
c0 := cnt count
Transcript showCr: (try value: [f askTwice: e name: #front]) printString
// No cycle: answered.
Transcript showCr: (try value: [f askTwice: e name: #other]) printString
Transcript showCr: "rex asked {cnt count - c0} times"
Transcript showCr: (try value: [f ask: e name: #other]) printString
Transcript showCr: (try value: [r ask: e name: #other]) printString
"#;

#[test]
fn a_cycle_through_an_erlang_process_fails_at_once() {
    if !crate::tools::have_erl() {
        return;
    }
    let (out, err) = run_bt_against_erl("erldeadlock", ERL, BT_CLIENT);
    let pids = regex::Regex::new(r"\b0\.\d+\.0\b").unwrap();
    let out = pids.replace_all(&out, "0.N.0");
    let dl = |who: &str| {
        format!("{{#deadlock_detected, #RuntimeError, \"{who} is already waiting on this process ('value')\"}}")
    };
    assert_eq!(
        lines(&out),
        [
            dl("deadlock: #front on bt@127.0.0.1").as_str(),
            &dl("deadlock: #front on bt@127.0.0.1"),
            &dl("deadlock: <0.N.0> on bt@127.0.0.1"),
            &dl("deadlock: #front on bt@127.0.0.1"),
            // Detected by #relay's local call: its caller `e` carries the chain.
            &dl("Relay>>value: deadlock: Actor(Front, 0.N.0)"),
            &format!(
                "#({}, {})",
                dl("deadlock: #front on bt@127.0.0.1"),
                dl("deadlock: #front on bt@127.0.0.1")
            ),
            "#({#ok, 42}, {#ok, 42})",
            "rex asked 2 times",
            "{#ok, 42}",
            "{#ok, 42}",
        ],
        "{err}"
    );
}
