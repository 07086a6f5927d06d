//! `bt run --max-memory SIZE` (`BT_MAX_MEMORY`): the memory a program may hold.
//!
//! The `bt` binary's allocator counts (`bt::CountingAlloc` over mimalloc, src/allocator.rs),
//! so the limit works as an engine's `max_memory` does (`memory`): the host thread and every
//! runtime worker thread are charged to one account opened after the standard library is
//! loaded (what the limit bounds is the program's own memory), each step that allocates in
//! proportion to an argument is refused before it allocates when it would pass the limit
//! (`Ctx::reserve`, through `Program::max_allocation` and the account), and a preemption
//! hook compares the account with the limit every few thousand reductions of every process.
//!
//! Over the limit the program ends: the main program with an uncatchable `memory_limit` unwind
//! (its `ensure:` blocks run under a small allowance, then `bt run` reports the error with
//! its location, [`explain`]); an actor over the limit ends the process at once with the same
//! report and exit status 1 (the actor may be one of thousands a fork bomb started, and the
//! main program may be blocked waiting on it). Never an abort: the allocator is never asked
//! for more than the limit allows by a single step, and gradual growth is seen within one
//! preemption step.
//!
//! The default is [`DEFAULT_SHARE`] of the machine's memory or of the cgroup's limit, if
//! lower ([`default_limit`]).

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::interp::eval::Unwind;
use crate::interp::Interpreter;
use bt::memory::{self, Account};

/// The share of the machine's (or cgroup's) memory a program may hold by default: three
/// quarters, leaving the rest for the system, the allocator's own pages and other programs.
const DEFAULT_SHARE: (usize, usize) = (3, 4);

/// Reductions between two calls of the hook (the evaluator's default preemption step, so
/// the schedule is unchanged).
const STEP: u32 = 4000;

/// Where the limit came from, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Flag,
    Env,
    Default,
}

/// The limit of one `bt run`.
#[derive(Clone, Debug)]
pub(crate) struct MaxMemory {
    pub(crate) bytes: usize,
    pub(crate) source: Source,
}

/// `SIZE`: a whole number of bytes with an optional binary suffix `K`, `M`, `G`, `T` (also
/// written `KB`/`KiB`, any case): `512M`, `2G`, `1048576`. At least 1 MiB.
pub(crate) fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let n: usize = num
        .parse()
        .map_err(|_| format!("expected a size like 512M or 2G, not '{s}'"))?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("expected a size like 512M or 2G, not '{s}'")),
    };
    let bytes = n
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))?;
    if bytes < 1 << 20 {
        return Err(format!("size '{s}' is below the least limit, 1M"));
    }
    Ok(bytes)
}

/// `bytes` for a person: `64 MiB`, `1.5 GiB`, `900 KiB`.
fn format_size(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut v = bytes as f64;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 || v >= 100.0 {
        format!("{} {}", v.round() as u64, UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The limit of this run: `--max-memory` (already parsed), else `BT_MAX_MEMORY`, else the
/// default. A bad `BT_MAX_MEMORY` is a usage error naming the variable.
pub(crate) fn resolve(flag: Option<usize>) -> Result<MaxMemory, String> {
    if let Some(bytes) = flag {
        return Ok(MaxMemory {
            bytes,
            source: Source::Flag,
        });
    }
    if let Some(v) = std::env::var_os("BT_MAX_MEMORY") {
        let v = v.to_string_lossy();
        let bytes = parse_size(&v).map_err(|m| format!("BT_MAX_MEMORY: {m}"))?;
        return Ok(MaxMemory {
            bytes,
            source: Source::Env,
        });
    }
    Ok(MaxMemory {
        bytes: default_limit(),
        source: Source::Default,
    })
}

/// [`DEFAULT_SHARE`] of the machine's physical memory, or of this process's cgroup memory
/// limit when that is lower.
fn default_limit() -> usize {
    let machine = memory::machine_memory();
    let total = cgroup_limit().map_or(machine, |c| c.min(machine));
    let (num, den) = DEFAULT_SHARE;
    (total / den).saturating_mul(num)
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), if it has one.
fn cgroup_limit() -> Option<usize> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut files = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if ctrl.is_empty() {
            files.push(format!("/sys/fs/cgroup/{path}/memory.max"));
        } else if ctrl.split(',').any(|c| c == "memory") {
            files.push(format!(
                "/sys/fs/cgroup/memory/{path}/memory.limit_in_bytes"
            ));
        }
    }
    // Inside a container the process's own cgroup is the root of the mounted hierarchy.
    files.push("/sys/fs/cgroup/memory.max".into());
    files.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".into());
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|s| parse_cgroup_value(&s))
        .min()
}

/// A cgroup memory limit file's value: `max` (v2) or a huge number (v1's "no limit") is none.
fn parse_cgroup_value(s: &str) -> Option<usize> {
    let n: u64 = s.trim().parse().ok()?;
    (n < 1 << 60).then_some(n as usize)
}

/// The account of the running `bt run` (one per process): read by the hooks, which capture
/// nothing, so installing one on an actor's run allocates nothing.
static ACCOUNT: OnceLock<&'static Account> = OnceLock::new();

/// The report an actor over the limit prints before the process ends.
static ACTOR_REPORT: OnceLock<String> = OnceLock::new();

fn account() -> Option<&'static Account> {
    ACCOUNT.get().copied()
}

/// Is the program over its limit? (Flushes this thread's pending count first.)
fn over() -> bool {
    account().is_some_and(|a| {
        memory::flush();
        a.over()
    })
}

/// Puts `limit` in force for the program `vm` runs: the account (charged to the calling
/// thread from now on, and to every runtime thread), the single-step bound and the hooks.
/// Answers false, doing nothing, when the process's allocator does not count (a test
/// binary of this crate): then only the machine-size refusal of `Ctx::reserve` holds.
pub(crate) fn install(vm: &Interpreter, limit: &MaxMemory, path: &str) -> bool {
    if !memory::installed() {
        return false;
    }
    let a = *ACCOUNT.get_or_init(|| memory::new_account(limit.bytes));
    let _ = ACTOR_REPORT.set(format!(
        "{path}: LimitExceeded (memory_limit): {}\nHint: {}",
        message(limit),
        hint(limit)
    ));
    vm.prog.max_allocation.store(limit.bytes, Ordering::Relaxed);
    vm.runtime().charge_threads_to(a);
    memory::set_current(Some(a));
    let factory: crate::interp::program::CtxHookFactory = std::sync::Arc::new(
        |main: Option<&crate::runtime::ProcRef>,
         slot: &mut Option<crate::interp::eval::PreemptHook>| {
            // A thread the runtime started before the account existed.
            if memory::current().is_none() {
                memory::set_current(account());
            }
            if main.is_some() {
                if slot.is_none() {
                    *slot = Some(Box::new(main_check));
                }
            } else {
                *slot = Some(Box::new(actor_check));
            }
            STEP
        },
    );
    let _ = vm.prog.ctx_hook.set(factory);
    true
}

/// The main program's hook: over the limit, the uncatchable `memory_limit` unwind.
fn main_check() -> Result<(), Unwind> {
    if over() {
        return Err(Unwind::limit("memory_limit"));
    }
    Ok(())
}

/// An actor's hook: over the limit, the program ends with the report (see the module doc).
fn actor_check() -> Result<(), Unwind> {
    if over() {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{}",
            ACTOR_REPORT.get().map_or("memory_limit", String::as_str)
        );
        let _ = err.flush();
        std::process::exit(1);
    }
    Ok(())
}

/// The error's text: what was outgrown.
fn message(limit: &MaxMemory) -> String {
    let whose = match limit.source {
        Source::Flag => "set by --max-memory",
        Source::Env => "set by BT_MAX_MEMORY",
        Source::Default => "the default: 3/4 of the memory of this machine or its cgroup",
    };
    format!(
        "the program needs more memory than its limit of {} ({whose})",
        format_size(limit.bytes)
    )
}

/// The error's hint: the flag that raises the limit, with twice the limit as a SIZE.
fn hint(limit: &MaxMemory) -> String {
    let twice = limit.bytes.saturating_mul(2);
    let more = if twice >= 1 << 30 {
        format!("{}G", twice.div_ceil(1 << 30))
    } else {
        format!("{}M", twice.div_ceil(1 << 20))
    };
    format!(
        "raise the limit with bt run --max-memory SIZE (or BT_MAX_MEMORY=SIZE), e.g. --max-memory {more}"
    )
}

/// A `memory_limit` error of the main program, told in terms of this run's limit.
pub(crate) fn explain(e: &mut crate::interp::BtError, limit: &MaxMemory) {
    if let crate::interp::BtError::Uncaught(u) = e {
        if u.kind == "memory_limit" {
            u.message = message(limit);
            u.hint = Some(hint(limit));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("2gib"), Ok(2 << 30));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("4096K"), Ok(4 << 20));
        for bad in [
            "",
            "lots",
            "12Q",
            "-5M",
            "1.5G",
            "0",
            "512",
            "99999999999999999999T",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_print_for_people() {
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(3 << 29), "1.5 GiB");
        assert_eq!(format_size(900 << 10), "900 KiB");
        assert_eq!(format_size(18 << 30), "18 GiB");
    }

    #[test]
    fn cgroup_values_without_a_limit_are_none() {
        assert_eq!(parse_cgroup_value("max\n"), None);
        assert_eq!(parse_cgroup_value("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_value("536870912\n"), Some(512 << 20));
    }

    #[test]
    fn the_default_is_a_share_of_the_machine() {
        let d = default_limit();
        assert!(d > 0 && d <= memory::machine_memory() / 4 * 3 + 3, "{d}");
    }

    #[test]
    fn the_hint_names_the_flag_and_a_larger_size() {
        let l = MaxMemory {
            bytes: 64 << 20,
            source: Source::Flag,
        };
        assert!(message(&l).contains("64 MiB"), "{}", message(&l));
        assert!(message(&l).contains("--max-memory"));
        assert!(hint(&l).contains("--max-memory 128M"), "{}", hint(&l));
        let big = MaxMemory {
            bytes: (17 << 30) + (700 << 20),
            source: Source::Default,
        };
        assert!(hint(&big).ends_with("--max-memory 36G"), "{}", hint(&big));
    }
}
