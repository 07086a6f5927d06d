//! The unsafe-code inventory in docs/architecture.md matches the tree: every Rust file that
//! allows `unsafe_code` is listed there with a reason, every listed file still does, and every
//! `unsafe` block or `unsafe impl` in those files has a `SAFETY:` comment just above it (or on
//! its line).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Rust files under the project's source directories (never `target/` or hidden directories).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// The files the tree allows `unsafe_code` in, with their text.
fn files_allowing_unsafe() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for d in ["crates", "src", "tests", "bench", "examples"] {
        rust_files(&root().join(d), &mut files);
    }
    let mut out: Vec<(String, String)> = files
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            text.lines()
                .any(|l| {
                    let t = l.trim_start();
                    t.starts_with('#') && t.contains("allow(unsafe_code)")
                })
                .then(|| (relative(&p), text))
        })
        .collect();
    out.sort();
    out
}

/// The first column of the table under "### Unsafe code inventory", with each row's reason.
fn inventory() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = doc
        .find("### Unsafe code inventory")
        .expect("docs/architecture.md has a section \"### Unsafe code inventory\"");
    doc[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((file.to_string(), cells.get(2).unwrap_or(&"").to_string()))
        })
        .collect()
}

#[test]
fn the_inventory_lists_exactly_the_files_that_allow_unsafe() {
    let tree: BTreeSet<String> = files_allowing_unsafe().into_iter().map(|f| f.0).collect();
    let listed = inventory();
    for (file, why) in &listed {
        assert!(!why.is_empty(), "{file}: the inventory gives no reason");
    }
    let listed: BTreeSet<String> = listed.into_iter().map(|f| f.0).collect();
    let missing: Vec<_> = tree.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&tree).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/architecture.md \"Unsafe code inventory\" is out of date\n  \
         allow unsafe_code but are not listed: {missing:?}\n  \
         listed but no longer allow it: {stale:?}"
    );
    assert!(
        tree.len() >= 10,
        "found only {} files: {tree:?}",
        tree.len()
    );
}

/// Is this line the start of an `unsafe` block or impl (not an `unsafe fn` declaration, whose
/// contract is its doc comment, and not a mention in a comment or string)?
fn opens_unsafe(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    if code.trim_start().starts_with('*') || code.contains('"') {
        return false;
    }
    code.contains("unsafe {") || code.contains("unsafe impl")
}

#[test]
fn every_unsafe_block_says_why_it_is_sound() {
    let mut bare = Vec::new();
    for (file, text) in files_allowing_unsafe() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !opens_unsafe(line) {
                continue;
            }
            // The comment sits on the line itself or in the comment/attribute lines just
            // above (a statement may span a few lines before its `unsafe {`).
            let says = |l: &&str| l.contains("SAFETY") || l.contains("# Safety");
            let comment_above = lines[..i]
                .iter()
                .rev()
                .take_while(|l| {
                    let t = l.trim_start();
                    t.starts_with("//") || t.starts_with("#[")
                })
                .any(says);
            let explained = line.contains("SAFETY")
                || comment_above
                || lines[i.saturating_sub(8)..i].iter().any(says);
            if !explained {
                bare.push(format!("{file}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        bare.is_empty(),
        "unsafe without a SAFETY comment:\n{}",
        bare.join("\n")
    );
}
