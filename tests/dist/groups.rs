//! Process groups (`ProcessGroup`) across bt nodes and with Erlang's `pg` (default scope):
//! membership both ways, leaving on death and on node down, sends to one member and casts to
//! all. Erlang waits on `pg:monitor/1` notifications; bt scripts wait on the condition.

use crate::dist_common;
use dist_common::*;

/// A bt node with two workers in `#workers` and a registered probe that answers what this
/// node sees of the group.
const BT_GROUPS: &str = r#"Actor subclass: Worker
  initialize => ProcessGroup join: #workers
  work: x => ^x * 2
  note: x => nil
  die => self kill
  again => ProcessGroup join: #workers
  drop => ^ProcessGroup leave: #workers

Actor subclass: Probe
  count => ^(ProcessGroup members: #workers) size
  local => ^(ProcessGroup localMembers: #workers) size
  which => ^ProcessGroup which
  castAll => ^ProcessGroup cast: #workers selector: #'note:' withArguments: #("hi")
  askOne => ^((ProcessGroup nextMember: #workers) unwrap work: 4)
  anyErl => ^(((ProcessGroup members: #workers) reject: [:m | (ProcessGroup localMembers: #workers) includes: m]) first work: 1)

Worker spawn
Worker spawn
Probe spawnAs: #probe
Transcript showCr: "ready"
"#;

/// bt and Erlang members of one group: each side lists the other's; deaths, leaves and a
/// node going down end memberships; bt sends to Erlang members and casts to all.
#[test]
fn bt_and_erlang_share_process_groups() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("pgerl", epmd.port);
    let mut bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], BT_GROUPS);
    let code = r#"P = fun(X) -> io:format("~w~n", [X]) end, B = 'bt@127.0.0.1',
{ok, _} = pg:start_link(),
Me = self(),
Loop = fun L() -> receive
    {'$gen_call', From, {Sel, _Args}} -> gen:reply(From, {erl, Sel}), L();
    {'$gen_cast', Msg} -> Me ! {cast, Msg}, L()
  end end,
E1 = spawn(Loop),
ok = pg:join(workers, E1),
{Ref, [E1]} = pg:monitor(workers),
Bt = fun() -> [X || X <- pg:get_members(workers), node(X) =:= B] end,
WaitN = fun W(N) -> case length(Bt()) of N -> ok; _ -> receive {Ref, _, workers, _} -> W(N) end end end,
pong = net_adm:ping(B),
WaitN(2),
P({length(pg:get_members(workers)), length(Bt())}),
P(gen_server:call({probe, B}, {count, []})),
P(gen_server:call({probe, B}, {local, []})),
P(gen_server:call({probe, B}, {which, []})),
P([gen_server:call(W, {'work:', [5]}) || W <- Bt()]),
P(gen_server:call({probe, B}, {anyErl, []})),
P(gen_server:call({probe, B}, {castAll, []})),
receive {cast, C} -> P(C) end,
[W1, W2] = lists:sort(Bt()),
gen_server:cast(W1, {cast, die, []}),
WaitN(1),
P(Bt() =:= [W2]),
P(gen_server:call(W2, {drop, []})),
WaitN(0),
P(gen_server:call(W2, {drop, []})),
gen_server:call(W2, {again, []}),
WaitN(1),
ok = pg:leave(workers, E1),
P(gen_server:call({probe, B}, {count, []})),
io:format("kill~n"),
WaitN(0),
P(pg:get_members(workers)),
halt()."#;
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], code);
    for want in [
        "{3,2}",
        "{ok,3}",
        "{ok,2}",
        "{ok,[workers]}",
        "[{ok,10},{ok,10}]",
        "{ok,{erl,'work:'}}",
        "{ok,3}",
        "{cast,'note:',[<<104,105>>]}",
        "true",
        "{ok,true}",
        "{ok,false}",
        "{ok,1}",
        "kill",
    ] {
        if want == "kill" {
            erl.expect("kill");
            bt.kill();
            continue;
        }
        erl.expect(want);
    }
    erl.expect("[]");
    assert_eq!(erl.finish().0, 0);
}

/// examples/cluster/pool.bt: workers on three nodes (each supervising its own) in one group;
/// the pool keeps serving when a node is killed and uses it again once it is restarted.
#[test]
fn the_pool_example_survives_a_node_and_uses_it_again() {
    let epmd = Epmd::bt();
    let env = Env::new("pool", epmd.port);
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cluster/pool.bt");
    let serve = |name: &str| {
        let mut p = env.spawn(COOKIE, &["--name", name, "--serve", example]);
        p.expect("ready");
        p
    };
    let _p1 = serve("pool1@localhost");
    let mut p2 = serve("pool2@localhost");
    let _p3 = serve("pool3@localhost");
    let mut main = env.spawn(COOKIE, &["--name", "main@localhost", example]);
    main.expect("6 workers on 3 nodes");
    main.expect("12 jobs, sum 650, done on 3 nodes");
    main.expect("kill pool2");
    p2.kill();
    main.expect("pool2 is down: 4 workers");
    main.expect("12 jobs, sum 650, done on 2 nodes");
    main.expect("restart pool2");
    let _p2 = serve("pool2@localhost");
    main.expect("pool2 is back: 6 workers");
    main.expect("12 jobs, sum 650, done on 3 nodes");
    assert_eq!(main.finish().0, 0);
}

/// bt sees an Erlang node's members, and loses them when that node goes down.
#[test]
fn erlang_members_leave_when_their_node_goes_down() {
    if !crate::tools::have_erl() {
        return;
    }
    let erl = r#"{ok, _} = pg:start_link(),
E1 = spawn(fun() -> receive stop -> ok end end),
ok = pg:join(workers, E1),
register(quitter, spawn(fun() -> receive _ -> erlang:halt() end end)),
io:format("ready~n"),
receive after infinity -> ok end."#;
    let client = r#"n := (Node named: #'e@127.0.0.1') unwrap
n connect unwrap
[(ProcessGroup members: #workers) size =:= 1] whileFalse: [Timer sleep: 5]
m := (ProcessGroup members: #workers) first
Transcript showCr: (m node =:= n) printString
Transcript showCr: ProcessGroup which printString
Transcript showCr: (ProcessGroup localMembers: #workers) size printString
[(Actor named: #quitter on: n) unwrap quit] on: Error do: [:e | nil]
[(ProcessGroup members: #workers) isEmpty] whileFalse: [Timer sleep: 5]
Transcript showCr: ProcessGroup which printString
"#;
    let (out, _) = run_bt_against_erl("pgdown", erl, client);
    assert_eq!(lines(&out), ["true", "#(#workers)", "0", "#()"]);
}
