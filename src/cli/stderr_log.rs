//! The logger the `bt` binary installs for the `log` facade: each runtime log line (target
//! `bt`, already rate-limited by `base::log`) goes to standard error as it is, without level
//! or timestamp, as bt has always printed them. Records of other targets (dependencies) are dropped.

struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target() == "bt"
    }

    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "{}", r.args());
        }
    }

    fn flush(&self) {}
}

/// Installs the stderr logger (once; a logger installed before stays).
pub(crate) fn install() {
    static LOG: StderrLog = StderrLog;
    if log::set_logger(&LOG).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}
