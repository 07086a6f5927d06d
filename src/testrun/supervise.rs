//! The parent side: runs each file in its own worker process (`bt test --worker`), enforces
//! the per-step deadline, and survives hangs and crashes.
//!
//! A worker process gives each file a fresh interpreter whose threads, actors and global
//! state die with it; a hanging case is ended by killing the process, and a crash (a panic,
//! `Program exit`, a signal) ends only that worker. After a timeout or crash inside a step,
//! the step fails and a new worker resumes after it (see [`super::worker`]).

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use super::child::MARKER;
use super::report::{CaseResult, FileResult};
use super::worker::{timeout_message, Bless, Event, WorkerSpec};

/// Restarts of one file's worker before giving up.
const MAX_RESTARTS: usize = 100;

/// The least time allowed for starting a worker and loading files.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// What the reader thread passes on.
enum Msg {
    Output(Vec<u8>),
    Event(Event),
    Eof,
}

/// Splits a worker's stdout into program output and events.
fn reader(mut src: impl Read, tx: mpsc::Sender<Msg>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = match src.read(&mut chunk) {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        if n == 0 {
            if !buf.is_empty() {
                let _ = tx.send(Msg::Output(std::mem::take(&mut buf)));
            }
            let _ = tx.send(Msg::Eof);
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        loop {
            match find(&buf, MARKER) {
                Some(at) => {
                    if at > 0 {
                        let _ = tx.send(Msg::Output(buf[..at].to_vec()));
                    }
                    let body = at + MARKER.len();
                    match buf[body..].iter().position(|&b| b == b'\n') {
                        Some(nl) => {
                            if let Ok(ev) = serde_json::from_slice::<Event>(&buf[body..body + nl]) {
                                let _ = tx.send(Msg::Event(ev));
                            }
                            buf.drain(..body + nl + 1);
                        }
                        None => {
                            buf.drain(..at);
                            break;
                        }
                    }
                }
                None => {
                    // Keep a tail that could be the start of a marker.
                    let keep = partial_marker_suffix(&buf);
                    let out = buf.len() - keep;
                    if out > 0 {
                        let _ = tx.send(Msg::Output(buf[..out].to_vec()));
                        buf.drain(..out);
                    }
                    break;
                }
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn partial_marker_suffix(buf: &[u8]) -> usize {
    (1..MARKER.len().min(buf.len() + 1))
        .rev()
        .find(|&k| buf.ends_with(&MARKER[..k]))
        .unwrap_or(0)
}

/// How a file run is configured.
pub(crate) struct Supervisor {
    pub(crate) exe: PathBuf,
    pub(crate) timeout: Duration,
    /// Program output goes to stderr instead of stdout (under `--json`).
    pub(crate) output_to_stderr: bool,
    /// Warnings already printed (a broken fixture shared by many files is reported once on
    /// stderr; each file's JSON entry still lists it).
    printed: Mutex<HashSet<String>>,
}

/// The results of one file plus what `--bless` may rewrite.
pub(crate) struct FileRun {
    pub(crate) result: FileResult,
    pub(crate) blesses: Vec<Bless>,
}

impl Supervisor {
    pub(crate) fn new(exe: PathBuf, timeout: Duration, output_to_stderr: bool) -> Supervisor {
        Supervisor {
            exe,
            timeout,
            output_to_stderr,
            printed: Mutex::new(HashSet::new()),
        }
    }

    fn warn(&self, text: &str) {
        if self
            .printed
            .lock()
            .map(|mut p| p.insert(text.to_string()))
            .unwrap_or(true)
        {
            eprintln!("warning: {text}");
        }
    }

    fn forward(&self, bytes: &[u8]) {
        if self.output_to_stderr {
            let _ = std::io::stderr().write_all(bytes);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }
    }

    /// Runs one file to the end, restarting its worker after timeouts and crashes.
    pub(crate) fn run_file(&self, mut spec: WorkerSpec) -> FileRun {
        let mut result = FileResult::new(spec.path.clone());
        let mut cases: BTreeMap<usize, CaseResult> = BTreeMap::new();
        let mut blesses = Vec::new();
        let mut restarts = 0;
        loop {
            let attempt = self.attempt(&spec, &mut result, &mut cases, &mut blesses);
            match attempt {
                Attempt::Done => break,
                Attempt::Failed(text) => {
                    result.error = Some(text);
                    break;
                }
                Attempt::StepLost { index, reason } => {
                    restarts += 1;
                    if restarts > MAX_RESTARTS {
                        result.error =
                            Some(format!("gave up after {MAX_RESTARTS} restarts ({reason})"));
                        break;
                    }
                    spec.skip.push(index);
                    spec.resume = spec.resume.max(index + 1);
                }
            }
        }
        result.cases = cases.into_values().collect();
        FileRun { result, blesses }
    }

    fn attempt(
        &self,
        spec: &WorkerSpec,
        result: &mut FileResult,
        cases: &mut BTreeMap<usize, CaseResult>,
        blesses: &mut Vec<Bless>,
    ) -> Attempt {
        let spec_json = serde_json::to_string(spec).expect("plain data serialises");
        let child = Command::new(&self.exe)
            .args(["test", "--worker", &spec_json])
            // The worker's lifeline (testrun/lifeline.rs): never written; closed when this
            // process exits, however it exits, so the worker ends with it.
            .env(super::lifeline::ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                return Attempt::Failed(format!(
                    "cannot start a worker ({}): {e}",
                    self.exe.display()
                ))
            }
        };
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        let reader_thread = std::thread::spawn(move || reader(stdout, tx));
        let mut current: Option<(usize, String, usize, bool, Instant)> = None;
        let mut last_activity = Instant::now();
        let mut done = false;
        let mut crash: Option<String> = None;
        let outcome = loop {
            // A step gets the per-case timeout; starting up and loading (no step running)
            // get at least LOAD_TIMEOUT, so a short --timeout does not fail a slow start.
            let (started, limit) = match &current {
                Some(c) => (c.4, self.timeout),
                None => (last_activity, self.timeout.max(LOAD_TIMEOUT)),
            };
            let wait = limit.saturating_sub(started.elapsed());
            match rx.recv_timeout(wait) {
                Ok(Msg::Output(b)) => self.forward(&b),
                Ok(Msg::Event(ev)) => {
                    last_activity = Instant::now();
                    match ev {
                        Event::Start {
                            index,
                            name,
                            line,
                            report,
                        } => current = Some((index, name, line, report, Instant::now())),
                        Event::Case {
                            index,
                            result: r,
                            bless,
                        } => {
                            cases.insert(index, r);
                            blesses.extend(bless);
                            current = None;
                        }
                        Event::Warning { text } => {
                            if !result.warnings.contains(&text) {
                                self.warn(&text);
                                result.warnings.push(text);
                            }
                        }
                        Event::FileError { text } => result.error = Some(text),
                        Event::TestClass { name } => result.test_class = Some(name),
                        Event::Crash { text } => crash = Some(text),
                        Event::Done => done = true,
                    }
                }
                Ok(Msg::Eof) | Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    break Some(timeout_message(limit.as_secs_f64()));
                }
            }
        };
        let status = child.wait();
        let _ = reader_thread.join();
        if done && outcome.is_none() {
            return Attempt::Done;
        }
        let reason = outcome.unwrap_or_else(|| {
            crash.clone().unwrap_or_else(|| match &status {
                Ok(s) => format!("the worker exited unexpectedly ({s})"),
                Err(e) => format!("the worker was lost: {e}"),
            })
        });
        match current {
            Some((index, name, line, report, _)) => {
                if report {
                    cases.insert(index, CaseResult::fail(name, line, reason.clone()));
                } else {
                    let text = format!("{}: {name}: {reason}", spec.path);
                    self.warn(&text);
                    result.warnings.push(text);
                }
                Attempt::StepLost { index, reason }
            }
            None => Attempt::Failed(reason),
        }
    }
}

enum Attempt {
    Done,
    /// The file cannot go on (lost outside any step).
    Failed(String),
    /// Step `index` hung or crashed; resume after it.
    StepLost {
        index: usize,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: Vec<u8>) -> (Vec<u8>, Vec<Event>) {
        let (tx, rx) = mpsc::channel();
        // Feed in small pieces to exercise markers split across reads.
        struct Slow(Vec<u8>, usize);
        impl Read for Slow {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = 3.min(self.0.len() - self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        reader(Slow(input, 0), tx);
        let mut out = Vec::new();
        let mut evs = Vec::new();
        for m in rx {
            match m {
                Msg::Output(b) => out.extend(b),
                Msg::Event(e) => evs.push(e),
                Msg::Eof => break,
            }
        }
        (out, evs)
    }

    #[test]
    fn events_and_output_are_separated() {
        let mut input = b"hello ".to_vec();
        input.extend(MARKER);
        input.extend(serde_json::to_vec(&Event::Done).unwrap());
        input.push(b'\n');
        input.extend(b"world\n\x1e almost a marker");
        let (out, evs) = collect(input);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "hello world\n\x1e almost a marker"
        );
        assert_eq!(evs, vec![Event::Done]);
    }

    /// A fake worker: a shell script that answers each attempt (told apart by `"resume":N`
    /// in the spec) with canned events, then behaves as given.
    #[cfg(unix)]
    fn fake_worker(name: &str, attempts: &[(usize, Vec<Event>, &str)]) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let mut script = String::from("#!/bin/sh\ncase \"$3\" in\n");
        for (resume, events, then) in attempts {
            script.push_str(&format!("  *'\"resume\":{resume},'*)\n"));
            for ev in events {
                let json = serde_json::to_string(ev).unwrap();
                script.push_str(&format!("    printf '\\036BT-EVENT\\037%s\\n' '{json}'\n"));
            }
            script.push_str(&format!("    {then} ;;\n"));
        }
        script.push_str("esac\n");
        let dir = crate::scratch::dir(&format!("supervise-{name}"));
        let path = dir.join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn spec() -> WorkerSpec {
        WorkerSpec {
            path: "t.btscript".into(),
            kind: super::super::discover::FileKind::Expressions,
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

    fn start(index: usize, name: &str) -> Event {
        Event::Start {
            index,
            name: name.into(),
            line: index + 1,
            report: true,
        }
    }

    fn pass(index: usize, name: &str) -> Event {
        Event::Case {
            index,
            result: CaseResult::pass(name, index + 1),
            bless: None,
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_inside_a_case_fails_it_and_the_file_goes_on() {
        let exe = fake_worker(
            "crash.sh",
            &[
                (
                    0,
                    vec![start(0, "a"), pass(0, "a"), start(1, "boom")],
                    "exit 3",
                ),
                (2, vec![start(2, "c"), pass(2, "c"), Event::Done], "exit 0"),
            ],
        );
        let sup = Supervisor::new(exe, Duration::from_secs(20), true);
        let run = sup.run_file(spec());
        let r = run.result;
        assert_eq!(r.error, None);
        let got: Vec<(String, crate::testrun::report::Status)> =
            r.cases.iter().map(|c| (c.name.clone(), c.status)).collect();
        use crate::testrun::report::Status::{Fail, Pass};
        assert_eq!(
            got,
            vec![
                ("a".into(), Pass),
                ("boom".into(), Fail),
                ("c".into(), Pass)
            ]
        );
        assert_eq!(
            r.cases[1].message.as_deref(),
            Some("the worker exited unexpectedly (exit status: 3)")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_hanging_case_times_out_and_a_panic_is_reported() {
        let crash = Event::Crash {
            text: "interpreter panicked: oops".into(),
        };
        let exe = fake_worker(
            "hang.sh",
            &[
                (0, vec![start(0, "spin")], "exec sleep 30"),
                (1, vec![start(1, "panics"), crash], "exit 101"),
                (2, vec![Event::Done], "exit 0"),
            ],
        );
        let sup = Supervisor::new(exe, Duration::from_millis(300), true);
        let t0 = Instant::now();
        let r = sup.run_file(spec()).result;
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert_eq!(r.cases[0].message.as_deref(), Some("timed out after 0.3 s"));
        assert_eq!(
            r.cases[1].message.as_deref(),
            Some("interpreter panicked: oops")
        );
        assert_eq!(r.error, None);
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_outside_any_case_is_a_file_error() {
        let exe = fake_worker("dies.sh", &[(0, vec![], "exit 1")]);
        let sup = Supervisor::new(exe, Duration::from_secs(20), true);
        let r = sup.run_file(spec()).result;
        assert!(r.cases.is_empty());
        assert_eq!(
            r.error.as_deref(),
            Some("the worker exited unexpectedly (exit status: 1)")
        );
        let missing = Supervisor::new(
            PathBuf::from("/nonexistent/bt"),
            Duration::from_secs(1),
            true,
        );
        let r = missing.run_file(spec()).result;
        assert!(r.error.unwrap().starts_with("cannot start a worker"));
    }
}
