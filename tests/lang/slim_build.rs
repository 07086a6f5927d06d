//! Slim builds: an embedder depending on the `bt` crate with `default-features = false` gets
//! the engine without the distribution stack and the observer, and never the command line's
//! dependencies (argument parsing, the REPL line editor, the language server, the C
//! allocator), which belong to the root package `bt-cli`. Checked on the dependency graph
//! cargo itself reports (offline: the lock file and the registry cache are enough).

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
fn no_default_features_leaves_out_the_network_and_the_command_line() {
    let slim = crates(&tree(&["-p", "bt", "--no-default-features"]));
    for banned in [
        "tokio",
        "hyper",
        "rustls",
        "erl_dist",
        "rustyline",
        "ctrlc",
        "mimalloc",
        "libmimalloc-sys",
        "clap",
        "clap_complete",
        "strsim",
        "lsp-server",
        "logos",
        "bt-dist",
        "bt-observe",
        "bt-cli",
    ] {
        assert!(
            !slim.iter().any(|c| c == banned),
            "{banned} is in the slim build: {slim:?}"
        );
    }
    // The embedding crate with its default features has the network but still no command line.
    let embed = crates(&tree(&["-p", "bt"]));
    for wanted in ["tokio", "hyper", "bt-dist", "bt-observe"] {
        assert!(
            embed.iter().any(|c| c == wanted),
            "{wanted} missing: {embed:?}"
        );
    }
    for banned in ["clap", "rustyline", "mimalloc", "lsp-server"] {
        assert!(
            !embed.iter().any(|c| c == banned),
            "{banned} is in the embedding crate: {embed:?}"
        );
    }
    // The `bt` binary's package has everything.
    let full = crates(&tree(&["-p", "bt-cli"]));
    for wanted in ["tokio", "rustyline", "mimalloc", "clap", "lsp-server"] {
        assert!(
            full.iter().any(|c| c == wanted),
            "{wanted} missing: {full:?}"
        );
    }
    assert!(
        slim.len() < embed.len() && embed.len() < full.len(),
        "slim {} embed {} full {}",
        slim.len(),
        embed.len(),
        full.len()
    );
    println!(
        "crates: slim {} embed {} full {}",
        slim.len(),
        embed.len(),
        full.len()
    );
}
