//! The runtime log. Every line the runtime writes on its own (failed casts, supervisor
//! reports, distribution events) goes through one [`LogSink`]: by default the `log` facade at
//! target `bt` (the `bt` binary installs a logger that prints to standard error; a host that
//! installs none sees nothing), under the embedding engine the engine's own buffer.
//!
//! Every call site is rate-limited apart ([`Limiter`]): at most [`LINES_PER_INTERVAL`] lines
//! per [`INTERVAL`], then one line "… N more suppressed" once the next interval starts, so
//! a peer or a script cannot flood the log.

use std::collections::HashMap;
use std::panic::Location;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where log lines go.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Lines one call site may write per [`INTERVAL`].
pub(crate) const LINES_PER_INTERVAL: u32 = 20;
/// The rate-limit interval.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// A [`LogSink`] that can sit in a `Debug` options struct.
#[derive(Clone)]
pub struct LogTarget(pub LogSink);

impl std::fmt::Debug for LogTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogTarget(..)")
    }
}

/// The default sink: the `log` facade, target `bt`, level warn.
pub fn facade() -> LogSink {
    Arc::new(|line: &str| log::warn!(target: "bt", "{line}"))
}

#[derive(Default)]
struct Site {
    window: Option<Instant>,
    used: u32,
    suppressed: u64,
}

/// Per-call-site rate limiting (keyed by the caller's source location).
#[derive(Default)]
pub struct Limiter {
    sites: parking_lot::Mutex<HashMap<(&'static str, u32, u32), Site>>,
}

impl Limiter {
    /// The lines to write for `line` from `site` at `now`: the line while the site is within
    /// its budget, nothing over it; the first line of a new interval is preceded by the count
    /// of what the last one left out.
    pub fn admit(&self, site: &'static Location<'static>, now: Instant, line: &str) -> Vec<String> {
        let key = (site.file(), site.line(), site.column());
        let mut sites = self.sites.lock();
        let s = sites.entry(key).or_default();
        let mut out = Vec::new();
        if s.window.is_none_or(|w| now.duration_since(w) >= INTERVAL) {
            s.window = Some(now);
            s.used = 0;
            if s.suppressed > 0 {
                out.push(format!("… {} more suppressed", s.suppressed));
                s.suppressed = 0;
            }
        }
        if s.used < LINES_PER_INTERVAL {
            s.used += 1;
            out.push(line.to_string());
        } else {
            s.suppressed += 1;
        }
        out
    }

    /// Writes `line` to `sink` if the caller's site is within its budget.
    #[track_caller]
    pub fn write(&self, sink: &LogSink, line: &str) {
        for l in self.admit(Location::caller(), Instant::now(), line) {
            sink(&l);
        }
    }
}

/// Writes a line through the process-wide limiter to the `log` facade: for the few log paths
/// with no runtime at hand.
#[track_caller]
pub fn warn(line: &str) {
    static LIMITER: std::sync::OnceLock<Limiter> = std::sync::OnceLock::new();
    static SINK: std::sync::OnceLock<LogSink> = std::sync::OnceLock::new();
    LIMITER
        .get_or_init(Limiter::default)
        .write(SINK.get_or_init(facade), line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_writes_its_budget_then_one_summary_per_interval() {
        let l = Limiter::default();
        let site = Location::caller();
        let t0 = Instant::now();
        let mut lines = Vec::new();
        for i in 0..100_000 {
            lines.extend(l.admit(site, t0, &format!("l{i}")));
        }
        assert_eq!(lines.len(), LINES_PER_INTERVAL as usize);
        let next = l.admit(site, t0 + INTERVAL, "again");
        assert_eq!(
            next,
            vec![
                format!("… {} more suppressed", 100_000 - LINES_PER_INTERVAL),
                "again".to_string()
            ]
        );
    }

    #[test]
    fn sites_have_their_own_budgets() {
        let l = Limiter::default();
        let t0 = Instant::now();
        let a = Location::caller();
        let b = Location::caller();
        for _ in 0..LINES_PER_INTERVAL {
            assert_eq!(l.admit(a, t0, "a").len(), 1);
        }
        assert!(l.admit(a, t0, "a").is_empty());
        assert_eq!(l.admit(b, t0, "b").len(), 1);
    }
}
