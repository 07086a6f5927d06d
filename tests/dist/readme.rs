//! The README's "Distribution" and "Erlang/Elixir interop" examples, run as written: the
//! blocks after `<!-- readme-test: NAME -->` markers are extracted from README.md, the
//! counter node runs `examples/dist_counter.bt`, the client script and the `erl` session
//! run against it, and their output must be what the README shows. No BT_COOKIE: bt creates
//! `~/.erlang.cookie` (HOME is the test's directory) and `erl` reads the same file.

use crate::dist_common;
use dist_common::*;

use std::process::{Command, Stdio};

/// The fenced block after `<!-- readme-test: name -->`.
fn block(readme: &str, name: &str) -> Vec<String> {
    let marker = format!("<!-- readme-test: {name} -->");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README lacks {marker}"));
    let rest = &readme[at + marker.len()..];
    let open = rest.find("```").unwrap();
    let body = &rest[open..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let close = body.find("```").unwrap();
    body[..close].lines().map(str::to_string).collect()
}

fn counter_node(env: &Env) -> Proc {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/dist_counter.bt");
    let mut p = env.spawn("", &["--name", "counter@127.0.0.1", "--serve", example]);
    p.expect("ready");
    p
}

#[test]
fn readme_two_node_example() {
    if !crate::tools::have_erl() {
        return;
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let epmd = Epmd::erlang();
    let env = Env::new("readme", epmd.port);
    let _counter = counter_node(&env);
    let client = env.script(
        "client.bt",
        &(block(&readme, "client.bt").join("\n") + "\n"),
    );
    let out = block(&readme, "client-output");
    assert_eq!(out[0], "$ bt run --name client@127.0.0.1 client.bt");
    let (code, stdout, err) = env.run("", &["--name", "client@127.0.0.1", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&stdout),
        out[1..].iter().map(String::as_str).collect::<Vec<_>>()
    );
}

#[test]
fn readme_erlang_session() {
    if !crate::tools::have_erl() {
        return;
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let epmd = Epmd::erlang();
    let env = Env::new("readme-erl", epmd.port);
    let _counter = counter_node(&env);
    let session = block(&readme, "erl-session");
    assert_eq!(session[0], "$ erl -name shell@127.0.0.1");
    // `N> expr.` lines, each followed by the shell's answer.
    let mut code = String::new();
    let mut want = Vec::new();
    for l in &session[1..] {
        match l.split_once("> ") {
            Some((n, expr)) if n.chars().all(|c| c.is_ascii_digit()) => {
                let expr = expr.trim_end().trim_end_matches('.');
                code.push_str(&format!("io:format(\"~p~n\", [begin {expr} end]), "));
            }
            _ => want.push(l.clone()),
        }
    }
    code.push_str("halt().");
    let mut c = Command::new("erl");
    c.args(["-noshell", "-name", "shell@127.0.0.1", "-eval", &code]);
    env.env(&mut c, "");
    c.stdin(Stdio::null());
    let out = c.output().unwrap();
    let got = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        lines(&got),
        want.iter().map(String::as_str).collect::<Vec<_>>(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
