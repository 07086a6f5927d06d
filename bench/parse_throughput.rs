//! Lex+parse throughput on a generated multi-megabyte source (not a test):
//!
//! ```text
//! cargo run --profile dist --features bench --example parse_throughput [MEGABYTES]
//! ```
//!
//! Prints MB/s for lexing alone and for lexing plus parsing, by CPU time of this thread (from
//! `/proc/thread-self/schedstat`, so a loaded machine does not distort it) and by wall time.
//! The target is at least 20 MB/s.

use std::time::Instant;

/// Nanoseconds this thread has run on a CPU (Linux); falls back to wall time elsewhere.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Measures `f`: (cpu seconds, wall seconds).
fn measure<T>(f: impl FnOnce() -> T) -> (f64, f64, T) {
    let c0 = cpu_ns();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (c0, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (cpu, wall, out)
}

/// One chunk of realistic source: a class with slots and methods, a standalone method, and
/// top-level statements exercising most of the grammar.
fn chunk(i: usize) -> String {
    format!(
        r#"/// Counter number {i}.
Actor subclass: Counter{i}
  state: count :: Integer = 0
  state: log :: List(String) = #()
  classState: made = 0

  /// Adds one.
  increment => self.count := self.count + 1
  value -> Integer => self.count
  at: k :: Symbol put: v -> Self =>
    d := #{{#a => 1, #b => 2, (k) => v}}
    total := (d at: #a) + (d at: #b) * 3 - 4 / 2
    total > 10
      ifTrue: [Transcript show: "big {{total}}"; cr]
      ifFalse: [Transcript show: "small"]
    ^ self
  describe: x =>
    x match: [
      0 -> "zero";
      n :: Integer when: [n < 0] -> "negative";
      #[a, b, ...rest] -> rest size;
      Result ok: v -> v printString;
      _ -> "other"]

Counter{i} >> reset => self.count := 0
c{i} := Counter{i} spawn
c{i} increment!
xs{i} := #(1, 2, 3, 4, 5) collect: [:e | e * e + {i}]
s{i} := xs{i} inject: 0 into: [:acc :e | acc + e]
name{i} := "counter-" ++ {i} printString ++ " has " ++ s{i} printString
{{a{i}, b{i}}} := #(1, 2) asTuple
"#
    )
}

fn main() {
    let mb: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(8.0);
    let target = (mb * 1_000_000.0) as usize;
    let mut src = String::with_capacity(target + 4096);
    let mut i = 0;
    while src.len() < target {
        src.push_str(&chunk(i));
        i += 1;
    }
    let size = src.len() as f64 / 1_000_000.0;

    if std::env::var_os("BT_BENCH_ONCE").is_some() {
        // Profiling aid: one parse on a fresh heap, nothing dropped.
        let (c, w, out) = measure(|| bt::syntax::parse(&src));
        println!("once: {:.1} MB/s cpu, {:.1} MB/s wall", size / c, size / w);
        std::mem::forget(out);
        return;
    }
    // The first parse runs on a fresh heap; it also checks that the source is valid.
    let (first_cpu, _, (module, diags)) = measure(|| bt::syntax::parse(&src));
    assert!(
        diags.is_empty(),
        "generated source has diagnostics: {:?}",
        &diags[..diags.len().min(3)]
    );
    let items = module.items.len();
    drop(module);

    let runs = 5;
    let (mut lex_cpu, mut lex_wall, mut parse_cpu, mut parse_wall) =
        (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..runs {
        let (c, w, lexed) = measure(|| bt::syntax::lexer::lex(&src));
        std::hint::black_box(lexed.tokens.len());
        drop(lexed);
        lex_cpu = lex_cpu.min(c);
        lex_wall = lex_wall.min(w);
        let (c, w, out) = measure(|| bt::syntax::parse(&src));
        std::hint::black_box(out.0.items.len());
        drop(out);
        parse_cpu = parse_cpu.min(c);
        parse_wall = parse_wall.min(w);
    }
    println!("source: {size:.2} MB, {i} chunks, {items} top-level items");
    println!(
        "lex:        {:8.1} MB/s cpu ({:.1} ms)   {:8.1} MB/s wall",
        size / lex_cpu,
        lex_cpu * 1e3,
        size / lex_wall
    );
    println!(
        "lex+parse:  {:8.1} MB/s cpu ({:.1} ms)   {:8.1} MB/s wall",
        size / parse_cpu,
        parse_cpu * 1e3,
        size / parse_wall
    );
    println!("first run:  {:8.1} MB/s cpu (fresh heap)", size / first_cpu);
}
