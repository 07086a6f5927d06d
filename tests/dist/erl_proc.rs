//! `pid`, `isAlive`, `stop`, `kill` and a Pid's `kill`/`exit:` on processes of a plain
//! Erlang node (docs/remote-actors.md "Erlang processes"): through a name proxy
//! (`erlang:whereis/1` via `rex`) and on pids an Erlang process sent; `stop` is
//! `exit(Pid, shutdown)` then `exit(Pid, kill)` after 5000 ms (`stop` on a `withTimeout:`
//! proxy stops only the proxy: docs/remote-actors.md), `kill` is `exit(Pid, kill)`, both answering
//! once the process has exited. Real `erl` (OTP 25+) and `bt` on 127.0.0.1 with a private
//! `epmd` (tests/dist/dist_common.rs; no sleeps, children killed by guards).

use crate::dist_common;
use dist_common::*;

/// `e` starts idle processes (registered or not, trapping exits or not), monitors each and
/// answers `reasonOf:` with its exit reason once it has exited (a selective receive: no
/// timing involved).
const ERL: &str = r#"Idle = fun I() -> receive {'$gen_call', From, {ping, []}} -> gen:reply(From, pong), I(); _ -> I() end end,
Start = fun(Trap) -> spawn(fun() -> process_flag(trap_exit, Trap), Idle() end) end,
Named = fun(N, Trap) -> P = Start(Trap), register(N, P), monitor(process, P), P end,
Loop = fun L(Ps) -> receive
    {'$gen_call', From, {'spawnAs:', [N]}} -> gen:reply(From, ok), L(Ps#{N => Named(N, false)});
    {'$gen_call', From, {'spawnTrapperAs:', [N]}} -> gen:reply(From, ok), L(Ps#{N => Named(N, true)});
    {'$gen_call', From, {spawnWorker, []}} ->
        W = Start(false), monitor(process, W), gen:reply(From, W), L(Ps#{W => W});
    {'$gen_call', From, {'reasonOf:', [K]}} ->
        Pid = maps:get(K, Ps),
        receive {'DOWN', _, process, Pid, R} -> gen:reply(From, R) end, L(Ps)
  end end,
register(e, spawn(fun() -> Loop(#{}) end)),
io:format("ready~n"),
receive after infinity -> ok end."#;

const BT_CLIENT: &str = r#"n := (Node named: #'e@127.0.0.1') unwrap
e := (Actor named: #e on: n) unwrap
try := [:blk | blk on: Error do: [:x | x kind]]
show := [:x | Transcript showCr: x printString]
// A name proxy: whereis, then a supervisor's shutdown.
e spawnAs: #a
a := (Actor named: #a on: n) unwrap
show value: a isAlive
show value: a pid
show value: a pid isAlive
show value: a pid node
show value: a stop
show value: a isAlive
show value: (e reasonOf: #a)
show value: (try value: [a pid])
show value: (try value: [a stop])
show value: (try value: [a kill])
// A process trapping exits outlives `shutdown`: killed after the timeout (5000 ms).
e spawnTrapperAs: #t2
show value: (Actor named: #t2 on: n) unwrap stop
show value: (e reasonOf: #t2)
// A timeout proxy is an actor of its own: `stop`/`kill` on it stop only the proxy.
e spawnTrapperAs: #t3
t3 := (Actor named: #t3 on: n) unwrap
p := t3 withTimeout: 50
show value: p stop
show value: p kill
show value: p isAlive
show value: p == t3
show value: t3 kill
show value: (e reasonOf: #t3)
e spawnAs: #k
show value: (Actor named: #k on: n) unwrap kill
show value: (e reasonOf: #k)
// Pids an Erlang process sent.
w := e spawnWorker
show value: w isAlive
show value: w pid isAlive
show value: (w pid exit: #boom)
show value: (e reasonOf: w)
show value: w isAlive
show value: w pid kill
show value: (w pid exit: #boom)
w2 := e spawnWorker
show value: w2 pid kill
show value: (e reasonOf: w2)
w3 := e spawnWorker
show value: w3 stop
show value: (e reasonOf: w3)
show value: w3 stop
w4 := e spawnWorker
show value: w4 kill
show value: (e reasonOf: w4)
show value: (w4 pid exit: #normal)
// erlang:registered() there, as name proxies.
all := (Actor allRegisteredOn: n) unwrap
show value: ((all collect: [:x | x registeredName]) includes: #e)
show value: (all detect: [:x | x registeredName =:= #e]) printString
"#;

#[test]
fn handles_of_erlang_processes_answer_pid_is_alive_stop_and_kill() {
    if !crate::tools::have_erl() {
        return;
    }
    let (out, err) = run_bt_against_erl("erlproc", ERL, BT_CLIENT);
    let pids = regex::Regex::new(r"<1\.\d+\.0>").unwrap();
    let out = pids.replace_all(&out, "<1.N.0>");
    assert_eq!(
        lines(&out),
        [
            "true",
            "<1.N.0>",
            "true",
            "Node(e@127.0.0.1)",
            "#ok",
            "false",
            "#shutdown",
            "#no_such_process",
            "#no_such_process",
            "#no_such_process",
            "#ok",
            "#killed",
            "#ok",
            "#ok",
            "true",
            "false",
            "#ok",
            "#killed",
            "#ok",
            "#killed",
            "true",
            "true",
            "true",
            "#boom",
            "false",
            "false",
            "false",
            "true",
            "#killed",
            "#ok",
            "#shutdown",
            "#ok",
            "#ok",
            "#killed",
            "false",
            "true",
            "\"Actor(Actor, registered, e, e@127.0.0.1)\"",
        ],
        "{err}"
    );
}
