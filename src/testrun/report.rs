//! Results of a `bt test` run and their two renderings: the human report (one line per file,
//! then the failures, then exactly `N passed, N failed[, N skipped]`) and the `--json`
//! document.

use serde::{Deserialize, Serialize};

/// Outcome of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Pass,
    Fail,
    Skip,
}

/// One expression or test. Field order is the JSON order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CaseResult {
    /// The expression (its lines joined with `\n`) or the test selector.
    pub(crate) name: String,
    /// 1-based line of the expression or test method (0 when unknown, e.g. inherited).
    pub(crate) line: usize,
    pub(crate) status: Status,
    /// The expectation as written (expression files), else null.
    pub(crate) expected: Option<String>,
    /// What the expression displayed or raised (expression files), else null.
    pub(crate) actual: Option<String>,
    /// Why it failed or was skipped; null for a pass.
    pub(crate) message: Option<String>,
    /// Under the deterministic scheduler: the schedule of this result (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) schedule: Option<Schedule>,
}

/// The deterministic schedule a result came from (`--seed`, `--explore`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Schedule {
    /// The seed that replays it (`bt test --seed SEED`).
    pub(crate) seed: u64,
    /// Scheduling steps the test took (for a failure: the step it failed at).
    pub(crate) steps: u64,
    /// Schedules run for this test (`--explore`: up to and including the failing one).
    pub(crate) schedules: u32,
    /// The command that replays a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replay: Option<String>,
}

impl CaseResult {
    pub(crate) fn pass(name: impl Into<String>, line: usize) -> CaseResult {
        CaseResult {
            name: name.into(),
            line,
            status: Status::Pass,
            expected: None,
            actual: None,
            message: None,
            schedule: None,
        }
    }
    pub(crate) fn fail(
        name: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> CaseResult {
        CaseResult {
            name: name.into(),
            line,
            status: Status::Fail,
            expected: None,
            actual: None,
            message: Some(message.into()),
            schedule: None,
        }
    }
    pub(crate) fn skip(
        name: impl Into<String>,
        line: usize,
        message: impl Into<String>,
    ) -> CaseResult {
        CaseResult {
            status: Status::Skip,
            ..CaseResult::fail(name, line, message)
        }
    }
}

/// One test file. Field order is the JSON order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileResult {
    pub(crate) path: String,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) skipped: usize,
    /// Set when the file could not be run (it then counts as one failure).
    pub(crate) error: Option<String>,
    pub(crate) cases: Vec<CaseResult>,
    /// Load problems of fixtures, `--load` and `@load` files, and other notes.
    pub(crate) warnings: Vec<String>,
    /// `--bless`: the cases whose `// =>` lines were rewritten (`LINE: expression => new`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) blessed: Vec<String>,
    /// Test class name of a suite (for the human report), not serialised.
    #[serde(skip)]
    pub(crate) test_class: Option<String>,
}

impl FileResult {
    pub(crate) fn new(path: impl Into<String>) -> FileResult {
        FileResult {
            path: path.into(),
            ..Default::default()
        }
    }
    /// Recomputes the counts from the cases and the error.
    pub(crate) fn tally(&mut self) {
        let count = |s: Status| self.cases.iter().filter(|c| c.status == s).count();
        self.passed = count(Status::Pass);
        self.failed = count(Status::Fail) + usize::from(self.error.is_some());
        self.skipped = count(Status::Skip);
    }
    pub(crate) fn ok(&self) -> bool {
        self.failed == 0
    }
}

/// The whole run. Field order is the JSON order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) skipped: usize,
    pub(crate) files: Vec<FileResult>,
}

impl Summary {
    pub(crate) fn new(mut files: Vec<FileResult>) -> Summary {
        for f in &mut files {
            f.tally();
        }
        Summary {
            passed: files.iter().map(|f| f.passed).sum(),
            failed: files.iter().map(|f| f.failed).sum(),
            skipped: files.iter().map(|f| f.skipped).sum(),
            files,
        }
    }

    /// Exit status: 0 when nothing failed, else 1.
    pub(crate) fn exit_code(&self) -> i32 {
        i32::from(self.failed > 0)
    }

    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("plain data serialises")
    }

    /// `N passed, N failed` with `, N skipped` when any were skipped.
    fn closing_line(&self) -> String {
        counts(self.passed, self.failed, self.skipped)
    }

    /// The human report: one line per file, then [`Summary::failures_and_total`].
    #[cfg(test)]
    pub(crate) fn human(&self) -> String {
        let mut out: String = self.files.iter().map(file_line).collect();
        out.push_str(&self.failures_and_total());
        out
    }

    /// Each failure with its place, expected and actual, then the closing line.
    pub(crate) fn failures_and_total(&self) -> String {
        let mut out = String::new();
        let failing: Vec<&FileResult> = self.files.iter().filter(|f| !f.ok()).collect();
        if !failing.is_empty() {
            out.push_str("\nFailures:\n");
        }
        for f in failing {
            if let Some(e) = &f.error {
                out.push_str(&format!("\n{}: file error\n", f.path));
                out.push_str(&indent(e, "  "));
            }
            for c in f.cases.iter().filter(|c| c.status == Status::Fail) {
                out.push('\n');
                out.push_str(&describe_failure(f, c));
            }
        }
        if !self.files.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.closing_line());
        out.push('\n');
        out
    }
}

/// `PASS path (N passed, N failed)` with a line end.
pub(crate) fn file_line(f: &FileResult) -> String {
    let tag = if f.ok() { "PASS" } else { "FAIL" };
    let mut s = format!(
        "{tag} {} ({})\n",
        f.path,
        counts(f.passed, f.failed, f.skipped)
    );
    if !f.blessed.is_empty() {
        s.push_str(&format!(
            "  blessed {} expectation{}:\n",
            f.blessed.len(),
            if f.blessed.len() == 1 { "" } else { "s" }
        ));
        for b in &f.blessed {
            s.push_str(&format!("    {}:{b}\n", f.path));
        }
    }
    s
}

/// `N passed, N failed` with `, N skipped` when any were skipped.
fn counts(passed: usize, failed: usize, skipped: usize) -> String {
    let mut s = format!("{passed} passed, {failed} failed");
    if skipped > 0 {
        s.push_str(&format!(", {skipped} skipped"));
    }
    s
}

/// Every line of `text` prefixed with `prefix`, each ending in a line end.
fn indent(text: &str, prefix: &str) -> String {
    let mut s = String::new();
    for l in text.trim_end_matches('\n').split('\n') {
        s.push_str(prefix);
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// `path:line: name`, then expected/actual (expression cases) and the message.
fn describe_failure(f: &FileResult, c: &CaseResult) -> String {
    let mut s = String::new();
    let place = if c.line > 0 {
        format!("{}:{}", f.path, c.line)
    } else {
        f.path.clone()
    };
    let title = match &f.test_class {
        Some(class) => format!("{class}>>{}", c.name),
        None => c.name.clone(),
    };
    let mut title_lines = title.split('\n');
    s.push_str(&format!("{place}: {}\n", title_lines.next().unwrap_or("")));
    for l in title_lines {
        s.push_str(&format!("    {l}\n"));
    }
    if let Some(e) = &c.expected {
        s.push_str(&label_block("expected", e));
    }
    if let Some(a) = &c.actual {
        s.push_str(&label_block("actual", a));
        // The two lines read the same when the display holds a backslash (a String in a
        // List shows `\"`): in an expectation the backslash is an escape.
        if c.expected.as_deref() == Some(a.as_str()) && a.contains('\\') {
            s.push_str(
                "  hint: `\\` in an expectation is an escape: write `\\\\` for a backslash of the \
                 display (`bt test --bless` writes it so)\n",
            );
        }
    }
    if let Some(m) = &c.message {
        s.push_str(&indent(m, "  "));
    }
    s
}

fn label_block(label: &str, text: &str) -> String {
    let mut s = String::new();
    let pad = " ".repeat(9 - label.len().min(8));
    for (i, l) in text.split('\n').enumerate() {
        if i == 0 {
            s.push_str(&format!("  {label}:{pad}{l}\n"));
        } else {
            s.push_str(&format!("  {}{l}\n", " ".repeat(10)));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Summary {
        let mut a = FileResult::new("t/a.btscript");
        a.cases.push(CaseResult::pass("3 + 4", 1));
        let mut fail = CaseResult::fail("1 + 1", 3, "value differs");
        fail.expected = Some("3".into());
        fail.actual = Some("2".into());
        a.cases.push(fail);
        a.cases
            .push(CaseResult::skip("x", 5, "empty ERROR: expectation"));
        let mut b = FileResult::new("t/b_test.bt");
        b.test_class = Some("BTest".into());
        b.cases
            .push(CaseResult::fail("testOne", 4, "Expected 3, got 4"));
        b.cases.push(CaseResult::pass("testTwo", 6));
        let mut c = FileResult::new("t/c.bt");
        c.error = Some("t/c.bt:1:1: error: boom".into());
        let d = FileResult::new("t/d.btscript");
        Summary::new(vec![a, b, c, d])
    }

    #[test]
    fn totals_and_exit_code() {
        let s = sample();
        assert_eq!((s.passed, s.failed, s.skipped), (2, 3, 1));
        assert_eq!(s.exit_code(), 1);
        assert_eq!(s.closing_line(), "2 passed, 3 failed, 1 skipped");
        assert_eq!(Summary::new(vec![]).closing_line(), "0 passed, 0 failed");
        assert_eq!(Summary::new(vec![]).exit_code(), 0);
    }

    /// An expectation copied from an `actual:` holding a backslash fails (the backslash is an
    /// escape there) although both lines read the same: the report says why.
    #[test]
    fn same_looking_lines_get_the_escape_hint() {
        let mut a = FileResult::new("t/q.btscript");
        let mut fail = CaseResult::fail("#(\"a\\\"b\")", 1, "value differs");
        fail.expected = Some(r#"["a\"b"]"#.into());
        fail.actual = Some(r#"["a\"b"]"#.into());
        a.cases.push(fail);
        let text = Summary::new(vec![a]).human();
        assert!(
            text.contains("  hint: `\\` in an expectation is an escape"),
            "{text}"
        );
        // Different lines need no hint.
        assert!(!sample().human().contains("hint:"));
    }

    #[test]
    fn human_report() {
        let expected = "\
FAIL t/a.btscript (1 passed, 1 failed, 1 skipped)
FAIL t/b_test.bt (1 passed, 1 failed)
FAIL t/c.bt (0 passed, 1 failed)
PASS t/d.btscript (0 passed, 0 failed)

Failures:

t/a.btscript:3: 1 + 1
  expected: 3
  actual:   2
  value differs

t/b_test.bt:4: BTest>>testOne
  Expected 3, got 4

t/c.bt: file error
  t/c.bt:1:1: error: boom

2 passed, 3 failed, 1 skipped
";
        assert_eq!(sample().human(), expected);
    }

    #[test]
    fn json_document_shape() {
        let v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        assert_eq!(v["passed"], 2);
        assert_eq!(v["failed"], 3);
        assert_eq!(v["skipped"], 1);
        let f = &v["files"][0];
        assert_eq!(f["path"], "t/a.btscript");
        assert_eq!(f["error"], serde_json::Value::Null);
        assert_eq!(f["cases"][1]["status"], "fail");
        assert_eq!(f["cases"][1]["expected"], "3");
        assert_eq!(f["cases"][1]["line"], 3);
        assert_eq!(v["files"][2]["error"], "t/c.bt:1:1: error: boom");
        assert_eq!(v["files"][2]["failed"], 1);
        // Key order follows the contract.
        let text = sample().to_json();
        assert!(text.starts_with("{\"passed\":2,\"failed\":3,\"skipped\":1,\"files\":[{\"path\":"));
        assert!(
            text.contains("{\"name\":\"3 + 4\",\"line\":1,\"status\":\"pass\",\"expected\":null")
        );
        // Round trip (the parent reads what workers write).
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back.files.len(), 4);
    }
}
