//! `rpc` and `erpc` from real Erlang and Elixir nodes into bt classes: module = class name,
//! function = class-side selector; exceptions as Erlang reports a remote function's, unknown
//! classes and selectors as `undef`.

use crate::dist_common;
use dist_common::*;

const BT_SERVER: &str = r#"Object subclass: Calc
  class add: a to: b => ^a + b
  class neg: a => ^0 - a
  class echo: x => ^x
  class fail => ^self error: "boom"
  class remember: x => (Actor named: #store) unwrap put: x
  class recalled => ^(Actor named: #store) unwrap get

Actor subclass: Store
  state: v = nil
  put: x => self.v := x
  get => ^self.v

Actor subclass: Counter
  state: n = 0
  increment => self.n := self.n + 1. ^self.n

Store spawnAs: #store
Transcript showCr: "ready"
"#;

/// The Erlang side of the test: prints each answer with `~w` (one line each).
const ERL_CLIENT: &str = r#"P = fun(X) -> io:format("~w~n", [X]) end, B = 'bt@127.0.0.1',
E = fun(F) -> try F() catch C:R -> {C, R} end end,
P(rpc:call(B, 'Calc', 'add:to:', [2, 3])),
P(erpc:call(B, 'Calc', 'add:to:', [2, 3])),
P(erpc:call(B, 'Calc', 'neg:', [7])),
P(erpc:call(B, 'Calc', 'echo:', [[1, -1, <<"s">>]])),
Pid = rpc:call(B, 'Counter', spawn, []),
P(node(Pid) =:= B),
P(gen_server:call(Pid, {increment, []})),
P(rpc:call(B, 'Nope', foo, [])),
P(rpc:call(B, 'Calc', nosuch, [1])),
P(E(fun() -> erpc:call(B, 'Calc', 'add:to:', [2]) end)),
P(E(fun() -> erpc:call(B, erlang, node, []) end)),
{badrpc, {'EXIT', {#{kind := K1, message := M1}, [{'Calc', fail, [], []}]}}} = rpc:call(B, 'Calc', fail, []),
P({K1, M1}),
P(try erpc:call(B, 'Calc', fail, []) catch error:{exception, #{kind := K2}, [{'Calc', fail, [], []}]} -> {raised, K2} end),
P(try erpc:call(B, 'Calc', 'neg:', [abc]) catch error:{exception, #{kind := K3}, _} -> {raised, K3} end),
P(rpc:call(B, 'Calc', 'add:to:', [1, 2], 5000)),
ok = erpc:cast(B, 'Calc', 'remember:', [42]),
W1 = fun W() -> case erpc:call(B, 'Calc', recalled, []) of 42 -> ok; _ -> W() end end,
P(W1()),
true = rpc:cast(B, 'Calc', 'remember:', [43]),
W2 = fun W() -> case erpc:call(B, 'Calc', recalled, []) of 43 -> ok; _ -> W() end end,
P(W2()),
{S1, Ref1} = spawn_monitor(B, 'Calc', 'remember:', [44]),
receive {'DOWN', Ref1, process, S1, R1} -> P(R1) end,
P(erpc:call(B, 'Calc', recalled, [])),
{S2, Ref2} = spawn_monitor(B, 'Calc', fail, []),
receive {'DOWN', Ref2, process, S2, {#{kind := K4}, _}} -> P(K4) end,
P(erpc:multicall([B, node()], 'Calc', 'add:to:', [1, 1])),
P(lists:member(B, nodes(hidden))),
halt()."#;

/// What [`ERL_CLIENT`] prints.
const ERL_WANT: &[&str] = &[
    "5",
    "5",
    "-7",
    "[1,-1,<<115>>]",
    "true",
    "{ok,1}",
    "{badrpc,{'EXIT',{undef,[{'Nope',foo,[],[]}]}}}",
    "{badrpc,{'EXIT',{undef,[{'Calc',nosuch,[1],[]}]}}}",
    "{error,{exception,undef,[{'Calc','add:to:',[2],[]}]}}",
    "{error,{exception,undef,[{erlang,node,[],[]}]}}",
    "{user_error,<<98,111,111,109>>}",
    "{raised,user_error}",
    "{raised,type_error}",
    "3",
    "ok",
    "ok",
    "normal",
    "44",
    "user_error",
    "[{ok,2},{error,{exception,undef,[{'Calc','add:to:',[1,1],[]}]}}]",
    "true",
];

#[test]
fn erlang_rpc_and_erpc_call_bt_classes() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("rpc", epmd.port);
    let _bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], BT_SERVER);
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], ERL_CLIENT);
    for want in ERL_WANT {
        erl.expect(want);
    }
    assert_eq!(erl.finish().0, 0);
}

/// Elixir's `:erpc.call/4` and `:rpc.call/4` (skipped without `elixir` unless
/// `BT_TEST_ALL_TOOLS` is set).
#[test]
fn elixir_erpc_calls_bt_classes() {
    if !crate::tools::have("Elixir (elixir)", &["elixir"], "apt-get install elixir") {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("rpcex", epmd.port);
    let _bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], BT_SERVER);
    let code = r#"b = :"bt@127.0.0.1"
IO.inspect(:erpc.call(b, :Calc, :"add:to:", [2, 3]))
IO.inspect(:rpc.call(b, :Calc, :"neg:", [5]))
IO.inspect(:rpc.call(b, :Nope, :foo, []))
try do
  :erpc.call(b, :Calc, :fail, [])
rescue
  e in ErlangError -> IO.inspect(elem(e.original, 0) == :exception and elem(e.original, 1).kind)
end
"#;
    let mut c = std::process::Command::new("elixir");
    c.args(["--name", "ex@127.0.0.1", "--cookie", COOKIE, "-e", code]);
    env.env(&mut c, "");
    let mut ex = Proc::start(c);
    for want in [
        "5",
        "-5",
        "{:badrpc, {:EXIT, {:undef, [{:Nope, :foo, [], []}]}}}",
        ":user_error",
    ] {
        ex.expect(want);
    }
    assert_eq!(ex.finish().0, 0);
}
