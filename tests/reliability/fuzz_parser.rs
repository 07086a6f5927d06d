//! Property test: the lexer and parser never panic and always terminate, on random token
//! soups, mutated golden sources, random bytes and pathological nesting. Deterministic (a
//! fixed-seed xorshift PRNG) and bounded in time; set `BT_FUZZ_SECS` to run longer and
//! `BT_FUZZ_SEED` to explore other inputs.

use bt::syntax;
use std::time::{Duration, Instant};

use crate::rng;
use rng::Rng;

const VOCAB: &[&str] = &[
    "x",
    "foo",
    "Foo",
    "self",
    "super",
    "nil",
    "true",
    "false",
    "_",
    "at:",
    "put:",
    "match:",
    "when:",
    "subclass:",
    "field:",
    "state:",
    "classState:",
    "handleScope:",
    "native:",
    "class",
    "sealed",
    "abstract",
    "typed",
    "internal",
    "type",
    "Protocol",
    "define:",
    "extending:",
    "Object",
    "Value",
    "Actor",
    "Result",
    "ok:",
    "error:",
    "1",
    "-2",
    "16rFF",
    "2r102",
    "3.5",
    "1e400",
    "1e10",
    "123456789012345678901234567890",
    "\"s\"",
    "\"a {x} b\"",
    "\"{\"",
    "\"",
    "'q'",
    "'",
    "$a",
    "$",
    "$\\n",
    "#foo",
    "#at:put:",
    "#+",
    "#'q q'",
    "#'",
    "#",
    "#(",
    "#[",
    "#{",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<<",
    ">>",
    "->",
    "=>",
    ":=",
    "::",
    ":",
    "^",
    ";",
    ".",
    "...",
    "!",
    "|",
    ",",
    "+",
    "-",
    "*",
    "**",
    "/",
    "=",
    "==",
    "=:=",
    "~",
    "&",
    "\\",
    "\\\\",
    "++",
    "<=",
    "@expect",
    "@primitive",
    "@bogus",
    "dnu",
    "//c",
    "/* c */",
    "/*",
    "///d",
    "\n",
    "\n  ",
    "\n    ",
    "\n\t",
    "é",
    "\u{0}",
    "\r\n",
];

fn soup(rng: &mut Rng) -> String {
    let n = 1 + rng.below(60);
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(rng.pick(VOCAB));
        match rng.below(4) {
            0 => {}
            1 | 2 => s.push(' '),
            _ => s.push_str(rng.pick(&["\n", "\n  ", "\n    "])),
        }
    }
    s
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut b = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        if b.is_empty() {
            b.extend_from_slice(rng.pick(VOCAB).as_bytes());
            continue;
        }
        let i = rng.below(b.len());
        match rng.below(6) {
            0 => {
                let j = (i + 1 + rng.below(20)).min(b.len());
                b.drain(i..j);
            }
            1 => {
                let ins = rng.pick(VOCAB).as_bytes().to_vec();
                b.splice(i..i, ins);
            }
            2 => {
                let j = (i + 1 + rng.below(40)).min(b.len());
                let chunk = b[i..j].to_vec();
                let k = rng.below(b.len());
                b.splice(k..k, chunk);
            }
            3 => {
                let k = rng.below(b.len());
                b.swap(i, k);
            }
            4 => b.truncate(i),
            _ => b[i] = (rng.next() % 128) as u8,
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn exercise(src: &str) {
    let (module, diags) = syntax::parse(src);
    let _ = syntax::dump::dump_module(&module);
    for d in &diags {
        assert!(
            d.span.start <= d.span.end,
            "inverted span {d:?} for {src:?}"
        );
        assert!(
            d.span.end as usize <= src.len(),
            "span past the end {d:?} for {src:?}"
        );
    }
    let _ = syntax::parse_with(
        src,
        syntax::Options {
            allow_primitives: true,
        },
    );
    let _ = syntax::needs_more(src);
    if let Some(line) = src.lines().nth(1) {
        let _ = syntax::line_continues(line);
    }
}

fn golden_sources() -> Vec<String> {
    let mut out = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/parse");
    for sub in ["ok", "err"] {
        if let Ok(rd) = std::fs::read_dir(root.join(sub)) {
            let mut paths: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.extension().is_some_and(|e| e == "bt") {
                    if let Ok(s) = std::fs::read_to_string(&p) {
                        out.push(s);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn parser_never_panics_on_random_and_mutated_input() {
    let secs: u64 = std::env::var("BT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("BT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_B7B7);
    let mut rng = Rng(seed | 1);
    let sources = golden_sources();
    assert!(!sources.is_empty(), "no golden sources found");
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut cases = 0u64;
    // At least 101 cases however slow the machine: the count below is not timed.
    while Instant::now() < deadline || cases <= 100 {
        let input = match rng.below(3) {
            0 => soup(&mut rng),
            1 => {
                let s = &sources[rng.below(sources.len())];
                mutate(&mut rng, s)
            }
            _ => {
                let n = rng.below(80);
                let bytes: Vec<u8> = (0..n).map(|_| (rng.next() % 128) as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
        };
        if let Some(path) = std::env::var_os("BT_FUZZ_TRACE") {
            // Debugging aid: the input being parsed, for a run that hangs.
            let _ = std::fs::write(path, &input);
        }
        exercise(&input);
        cases += 1;
    }
    assert!(cases > 100, "only {cases} cases ran");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let n = 20_000;
    let cases = [
        "(".repeat(n),
        format!("x := {}1{}", "(".repeat(n), ")".repeat(n)),
        "[".repeat(n),
        "#(".repeat(n),
        "#{1 => ".repeat(n),
        format!("x := {}", "y := ".repeat(n)),
        format!("x := 2{}", " ** 2".repeat(n)),
        format!("r := x match: [{} -> 1]", "{".repeat(n)),
        format!("x :: {}Integer := 1", "(".repeat(n)),
        format!("x := {}", "\"{".repeat(n)),
        format!("type T = {}", "List(".repeat(n)),
        format!("x := {}", "<<".repeat(n)),
    ];
    for c in &cases {
        let (_, diags) = syntax::parse(c);
        assert!(
            diags.iter().any(|d| d.is_error()),
            "no error for a {}-byte nest",
            c.len()
        );
    }
    // Moderate nesting is fine.
    let ok = format!("x := {}1{}", "(".repeat(40), ")".repeat(40));
    let (_, diags) = syntax::parse(&ok);
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn nesting_up_to_the_limit_fits_a_small_stack() {
    // Parsing and dumping near the nesting limit must fit a 2 MiB thread even in a debug build.
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for n in [100, 120] {
                for (open, close) in [("(", ")"), ("#(", ")"), ("[", "]"), ("#[", "]")] {
                    let src = format!("x := {}1{}", open.repeat(n), close.repeat(n));
                    let (m, diags) = syntax::parse(&src);
                    assert!(diags.is_empty(), "{n} levels of {open}: {diags:?}");
                    let _ = syntax::dump::dump_module(&m);
                }
            }
            let long = format!("x := 1{}", " + 1".repeat(900));
            let (_, diags) = syntax::parse(&long);
            assert!(diags.is_empty(), "a 900-term sum parses");
            let long = format!("x := 1{}", " foo".repeat(900));
            let (_, diags) = syntax::parse(&long);
            assert!(diags.is_empty(), "a 900-send unary chain parses");
            let long = format!("x := 1{}", " + 1".repeat(5000));
            let (_, diags) = syntax::parse(&long);
            assert!(
                diags.iter().any(|d| d.message.contains("too long")),
                "a 5000-term chain is refused"
            );
        })
        .expect("spawn");
    h.join().expect("no stack overflow");
}
