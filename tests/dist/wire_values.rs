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
/// elements come back as sent.
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
"#,
    );
    let (status, out, err) = env.run(COOKIE, &["--name", "client@localhost", &client]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines(&out),
        ["-7", "#(1, -1)", "#(#(-128, 0), -2147483648)", "{1, -1}"]
    );
}
