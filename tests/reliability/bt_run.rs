//! Runs the `bt` binary on a script written to a private temp directory, as a child process
//! with a deadline: a hang becomes a failure naming what it printed, a crash is a status,
//! not a dead test harness. Shared by the modules of `tests/reliability/` (`use
//! crate::bt_run;`).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What one run of `bt` did.
pub(crate) struct Run {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The exit code (None when a signal ended the process).
    pub(crate) fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Runs `bt ARGS FILE` where FILE is `NAME.bt` holding `src`, in a temp directory of its own
/// (`tag` keeps the directories of different test files apart; removed afterwards). Panics
/// with the output so far if `bt` has not exited after `limit`, killing it first.
pub(crate) fn bt_script(tag: &str, args: &[&str], name: &str, src: &str, limit: Duration) -> Run {
    bt_script_in(tag, args, name, src, limit, None)
}

/// [`bt_script`] with the child's address space limited to `vm_kib` KiB (`ulimit -v`, set by
/// `sh` before it runs `bt`), when given.
pub(crate) fn bt_script_in(
    tag: &str,
    args: &[&str],
    name: &str,
    src: &str,
    limit: Duration,
    vm_kib: Option<u64>,
) -> Run {
    let (dir, path) = script_file(tag, name, src);
    let mut cmd = match vm_kib {
        None => Command::new(env!("CARGO_BIN_EXE_bt")),
        Some(kib) => {
            let mut c = Command::new("sh");
            c.args(["-c", &format!("ulimit -v {kib} && exec \"$0\" \"$@\"")])
                .arg(env!("CARGO_BIN_EXE_bt"));
            c
        }
    };
    let mut child = cmd
        .args(args)
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bt");
    let (t_out, t_err) = drain_output(&mut child);
    let Some(status) = wait_until(&mut child, Instant::now() + limit, || {}) else {
        let _ = std::fs::remove_dir_all(&dir);
        let out = t_out.join().unwrap_or_default();
        let err = t_err.join().unwrap_or_default();
        panic!(
            "bt {args:?} on {name} did not exit within {limit:?}\nstdout:\n{}\nstderr ({} bytes):\n{}",
            head(&out),
            err.len(),
            head(&err)
        );
    };
    let _ = std::fs::remove_dir_all(&dir);
    Run {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

/// A fresh temporary directory holding `NAME.bt` with `src`: (the directory, the file).
pub(crate) fn script_file(tag: &str, name: &str, src: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("bt-{tag}-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.bt"));
    std::fs::write(&path, src).expect("write script");
    (dir, path)
}

/// Waits for `child` until `deadline`, calling `each` before every poll (the short sleep
/// paces the polls; it synchronises nothing). `None`: the deadline passed and the child was
/// killed and reaped.
pub(crate) fn wait_until(
    child: &mut Child,
    deadline: Instant,
    mut each: impl FnMut(),
) -> Option<ExitStatus> {
    loop {
        each();
        if let Some(st) = child.try_wait().expect("wait") {
            return Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Reads a child's piped stdout and stderr to the end on threads of their own (so neither
/// pipe fills while the caller waits): join the handles once the child has exited.
pub(crate) fn drain_output(
    child: &mut Child,
) -> (
    std::thread::JoinHandle<String>,
    std::thread::JoinHandle<String>,
) {
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    (out, err)
}

/// The first 3000 characters of `s` (a panic message stays readable).
pub(crate) fn head(s: &str) -> String {
    s.chars().take(3000).collect()
}
