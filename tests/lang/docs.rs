//! Every example in the documentation runs: each fenced ```` ```bt ```` block of
//! README.md and docs/**/*.md is written to a file of its own; a block with `// =>` lines or a
//! TestCase suite is run with `bt test` (each expectation and test must pass), any other block
//! with `bt run` (it must exit 0). (docs/reference/ is generated from the library's doc
//! comments, whose examples the golden harness runs.) Blocks that are not meant to run use another info string (`text`, `sh`).
//! Also: nothing in the repository points outside it (to a sibling spec directory).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `(markdown file, first line, code)` of every ```bt block.
fn blocks(root: &Path) -> Vec<(String, usize, String)> {
    let mut mds = vec![root.join("README.md")];
    walk(&root.join("docs"), "md", &mut mds);
    // The class reference's examples are the library's `///` examples, which the golden
    // harness runs with `bt test --doc-examples stdlib/*.bt`.
    mds.retain(|p| !p.starts_with(root.join("docs/reference")));
    let mut out = Vec::new();
    for md in mds {
        let text = std::fs::read_to_string(&md).unwrap();
        let rel = md.strip_prefix(root).unwrap().display().to_string();
        let mut cur: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut cur {
                None if line.trim_end() == "```bt" => cur = Some((i + 2, String::new())),
                None => {}
                Some(_) if line.trim_end() == "```" => {
                    let (l, code) = cur.take().unwrap();
                    out.push((rel.clone(), l, code));
                }
                Some((_, code)) => {
                    code.push_str(line);
                    code.push('\n');
                }
            }
        }
        assert!(cur.is_none(), "{rel}: unterminated ```bt block");
    }
    out
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn every_documentation_example_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = blocks(root);
    let dir = Scratch(std::env::temp_dir().join(format!("bt-docs-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(dir.0.join("tests")).unwrap();
    let mut problems = Vec::new();
    let mut expectation_files = 0;
    for (md, line, code) in &all {
        let name = format!("{}_L{line}.bt", md.replace(['/', '.'], "_"));
        let has_expectations = code.lines().any(|l| l.trim_start().starts_with("// =>"))
            || code.contains("TestCase subclass:");
        if has_expectations {
            std::fs::write(dir.0.join("tests").join(&name), code).unwrap();
            expectation_files += 1;
            continue;
        }
        let path = dir.0.join(&name);
        std::fs::write(&path, code).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_bt"))
            .args(["run", &name])
            .current_dir(&dir.0)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if o.status.code() != Some(0) {
            problems.push(format!(
                "{md}:{line}: bt run exited {:?}\n{}{}",
                o.status.code(),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    let o = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["test", "tests"])
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(0) || stderr.contains("warning") {
        problems.push(format!("bt test over the examples:\n{report}{stderr}"));
    }
    assert_eq!(
        report.matches("PASS ").count(),
        expectation_files,
        "{report}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(all.len() >= 40, "only {} ```bt blocks found", all.len());
}

#[test]
fn nothing_points_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in [
        "src", "tests", "docs", "stdlib", "examples", "bench", "grammar", ".ci",
    ] {
        for ext in [
            "rs", "md", "bt", "btscript", "sh", "toml", "ebnf", "json", "py", "lua", "erl",
        ] {
            walk(&root.join(d), ext, &mut files);
        }
    }
    files.push(root.join("README.md"));
    files.push(root.join("NOTES.md"));
    files.push(root.join("Cargo.toml"));
    walk(&root.join("bench"), "", &mut files);
    let needle_a = ["..", "/shared/"].concat();
    let needle_b = ["/work", "/shared"].concat();
    // The spec files live outside the repository too: citing them sends a reader nowhere.
    let spec_names: Vec<String> = ["LANGUAGE", "DESIGN", "STYLE"]
        .iter()
        .map(|n| [n, ".md"].concat())
        .collect();
    let mut bad = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (i, l) in text.lines().enumerate() {
            if l.contains(&needle_a)
                || l.contains(&needle_b)
                || spec_names.iter().any(|n| l.contains(n.as_str()))
            {
                bad.push(format!("{}:{}: {l}", f.display(), i + 1));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_class_reference_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Scratch(std::env::temp_dir().join(format!("bt-docref-{}", std::process::id())));
    let o = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["doc", "--out"])
        .arg(&dir.0)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut fresh = Vec::new();
    walk(&dir.0, "md", &mut fresh);
    let mut kept = Vec::new();
    walk(&root.join("docs/reference"), "md", &mut kept);
    assert!(fresh.len() > 50, "{} pages", fresh.len());
    let names = |v: &[PathBuf]| -> Vec<String> {
        v.iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        names(&fresh),
        names(&kept),
        "regenerate with `bt doc --out docs/reference`"
    );
    for (f, k) in fresh.iter().zip(&kept) {
        assert_eq!(
            std::fs::read_to_string(f).unwrap(),
            std::fs::read_to_string(k).unwrap(),
            "{} is stale: regenerate with `bt doc --out docs/reference`",
            k.display()
        );
    }
}

/// Every public declaration of the built-in library (`stdlib/*.bt`) has a `///` doc comment:
/// classes, protocols, type aliases, `field:` slots and methods. Not public: `internal`
/// classes and methods, `__`-prefixed selectors, `classState:` and an actor's `state:`.
#[test]
fn every_public_library_declaration_is_documented() {
    use bt::syntax::ast::{Item, Member, MethodDecl};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("stdlib"), "bt", &mut files);
    assert!(files.len() > 30, "{} library files", files.len());
    // A class may be declared in more than one file (Observer.bt adds selectors to classes
    // of ProcessNavigation.bt): its comment is needed on one of the declarations.
    let opts = bt::syntax::Options {
        allow_primitives: true,
    };
    let mut class_docs: std::collections::HashMap<String, bool> = Default::default();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        for item in bt::syntax::parse_with(&src, opts).0.items {
            if let Item::Class(c) = item {
                let e = class_docs.entry(c.name.name.to_string()).or_default();
                *e |= c.doc.is_some_and(|d| !d.text().trim().is_empty());
            }
        }
    }
    let mut missing = Vec::new();
    let mut counted = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(f).unwrap();
        let (module, diags) = bt::syntax::parse_with(&src, opts);
        assert!(diags.is_empty(), "stdlib/{name} does not parse: {diags:?}");
        let line = |at: u32| src[..at as usize].lines().count().max(1);
        let mut check = |doc: &Option<bt::syntax::ast::Doc>, at: u32, what: String| {
            counted += 1;
            if doc.as_ref().is_none_or(|d| d.text().trim().is_empty()) {
                missing.push(format!("stdlib/{name}:{}: {what}", line(at)));
            }
        };
        let public = |m: &MethodDecl| !m.internal && !m.selector.starts_with("__");
        for item in &module.items {
            match item {
                Item::Class(c) if !c.modifiers.internal => {
                    if !class_docs[c.name.name.as_str()] {
                        check(&c.doc, c.span.start, format!("class {}", c.name.name));
                    }
                    for mem in &c.members {
                        match mem {
                            Member::Field(s) => {
                                check(&s.doc, s.span.start, format!("field {}", s.name.name))
                            }
                            Member::Method(m) if public(m) => check(
                                &m.doc,
                                m.span.start,
                                format!("{} >> {}", c.name.name, m.selector),
                            ),
                            _ => {}
                        }
                    }
                }
                Item::Method(sm) if public(&sm.method) => check(
                    &sm.method.doc,
                    sm.method.span.start,
                    format!("{} >> {}", sm.class_name.name, sm.method.selector),
                ),
                Item::Protocol(p) => check(
                    &p.doc,
                    p.name.span.start,
                    format!("protocol {}", p.name.name),
                ),
                Item::TypeAlias(t) if !t.internal => {
                    check(&t.doc, t.name.span.start, format!("type {}", t.name.name))
                }
                _ => {}
            }
        }
    }
    assert!(counted > 500, "only {counted} declarations seen");
    assert!(
        missing.is_empty(),
        "{} of {counted} public library declarations have no `///` doc comment:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// Doc comments are user documentation (`bt doc`, `Integer doc`, `:help`, hover): they do not
/// cite sections of the language specification, which users do not have.
#[test]
fn library_doc_comments_do_not_cite_the_spec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("stdlib"), "bt", &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(f).unwrap();
        for (i, l) in src.lines().enumerate() {
            if l.trim_start().starts_with("///") && l.contains(&["LANGUAGE", ".md"].concat()) {
                bad.push(format!("stdlib/{name}:{}: {}", i + 1, l.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
