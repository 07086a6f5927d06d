//! Capabilities: what a program may touch outside its own values.
//!
//! `bt run`, `bt test` and the REPL grant everything unless `bt run --sandbox` (or an
//! `--allow-*` flag) asks for a sandbox; a program run by an embedder (`Program::embedded`,
//! set by `bt::Engine`) has only what the host granted (`EngineBuilder::grant`,
//! `allow_read`, `allow_write`, `allow_env`; `Engine::grant`). Both fill
//! `Program::capabilities` ([`Grants`]); anything not granted raises `capability_denied`
//! naming the capability and the flag (or builder method) that grants it.
//!
//! **Scopes.** File access is granted whole ([`Capability::File`]) or per directory, reading
//! and writing separately ([`Grants::allow_read`], [`Grants::allow_write`]): a path is allowed
//! when it lies inside one of the directories after canonicalisation ([`check_path`]: `..`,
//! symlinks and relative paths are resolved before the comparison, both for the place the
//! path names and, when it exists, for what it finally resolves to), so neither `..` nor a
//! symlink leads out. Environment variables are granted whole ([`Capability::Env`]) or by
//! name ([`Grants::allow_env`]); host facts (`System hostname`, `System pid`) are
//! [`Capability::Sys`]; `Node connect`/`ping`/`disconnect` are [`Capability::Distribution`]
//! (`--allow-net`). A check happens at the send; a directory swapped for a symlink between
//! the check and the operation is not guarded against (the program would have to create
//! the symlink inside a directory it may write, pointing outside, in that window).
//!
//! Two ways to check: a primitive calls [`require`] (or [`require_path`], [`require_env`])
//! first (File, System, Node and Erlang do); the capabilities that predate this module
//! (timers, console input, `ProcessNavigation system`) are enforced by the engine replacing
//! their methods with [`denied`] when it does not grant them ([`Capability::selectors`]).

mod grants;

use std::path::Path;
use std::sync::atomic::Ordering;

pub use grants::{canonical, check_path, Access, Capability, Grants, Scopes};

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Unwind};
use crate::value::Value;

/// Whether grants are enforced for the running program (an engine's, or a sandbox).
fn enforced(ctx: &Ctx) -> bool {
    ctx.prog.embedded.load(Ordering::Relaxed) || ctx.prog.capabilities.is_sandboxed()
}

/// Whether the running program may use `c`.
pub fn granted(ctx: &Ctx, c: Capability) -> bool {
    !enforced(ctx) || ctx.prog.capabilities.has(c)
}

/// The `capability_denied` exception for `what` (the send) needing `c`.
fn denial(ctx: &Ctx, c: Capability, what: &str) -> Unwind {
    ctx.err_hint(
        ErrorKind::CapabilityDenied,
        format!(
            "{what} needs the {} capability, which is not granted",
            c.name()
        ),
        format!("grant it with {}", c.how_to_grant()),
    )
}

/// The check point: `Ok` when `c` is granted, else `capability_denied` naming the send.
pub fn require(ctx: &Ctx, c: Capability, what: &str) -> Result<(), Unwind> {
    if granted(ctx, c) {
        return Ok(());
    }
    Err(denial(ctx, c, what))
}

/// The check point of a path: `Ok` when the whole file system is granted, or `path` lies
/// inside a directory granted for `access` (see [`check_path`]); else `capability_denied`
/// naming the send, the path and the flag.
pub fn require_path(ctx: &Ctx, access: Access, what: &str, path: &str) -> Result<(), Unwind> {
    if granted(ctx, Capability::File) {
        return Ok(());
    }
    let scopes = ctx.prog.capabilities.scopes.read();
    let dirs = match access {
        Access::Read => &scopes.read,
        Access::Write => &scopes.write,
    };
    if !dirs.is_empty() && check_path(Path::new(path), dirs) {
        return Ok(());
    }
    let granted_dirs = if dirs.is_empty() {
        "none is granted".to_string()
    } else {
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        format!("granted: {}", names.join(", "))
    };
    let cap = match access {
        Access::Read => "file-read",
        Access::Write => "file-write",
    };
    Err(ctx.err_hint(
        ErrorKind::CapabilityDenied,
        format!(
            "{what} '{path}': {} there needs the {cap} capability, which covers only the directories granted by {} ({granted_dirs})",
            access.verb(),
            access.flag()
        ),
        format!(
            "grant the directory with bt run {}=DIR (or {}); `..` and symlinks are resolved before the check",
            access.flag(),
            access.builder()
        ),
    ))
}

/// The check point of an environment variable.
pub fn require_env(ctx: &Ctx, what: &str, name: &str) -> Result<(), Unwind> {
    if granted(ctx, Capability::Env)
        || ctx
            .prog
            .capabilities
            .scopes
            .read()
            .env
            .iter()
            .any(|n| n == name)
    {
        return Ok(());
    }
    Err(ctx.err_hint(
        ErrorKind::CapabilityDenied,
        format!("{what} '{name}': the environment capability is not granted for this variable"),
        format!(
            "grant it with bt run --allow-env={name} (or --allow-env for every variable; EngineBuilder::allow_env)"
        ),
    ))
}

/// The primitive that replaces a method needing a capability the program lacks: finds the
/// capability from the running class and selector.
pub fn denied(ctx: &mut Ctx, _recv: &Value, _args: &[Value]) -> EvalResult {
    let (cls, sel) = (ctx.cur_cls.as_str(), ctx.cur_sel.as_str());
    let c = Capability::ALL
        .into_iter()
        .find(|c| {
            c.selectors()
                .iter()
                .any(|(k, _, sels)| *k == cls && sels.contains(&sel))
        })
        .unwrap_or(Capability::File);
    if granted(ctx, c) {
        // Granted after the engine replaced the method (`Engine::grant`): not reachable
        // through this primitive any more; the host must grant before building.
        return Err(ctx.err(
            ErrorKind::RuntimeError,
            format!("{cls} {sel}: granted after the engine started; grant it in the builder"),
        ));
    }
    Err(denial(ctx, c, &format!("{cls} {sel}")))
}
