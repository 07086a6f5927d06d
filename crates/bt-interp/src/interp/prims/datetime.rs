//! `DateTime`: an immutable UTC instant with nanosecond precision, on the
//! `time` crate (no calendar code here). Constructors (`year:month:day:`, `…hour:minute:
//! second:`, `fromString:` → Result, `fromTimestamp:`, `fromTimestampMs:`, `now`), accessors,
//! arithmetic (`addSeconds:`/`addMinutes:`/`addHours:`/`addDays:`, `addMonths:`/`addYears:`
//! clamping to the month's last day, `+`/`-` a Duration, `-` a DateTime → Duration,
//! `diffSeconds:`), comparisons and ISO 8601 printing (`asString`:
//! `2026-02-18T10:30:00Z`, with `.mmm`, `.uuuuuu` or `.nnnnnnnnn` when there is a fraction).
//!
//! Invalid calendar arguments (month 13, February 30, an hour of 24) and results outside years
//! −9999…9999 raise `type_error`; `fromString:` answers `Result error:` (`parse_error`).
//! `DateTime now` reads the wall clock; Duration and Timer stay monotonic.

use std::any::Any;

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

use crate::interp::actor::handle::{downcast, native};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::duration::{duration, ms_of};
use crate::interp::prims::fault::article_class;
use crate::value::{ClassRef, NativeObj, Value};

pub fn register(p: &mut Prims) {
    let d = "DateTime";
    p.add_class(d, "year:month:day:", |ctx, _, a| {
        civil(ctx, &a[0], &a[1], &a[2], None)
    });
    p.add_class(d, "year:month:day:hour:minute:second:", |ctx, _, a| {
        civil(ctx, &a[0], &a[1], &a[2], Some((&a[3], &a[4], &a[5])))
    });
    p.add_class(d, "fromString:", from_string);
    p.add_class(d, "fromTimestamp:", |ctx, _, a| {
        from_units(ctx, &a[0], 1_000_000_000)
    });
    p.add_class(d, "fromTimestampMs:", |ctx, _, a| {
        from_units(ctx, &a[0], 1_000_000)
    });
    p.add_class(d, "now", |ctx, _, _| {
        // Under the deterministic scheduler the wall clock is virtual.
        if crate::interp::prims::timer::virtual_clock(ctx).is_some() {
            let us = crate::interp::prims::timer::wall_us(ctx);
            if let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000) {
                return Ok(make(ctx, t));
            }
        }
        Ok(make(ctx, OffsetDateTime::now_utc()))
    });
    p.add_class(d, "new", |ctx, r, _| {
        crate::interp::prims::class::refuse_new(
            ctx,
            r,
            "Use DateTime year:month:day:, fromString:, fromTimestamp: or now",
        )
    });
    p.add_class(d, "epoch", |ctx, _, _| {
        Ok(make(ctx, OffsetDateTime::UNIX_EPOCH))
    });

    p.add(d, "year", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.year() as i64))
    });
    p.add(d, "month", |ctx, r, _| {
        Ok(Value::Int(u8::from(get(ctx, r)?.month()) as i64))
    });
    p.add(d, "day", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.day() as i64))
    });
    p.add(d, "hour", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.hour() as i64))
    });
    p.add(d, "minute", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.minute() as i64))
    });
    p.add(d, "second", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.second() as i64))
    });
    p.add(d, "millisecond", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.millisecond() as i64))
    });
    p.add(d, "nanosecond", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.nanosecond() as i64))
    });
    p.add(d, "dayOfWeek", |ctx, r, _| {
        Ok(Value::Int(
            get(ctx, r)?.weekday().number_from_monday() as i64
        ))
    });
    p.add(d, "dayOfYear", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.ordinal() as i64))
    });
    p.add(d, "daysInMonth", |ctx, r, _| {
        let t = get(ctx, r)?;
        Ok(Value::Int(t.month().length(t.year()) as i64))
    });
    p.add(d, "isLeapYear", |ctx, r, _| {
        Ok(Value::bool(time::util::is_leap_year(get(ctx, r)?.year())))
    });
    p.add(d, "asTimestamp", |ctx, r, _| {
        Ok(Value::Int(get(ctx, r)?.unix_timestamp()))
    });
    p.add(d, "asTimestampMs", |ctx, r, _| {
        let ns = get(ctx, r)?.unix_timestamp_nanos();
        Ok(Value::Int(ns.div_euclid(1_000_000) as i64))
    });
    p.add(d, "asString", |ctx, r, _| Ok(Value::str(iso(get(ctx, r)?))));
    p.add(d, "displayString", |ctx, r, _| {
        Ok(Value::str(iso(get(ctx, r)?)))
    });
    p.add(d, "printString", |ctx, r, _| {
        Ok(Value::str(format!("DateTime({})", iso(get(ctx, r)?))))
    });
    p.add(d, "asJson", |ctx, r, _| Ok(Value::str(iso(get(ctx, r)?))));
    p.add(d, "startOfDay", |ctx, r, _| {
        let t = get(ctx, r)?;
        Ok(make(ctx, t.replace_time(Time::MIDNIGHT)))
    });

    p.add(d, "addSeconds:", |ctx, r, a| {
        shift(ctx, r, &a[0], 1_000_000_000)
    });
    p.add(d, "addMinutes:", |ctx, r, a| {
        shift(ctx, r, &a[0], 60_000_000_000)
    });
    p.add(d, "addHours:", |ctx, r, a| {
        shift(ctx, r, &a[0], 3_600_000_000_000)
    });
    p.add(d, "addDays:", |ctx, r, a| {
        shift(ctx, r, &a[0], 86_400_000_000_000)
    });
    p.add(d, "addMonths:", |ctx, r, a| add_months(ctx, r, &a[0], 1));
    p.add(d, "addYears:", |ctx, r, a| add_months(ctx, r, &a[0], 12));
    p.add(d, "+", |ctx, r, a| {
        let ms = ms_of(ctx, &a[0])?;
        offset_ns(ctx, r, ms as i128 * 1_000_000)
    });
    p.add(d, "-", |ctx, r, a| match downcast::<DateTimeVal>(&a[0]) {
        Some(o) => {
            let diff = get(ctx, r)?.unix_timestamp_nanos() - o.t.unix_timestamp_nanos();
            Ok(duration(ctx, diff.div_euclid(1_000_000) as i64))
        }
        None => {
            let ms = ms_of(ctx, &a[0]).map_err(|_| {
                let n = article_class(&a[0]);
                ctx.type_err(format!(
                    "DateTime - expects a Duration or a DateTime, got {n}"
                ))
            })?;
            offset_ns(ctx, r, -(ms as i128) * 1_000_000)
        }
    });
    p.add(d, "diffSeconds:", |ctx, r, a| {
        let x = get(ctx, r)?.unix_timestamp_nanos();
        let y = arg(ctx, "diffSeconds:", &a[0])?.unix_timestamp_nanos();
        Ok(Value::Int(((x - y) / 1_000_000_000) as i64))
    });
    p.add(d, "<", |ctx, r, a| cmp(ctx, r, &a[0], "<", |o| o.is_lt()));
    p.add(d, ">", |ctx, r, a| cmp(ctx, r, &a[0], ">", |o| o.is_gt()));
    p.add(d, "<=", |ctx, r, a| cmp(ctx, r, &a[0], "<=", |o| o.is_le()));
    p.add(d, ">=", |ctx, r, a| cmp(ctx, r, &a[0], ">=", |o| o.is_ge()));
    p.add(d, "min:", |ctx, r, a| {
        let lt = get(ctx, r)? <= arg(ctx, "min:", &a[0])?;
        Ok(if lt { r.clone() } else { a[0].clone() })
    });
    p.add(d, "max:", |ctx, r, a| {
        let gt = get(ctx, r)? >= arg(ctx, "max:", &a[0])?;
        Ok(if gt { r.clone() } else { a[0].clone() })
    });
    for sel in ["=:=", "=="] {
        p.add(d, sel, |_, r, a| Ok(Value::bool(same(r, &a[0]))));
    }
    for sel in ["/=", "=/=", "~="] {
        p.add(d, sel, |_, r, a| Ok(Value::bool(!same(r, &a[0]))));
    }
    p.add(d, "hash", |ctx, r, _| {
        Ok(Value::Int(
            (get(ctx, r)?.unix_timestamp_nanos() % (1 << 62)) as i64,
        ))
    });
}

/// A DateTime value.
pub struct DateTimeVal {
    class: ClassRef,
    pub t: OffsetDateTime,
}

impl NativeObj for DateTimeVal {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        format!("DateTime({})", iso(self.t))
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<DateTimeVal>()
            .is_some_and(|o| o.t == self.t)
    }
    fn hash_code(&self) -> u64 {
        let ns = self.t.unix_timestamp_nanos();
        (ns as u64) ^ ((ns >> 64) as u64) ^ 0xDA7E
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let ns = self.t.unix_timestamp_nanos();
        let hi = ((ns >> 64) as i64 as u64) ^ (1 << 63);
        let mut k: Vec<u64> = "DateTime".chars().map(|c| c as u64 + 1).collect();
        k.push(0);
        k.push(hi);
        k.push(ns as u64);
        (9, k)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn make(ctx: &Ctx, t: OffsetDateTime) -> Value {
    let class = ctx
        .prog
        .class_named("DateTime")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(DateTimeVal { class, t })
}

fn get(ctx: &Ctx, v: &Value) -> Result<OffsetDateTime, Unwind> {
    arg(ctx, "DateTime", v)
}

fn arg(ctx: &Ctx, what: &str, v: &Value) -> Result<OffsetDateTime, Unwind> {
    match downcast::<DateTimeVal>(v) {
        Some(d) => Ok(d.t),
        None => {
            let n = article_class(v);
            Err(ctx.type_err(format!("{what} expects a DateTime, got {n}")))
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (downcast::<DateTimeVal>(a), downcast::<DateTimeVal>(b)) {
        (Some(x), Some(y)) => x.t == y.t,
        _ => false,
    }
}

fn cmp(
    ctx: &mut Ctx,
    r: &Value,
    a: &Value,
    sel: &str,
    f: fn(std::cmp::Ordering) -> bool,
) -> EvalResult {
    let x = get(ctx, r)?;
    let y = arg(ctx, sel, a)?;
    Ok(Value::bool(f(x.cmp(&y))))
}

fn int(ctx: &Ctx, what: &str, v: &Value) -> Result<i64, Unwind> {
    match v {
        Value::Int(i) => Ok(*i),
        // An Integer beyond 64 bits is out of every calendar range.
        Value::BigInt(_) => Err(out_of_range(ctx)),
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!("DateTime {what} must be an Integer, got {n}")))
        }
    }
}

fn civil(
    ctx: &mut Ctx,
    y: &Value,
    m: &Value,
    d: &Value,
    hms: Option<(&Value, &Value, &Value)>,
) -> EvalResult {
    let (y, m, d) = (
        int(ctx, "year", y)?,
        int(ctx, "month", m)?,
        int(ctx, "day", d)?,
    );
    let (h, mi, s) = match hms {
        Some((h, mi, s)) => (
            int(ctx, "hour", h)?,
            int(ctx, "minute", mi)?,
            int(ctx, "second", s)?,
        ),
        None => (0, 0, 0),
    };
    let bad = || {
        ctx.type_err(format!(
            "invalid date-time {y}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}"
        ))
    };
    let year = i32::try_from(y).map_err(|_| bad())?;
    let month = u8::try_from(m)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .ok_or_else(bad)?;
    let day = u8::try_from(d).map_err(|_| bad())?;
    let date = Date::from_calendar_date(year, month, day).map_err(|_| bad())?;
    let (h, mi, s) = (
        u8::try_from(h).map_err(|_| bad())?,
        u8::try_from(mi).map_err(|_| bad())?,
        u8::try_from(s).map_err(|_| bad())?,
    );
    let time = Time::from_hms(h, mi, s).map_err(|_| bad())?;
    Ok(make(ctx, PrimitiveDateTime::new(date, time).assume_utc()))
}

/// `fromTimestamp:` (units = ns per second) / `fromTimestampMs:` (ns per millisecond):
/// an Integer or a Float count since 1970-01-01T00:00:00Z.
fn from_units(ctx: &mut Ctx, v: &Value, unit: i128) -> EvalResult {
    let ns: i128 = match v {
        Value::Int(i) => (*i as i128) * unit,
        Value::Float(f) if f.get().is_finite() && f.get().abs() < 1e15 => {
            (f.get() * unit as f64).round() as i128
        }
        Value::BigInt(_) | Value::Float(_) => {
            return Err(ctx.type_err("timestamp out of range for a DateTime"))
        }
        other => {
            let n = article_class(other);
            return Err(ctx.type_err(format!("a timestamp must be a number, got {n}")));
        }
    };
    match OffsetDateTime::from_unix_timestamp_nanos(ns) {
        Ok(t) => Ok(make(ctx, t)),
        Err(_) => Err(ctx.type_err("timestamp out of range for a DateTime")),
    }
}

fn offset_ns(ctx: &mut Ctx, r: &Value, delta: i128) -> EvalResult {
    let t = get(ctx, r)?;
    match OffsetDateTime::from_unix_timestamp_nanos(t.unix_timestamp_nanos() + delta) {
        Ok(t) => Ok(make(ctx, t)),
        Err(_) => Err(out_of_range(ctx)),
    }
}

/// `type_error` for a calendar result (or count) outside years −9999…9999.
fn out_of_range(ctx: &Ctx) -> Unwind {
    ctx.type_err("DateTime arithmetic out of range (years -9999 to 9999)")
}

/// `addSeconds:` … `addDays:`: an Integer (or Float) count of `unit` nanoseconds.
fn shift(ctx: &mut Ctx, r: &Value, n: &Value, unit: i128) -> EvalResult {
    let delta = match n {
        Value::Int(i) => (*i as i128).checked_mul(unit),
        Value::Float(f) if f.get().is_finite() && f.get().abs() < 1e12 => {
            Some((f.get() * unit as f64).round() as i128)
        }
        _ => None,
    };
    match delta {
        Some(d) => offset_ns(ctx, r, d),
        // A count too large for any DateTime.
        None if matches!(n, Value::Int(_) | Value::BigInt(_) | Value::Float(_)) => {
            Err(out_of_range(ctx))
        }
        None => {
            let n = article_class(n);
            Err(ctx.type_err(format!("expected a number of units to add, got {n}")))
        }
    }
}

/// `addMonths:` / `addYears:`: calendar months; the day is clamped to the target month's last
/// day (January 31 + 1 month = February 28, or 29 in a leap year).
fn add_months(ctx: &mut Ctx, r: &Value, n: &Value, per: i64) -> EvalResult {
    let t = get(ctx, r)?;
    let k = int(
        ctx,
        if per == 12 {
            "year count"
        } else {
            "month count"
        },
        n,
    )?;
    let total = (t.year() as i64) * 12 + (u8::from(t.month()) as i64 - 1) + k.saturating_mul(per);
    let (year, month0) = (total.div_euclid(12), total.rem_euclid(12));
    let out_of_range = || out_of_range(ctx);
    let year = i32::try_from(year).map_err(|_| out_of_range())?;
    let month = Month::try_from(month0 as u8 + 1).map_err(|_| out_of_range())?;
    let day = t.day().min(month.length(year));
    let date = Date::from_calendar_date(year, month, day).map_err(|_| out_of_range())?;
    Ok(make(ctx, t.replace_date(date)))
}

/// ISO 8601 in UTC: `2026-02-18T10:30:00Z`, with the shortest of 3/6/9 fraction digits that
/// holds the nanoseconds.
pub fn iso(t: OffsetDateTime) -> String {
    let year = if t.year() < 0 {
        format!("-{:04}", -t.year())
    } else {
        format!("{:04}", t.year())
    };
    let mut s = format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}",
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let ns = t.nanosecond();
    if ns != 0 {
        if ns.is_multiple_of(1_000_000) {
            s.push_str(&format!(".{:03}", ns / 1_000_000));
        } else if ns.is_multiple_of(1_000) {
            s.push_str(&format!(".{:06}", ns / 1_000));
        } else {
            s.push_str(&format!(".{ns:09}"));
        }
    }
    s.push('Z');
    s
}

/// Parses ISO 8601: RFC 3339 (`2026-02-18T10:30:00Z`, `…+02:00`, fractions, lower-case `t`/`z`
/// or a space), a date-time without an offset (taken as UTC), or a date (midnight UTC).
pub fn parse_iso(s: &str) -> Option<OffsetDateTime> {
    let s = s.trim();
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t.to_offset(UtcOffset::UTC));
    }
    let with_t = s.replacen(' ', "T", 1);
    if let Ok(t) = OffsetDateTime::parse(&with_t, &Rfc3339) {
        return Some(t.to_offset(UtcOffset::UTC));
    }
    let local = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    if let Ok(t) = PrimitiveDateTime::parse(&with_t, &local) {
        return Some(t.assume_utc());
    }
    let short = format_description!("[year]-[month]-[day]T[hour]:[minute]");
    if let Ok(t) = PrimitiveDateTime::parse(&with_t, &short) {
        return Some(t.assume_utc());
    }
    let date = format_description!("[year]-[month]-[day]");
    if let Ok(d) = Date::parse(s, &date) {
        return Some(d.midnight().assume_utc());
    }
    None
}

fn from_string(ctx: &mut Ctx, _: &Value, a: &[Value]) -> EvalResult {
    let s = match &a[0] {
        Value::Str(s) => s.to_string(),
        other => {
            let n = article_class(other);
            return Err(ctx.type_err(format!("DateTime fromString: expects a String, got {n}")));
        }
    };
    match parse_iso(&s) {
        Some(t) => Ok(ctx.make_ok(make(ctx, t))),
        None => match ctx.err(
            ErrorKind::ParseError,
            format!("not an ISO 8601 date-time: {}", quote_capped(&s)),
        ) {
            Unwind::Error(exc) => Ok(ctx.make_error(exc)),
            other => Err(other),
        },
    }
}

/// `"text"` for a message, at most 80 characters of it (`"abc…"… N more characters`).
pub(crate) fn quote_capped(s: &str) -> String {
    match crate::diagnostic::split_cap(s, 80) {
        (_, 0) => crate::interp::print::quote_string(s),
        (head, more) => format!(
            "{}… {more} more characters",
            crate::interp::print::quote_string(head)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        for s in [
            "2026-02-18T10:30:00Z",
            "2024-02-29T23:59:59.5Z",
            "1970-01-01T00:00:00.000001Z",
            "1969-12-31T23:59:59.999999999Z",
        ] {
            let t = parse_iso(s).unwrap();
            let back = parse_iso(&iso(t)).unwrap();
            assert_eq!(t, back, "{s}");
        }
        assert_eq!(
            iso(parse_iso("2026-02-18T12:30:00+02:00").unwrap()),
            "2026-02-18T10:30:00Z"
        );
        assert_eq!(
            iso(parse_iso("2026-02-18").unwrap()),
            "2026-02-18T00:00:00Z"
        );
        assert_eq!(
            iso(parse_iso("2024-02-29T23:59:59.5Z").unwrap()),
            "2024-02-29T23:59:59.500Z"
        );
        assert!(parse_iso("2026-02-30T00:00:00Z").is_none());
        assert!(parse_iso("yesterday").is_none());
    }
}
