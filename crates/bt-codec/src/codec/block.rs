//! Block identity on the wire.
//!
//! A block crosses as a reference to its code plus copies of `self` and its captured values.
//! The code is named by where it was written — the defining class, side and selector of the
//! method (or the path of the loaded source unit, for top-level code) — plus a fingerprint
//! (FNV-1a 64) of that method's or unit's source text, plus the block's ordinal in it (its
//! lowering id: real blocks numbered from 1 in source order, see `FnCode::blocks`).
//!
//! The receiving node resolves the identity against its own loaded code: same class, method
//! (or unit path and fingerprint, through `Program::unit_blocks`) give the block's code there
//! and a live block. Anything else (class, method or unit missing, different source, a
//! different capture layout, code the encoder could not name) gives a block of the same arity
//! whose invocation raises `remote_code_mismatch` with the hint of 8.6 — the error appears
//! where the block runs, as specified.

use crate::interp::block_code::ClosureExt;
use crate::interp::class::ClassExt;
use std::sync::Arc;

use crate::interp::block_code::code_of;
use crate::interp::eval::code::{FnCode, Loc, Node, SendNode, NO_FILE};
use crate::interp::eval::{Closure, Ctx, Method, VarCell};
use crate::interp::program::Program;
use crate::value::{ClassRef, Sym, Value};

use super::error::{kind, CodecError, MISMATCH_HINT};

/// Where a block's code was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Method {
        class: Sym,
        class_side: bool,
        selector: Sym,
    },
    /// Top-level code of a loaded source unit (its path).
    Unit(String),
    /// Code the encoder could not name (a replaced method, a field default).
    Unknown,
}

/// The identity of a block's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockId {
    pub origin: Origin,
    /// FNV-1a 64 of the method's / unit's source text.
    pub fingerprint: u64,
    /// The block's lowering id within that source (1, 2, … in source order).
    pub ordinal: u32,
    pub arity: u32,
}

/// FNV-1a, 64 bits: stable across builds and platforms (unlike `DefaultHasher`).
pub(crate) fn fingerprint(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The identity of `b`'s code. `prog` (when known) names top-level units.
pub fn identity(b: &Closure, prog: Option<&Program>) -> BlockId {
    let ordinal = b.fn_code().fid;
    let arity = b.fn_code().nparams;
    let unknown = BlockId {
        origin: Origin::Unknown,
        fingerprint: 0,
        ordinal,
        arity,
    };
    match &b.mclass {
        Some(c) => {
            // A short read of the method table (no bt code runs while it is held).
            let table = if b.mside {
                c.class_methods().read()
            } else {
                c.methods().read()
            };
            for (sel, m) in table.iter() {
                // A library method not lowered yet cannot have made this block.
                let cm = match m {
                    Method::Compiled(cm) => Some(cm),
                    Method::Lazy(l) => l.get(),
                    _ => None,
                };
                if let Some(cm) = cm {
                    if cm
                        .code
                        .blocks
                        .iter()
                        .any(|x| std::ptr::eq(Arc::as_ptr(x), b.fn_code()))
                    {
                        return BlockId {
                            origin: Origin::Method {
                                class: c.name,
                                class_side: b.mside,
                                selector: *sel,
                            },
                            fingerprint: fingerprint(&cm.source),
                            ordinal,
                            arity,
                        };
                    }
                }
            }
            unknown
        }
        None => {
            let file = b.fn_code().file;
            let Some(prog) = prog.filter(|_| file != NO_FILE) else {
                return unknown;
            };
            // Sent away, it may come back after every local reference is gone: its code
            // (and source) stays findable (`interp::source_gc`).
            prog.pin_block(&b.fn_code_arc());
            let files = prog.files.read();
            match files.get(file as usize) {
                Some(f) => BlockId {
                    origin: Origin::Unit(f.path.clone()),
                    fingerprint: fingerprint(&f.src),
                    ordinal,
                    arity,
                },
                None => unknown,
            }
        }
    }
}

/// The class and side defining a block's method; None for top-level code.
type DefinedIn = Option<(ClassRef, bool)>;

/// The code `id` names in this program, if it is loaded with the same source: (defining
/// class and side, or None for top-level code; the block's code).
fn find_code(prog: &Program, id: &BlockId) -> Option<(DefinedIn, Arc<FnCode>)> {
    let (owner, blocks) = match &id.origin {
        Origin::Method {
            class,
            class_side,
            selector,
        } => {
            let c = prog.class_by_sym(*class)?;
            let m = {
                let t = if *class_side {
                    c.class_methods().read()
                } else {
                    c.methods().read()
                };
                t.get(selector).map(Method::forced)?
            };
            let Method::Compiled(cm) = m else {
                return None;
            };
            if fingerprint(&cm.source) != id.fingerprint {
                return None;
            }
            (Some((c, *class_side)), cm.code.blocks.clone())
        }
        Origin::Unit(path) => {
            // The latest loaded file of that path and source (a REPL reuses its path).
            let file = {
                let files = prog.files.read();
                files
                    .iter()
                    .rposition(|f| f.path == *path && fingerprint(&f.src) == id.fingerprint)?
            };
            let blocks = prog.unit_blocks.read().get(&(file as u32)).cloned();
            let blocks = blocks.or_else(|| prog.pending_unit_blocks(file as u32))?;
            (None, blocks)
        }
        Origin::Unknown => return None,
    };
    let code = blocks.iter().find(|b| b.fid == id.ordinal)?.clone();
    (code.nparams == id.arity).then_some((owner, code))
}

thread_local! {
    static HOME: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
}

/// Runs `f` (which decodes values) giving the blocks it decodes the home `home` (a remote
/// call's relay).
pub fn with_home<R>(home: u64, f: impl FnOnce() -> R) -> R {
    let outer = HOME.with(|h| h.replace(home));
    let r = f();
    HOME.with(|h| h.set(outer));
    r
}

/// A block for `id` in this program: the real code with `recv` and `captured`, or (when the
/// code is not here at the same version) a block of the same arity raising
/// `remote_code_mismatch` when invoked.
pub fn resolve(ctx: &Ctx, id: &BlockId, recv: Value, captured: Vec<Value>) -> Value {
    let serial = ctx
        .prog
        .block_serial
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some((owner, code)) = find_code(&ctx.prog, id) {
        if code.upvals.len() == captured.len() {
            let upvals: Vec<Arc<VarCell>> = captured
                .into_iter()
                .map(|v| Arc::new(VarCell::new(v)))
                .collect();
            return Value::Block(Arc::new(Closure {
                code: code_of(&code),
                recv,
                upvals: upvals.into_boxed_slice(),
                // A `^` in a block that crossed to another node has no live home here,
                // unless it came in a sync call that relays it ([`with_home`]).
                home: HOME.with(|h| h.get()),
                mside: owner.as_ref().is_some_and(|o| o.1),
                mclass: owner.map(|o| o.0),
                serial,
            }));
        }
    }
    mismatch_block(ctx, id, serial)
}

/// `Foo>>bar:` / `Foo class>>bar` / `unit app.bt` for messages.
pub fn describe(o: &Origin) -> String {
    match o {
        Origin::Method {
            class,
            class_side: true,
            selector,
        } => format!("{class} class>>{selector}"),
        Origin::Method {
            class, selector, ..
        } => format!("{class}>>{selector}"),
        Origin::Unit(p) => format!("top-level code of {p}"),
        Origin::Unknown => "code that could not be named".to_string(),
    }
}

/// The error a mismatched block raises.
pub(crate) fn mismatch_error(id: &BlockId) -> CodecError {
    let msg = format!(
        "a block from {} is not loaded at the same version on this node",
        describe(&id.origin)
    );
    CodecError::new(kind::REMOTE_CODE_MISMATCH, msg, String::new()).with_hint(MISMATCH_HINT)
}

fn mismatch_block(ctx: &Ctx, id: &BlockId, serial: u64) -> Value {
    let exc = mismatch_error(id).to_exception(&ctx.prog);
    let body = Node::Send(Box::new(SendNode {
        recv: Node::Const(exc),
        sel: Sym::new("signal"),
        args: Vec::new(),
        loc: Loc {
            file: NO_FILE,
            pos: 0,
        },
        pure_args: true,
    }));
    let mut code = FnCode {
        nparams: id.arity,
        nslots: id.arity,
        body,
        file: NO_FILE,
        ..FnCode::default()
    };
    crate::interp::eval::compile::compile_body(&mut code);
    Value::Block(Arc::new(Closure {
        code: code_of(&Arc::new(code)),
        recv: Value::Nil,
        upvals: Box::new([]),
        home: u64::MAX,
        mclass: None,
        mside: false,
        serial,
    }))
}

/// Reads the `shapeVersion` a class declares (a class method answering an integer
/// literal, inherited; default 1). Read from the method's source, so it needs no evaluation.
pub fn shape_version(c: &ClassRef) -> i64 {
    let Some((Method::Compiled(m), _)) = c.lookup_class_side(Sym::new("shapeVersion")) else {
        return 1;
    };
    literal_answer(&m.source).unwrap_or(1)
}

/// The Integer literal a one-expression method answers: `class shapeVersion => 2`.
fn literal_answer(src: &str) -> Option<i64> {
    let body = src.split_once("=>")?.1;
    let body = body.split("//").next()?.trim();
    let body = body.strip_prefix('^').unwrap_or(body).trim();
    body.replace('_', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_answers() {
        assert_eq!(literal_answer("class shapeVersion => 2"), Some(2));
        assert_eq!(
            literal_answer("class shapeVersion =>\n    ^ 12 // bumped"),
            Some(12)
        );
        assert_eq!(literal_answer("class shapeVersion => self foo"), None);
    }

    #[test]
    fn fingerprint_is_fnv1a() {
        assert_eq!(fingerprint(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
