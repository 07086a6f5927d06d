//! Benchmark: the front end stays linear in its input. Parses, checks and renders
//! the diagnostics of generated 1, 2, 4 and 8 MB sources of three shapes and prints each time
//! and its ratio to the 1 MB time (linear: 8 MB within 10x of 1 MB).
//!
//! `cargo run --profile ci --features bench --example frontend_scaling` (or `--profile dist`)
//!
//! Shapes:
//! * `literals`: Integer literals of every length up to the 10,000-digit cap
//!   (`syntax::parser::literal::MAX_LITERAL_DIGITS`), one assignment per line;
//! * `errors`: `x := )` on every line (16,000 lines were 10.8 s before the fix);
//! * `indent`: each line indented one more space than the last, an error on each (3,000
//!   lines took over 20 s: quadratic in lines x rendering per error).
//!
//! Times are CPU time of this thread (the machine is shared), best of 3.

#![allow(unsafe_code)] // thread CPU clock / page size (libc)

use std::time::Duration;

use bt::check::{CheckOptions, SourceFile};

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_THREAD_CPUTIME_ID is valid.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn literals(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 20_000);
    let mut i = 0usize;
    while s.len() < bytes {
        // Lengths cycle through 1..=10,000 digits (most short, some at the cap).
        let len = match i % 10 {
            9 => 10_000,
            8 => 1_000,
            _ => 1 + i % 30,
        };
        s.push_str("x := ");
        s.extend(std::iter::repeat_n('7', len));
        s.push('\n');
        i += 1;
    }
    s
}

fn errors(bytes: usize) -> String {
    "x := )\n".repeat(bytes / 7)
}

fn indent(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 10_000);
    let mut i = 0;
    while s.len() < bytes {
        s.extend(std::iter::repeat_n(' ', i));
        s.push_str("x := )\n");
        i += 1;
    }
    s
}

/// Parse + check + render once; answers the CPU time and the number of diagnostics.
fn front_end(src: &str) -> (Duration, usize) {
    let checker = bt::interp::checker::standard_checker();
    let t0 = thread_cpu();
    let (module, mut diags) = bt::syntax::parse(src);
    let file = SourceFile {
        path: "bench.bt",
        src,
        module: &module,
    };
    if !diags.iter().any(|d| d.is_error()) {
        diags.extend(
            checker
                .check_unit(&[file], &CheckOptions::default())
                .into_iter()
                .map(|f| f.diag),
        );
    }
    let out = bt::diagnostic::render("bench.bt", src, &diags, bt::diagnostic::ColorChoice::Never);
    let t = thread_cpu() - t0;
    std::hint::black_box(out);
    (t, diags.len())
}

fn main() {
    type Shape = (&'static str, fn(usize) -> String);
    let shapes: [Shape; 3] = [
        ("literals", literals),
        ("errors", errors),
        ("indent", indent),
    ];
    // Warm the standard checker (built once per process).
    let _ = bt::interp::checker::standard_checker();
    println!(
        "{:<9} {:>5} {:>11} {:>8} {:>7}",
        "shape", "MB", "ms", "diags", "x 1MB"
    );
    let mut worst: f64 = 0.0;
    for (name, make) in shapes {
        let mut base = None;
        for mb in [1usize, 2, 4, 8] {
            let src = make(mb << 20);
            let mut best = Duration::MAX;
            let mut n = 0;
            for _ in 0..3 {
                let (t, d) = front_end(&src);
                best = best.min(t);
                n = d;
            }
            let ms = best.as_secs_f64() * 1e3;
            let b = *base.get_or_insert(ms);
            let ratio = ms / b;
            if mb == 8 {
                worst = worst.max(ratio);
            }
            println!("{name:<9} {mb:>5} {ms:>11.1} {n:>8} {ratio:>7.2}");
        }
    }
    println!(
        "worst 8 MB / 1 MB ratio: {worst:.2} ({})",
        if worst <= 10.0 {
            "linear: <= 10"
        } else {
            "NOT linear: > 10"
        }
    );
}
