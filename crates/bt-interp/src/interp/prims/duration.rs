//! Duration: a length of time in whole milliseconds; also the helpers that
//! read a time argument (Integer ms or Duration) and a call timeout (`#infinity` too).

use crate::interp::actor::handle::{downcast, native, DurationVal};
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::runtime::Timeout;
use crate::value::Value;

pub fn register(p: &mut Prims) {
    let d = "Duration";
    p.add_class(d, "milliseconds:", |ctx, _, a| make(ctx, &a[0], 1.0));
    p.add_class(d, "seconds:", |ctx, _, a| make(ctx, &a[0], 1000.0));
    p.add_class(d, "minutes:", |ctx, _, a| make(ctx, &a[0], 60_000.0));
    p.add_class(d, "hours:", |ctx, _, a| make(ctx, &a[0], 3_600_000.0));
    p.add_class(d, "days:", |ctx, _, a| make(ctx, &a[0], 86_400_000.0));
    p.add_class(d, "fromString:", |ctx, _, a| {
        let s = match &a[0] {
            Value::Str(s) => s.to_string(),
            other => {
                let n = ctx.class_name_of(other);
                return Err(ctx.type_err(format!("fromString: expects a String, not {n}")));
            }
        };
        match parse_iso(&s) {
            Some(ms) => Ok(duration(ctx, ms)),
            None => Err(ctx.type_err(format!(
                "not an ISO 8601 duration: {}",
                super::datetime::quote_capped(&s)
            ))),
        }
    });
    p.add(d, "asMilliseconds", |ctx, r, _| {
        Ok(Value::Int(ms_of(ctx, r)?))
    });
    p.add(d, "asSeconds", |ctx, r, _| {
        Ok(Value::Int(ms_of(ctx, r)? / 1000))
    });
    p.add(d, "asMinutes", |ctx, r, _| {
        Ok(Value::Int(ms_of(ctx, r)? / 60_000))
    });
    p.add(d, "asHours", |ctx, r, _| {
        Ok(Value::Int(ms_of(ctx, r)? / 3_600_000))
    });
    p.add(d, "totalDays", |ctx, r, _| {
        Ok(Value::Int(ms_of(ctx, r)? / 86_400_000))
    });
    p.add(d, "isZero", |ctx, r, _| {
        Ok(Value::bool(ms_of(ctx, r)? == 0))
    });
    p.add(d, "isNegative", |ctx, r, _| {
        Ok(Value::bool(ms_of(ctx, r)? < 0))
    });
    p.add(d, "+", |ctx, r, a| {
        let (x, y) = (ms_of(ctx, r)?, ms_of(ctx, &a[0])?);
        // Past ±2^63 ms is an arithmetic fault, as in `make` (never a silent saturation).
        let ms = x
            .checked_add(y)
            .ok_or_else(|| out_of_range(ctx, r, &a[0]))?;
        Ok(duration(ctx, ms))
    });
    p.add(d, "-", |ctx, r, a| {
        let (x, y) = (ms_of(ctx, r)?, ms_of(ctx, &a[0])?);
        let ms = x
            .checked_sub(y)
            .ok_or_else(|| out_of_range(ctx, r, &a[0]))?;
        Ok(duration(ctx, ms))
    });
    p.add(d, "*", |ctx, r, a| {
        let x = ms_of(ctx, r)? as f64;
        let k = match &a[0] {
            Value::Int(i) => *i as f64,
            Value::Float(f) => f.get(),
            other => {
                let detail = format!(
                    "`{} * {}`: Duration * {}, and {} is not a number",
                    print_duration(ms_of(ctx, r)?),
                    shown(other),
                    ctx.class_name_of(other),
                    shown(other)
                );
                return Err(crate::interp::error::arith_fault_detailed(
                    ctx,
                    Some(detail),
                ));
            }
        };
        let ms = (x * k).round();
        if !ms.is_finite() || ms.abs() > 9.0e18 {
            return Err(out_of_range(ctx, r, &a[0]));
        }
        Ok(duration(ctx, ms as i64))
    });
    p.add(d, "<", |ctx, r, a| cmp(ctx, r, &a[0], |o| o.is_lt()));
    p.add(d, ">", |ctx, r, a| cmp(ctx, r, &a[0], |o| o.is_gt()));
    p.add(d, "<=", |ctx, r, a| cmp(ctx, r, &a[0], |o| o.is_le()));
    p.add(d, ">=", |ctx, r, a| cmp(ctx, r, &a[0], |o| o.is_ge()));
    p.add(d, "=", |_, r, a| Ok(Value::bool(same(r, &a[0]))));
    p.add(d, "=:=", |_, r, a| Ok(Value::bool(same(r, &a[0]))));
    p.add(d, "=/=", |_, r, a| Ok(Value::bool(!same(r, &a[0]))));
    p.add(d, "/=", |_, r, a| Ok(Value::bool(!same(r, &a[0]))));
    p.add(d, "~=", |_, r, a| Ok(Value::bool(!same(r, &a[0]))));
    p.add(d, "asString", |ctx, r, _| {
        Ok(Value::str(iso_string(ms_of(ctx, r)?)))
    });
}

/// An operand of a Duration operation as its arithmetic fault shows it.
fn shown(v: &Value) -> String {
    match downcast::<DurationVal>(v) {
        Some(d) => print_duration(d.ms),
        None => crate::interp::print::simple_print(v)
            .map(|s| crate::diagnostic::cap_quote(&s, 40).into_owned())
            .unwrap_or_else(|| crate::interp::prims::fault::article_class(v)),
    }
}

/// The arithmetic fault of a Duration operation whose answer is beyond ±2^63 ms.
fn out_of_range(ctx: &Ctx, r: &Value, a: &Value) -> Unwind {
    let sel = ctx.cur_sel.as_str();
    let detail = format!(
        "`{} {sel} {}`: the answer is beyond the range of a Duration (±2^63 ms)",
        shown(r),
        shown(a)
    );
    crate::interp::error::arith_fault_detailed(ctx, Some(detail))
}

fn same(a: &Value, b: &Value) -> bool {
    match (downcast::<DurationVal>(a), downcast::<DurationVal>(b)) {
        (Some(x), Some(y)) => x.ms == y.ms,
        _ => false,
    }
}

fn cmp(ctx: &mut Ctx, r: &Value, a: &Value, f: fn(std::cmp::Ordering) -> bool) -> EvalResult {
    let (x, y) = (ms_of(ctx, r)?, ms_of(ctx, a)?);
    Ok(Value::bool(f(x.cmp(&y))))
}

fn make(ctx: &mut Ctx, v: &Value, unit: f64) -> EvalResult {
    let ms = match v {
        Value::Int(i) => (*i as f64) * unit,
        Value::Float(f) => f.get() * unit,
        // Beyond 64 bits: the range check below rejects it with the out-of-range message.
        Value::BigInt(b) => num_traits::ToPrimitive::to_f64(&**b).unwrap_or(f64::INFINITY) * unit,
        other => {
            let n = ctx.class_name_of(other);
            return Err(ctx.type_err(format!("Duration expects a number, not {n}")));
        }
    };
    if !ms.is_finite() || ms.abs() > 9.0e18 {
        return Err(ctx.arith_err());
    }
    Ok(duration(ctx, ms.round() as i64))
}

/// A Duration value.
pub fn duration(ctx: &Ctx, ms: i64) -> Value {
    let class = ctx
        .prog
        .class_named("Duration")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(DurationVal { ms, class })
}

/// Milliseconds of a Duration argument.
pub fn ms_of(ctx: &Ctx, v: &Value) -> Result<i64, Unwind> {
    match downcast::<DurationVal>(v) {
        Some(d) => Ok(d.ms),
        None => {
            let n = ctx.class_name_of(v);
            Err(ctx.type_err(format!("expected a Duration, not {n}")))
        }
    }
}

/// A time argument: Integer milliseconds or a Duration (negative counts as 0).
pub fn ms_arg(ctx: &Ctx, v: &Value) -> Result<u64, Unwind> {
    match v {
        Value::Int(i) => Ok((*i).max(0) as u64),
        _ => match downcast::<DurationVal>(v) {
            Some(d) => Ok(d.ms.max(0) as u64),
            None => {
                let n = ctx.class_name_of(v);
                Err(ctx.type_err(format!(
                    "expected milliseconds (Integer) or a Duration, not {n}"
                )))
            }
        },
    }
}

/// A call timeout: Integer ms, Duration or `#infinity`.
/// A period argument that must make sense (Timer and Duration arguments are validated): Integer ms or a Duration; negative raises `type_error`, and so does zero unless
/// `zero_ok`. `what` names the send in the message.
pub fn period_arg(ctx: &Ctx, v: &Value, what: &str, zero_ok: bool) -> Result<u64, Unwind> {
    let ms = match v {
        Value::Int(i) => *i,
        _ => match downcast::<DurationVal>(v) {
            Some(d) => d.ms,
            None => return ms_arg(ctx, v),
        },
    };
    if ms < 0 || (ms == 0 && !zero_ok) {
        let need = if zero_ok {
            "zero or more"
        } else {
            "more than zero"
        };
        return Err(ctx.type_err(format!(
            "{what} needs a period of {need} milliseconds, got {}",
            print_duration(ms)
        )));
    }
    Ok(ms as u64)
}

pub fn timeout_arg(ctx: &Ctx, v: &Value) -> Result<Timeout, Unwind> {
    if v.as_sym().is_some_and(|s| s.as_str() == "infinity") {
        return Ok(Timeout::Infinity);
    }
    ms_arg(ctx, v).map(Timeout::Ms)
}

pub use crate::interp::actor::handle::print_duration;

/// ISO 8601 form: `PT1H30M`, `PT0.250S`, `P1DT2H`, zero `PT0S`.
pub fn iso_string(ms: i64) -> String {
    if ms == 0 {
        return "PT0S".to_string();
    }
    let neg = ms < 0;
    let mut rest = ms.unsigned_abs();
    let days = rest / 86_400_000;
    rest %= 86_400_000;
    let h = rest / 3_600_000;
    rest %= 3_600_000;
    let m = rest / 60_000;
    rest %= 60_000;
    let s = rest / 1000;
    let frac = rest % 1000;
    let mut out = String::from(if neg { "-P" } else { "P" });
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if h > 0 || m > 0 || s > 0 || frac > 0 {
        out.push('T');
        if h > 0 {
            out.push_str(&format!("{h}H"));
        }
        if m > 0 {
            out.push_str(&format!("{m}M"));
        }
        if frac > 0 {
            out.push_str(&format!("{s}.{frac:03}S"));
        } else if s > 0 {
            out.push_str(&format!("{s}S"));
        }
    }
    out
}

/// Parses `[-]P[nD][T[nH][nM][n[.f]S]]` (also `nW`); answers milliseconds.
pub fn parse_iso(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let s = s.strip_prefix('P')?;
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => {
            if t.is_empty() {
                return None;
            }
            (d, Some(t))
        }
        None => (s, None),
    };
    if date.is_empty() && time.is_none() {
        return None;
    }
    let mut total = 0f64;
    let mut scan = |part: &str, units: &[(char, f64)]| -> Option<()> {
        let mut num = String::new();
        let mut idx = 0;
        for ch in part.chars() {
            if ch.is_ascii_digit() || ch == '.' || ch == ',' {
                num.push(if ch == ',' { '.' } else { ch });
            } else {
                let pos = units[idx..].iter().position(|(u, _)| *u == ch)?;
                idx += pos + 1;
                if num.is_empty() {
                    return None;
                }
                let n: f64 = num.parse().ok()?;
                total += n * units[idx - 1].1;
                num.clear();
            }
        }
        if num.is_empty() {
            Some(())
        } else {
            None
        }
    };
    scan(date, &[('W', 604_800_000.0), ('D', 86_400_000.0)])?;
    if let Some(t) = time {
        scan(t, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1000.0)])?;
    }
    if !total.is_finite() || total > 9.0e18 {
        return None;
    }
    let ms = total.round() as i64;
    Some(if neg { -ms } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints() {
        assert_eq!(print_duration(0), "0ms");
        assert_eq!(print_duration(5_415_000), "1h 30m 15s");
        assert_eq!(print_duration(-2000), "-2s");
        assert_eq!(print_duration(86_400_250), "1d 250ms");
        assert_eq!(iso_string(5_400_000), "PT1H30M");
        assert_eq!(iso_string(250), "PT0.250S");
        assert_eq!(iso_string(0), "PT0S");
        assert_eq!(iso_string(90_000_000), "P1DT1H");
    }

    #[test]
    fn parses() {
        assert_eq!(parse_iso("PT1H30M"), Some(5_400_000));
        assert_eq!(parse_iso("PT0.250S"), Some(250));
        assert_eq!(parse_iso("P1DT1H"), Some(90_000_000));
        assert_eq!(parse_iso("-PT2S"), Some(-2000));
        assert_eq!(parse_iso("P"), None);
        assert_eq!(parse_iso("PT"), None);
        assert_eq!(parse_iso("PT1X"), None);
        assert_eq!(parse_iso("1H"), None);
    }
}
