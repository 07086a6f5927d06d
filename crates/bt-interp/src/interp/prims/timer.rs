//! Timer: `after:do:` and `every:do:` run a block in a fresh process (on a
//! copy of what it captured); `sleep:` suspends the current process. Also the Time clocks.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::interp::actor::handle::{downcast, native, TimerVal};
use crate::interp::actor::send::{transfer, transfer_in};
use crate::interp::actor::{cx_of, run_block_logged, sys_of};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::duration::period_arg;
use crate::value::Value;

static SERIAL: AtomicU64 = AtomicU64::new(1);

pub fn register(p: &mut Prims) {
    let t = "Timer";
    p.add_class(t, "after:do:", |ctx, _, a| {
        schedule(ctx, &a[0], &a[1], false)
    });
    p.add_class(t, "every:do:", |ctx, _, a| {
        schedule(ctx, &a[0], &a[1], true)
    });
    p.add_class(t, "sleep:", |ctx, _, a| {
        let ms = period_arg(ctx, &a[0], "Timer sleep:", true)?;
        match cx_of(ctx) {
            Some(cx) => cx.sleep(ms).map_err(|e| Unwind::Exit(e.0.to_value()))?,
            None => std::thread::sleep(std::time::Duration::from_millis(ms)),
        }
        Ok(Value::Nil)
    });
    // Time: wall clock and a monotonic clock, as Integers.
    let tm = "Time";
    p.add_class(tm, "nowS", |c, _, _| Ok(Value::Int(wall_us(c) / 1_000_000)));
    p.add_class(tm, "nowMs", |c, _, _| Ok(Value::Int(wall_us(c) / 1000)));
    p.add_class(tm, "nowUs", |c, _, _| Ok(Value::Int(wall_us(c))));
    p.add_class(tm, "monotonicMs", |c, _, _| {
        Ok(Value::Int(mono_ns(c) / 1_000_000))
    });
    p.add_class(tm, "monotonicUs", |c, _, _| {
        Ok(Value::Int(mono_ns(c) / 1000))
    });
    p.add_class(tm, "monotonicNs", |c, _, _| Ok(Value::Int(mono_ns(c))));
    p.add(t, "cancel", |_, r, _| {
        Ok(Value::bool(
            downcast::<TimerVal>(r).is_some_and(|t| t.timer.cancel()),
        ))
    });
    p.add(t, "isActive", |_, r, _| {
        Ok(Value::bool(
            downcast::<TimerVal>(r).is_some_and(|t| t.timer.is_active()),
        ))
    });
}

/// The runtime of a simulated program (`bt test --seed`): its clocks are virtual.
pub(crate) fn virtual_clock(ctx: &Ctx) -> Option<&crate::runtime::RtHandle> {
    ctx.proc
        .sys
        .as_ref()
        .map(|s| &s.rt)
        .filter(|rt| rt.is_simulated())
}

/// Microseconds since the Unix epoch (virtual under the deterministic scheduler).
pub(crate) fn wall_us(ctx: &Ctx) -> i64 {
    if let Some(rt) = virtual_clock(ctx) {
        return rt.wall_ms() as i64 * 1000;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

fn mono_ns(ctx: &Ctx) -> i64 {
    if let Some(rt) = virtual_clock(ctx) {
        return rt.now_ms() as i64 * 1_000_000;
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as i64
}

fn schedule(ctx: &mut Ctx, t: &Value, block: &Value, every: bool) -> EvalResult {
    let ms = if every {
        period_arg(ctx, t, "Timer every:do:", false)?
    } else {
        period_arg(ctx, t, "Timer after:do:", true)?
    };
    if !matches!(block, Value::Block(_)) {
        let n = ctx.class_name_of(block);
        return Err(ctx.type_err(format!("Timer expects a Block, not {n}")));
    }
    // A timer starts processes: as a spawn, refused over the memory limit or once the
    // running process was told to exit.
    ctx.memory_check()?;
    let sys = sys_of(ctx)?;
    let block = transfer_in(ctx, block);
    let s2 = sys.clone();
    let timer = if every {
        sys.rt.script_every(ms, move |cx| {
            run_block_logged(&s2, cx, &transfer(&block), &[])
        })
    } else {
        sys.rt
            .script_after(ms, move |cx| run_block_logged(&s2, cx, &block, &[]))
    };
    let class = ctx
        .prog
        .class_named("Timer")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    Ok(native(TimerVal {
        timer,
        serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        class,
    }))
}
