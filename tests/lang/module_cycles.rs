//! No large import cycle among the files of a crate (docs/architecture.md, "Module cycles").
//!
//! Within each crate of the workspace, the files form a graph: a file points at every file
//! whose module it names. The module tree comes from the `mod` items (from the crate root
//! down, honouring `#[path]`); a name is a path that starts with `crate::`, `super::` or
//! `self::`, or with a child module of the file's module (`use eval::Ctx` in `interp.rs`),
//! and it points at the file of its longest module prefix (`crate::interp::eval::Ctx` →
//! `interp/eval.rs`). A `mod` item itself is not an edge: a module owning its children is
//! not a dependency on them — naming them is (`pub use child::Item` counts).
//!
//! A strongly connected component of that graph is a group of files that cannot be
//! understood, moved or split one at a time. The goal is none larger than [`GOAL`] files
//! (a parent and a child or two sharing helpers). While larger ones remain, the test holds a
//! ceiling ([`CEILING`]) at the size of today's largest, so it can only go down: lower it
//! when a cycle is broken, and the test fails when it is higher than needed.
//!
//! The scan is textual on comment- and string-free code: `use` groups (nested, over several
//! lines) are expanded, inline `mod name { … }` blocks shift what `super::` means. Test code
//! is left out — `#[cfg(test)]` modules, inline or in their own file — since a unit test
//! may drive a low module through the whole interpreter.
//!
//! On the same graph, bt-interp's files are checked against its layer order
//! ([`INTERP_LAYERS`]): leaves, the evaluator's core types, evaluation, lowering, loading,
//! the actor glue, the primitives, the program API — each names only its own layer and the
//! ones below.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The size no import cycle may exceed once the big ones are broken.
const GOAL: usize = 3;

/// The largest strongly connected component allowed: a ceiling that may only go down, and
/// has reached [`GOAL`] (the largest today is bt-interp's compiled code — `FnCode` holds
/// compiled forms whose inline caches point back at compiled methods — and several
/// parent/children pairs).
const CEILING: usize = 3;

/// Code with comments removed and string/char literals emptied (so braces count right).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident_byte(b[i - 1]))
        {
            // A raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let rest = &text[i + 1..];
            let lit_end = if let Some(escaped) = rest.strip_prefix('\\') {
                escaped.find('\'').map(|e| e + 2)
            } else {
                let mut chars = rest.char_indices();
                match (chars.next(), chars.next()) {
                    (Some(_), Some((e, '\''))) => Some(e),
                    _ => None,
                }
            };
            match lit_end {
                Some(e) => {
                    out.push_str("' '");
                    i += 1 + e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            // Copy one whole UTF-8 character.
            let ch = text[i..].chars().next().expect("a char");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// One path of a use tree and the name it binds (its last segment, the `as` name, or `*`).
type UsePath = (Vec<String>, String);

/// Expands a use tree starting at `s` (`a::b::{c, d::{e, f}}`) into its paths, each
/// prefixed with `prefix`.
fn use_tree(s: &str, prefix: &[String], out: &mut Vec<UsePath>) -> usize {
    let mut path: Vec<String> = prefix.to_vec();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while s[*i..].starts_with(char::is_whitespace) {
            *i += s[*i..].chars().next().map_or(1, char::len_utf8);
        }
    };
    loop {
        skip_ws(&mut i);
        if s[i..].starts_with('{') {
            i += 1;
            loop {
                skip_ws(&mut i);
                if s[i..].starts_with('}') {
                    return i + 1;
                }
                if i >= s.len() {
                    return i;
                }
                i += use_tree(&s[i..], &path, out);
                skip_ws(&mut i);
                if s[i..].starts_with(',') {
                    i += 1;
                }
            }
        }
        let id = ident_at(&s[i..]);
        if id.is_empty() {
            // `*`, or the end of the tree.
            let glob = s[i..].starts_with('*');
            if glob {
                i += 1;
            }
            if path.len() > prefix.len() {
                out.push((path, if glob { "*" } else { "" }.to_string()));
            }
            return i;
        }
        path.push(id.to_string());
        i += id.len();
        skip_ws(&mut i);
        if s[i..].starts_with("::") {
            i += 2;
            continue;
        }
        // `as name` or the end of this branch.
        let mut name = id.to_string();
        if s[i..].starts_with("as ") {
            i += 3;
            skip_ws(&mut i);
            name = ident_at(&s[i..]).to_string();
            i += name.len();
        }
        out.push((path, name));
        return i;
    }
}

/// A named module path and, for a re-export, the name it binds.
type Named = (Vec<String>, Option<String>);

/// The module tree of a crate: module path (`interp::eval`) → file.
fn module_files(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut todo = vec![(String::new(), src.join("lib.rs"))];
    while let Some((module, file)) = todo.pop() {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let dir = file.parent().expect("a directory").to_path_buf();
        let stem = file.file_stem().expect("a stem").to_string_lossy();
        let own_dir = if stem == "lib" || stem == "mod" {
            dir.clone()
        } else {
            dir.join(&*stem)
        };
        let code = code_only(&text);
        // `#[path]` values are emptied by `code_only`; read them from the raw lines.
        let mut path_attr: Option<String> = None;
        let mut depth = 0usize;
        let mut test_only = false;
        for (raw, line) in text.lines().zip(code.lines()) {
            let t = line.trim();
            if let Some(p) = raw.trim().strip_prefix("#[path = \"") {
                path_attr = p.split('"').next().map(str::to_string);
            }
            if t == "#[cfg(test)]" {
                test_only = true;
            }
            let decl = t
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("pub ");
            if depth == 0 {
                if let Some(rest) = decl.strip_prefix("mod ") {
                    let name = ident_at(rest);
                    if rest[name.len()..].trim_start().starts_with(';') {
                        let child = match path_attr.take() {
                            Some(p) => dir.join(p),
                            None => {
                                let a = own_dir.join(format!("{name}.rs"));
                                if a.exists() {
                                    a
                                } else {
                                    own_dir.join(name).join("mod.rs")
                                }
                            }
                        };
                        let m = if module.is_empty() {
                            name.to_string()
                        } else {
                            format!("{module}::{name}")
                        };
                        if !test_only {
                            todo.push((m, child));
                        }
                    }
                }
            }
            if !t.starts_with("#[") {
                path_attr = None;
                test_only = false;
            }
            for ch in line.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        out.insert(module, file);
    }
    out
}

/// The module paths a file names (see the module docs), resolved to absolute module paths.
/// With each, the name it binds when it is a re-export (`pub use a::B` → `B`; `*` for a glob).
fn named_paths(code: &str, module: &str, children: &BTreeSet<String>) -> Vec<Named> {
    let base: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    };
    let mut out = Vec::new();
    // Inline modules: (brace depth they opened at, name).
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == b'}' {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(d, _)| *d == depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        if !is_ident_byte(c) || (i > 0 && (is_ident_byte(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let id = ident_at(&code[i..]);
        let after = &code[i + id.len()..];
        if id == "mod" {
            let rest = after.trim_start();
            let name = ident_at(rest);
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with('{') {
                if code[..i].trim_end().ends_with("#[cfg(test)]") {
                    // Test code: skip to the end of the module.
                    let open = i + id.len() + (after.len() - rest.len()) + name.len();
                    let open = open + code[open..].find('{').unwrap_or(0);
                    let mut d = 0usize;
                    let mut j = open;
                    for (k, ch) in code[open..].char_indices() {
                        match ch {
                            '{' => d += 1,
                            '}' => {
                                d -= 1;
                                if d == 0 {
                                    j = open + k + 1;
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    i = j.max(i + 1);
                    continue;
                }
                inline.push((depth, name.to_string()));
            }
            i += id.len();
            continue;
        }
        let here: Vec<String> = base
            .iter()
            .cloned()
            .chain(inline.iter().map(|(_, n)| n.clone()))
            .collect();
        let is_use = id == "use";
        let (start, tree_at) = if is_use {
            (None, after)
        } else if after.starts_with("::") {
            (Some(id), after)
        } else {
            i += id.len().max(1);
            continue;
        };
        // The path (for `use`, the whole tree) starting here.
        let mut paths = Vec::new();
        let consumed = match start {
            None => use_tree(tree_at, &[], &mut paths),
            Some(_) => use_tree(&code[i..], &[], &mut paths),
        };
        let public = is_use && {
            let before = code[..i].trim_end();
            before.ends_with("pub")
                || before.ends_with("pub(crate)")
                || before.ends_with("pub(super)")
        };
        for (p, name) in paths {
            let Some(first) = p.first() else { continue };
            let resolved: Option<Vec<String>> = match first.as_str() {
                "crate" => Some(p[1..].to_vec()),
                "self" => Some(here.iter().cloned().chain(p[1..].iter().cloned()).collect()),
                "super" => {
                    let mut at = here.clone();
                    let mut rest = &p[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        at.pop();
                        rest = &rest[1..];
                    }
                    at.extend(rest.iter().cloned());
                    Some(at)
                }
                _ if children.contains(first) && inline.is_empty() => {
                    Some(base.iter().cloned().chain(p.iter().cloned()).collect())
                }
                _ => None,
            };
            if let Some(r) = resolved {
                out.push((r, public.then_some(name)));
            }
        }
        i += if is_use {
            id.len() + consumed
        } else {
            consumed
        }
        .max(1);
    }
    out
}

/// The file graph of one crate: file (relative to `src`) → the files it names.
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = module_files(src);
    let rel = |p: &Path| {
        p.strip_prefix(src)
            .expect("under src")
            .display()
            .to_string()
    };
    let mut named = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).expect("read source");
        let code = code_only(&text);
        let prefix = if module.is_empty() {
            String::new()
        } else {
            format!("{module}::")
        };
        let children: BTreeSet<String> = modules
            .keys()
            .filter_map(|m| m.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty() && !rest.contains("::"))
            .map(str::to_string)
            .collect();
        named.insert(module.clone(), named_paths(&code, module, &children));
    }
    // Re-exports: module → bound name → the path it stands for.
    let reexports: BTreeMap<&str, BTreeMap<&str, &[String]>> = named
        .iter()
        .map(|(m, list)| {
            let names = list
                .iter()
                .filter_map(|(p, public)| Some((public.as_deref()?, p.as_slice())))
                .filter(|(n, _)| *n != "*")
                .collect();
            (m.as_str(), names)
        })
        .collect();
    // The module a path lands in: its longest prefix that is a module with a file, followed
    // through re-exports (`crate::interp::Interpreter` → `interp::interpreter`).
    let land = |path: &[String]| -> Option<String> {
        let mut path = path.to_vec();
        for _ in 0..16 {
            let n = (0..=path.len())
                .rev()
                .find(|n| modules.contains_key(&path[..*n].join("::")))?;
            let m = path[..n].join("::");
            let next = path
                .get(n)
                .and_then(|item| reexports.get(m.as_str())?.get(item.as_str()));
            match next {
                Some(target) if !target.is_empty() && *target != &path[..n + 1] => {
                    let mut p = target.to_vec();
                    p.extend(path[n + 1..].iter().cloned());
                    path = p;
                }
                _ => return Some(m),
            }
        }
        None
    };
    let mut graph = BTreeMap::new();
    for (module, list) in &named {
        let me = rel(&modules[module]);
        let mut edges = BTreeSet::new();
        for (path, public) in list {
            // A file's own re-export is an edge only when it is a glob (a name it re-exports
            // is followed by the files that use it).
            if public.as_deref().is_some_and(|n| n != "*") {
                continue;
            }
            if let Some(m) = land(path) {
                let t = rel(&modules[&m]);
                if t != me {
                    edges.insert(t);
                }
            }
        }
        graph.insert(me, edges);
    }
    graph
}

/// Strongly connected components (Tarjan), each sorted, largest first.
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.retain(|c| c.len() > 1);
    s.out.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    s.out
}

fn crate_dirs(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![("bt-cli".to_string(), root.join("src"))];
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("dir entry").path())
        .collect();
    dirs.sort();
    for d in dirs {
        if d.join("src/lib.rs").exists() {
            let name = d
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            out.push((name, d.join("src")));
        }
    }
    out
}

#[test]
fn no_large_import_cycle_within_a_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut largest = 0;
    let mut report = Vec::new();
    for (name, src) in crate_dirs(root) {
        let graph = file_graph(&src);
        for comp in components(&graph) {
            largest = largest.max(comp.len());
            report.push(format!("{name}: {} files: {}", comp.len(), comp.join(" ")));
        }
    }
    // `cargo test --profile ci --test lang module_cycles -- --nocapture` shows them.
    println!(
        "import cycles (largest first per crate):\n{}",
        report.join("\n")
    );
    let ceiling = CEILING.max(GOAL);
    assert!(
        largest <= ceiling,
        "an import cycle of {largest} files (ceiling {ceiling}):\n{}",
        report.join("\n")
    );
    assert!(
        largest == ceiling || ceiling == GOAL,
        "the largest import cycle is {largest} files now: lower CEILING to {}",
        largest.max(GOAL)
    );
}

#[test]
fn the_scan_expands_use_trees_and_finds_components() {
    let mut out = Vec::new();
    use_tree("a::{b, c::{d, e as f}, g::*};", &[], &mut out);
    let joined: Vec<String> = out
        .iter()
        .map(|(p, n)| format!("{} {n}", p.join("::")))
        .collect();
    assert_eq!(joined, ["a::b b", "a::c::d d", "a::c::e f", "a::g *"]);
    let code = code_only("let s = \"crate::x::{\"; // super::y\nuse super::z::W; let c = '{';");
    let children = BTreeSet::new();
    let found: Vec<String> = named_paths(&code, "m::n", &children)
        .iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(found, ["m::z::W"]);
    let code = code_only(
        "mod tests {\n use super::Thing;\n}\n use crate::a::B;\n#[cfg(test)]\nmod t { use crate::c::D; }",
    );
    let found: Vec<String> = named_paths(&code, "m", &children)
        .iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(found, ["m::Thing", "a::B"]);
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
    .collect();
    assert_eq!(components(&g), vec![vec!["a", "b", "c"]]);
}

/// The layers of bt-interp, lowest first (docs/internals/interpreter.md, "Layers"): a file
/// may name files of its own layer and of the layers below, never above. A file belongs to
/// the entry with the longest matching path (relative to `crates/bt-interp/src/interp/`; a
/// path ending in `/` is a directory).
const INTERP_LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "eval/units.rs",
            "eval/context.rs",
            "print/text.rs",
            "capability/grants.rs",
            "error/kind.rs",
            "actor/groups.rs",
            "registry/big_units.rs",
            "registry/input_units.rs",
        ],
    ),
    (
        "core types",
        &[
            "eval.rs",
            "eval/code.rs",
            "eval/compile.rs",
            "eval/compile/",
            "eval/hit.rs",
            "eval/field.rs",
            "eval/journal.rs",
            "program.rs",
            "registry.rs",
            "method_table.rs",
            "lazy_method.rs",
            "class.rs",
            "block_code.rs",
            "host_cache.rs",
            "source_gc.rs",
            "process.rs",
            "process/slot.rs",
            "distribution.rs",
            "actor/target.rs",
        ],
    ),
    (
        "evaluation",
        &[
            "eval/",
            "error/",
            "print.rs",
            "capability.rs",
            "program/",
            "mailbox_limit.rs",
        ],
    ),
    ("lowering", &["lower.rs", "lower/"]),
    ("loading", &["loader.rs", "loader/"]),
    ("actor glue", &["actor.rs", "actor/", "main_job.rs"]),
    ("primitives", &["prims/", "actor/prims.rs", "actor/prims/"]),
    (
        "program API",
        &[
            "interpreter.rs",
            "library_image.rs",
            "checker.rs",
            "stdlib.rs",
        ],
    ),
];

/// The layer of a file of bt-interp (`interp/…`), if it has one.
fn interp_layer(file: &str) -> Option<usize> {
    let rel = file.strip_prefix("interp/")?;
    let mut best: Option<(usize, usize)> = None;
    for (i, (_, paths)) in INTERP_LAYERS.iter().enumerate() {
        for p in *paths {
            let hit = if p.ends_with('/') {
                rel.starts_with(p)
            } else {
                rel == *p
            };
            if hit && best.is_none_or(|(len, _)| p.len() > len) {
                best = Some((p.len(), i));
            }
        }
    }
    best.map(|(_, i)| i)
}

#[test]
fn the_interpreter_layers_point_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = file_graph(&root.join("crates/bt-interp/src"));
    let mut wrong = Vec::new();
    for (file, names) in &graph {
        if !file.starts_with("interp/") {
            continue;
        }
        let Some(mine) = interp_layer(file) else {
            wrong.push(format!(
                "{file}: in no layer (add it to INTERP_LAYERS and docs/internals/interpreter.md)"
            ));
            continue;
        };
        for t in names {
            match interp_layer(t) {
                Some(theirs) if theirs > mine => wrong.push(format!(
                    "{file} ({}) names {t} ({}), a higher layer",
                    INTERP_LAYERS[mine].0, INTERP_LAYERS[theirs].0
                )),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The parameters of `code` typed `&Ctx` or `&mut Ctx` (the context alias) in functions with
/// a body, each with that body: `(name, body)`.
fn ctx_params_with_bodies(code: &str) -> Vec<(String, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for pat in [": &mut Ctx", ": &Ctx"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(pat) {
            let at = from + k;
            from = at + pat.len();
            if b.get(from).copied().is_some_and(is_ident_byte) {
                continue; // `&CtxHook…`, another type
            }
            let mut s = at;
            while s > 0 && is_ident_byte(b[s - 1]) {
                s -= 1;
            }
            let name = &code[s..at];
            if name.is_empty() || name.starts_with('_') {
                continue;
            }
            // Out of the parameter list, then the body (or `;`: a declaration).
            let mut i = from;
            let mut depth = 1;
            while i < b.len() && depth > 0 {
                match b[i] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            while i < b.len() && b[i] != b'{' && b[i] != b';' {
                i += 1;
            }
            if i >= b.len() || b[i] == b';' {
                continue;
            }
            let start = i;
            let mut depth = 0;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            out.push((name.to_string(), code[start..i.min(b.len())].to_string()));
        }
    }
    out
}

/// Whether `body` reads a member of `name` (`name.field`, `name.method(…)`).
fn reads_member(body: &str, name: &str) -> bool {
    let b = body.as_bytes();
    let mut from = 0;
    while let Some(k) = body[from..].find(name) {
        let at = from + k;
        from = at + name.len();
        let before_ok = at == 0 || !is_ident_byte(b[at - 1]) && b[at - 1] != b'.';
        let dot = b.get(from) == Some(&b'.') && b.get(from + 1).copied().is_some_and(is_ident_byte);
        if before_ok && dot {
            return true;
        }
    }
    false
}

/// The core's data modules name the evaluation context through the `eval::context::Ctx`
/// alias, which rustc resolves to the real context: the import graph cannot see a field read
/// or method call through it. They hold and pass on functions of the context and never read
/// one (what reads a context names `eval::Ctx` and sits above them).
#[test]
fn the_core_data_modules_pass_the_context_on_and_never_read_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("crates/bt-interp/src");
    let graph = file_graph(&src);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (file, names) in &graph {
        if file == "interp/eval.rs"
            || !names.contains("interp/eval/context.rs")
            || names.contains("interp/eval.rs")
        {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(src.join(file)).unwrap());
        for (name, body) in ctx_params_with_bodies(&code) {
            checked += 1;
            if reads_member(&body, &name) {
                wrong.push(format!(
                    "{file}: reads `{name}`, a context named through the alias: name \
                     `eval::Ctx` and move the function above the core's data modules"
                ));
            }
        }
    }
    assert!(
        checked > 0,
        "no context parameter found: the scan is broken"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_context_read_scan_sees_member_reads_only() {
    let code = "fn a(c: &mut Ctx, f: &Frame) -> Flow { (self.f)(c, f) }\n\
                fn b(ctx: &Ctx) { ctx.depth }\n\
                fn d(cx: &mut Ctx);";
    let found = ctx_params_with_bodies(code);
    assert_eq!(found.len(), 2);
    assert!(!reads_member(&found[0].1, &found[0].0));
    assert!(reads_member(&found[1].1, &found[1].0));
}
