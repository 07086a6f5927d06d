//! The two operating-system calls distribution needs that std lacks: the host name (for
//! `--sname`) and starting `bt epmd` in its own session so it outlives the node.
#![allow(unsafe_code)]

/// This host's short name (`--sname`): the host name up to its first dot.
pub fn short_host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its full length; gethostname NUL-terminates within it
    // (or truncates, which the search below tolerates).
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let host = String::from_utf8_lossy(&buf[..end]).into_owned();
    match host.split('.').next() {
        Some(h) if !h.is_empty() => h.to_string(),
        _ => "localhost".into(),
    }
}

/// Makes `cmd` start in a new session (no controlling terminal, not in this process group),
/// so it survives this process and its terminal.
pub(crate) fn new_session(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec; `setsid` is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}
