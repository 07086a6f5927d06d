//! Host functions: Rust closures an embedder makes callable as class-side methods
//! (`Host double: 21`).
//!
//! Registration declares the method in bt first (so the checker and the class table know the
//! class and selector, with a `Dynamic` return), then replaces it with the primitive [`call`].
//! The closures live in the program's own table (`Program::host_fns`, keyed by defining
//! class and selector), so two engines never see each other's functions. `call` finds the
//! closure from the selector and defining class the evaluator records before it runs a
//! primitive; arity is checked by the send like for every primitive.

use crate::engine::error::HostError;
use crate::interp::eval::{Ctx, EvalResult};
use crate::value::Value;

/// The signature of a host function as the engine stores it.
pub(super) type HostClosure = dyn Fn(&[Value]) -> Result<Value, HostError> + Send + Sync + 'static;

/// The primitive behind every host method.
pub(crate) fn call(ctx: &mut Ctx, _recv: &Value, args: &[Value]) -> EvalResult {
    let key = (ctx.cur_cls, ctx.cur_sel);
    let f = ctx.prog.host_fns.read().get(&key).cloned();
    match f {
        Some(f) => f(ctx, _recv, args),
        None => Err(ctx.err(
            "does_not_understand",
            format!("{} class does not understand '{}'", key.0, key.1),
        )),
    }
}

/// Runs a host closure; its error (or panic) becomes a language exception.
pub(crate) fn run(ctx: &mut Ctx, f: &HostClosure, args: &[Value]) -> EvalResult {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(args)));
    let e = match r {
        Ok(Ok(v)) => return Ok(v),
        Ok(Err(e)) => e,
        Err(p) => {
            let m = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string());
            HostError::new("host_error", format!("host function panicked: {m}"))
        }
    };
    let kind = if valid_kind(&e.kind) {
        e.kind.as_str()
    } else {
        "host_error"
    };
    Err(ctx.err_full(
        kind,
        e.message,
        e.hint,
        Some(ctx.cur_sel),
        Some(ctx.cur_cls),
    ))
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
    fn names_and_kinds() {
        assert!(valid_class_name("Host"));
        assert!(!valid_class_name("host"));
        assert!(!valid_class_name("Ho st"));
        assert!(valid_kind("not_found"));
        assert!(!valid_kind("Not found"));
    }
}
