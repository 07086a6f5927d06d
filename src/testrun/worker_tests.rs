//! Worker logic against a scripted fake interpreter.

use std::collections::HashMap;

use super::*;

/// Answers scripted results by (trimmed) source; unknown sources echo themselves.
#[derive(Default)]
struct Fake {
    answers: HashMap<String, Result<String, Box<ErrorFacts>>>,
    evals: Vec<String>,
    loads: Vec<Vec<String>>,
    load_warnings: Vec<(String, String)>,
}

impl Fake {
    fn ok(mut self, src: &str, display: &str) -> Fake {
        self.answers.insert(src.into(), Ok(display.into()));
        self
    }
    fn err(mut self, src: &str, kind: &str, message: &str) -> Fake {
        let facts = ErrorFacts {
            class_name: "RuntimeError".into(),
            kind: kind.into(),
            message: message.into(),
            ..Default::default()
        };
        self.answers.insert(src.into(), Err(Box::new(facts)));
        self
    }
}

impl Engine for Fake {
    fn load_unit(&mut self, files: &[(String, String)]) -> LoadOutcome {
        self.loads.push(files.iter().map(|f| f.0.clone()).collect());
        let warnings = self
            .load_warnings
            .iter()
            .filter(|(f, _)| files.iter().any(|x| &x.0 == f))
            .cloned()
            .collect();
        LoadOutcome {
            warnings,
            error: None,
        }
    }
    fn eval(&mut self, _path: &str, src: &str) -> Result<String, Box<ErrorFacts>> {
        let key = src.trim().to_string();
        self.evals.push(key.clone());
        self.answers.get(&key).cloned().unwrap_or(Ok(key))
    }
}

fn temp_file(name: &str, content: &str) -> String {
    let dir = crate::scratch::dir(&format!("worker-{name}"));
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p.display().to_string()
}

fn spec(path: &str, kind: FileKind) -> WorkerSpec {
    WorkerSpec {
        path: path.into(),
        kind,
        unit: vec![],
        resume: 0,
        skip: vec![],
        filter: None,
        check: true,
        warnings_as_errors: false,
        diagnostics: vec![],
        timeout_secs: 30.0,
        seed: None,
        explore: 0,
        inject_crashes: 0.0,
        step_budget: None,
    }
}

fn results(events: &[Event]) -> Vec<CaseResult> {
    events
        .iter()
        .filter_map(|e| {
            if let Event::Case { result, .. } = e {
                Some(result.clone())
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn expression_file_judging() {
    let path = temp_file(
        "judge.btscript",
        "1 + 1\n// => 2\n1 + 1\n// => 3\n\"a\" + 1\n// => ERROR: does_not_understand\nx\n// => ERROR:\n\"a\" + 1\n// => a\n4\n// => ERROR: boom\nno expectation\n",
    );
    let mut fake = Fake::default()
        .ok("1 + 1", "2")
        .err(
            "\"a\" + 1",
            "does_not_understand",
            "String does not understand '+'",
        )
        .ok("4", "4");
    let mut events = Vec::new();
    run(&mut fake, &spec(&path, FileKind::Expressions), &mut events);
    let rs = results(&events);
    let st: Vec<Status> = rs.iter().map(|r| r.status).collect();
    use Status::*;
    assert_eq!(st, vec![Pass, Fail, Pass, Skip, Fail, Fail, Fail]);
    assert_eq!(rs[1].expected.as_deref(), Some("3"));
    assert_eq!(rs[1].actual.as_deref(), Some("2"));
    assert_eq!(
        rs[4].actual.as_deref(),
        Some("ERROR: RuntimeError (does_not_understand): String does not understand '+'")
    );
    assert_eq!(
        rs[5].message.as_deref(),
        Some("expected an error, but the expression answered a value")
    );
    assert_eq!(
        rs[6].message.as_deref(),
        Some("expression has no expectation and will not be run")
    );
    assert_eq!(rs[6].line, 13);
    // The empty ERROR: case was not evaluated, and warned about.
    assert!(!fake.evals.contains(&"x".to_string()));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Warning { text } if text.contains("empty `ERROR:`"))));
    // Bless proposals for the failing cases.
    let blesses: Vec<Bless> = events
        .iter()
        .filter_map(|e| {
            if let Event::Case { bless: Some(b), .. } = e {
                Some(b.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        blesses[0],
        Bless {
            case_line: 3,
            line: 4,
            text: "2".into()
        }
    );
    assert_eq!(
        blesses[1],
        Bless {
            case_line: 9,
            line: 10,
            text: "ERROR: does_not_understand".into()
        }
    );
    assert_eq!(events.last(), Some(&Event::Done));
}

#[test]
fn resume_replays_silently_and_skips() {
    let path = temp_file(
        "resume.btscript",
        "a := 1\n// => 1\nloop\n// => _\nb := 2\n// => 2\n",
    );
    let mut fake = Fake::default();
    let mut s = spec(&path, FileKind::Expressions);
    s.resume = 2;
    s.skip = vec![1];
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    // Step 0 replayed, step 1 skipped, step 2 reported.
    assert_eq!(fake.evals, vec!["a := 1", "b := 2"]);
    let rs = results(&events);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].name, "b := 2");
    assert!(events.contains(&Event::Start {
        index: 0,
        name: "a := 1".into(),
        line: 1,
        report: false
    }));
}

#[test]
fn filter_reports_matching_cases_and_stops_early() {
    let path = temp_file(
        "filter.btscript",
        "a := 1\n// => 1\nb := a\n// => 1\nc := 3\n// => 3\n",
    );
    let mut fake = Fake::default();
    let mut s = spec(&path, FileKind::Expressions);
    s.filter = Some("b :=".into());
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    assert_eq!(fake.evals, vec!["a := 1", "b := a"]);
    assert_eq!(results(&events).len(), 1);
}

#[test]
fn load_unit_and_at_load() {
    let fixture = temp_file("fix_a.bt", "Object subclass: A\n");
    let loaded = temp_file("loaded.bt", "Object subclass: L\n");
    let path = temp_file(
        "loads.btscript",
        &format!("// @load {loaded}\n3\n// => 3\n// @load nowhere.bt\n"),
    );
    let mut fake = Fake::default();
    fake.load_warnings
        .push((fixture.clone(), "fix_a.bt:1:1: error: boom".into()));
    let mut s = spec(&path, FileKind::Expressions);
    s.unit = vec![fixture.clone()];
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    assert_eq!(fake.loads, vec![vec![fixture.clone()], vec![loaded]]);
    let warnings: Vec<&String> = events
        .iter()
        .filter_map(|e| {
            if let Event::Warning { text } = e {
                Some(text)
            } else {
                None
            }
        })
        .collect();
    assert!(warnings[0].contains("boom"));
    assert!(warnings[1].contains("@load nowhere.bt: no such file"));
}

fn suite_fake() -> Fake {
    Fake::default()
        .ok(
            "CTest testSelectors",
            "[\"testB\",\"testA\",\"testC\",\"helper:\"]",
        )
        .ok(
            "CTest runTest: #testA fixture: __btSuiteFixture",
            "[\"pass\"]",
        )
        .ok(
            "CTest runTest: #testB fixture: __btSuiteFixture",
            "[\"fail\",\"Expected 3, got 4\"]",
        )
        .ok(
            "CTest runTest: #testC fixture: __btSuiteFixture",
            "[\"skip\",\"not today\"]",
        )
}

const SUITE: &str =
    "TestCase subclass: CTest\n  testA => nil\n  testB =>\n    nil\n  testC => nil\n";

#[test]
fn suite_lifecycle() {
    let path = temp_file("c_test.bt", SUITE);
    let mut fake = suite_fake();
    let mut events = Vec::new();
    run(
        &mut fake,
        &spec(
            &path,
            FileKind::Suite {
                class: "CTest".into(),
                ignored: vec![],
            },
        ),
        &mut events,
    );
    let rs = results(&events);
    let summary: Vec<(String, Status, usize)> = rs
        .iter()
        .map(|r| (r.name.clone(), r.status, r.line))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("testA".into(), Status::Pass, 2),
            ("testB".into(), Status::Fail, 3),
            ("testC".into(), Status::Skip, 5)
        ]
    );
    assert_eq!(rs[1].message.as_deref(), Some("Expected 3, got 4"));
    assert_eq!(fake.evals[1], "__btSuiteFixture := CTest new setUpOnce");
    assert_eq!(
        fake.evals.last().unwrap(),
        "CTest runTearDownOnce: __btSuiteFixture"
    );
    assert!(events.contains(&Event::TestClass {
        name: "CTest".into()
    }));
}

#[test]
fn suite_set_up_once_failure_fails_every_test() {
    let path = temp_file("d_test.bt", SUITE);
    let mut fake = suite_fake().err(
        "__btSuiteFixture := CTest new setUpOnce",
        "user_error",
        "no db",
    );
    let mut events = Vec::new();
    run(
        &mut fake,
        &spec(
            &path,
            FileKind::Suite {
                class: "CTest".into(),
                ignored: vec![],
            },
        ),
        &mut events,
    );
    let rs = results(&events);
    assert_eq!(rs.len(), 3);
    for r in &rs {
        assert_eq!(r.status, Status::Fail);
        assert_eq!(
            r.message.as_deref(),
            Some("setUpOnce failed: RuntimeError (user_error): no db")
        );
    }
    // No test ran, tearDownOnce still did.
    assert!(!fake.evals.iter().any(|e| e.contains("runTest")));
    assert!(fake.evals.last().unwrap().ends_with("runTearDownOnce: nil"));
}

#[test]
fn suite_resume_after_timeout_and_filter() {
    let path = temp_file("e_test.bt", SUITE);
    let mut fake = suite_fake();
    let mut s = spec(
        &path,
        FileKind::Suite {
            class: "CTest".into(),
            ignored: vec![],
        },
    );
    s.resume = 2;
    s.skip = vec![1];
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    let names: Vec<String> = results(&events).into_iter().map(|r| r.name).collect();
    assert_eq!(names, vec!["testB", "testC"]);
    let mut fake = suite_fake();
    let mut s = spec(
        &path,
        FileKind::Suite {
            class: "CTest".into(),
            ignored: vec![],
        },
    );
    s.filter = Some("testC".into());
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    let names: Vec<String> = results(&events).into_iter().map(|r| r.name).collect();
    assert_eq!(names, vec!["testC"]);
    // A timed-out setUpOnce (step 0 skipped) fails every test.
    let mut fake = suite_fake();
    let mut s = spec(
        &path,
        FileKind::Suite {
            class: "CTest".into(),
            ignored: vec![],
        },
    );
    s.skip = vec![0];
    s.resume = 1;
    let mut events = Vec::new();
    run(&mut fake, &s, &mut events);
    assert!(results(&events)
        .iter()
        .all(|r| r.message.as_deref() == Some("setUpOnce failed: timed out after 30 s")));
}

#[test]
fn suite_file_that_fails_to_load() {
    let path = temp_file("f_test.bt", SUITE);
    let mut fake = suite_fake();
    fake.load_warnings
        .push((path.clone(), "f_test.bt:2:3: error: parse error".into()));
    let mut events = Vec::new();
    run(
        &mut fake,
        &spec(
            &path,
            FileKind::Suite {
                class: "CTest".into(),
                ignored: vec![],
            },
        ),
        &mut events,
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::FileError { text } if text.contains("parse error"))));
    assert!(results(&events).is_empty());
}

#[test]
fn doc_examples_of_a_library_file() {
    let path = temp_file("Lib.bt", "/// Doubles.\n///\n///   Lib new double: 3\n///   // => 6\nObject subclass: Lib\n  double: x => x * 2\n");
    // The class already exists: the file is not loaded again.
    let mut fake = Fake::default()
        .ok("Lib", "Lib")
        .ok("Lib new double: 3", "6");
    let mut events = Vec::new();
    run(&mut fake, &spec(&path, FileKind::DocExamples), &mut events);
    assert!(fake.loads.is_empty());
    let rs = results(&events);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, Status::Pass);
    assert_eq!(rs[0].line, 3);
    // A class that does not exist yet: the file is loaded first.
    let mut fake = Fake::default().err("Lib", "class_not_found", "Class 'Lib' not found");
    let mut events = Vec::new();
    run(&mut fake, &spec(&path, FileKind::DocExamples), &mut events);
    assert_eq!(fake.loads, vec![vec![path.clone()]]);
}
