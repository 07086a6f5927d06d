//! Finding test files and deciding what each one is: directories are
//! searched recursively (skipping `fixtures` and hidden directories), `.btscript` files are
//! expression files, and a `.bt` file is a suite when one of its classes descends from
//! TestCase, an expression file when a line outside `///` comments is a `// =>` expectation,
//! and ignored otherwise.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::split::has_expectations;
use crate::syntax::ast::Item;

/// How a file is run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum FileKind {
    /// Expressions with `// =>` expectations.
    Expressions,
    /// A TestCase suite; `class` is its test class, `ignored` further TestCase classes.
    Suite { class: String, ignored: Vec<String> },
    /// The `// =>` examples inside the `///` comments of a library file.
    DocExamples,
}

/// Recursively lists `*.bt` / `*.btscript` files under `dir`, sorted, skipping `fixtures`
/// and hidden directories.
pub(crate) fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            if name == "fixtures" || name.starts_with('.') {
                continue;
            }
            walk(&p, exts, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
    Ok(())
}

/// The test files named by `paths` (files as given, directories searched), without
/// duplicates, in the order found.
pub(crate) fn test_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &["bt", "btscript"], &mut out).map_err(|e| format!("{}: {e}", p.display()))?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

/// `*.bt` files of the `fixtures` directory beside `file`, in file-name order.
pub(crate) fn fixtures_for(file: &Path) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new(".")).join("fixtures");
    let mut out: Vec<PathBuf> = match fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "bt"))
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

/// Expands `--load` arguments: a file as given, a directory searched recursively for `*.bt`.
pub(crate) fn expand_loads(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk_all(p, &mut found).map_err(|e| format!("{}: {e}", p.display()))?;
            out.extend(found);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("--load {}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// Like [`walk`] for `*.bt`, but `--load` directories include their `fixtures` too.
fn walk_all(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if p.is_dir() && !hidden {
            walk_all(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "bt") {
            out.push(p);
        }
    }
    Ok(())
}

/// Resolves a `// @load PATH`: against the working directory first, then the test file's
/// directory.
pub(crate) fn resolve_at_load(path: &str, test_file: &Path) -> Option<PathBuf> {
    let p = PathBuf::from(path);
    if p.is_file() {
        return Some(p);
    }
    let beside = test_file.parent().unwrap_or(Path::new(".")).join(path);
    beside.is_file().then_some(beside)
}

/// The `// @load` paths written in a file (outside `///` comments).
pub(crate) fn at_loads(src: &str) -> Vec<(usize, String)> {
    src.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let rest = l
                .trim()
                .strip_prefix("//")?
                .trim_start()
                .strip_prefix("@load")?;
            rest.starts_with(char::is_whitespace)
                .then(|| (i + 1, rest.trim().to_string()))
        })
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// A file's pinned schedules: `// @seed N` and `// @explore K` lines (outside `///`
/// comments; the last of each counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SchedulePins {
    pub(crate) seed: Option<u64>,
    pub(crate) explore: Option<u32>,
}

pub(crate) fn schedule_pins(src: &str) -> SchedulePins {
    let mut pins = SchedulePins::default();
    for l in src.lines() {
        let Some(rest) = l.trim().strip_prefix("//") else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(n) = rest.strip_prefix("@seed") {
            pins.seed = n.trim().parse().ok().or(pins.seed);
        } else if let Some(n) = rest.strip_prefix("@explore") {
            pins.explore = n.trim().parse().ok().or(pins.explore);
        }
    }
    pins
}

/// Class definitions `(superclass, name)` of a source, in order (from the parser, which
/// recovers from errors elsewhere in the file).
pub(crate) fn class_headers(src: &str) -> Vec<(String, String)> {
    let (module, _) = crate::syntax::parse(src);
    module
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Class(c) => Some((c.superclass.name.to_string(), c.name.name.to_string())),
            _ => None,
        })
        .collect()
}

/// Decides what `file` is. `context` holds the sources that are loaded with it (fixtures,
/// `--load` files, `@load` files), whose classes count when following superclass chains.
pub(crate) fn classify(file: &Path, src: &str, context: &[String]) -> Option<FileKind> {
    if file.extension().is_some_and(|e| e == "btscript") {
        return Some(FileKind::Expressions);
    }
    let own = class_headers(src);
    let mut supers: HashMap<String, String> = HashMap::new();
    for ctx in context {
        for (sup, name) in class_headers(ctx) {
            supers.entry(name).or_insert(sup);
        }
    }
    for (sup, name) in &own {
        supers.insert(name.clone(), sup.clone());
    }
    let descends = |name: &str| {
        let mut cur = name.to_string();
        for _ in 0..64 {
            match supers.get(&cur) {
                Some(s) if s == "TestCase" => return true,
                Some(s) => cur = s.clone(),
                None => return false,
            }
        }
        false
    };
    let tests: Vec<String> = own
        .iter()
        .filter(|(_, n)| descends(n))
        .map(|(_, n)| n.clone())
        .collect();
    if let Some((first, rest)) = tests.split_first() {
        return Some(FileKind::Suite {
            class: first.clone(),
            ignored: rest.to_vec(),
        });
    }
    if has_expectations(src) {
        return Some(FileKind::Expressions);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_pins_are_read_from_comment_lines() {
        let src = "// @seed 41\n/// @explore 9\nx := 1\n  // @explore 200\n// @seed nope\n";
        assert_eq!(
            schedule_pins(src),
            SchedulePins {
                seed: Some(41),
                explore: Some(200)
            }
        );
        assert_eq!(schedule_pins("1 + 1\n"), SchedulePins::default());
    }

    #[test]
    fn classification() {
        let p = Path::new("t.bt");
        let suite = "TestCase subclass: ATest\n  testOne => self assert: true\n";
        assert_eq!(
            classify(p, suite, &[]),
            Some(FileKind::Suite {
                class: "ATest".into(),
                ignored: vec![]
            })
        );
        let chain =
            "TestCase subclass: Base\nBase subclass: Mid\nMid subclass: Leaf\nObject subclass: X\n";
        assert_eq!(
            classify(p, chain, &[]),
            Some(FileKind::Suite {
                class: "Base".into(),
                ignored: vec!["Mid".into(), "Leaf".into()]
            })
        );
        // The chain may pass through a fixture class.
        let via_fixture = "BaseTest subclass: MyTest\n";
        assert_eq!(classify(p, via_fixture, &[]), None);
        assert_eq!(
            classify(p, via_fixture, &["TestCase subclass: BaseTest\n".into()]),
            Some(FileKind::Suite {
                class: "MyTest".into(),
                ignored: vec![]
            })
        );
        assert_eq!(
            classify(p, "3 + 4\n// => 7\n", &[]),
            Some(FileKind::Expressions)
        );
        assert_eq!(
            classify(p, "/// 3\n/// // => 3\nObject subclass: A\n", &[]),
            None
        );
        assert_eq!(
            classify(Path::new("t.btscript"), "", &[]),
            Some(FileKind::Expressions)
        );
        // A cycle never loops forever.
        assert_eq!(classify(p, "A subclass: B\nB subclass: A\n", &[]), None);
    }

    #[test]
    fn at_load_lines() {
        assert_eq!(
            at_loads(
                "// @load fixtures/a.bt\n  //   @load  b.bt  \n// @loader x\n/// // @load no\n"
            ),
            vec![(1, "fixtures/a.bt".into()), (2, "b.bt".into())]
        );
    }

    #[test]
    fn walking_skips_fixtures_and_sorts() {
        let dir = crate::scratch::dir("walk");
        fs::create_dir_all(dir.join("sub/fixtures")).unwrap();
        fs::create_dir_all(dir.join(".hidden")).unwrap();
        for f in [
            "b.bt",
            "a.btscript",
            "sub/c.bt",
            "sub/fixtures/f.bt",
            ".hidden/h.bt",
            "x.txt",
        ] {
            fs::write(dir.join(f), "").unwrap();
        }
        let files = test_files(std::slice::from_ref(&dir)).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.btscript", "b.bt", "sub/c.bt"]);
        assert_eq!(
            fixtures_for(&dir.join("sub/c.bt")),
            vec![dir.join("sub/fixtures/f.bt")]
        );
        assert!(test_files(&[dir.join("missing")]).is_err());
        let loads = expand_loads(&[dir.join("sub")]).unwrap();
        assert_eq!(
            loads,
            vec![dir.join("sub/c.bt"), dir.join("sub/fixtures/f.bt")]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
