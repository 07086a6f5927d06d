//! TLS distribution (`--dist-tls`): certificates generated per test
//! (rcgen: a CA, node certificates for localhost/127.0.0.1, and a rogue certificate from
//! another CA); bt↔bt and bt↔`erl -proto_dist inet_tls` (erlang-ssl, installed by `.ci/run`).

use crate::dist_common;
use dist_common::*;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

struct Pki {
    /// `--dist-tls` config of a good node.
    good: String,
    /// `--dist-tls` config of a node whose certificate another CA signed.
    rogue: String,
    /// `-ssl_dist_optfile` for erl.
    erl_opts: String,
}

fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    (p.self_signed(&key).unwrap(), key)
}

fn leaf(env: &Env, tag: &str, ca: &(rcgen::Certificate, KeyPair)) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut p =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, tag);
    let cert = p.signed_by(&key, &ca.0, &ca.1).unwrap();
    let c = env.dir.join(format!("{tag}.pem"));
    let k = env.dir.join(format!("{tag}.key"));
    std::fs::write(&c, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    (c.display().to_string(), k.display().to_string())
}

fn pki(env: &Env) -> Pki {
    let good_ca = ca("bt test CA");
    let rogue_ca = ca("rogue CA");
    let ca_file = env.dir.join("ca.pem");
    std::fs::write(&ca_file, good_ca.0.pem()).unwrap();
    let ca_file = ca_file.display().to_string();
    let (gc, gk) = leaf(env, "node", &good_ca);
    let (rc, rk) = leaf(env, "rogue", &rogue_ca);
    let conf = |c: &str, k: &str, name: &str| {
        env.script(
            name,
            &format!("certfile = {c}\nkeyfile = {k}\ncacertfile = {ca_file}\n"),
        )
    };
    let good = conf(&gc, &gk, "good.conf");
    // The rogue node trusts the good CA too: only its own certificate is wrong.
    let rogue = conf(&rc, &rk, "rogue.conf");
    let opts = format!(
        "[{{server, [{{certfile, \"{gc}\"}}, {{keyfile, \"{gk}\"}}, {{cacertfile, \"{ca_file}\"}}, {{verify, verify_peer}}, {{fail_if_no_peer_cert, true}}]}},\n {{client, [{{certfile, \"{gc}\"}}, {{keyfile, \"{gk}\"}}, {{cacertfile, \"{ca_file}\"}}, {{verify, verify_peer}}]}}].\n"
    );
    let erl_opts = env.script("erl-ssl.conf", &opts);
    Pki {
        good,
        rogue,
        erl_opts,
    }
}

#[test]
fn tls_between_bt_nodes_and_a_rogue_certificate_refused() {
    let epmd = Epmd::bt();
    let env = Env::new("tls", epmd.port);
    let p = pki(&env);
    let _srv = env.serve("secure@localhost", COOKIE, &["--dist-tls", &p.good]);
    let ping = env.script(
        "p.bt",
        "Transcript showCr: (Node named: #'secure@localhost') value ping printString\n",
    );
    let (code, out, err) = env.run(
        COOKIE,
        &["--name", "friend@localhost", "--dist-tls", &p.good, &ping],
    );
    assert_eq!((code, out.as_str()), (0, "true\n"), "{err}");
    let (code, out, err) = env.run(
        COOKIE,
        &["--name", "rogue@localhost", "--dist-tls", &p.rogue, &ping],
    );
    assert_eq!((code, out.as_str()), (0, "false\n"), "{err}");
    // A plain-TCP node cannot talk to a TLS node.
    let (code, out, err) = env.run(COOKIE, &["--name", "plain@localhost", &ping]);
    assert_eq!((code, out.as_str()), (0, "false\n"), "{err}");
    // A bad configuration is a startup error.
    let bad = env.script(
        "bad.conf",
        "certfile = /nonexistent.pem\ncacertfile = /nonexistent.pem\n",
    );
    let (code, _, err) = env.run(
        COOKIE,
        &["--name", "broken@localhost", "--dist-tls", &bad, &ping],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--dist-tls: cannot read /nonexistent.pem"),
        "{err}"
    );
}

#[test]
fn tls_with_erlang_inet_tls_dist() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("tlserl", epmd.port);
    let p = pki(&env);
    let mut bt = env.serve_src(
        "bt@localhost",
        COOKIE,
        &["--dist-tls", &p.good],
        "Actor subclass: Greeter\n  hi: n => ^\"hello \" ++ n\n\nGreeter spawnAs: #greeter\nTranscript showCr: \"ready\"\n",
    );
    let code = "B = 'bt@localhost', io:format(\"~w~n\", [net_adm:ping(B)]), io:format(\"~w~n\", [gen_server:call({greeter, B}, {'hi:', [<<\"erl\">>]})]), io:format(\"ready~n\"), receive after infinity -> ok end.";
    let mut erl = env.erl(
        "e@localhost",
        COOKIE,
        &["-proto_dist", "inet_tls", "-ssl_dist_optfile", &p.erl_opts],
        code,
    );
    let first = erl.line();
    if first != "pong" {
        let log = bt.kill();
        let elog = erl.drain();
        panic!("erl said {first}; bt stderr:\n{log}\nerl:\n{elog:?}");
    }
    erl.expect("{ok,<<104,101,108,108,111,32,101,114,108>>}");
    erl.expect("ready");
    let ping = env.script(
        "p.bt",
        "Transcript showCr: (Node named: #'e@localhost') value ping printString\n",
    );
    let (code, out, err) = env.run(
        COOKIE,
        &["--name", "probe@localhost", "--dist-tls", &p.good, &ping],
    );
    assert_eq!((code, out.as_str()), (0, "true\n"), "{err}");
    let (code, out, err) = env.run(
        COOKIE,
        &["--name", "rogue@localhost", "--dist-tls", &p.rogue, &ping],
    );
    assert_eq!((code, out.as_str()), (0, "false\n"), "{err}");
    erl.kill();
}

/// A node without TLS distribution dialing one with it (Erlang or bt), and a TLS node
/// dialing one without, are told that one side runs TLS distribution and the other does not
/// — not that the cookies differ; the accepting bt node logs the same.
#[test]
fn tls_mismatch_is_named() {
    if !crate::tools::have_erl() {
        return;
    }
    let epmd = Epmd::erlang();
    let env = Env::new("tlsmix", epmd.port);
    let p = pki(&env);
    let mut tls_erl = env.erl(
        "tlserl@localhost",
        COOKIE,
        &["-proto_dist", "inet_tls", "-ssl_dist_optfile", &p.erl_opts],
        "io:format(\"ready~n\"), receive after infinity -> ok end.",
    );
    tls_erl.expect("ready");
    let mut tls_bt = env.serve("tlsbt@localhost", COOKIE, &["--dist-tls", &p.good]);
    let mut plain_bt = env.serve("plainbt@localhost", COOKIE, &[]);
    let probe = |target: &str| {
        env.script(
            &format!("probe-{target}.bt"),
            &format!(
                "e := (Node named: #'{target}@localhost') unwrap connect error\n\
                 Transcript showCr: e kind printString\n\
                 Transcript showCr: e message\n\
                 Transcript showCr: e hint\n"
            ),
        )
    };
    let hint = "both nodes need TLS distribution (--dist-tls CONFIG, erl -proto_dist inet_tls), or neither";
    for target in ["tlserl", "tlsbt"] {
        let (code, out, err) = env.run(COOKIE, &["--name", "plain@localhost", &probe(target)]);
        assert_eq!(code, 0, "{err}");
        let want = format!(
            "cannot connect to {target}@localhost: it runs TLS distribution and this node does not"
        );
        assert_eq!(lines(&out), ["#node_down", want.as_str(), hint], "{err}");
    }
    let (code, out, err) = env.run(
        COOKIE,
        &[
            "--name",
            "secure@localhost",
            "--dist-tls",
            &p.good,
            &probe("plainbt"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "#node_down",
            "cannot connect to plainbt@localhost: it closed the connection during the TLS handshake (this node runs TLS distribution; does it?)",
            hint,
        ],
        "{err}"
    );
    let log = tls_bt.kill();
    assert!(
        log.contains("the peer does not run TLS distribution and this node does"),
        "{log}"
    );
    let log = plain_bt.kill();
    assert!(
        log.contains("the peer runs TLS distribution and this node does not"),
        "{log}"
    );
    tls_erl.kill();
}
