//! Benchmark: the static checker over the built-in library plus a generated 10,000-line
//! program (budget: under 200 ms in an optimised build on the project machine).
//!
//! `cargo run --profile dist --features bench --example check_speed [LINES]`
//!
//! Prints the time to build the standard checker (built-in table + `stdlib/*.bt`), to parse
//! the program, and to check it; checking must stay linear in the program size, so the
//! program is also checked at half size and the ratio printed.

use bt::check::{CheckOptions, Checker, SourceFile};
use std::fmt::Write;
use std::time::Instant;

/// A program of about `lines` lines: value classes, actor classes and top-level statements
/// that use them (sends, blocks, conditionals, loops, matches, typed locals).
fn program(lines: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    let mut count = 0;
    while count < lines {
        let before = s.len();
        let _ = write!(
            s,
            r#"Value subclass: Point{i}
  field: x :: Integer = 0
  field: y :: Integer = 0

  + other => Point{i} x: self.x + other x y: self.y + other y
  norm -> Integer => (self.x * self.x) + (self.y * self.y)
  scaled: k :: Integer =>
    r := self withX: self.x * k
    r withY: self.y * k
  describe =>
    n := self norm
    n > 100 ifTrue: [label := "far"] ifFalse: [label := "near"]
    "{{label}} {{n printString}}"

Actor subclass: Counter{i}
  state: count :: Integer = 0
  state: items = #()

  increment => self.count := self.count + 1
  add: x => self.items := #(x | self.items)
  total =>
    sum := 0
    self.items do: [:e | sum := sum + e]
    1 to: 3 do: [:k | sum := sum + k]
    sum
  classify: v => v match: [
      0 -> #zero;
      n :: Integer when: [n < 0] -> #negative;
      _ -> #other
    ]

p{i} := Point{i} x: {i} y: 2
q{i} := (p{i} + p{i}) scaled: 3
c{i} := Counter{i} spawnWith: #{{#count => {i}}}
c{i} increment
c{i} add: q{i} norm
t{i} :: Integer := c{i} total
(t{i} > 10 and: [q{i} norm > 5]) ifTrue: [c{i} add: 1]

"#
        );
        count += s[before..].lines().count();
        i += 1;
    }
    s
}

fn time_check(checker: &Checker, src: &str) -> (f64, f64, usize) {
    let t0 = Instant::now();
    let (module, parse_diags) = bt::syntax::parse(src);
    let parse_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let t1 = Instant::now();
    let findings = checker.check_unit(
        &[SourceFile {
            path: "bench.bt",
            src,
            module: &module,
        }],
        &CheckOptions::default(),
    );
    let check_ms = t1.elapsed().as_secs_f64() * 1000.0;
    (parse_ms, check_ms, parse_diags.len() + findings.len())
}

fn main() {
    let lines: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let t = Instant::now();
    let checker = bt::interp::checker::standard_checker();
    let stdlib_ms = t.elapsed().as_secs_f64() * 1000.0;
    let stdlib_files: Vec<(String, String)> = bt::interp::stdlib::FILES
        .iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .collect();
    let lib_texts: Vec<(String, bt::syntax::ast::Module)> = stdlib_files
        .iter()
        .map(|(n, s)| {
            (
                n.clone(),
                bt::syntax::parse_with(
                    s,
                    bt::syntax::Options {
                        allow_primitives: true,
                    },
                )
                .0,
            )
        })
        .collect();
    let t = Instant::now();
    let files: Vec<SourceFile> = stdlib_files
        .iter()
        .zip(&lib_texts)
        .map(|((n, s), (_, m))| SourceFile {
            path: n,
            src: s,
            module: m,
        })
        .collect();
    let lib_findings = checker
        .check_library(&files, &CheckOptions::default())
        .len();
    let stdlib_check_ms = t.elapsed().as_secs_f64() * 1000.0;

    let big = program(lines);
    let half = program(lines / 2);
    let (_, half_check, _) = time_check(&checker, &half);
    let (parse_ms, check_ms, findings) = time_check(&checker, &big);
    println!("stdlib: {} files, table built in {stdlib_ms:.1} ms, bodies checked in {stdlib_check_ms:.1} ms ({lib_findings} findings)", stdlib_files.len());
    println!(
        "program: {} lines, parse {parse_ms:.1} ms, check {check_ms:.1} ms ({findings} findings)",
        big.lines().count()
    );
    println!(
        "linearity: check({} lines) / check({} lines) = {:.2}",
        big.lines().count(),
        half.lines().count(),
        check_ms / half_check.max(0.001)
    );
    let total = stdlib_ms + stdlib_check_ms + check_ms;
    println!("stdlib + program check: {total:.1} ms (budget 200 ms)");
}
