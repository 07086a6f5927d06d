//! Slim builds (issue 16): an embedder depending on bt with `default-features = false` gets
//! the engine without the REPL line editor, the distribution stack or the C allocator.
//! Checked on the dependency graph cargo itself reports (offline: the lock file and the
//! registry cache are enough).

use std::process::Command;

fn tree(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn crates(t: &str) -> Vec<String> {
    let mut v: Vec<String> = t
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn no_default_features_leaves_out_the_repl_the_network_and_the_c_allocator() {
    let slim = crates(&tree(&["--no-default-features"]));
    for banned in [
        "tokio",
        "rustyline",
        "mimalloc",
        "libmimalloc-sys",
        "hmac",
        "sha2",
    ] {
        assert!(
            !slim.iter().any(|c| c == banned),
            "{banned} is in the slim build: {slim:?}"
        );
    }
    // The full build (what the `bt` binary uses) has them.
    let full = crates(&tree(&[]));
    for wanted in ["tokio", "rustyline", "mimalloc"] {
        assert!(
            full.iter().any(|c| c == wanted),
            "{wanted} missing: {full:?}"
        );
    }
    assert!(
        slim.len() < full.len(),
        "slim {} vs full {}",
        slim.len(),
        full.len()
    );
    println!("crates: slim {} full {}", slim.len(), full.len());
}
