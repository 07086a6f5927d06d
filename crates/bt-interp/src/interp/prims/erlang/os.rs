//! `os` (environment variables under the Env capability, the clocks, the OS type and pid)
//! and `calendar` (dates as `{Y, M, D}`, times as `{H, Mi, S}`, UTC).

use super::terms::{atom, chardata, charlist, int_arg, list, Fail, R};
use crate::interp::capability::{require, require_env, Capability};
use crate::interp::eval::Ctx;
use crate::value::Value;

/// The name of an environment variable: a charlist (a binary is `badarg`, as in Erlang).
fn env_name(v: &Value) -> Result<String, Fail> {
    match v {
        Value::List(_) | Value::Array(_) => chardata(v).ok_or(Fail::Badarg),
        _ => Err(Fail::Badarg),
    }
}

pub(super) fn os(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    match (f, a) {
        ("getenv", []) => {
            require(ctx, Capability::Env, "os:getenv/0")?;
            Ok(list(
                std::env::vars()
                    .map(|(k, v)| charlist(&format!("{k}={v}")))
                    .collect(),
            ))
        }
        ("getenv", [k]) | ("getenv", [k, _]) => {
            let k = env_name(k)?;
            require_env(ctx, "os:getenv", &k)?;
            Ok(match std::env::var(&k) {
                Ok(v) => charlist(&v),
                Err(_) => a.get(1).cloned().unwrap_or(Value::False),
            })
        }
        ("system_time", []) => super::modules::erlang(ctx, "system_time", &[]),
        ("system_time", [u]) => super::modules::erlang(ctx, "system_time", std::slice::from_ref(u)),
        ("timestamp", []) => Ok(super::modules::timestamp()),
        ("type", []) => Ok(Value::tuple(vec![
            atom(std::env::consts::FAMILY),
            atom(std::env::consts::OS),
        ])),
        ("getpid", []) => {
            require(ctx, Capability::Sys, "os:getpid/0")?;
            Ok(charlist(&std::process::id().to_string()))
        }
        _ => Err(Fail::Undef),
    }
}

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

fn date_tuple(d: time::Date) -> Value {
    Value::tuple(vec![
        Value::Int(d.year() as i64),
        Value::Int(d.month() as u8 as i64),
        Value::Int(d.day() as i64),
    ])
}

fn time_tuple(h: i64, m: i64, s: i64) -> Value {
    Value::tuple(vec![Value::Int(h), Value::Int(m), Value::Int(s)])
}

/// `{{Y, M, D}, {H, Mi, S}}` now (UTC).
pub(super) fn datetime_now() -> Value {
    let n = now();
    Value::tuple(vec![
        date_tuple(n.date()),
        time_tuple(n.hour() as i64, n.minute() as i64, n.second() as i64),
    ])
}

/// The date (0) or the time (1) of [`datetime_now`].
pub(super) fn date_time_part(i: usize) -> Value {
    match &datetime_now() {
        Value::Tuple(t) => t[i].clone(),
        other => other.clone(),
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn month_days(y: i64, m: i64) -> i64 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days from year 0 to the first of January of `y` (Erlang's `dy/1`).
fn year_days(y: i64) -> i64 {
    if y <= 0 {
        return 0;
    }
    let x = y - 1;
    x / 4 - x / 100 + x / 400 + x * 365 + 366
}

fn greg_days(y: i64, m: i64, d: i64) -> Result<i64, Fail> {
    if y < 0 || !(1..=12).contains(&m) || d < 1 || d > month_days(y, m) {
        return Err(Fail::FunctionClause);
    }
    let before: i64 = (1..m).map(|k| month_days(y, k)).sum();
    Ok(year_days(y) + before + d - 1)
}

fn days_to_date(days: i64) -> Result<(i64, i64, i64), Fail> {
    if days < 0 {
        return Err(Fail::FunctionClause);
    }
    let mut y = days / 366;
    while year_days(y + 1) <= days {
        y += 1;
    }
    let mut rest = days - year_days(y);
    let mut m = 1;
    while rest >= month_days(y, m) {
        rest -= month_days(y, m);
        m += 1;
    }
    Ok((y, m, rest + 1))
}

fn triple(v: &Value) -> Result<(i64, i64, i64), Fail> {
    match v {
        Value::Tuple(t) if t.len() == 3 => Ok((int_arg(&t[0])?, int_arg(&t[1])?, int_arg(&t[2])?)),
        _ => Err(Fail::FunctionClause),
    }
}

fn ints(a: &[Value]) -> Result<Vec<i64>, Fail> {
    a.iter()
        .map(|v| int_arg(v).map_err(|_| Fail::FunctionClause))
        .collect()
}

/// Year, month, day (or hour, minute, second).
type Ymd = (i64, i64, i64);

fn datetime(v: &Value) -> Result<(Ymd, Ymd), Fail> {
    match v {
        Value::Tuple(t) if t.len() == 2 => Ok((triple(&t[0])?, triple(&t[1])?)),
        _ => Err(Fail::FunctionClause),
    }
}

pub(super) fn calendar(f: &str, a: &[Value]) -> R {
    let int = |i: i64| Ok(Value::Int(i));
    match (f, a) {
        ("universal_time" | "local_time", []) => Ok(datetime_now()),
        ("is_leap_year", [y]) => Ok(Value::bool(is_leap(
            int_arg(y).map_err(|_| Fail::FunctionClause)?,
        ))),
        ("last_day_of_the_month", [y, m]) => {
            let v = ints(&[y.clone(), m.clone()])?;
            if v[0] < 0 || !(1..=12).contains(&v[1]) {
                return Err(Fail::FunctionClause);
            }
            int(month_days(v[0], v[1]))
        }
        ("valid_date", [d]) => {
            let (y, m, d) = triple(d)?;
            Ok(Value::bool(greg_days(y, m, d).is_ok()))
        }
        ("valid_date", [_, _, _]) => {
            let v = ints(a)?;
            Ok(Value::bool(greg_days(v[0], v[1], v[2]).is_ok()))
        }
        ("date_to_gregorian_days", [d]) => {
            let (y, m, d) = triple(d)?;
            int(greg_days(y, m, d)?)
        }
        ("date_to_gregorian_days", [_, _, _]) => {
            let v = ints(a)?;
            int(greg_days(v[0], v[1], v[2])?)
        }
        ("gregorian_days_to_date", [n]) => {
            let (y, m, d) = days_to_date(int_arg(n).map_err(|_| Fail::FunctionClause)?)?;
            Ok(time_tuple(y, m, d))
        }
        ("day_of_the_week", [d]) => {
            let (y, m, d) = triple(d)?;
            int((greg_days(y, m, d)? + 5) % 7 + 1)
        }
        ("day_of_the_week", [_, _, _]) => {
            let v = ints(a)?;
            int((greg_days(v[0], v[1], v[2])? + 5) % 7 + 1)
        }
        ("datetime_to_gregorian_seconds", [dt]) => {
            // Erlang checks the date, not the time.
            let ((y, m, d), (h, mi, s)) = datetime(dt)?;
            int(greg_days(y, m, d)? * 86400 + h * 3600 + mi * 60 + s)
        }
        ("gregorian_seconds_to_datetime", [n]) => {
            let n = int_arg(n).map_err(|_| Fail::FunctionClause)?;
            if n < 0 {
                return Err(Fail::FunctionClause);
            }
            let (y, m, d) = days_to_date(n / 86400)?;
            let s = n % 86400;
            Ok(Value::tuple(vec![
                time_tuple(y, m, d),
                time_tuple(s / 3600, s / 60 % 60, s % 60),
            ]))
        }
        ("seconds_to_daystime", [n]) => {
            let n = int_arg(n).map_err(|_| Fail::FunctionClause)?;
            let (days, s) = (n.div_euclid(86400), n.rem_euclid(86400));
            Ok(Value::tuple(vec![
                Value::Int(days),
                time_tuple(s / 3600, s / 60 % 60, s % 60),
            ]))
        }
        ("time_to_seconds", [t]) => {
            let (h, m, s) = triple(t)?;
            int(h * 3600 + m * 60 + s)
        }
        ("seconds_to_time", [n]) => {
            let s = int_arg(n).map_err(|_| Fail::FunctionClause)?;
            if !(0..86400).contains(&s) {
                return Err(Fail::FunctionClause);
            }
            Ok(time_tuple(s / 3600, s / 60 % 60, s % 60))
        }
        _ => Err(Fail::Undef),
    }
}

/// `file:read_file/1` under the File capability (read access to the path): `{ok, Binary}`,
/// or `{error, Reason}` with Erlang's POSIX reason (`enoent`, `eacces`, `eisdir`, …).
pub(super) fn file(ctx: &mut Ctx, f: &str, a: &[Value]) -> R {
    let ("read_file", [name]) = (f, a) else {
        return Err(Fail::Undef);
    };
    let name = match name {
        Value::Str(_) => name.clone(),
        Value::Symbol(s) => Value::str(s.as_str()),
        other => Value::str(chardata(other).ok_or(Fail::Badarg)?),
    };
    let path = crate::interp::prims::file::path_arg(
        ctx,
        crate::interp::capability::Access::Read,
        "file:read_file/1",
        &name,
    )
    .map_err(Fail::Raised)?;
    let read = std::fs::metadata(&path).and_then(|m| {
        if m.is_dir() {
            return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
        }
        Ok(m.len())
    });
    let bytes = match read {
        Ok(len) => {
            ctx.reserve(usize::try_from(len).unwrap_or(usize::MAX))
                .map_err(Fail::Raised)?;
            std::fs::read(&path)
        }
        Err(e) => Err(e),
    };
    Ok(match bytes {
        Ok(b) => Value::tuple(vec![
            atom("ok"),
            match String::from_utf8(b) {
                Ok(s) => Value::str(s),
                Err(e) => Value::Binary(std::sync::Arc::new(e.into_bytes())),
            },
        ]),
        Err(e) => Value::tuple(vec![atom("error"), atom(posix(&e))]),
    })
}

/// Erlang's name for an I/O error.
fn posix(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => "enoent",
        K::PermissionDenied => "eacces",
        K::IsADirectory => "eisdir",
        K::NotADirectory => "enotdir",
        K::InvalidFilename => "enametoolong",
        K::OutOfMemory => "enomem",
        _ => "eio",
    }
}

/// `erlang:system_info/1` for what bt knows the same way `erl` does: the scheduler and
/// processor counts (the machine's parallelism, as `erl` starts one scheduler per logical
/// processor) and the word size. Other items are the peer's.
pub(super) fn system_info(item: &Value) -> R {
    let Value::Symbol(s) = item else {
        return Err(Fail::Undef);
    };
    let cores = || {
        std::thread::available_parallelism()
            .map(|n| n.get() as i64)
            .unwrap_or(1)
    };
    match s.as_str() {
        "schedulers"
        | "schedulers_online"
        | "logical_processors"
        | "logical_processors_available"
        | "logical_processors_online" => Ok(Value::Int(cores())),
        "wordsize" => Ok(Value::Int(std::mem::size_of::<usize>() as i64)),
        _ => Err(Fail::Undef),
    }
}
