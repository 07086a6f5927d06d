//! The memory table: single steps that allocate in proportion to an argument (collections
//! from an Interval, `new:withAll:`, `repeat:`, `join:`, `copyReplaceAll:with:`, printing,
//! the Json and Binary encoders, huge Integers), each run under a small memory limit in a
//! child process of its test binary. Included (`#[path = "../support/memory_rows.rs"]`) by
//! two groups: `engine` (the counting allocator installed, `max_memory`) and `reliability`
//! (no counting allocator, `max_allocation`); not a test binary of its own.
//!
//! Each row must end with `memory_limit` (refused before it allocates), leave the engine
//! usable, and keep the child's peak RSS under [`LIMIT`] + [`SLACK`] above its baseline.

use std::process::Command;

/// The limit every row runs under.
pub(crate) const LIMIT: usize = 64 << 20;
/// What a child may grow beyond the limit: allocator slack, one check interval of growth,
/// thread stacks touched by the run.
pub(crate) const SLACK: usize = 40 << 20;

/// The variable naming the row a child runs.
pub(crate) const ROW_VAR: &str = "BT_MEMORY_ROW";

/// (name, setup run before the baseline is taken, the step that must be refused). A row
/// whose name starts with `held_` passes the limit only together with what its setup holds,
/// or by the results it keeps: it runs only where memory is counted (`max_memory` with the
/// counting allocator).
pub(crate) const ROWS: &[(&str, &str, &str)] = &[
    ("interval_as_list", "", "(1 to: 100000000) asList size"),
    ("interval_as_array", "", "(1 to: 100000000) asArray size"),
    ("interval_as_set", "", "(1 to: 100000000) asSet size"),
    ("interval_as_bag", "", "(1 to: 100000000) asBag size"),
    (
        "interval_collect",
        "",
        "((1 to: 100000000) collect: [:i | i]) size",
    ),
    (
        "interval_select",
        "",
        "((1 to: 100000000) select: [:i | true]) size",
    ),
    ("interval_reversed", "", "(1 to: 100000000) reversed size"),
    (
        "interval_stream",
        "",
        "(1 to: 100000000) stream asList size",
    ),
    ("array_new", "", "(Array new: 100000000) size"),
    (
        "array_new_with_all",
        "",
        "(Array new: 100000000 withAll: 0) size",
    ),
    (
        "array_new_with_all_wide",
        "",
        "(Array new: 100000000 withAll: \"x\") size",
    ),
    (
        "list_new_with_all",
        "",
        "(List new: 100000000 withAll: 0) size",
    ),
    ("repeat", "", "(\"ab\" repeat: 100000000) size"),
    ("pad_left", "", "(\"x\" padLeft: 100000000) size"),
    (
        "print_padded",
        "",
        "(5 printPaddedWith: $0 to: 1000000000) size",
    ),
    (
        "join",
        "a := Array new: 100000 withAll: (\"x\" repeat: 1000)",
        "(\",\" join: a) size",
    ),
    ("concat", "s := \"x\" repeat: 40000000", "(s ++ s) size"),
    (
        "replace_all",
        "s := \"x\" repeat: 1000000. t := \"y\" repeat: 100",
        "(s replaceAll: \"x\" with: t) size",
    ),
    (
        "replace_all_regex",
        "s := \"x\" repeat: 1000000. t := \"y\" repeat: 100",
        "(s replaceAllRegex: \"x\" with: t) size",
    ),
    (
        "split",
        "s := \"a,\" repeat: 3000000",
        "(s split: \",\") size",
    ),
    (
        "lines",
        "s := (\"a\" ++ String lf) repeat: 3000000",
        "s lines size",
    ),
    ("words", "s := \"a \" repeat: 3000000", "s words size"),
    (
        "split_regex",
        "s := \"a,\" repeat: 3000000",
        "(s splitRegex: \",\") size",
    ),
    (
        "all_matches",
        "s := \"a,\" repeat: 3000000",
        "(s allMatches: \"a\") size",
    ),
    (
        "string_as_list",
        "s := \"a\" repeat: 6000000",
        "s asList size",
    ),
    (
        "print_nested",
        "a := Array new: 1000 withAll: (\"x\" repeat: 1000). b := Array new: 1000 withAll: a",
        "b printString size",
    ),
    (
        "display_nested",
        "a := Array new: 1000 withAll: (\"x\" repeat: 1000). b := Array new: 1000 withAll: a",
        "b displayString size",
    ),
    (
        "json_nested",
        "a := Array new: 1000 withAll: (\"x\" repeat: 1000). b := Array new: 1000 withAll: a",
        "(Json generate: b) size",
    ),
    (
        "binary_hex",
        "h := (\"x\" repeat: 17500000) asBinary. bin := h ++ h. h := nil",
        "bin asHex size",
    ),
    (
        "binary_from_iolist",
        "l := List new: 1000 withAll: (\"x\" repeat: 100000) asBinary",
        "(Binary fromIolist: l) size",
    ),
    (
        "binary_as_list",
        "bin := (\"x\" repeat: 10000000) asBinary",
        "bin asList size",
    ),
    ("big_power", "", "(3 ** 130000000) isNil"),
    (
        "held_big_shift",
        "s := \"x\" repeat: 50000000",
        "(1 bitShift: 200000000) isNil",
    ),
    (
        "held_repeat",
        "s := \"x\" repeat: 50000000",
        "(\"x\" repeat: 20000000) size",
    ),
    ("big_product", "a := 1 bitShift: 100000000", "(a * a) isNil"),
    (
        "flatten_shared",
        "a := Array new: 1000 withAll: (1 to: 100000) asList",
        "a flatten size",
    ),
    (
        "flat_map_shared",
        "l := (1 to: 100000) asList",
        "((1 to: 1000) asList flatMap: [:i | l]) size",
    ),
    (
        "erlang_format_width",
        "",
        "(Erlang io_lib format: \"~200000000p\" with: #(1)) size",
    ),
    (
        "erlang_format_precision",
        "",
        "(Erlang io_lib format: \"~.200000000f\" with: #(1.5)) size",
    ),
    (
        "erlang_string_pad",
        "",
        "(Erlang string pad: \"a\" with: 300000000) size",
    ),
    (
        "erlang_lists_seq",
        "",
        "(Erlang lists seq: 1 with: 10000000) size",
    ),
    (
        "held_erlang_results",
        "l := (1 to: 1000000) asList",
        "acc := List new. 1 to: 40 do: [:i | acc := acc add: (Erlang lists reverse: l)]. acc size",
    ),
    (
        "held_erlang_results_with_blocks",
        "l := (1 to: 1000000) asList",
        "acc := List new. 1 to: 40 do: [:i | acc := acc add: (Erlang lists map: [:x | x] with: l)]. acc size",
    ),
    (
        "erlang_lists_duplicate",
        "",
        "(Erlang lists duplicate: 10000000 with: 0) size",
    ),
    (
        "erlang_make_tuple",
        "",
        "(Erlang erlang make_tuple: 10000000 with: 0) size",
    ),
    (
        "erlang_binary_copy",
        "",
        "(Erlang binary copy: \"ab\" with: 100000000) size",
    ),
    (
        "erlang_string_copies",
        "",
        "(Erlang string copies: #(97, 98) with: 10000000) size",
    ),
    (
        "erlang_binary_to_list",
        "s := \"x\" repeat: 8000000",
        "(Erlang erlang binary_to_list: s) size",
    ),
    (
        "erlang_characters_to_list",
        "s := \"x\" repeat: 8000000",
        "(Erlang unicode characters_to_list: s) size",
    ),
    (
        "erlang_string_reverse",
        "s := \"x\" repeat: 8000000",
        "(Erlang string reverse: s) size",
    ),
    (
        "erlang_string_split_all",
        "s := \"a,\" repeat: 4000000",
        "(Erlang string split: s with: \",\" with: #all) size",
    ),
    (
        "erlang_binary_split_global",
        "s := \"a,\" repeat: 4000000",
        "(Erlang binary split: s with: \",\" with: #(#global)) size",
    ),
    (
        "erlang_string_replace_all",
        "s := \"a,\" repeat: 4000000",
        "(Erlang string replace: s with: \",\" with: \"::\" with: #all) size",
    ),
    (
        "erlang_string_lexemes",
        "s := \"a,\" repeat: 4000000",
        "(Erlang string lexemes: s with: #(44)) size",
    ),
    (
        "erlang_flatten_shared",
        "l := Erlang erlang binary_to_list: (\"x\" repeat: 100000)",
        "(Erlang lists flatten: (Array new: 1000 withAll: l)) size",
    ),
    (
        "erlang_append_shared",
        "l := Erlang erlang binary_to_list: (\"x\" repeat: 100000)",
        "(Erlang lists append: (Array new: 1000 withAll: l)) size",
    ),
    (
        "erlang_iolist_to_binary_shared",
        "l := Erlang erlang binary_to_list: (\"x\" repeat: 100000)",
        "(Erlang erlang iolist_to_binary: (Array new: 1000 withAll: l)) size",
    ),
    (
        "erlang_format_text",
        "s := \"x\" repeat: 8000000",
        "(Erlang io_lib format: \"~s\" with: (Array with: s)) size",
    ),
    (
        "erlang_term_to_binary_shared",
        "l := List new: 100000 withAll: (\"x\" repeat: 10000)",
        "(Erlang erlang term_to_binary: l) size",
    ),
    (
        "erlang_phash2_shared",
        "l := List new: 100000 withAll: (\"x\" repeat: 10000)",
        "Erlang erlang phash2: l",
    ),
    (
        "erlang_binary_to_term_inflated",
        "",
        "Erlang erlang binary_to_term: (Erlang erlang list_to_binary: #(131, 80, 24, 0, 0, 0, 120, 156))",
    ),
    (
        "interpolate_shared",
        "s := \"x\" repeat: 30000000",
        "\"{s}{s}{s}\" size",
    ),
    (
        "interpolate_printed",
        "a := Array new: 1000 withAll: (\"x\" repeat: 1000). b := Array new: 1000 withAll: a",
        "\"<{b}>\" size",
    ),
    (
        "zip",
        "a := (1 to: 1000000) asArray",
        "(a zip: a) size",
    ),
    (
        "print_shared_text",
        "b := Array new: 1000 withAll: (\"x\" repeat: 100000)",
        "b printString size",
    ),
    (
        "json_shared_text",
        "b := Array new: 1000 withAll: (\"x\" repeat: 100000)",
        "(Json generate: b) size",
    ),
    (
        "big_print_radix",
        "a := 1 bitShift: 100000000",
        "(a printString: 2) size",
    ),
];

/// A field of `/proc/self/status` (`VmHWM`, `VmRSS`) in bytes (0 when unreadable).
pub(crate) fn status_bytes(field: &str) -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        * 1024
}

/// The child side: runs the row named by [`ROW_VAR`] in an engine from `make` and prints
/// `ROW <kind> <peak over the baseline> <3 + 4 afterwards>` (nothing without the variable).
pub(crate) fn run_row(make: impl FnOnce() -> bt::Engine) {
    let Ok(name) = std::env::var(ROW_VAR) else {
        return;
    };
    let e = &make();
    e.grant(bt::engine::Capability::Erlang);
    let Some((_, setup, step)) = ROWS.iter().find(|r| r.0 == name) else {
        panic!("no row {name}");
    };
    if !setup.is_empty() {
        e.eval(setup).unwrap();
    }
    e.eval("(1 to: 1000) asList size").unwrap();
    let base = status_bytes("VmRSS:");
    let r = e.eval(step);
    let peak = status_bytes("VmHWM:");
    let kind = match &r {
        Ok(v) => format!("ok:{}", e.display(v)),
        Err(er) => {
            println!("\nDETAIL {}", er.to_string().replace('\n', " "));
            er.kind.clone()
        }
    };
    let after = e.eval("3 + 4").ok().and_then(|v| v.as_i64());
    println!("\nROW {kind} {} {after:?}", peak.saturating_sub(base));
}

/// The parent side: runs every row in a child (`child_test`, the test's full name in this
/// binary, re-run alone; the `held_` rows only when `counted`) and asserts its outcome;
/// answers the failures, one line each.
pub(crate) fn failing_rows(child_test: &str, counted: bool) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let mut bad = Vec::new();
    for (name, _, step) in ROWS {
        if !counted && name.starts_with("held_") {
            continue;
        }
        let out = Command::new(&exe)
            .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
            .env(ROW_VAR, name)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("ROW ")) else {
            bad.push(format!(
                "{name}: the child did not report (status {:?}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
            continue;
        };
        let mut it = line.split_whitespace();
        let kind = it.next().unwrap_or("");
        let peak: usize = it.next().and_then(|p| p.parse().ok()).unwrap_or(usize::MAX);
        let after = it.next().unwrap_or("");
        if kind != "memory_limit" {
            let detail = text
                .lines()
                .find_map(|l| l.strip_prefix("DETAIL "))
                .unwrap_or("");
            bad.push(format!(
                "{name}: `{step}` answered {kind}, not memory_limit ({detail})"
            ));
        }
        if peak >= LIMIT + SLACK {
            bad.push(format!(
                "{name}: peak RSS grew {} MiB (limit {} MiB + {} MiB)",
                peak >> 20,
                LIMIT >> 20,
                SLACK >> 20
            ));
        }
        if after != "Some(7)" {
            bad.push(format!(
                "{name}: the engine did not answer afterwards ({after})"
            ));
        }
    }
    bad
}
