//! `File`: class-side file-system access over `std::fs`. Paths are Strings,
//! relative to the working directory.
//!
//! * Every primitive passes the capability check first ([`path_arg`]: the whole file system
//!   granted, or the path inside a directory granted for reading or writing,
//!   `capability::require_path`) — the one check point an embedding host or `bt run
//!   --sandbox` controls.
//! * Failures answer `Result error:` with an exception of kind `file_not_found`,
//!   `permission_denied`, `is_a_directory` or `io_error` whose message names the path; text that
//!   is not UTF-8 is `type_error` (read it with `readBinary:`). Predicates (`exists:` …) answer
//!   Booleans; a non-String path raises `type_error`.
//! * Writes are atomic: the bytes go to a fresh temporary file in the target's directory, are
//!   flushed to disk, and the file is renamed over the target (parents are created first).
//! * Lines are read lazily: `File lines:` answers a Stream that opens the file on each traversal
//!   and reads one line at a time (`file_lines.rs`); `File open: path do: [:h | …]` lends a
//!   handle whose `lines` Stream reads from the open file, closed when the block ends.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::interp::capability::{granted, require, require_path, Access, Capability};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::fault::article_class;
use crate::interp::prims::file_lines;
use crate::value::{Ref, Value};

pub fn register(p: &mut Prims) {
    let f = "File";
    p.add_class(f, "exists:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File exists:", &a[0])?;
        Ok(Value::bool(Path::new(&p).exists()))
    });
    p.add_class(f, "isFile:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File isFile:", &a[0])?;
        Ok(Value::bool(Path::new(&p).is_file()))
    });
    p.add_class(f, "isDirectory:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File isDirectory:", &a[0])?;
        Ok(Value::bool(Path::new(&p).is_dir()))
    });
    p.add_class(f, "readAll:", read_all);
    p.add_class(f, "readBinary:", read_binary);
    p.add_class(f, "writeAll:contents:", write_all);
    p.add_class(f, "appendAll:contents:", append_all);
    p.add_class(f, "size:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File size:", &a[0])?;
        let r = std::fs::metadata(&p).map(|m| Value::Int(m.len() as i64));
        answer(ctx, &p, r)
    });
    p.add_class(f, "listDirectory:", list_directory);
    p.add_class(f, "mkdir:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Write, "File mkdir:", &a[0])?;
        let r = std::fs::create_dir(&p).map(|_| Value::str(p.clone()));
        answer(ctx, &p, r)
    });
    p.add_class(f, "mkdirAll:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Write, "File mkdirAll:", &a[0])?;
        let r = std::fs::create_dir_all(&p).map(|_| Value::str(p.clone()));
        answer(ctx, &p, r)
    });
    p.add_class(f, "delete:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Write, "File delete:", &a[0])?;
        let r = if Path::new(&p).is_dir() {
            std::fs::remove_dir(&p)
        } else {
            std::fs::remove_file(&p)
        };
        answer(ctx, &p, r.map(|_| Value::str(p.clone())))
    });
    p.add_class(f, "deleteAll:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Write, "File deleteAll:", &a[0])?;
        let r = match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p),
            Ok(_) => std::fs::remove_file(&p),
            Err(e) => Err(e),
        };
        answer(ctx, &p, r.map(|_| Value::str(p.clone())))
    });
    p.add_class(f, "rename:to:", |ctx, _, a| {
        let from = path_arg(ctx, Access::Write, "File rename:to:", &a[0])?;
        let to = path_arg(ctx, Access::Write, "File rename:to:", &a[1])?;
        let r = std::fs::rename(&from, &to).map(|_| Value::str(to.clone()));
        answer(ctx, &from, r)
    });
    p.add_class(f, "absolutePath:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File absolutePath:", &a[0])?;
        let r = std::path::absolute(&p).map(|x| Value::str(clean(&x)));
        answer(ctx, &p, r)
    });
    p.add_class(f, "cwd", |ctx, _, _| {
        dir_answer(ctx, "File cwd", std::env::current_dir())
    });
    p.add_class(f, "tempDirectory", |ctx, _, _| {
        dir_answer(ctx, "File tempDirectory", Ok(std::env::temp_dir()))
    });
    p.add_class(f, "lines:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File lines:", &a[0])?;
        // Fail now (as a Result) when the file cannot be opened; read nothing yet.
        if let Err(e) = std::fs::File::open(&p).and_then(|f| check_not_dir(&f)) {
            return fail(ctx, &p, &e);
        }
        let s = file_lines::path_lines(ctx, &p)?;
        Ok(ctx.make_ok(s))
    });
    p.add_class(f, "open:do:", |ctx, _, a| {
        let p = path_arg(ctx, Access::Read, "File open:do:", &a[0])?;
        let file = match std::fs::File::open(&p).and_then(|f| check_not_dir(&f).map(|_| f)) {
            Ok(f) => f,
            Err(e) => return fail(ctx, &p, &e),
        };
        file_lines::open_do(ctx, &p, file, &a[1])
    });
    file_lines::register(p);
}

/// The path argument (a String), after the capability check for `access` to it.
pub fn path_arg(ctx: &Ctx, access: Access, what: &str, v: &Value) -> Result<String, Unwind> {
    if !granted(ctx, Capability::File) {
        let s = ctx.prog.capabilities.scopes();
        if s.read.is_empty() && s.write.is_empty() {
            require(ctx, Capability::File, what)?;
        }
    }
    match v {
        Value::Str(s) => {
            require_path(ctx, access, what, s)?;
            Ok(s.to_string())
        }
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!("{what} expects a path String, got {n}")))
        }
    }
}

/// A directory the program learns about (`File cwd`, `File tempDirectory`): answered when
/// it may be read.
fn dir_answer(ctx: &Ctx, what: &str, d: std::io::Result<PathBuf>) -> EvalResult {
    match d {
        Ok(d) => {
            let s = d.to_string_lossy().into_owned();
            require_path(ctx, Access::Read, what, &s)?;
            Ok(Value::str(s))
        }
        Err(e) => Err(ctx.err(ErrorKind::IoError, format!("{what}: {e}"))),
    }
}

fn clean(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `is_a_directory` for an opened directory (opening one for reading succeeds on Unix).
fn check_not_dir(f: &std::fs::File) -> std::io::Result<()> {
    if f.metadata()?.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    Ok(())
}

/// The kind and message of an I/O error on `path`.
pub fn io_fault(path: &str, e: &std::io::Error) -> (ErrorKind, String) {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => (ErrorKind::FileNotFound, format!("file not found: {path}")),
        K::PermissionDenied => (
            ErrorKind::PermissionDenied,
            format!("permission denied: {path}"),
        ),
        K::IsADirectory => (ErrorKind::IsADirectory, format!("is a directory: {path}")),
        K::InvalidData => (
            ErrorKind::TypeError,
            format!("{path} is not valid UTF-8 text (read it with File readBinary:)"),
        ),
        _ => (
            ErrorKind::IoError,
            format!("I/O error on {path}: {}", plain(e)),
        ),
    }
}

/// The OS message without Rust's " (os error N)" suffix.
fn plain(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `Result error:` with the exception for `e` on `path`.
pub fn fail(ctx: &mut Ctx, path: &str, e: &std::io::Error) -> EvalResult {
    let (kind, msg) = io_fault(path, e);
    match ctx.err(kind, msg) {
        Unwind::Error(exc) => Ok(ctx.make_error(exc)),
        other => Err(other),
    }
}

/// `Result ok:` of the value, or `Result error:` for the I/O error.
fn answer(ctx: &mut Ctx, path: &str, r: std::io::Result<Value>) -> EvalResult {
    match r {
        Ok(v) => Ok(ctx.make_ok(v)),
        Err(e) => fail(ctx, path, &e),
    }
}

fn read_bytes(ctx: &mut Ctx, p: &str) -> std::io::Result<Vec<u8>> {
    let f = std::fs::File::open(p)?;
    check_not_dir(&f)?;
    let len = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
    // Reading is linear in the size: a reduction per 64 bytes, up front.
    if ctx.charge(len).is_err() {
        return Err(std::io::Error::other("interrupted"));
    }
    let mut buf = Vec::with_capacity(len);
    std::io::Read::read_to_end(&mut &f, &mut buf)?;
    Ok(buf)
}

fn read_all(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let p = path_arg(ctx, Access::Read, "File readAll:", &a[0])?;
    let r = read_bytes(ctx, &p).and_then(|b| {
        String::from_utf8(b)
            .map(Value::str)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))
    });
    answer(ctx, &p, r)
}

fn read_binary(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let p = path_arg(ctx, Access::Read, "File readBinary:", &a[0])?;
    let r = read_bytes(ctx, &p).map(|b| Value::Binary(Ref::new(b)));
    answer(ctx, &p, r)
}

/// The bytes to write: a String (UTF-8) or a Binary.
fn contents<'a>(ctx: &Ctx, what: &str, v: &'a Value) -> Result<&'a [u8], Unwind> {
    match v {
        Value::Str(s) => Ok(s.as_bytes()),
        Value::Binary(b) => Ok(b.as_slice()),
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!(
                "{what} contents must be a String or a Binary, got {n}"
            )))
        }
    }
}

fn write_all(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let p = path_arg(ctx, Access::Write, "File writeAll:contents:", &a[0])?;
    let bytes = contents(ctx, "File writeAll:contents:", &a[1])?;
    ctx.charge(bytes.len())?;
    let r = write_atomic(Path::new(&p), bytes).map(|_| Value::str(p.clone()));
    answer(ctx, &p, r)
}

fn append_all(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let p = path_arg(ctx, Access::Write, "File appendAll:contents:", &a[0])?;
    let bytes = contents(ctx, "File appendAll:contents:", &a[1])?;
    ctx.charge(bytes.len())?;
    let r = (|| {
        if let Some(dir) = parent(Path::new(&p)) {
            std::fs::create_dir_all(dir)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&p)?;
        f.write_all(bytes)?;
        f.flush()
    })()
    .map(|_| Value::str(p.clone()));
    answer(ctx, &p, r)
}

fn parent(p: &Path) -> Option<&Path> {
    p.parent().filter(|d| !d.as_os_str().is_empty())
}

/// Writes `bytes` to `target` through a temporary file in the same directory renamed into
/// place: readers see the old contents or the new, never a partial file.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    if target.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    let dir: PathBuf = match parent(target) {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.to_path_buf()
        }
        None => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    loop {
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.bt-tmp-{}-{n}", std::process::id()));
        let mut f = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        // Keep the target's permissions when it exists.
        if let Ok(m) = std::fs::metadata(target) {
            let _ = f.set_permissions(m.permissions());
        }
        let done = f
            .write_all(bytes)
            .and_then(|_| f.sync_all())
            .and_then(|_| std::fs::rename(&tmp, target));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        return done;
    }
}

fn list_directory(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let p = path_arg(ctx, Access::Read, "File listDirectory:", &a[0])?;
    let r = (|| -> std::io::Result<Value> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(&p)? {
            names.push(e?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Value::list(names.into_iter().map(Value::str)))
    })();
    let r = match r {
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        )),
        other => other,
    };
    answer(ctx, &p, r)
}
