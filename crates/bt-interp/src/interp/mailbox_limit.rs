//! `maxMailbox`: an actor class may bound how many casts its instances' mailboxes
//! hold with a class-side method answering an Integer — `class maxMailbox => 10000`. Without
//! one (or with nil or 0) the mailbox is unlimited, as in Erlang.
//!
//! Overflow policy (implemented in `runtime::process::enqueue`): a cast arriving at a mailbox
//! that already holds `maxMailbox` messages is dropped and counted — `statusDetails` of the
//! actor's SupervisionNode shows `#droppedCasts` (and `#memory`, the bytes it holds); its sender is
//! not told, as a cast never is. Synchronous sends always queue (each caller has at most one
//! outstanding, so they cannot grow a mailbox without bound).

use crate::interp::eval::{Ctx, Unwind};
use crate::value::{ClassRef, Sym, Value};

/// The selector of the class-side limit (interned once: a spawn should not hash the name).
fn selector() -> Sym {
    static SEL: std::sync::OnceLock<Sym> = std::sync::OnceLock::new();
    *SEL.get_or_init(|| Sym::new("maxMailbox"))
}

/// Does `cls` answer `maxMailbox`?
pub fn responds(ctx: &mut Ctx, cls: &ClassRef) -> bool {
    ctx.responds_to(&Value::Class(cls.clone()), selector())
}

/// The mailbox limit declared by `cls` (0: unlimited).
pub fn of_class(ctx: &mut Ctx, cls: &ClassRef) -> Result<usize, Unwind> {
    let sel = selector();
    let class = Value::Class(cls.clone());
    if !ctx.responds_to(&class, sel) {
        return Ok(0);
    }
    match ctx.send(&class, sel, &[])? {
        Value::Nil => Ok(0),
        Value::Int(n) if n >= 0 => Ok(n as usize),
        other => {
            let n = ctx.class_name_of(&other);
            Err(ctx.type_err(format!(
                "maxMailbox must answer a non-negative Integer or nil, not {n}"
            )))
        }
    }
}
