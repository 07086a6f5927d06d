//! AtomicCounter: node-wide named counters, updated atomically from any
//! process without messages.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, CounterVal};
use crate::interp::actor::sys_of;
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::sym_arg;
use crate::value::{Sym, Value};

pub fn register(p: &mut Prims) {
    let c = "AtomicCounter";
    p.add_class(c, "new:", |ctx, _, a| {
        let name = sym_arg(ctx, &a[0], "AtomicCounter new: name")?;
        let sys = sys_of(ctx)?;
        sys.counters
            .lock()
            .insert(name, Arc::new(AtomicI64::new(0)));
        Ok(handle(ctx, name))
    });
    p.add_class(c, "named:", |ctx, _, a| {
        let name = sym_arg(ctx, &a[0], "AtomicCounter named: name")?;
        counter(ctx, name)?;
        Ok(handle(ctx, name))
    });
    p.add(c, "increment", |ctx, r, _| add(ctx, r, 1));
    p.add(c, "decrement", |ctx, r, _| add(ctx, r, -1));
    p.add(c, "incrementBy:", |ctx, r, a| {
        let n = int(ctx, &a[0])?;
        add(ctx, r, n)
    });
    p.add(c, "decrementBy:", |ctx, r, a| {
        let n = int(ctx, &a[0])?;
        add(ctx, r, n.wrapping_neg())
    });
    p.add(c, "value", |ctx, r, _| {
        let c = counter_of(ctx, r)?;
        Ok(Value::Int(c.load(Ordering::SeqCst)))
    });
    p.add(c, "reset", |ctx, r, _| {
        counter_of(ctx, r)?.store(0, Ordering::SeqCst);
        Ok(Value::Nil)
    });
    p.add(c, "delete", |ctx, r, _| {
        let name = name_of(r);
        counter_of(ctx, r)?;
        sys_of(ctx)?.counters.lock().remove(&name);
        Ok(Value::Nil)
    });
    p.add(c, "name", |_, r, _| Ok(Value::Symbol(name_of(r))));
}

fn int(ctx: &Ctx, v: &Value) -> Result<i64, Unwind> {
    match v {
        Value::Int(i) => Ok(*i),
        other => {
            let n = ctx.class_name_of(other);
            Err(ctx.type_err(format!("AtomicCounter expects an Integer, not {n}")))
        }
    }
}

fn handle(ctx: &Ctx, name: Sym) -> Value {
    let class = ctx
        .prog
        .class_named("AtomicCounter")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(CounterVal { name, class })
}

fn name_of(r: &Value) -> Sym {
    downcast::<CounterVal>(r)
        .map(|c| c.name)
        .unwrap_or(Sym::new(""))
}

fn counter(ctx: &Ctx, name: Sym) -> Result<Arc<AtomicI64>, Unwind> {
    let sys = sys_of(ctx)?;
    let found = sys.counters.lock().get(&name).cloned();
    found.ok_or_else(|| {
        ctx.err_hint(
            ErrorKind::NotFound,
            format!("counter not found: #{name}"),
            format!("Create the counter first with AtomicCounter new: #{name}"),
        )
    })
}

fn counter_of(ctx: &Ctx, r: &Value) -> Result<Arc<AtomicI64>, Unwind> {
    counter(ctx, name_of(r))
}

fn add(ctx: &mut Ctx, r: &Value, n: i64) -> EvalResult {
    let c = counter_of(ctx, r)?;
    let v = c.fetch_add(n, Ordering::SeqCst).wrapping_add(n);
    Ok(Value::Int(v))
}
