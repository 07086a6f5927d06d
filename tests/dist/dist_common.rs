//! Shared harness of the distribution tests: real `bt` and `erl` processes on 127.0.0.1
//! with a private port mapper (a fresh port per environment) and `HOME` in a temporary
//! directory (so `~/.erlang.cookie` is the test's own). Every wait is on a line of a
//! child's output or on the port mapper accepting connections, never on a sleep; every
//! process started is killed by a guard.
#![allow(dead_code)]
#![allow(unreachable_pub)] // shared by several test crates, each using a part
#![allow(unsafe_code)] // kill(2): stopping and continuing test children

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BT: &str = env!("CARGO_BIN_EXE_bt");
pub const COOKIE: &str = "TESTCOOKIEBTDIST";
/// A safety net against a hung child, not a synchronisation device.
pub const LINE_LIMIT: Duration = Duration::from_secs(60);

/// A free TCP port on 127.0.0.1 (released at once; the caller binds it next).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// Waits until something accepts connections on 127.0.0.1:`port` (a starting daemon).
pub fn wait_listening(port: u16) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < LINE_LIMIT, "nothing listens on {port}");
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A port mapper child (`epmd -port P`, or `bt epmd --port P`), killed when dropped.
pub struct Epmd {
    pub port: u16,
    child: Child,
}

impl Epmd {
    /// The real `epmd` from Erlang/OTP.
    pub fn erlang() -> Epmd {
        Epmd::start(|port| {
            Command::new("epmd")
                .args(["-port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("epmd (Erlang/OTP) must be installed: .ci/run installs erlang-base")
        })
    }

    /// `bt epmd`.
    pub fn bt() -> Epmd {
        Epmd::start(|port| {
            Command::new(BT)
                .args(["epmd", "--port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
    }

    /// Starts a daemon on a free port and waits until it listens. The port is free when
    /// probed but may be taken (another test's connection) before the daemon binds it; the
    /// daemon then exits and a new port is tried.
    fn start(spawn: impl Fn(u16) -> Child) -> Epmd {
        for _ in 0..5 {
            let port = free_port();
            let mut child = spawn(port);
            if wait_listening_while_running(port, &mut child) {
                return Epmd { port, child };
            }
        }
        panic!("no port mapper could bind a free port in five tries");
    }
}

/// Waits until something accepts connections on 127.0.0.1:`port` while `child` runs:
/// false when the child exited first.
fn wait_listening_while_running(port: u16, child: &mut Child) -> bool {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return false;
        }
        if start.elapsed() >= LINE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nothing listens on {port}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

impl Drop for Epmd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A temporary directory (HOME and scripts) and the port mapper port the nodes use.
pub struct Env {
    pub dir: PathBuf,
    pub epmd_port: u16,
}

impl Env {
    pub fn new(tag: &str, epmd_port: u16) -> Env {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bt-dist-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Env { dir, epmd_port }
    }

    pub fn script(&self, name: &str, src: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, src).unwrap();
        p.display().to_string()
    }

    pub fn env(&self, c: &mut Command, cookie: &str) {
        c.env("HOME", &self.dir)
            .env("ERL_EPMD_PORT", self.epmd_port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if cookie.is_empty() {
            c.env_remove("BT_COOKIE");
        } else {
            c.env("BT_COOKIE", cookie);
        }
    }

    pub fn command(&self, cookie: &str, args: &[&str]) -> Command {
        let mut c = Command::new(BT);
        c.arg("run").args(args);
        self.env(&mut c, cookie);
        c
    }

    /// Runs `bt run ARGS` to completion: (status, stdout, stderr).
    pub fn run(&self, cookie: &str, args: &[&str]) -> (i32, String, String) {
        let out = self.command(cookie, args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Starts `bt run ARGS` in the background, reading its stdout line by line.
    pub fn spawn(&self, cookie: &str, args: &[&str]) -> Proc {
        Proc::start(self.command(cookie, args))
    }

    /// Starts a serving node named `name` (script `src`, which must print `ready` last) and
    /// waits for `ready`.
    pub fn serve_src(&self, name: &str, cookie: &str, extra: &[&str], src: &str) -> Proc {
        let file = self.script(&format!("serve-{}.bt", name.replace('@', "-")), src);
        let mut args = vec!["--name", name, "--serve"];
        args.extend_from_slice(extra);
        args.push(&file);
        let mut p = self.spawn(cookie, &args);
        p.expect("ready");
        p
    }

    pub fn serve(&self, name: &str, cookie: &str, extra: &[&str]) -> Proc {
        self.serve_src(name, cookie, extra, "Transcript showCr: \"ready\"\n")
    }

    /// Starts `erl -noshell -name NAME -setcookie COOKIE [extra] -eval CODE` (`-sname` when
    /// the host has no dot, as Erlang wants).
    pub fn erl(&self, name: &str, cookie: &str, extra: &[&str], code: &str) -> Proc {
        let mut c = Command::new("erl");
        let host = name.split('@').nth(1).unwrap_or("");
        let flag = if host.contains('.') {
            "-name"
        } else {
            "-sname"
        };
        c.args(["-noshell", flag, name, "-setcookie", cookie])
            .args(extra)
            .args(["-eval", code]);
        self.env(&mut c, "");
        Proc::start(c)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `erl` as `e@127.0.0.1` with a private port mapper running `erl_code` (which
/// prints "ready" once set up), runs the bt script `client` as `bt@127.0.0.1` against it,
/// ends the Erlang node and answers bt's standard output and error after checking that bt
/// exited 0.
pub fn run_bt_against_erl(tag: &str, erl_code: &str, client: &str) -> (String, String) {
    let epmd = Epmd::erlang();
    let env = Env::new(tag, epmd.port);
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], erl_code);
    erl.expect("ready");
    let client = env.script("client.bt", client);
    let (status, out, err) = env.run(COOKIE, &["--name", "bt@127.0.0.1", &client]);
    erl.kill();
    assert_eq!(status, 0, "{err}");
    (out, err)
}

/// A child process, killed when dropped.
pub struct Proc {
    pub child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    pub fn start(mut c: Command) -> Proc {
        let mut child = c
            .spawn()
            .expect("cannot start the child (is Erlang/OTP installed?)");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Lossy: a line that is not UTF-8 must not close the child's output pipe.
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let l = String::from_utf8_lossy(&buf);
                if tx
                    .send(l.trim_end_matches(['\n', '\r']).to_string())
                    .is_err()
                {
                    break;
                }
                buf.clear();
            }
        });
        Proc { child, lines: rx }
    }

    pub fn line(&mut self) -> String {
        match self.lines.recv_timeout(LINE_LIMIT) {
            Ok(l) => l,
            Err(_) => {
                let _ = self.child.kill();
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("no more output from the child; stderr:\n{err}");
            }
        }
    }

    pub fn expect(&mut self, want: &str) {
        let got = self.line();
        assert_eq!(got, want);
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Kills the process and answers what it wrote to stderr.
    pub fn kill(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }

    /// Kills the process: (remaining stdout lines, stderr).
    pub fn drain(&mut self) -> (Vec<String>, String) {
        let err = self.kill();
        (self.lines.try_iter().collect(), err)
    }

    /// Waits for a normal exit: (status, remaining stdout lines).
    pub fn finish(&mut self) -> (i32, Vec<String>) {
        let status = self.child.wait().unwrap().code().unwrap_or(-1);
        let rest = self.lines.iter().collect();
        (status, rest)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // A test may have stopped it (SIGSTOP): continue it so that it can die.
        signal(self.pid(), libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

/// Sends `sig` to process `pid` (a child this test started).
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory effects; `pid` is a child of this test process.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Process numbers vary with scheduling: `Actor(Counter, 1.7.0)` → `Actor(Counter, 1.N.0)`
/// (the connection index stays).
pub fn wild(s: &str) -> String {
    regex::Regex::new(r"(\d+)\.\d+\.0")
        .unwrap()
        .replace_all(s, "$1.N.0")
        .into_owned()
}
