//! Interpreter self-check without the test-runner process machinery: runs the `// =>` files
//! of `tests/golden/eval/core` through [`Interpreter::eval`] in this process (a small reader of
//! the golden-file format). It lives in the test runner's layer because it reuses the
//! runner's expectation rules. `CORE_FILTER=name cargo test --lib golden_eval_core`.

use crate::interp::{BtError, Interpreter, InterpreterOptions};

use crate::testrun::expect::{matches as wildcard_match, unescape};

fn error_matches(e: &BtError, want: &str) -> bool {
    e.kind() == want
        || (e.is_badarith() && (want == "badarith" || want == "type_error"))
        || e.class_name() == want
        || e.message().contains(want)
}

/// Runs one expression file; answers (passed, failures).
fn run_script(path: &std::path::Path) -> (usize, Vec<String>) {
    let src = std::fs::read_to_string(path).unwrap_or_default();
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.set_output(Box::new(|_| {}));
    let mut fails = Vec::new();
    let name = path.display().to_string();
    let mut load = Vec::new();
    if let Some(dir) = path.parent().map(|d| d.join("fixtures")) {
        let mut fx: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        fx.retain(|p| p.extension().is_some_and(|e| e == "bt"));
        fx.sort();
        for f in fx {
            load.push((
                f.display().to_string(),
                std::fs::read_to_string(&f).unwrap_or_default(),
            ));
        }
    }
    for l in src.lines() {
        if let Some(p) = l.trim().strip_prefix("// @load ") {
            let p = path.parent().map(|d| d.join(p.trim())).unwrap_or_default();
            load.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap_or_default(),
            ));
        }
    }
    if !load.is_empty() {
        let rep = vm.load_unit(&load);
        for (f, w) in rep.warnings {
            fails.push(format!("{name}: loading {f}: {w}"));
        }
    }
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    let mut passed = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.is_empty()
            || t.starts_with("@expect")
            || (t.starts_with("//") && !t.starts_with("// =>"))
        {
            i += 1;
            continue;
        }
        if t.starts_with("// =>") {
            fails.push(format!("{name}:{}: expectation without expression", i + 1));
            i += 1;
            continue;
        }
        let start = i;
        let mut expr = lines[i].to_string();
        i += 1;
        while i < lines.len() {
            let n = lines[i].trim();
            if n.starts_with("// =>") {
                break;
            }
            if crate::syntax::needs_more(&expr)
                || (!n.is_empty()
                    && !n.starts_with("//")
                    && crate::syntax::line_continues(lines[i]))
            {
                expr.push('\n');
                expr.push_str(lines[i]);
                i += 1;
            } else {
                break;
            }
        }
        while i < lines.len() && lines[i].trim().is_empty() {
            i += 1;
        }
        let Some(exp_line) = lines
            .get(i)
            .map(|l| l.trim())
            .filter(|l| l.starts_with("// =>"))
        else {
            fails.push(format!(
                "{name}:{}: expression has no expectation",
                start + 1
            ));
            continue;
        };
        i += 1;
        let raw = exp_line["// =>".len()..].trim();
        let want = unescape(raw);
        let got = vm.eval(&name, &expr);
        let ok = match (&got, want.strip_prefix("ERROR:")) {
            (Err(e), Some(k)) => error_matches(e, k.trim()),
            (Ok(_), Some(_)) => false,
            (Ok(v), None) => wildcard_match(raw, vm.display(v).trim()),
            (Err(_), None) => false,
        };
        if ok {
            passed += 1;
        } else {
            let shown = match &got {
                Ok(v) => vm.display(v),
                Err(e) => format!("ERROR {} ({}): {}", e.class_name(), e.kind(), e.message()),
            };
            fails.push(format!(
                "{name}:{}: `{}`\n    expected: {want}\n    got:      {shown}",
                start + 1,
                expr.trim()
            ));
        }
    }
    (passed, fails)
}

#[test]
fn golden_eval_core() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/eval/core");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "btscript"));
    files.sort();
    let filter = std::env::var("CORE_FILTER").unwrap_or_default();
    let mut total = 0;
    let mut all_fails = Vec::new();
    for f in files {
        if !f.display().to_string().contains(&filter) {
            continue;
        }
        let (p, fails) = run_script(&f);
        total += p;
        all_fails.extend(fails);
    }
    for f in &all_fails {
        eprintln!("FAIL {f}");
    }
    eprintln!("{total} passed, {} failed", all_fails.len());
    assert!(all_fails.is_empty());
}

#[test]
fn wildcard_rule() {
    assert!(wildcard_match("_", "anything"));
    assert!(wildcard_match("does_not_understand", "does_not_understand"));
    assert!(!wildcard_match(
        "does_not_understand",
        "doesXnot_understand"
    ));
    assert!(wildcard_match("Actor(Counter, _)", "Actor(Counter, 0.3.0)"));
    assert!(wildcard_match("a_c", "a_c"));
    assert!(wildcard_match("#(_)", "#(1, 2)"));
}
