//! TranscriptStream: an actor class. The standard-output transcript is a
//! runtime service process writing through the program's output sink (so `Transcript show:`
//! under `bt run` reaches stdout, and a test runner's redirection captures it); `spawn`
//! creates capturing transcripts. `show:` computes `displayString` in the caller, then
//! hands the text to the transcript process.

use std::sync::Arc;

use crate::interp::actor::behaviour::TranscriptActor;
use crate::interp::actor::handle::{downcast, ActorRef};
use crate::interp::actor::send::call_error;
use crate::interp::actor::{cx_of, sys_of, ActorSys};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::runtime::{Message, ProcRef, SpawnOpts, Timeout};
use crate::value::{ClassRef, Sym, Value};

pub fn register(p: &mut Prims) {
    let t = "TranscriptStream";
    p.add_class(t, "current", |ctx, _, _| current(ctx));
    p.add_class(t, "current:", |ctx, r, a| {
        let Some(h) = downcast::<ActorRef>(&a[0]) else {
            let n = ctx.class_name_of(&a[0]);
            return Err(ctx.type_err(format!("current: expects a TranscriptStream, not {n}")));
        };
        let proc = h.proc.clone();
        *sys_of(ctx)?.transcript.lock() = Some(proc);
        Ok(r.clone())
    });
    p.add_class(t, "resetCurrent", |ctx, _, _| {
        let sys = sys_of(ctx)?;
        let p = stdout_transcript(ctx, &sys)?;
        *sys.transcript.lock() = Some(p.clone());
        Ok(handle(ctx, p))
    });
    // Class-side conveniences: the same as sending to `TranscriptStream current`.
    p.add_class(t, "show:", |ctx, _, a| {
        let cur = current(ctx)?;
        show(ctx, &cur, &a[0], false)
    });
    p.add_class(t, "showCr:", |ctx, _, a| {
        let cur = current(ctx)?;
        show(ctx, &cur, &a[0], true)
    });
    p.add_class(t, "cr", |ctx, _, _| {
        let cur = current(ctx)?;
        write(ctx, &cur, "\n")
    });
    p.add(t, "show:", |ctx, r, a| show(ctx, r, &a[0], false));
    p.add(t, "showCr:", |ctx, r, a| show(ctx, r, &a[0], true));
    p.add(t, "display:", |ctx, r, a| show(ctx, r, &a[0], false));
    p.add(t, "print:", |ctx, r, a| {
        let s = ctx.print_string(&a[0])?;
        write(ctx, r, &s)
    });
    p.add(t, "cr", |ctx, r, _| write(ctx, r, "\n"));
    p.add(t, "tab", |ctx, r, _| write(ctx, r, "\t"));
    p.add(t, "space", |ctx, r, _| write(ctx, r, " "));
    p.add(t, "recent", |ctx, r, _| call(ctx, r, "recent", Vec::new()));
    p.add(t, "clear", |ctx, r, _| {
        call(ctx, r, "clear", Vec::new())?;
        Ok(r.clone())
    });
}

fn class(ctx: &Ctx) -> ClassRef {
    ctx.prog
        .class_named("TranscriptStream")
        .unwrap_or_else(|| ctx.prog.core.actor.clone())
}

fn handle(ctx: &Ctx, p: ProcRef) -> Value {
    ActorRef::value(p, class(ctx))
}

/// The standard-output transcript, started on first use (a service process, so it does not
/// take a number from the pids of user processes).
fn stdout_transcript(ctx: &Ctx, sys: &Arc<ActorSys>) -> Result<ProcRef, Unwind> {
    let mut g = sys.stdout_transcript.lock();
    if let Some(p) = g.as_ref() {
        if p.is_alive() {
            return Ok(p.clone());
        }
    }
    let opts = |name| SpawnOpts {
        name,
        service: true,
        label: "transcript",
        info: Value::Class(class(ctx)),
        ..SpawnOpts::default()
    };
    let spawn = |name| {
        sys.rt.spawn_opts(
            Box::new(TranscriptActor::new(sys.clone(), true)),
            opts(name),
        )
    };
    // Registered as `bt_transcript`; unnamed if an earlier one still holds the name.
    match spawn(Some(crate::value::Sym::new("bt_transcript"))).or_else(|_| spawn(None)) {
        Ok(p) => {
            *g = Some(p.clone());
            Ok(p)
        }
        Err(e) => Err(ctx.err(
            ErrorKind::RuntimeError,
            format!("cannot start the transcript: {e:?}"),
        )),
    }
}

/// `TranscriptStream current` (never nil: falls back to the standard-output transcript).
pub fn current(ctx: &mut Ctx) -> EvalResult {
    let sys = sys_of(ctx)?;
    let cur = sys.transcript.lock().clone();
    let p = match cur {
        Some(p) if p.is_alive() => p,
        _ => {
            let p = stdout_transcript(ctx, &sys)?;
            *sys.transcript.lock() = Some(p.clone());
            p
        }
    };
    Ok(handle(ctx, p))
}

fn show(ctx: &mut Ctx, r: &Value, v: &Value, cr: bool) -> EvalResult {
    let mut s = ctx.display_string(v)?;
    if cr {
        s.push('\n');
    }
    write(ctx, r, &s)
}

fn write(ctx: &mut Ctx, r: &Value, s: &str) -> EvalResult {
    call(ctx, r, "bt_write:", vec![Value::str(s)])?;
    Ok(r.clone())
}

fn call(ctx: &mut Ctx, r: &Value, sel: &str, args: Vec<Value>) -> EvalResult {
    let Some(h) = downcast::<ActorRef>(r) else {
        return Err(ctx.type_err("not a TranscriptStream"));
    };
    let (proc, cls) = (h.proc.clone(), h.class.clone());
    let sel = Sym::new(sel);
    let res = match cx_of(ctx) {
        Some(cx) => cx.call(&proc, Message::new(sel, args), Timeout::Infinity),
        None => {
            // Outside a process (embedding without the runtime): write directly.
            if let Some(s) = args.first().and_then(|a| a.as_str()) {
                ctx.prog.write_out(s);
            }
            return Ok(Value::Nil);
        }
    };
    res.map_err(|e| call_error(ctx, e, &proc, &cls, sel, Timeout::Infinity))
}
