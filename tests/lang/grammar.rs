//! Keeps grammar/bt.ebnf in step with the parser: every `(* example: … *)` in the grammar
//! parses without a diagnostic, and every production has at least one golden case in
//! tests/golden/parse/ok that names it in a `// production: NAME` comment.

use std::collections::BTreeSet;
use std::path::Path;

fn grammar() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/bt.ebnf");
    std::fs::read_to_string(p).expect("grammar/bt.ebnf")
}

/// Production names: `name ::=` at the start of a line (lower-case names only; upper-case
/// names are token classes).
fn productions(g: &str) -> Vec<String> {
    g.lines()
        .filter_map(|l| {
            let (name, _) = l.split_once("::=")?;
            let name = name.trim();
            (!name.is_empty()
                && !l.starts_with(' ')
                && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .then(|| name.to_string())
        })
        .collect()
}

/// Examples: `(* example: text *)` on one line, or `(* example:` then lines up to `*)`.
fn examples(g: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = g.lines();
    while let Some(l) = lines.next() {
        let Some(i) = l.find("(* example:") else {
            continue;
        };
        let rest = &l[i + "(* example:".len()..];
        if let Some(j) = rest.find("*)") {
            out.push(rest[..j].trim().to_string());
        } else {
            let mut text = String::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with("*)") {
                    break;
                }
                text.push_str(l);
                text.push('\n');
            }
            out.push(text);
        }
    }
    out
}

#[test]
fn every_grammar_example_parses() {
    let g = grammar();
    let ex = examples(&g);
    assert!(ex.len() >= 25, "only {} examples found", ex.len());
    for e in &ex {
        let (_, diags) = bt::syntax::parse(e);
        assert!(
            diags.is_empty(),
            "grammar example does not parse:\n{e}\n{diags:#?}"
        );
    }
}

#[test]
fn every_production_has_a_golden_case() {
    let g = grammar();
    let names = productions(&g);
    assert!(names.len() >= 60, "only {} productions found", names.len());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/parse/ok");
    let mut covered = BTreeSet::new();
    for e in std::fs::read_dir(dir)
        .expect("tests/golden/parse/ok")
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(n) = l.trim().strip_prefix("// production:") {
                covered.insert(n.trim().to_string());
            }
        }
    }
    let missing: Vec<_> = names.iter().filter(|n| !covered.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "productions without a tests/golden/parse/ok case: {missing:?}"
    );
    let unknown: Vec<_> = covered.iter().filter(|n| !names.contains(n)).collect();
    assert!(
        unknown.is_empty(),
        "golden cases name unknown productions: {unknown:?}"
    );
}

#[test]
fn textmate_grammar_is_well_formed() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/bt.tmLanguage.json");
    let text = std::fs::read_to_string(p).expect("grammar/bt.tmLanguage.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["scopeName"], "source.bt");
    let repo = v["repository"].as_object().expect("repository");
    // Every `include: #name` refers to a repository entry.
    fn walk(v: &serde_json::Value, repo: &serde_json::Map<String, serde_json::Value>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::String(inc)) = m.get("include") {
                    if let Some(name) = inc.strip_prefix('#') {
                        assert!(repo.contains_key(name), "dangling include {inc}");
                    }
                }
                m.values().for_each(|x| walk(x, repo));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, repo)),
            _ => {}
        }
    }
    walk(&v, repo);
}
