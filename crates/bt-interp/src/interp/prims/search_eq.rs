//! Element equality for collection searches (`includes:`, `occurrencesOf:`, `indexOf:`,
//! Dictionary value search): when the searched-for value is an instance whose class defines
//! `=` in bt, the search sends `x = element` (the Smalltalk order) and honours it; otherwise
//! elements compare with `=:=` as before.

use crate::interp::class::ClassExt;
use crate::interp::eval::{Ctx, Method, Unwind};
use crate::value::order::strict_eq;
use crate::value::{Sym, Value};

/// The `=` a search should send to `x`, if its class defines one in bt.
pub fn user_eq(x: &Value) -> Option<Sym> {
    let Value::Object(o) = x else { return None };
    let eq = Sym::new("=");
    match o.class.lookup(eq) {
        Some((Method::Compiled(_), _)) => Some(eq),
        _ => None,
    }
}

/// Whether `e` matches `x` in a search; `eq` is [`user_eq`] of `x`, computed once per search.
#[inline]
pub fn matches(ctx: &mut Ctx, eq: Option<Sym>, e: &Value, x: &Value) -> Result<bool, Unwind> {
    match eq {
        None => Ok(strict_eq(e, x)),
        Some(sel) => Ok(matches!(
            ctx.send(x, sel, std::slice::from_ref(e))?,
            Value::True
        )),
    }
}
