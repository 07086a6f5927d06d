//! The repository describes bt as it is, not how it was built: no file of the source, the
//! tests, the documentation or the examples tells the history of its making (numbered work
//! sessions, issue numbers, who merged what). Git keeps the history.
//!
//! Walks the directory tree from the package root (no git needed), skipping build output
//! (`target/`), `.git` and vendored or generated trees, and reads every text file.

use regex::Regex;
use std::path::Path;

/// Directory names never walked: build output, version control, vendored code.
const SKIP_DIRS: &[&str] = &["target", ".git", "vendor", "node_modules", "cargo-timings"];

/// The patterns, each built from pieces so this file does not match itself. Tight enough that
/// ordinary words pass: a REPL "session", "issue" as a verb, "helper" functions.
fn patterns() -> Vec<Regex> {
    [
        [r"(?i)\bsessions?", r"[ -][0-9]+"].concat(),
        ["(?i)coordi", "nator"].concat(),
        ["(?i)work", "tree"].concat(),
        [r"(?i)\bissues?", r" #?[0-9]+"].concat(),
        [r"(?i)\bhelpers? ", "(agent|engineer)"].concat(),
    ]
    .iter()
    .map(|p| Regex::new(p).expect("pattern"))
    .collect()
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else {
            continue;
        };
        let name = e.file_name();
        // `.git` is a directory in a clone and a file in a linked checkout: skip both.
        if name == ".git" {
            continue;
        }
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.to_string_lossy().as_ref()) {
                walk(&path, out);
            }
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

#[test]
fn no_file_tells_how_bt_was_built() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(root, &mut files);
    files.sort();
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("tests/lang/provenance.rs")),
        "the walk must reach this file"
    );
    let pats = patterns();
    let mut bad = Vec::new();
    for f in &files {
        // Binary files (images, compiled artefacts) are not read as text.
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if pats.iter().any(|p| p.is_match(line)) {
                let rel = f.strip_prefix(root).unwrap_or(f);
                bad.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} line(s) tell how bt was built; say what the code is instead:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_patterns_catch_history_and_pass_ordinary_words() {
    let pats = patterns();
    let hit = |s: &str| pats.iter().any(|p| p.is_match(s));
    for s in [
        ["measured in sess", "ion 12"].concat(),
        ["Sess", "ions 7 and 8"].concat(),
        ["the sess", "ion-13 code"].concat(),
        ["see iss", "ue 16 row 4"].concat(),
        ["(iss", "ue #3)"].concat(),
        ["merged by the coord", "inator"].concat(),
        ["in my work", "tree"].concat(),
        ["a help", "er engineer wrote"].concat(),
    ] {
        assert!(hit(&s), "should match: {s}");
    }
    for s in [
        "the REPL session keeps its bindings",
        "a session of 3 inputs",
        "issue a warning for 2 cases",
        "helper functions for 2 tests",
        "the sessions map",
    ] {
        assert!(!hit(s), "should pass: {s}");
    }
}

/// Prose of comments and Markdown (outside code spans and fences) on one line of `file`.
fn prose_parts(file: &Path, line: &str, in_fence: &mut bool) -> Option<String> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let prose = match ext {
        "md" => {
            if line.trim_start().starts_with("```") {
                *in_fence = !*in_fence;
                return None;
            }
            if *in_fence {
                return None;
            }
            line
        }
        "rs" | "bt" => {
            let i = line.find("//")?;
            if line[..i].matches('"').count() % 2 == 1 {
                return None;
            }
            &line[i..]
        }
        _ => return None,
    };
    // Code spans hold values (`#(1.5, nil)`), not citations.
    Some(prose.split('`').step_by(2).collect::<Vec<_>>().join(" "))
}

/// The language reference lives outside the repository, so no comment or document cites its
/// section numbers (`(8.12)`, `spec 5.10`): a reader here cannot follow them. Say what the
/// rule is instead.
#[test]
fn no_comment_or_document_cites_section_numbers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(root, &mut files);
    files.sort();
    let sec = r"[1-9][0-9]?\.[0-9]{1,2}";
    let cite = Regex::new(&format!(
        r"\((?:see )?(?:spec |section |part |LANGUAGE(?:\.md)? )?{sec}(?:[,;/] ?{sec})*(?:\)|[,;:] )|(?:\bspec|LANGUAGE(?:\.md)?|\bsection) {sec}\b|, {sec}\)"
    ))
    .expect("pattern");
    let mut bad = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut in_fence = false;
        for (i, line) in text.lines().enumerate() {
            let Some(prose) = prose_parts(f, line, &mut in_fence) else {
                continue;
            };
            if cite.is_match(&prose) {
                let rel = f.strip_prefix(root).unwrap_or(f);
                bad.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "section numbers of a document outside the repository:\n{}",
        bad.join("\n")
    );
}
