//! Seed nodes, the node name and the cookie file from the `[cluster]` table of `bt.toml`
//! (`bt run` with no flags), and their precedence: flag > environment > bt.toml.

use crate::dist_common;
use dist_common::*;

const MAIN: &str = r#"Transcript showCr: Node current printString
Transcript showCr: Node connected printString
"#;

/// A project directory with `bt.toml` (the given `[cluster]` lines) and `main.bt`.
fn project(env: &Env, name: &str, cluster: &str) -> String {
    let dir = env.dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bt.toml"),
        format!("[package]\nname = \"app #1\" # a '#' in a string is text\n\n[cluster]\n{cluster}"),
    )
    .unwrap();
    let main = dir.join("main.bt");
    std::fs::write(&main, MAIN).unwrap();
    main.display().to_string()
}

#[test]
fn bt_run_takes_name_cookie_and_seeds_from_bt_toml() {
    let epmd = Epmd::bt();
    let env = Env::new("manifest", epmd.port);
    let _bee = env.serve("bee@localhost", COOKIE, &[]);
    let main = project(
        &env,
        "app",
        "name = \"ant@localhost\"\ncookie_file = \"cookie\"\nconnect = [\"bee@localhost\"]\n",
    );
    // The cookie file next to bt.toml (BT_COOKIE unset, so the file decides).
    let cookie = env.dir.join("app/cookie");
    std::fs::write(&cookie, COOKIE).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cookie, std::fs::Permissions::from_mode(0o400)).unwrap();
    let (code, out, err) = env.run("", &[&main]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        ["Node(ant@localhost)", "#(Node(bee@localhost))"],
        "{err}"
    );

    // A flag wins over the file (the name), the environment too (the seeds), and a flag
    // over the environment.
    let _cow = env.serve("cow@localhost", COOKIE, &[]);
    let run = |args: &[&str]| {
        let mut c = env.command(COOKIE, args);
        c.env("BT_CONNECT", "cow@localhost");
        let out = c.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["--name", "cat@localhost", &main]);
    assert_eq!(
        lines(&out),
        ["Node(cat@localhost)", "#(Node(cow@localhost))"]
    );
    let out = run(&["--connect", "bee@localhost", &main]);
    assert_eq!(
        lines(&out),
        ["Node(ant@localhost)", "#(Node(bee@localhost))"]
    );
}

#[test]
fn bad_cluster_values_name_their_position() {
    let epmd = Epmd::bt();
    let env = Env::new("manifestbad", epmd.port);
    let main = project(&env, "a", "connect = \"bee@localhost\"\n");
    let (code, out, err) = env.run(COOKIE, &[&main]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("a/bt.toml:5:11: invalid type: string"),
        "{err}"
    );
    let main = project(&env, "b", "connect = [\"bee@localhost\", \"not a node\"]\n");
    let (code, _, err) = env.run(COOKIE, &[&main]);
    assert_eq!(code, 2);
    assert!(
        err.contains("b/bt.toml:5:29: invalid node name 'not a node'"),
        "{err}"
    );
}
