//! Benchmark: bt's interruptible huge-Integer operations (`interp::prims::number::big`)
//! against num-bigint's single calls on the same operands, in the same run.
//!
//! `cargo run --profile dist --features bench --example bigint_ratio [ROUNDS]`
//!
//! For each operation and size it runs both sides alternately ROUNDS times (default 5) and
//! prints the best time of each, the ratio bt/num-bigint, the number of checks between
//! pieces and the longest gap between two checks (what bounds how late a deadline, cancel
//! or memory limit can land). Wall time on a loaded machine is noisy: the best of several
//! alternating rounds is the figure; for a steady one count instructions of one side:
//!
//! `valgrind --tool=callgrind bigint_ratio --only bt|num OP BITS` (OP: mul, div, print).

use std::time::{Duration, Instant};

use bt::interp::prims::number::big::{self, div, radix};
use num_bigint::BigUint;
use num_integer::Integer as _;

/// Deterministic operands: `bits` random bits, the top one set.
fn operand(bits: u64, seed: u64) -> BigUint {
    let mut x = seed | 1;
    let words = bits.div_ceil(32) as usize;
    let mut d: Vec<u32> = (0..words)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect();
    let top = (bits - 1) % 32;
    if let Some(last) = d.last_mut() {
        *last = (*last & ((1u64 << (top + 1)) - 1) as u32) | (1 << top);
    }
    BigUint::new(d)
}

/// What the metered side records: checks made and the longest gap between two.
struct Checks {
    count: usize,
    last: Instant,
    max_gap: Duration,
}

impl Checks {
    fn new() -> Checks {
        Checks {
            count: 0,
            last: Instant::now(),
            max_gap: Duration::ZERO,
        }
    }

    fn check(&mut self) {
        let now = Instant::now();
        self.max_gap = self.max_gap.max(now - self.last);
        self.last = now;
        self.count += 1;
    }
}

/// One operation on prepared operands: the num-bigint call and bt's metered one.
struct Case {
    name: String,
    num: Box<dyn Fn() -> usize>,
    bt: Box<dyn Fn(&mut Checks) -> usize>,
}

fn cases(filter: Option<(&str, u64)>) -> Vec<Case> {
    let mut out = Vec::new();
    let want = |op: &str, bits: u64| filter.is_none_or(|(o, b)| o == op && b == bits);
    for bits in [1_000_000u64, 3_000_000, 10_000_000] {
        if want("mul", bits) {
            let (x, y) = (operand(bits, 11), operand(bits, 23));
            let (x2, y2) = (x.clone(), y.clone());
            out.push(Case {
                name: format!("x * y, {}M bits each", bits as f64 / 1e6),
                num: Box::new(move || (&x * &y).bits() as usize),
                bt: Box::new(move |c| {
                    big::mul(&x2, &y2, &mut |_| {
                        c.check();
                        Ok(())
                    })
                    .map_or(0, |p| p.bits() as usize)
                }),
            });
        }
    }
    for bits in [1_000_000u64, 3_000_000] {
        if want("div", bits) {
            // A 2n-bit dividend by an n-bit divisor.
            let (a, b) = (operand(2 * bits, 37), operand(bits, 41));
            let (a2, b2) = (a.clone(), b.clone());
            out.push(Case {
                name: format!("{}M-bit / {}M-bit", 2 * bits / 1_000_000, bits / 1_000_000),
                num: Box::new(move || a.div_rem(&b).0.bits() as usize),
                bt: Box::new(move |c| {
                    div::div_rem(&a2, &b2, &mut |_| {
                        c.check();
                        Ok(())
                    })
                    .map_or(0, |(q, _)| q.bits() as usize)
                }),
            });
        }
    }
    for bits in [300_000u64, 3_000_000] {
        if want("print", bits) {
            let x = operand(bits, 53);
            let x2 = x.clone();
            out.push(Case {
                name: format!("printString, {}k bits", bits / 1000),
                num: Box::new(move || x.to_str_radix(10).len()),
                bt: Box::new(move |c| {
                    radix::to_radix(&x2, 10, &mut |_| {
                        c.check();
                        Ok(())
                    })
                    .map_or(0, |s| s.len())
                }),
            });
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--only") {
        // One side of one case, once (for instruction counts).
        let op = args.get(2).map_or("mul", String::as_str);
        let bits = args
            .get(3)
            .and_then(|b| b.parse().ok())
            .unwrap_or(3_000_000);
        for c in cases(Some((op, bits))) {
            let n = if args.get(1).map(String::as_str) == Some("num") {
                (c.num)()
            } else {
                (c.bt)(&mut Checks::new())
            };
            println!("{}: {n}", c.name);
        }
        return;
    }
    let rounds: usize = args.first().and_then(|r| r.parse().ok()).unwrap_or(5);
    println!(
        "{:<28} {:>10} {:>10} {:>7} {:>7} {:>9}",
        "operation", "num ms", "bt ms", "bt/num", "checks", "max gap"
    );
    for c in cases(None) {
        let (mut best_num, mut best_bt) = (Duration::MAX, Duration::MAX);
        let mut checks = Checks::new();
        for _ in 0..rounds {
            let t = Instant::now();
            let a = (c.num)();
            best_num = best_num.min(t.elapsed());
            let mut ch = Checks::new();
            let t = Instant::now();
            let b = (c.bt)(&mut ch);
            best_bt = best_bt.min(t.elapsed());
            ch.check();
            assert_eq!(a, b, "{}: results differ", c.name);
            checks = ch;
        }
        println!(
            "{:<28} {:>10.1} {:>10.1} {:>7.2} {:>7} {:>7.2}ms",
            c.name,
            best_num.as_secs_f64() * 1e3,
            best_bt.as_secs_f64() * 1e3,
            best_bt.as_secs_f64() / best_num.as_secs_f64(),
            checks.count,
            checks.max_gap.as_secs_f64() * 1e3
        );
    }
}
