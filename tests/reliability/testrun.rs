//! Reliability: `bt test` workers die with their parent. A worker
//! spinning in `[true] whileTrue: []` used to keep running with ppid 1 after `kill -9` of
//! the `bt test` process.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Child processes of `parent` whose command line contains `needle` (from /proc).
fn children_of(parent: u32, needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(rest) = stat.rsplit_once(") ").map(|p| p.1) else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).and_then(|s| s.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// Whether `pid` is still a running (not zombie) process.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit_once(") ").and_then(|p| p.1.chars().next()),
            Some('Z') | Some('X')
        ),
        Err(_) => false,
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_worker_dies_when_bt_test_is_killed() {
    let dir = std::env::temp_dir().join(format!("bt-rely-testrun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("spin.btscript");
    std::fs::write(&file, "[true] whileTrue: []\n// => nil\n").expect("write");
    let mut parent = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("test")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn bt test");
    let deadline = Instant::now() + Duration::from_secs(60);
    let worker = loop {
        if let Some(&w) = children_of(parent.id(), "--worker").first() {
            break w;
        }
        assert!(Instant::now() < deadline, "no worker appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    parent.kill().expect("kill -9 bt test");
    parent.wait().expect("reap bt test");
    let deadline = Instant::now() + Duration::from_secs(30);
    while running(worker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let alive = running(worker);
    if alive {
        // Do not leave it spinning.
        let _ = Command::new("kill")
            .arg("-9")
            .arg(worker.to_string())
            .status();
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!alive, "worker {worker} outlived its killed parent");
}
