//! The `Erlang` class: `Erlang lists` answers a module proxy (an `ErlangModule`); a
//! message to the proxy calls the function named by the selector's first keyword with the
//! arguments positionally (`Erlang lists seq: 1 with: 10` is `lists:seq(1, 10)`; a unary
//! message calls the arity-0 function). Terms map as in 8.12: Integers, Floats, Strings
//! (binaries), Symbols (atoms), `true`/`false`/`nil`, Lists and Arrays (lists), Tuples and
//! Dictionaries (maps); blocks stand for funs. Charlists (`integer_to_list/1`) are Lists of
//! Integers, as in Erlang.
//!
//! bt implements the pure, commonly used functions of `erlang`, `lists`, `maps`, `string`,
//! `binary`, `math`, `timer`, `unicode`, `crypto`, `base64`, `proplists`, `os`, `calendar`,
//! `io`, `io_lib` and `file:read_file` itself ([`call`]). A call that fails with `badarg` while it passed Strings is tried once
//! more with those Strings as charlists (Erlang APIs that take strings want charlists), and a
//! charlist it answers then comes back as a String. Errors are raised as Erlang
//! raises them, as exceptions whose kind is the Erlang reason (`badarg`, `badkey`, `badmap`,
//! `function_clause`, `undef`; `badarith` keeps its TypeError) and whose class is RuntimeError;
//! the message names `module:function/arity`. A call with no native implementation runs on
//! the Erlang peer when one is named (`bt run --erlang-peer NODE`, [`forward`]: `rpc:call/4`
//! through the distribution layer, its `{badrpc, …}` read back into the same kinds); without
//! one it is `undef`. The class is a capability (`Capability::Erlang`) under an embedding host.

use std::any::Any;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::capability::{require, Capability};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::value::{ClassRef, NativeObj, Sym, Value};

mod crypto;
mod exports;
mod external;
mod format;
pub mod hamt;
mod lists;
mod maps;
mod modules;
mod os;
mod phash;
mod pretty;
mod proplists;
mod reserve;
mod terms;
mod text;

use terms::{Fail, R};

/// The proxy for one Erlang module.
pub(crate) struct ModuleProxy {
    class: ClassRef,
    pub module: Sym,
}

impl NativeObj for ModuleProxy {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!("#ErlangModule<{}>", self.module)
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<ModuleProxy>()
            .is_some_and(|o| o.module == self.module)
    }
    fn hash_code(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.module.as_str().hash(&mut h);
        h.finish()
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let mut k: Vec<u64> = "ErlangModule".chars().map(|c| c as u64 + 1).collect();
        k.push(0);
        k.extend(self.module.as_str().chars().map(|c| c as u64 + 1));
        (9, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub fn register(p: &mut Prims) {
    p.add_class("Erlang", "module:", |ctx, _, a| {
        require(ctx, Capability::Erlang, "Erlang")?;
        let module = match &a[0] {
            Value::Symbol(s) => *s,
            Value::Str(s) => Sym::new(s),
            other => {
                let n = crate::interp::prims::fault::article_class(other);
                return Err(ctx.type_err(format!("Erlang module: expects a Symbol, got {n}")));
            }
        };
        let class = ctx
            .class_named("ErlangModule")
            .unwrap_or_else(|| ctx.prog.core.object.clone());
        Ok(native(ModuleProxy { class, module }))
    });
    p.add("ErlangModule", "call:args:", |ctx, rv, a| {
        let module = match downcast::<ModuleProxy>(rv) {
            Some(m) => m.module,
            None => return Err(ctx.type_err("expected an ErlangModule")),
        };
        let sel = match &a[0] {
            Value::Symbol(s) => *s,
            Value::Str(s) => Sym::new(s),
            _ => return Err(ctx.type_err("ErlangModule call:args: expects a selector Symbol")),
        };
        let args = match &a[1] {
            Value::List(l) => l.iter().cloned().collect::<Vec<_>>(),
            Value::Array(x) => x.to_vec(),
            _ => return Err(ctx.type_err("ErlangModule call:args: expects a List of arguments")),
        };
        apply(ctx, module.as_str(), sel.as_str(), &args)
    });
    p.add("ErlangModule", "printString", |ctx, rv, _| {
        match downcast::<ModuleProxy>(rv) {
            Some(m) => Ok(Value::str(m.print_string())),
            None => Err(ctx.type_err("expected an ErlangModule")),
        }
    });
}

/// Calls `module:function(args…)`; `selector` is the bt selector (its first keyword names
/// the function).
pub fn apply(ctx: &mut Ctx, module: &str, selector: &str, args: &[Value]) -> EvalResult {
    require(ctx, Capability::Erlang, "Erlang")?;
    let function = selector.split(':').next().unwrap_or(selector);
    let r = match run(ctx, module, function, args) {
        // Strings passed where Erlang wants a charlist: once more with charlists, and a
        // charlist result back as a String.
        Err(Fail::Badarg) if args.iter().any(|a| matches!(a, Value::Str(_))) => {
            let chars: Vec<Value> = args
                .iter()
                .map(|a| match a {
                    Value::Str(s) => terms::charlist(s),
                    other => other.clone(),
                })
                .collect();
            match run(ctx, module, function, &chars) {
                Ok(v) => Ok(charlist_to_string(v)),
                Err(Fail::Raised(u)) => Err(Fail::Raised(u)),
                Err(_) => Err(Fail::Badarg),
            }
        }
        r => r,
    };
    r.map_err(|f| raise(ctx, module, function, args.len(), f))
}

/// The native function, else the Erlang peer's.
fn run(ctx: &mut Ctx, module: &str, function: &str, args: &[Value]) -> R {
    match call(ctx, module, function, args) {
        Err(Fail::Undef) => match ctx.prog.erlang_peer.get().copied() {
            Some(peer) => forward(ctx, peer, module, function, args),
            None => Err(Fail::Undef),
        },
        r => r,
    }
}

/// A non-empty list of character codes as a String; any other value unchanged.
fn charlist_to_string(v: Value) -> Value {
    let is_chars = match &v {
        Value::List(l) => {
            !l.is_empty()
                && l.iter().all(|x| {
                    matches!(x, Value::Int(i) if u32::try_from(*i).ok().and_then(char::from_u32).is_some())
                })
        }
        _ => false,
    };
    if !is_chars {
        return v;
    }
    match terms::chardata(&v) {
        Some(s) => Value::str(s),
        None => v,
    }
}

/// `module:function(args…)` run on the Erlang peer by rpc (`rpc:call/4`); a
/// `{badrpc, Reason}` answer becomes the failure Erlang reported.
fn forward(ctx: &mut Ctx, peer: Sym, module: &str, function: &str, args: &[Value]) -> R {
    let op = crate::interp::distribution::ErlProc::Apply {
        module: Sym::new(module),
        function: Sym::new(function),
        args: args.to_vec(),
    };
    let v = crate::interp::actor::prims::node::erl::erl(ctx, peer, op)?;
    let reason = match &v {
        Value::Tuple(t)
            if t.len() == 2 && t[0].as_sym().is_some_and(|s| s.as_str() == "badrpc") =>
        {
            t[1].clone()
        }
        _ => return Ok(v),
    };
    // `{'EXIT', {Reason, Stack}}` for an error, `{'EXIT', Reason}` for an exit; anything
    // else (`nodedown`, …) is rpc's own reason.
    let reason = match &reason {
        Value::Tuple(t) if t.len() == 2 && t[0].as_sym().is_some_and(|s| s.as_str() == "EXIT") => {
            match &t[1] {
                Value::Tuple(e) if e.len() == 2 && matches!(e[1], Value::List(_)) => e[0].clone(),
                r => r.clone(),
            }
        }
        r => r.clone(),
    };
    Err(peer_failure(ctx, &reason))
}

/// The failure for an Erlang error reason from the peer.
fn peer_failure(ctx: &mut Ctx, reason: &Value) -> Fail {
    match reason {
        Value::Symbol(s) => match s.as_str() {
            "badarg" => Fail::Badarg,
            "badarith" => Fail::Badarith,
            "function_clause" => Fail::FunctionClause,
            "undef" => Fail::Undef,
            _ => Fail::Other(*s, String::new()),
        },
        Value::Tuple(t)
            if t.len() == 2 && t[0].as_sym().is_some_and(|s| s.as_str() == "badkey") =>
        {
            Fail::Badkey(t[1].clone())
        }
        Value::Tuple(t)
            if t.len() == 2 && t[0].as_sym().is_some_and(|s| s.as_str() == "badmap") =>
        {
            Fail::Badmap(t[1].clone())
        }
        Value::Tuple(t) if t.first().and_then(Value::as_sym).is_some() => {
            let kind = t[0].as_sym().unwrap_or_else(|| Sym::new("error"));
            Fail::Other(kind, format!(" {}", print(ctx, reason)))
        }
        other => Fail::Other(Sym::new("error"), format!(" {}", print(ctx, other))),
    }
}

/// The exception for a failed call.
fn raise(ctx: &mut Ctx, module: &str, function: &str, arity: usize, f: Fail) -> Unwind {
    let mfa = format!("{module}:{function}/{arity}");
    let (reason, detail, hint) = match f {
        Fail::Raised(u) => return u,
        Fail::Undef => (
            "undef",
            String::new(),
            match ctx.prog.erlang_peer.get() {
                Some(peer) => format!(
                    "the Erlang peer {peer} has no function {module}:{function}/{arity}; \
                     check spelling, arity and that the module is loaded there"
                ),
                None if modules::known(module) => format!(
                    "{module}:{function}/{arity} is not among the functions bt provides; \
                     check spelling and arity, or name an Erlang peer to run it with \
                     --erlang-peer NODE"
                ),
                None => format!(
                    "Erlang module '{module}' is not available (bt implements erlang, lists, \
                     maps, string, binary, math, timer, unicode, crypto, base64, proplists, os, \
                     calendar, io and io_lib); name an Erlang peer to run it with --erlang-peer NODE"
                ),
            },
        ),
        Fail::Other(reason, detail) => {
            return terms::runtime_error(
                ctx,
                reason,
                format!("{mfa}: {reason}{detail}"),
                format!("Erlang function raised '{reason}'"),
                Some((Sym::new(function), Sym::new(module))),
            )
        }
        Fail::Badarg => (
            "badarg",
            String::new(),
            "an argument has the wrong type or value".to_string(),
        ),
        Fail::Badarith => {
            return ctx.err_hint(
                ErrorKind::Other(Sym::new("badarith")),
                format!("{mfa}: bad arithmetic operation"),
                "Erlang function raised 'badarith'",
            )
        }
        Fail::Badkey(k) => (
            "badkey",
            format!(" {}", print(ctx, &k)),
            "the key is not in the map".to_string(),
        ),
        Fail::Badmap(m) => (
            "badmap",
            format!(" {}", print(ctx, &m)),
            "the argument is not a map".to_string(),
        ),
        Fail::FunctionClause => (
            "function_clause",
            String::new(),
            "Erlang function raised 'function_clause'. Check argument types and values".to_string(),
        ),
    };
    ctx.err_full(
        ErrorKind::Other(Sym::new(reason)),
        format!("{mfa}: {reason}{detail}"),
        Some(hint),
        Some(Sym::new(function)),
        Some(Sym::new(module)),
    )
}

fn print(ctx: &mut Ctx, v: &Value) -> String {
    crate::interp::print::element_print(ctx, v).unwrap_or_else(|_| "?".to_string())
}

/// Dispatches to the module implementations. A call first reserves the bytes it may
/// allocate, so past a memory limit it ends with `memory_limit` before it allocates: a call
/// whose result can be much larger than its arguments by its own size
/// ([`reserve::amplified_bytes`]); any other by its arguments' size
/// ([`reserve::copied_bytes`]), paying the walk over them in reductions too (a walk over a
/// million elements is not one reduction: the preemption point and the memory hook come as
/// they would for the same work in bt).
pub(crate) fn call(ctx: &mut Ctx, module: &str, f: &str, a: &[Value]) -> R {
    match reserve::amplified_bytes(module, f, a) {
        Some(bytes) => ctx.reserve(bytes)?,
        None => {
            let copied = reserve::copied_bytes(a);
            ctx.reserve(copied)?;
            // The walk over the arguments: a unit a byte of them.
            ctx.charge(copied / 2)?;
        }
    }
    if f == "module_info" && a.len() <= 1 {
        if let Some(e) = exports::of(module) {
            return module_info(module, e, a.first());
        }
    }
    match module {
        "erlang" => match (f, a) {
            ("apply", [m, fname, args]) => {
                let (m, fname) = (modules::atom_name(m)?, modules::atom_name(fname)?);
                let args = terms::list_arg(args)?;
                call(ctx, &m, &fname, &args)
            }
            ("binary_part", _) => text::binary("part", a),
            ("term_to_binary", [_] | [_, _]) => external::term_to_binary(ctx, a),
            ("binary_to_term", [_] | [_, _]) => external::binary_to_term(ctx, a),
            ("phash2", [_] | [_, _]) => external::phash2(ctx, a),
            ("universaltime" | "localtime", []) => Ok(os::datetime_now()),
            ("date", []) => Ok(os::date_time_part(0)),
            ("time", []) => Ok(os::date_time_part(1)),
            ("system_info", [item]) => os::system_info(item),
            _ => modules::erlang(ctx, f, a),
        },
        "math" => modules::math(f, a),
        "timer" => modules::timer(ctx, f, a),
        "lists" => lists::call(ctx, f, a),
        "maps" => maps::call(ctx, f, a),
        "string" => text::string(f, a),
        "binary" => text::binary(f, a),
        "unicode" => text::unicode(f, a),
        "crypto" => crypto::crypto(f, a),
        "base64" => crypto::base64(f, a),
        "proplists" => proplists::proplists(f, a),
        "os" => os::os(ctx, f, a),
        "file" => os::file(ctx, f, a),
        "calendar" => os::calendar(f, a),
        "io_lib" => format::io_lib(ctx, f, a),
        "io" => format::io(ctx, f, a),
        _ => Err(Fail::Undef),
    }
}

/// `M:module_info/0,1` of a module bt implements: its name, the functions it implements
/// natively as its exports (and `functions`), no attributes, compile options or NIFs. The
/// `md5` of a BEAM module has no counterpart here: `module_info(md5)` is `badarg` (as any
/// other item is in Erlang).
fn module_info(module: &str, exports: &[(&str, u8)], item: Option<&Value>) -> R {
    let atom = |s: &str| Value::Symbol(Sym::new(s));
    let list = || {
        Value::list(
            exports
                .iter()
                .map(|(f, n)| Value::tuple(vec![atom(f), Value::Int(*n as i64)]))
                .collect::<Vec<_>>(),
        )
    };
    let pair = |k: &str, v: Value| Value::tuple(vec![atom(k), v]);
    let Some(item) = item else {
        return Ok(Value::list(vec![
            pair("module", atom(module)),
            pair("exports", list()),
            pair("attributes", Value::list(vec![])),
            pair("compile", Value::list(vec![])),
        ]));
    };
    match item.as_sym().map(|s| s.as_str()) {
        Some("module") => Ok(atom(module)),
        Some("exports" | "functions") => Ok(list()),
        Some("attributes" | "compile" | "nifs") => Ok(Value::list(vec![])),
        _ => Err(Fail::Badarg),
    }
}
