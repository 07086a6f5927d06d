//! The parent side: runs each file in its own worker process (`bt test --worker`), enforces
//! the per-step deadline, and survives hangs and crashes.
//!
//! A worker process gives each file a fresh interpreter whose threads, actors and global
//! state die with it; a hanging case is ended by killing the process, and a crash (a panic,
//! `Program exit`, a signal) ends only that worker. After a timeout or crash inside a step,
//! the step fails and a new worker resumes after it (see [`super::worker`]).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
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
pub struct Supervisor {
    pub exe: PathBuf,
    pub timeout: Duration,
    /// Program output goes to stderr instead of stdout (under `--json`).
    pub output_to_stderr: bool,
}

/// The results of one file plus what `--bless` may rewrite.
pub struct FileRun {
    pub result: FileResult,
    pub blesses: Vec<Bless>,
}

impl Supervisor {
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
    pub fn run_file(&self, mut spec: WorkerSpec) -> FileRun {
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
            .stdin(Stdio::null())
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
                                eprintln!("warning: {text}");
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
                    eprintln!("warning: {text}");
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
}
