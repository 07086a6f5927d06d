//! The cluster cookie (LANGUAGE.md 8.1, 8.11): the shared secret of the handshake. It comes
//! from the environment (`BT_COOKIE`) or the per-user file `cookie` in the configuration
//! directory (`BT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/bt`, else `~/.config/bt`), created
//! with a random value and mode 0600 when missing. bt code can neither read nor set it, and
//! it never crosses the wire (only MACs keyed by it do).

use std::io::{Read, Write};
use std::path::PathBuf;

/// `n` random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b)
}

/// The directory holding the cookie file.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("BT_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("bt"));
    }
    let home = std::env::var_os("HOME").filter(|d| !d.is_empty())?;
    Some(PathBuf::from(home).join(".config").join("bt"))
}

/// The cookie: `BT_COOKIE`, else the cookie file (created if missing).
pub fn load() -> Result<Vec<u8>, String> {
    if let Some(c) = std::env::var_os("BT_COOKIE").filter(|c| !c.is_empty()) {
        return Ok(c.into_encoded_bytes());
    }
    let dir = config_dir()
        .ok_or("no cookie: set BT_COOKIE, or HOME so that ~/.config/bt/cookie can be used")?;
    let path = dir.join("cookie");
    match std::fs::read(&path) {
        Ok(c) => return non_empty(c, &path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read the cookie {}: {e}", path.display())),
    }
    create(&dir, &path)
}

fn non_empty(c: Vec<u8>, path: &std::path::Path) -> Result<Vec<u8>, String> {
    let c = c.trim_ascii().to_vec();
    if c.is_empty() {
        return Err(format!("the cookie file {} is empty", path.display()));
    }
    Ok(c)
}

fn create(dir: &std::path::Path, path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let fail = |e: std::io::Error| format!("cannot create the cookie {}: {e}", path.display());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    let bytes: [u8; 20] = random_bytes().map_err(fail)?;
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(text.as_bytes()).map_err(fail)?;
            Ok(text.into_bytes())
        }
        // Another node created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let c = std::fs::read(path).map_err(fail)?;
            non_empty(c, path)
        }
        Err(e) => Err(fail(e)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn random_bytes_differ() {
        let a: [u8; 32] = super::random_bytes().unwrap();
        let b: [u8; 32] = super::random_bytes().unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn cookie_file_is_created_once_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::scratch::dir("cookie");
        let path = dir.join("cookie");
        let _ = std::fs::remove_dir_all(&dir);
        let c = super::create(&dir, &path).unwrap();
        assert_eq!(c.len(), 40);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second creation keeps the first value.
        assert_eq!(super::create(&dir, &path).unwrap(), c);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
