//! The layers point one way (docs/architecture.md, "Layers" and "Crates").
//!
//! Each layer is a crate of the workspace (`crates/*`, and the root package for the command
//! line), so cargo itself refuses an import of a higher layer: a crate can name only the
//! crates it depends on. Two checks keep that so:
//!
//! * **The crate graph** ([`CRATES`]): every `bt`/`bt-*` dependency (normal or dev) in a
//!   `Cargo.toml` is of a lower layer — a new edge upward (or a cycle through dev-dependencies)
//!   fails here before anyone builds on it.
//! * **Files within a crate**: every `.rs` file under a crate's `src/` belongs to one layer (by
//!   its module path, [`MODULES`]), which must be the crate's own layer (a module stays in the
//!   crate of its layer); a file may name (`crate::…`, `super::…`, `use crate::{…}`) only
//!   modules of its own layer or of a layer below. This still matters inside the root crate
//!   (`testrun` below `cli`). The scan is textual: comments (`//`, `///`, `//!`) are skipped,
//!   string literals are not parsed (a path inside a string would count — none does).
//!
//! A known upward import that cannot be removed yet goes in [`KNOWN`] with a comment saying
//! why; the test also fails when a `KNOWN` entry no longer occurs, so the list only shrinks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top. A module path (relative to the crate root) maps to the layer of its longest
/// matching prefix in [`MODULES`].
const LAYERS: &[&str] = &[
    "base", "values", "runtime", "syntax", "check", "interp", "codec", "dist", "observe", "engine",
    "testrun", "cli",
];

/// Crate (package name, directory) → layer. The root package `bt-cli` holds two layers
/// (`testrun` below `cli`).
const CRATES: &[(&str, &str, &str)] = &[
    ("bt-base", "crates/bt-base", "base"),
    ("bt-values", "crates/bt-values", "values"),
    ("bt-runtime", "crates/bt-runtime", "runtime"),
    ("bt-syntax", "crates/bt-syntax", "syntax"),
    ("bt-check", "crates/bt-check", "check"),
    ("bt-interp", "crates/bt-interp", "interp"),
    ("bt-codec", "crates/bt-codec", "codec"),
    ("bt-dist", "crates/bt-dist", "dist"),
    ("bt-observe", "crates/bt-observe", "observe"),
    ("bt", "crates/bt", "engine"),
    ("bt-cli", ".", "cli"),
];

/// Module-path prefix → layer. A crate root (`lib`) is in its crate's layer; `main` (and the
/// binary's `allocator` and `entry`) are the top.
const MODULES: &[(&str, &str)] = &[
    ("base", "base"),
    ("diagnostic", "base"),
    // The counting allocator and per-engine memory accounts: names nothing else in the crate.
    ("memory", "base"),
    ("value", "values"),
    ("runtime", "runtime"),
    ("syntax", "syntax"),
    ("fmt", "syntax"),
    ("check", "check"),
    ("interp", "interp"),
    ("codec", "codec"),
    ("dist", "dist"),
    ("observe", "observe"),
    ("engine", "engine"),
    ("testrun", "testrun"),
    ("cli", "cli"),
    ("lsp", "cli"),
    ("scratch", "base"),
    ("main", "cli"),
    ("allocator", "cli"),
    ("entry", "cli"),
];

/// Upward imports still present: (file, target module path prefix). Remove an entry when its
/// import goes; the test fails on an entry that no longer matches anything.
/// Empty: the values layer names neither the interpreter's class part nor its block code —
/// docs/architecture.md, "Classes and blocks in the values layer".
const KNOWN: &[(&str, &str)] = &[];

fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(&str, &'static str)> = None;
    for &(prefix, layer) in MODULES {
        let hit = module == prefix
            || (module.starts_with(prefix) && module[prefix.len()..].starts_with("::"));
        if hit && best.is_none_or(|(p, _)| prefix.len() > p.len()) {
            best = Some((prefix, layer));
        }
    }
    let (_, layer) = best?;
    LAYERS.iter().position(|l| *l == layer).map(|i| (i, layer))
}

/// `src/interp/eval/code.rs` → `interp::eval::code`; `src/codec/mod.rs` → `codec`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier path starting at `s` (`a::b::C`), stopping at anything else.
fn path_at(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with(is_ident) => rest = r,
            _ => break,
        }
    }
    out
}

/// Every module path a line names through `crate::` or `super::`, resolved against `module`
/// (the module of the file; `super` of a file module is its parent). `use crate::{a, b::c}`
/// yields `a` and `b::c` when the group is on the line.
fn targets(line: &str, module: &str) -> Vec<String> {
    let code = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if i > 0 && code[..i].ends_with(is_ident) {
            continue;
        }
        let after = &code[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let p = path_at(item.trim());
                if !p.is_empty() {
                    out.push(p.join("::"));
                }
            }
        } else {
            let p = path_at(after);
            if !p.is_empty() {
                out.push(p.join("::"));
            }
        }
    }
    for (i, _) in code.match_indices("super::") {
        if i > 0 && code[..i].ends_with(|c: char| is_ident(c) || c == ':') {
            continue;
        }
        let p = path_at(&code[i..]);
        let mut base: Vec<&str> = module.split("::").collect();
        let mut rest = &p[..];
        while let Some(("super", r)) = rest.split_first().map(|(a, r)| (*a, r)) {
            base.pop();
            rest = r;
        }
        base.extend_from_slice(rest);
        out.push(base.join("::"));
    }
    out
}

struct Violation {
    file: String,
    line: usize,
    target: String,
    from: &'static str,
    to: &'static str,
}

/// The upward imports of the files under `src` (a crate's source directory, shown as
/// `shown`). With `home` (the crate's layer), a file whose module is of another layer is
/// reported too (its `to` is the module's layer).
fn violations(src: &Path, shown: &str, home: Option<&'static str>) -> Vec<Violation> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = Vec::new();
    for path in files {
        let rel = path.strip_prefix(src).expect("under src");
        let module = module_of(rel);
        let Some((me, from)) = (match (module.as_str(), home) {
            ("lib", Some(h)) => LAYERS.iter().position(|l| *l == h).map(|i| (i, h)),
            _ => layer_of(&module),
        }) else {
            panic!(
                "{shown}/{}: module `{module}` is in no layer; add it to MODULES",
                rel.display()
            );
        };
        if let Some(h) = home {
            // The root crate holds `testrun` below `cli`; every other crate is one layer.
            if from != h && !(h == "cli" && from == "testrun") {
                out.push(Violation {
                    file: format!("{shown}/{}", rel.display()),
                    line: 0,
                    target: module.clone(),
                    from: h,
                    to: from,
                });
            }
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for target in targets(line, &module) {
                if let Some((them, to)) = layer_of(&target) {
                    if them > me {
                        out.push(Violation {
                            file: format!("{shown}/{}", rel.display()),
                            line: n + 1,
                            target,
                            from,
                            to,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The `bt`/`bt-*` packages a manifest depends on (`[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`), each with the line it is on.
fn bt_dependencies(manifest: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for (n, line) in manifest.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            in_deps = t.ends_with("dependencies]") && !t.starts_with("[workspace");
            continue;
        }
        if !in_deps || t.starts_with('#') {
            continue;
        }
        let name: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        if name == "bt" || name.starts_with("bt-") {
            out.push((name, n + 1));
        }
    }
    out
}

fn crate_layer(package: &str) -> Option<(usize, &'static str)> {
    let (_, _, layer) = CRATES.iter().find(|(p, _, _)| *p == package)?;
    LAYERS.iter().position(|l| l == layer).map(|i| (i, *layer))
}

/// Every edge of the crate graph that does not point to a lower layer.
fn crate_graph_problems(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (package, dir, _) in CRATES {
        let path = root.join(dir).join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let (me, from) = crate_layer(package).expect("a layer");
        for (dep, line) in bt_dependencies(&text) {
            match crate_layer(&dep) {
                None => out.push(format!(
                    "{dir}/Cargo.toml:{line}: `{dep}` is in no layer; add it to CRATES"
                )),
                Some((them, to)) if them >= me => out.push(format!(
                    "{dir}/Cargo.toml:{line}: `{package}` (layer {from}) depends on `{dep}` \
                     (layer {to}), which is not below it"
                )),
                Some(_) => {}
            }
        }
    }
    // Every crate of the workspace is listed.
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    dirs.sort();
    for d in dirs {
        let dir = format!("crates/{d}");
        if !CRATES.iter().any(|(_, c, _)| *c == dir) {
            out.push(format!("{dir}: a crate in no layer; add it to CRATES"));
        }
    }
    out
}

#[test]
fn crates_depend_only_downwards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = crate_graph_problems(root);
    assert!(
        report.is_empty(),
        "crate graph (bottom to top: {}):\n{}",
        LAYERS.join(" → "),
        report.join("\n")
    );
}

/// A manifest with an upward edge is reported (the parser sees names in every dependency
/// table, not in the workspace's shared table).
#[test]
fn the_manifest_scan_finds_bt_dependencies() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nbt-base.workspace = true\n\
                    serde = \"1\"\n# bt-interp in a comment\n[dev-dependencies]\n\
                    bt-codec = { workspace = true }\n[workspace.dependencies]\nbt = { path = \"crates/bt\" }\n";
    let found = bt_dependencies(manifest);
    assert_eq!(
        found,
        vec![("bt-base".to_string(), 4), ("bt-codec".to_string(), 8)]
    );
    assert!(crate_layer("bt-codec").unwrap().0 > crate_layer("bt-interp").unwrap().0);
}

fn known(v: &Violation) -> Option<usize> {
    KNOWN.iter().position(|(file, prefix)| {
        v.file == *file
            && (v.target == *prefix
                || (v.target.starts_with(prefix) && v.target[prefix.len()..].starts_with("::")))
    })
}

#[test]
fn layers_import_only_downwards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for (_, dir, layer) in CRATES {
        let shown = if *dir == "." {
            "src".to_string()
        } else {
            format!("{dir}/src")
        };
        found.extend(violations(&root.join(&shown), &shown, Some(layer)));
    }
    let mut used = BTreeSet::new();
    let mut report = Vec::new();
    for v in &found {
        match known(v) {
            Some(i) => {
                used.insert(i);
            }
            None if v.line == 0 => report.push(format!(
                "{}: module `{}` of layer `{}` is in the crate of layer `{}`; move it",
                v.file, v.target, v.to, v.from
            )),
            None => report.push(format!(
                "{}:{}: layer `{}` imports `crate::{}` from the higher layer `{}`",
                v.file, v.line, v.from, v.target, v.to
            )),
        }
    }
    for (i, (file, prefix)) in KNOWN.iter().enumerate() {
        if !used.contains(&i) {
            report.push(format!(
                "stale KNOWN entry ({file}, {prefix}): that import is gone; delete the entry"
            ));
        }
    }
    assert!(
        report.is_empty(),
        "layering (bottom to top: {}):\n{}",
        LAYERS.join(" → "),
        report.join("\n")
    );
}

/// The scan reports an upward import with its file, line and layers (a tree made on the spot:
/// the old value cycle, `value.rs` naming the interpreter's `Class`).
#[test]
fn an_upward_import_is_reported() {
    let dir = std::env::temp_dir().join(format!("bt-layering-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("value")).expect("temp dir");
    let write = |rel: &str, text: &str| std::fs::write(dir.join(rel), text).expect("write");
    write(
        "value.rs",
        "//! values\nuse crate::base::sym::Sym;\nuse crate::interp::class::Class;\n",
    );
    write(
        "value/order.rs",
        "use super::Value; // crate::interp::eval in a comment\n",
    );
    let found = violations(&dir, "src", None);
    let _ = std::fs::remove_dir_all(&dir);
    let found: Vec<String> = found
        .iter()
        .map(|v| {
            format!(
                "{}:{} {} -> {} ({})",
                v.file, v.line, v.from, v.to, v.target
            )
        })
        .collect();
    assert_eq!(
        found,
        vec!["src/value.rs:3 values -> interp (interp::class::Class)".to_string()]
    );
}

#[test]
fn the_scanner_resolves_paths() {
    assert_eq!(
        module_of(Path::new("interp/eval/code.rs")),
        "interp::eval::code"
    );
    assert_eq!(module_of(Path::new("codec/mod.rs")), "codec");
    assert_eq!(
        targets("use crate::value::{Sym, Value};", "runtime::api"),
        vec!["value"]
    );
    assert_eq!(
        targets("use crate::{check::Checker, syntax};", "cli"),
        vec!["check::Checker", "syntax"]
    );
    assert_eq!(
        targets("use super::super::eval::Ctx;", "interp::prims::x"),
        vec!["interp::eval::Ctx"]
    );
    assert_eq!(
        targets("let x = 1; // crate::cli::run", "interp"),
        Vec::<String>::new()
    );
    assert_eq!(layer_of("interp::eval").map(|l| l.1), Some("interp"));
    assert_eq!(layer_of("value::dict").map(|l| l.1), Some("values"));
    assert_eq!(layer_of("diagnostic").map(|l| l.1), Some("base"));
    assert!(layer_of("cli").unwrap().0 > layer_of("interp").unwrap().0);
}
