//! Host functions: Rust closures an embedder makes callable as class-side methods
//! (`Host double: 21`).
//!
//! Registration declares the method in bt first (so the checker and the class table know the
//! class and selector, with a `Dynamic` return), then replaces it with the primitive [`call`].
//! The closures live in the program's own table (`Program::host_fns`, keyed by defining
//! class and selector), so two engines never see each other's functions. `call` finds the
//! closure from the selector and defining class the evaluator records before it runs a
//! primitive; arity is checked by the send like for every primitive.
//!
//! **Typed functions.** [`HostFn`] is implemented for closures of up to six arguments whose
//! types are [`FromValue`] (any serde `Deserialize` type — integers, floats, bool, String,
//! Vec, HashMap, Option, structs — and [`Value`] itself) and whose result is [`IntoValue`]
//! (any serde `Serialize` type, [`Value`], `()`, or a `Result<_, HostError>` of those), and
//! for the raw form `Fn(&[Value]) -> Result<Value, HostError>`. A wrong argument raises
//! `type_error` naming the argument and the path inside it (`argument 2 of Host
//! add:to: {#port}: expected an Integer, got a String`).
//!
//! **Asynchronous functions** ([`async_closure`]) answer through a [`Reply`] from any thread;
//! the calling process waits in `Cx::wait_external`, so only it is suspended.
//!
//! **Re-entry.** While a host function runs, its thread records the engine (`HOST_CALL`);
//! the engine answers `reentrant_call` instead of waiting for itself.

use std::cell::Cell;
use std::sync::Arc;

use crate::engine::error::HostError;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult};
use crate::interp::program::HostFn as ProgHostFn;
use crate::value::Value;

/// The signature of a raw host function as the engine stores it.
pub type HostClosure = dyn Fn(&[Value]) -> Result<Value, HostError> + Send + Sync + 'static;

thread_local! {
    /// The engine (its id) whose host function this thread is running, if any.
    static HOST_CALL: Cell<usize> = const { Cell::new(0) };
}

/// Is this thread inside a host function of engine `id`?
pub(crate) fn in_host_fn(id: usize) -> bool {
    HOST_CALL.try_with(|c| c.get() == id).unwrap_or(false)
}

/// The engine id of a program: the address of its hook factory (`Engine::id`).
fn engine_id(ctx: &Ctx) -> usize {
    ctx.prog
        .ctx_hook
        .get()
        .map(|h| Arc::as_ptr(h) as *const () as usize)
        .unwrap_or(0)
}

/// A value a host function takes as an argument.
pub trait FromValue: Sized {
    /// Converts `v`; the error names what was expected and where (a path inside `v`).
    fn from_value(v: &Value) -> Result<Self, crate::codec::CodecError>;
}

impl<T: serde::de::DeserializeOwned> FromValue for T {
    fn from_value(v: &Value) -> Result<T, crate::codec::CodecError> {
        crate::codec::to_rust(v)
    }
}

// `Value` itself is a `DeserializeOwned` type (`value::deserialize`): the same Value, shared.

/// Converts argument `v` to `T`: the common scalar types (i64, bool, f64, String) directly
/// when the Value has exactly that shape, everything else (and every mismatch, for its error
/// message) through [`FromValue`] — serde, which costs a deserializer per argument.
#[inline]
pub(crate) fn arg<T: FromValue + 'static>(v: &Value) -> Result<T, crate::codec::CodecError> {
    use std::any::Any;
    let mut out: Option<T> = None;
    let slot: &mut dyn Any = &mut out;
    if let Some(s) = slot.downcast_mut::<Option<i64>>() {
        if let Value::Int(n) = v {
            *s = Some(*n);
        }
    } else if let Some(s) = slot.downcast_mut::<Option<bool>>() {
        match v {
            Value::True => *s = Some(true),
            Value::False => *s = Some(false),
            _ => {}
        }
    } else if let Some(s) = slot.downcast_mut::<Option<f64>>() {
        if let Value::Float(f) = v {
            *s = Some(f.get());
        }
    } else if let Some(s) = slot.downcast_mut::<Option<String>>() {
        if let Value::Str(t) = v {
            *s = Some(t.as_str().to_string());
        }
    } else if let Some(s) = slot.downcast_mut::<Option<Value>>() {
        *s = Some(v.clone());
    }
    match out {
        Some(x) => Ok(x),
        None => T::from_value(v),
    }
}

/// A value a host function answers.
pub trait IntoValue {
    fn into_value(self) -> Result<Value, HostError>;
}

/// Through serde (`crate::codec::from_rust`).
fn via_serde<T: serde::Serialize + ?Sized>(x: &T) -> Result<Value, HostError> {
    crate::codec::from_rust(x)
        .map_err(|e| HostError::new(e.kind, format!("host function result: {}", e.message)))
}

macro_rules! into_value_serde {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            fn into_value(self) -> Result<Value, HostError> {
                via_serde(&self)
            }
        }
    )*};
}

into_value_serde!(i8, i16, i32, u8, u16, u32, u64, i128, u128, usize, isize, f32, char);

impl IntoValue for String {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(Value::str(self))
    }
}

impl IntoValue for i64 {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(Value::Int(self))
    }
}

impl IntoValue for f64 {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(Value::float(self))
    }
}

impl IntoValue for bool {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(if self { Value::True } else { Value::False })
    }
}

impl IntoValue for () {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(Value::Nil)
    }
}

impl IntoValue for &str {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(Value::str(self))
    }
}

impl<T: serde::Serialize> IntoValue for Vec<T> {
    fn into_value(self) -> Result<Value, HostError> {
        via_serde(&self)
    }
}

impl<T: serde::Serialize> IntoValue for Option<T> {
    fn into_value(self) -> Result<Value, HostError> {
        via_serde(&self)
    }
}

impl<K, V, S> IntoValue for std::collections::HashMap<K, V, S>
where
    K: serde::Serialize + Eq + std::hash::Hash,
    V: serde::Serialize,
    S: std::hash::BuildHasher,
{
    fn into_value(self) -> Result<Value, HostError> {
        via_serde(&self)
    }
}

impl<K: serde::Serialize + Ord, V: serde::Serialize> IntoValue
    for std::collections::BTreeMap<K, V>
{
    fn into_value(self) -> Result<Value, HostError> {
        via_serde(&self)
    }
}

/// Any serde type as a host function's result (`Serde(config)`): structs become
/// Symbol-keyed Dictionaries (see `crate::codec::from_rust`).
pub struct Serde<T>(pub T);

impl<T: serde::Serialize> IntoValue for Serde<T> {
    fn into_value(self) -> Result<Value, HostError> {
        via_serde(&self.0)
    }
}

impl IntoValue for Value {
    fn into_value(self) -> Result<Value, HostError> {
        Ok(self)
    }
}

impl<T: IntoValue> IntoValue for Result<T, HostError> {
    fn into_value(self) -> Result<Value, HostError> {
        self.and_then(IntoValue::into_value)
    }
}

/// A closure usable as a host function; `M` tells the forms apart (inferred).
pub trait HostFn<M>: Send + Sync + 'static {
    /// The number of arguments, when the closure fixes it (the raw form does not).
    fn arity(&self) -> Option<usize>;
    /// The primitive body the program stores.
    fn into_closure(self) -> ProgHostFn;
}

/// Marker of the raw form `Fn(&[Value]) -> Result<Value, HostError>`.
pub struct RawArgs;

impl<F> HostFn<RawArgs> for F
where
    F: Fn(&[Value]) -> Result<Value, HostError> + Send + Sync + 'static,
{
    fn arity(&self) -> Option<usize> {
        None
    }
    fn into_closure(self) -> ProgHostFn {
        Arc::new(move |ctx, _recv, args| run(ctx, |a: &[Value]| self(a), args))
    }
}

/// A conversion error of argument `i` (1-based) as a `type_error`.
pub(crate) fn arg_error(i: usize, e: crate::codec::CodecError) -> HostError {
    let at = if e.path.is_empty() {
        String::new()
    } else {
        format!(" {}", e.path)
    };
    // The codec's message may end with the same path (" at {#port}"): name it once.
    let suffix = format!(" at {}", e.path);
    let msg = match e.message.strip_suffix(&suffix) {
        Some(m) if !e.path.is_empty() => m,
        _ => e.message.as_str(),
    };
    let mut h = HostError::new("type_error", format!("argument {i}{at}: {msg}"));
    h.hint = e.hint;
    h
}

macro_rules! typed_host_fn {
    ($n:expr; $($a:ident $i:tt),*) => {
        impl<F, R, $($a,)*> HostFn<(R, $($a,)*)> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: IntoValue + 'static,
            $($a: FromValue + 'static,)*
        {
            fn arity(&self) -> Option<usize> {
                Some($n)
            }
            #[allow(unused_variables, non_snake_case)]
            fn into_closure(self) -> ProgHostFn {
                Arc::new(move |ctx, _recv, args| {
                    run(ctx, |args: &[Value]| {
                        if args.len() != $n {
                            return Err(HostError::new(
                                "arity_mismatch",
                                format!("expected {} argument(s), got {}", $n, args.len()),
                            ));
                        }
                        $(let $a = arg::<$a>(&args[$i]).map_err(|e| arg_error($i + 1, e))?;)*
                        self($($a),*).into_value()
                    }, args)
                })
            }
        }
    };
}

typed_host_fn!(0;);
typed_host_fn!(1; A1 0);
typed_host_fn!(2; A1 0, A2 1);
typed_host_fn!(3; A1 0, A2 1, A3 2);
typed_host_fn!(4; A1 0, A2 1, A3 2, A4 3);
typed_host_fn!(5; A1 0, A2 1, A3 2, A4 3, A5 4);
typed_host_fn!(6; A1 0, A2 1, A3 2, A4 3, A5 4, A6 5);

/// The primitive behind every host method (in `interp::host_cache`, so that a class-name
/// send site can recognise it and call the host function directly).
pub(crate) use crate::interp::host_cache::call;

pub(crate) use crate::interp::host_cache::call_cached;

/// Resets the thread's host-call mark when a host function ends (also by a panic).
struct HostCallMark(usize);

impl HostCallMark {
    fn enter(id: usize) -> HostCallMark {
        HostCallMark(HOST_CALL.with(|c| c.replace(id)))
    }
}

impl Drop for HostCallMark {
    fn drop(&mut self) {
        let _ = HOST_CALL.try_with(|c| c.set(self.0));
    }
}

/// Installs (once per process) a panic hook that stays silent for a panic inside a host
/// function — it is caught and raised as a `host_error` exception — and hands every other
/// panic to the hook installed before.
pub(crate) fn quiet_host_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if HOST_CALL.try_with(|c| c.get() == 0).unwrap_or(true) {
                prev(info)
            }
        }));
    });
}

/// Runs a host closure; its error (or panic) becomes a language exception.
#[inline(always)]
pub(crate) fn run(
    ctx: &mut Ctx,
    f: impl Fn(&[Value]) -> Result<Value, HostError>,
    args: &[Value],
) -> EvalResult {
    let r = {
        let _mark = HostCallMark::enter(engine_id(ctx));
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(args)))
    };
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(raise(ctx, e)),
        Err(p) => Err(panicked(ctx, p)),
    }
}

/// A host function's panic as a `host_error` exception.
#[cold]
fn panicked(ctx: &mut Ctx, p: Box<dyn std::any::Any + Send>) -> crate::interp::eval::Unwind {
    let m = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".to_string());
    raise(
        ctx,
        HostError::new("host_error", format!("host function panicked: {m}")),
    )
}

#[cold]
fn raise(ctx: &mut Ctx, e: HostError) -> crate::interp::eval::Unwind {
    let kind = if valid_kind(&e.kind) {
        e.kind.as_str()
    } else {
        "host_error"
    };
    ctx.err_full(
        ErrorKind::from_name(kind),
        e.message,
        e.hint,
        Some(ctx.cur_sel),
        Some(ctx.cur_cls),
    )
}

/// The answer of an asynchronous host function, sent from any thread (once; later answers
/// and answers after the timeout are ignored). Dropping it unanswered fails the call with
/// `host_error`.
pub struct Reply {
    done: Option<Answer>,
}

/// Where a [`Reply`] delivers its answer.
type Answer = Box<dyn FnOnce(Result<Value, HostError>) + Send>;

impl Reply {
    /// Answers the call.
    pub fn send(mut self, r: Result<Value, HostError>) {
        if let Some(d) = self.done.take() {
            d(r);
        }
    }

    /// Answers with a value converted by [`IntoValue`].
    pub fn ok<T: IntoValue>(self, v: T) {
        self.send(v.into_value());
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(d) = self.done.take() {
            d(Err(HostError::new(
                "host_error",
                "asynchronous host function dropped its reply",
            )));
        }
    }
}

/// The primitive body of an asynchronous host function (see [`Reply`]).
pub(crate) fn async_closure<F>(timeout: std::time::Duration, f: F) -> ProgHostFn
where
    F: Fn(Vec<Value>, Reply) + Send + Sync + 'static,
{
    type Slot =
        Arc<parking_lot::Mutex<Option<crate::interp::actor::Done<Result<Value, HostError>>>>>;
    let f = Arc::new(f);
    Arc::new(move |ctx, _recv, args| {
        let args = args.to_vec();
        let f = f.clone();
        let ms = timeout.as_millis().min(u64::MAX as u128) as u64;
        let rt = ctx.proc.sys.as_ref().map(|s| s.rt.clone());
        let r =
            crate::interp::actor::await_external(ctx, "asynchronous host function", move |done| {
                // The first of the reply and the timeout answers.
                let slot: Slot = Arc::new(parking_lot::Mutex::new(Some(done)));
                if let Some(rt) = rt {
                    let s = slot.clone();
                    rt.after(ms.max(1), move |_cx| {
                        if let Some(d) = s.lock().take() {
                            d(Err(HostError::new(
                                "timeout",
                                format!("asynchronous host function did not answer within {ms} ms"),
                            )));
                        }
                    });
                }
                let reply = Reply {
                    done: Some(Box::new(move |r| {
                        if let Some(d) = slot.lock().take() {
                            d(r);
                        }
                    })),
                };
                f(args, reply);
            })?;
        r.map_err(|e| raise(ctx, e))
    })
}

/// A kind is a Symbol-like word (`not_found`).
fn valid_kind(k: &str) -> bool {
    let mut cs = k.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_lowercase())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A class name usable as a global (`Host`, `Config`).
pub(crate) fn valid_class_name(name: &str) -> bool {
    let mut cs = name.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The method header declaring `selector` (`double: a1`, `+ a1`, `value`), or None when the
/// selector is not a unary, binary or keyword selector.
pub(crate) fn header(selector: &str) -> Option<String> {
    if ident(selector) {
        return Some(selector.to_string());
    }
    const OPS: &str = "+-*/\\<>=~%&?";
    if !selector.is_empty() && selector.chars().all(|c| OPS.contains(c)) {
        return Some(format!("{selector} a1"));
    }
    let body = selector.strip_suffix(':')?;
    let mut out = Vec::new();
    for (i, part) in body.split(':').enumerate() {
        if !ident(part) {
            return None;
        }
        out.push(format!("{part}: a{}", i + 1));
    }
    Some(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_follow_the_selector_shape() {
        assert_eq!(header("now").as_deref(), Some("now"));
        assert_eq!(header("double:").as_deref(), Some("double: a1"));
        assert_eq!(header("at:put:").as_deref(), Some("at: a1 put: a2"));
        assert_eq!(header("+").as_deref(), Some("+ a1"));
        assert_eq!(header("@"), None);
        assert_eq!(header("at:put"), None);
        assert_eq!(header("Bad:"), None);
        assert_eq!(header(""), None);
        assert_eq!(header("a::"), None);
    }

    #[test]
    fn scalar_arguments_convert_directly_and_mismatches_like_serde() {
        assert_eq!(arg::<i64>(&Value::Int(7)).ok(), Some(7));
        assert_eq!(arg::<bool>(&Value::True).ok(), Some(true));
        assert_eq!(arg::<f64>(&Value::float(1.5)).ok(), Some(1.5));
        assert_eq!(arg::<String>(&Value::str("x")).ok().as_deref(), Some("x"));
        // Not the exact shape: serde decides (conversion or the error naming the type).
        let direct = arg::<i64>(&Value::str("7")).err().map(|e| e.message);
        let serde = crate::codec::to_rust::<i64>(&Value::str("7"))
            .err()
            .map(|e| e.message);
        assert!(direct.is_some());
        assert_eq!(direct, serde);
        assert_eq!(
            arg::<f64>(&Value::Int(2)).ok(),
            crate::codec::to_rust::<f64>(&Value::Int(2)).ok()
        );
        assert!(arg::<u8>(&Value::Int(300)).is_err());
    }

    #[test]
    fn names_and_kinds() {
        assert!(valid_class_name("Host"));
        assert!(!valid_class_name("host"));
        assert!(!valid_class_name("Ho st"));
        assert!(valid_kind("not_found"));
        assert!(!valid_kind("Not found"));
    }
}
