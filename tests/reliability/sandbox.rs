//! `bt run --sandbox` and `--allow-read/--allow-write/--allow-env/--allow-sys/--allow-net`:
//! a script confined to a directory cannot read outside it by `..`, an absolute path or a
//! symlink; every denial is `capability_denied` naming the flag that grants it; plain
//! `bt run` grants everything. Runs the `bt` binary as a child.

use std::time::Duration;

use crate::bt_run;
use crate::scoped_tree::Tree;
/// A script printing, per expression, its kind on failure or `ok`.
fn probes(exprs: &[String]) -> String {
    let mut s = String::new();
    for e in exprs {
        s.push_str(&format!(
            "Transcript showCr: ([{e}. #ok] on: Error do: [:x | x kind]) printString\n"
        ));
    }
    s
}

fn run(tag: &str, args: &[&str], src: &str) -> bt_run::Run {
    bt_run::bt_script("sandbox", args, tag, src, Duration::from_secs(60))
}

#[test]
fn allow_read_keeps_reads_inside_the_directory() {
    let t = Tree::new("read");
    let flag = format!("--allow-read={}", t.path("in"));
    let src = probes(&[
        format!("(File readAll: \"{}\") unwrap", t.path("in/ok.txt")),
        format!("File readAll: \"{}\"", t.path("in/../out/secret.txt")),
        format!("File readAll: \"{}\"", t.path("out/secret.txt")),
        format!("File readAll: \"{}\"", t.path("in/link.txt")),
        format!("File readAll: \"{}\"", t.path("in/door/secret.txt")),
        "File readAll: \"/etc/hostname\"".to_string(),
        format!(
            "File writeAll: \"{}\" contents: \"x\"",
            t.path("in/new.txt")
        ),
    ]);
    let r = run("read", &["run", &flag], &src);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "#ok\n#capability_denied\n#capability_denied\n#capability_denied\n\
         #capability_denied\n#capability_denied\n#capability_denied\n"
    );
    // Uncaught, the report names the capability and the flag.
    let src = format!("File readAll: \"{}\"\n", t.path("in/../out/secret.txt"));
    let r = run("read_report", &["run", &flag], &src);
    assert_eq!(r.code(), Some(1));
    assert!(r.stderr.contains("capability_denied"), "{}", r.stderr);
    assert!(r.stderr.contains("file-read"), "{}", r.stderr);
    assert!(r.stderr.contains("--allow-read"), "{}", r.stderr);
    assert!(!r.stdout.contains("secret"), "{}", r.stdout);
}

#[test]
fn the_sandbox_denies_files_environment_and_host_facts_until_allowed() {
    let t = Tree::new("deny");
    let src = probes(&[
        format!("File readAll: \"{}\"", t.path("in/ok.txt")),
        format!(
            "File writeAll: \"{}\" contents: \"x\"",
            t.path("in/new.txt")
        ),
        "System getEnv: \"PATH\"".to_string(),
        "System getEnv: \"HOME\"".to_string(),
        "System hostname".to_string(),
        "System pid".to_string(),
        "(Node named: #'x@localhost') unwrap connect".to_string(),
        "3 + 4".to_string(),
    ]);
    let denied = "#capability_denied\n";
    let r = run("sandbox", &["run", "--sandbox"], &src);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, format!("{}#ok\n", denied.repeat(7)));
    let write = format!("--allow-write={}", t.path("in"));
    let args = [
        "run",
        "--sandbox",
        &write,
        "--allow-env=PATH",
        "--allow-sys",
    ];
    let r = run("granted", &args, &src);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "#capability_denied\n#ok\n#ok\n#capability_denied\n#ok\n#ok\n#capability_denied\n#ok\n"
    );
    // Plain `bt run` grants everything.
    let r = run("plain", &["run"], &src);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(&lines[..6], &["#ok"; 6], "{}", r.stdout);
    // A node needs the network.
    let r = run("node", &["run", "--sandbox", "--sname", "sbx"], "3\n");
    assert_eq!(r.code(), Some(2));
    assert!(r.stderr.contains("--allow-net"), "{}", r.stderr);
}
