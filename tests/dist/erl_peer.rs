//! `bt run --erlang-peer NODE` (docs/erlang-interop.md "Calling Erlang"): an `Erlang` call
//! bt has no native implementation of runs on the Erlang peer by rpc (`rpc:call/4` through
//! its `rex` server), its result mapped back as in 8.12 and its errors raised with the kinds
//! native calls use; native functions stay local. Without a peer such a call is `undef`
//! with a hint naming `--erlang-peer`. Real `erl` on 127.0.0.1 with a private `epmd`
//! (tests/dist/dist_common.rs; no sleeps, children killed by guards).

use crate::dist_common;
use dist_common::*;

const ERL: &str = r#"io:format("ready~n"), receive after infinity -> ok end."#;

const BT_CLIENT: &str = r#"try := [:blk | blk on: Error do: [:x | x kind]]
show := [:x | Transcript showCr: x printString]
// Forwarded: ordsets is not native.
show value: (Erlang ordsets from_list: #(3, 1, 3))
show value: (Erlang ordsets is_element: 3 with: (Erlang ordsets from_list: #(3)))
show value: (Erlang erlang list_to_integer: Erlang os getpid) > 0
show value: (Erlang lists seq: 1 with: 3)
show value: (Erlang erlang binary_part: "hello" with: 1 with: 3)
show value: (Erlang erlang list_to_tuple: #(#a, 1))
// Native calls stay on this node.
show value: Erlang erlang node =:= Node current name
// Errors come back as the kinds native calls raise (`exit/1`'s kind is its reason, as
// the peer reports it).
show value: (try value: [Erlang erlang binary_part: "abc" with: 5 with: 1])
show value: (try value: [Erlang crypto no_such_function])
show value: (try value: [Erlang no_such_module foo: 1])
show value: (try value: [Erlang erlang exit: #boom])
[Erlang crypto no_such_function] on: Error do: [:x | Transcript showCr: x messageText. Transcript showCr: x hint]
"#;

#[test]
fn calls_without_a_native_implementation_run_on_the_erlang_peer() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("erlpeer", epmd.port);
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], ERL);
    erl.expect("ready");
    let client = env.script("client.bt", BT_CLIENT);
    // No --name: the process becomes a hidden node on the peer's host by itself.
    let (status, out, err) = env.run(COOKIE, &["--erlang-peer", "e@127.0.0.1", &client]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "#(1, 3)",
            "true",
            "true",
            "#(1, 2, 3)",
            "\"ell\"",
            "{#a, 1}",
            "true",
            "#badarg",
            "#undef",
            "#undef",
            "#boom",
            "crypto:no_such_function/0: undef",
            "the Erlang peer e@127.0.0.1 has no function crypto:no_such_function/0; check spelling, arity and that the module is loaded there",
        ],
        "{err}"
    );
    // The peer named by BT_ERLANG_PEER, beside --name.
    let mut c = env.command(
        COOKIE,
        &[
            "--name",
            "bt2@127.0.0.1",
            "-e",
            "Transcript showCr: (Erlang os getenv: (Erlang unicode characters_to_list: \"HOME\")) size printString",
        ],
    );
    c.env("BT_ERLANG_PEER", "e@127.0.0.1");
    let o = c.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        env.dir.display().to_string().len().to_string(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    erl.kill();
}

#[test]
fn without_a_peer_a_call_bt_does_not_implement_is_undef_with_a_hint() {
    let env = Env::new("nopeer", free_port());
    let (status, _, err) = env.run("", &["-e", "Erlang ordsets from_list: #(1)"]);
    assert_eq!(status, 1, "{err}");
    assert!(
        err.contains("RuntimeError (undef): ordsets:from_list/1: undef"),
        "{err}"
    );
    assert!(err.contains("--erlang-peer NODE"), "{err}");
    let (status, _, err) = env.run("", &["-e", "Erlang lists no_such_function: 1"]);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("lists:no_such_function/1: undef"), "{err}");
    assert!(err.contains("--erlang-peer NODE"), "{err}");
}
