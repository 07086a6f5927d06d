//! What a program is granted ([`Grants`]: whole capabilities, directories, variable names)
//! and the path rule that decides whether a path lies inside a granted directory
//! ([`check_path`]). Plain data and file-system checks: a leaf that names nothing of the
//! interpreter (the checks at a send are the parent module's).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use parking_lot::RwLock;

/// What a host may grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// The `File` class: reading, writing and listing the whole file system (scoped file
    /// access is [`Grants::allow_read`] / [`Grants::allow_write`]).
    File,
    /// `Console readLine` / `readLine:` (reading the host's standard input).
    ConsoleRead,
    /// `Node connect`, `ping`, `disconnect` (talking to other nodes).
    Distribution,
    /// `ProcessNavigation system` (the whole process tree, runtime services included).
    ProcessNavigationSystem,
    /// `Timer after:do:` and `Timer every:do:` (callbacks that outlive the evaluation).
    Timers,
    /// The `Erlang` class: calls into Erlang modules (`timer:sleep/1`, the clocks, and with
    /// an Erlang peer named, any function on that node).
    Erlang,
    /// Every environment variable (`System getEnv:`; by name: [`Grants::allow_env`]).
    Env,
    /// Facts about the host: `System hostname`, `System pid`.
    Sys,
}

impl Capability {
    pub const ALL: [Capability; 8] = [
        Capability::File,
        Capability::ConsoleRead,
        Capability::Distribution,
        Capability::ProcessNavigationSystem,
        Capability::Timers,
        Capability::Erlang,
        Capability::Env,
        Capability::Sys,
    ];

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// The name used in messages and by hosts.
    pub fn name(self) -> &'static str {
        match self {
            Capability::File => "File",
            Capability::ConsoleRead => "Console reading",
            Capability::Distribution => "distribution",
            Capability::ProcessNavigationSystem => "ProcessNavigation system",
            Capability::Timers => "timers",
            Capability::Erlang => "Erlang",
            Capability::Env => "environment",
            Capability::Sys => "host facts",
        }
    }

    /// How to grant it: the `bt run` flag and the builder call.
    pub fn how_to_grant(self) -> &'static str {
        match self {
            Capability::File => {
                "bt run --allow-read=DIR / --allow-write=DIR; EngineBuilder::allow_read, \
                 allow_write or grant(Capability::File)"
            }
            Capability::Env => "bt run --allow-env[=NAME]; EngineBuilder::allow_env(NAME) or grant(Capability::Env)",
            Capability::Sys => "bt run --allow-sys; EngineBuilder::grant(Capability::Sys)",
            Capability::Distribution => {
                "bt run --allow-net; EngineBuilder::grant(Capability::Distribution)"
            }
            Capability::ConsoleRead => "EngineBuilder::grant(Capability::ConsoleRead)",
            Capability::ProcessNavigationSystem => {
                "EngineBuilder::grant(Capability::ProcessNavigationSystem)"
            }
            Capability::Timers => "EngineBuilder::grant(Capability::Timers)",
            Capability::Erlang => "EngineBuilder::grant(Capability::Erlang)",
        }
    }

    /// The capabilities `bt run --sandbox` denies until an `--allow-*` flag grants them
    /// back (the others — timers, console input, the process tree, the pure `Erlang`
    /// functions — stay: they touch nothing outside the program).
    pub const SANDBOXED: [Capability; 4] = [
        Capability::File,
        Capability::Env,
        Capability::Sys,
        Capability::Distribution,
    ];

    /// The sends the engine denies by replacing their methods: (class, class side?,
    /// selectors). File checks in its own primitives ([`require`]).
    pub fn selectors(self) -> &'static [(&'static str, bool, &'static [&'static str])] {
        match self {
            Capability::File => &[],
            Capability::ConsoleRead => &[("Console", true, &["readLine", "readLine:"])],
            Capability::Distribution => &[("Node", false, &["connect", "ping", "disconnect"])],
            Capability::ProcessNavigationSystem => &[("ProcessNavigation", true, &["system"])],
            Capability::Timers => &[("Timer", true, &["after:do:", "every:do:"])],
            Capability::Erlang | Capability::Env | Capability::Sys => &[],
        }
    }
}

/// File access: reading or writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Access::Read => "--allow-read",
            Access::Write => "--allow-write",
        }
    }
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Access::Read => "reading",
            Access::Write => "writing",
        }
    }
    pub(crate) fn builder(self) -> &'static str {
        match self {
            Access::Read => "EngineBuilder::allow_read",
            Access::Write => "EngineBuilder::allow_write",
        }
    }
}

/// The directories and variable names of scoped grants.
#[derive(Default, Debug, Clone)]
pub struct Scopes {
    /// Canonical directories whose contents may be read.
    pub read: Vec<PathBuf>,
    /// Canonical directories whose contents may be written.
    pub write: Vec<PathBuf>,
    /// Environment variables that may be read.
    pub env: Vec<String>,
}

/// The capabilities granted to a program (see the module doc).
#[derive(Default, Debug)]
pub struct Grants {
    bits: AtomicU32,
    /// Set by `bt run --sandbox`: the grants are enforced although the program is not
    /// embedded.
    sandboxed: AtomicBool,
    pub(crate) scopes: RwLock<Scopes>,
}

impl Grants {
    pub fn grant(&self, c: Capability) {
        self.bits.fetch_or(c.bit(), Ordering::Relaxed);
    }
    pub fn revoke(&self, c: Capability) {
        self.bits.fetch_and(!c.bit(), Ordering::Relaxed);
    }
    pub fn has(&self, c: Capability) -> bool {
        self.bits.load(Ordering::Relaxed) & c.bit() != 0
    }
    /// Enforces the grants outside an engine (`bt run --sandbox`): grants everything but
    /// [`Capability::SANDBOXED`].
    pub fn sandbox(&self) {
        for c in Capability::ALL {
            if !Capability::SANDBOXED.contains(&c) {
                self.grant(c);
            }
        }
        self.sandboxed.store(true, Ordering::Relaxed);
    }
    /// True under `bt run --sandbox`.
    pub fn is_sandboxed(&self) -> bool {
        self.sandboxed.load(Ordering::Relaxed)
    }
    /// Allows reading inside `dir` (and below it), resolved now: `..` and symlinks in
    /// `dir` are followed once, here.
    pub fn allow_read(&self, dir: &Path) {
        let d = canonical(dir);
        self.scopes.write().read.push(d);
    }
    /// Allows writing inside `dir` (and below it): creating, replacing, appending,
    /// deleting and renaming there.
    pub fn allow_write(&self, dir: &Path) {
        let d = canonical(dir);
        self.scopes.write().write.push(d);
    }
    /// Allows reading the environment variable `name`.
    pub fn allow_env(&self, name: &str) {
        self.scopes.write().env.push(name.to_string());
    }
    /// The scoped grants.
    pub fn scopes(&self) -> Scopes {
        self.scopes.read().clone()
    }
}

/// `dir` made absolute and canonical as far as it exists (the rest appended as written).
pub fn canonical(dir: &Path) -> PathBuf {
    let abs = absolute(dir);
    lenient(&abs).unwrap_or(abs)
}

/// `p` relative to the working directory when it is relative (no resolution).
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match std::env::current_dir() {
        Ok(d) => d.join(p),
        Err(_) => p.to_path_buf(),
    }
}

/// `abs` canonicalised through its longest existing ancestor, the missing rest appended;
/// None when the missing rest holds `..` (it cannot be resolved, so it is not allowed).
fn lenient(abs: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut cur = abs;
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return Some(out);
        }
        // `file_name` is None for a path ending in `..` (or the root).
        rest.push(cur.file_name()?.to_owned());
        cur = cur.parent()?;
    }
}

/// True when `path` lies inside one of `dirs` (canonical directories): both the place it
/// names (its directory resolved, its last name as written — what a rename or delete acts
/// on) and, when it exists, what it resolves to (what an open reads or appends to). A
/// symlink that cannot be resolved (dangling) is refused: opening it could create its
/// target anywhere.
pub fn check_path(path: &Path, dirs: &[PathBuf]) -> bool {
    let abs = absolute(path);
    let inside = |p: &Path| dirs.iter().any(|d| p.starts_with(d));
    let place = match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => lenient(parent).map(|p| p.join(name)),
        _ => lenient(&abs),
    };
    if !place.as_deref().is_some_and(inside) {
        return false;
    }
    match std::fs::symlink_metadata(&abs) {
        Err(_) => true,
        Ok(_) => abs.canonicalize().is_ok_and(|t| inside(&t)),
    }
}
