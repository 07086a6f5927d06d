//! Values on the distribution wire, exactly: negative integers in lists (Erlang's byte-string
//! encoding holds 0..255 only), between bt nodes and with a real `erl`.

use crate::dist_common;
use dist_common::*;

const ECHO: &str = r#"Actor subclass: Echo
  echo: x => x

Echo spawnAs: #echo
Transcript showCr: "ready"
"#;

/// An Erlang caller sends lists of small integers with negative ones; the bt actor's reply
/// is the same term.
#[test]
fn erlang_caller_gets_negative_integers_back() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("wireneg", epmd.port);
    let _bt = env.serve_src("bt@127.0.0.1", COOKIE, &[], ECHO);
    let code = r#"B = 'bt@127.0.0.1',
E = fun(X) -> {ok, Y} = gen_server:call({echo, B}, {'echo:', [X]}), io:format("~w ~w~n", [Y, Y =:= X]) end,
E([1, -1]),
E([-7]),
E({[0, 255, -128], #{k => [-2, 3]}}),
E([[-1], [1, 2]]),
halt()."#;
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], code);
    for want in [
        "[1,-1] true",
        "[-7] true",
        "{[0,255,-128],#{k => [-2,3]}} true",
        "[[-1],[1,2]] true",
    ] {
        erl.expect(want);
    }
    assert_eq!(erl.finish().0, 0);
}

/// Between bt nodes: a negative argument (the argument list is `[-7]`) and negative list
/// elements come back as sent; so does a value as deep as the codec takes (1,001 levels),
/// one level more is `not_serialisable` at the sender.
#[test]
fn bt_nodes_echo_negative_integers() {
    let epmd = Epmd::bt();
    let env = Env::new("wirenegbt", epmd.port);
    let _b = env.serve_src("bee@localhost", COOKIE, &[], ECHO);
    let client = env.script(
        "client.bt",
        r#"e := (Actor named: #echo on: (Node named: #'bee@localhost') unwrap) unwrap
Transcript showCr: (e echo: -7) printString
Transcript showCr: (e echo: #(1, -1)) printString
Transcript showCr: (e echo: #(#(-128, 0), -2147483648)) printString
Transcript showCr: (e echo: (Tuple withAll: #(1, -1))) printString
deep := #()
1000 timesRepeat: [deep := #(deep)]
Transcript showCr: ((e echo: deep) =:= deep) printString
Transcript showCr: ([e echo: #(deep)] on: Error do: [:x | x kind]) printString
"#,
    );
    let (status, out, err) = env.run(COOKIE, &["--name", "client@localhost", &client]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "-7",
            "#(1, -1)",
            "#(#(-128, 0), -2147483648)",
            "{1, -1}",
            "true",
            "#not_serialisable",
        ]
    );
}

/// Nesting: a value as deep as a bt node can send (1,000 levels below the argument) crosses
/// both ways; a deeper term from a peer is refused alone — a call gets an error reply, a
/// cast is dropped, a deep reply fails the bt call it answers — the log says why, and the
/// link stays up (no `nodedown`, later calls answered).
#[test]
fn deep_terms_are_refused_one_message_at_a_time() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("wiredeep", epmd.port);
    let mut bt = env.serve_src(
        "bt@127.0.0.1",
        COOKIE,
        &[],
        r#"Actor subclass: Echo
  echo: x => x
  depth: x => x isEmpty ifTrue: [0] ifFalse: [1 + (self depth: x first)]

Echo spawnAs: #echo
Transcript showCr: "ready"
"#,
    );
    let code = r#"B = 'bt@127.0.0.1',
Nest = fun(N) -> lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, N)) end,
C = fun(R) -> gen_server:call({echo, B}, R, 30000) end,
true = net_kernel:connect_node(B),
monitor_node(B, true),
Ok = Nest(1000),
io:format("~w~n", [C({'echo:', [Ok]}) =:= {ok, Ok}]),
io:format("~w~n", [C({'depth:', [Ok]})]),
{error, #{kind := K1}} = C({'echo:', [Nest(1001)]}),
io:format("~w~n", [K1]),
{error, #{kind := K2, message := M2}} = C({'echo:', [Nest(100000)]}),
io:format("~w ~s~n", [K2, M2]),
gen_server:cast({echo, B}, {cast, 'echo:', [Nest(100000)]}),
io:format("~w~n", [C({'echo:', [[1, -1]]})]),
Loop = fun L() -> receive {'$gen_call', From, _} -> gen:reply(From, Nest(5000)), L() end end,
register(deep, spawn(Loop)),
receive {nodedown, _} = D -> io:format("~w~n", [D]) after 0 -> io:format("no nodedown~n") end,
io:format("ready~n"),
receive after infinity -> ok end."#;
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], code);
    for want in [
        "true",
        "{ok,1000}",
        "not_serialisable",
        "not_serialisable the message is nested deeper than 1016 levels (more than a bt node accepts)",
        "{ok,[1,-1]}",
        "no nodedown",
        "ready",
    ] {
        erl.expect(want);
    }
    // bt calls Erlang's `deep`, which answers a 5,000-level term: that call fails; the
    // next one (to a bt actor over the same link) works.
    let client = env.script(
        "client.bt",
        r#"n := (Node named: #'e@127.0.0.1') unwrap
d := (Actor named: #deep on: n) unwrap
Transcript showCr: ([d anything] on: Error do: [:e | e kind]) printString
Transcript showCr: n isConnected printString
"#,
    );
    let (status, out, err) = env.run(COOKIE, &["--name", "client@127.0.0.1", &client]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(lines(&out), ["#not_serialisable", "true"], "{err}");
    assert!(err.contains("refused a reply"), "{err}");
    erl.kill();
    let log = bt.kill();
    for what in ["refused a call", "refused a message"] {
        assert!(log.contains(what), "{log}");
    }
    assert!(log.contains("nested deeper than 1016 levels"), "{log}");
}
