//! Console: `print:`/`printLine:` write `displayString` to
//! the program's standard output (the same sink as the standard-output Transcript, so an
//! embedder capturing output sees it), `error:`/`errorLine:` to standard error, `flush`, and
//! `readLine`/`readLine:` (a String without the line end, or nil at end of input).
//!
//! Decisions (the spec is silent): the writers answer the receiver (like `Transcript show:`);
//! `readLine` suspends only the calling process — the line is read on a helper thread, so
//! other processes keep running meanwhile; concurrent readers take whole lines in turn.

use std::io::{BufRead, Write};

use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::value::Value;

pub fn register(p: &mut Prims) {
    let c = "Console";
    p.add_class(c, "print:", |ctx, r, a| out(ctx, r, &a[0], ""));
    p.add_class(c, "printLine:", |ctx, r, a| out(ctx, r, &a[0], "\n"));
    p.add_class(c, "error:", |ctx, r, a| err(ctx, r, &a[0], ""));
    p.add_class(c, "errorLine:", |ctx, r, a| err(ctx, r, &a[0], "\n"));
    p.add_class(c, "flush", |_, r, _| {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        Ok(r.clone())
    });
    p.add_class(c, "readLine", |ctx, _, _| read_line(ctx));
    p.add_class(c, "readLine:", |ctx, r, a| {
        out(ctx, r, &a[0], "")?;
        let _ = std::io::stdout().flush();
        read_line(ctx)
    });
}

fn out(ctx: &mut Ctx, recv: &Value, v: &Value, end: &str) -> EvalResult {
    let mut s = ctx.display_string(v)?;
    s.push_str(end);
    ctx.prog.write_out(&s);
    Ok(recv.clone())
}

fn err(ctx: &mut Ctx, recv: &Value, v: &Value, end: &str) -> EvalResult {
    let s = ctx.display_string(v)?;
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "{s}{end}");
    Ok(recv.clone())
}

/// One line of standard input without its line end; `None` at end of input (or on a read
/// error, which a script cannot do anything else about).
fn next_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => {
            if line.ends_with('\n') {
                line.pop();
                if line.ends_with('\r') {
                    line.pop();
                }
            }
            Some(line)
        }
    }
}

fn read_line(ctx: &mut Ctx) -> EvalResult {
    let line = crate::interp::actor::await_external(ctx, "standard input", |done| {
        std::thread::spawn(move || done(next_line()));
    })?;
    Ok(line.map(Value::str).unwrap_or(Value::Nil))
}
