//! The cluster cookie: the shared secret of the Erlang
//! distribution handshake. In order: `BT_COOKIE`, else the file given with
//! `--cookie-file PATH`, else `~/.erlang.cookie` — the file `erl` uses, so `erl` and `bt`
//! started by one user share a cookie. A missing `~/.erlang.cookie` is created (mode 0400,
//! 20 upper-case letters from the operating system's random source, as `erl` does); a cookie
//! file that group or others may read is refused with a hint, as `erl` refuses it. bt code
//! can neither read nor set the cookie, and it never crosses the wire (only MD5 digests of
//! challenges keyed by it do).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `N` random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b)
}

/// The default cookie file, `~/.erlang.cookie`.
pub fn default_path() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|d| !d.is_empty())?;
    Some(PathBuf::from(home).join(".erlang.cookie"))
}

/// The cookie: `BT_COOKIE`, else `file`, else `~/.erlang.cookie` (created if missing).
pub fn load(file: Option<&Path>) -> Result<String, String> {
    if let Some(c) = std::env::var("BT_COOKIE").ok().filter(|c| !c.is_empty()) {
        return Ok(c);
    }
    if let Some(f) = file {
        return read(f);
    }
    let path = default_path()
        .ok_or("no cookie: set BT_COOKIE, pass --cookie-file, or set HOME (~/.erlang.cookie)")?;
    match std::fs::symlink_metadata(&path) {
        Ok(_) => read(&path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(&path),
        Err(e) => Err(format!("cannot read the cookie {}: {e}", path.display())),
    }
}

/// Reads a cookie file, refusing one that group or others may access.
fn read(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let fail = |e: std::io::Error| format!("cannot read the cookie {}: {e}", path.display());
    let meta = std::fs::metadata(path).map_err(fail)?;
    if !meta.is_file() {
        return Err(format!("the cookie {} is not a file", path.display()));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "the cookie file {} must be accessible by its owner only (hint: chmod 400 {})",
            path.display(),
            path.display()
        ));
    }
    let c = std::fs::read_to_string(path).map_err(fail)?;
    let c = c.trim();
    if c.is_empty() {
        return Err(format!("the cookie file {} is empty", path.display()));
    }
    Ok(c.to_string())
}

/// 20 upper-case letters from the operating system's random source.
fn fresh() -> std::io::Result<String> {
    let mut out = String::with_capacity(20);
    while out.len() < 20 {
        let bytes: [u8; 32] = random_bytes()?;
        // 26 * 9 = 234: reject the top of the range so every letter is equally likely.
        for b in bytes.iter().filter(|&&b| b < 234) {
            if out.len() < 20 {
                out.push((b'A' + b % 26) as char);
            }
        }
    }
    Ok(out)
}

/// Creates the cookie file (mode 0400) with a fresh cookie; if another process created it
/// first, uses theirs.
pub(crate) fn create(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |e: std::io::Error| format!("cannot create the cookie {}: {e}", path.display());
    let text = fresh().map_err(fail)?;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(text.as_bytes()).map_err(fail)?;
            Ok(text)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(path),
        Err(e) => Err(fail(e)),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("bt-cookie-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn created_once_with_mode_0400_and_20_letters() {
        let d = dir("create");
        let path = d.join(".erlang.cookie");
        let c = super::create(&path).unwrap();
        assert_eq!(c.len(), 20);
        assert!(c.bytes().all(|b| b.is_ascii_uppercase()), "{c}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o400);
        assert_eq!(super::create(&path).unwrap(), c);
        assert_ne!(super::fresh().unwrap(), c);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_readable_by_others_is_refused_with_a_hint() {
        let d = dir("open");
        let path = d.join("cookie");
        std::fs::write(&path, "SECRET\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = super::read(&path).unwrap_err();
        assert!(e.contains("owner only") && e.contains("chmod 400"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(super::read(&path).unwrap(), "SECRET");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
