//! The per-host name registry (LANGUAGE.md 8.1): a directory with one small file per named
//! node, `<dir>/<name@host>`, holding `PORT PID\n`. The directory is `BT_NODE_DIR`, else
//! `$XDG_RUNTIME_DIR/bt/nodes`, else `$TMPDIR/bt-$UID/nodes` (mode 0700).
//!
//! A node writes its entry when it starts (atomically: a temporary file renamed into place)
//! and removes it on exit (a guard, and an `atexit` hook for `std::process::exit`). Entries
//! of processes that are gone are stale: lookups ignore (and remove) them, and a refused
//! connection is `node_down` anyway.

// unsafe: uid, pid liveness and the atexit hook come from libc (each block has a SAFETY comment).
#![allow(unsafe_code)]

use std::path::{Path, PathBuf};

/// The registry directory.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BT_NODE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("bt").join("nodes");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("bt-{uid}")).join("nodes")
}

/// A registry entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub port: u16,
    pub pid: u32,
}

fn parse(text: &str) -> Option<Entry> {
    let mut it = text.split_whitespace();
    let port = it.next()?.parse().ok()?;
    let pid = it.next()?.parse().ok()?;
    Some(Entry { port, pid })
}

/// Whether process `pid` exists.
fn alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists; no signal is delivered.
    let r = unsafe { libc::kill(p, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !zombie(pid)
}

/// Whether `pid` has exited but not been reaped yet (Linux `/proc`; false elsewhere).
fn zombie(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last ')'.
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
}

/// The live entry for `name` in `dir`, if any (a stale entry is removed).
pub fn lookup_in(dir: &Path, name: &str) -> Option<Entry> {
    let path = dir.join(name);
    let e = parse(&std::fs::read_to_string(&path).ok()?);
    match e {
        Some(e) if alive(e.pid) => Some(e),
        _ => {
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// The live entry for `name` in this host's registry.
pub fn lookup(name: &str) -> Option<Entry> {
    lookup_in(&dir(), name)
}

/// This node's entry; removed when dropped.
#[derive(Debug)]
pub struct Registration {
    path: PathBuf,
}

static ATEXIT_PATH: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

extern "C" fn remove_at_exit() {
    if let Ok(mut g) = ATEXIT_PATH.try_lock() {
        if let Some(p) = g.take() {
            remove_own(&p);
        }
    }
}

/// Removes `path` only if it is still this process's entry.
fn remove_own(path: &Path) {
    let mine = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse(&t))
        .is_some_and(|e| e.pid == std::process::id());
    if mine {
        let _ = std::fs::remove_file(path);
    }
}

/// Registers `name → port` for this process in `dir`. Fails if a live process holds the name.
pub fn register_in(dir: &Path, name: &str, port: u16) -> Result<Registration, String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create the node registry {}: {e}", dir.display()))?;
    let me = std::process::id();
    if let Some(e) = lookup_in(dir, name) {
        if e.pid != me {
            return Err(format!(
                "the node name {name} is already in use on this host (process {})",
                e.pid
            ));
        }
    }
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.{me}.tmp"));
    let write =
        std::fs::write(&tmp, format!("{port} {me}\n")).and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = write {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot register in {}: {e}", dir.display()));
    }
    if let Ok(mut g) = ATEXIT_PATH.lock() {
        let first = g.is_none();
        *g = Some(path.clone());
        if first {
            // SAFETY: registers a plain `extern "C"` function with no captured state.
            unsafe { libc::atexit(remove_at_exit) };
        }
    }
    Ok(Registration { path })
}

impl Drop for Registration {
    fn drop(&mut self) {
        remove_own(&self.path);
        if let Ok(mut g) = ATEXIT_PATH.lock() {
            if g.as_deref() == Some(self.path.as_path()) {
                *g = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_lookup_stale_and_drop() {
        let dir = crate::scratch::dir("registry");
        let r = register_in(&dir, "a@localhost", 4242).unwrap();
        let me = std::process::id();
        assert_eq!(
            lookup_in(&dir, "a@localhost"),
            Some(Entry {
                port: 4242,
                pid: me
            })
        );
        assert_eq!(lookup_in(&dir, "b@localhost"), None);
        // Re-registering our own name is fine; a live other holder is refused.
        drop(register_in(&dir, "a@localhost", 4243).unwrap());
        let r2 = register_in(&dir, "a@localhost", 4244).unwrap();
        std::fs::write(dir.join("c@localhost"), "1 1\n").unwrap(); // pid 1 (init) is alive
        assert!(register_in(&dir, "c@localhost", 1).is_err());
        // An entry of a process that is gone is stale: ignored and removed.
        std::fs::write(dir.join("d@localhost"), format!("1 {}\n", i32::MAX)).unwrap();
        assert_eq!(lookup_in(&dir, "d@localhost"), None);
        assert!(!dir.join("d@localhost").exists());
        std::fs::write(dir.join("e@localhost"), "garbage").unwrap();
        // An exited but unreaped child is gone too (where /proc shows it).
        if Path::new("/proc/self/stat").exists() {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let zpid = child.id();
            while !super::zombie(zpid) {
                std::thread::yield_now();
            }
            std::fs::write(dir.join("z@localhost"), format!("1 {zpid}\n")).unwrap();
            assert_eq!(lookup_in(&dir, "z@localhost"), None);
            child.wait().unwrap();
        }
        assert_eq!(lookup_in(&dir, "e@localhost"), None);
        drop(r2);
        assert!(!dir.join("a@localhost").exists());
        drop(r);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
