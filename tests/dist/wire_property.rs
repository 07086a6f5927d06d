//! Property test of the value ↔ Erlang term mapping against a real `erl`: 10,000 values from
//! a seeded PRNG — integers around ±2⁷, ±2⁸, ±2²⁷, ±2³¹, ±2⁶³, ±2⁶⁴, floats (−0.0, the
//! extremes, subnormals, random bit patterns), Unicode Strings and Symbols, nested Lists,
//! Tuples and Dictionaries, Binaries, Point value objects and bt-only values — checked
//! bt → erl (each term against an Erlang spec of the value), erl → bt (each value against
//! bt's own), round-tripped bt → erl → bt and erl → bt → erl, and bt's bytes compared with
//! `term_to_binary` (golden bytes). One node pair, 500 values per message.
//!
//! Golden bytes are compared byte for byte where the mapping is canonical. Not canonical:
//! - maps (Dictionaries, value objects, and values holding them): Erlang writes the pairs of
//!   a small map in key order, bt in its hash order; the decoded term is compared instead;
//! - bt-only values (Characters, Arrays, Sets, Bags, Durations, Intervals, Results, the
//!   Symbols `#nil`, `#true`, `#false` and Symbols over 255 characters, Binaries that are
//!   valid UTF-8): `{'$bt', 1, WireBytes}`, bt's own format; Erlang checks the shape.
//!
//! Erlang's side: tests/dist/wire_property.erl. Atoms are compared in their UTF-8 form
//! (`term_to_binary(T, [{minor_version, 2}])`, the default from OTP 26 on and the form of
//! the distribution protocol).

use std::fmt::Write as _;

use crate::dist_common;
use crate::rng::Rng;
use dist_common::*;

const VALUES: usize = 10_000;
const BATCH: usize = 500;
const SEED: u64 = 0x5eed_b7e7_0000_0001;

/// A generated value: what bt writes as source and Erlang builds from a spec.
#[derive(Clone)]
enum V {
    Const(&'static str),
    Int(String),
    Float(f64),
    Str(String),
    Sym(String),
    List(Vec<V>),
    Tuple(Vec<V>),
    Dict(Vec<(V, V)>),
    Bin(Vec<u8>),
    Point(Box<V>, Box<V>),
    BtOnly(&'static str),
}

/// Values with no Erlang form of their own: they cross as `{'$bt', 1, WireBytes}`.
const BT_ONLY: &[&str] = &[
    "$a",
    "$é",
    "$😀",
    "#[1, -2]",
    "#[]",
    "(Set withAll: #(1, -1))",
    "(Bag withAll: #(2, 2))",
    "(Duration seconds: 3)",
    "(1 to: 9 by: 2)",
    "(Result ok: -1)",
    "(Result error: #bad)",
];

/// Characters of generated Strings and Symbols (no control characters, no backslash).
const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "9",
    " ",
    "_",
    ":",
    "'",
    "\"",
    "{",
    "}",
    "#",
    "$",
    "é",
    "ß",
    "Ω",
    "λ",
    "ж",
    "中",
    "文",
    "😀",
    "👍🏽",
    "\u{301}",
    "\u{200d}",
    "\u{fffd}",
    "\u{10ffff}",
    "ñ",
    "+",
    "-",
    "<",
];

fn pow2(e: u32) -> i128 {
    1i128 << e
}

fn gen_int(r: &mut Rng) -> V {
    let n: String = match r.below(6) {
        0 | 1 => {
            let e = [7, 8, 27, 31, 63, 64][r.below(6)];
            let d = r.below(3) as i128 - 1;
            let v = pow2(e) + d;
            (if r.below(2) == 0 { v } else { -v }).to_string()
        }
        2 => (r.below(601) as i64 - 300).to_string(),
        3 => (r.next() as i64).to_string(),
        4 => (r.next() as i32).to_string(),
        _ => {
            // A big integer: 20 to 60 digits.
            let digits = 20 + r.below(41);
            let mut s = String::from(if r.below(2) == 0 { "-" } else { "" });
            s.push((b'1' + r.below(9) as u8) as char);
            for _ in 1..digits {
                s.push((b'0' + r.below(10) as u8) as char);
            }
            s
        }
    };
    V::Int(n)
}

fn gen_float(r: &mut Rng) -> V {
    const EDGES: &[f64] = &[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        -2.5,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        9007199254740992.0,
        9007199254740994.0,
        1e21,
        1e-7,
        std::f64::consts::PI,
    ];
    if r.below(3) == 0 {
        return V::Float(EDGES[r.below(EDGES.len())]);
    }
    loop {
        let f = f64::from_bits(r.next());
        if f.is_finite() {
            return V::Float(f);
        }
    }
}

fn gen_text(r: &mut Rng, max: usize) -> String {
    (0..r.below(max + 1))
        .map(|_| PIECES[r.below(PIECES.len())])
        .collect()
}

fn gen_sym(r: &mut Rng) -> V {
    match r.below(40) {
        0 => V::Sym(["nil", "true", "false"][r.below(3)].to_string()),
        1 => V::Sym("x".repeat(256 + r.below(20))),
        2 => V::Sym(["$bt", "at:put:", "+", "$beamtalk_class"][r.below(4)].to_string()),
        _ => {
            let s = gen_text(r, 10);
            V::Sym(if s.is_empty() { "e".to_string() } else { s })
        }
    }
}

fn gen_scalar(r: &mut Rng) -> V {
    match r.below(16) {
        0 => V::Const(["nil", "true", "false"][r.below(3)]),
        1..=5 => gen_int(r),
        6 | 7 => gen_float(r),
        8 | 9 => V::Str(gen_text(r, 12)),
        10 | 11 => gen_sym(r),
        12 | 13 => {
            let n = r.below(9);
            V::Bin(if r.below(2) == 0 {
                (0..n).map(|_| r.next() as u8).collect()
            } else {
                (0..n).map(|_| b'a' + r.below(26) as u8).collect()
            })
        }
        _ => V::BtOnly(BT_ONLY[r.below(BT_ONLY.len())]),
    }
}

/// Lists of integers near the byte range: Erlang's STRING_EXT (0..255) and LIST_EXT paths.
fn gen_byte_list(r: &mut Rng) -> V {
    let n = r.below(9);
    V::List(
        (0..n)
            .map(|_| {
                let v = match r.below(8) {
                    0 => -(r.below(3) as i64) - 1,
                    1 => 256 + r.below(3) as i64,
                    2 => -128 - r.below(2) as i64,
                    _ => r.below(256) as i64,
                };
                V::Int(v.to_string())
            })
            .collect(),
    )
}

fn gen_key(r: &mut Rng) -> V {
    match r.below(3) {
        0 => V::Int((r.below(41) as i64 - 20).to_string()),
        1 => V::Sym(format!("k{}", gen_text(r, 4))),
        _ => V::Str(gen_text(r, 5)),
    }
}

fn gen(r: &mut Rng, depth: usize) -> V {
    if depth >= 4 || r.below(3) != 0 {
        return gen_scalar(r);
    }
    let d = depth + 1;
    match r.below(6) {
        0 => gen_byte_list(r),
        1 => V::List((0..r.below(7)).map(|_| gen(r, d)).collect()),
        2 => V::Tuple(loop {
            let t: Vec<V> = (0..r.below(6)).map(|_| gen(r, d)).collect();
            // `{'$bt', …}` tuples travel tagged; the generator leaves them out.
            if !matches!(t.first(), Some(V::Sym(s)) if s == "$bt") {
                break t;
            }
        }),
        3 => {
            let mut pairs: Vec<(V, V)> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for _ in 0..r.below(6) {
                let k = gen_key(r);
                if seen.insert(bt(&k)) {
                    pairs.push((k, gen(r, d)));
                }
            }
            V::Dict(pairs)
        }
        4 => V::Point(Box::new(gen(r, d)), Box::new(gen(r, d))),
        _ => gen_byte_list(r),
    }
}

/// Does the value cross as bt's tagged term (`{'$bt', 1, …}`) rather than an Erlang form?
fn tagged(v: &V) -> bool {
    match v {
        V::BtOnly(_) => true,
        V::Sym(s) => matches!(s.as_str(), "nil" | "true" | "false") || s.chars().count() > 255,
        V::Bin(b) => std::str::from_utf8(b).is_ok(),
        _ => false,
    }
}

fn any(v: &V, p: &dyn Fn(&V) -> bool) -> bool {
    p(v) || match v {
        V::List(xs) | V::Tuple(xs) => xs.iter().any(|x| any(x, p)),
        V::Dict(ps) => ps.iter().any(|(k, x)| any(k, p) || any(x, p)),
        V::Point(x, y) => any(x, p) || any(y, p),
        _ => false,
    }
}

/// Is `term_to_binary` of the Erlang term the very bytes bt writes? (See the module note.)
fn canonical(v: &V) -> bool {
    !any(v, &|x| tagged(x) || matches!(x, V::Dict(_) | V::Point(..)))
}

fn bt_text(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\"\""),
            '{' => o.push_str("\\{"),
            '}' => o.push_str("\\}"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The value as bt source.
fn bt(v: &V) -> String {
    let join = |xs: &[V]| xs.iter().map(bt).collect::<Vec<_>>().join(", ");
    match v {
        V::Const(c) => c.to_string(),
        V::Int(s) => s.clone(),
        V::Float(f) => format!("{f:?}"),
        V::Str(s) => bt_text(s),
        V::Sym(s) => format!("#'{}'", s.replace('\'', "''")),
        V::List(xs) => format!("#({})", join(xs)),
        V::Tuple(xs) => format!("(Tuple withAll: #({}))", join(xs)),
        V::Dict(ps) => {
            let ps: Vec<String> = ps
                .iter()
                .map(|(k, x)| format!("({}) => {}", bt(k), bt(x)))
                .collect();
            format!("#{{{}}}", ps.join(", "))
        }
        V::Bin(b) => {
            let b: Vec<String> = b.iter().map(|x| x.to_string()).collect();
            format!("(Binary withAll: #({}))", b.join(", "))
        }
        V::Point(x, y) => format!("(Point new: #{{#x => {}, #y => {}}})", bt(x), bt(y)),
        V::BtOnly(s) => s.to_string(),
    }
}

fn erl_bin(b: &[u8]) -> String {
    let b: Vec<String> = b.iter().map(|x| x.to_string()).collect();
    format!("<<{}>>", b.join(","))
}

/// The value as a spec for wire_property.erl (ASCII only).
fn spec(v: &V) -> String {
    if tagged(v) {
        return "bt_only".into();
    }
    let join = |xs: &[V]| xs.iter().map(spec).collect::<Vec<_>>().join(",");
    match v {
        V::Const(c) => c.to_string(),
        V::Int(s) => s.clone(),
        V::Float(f) => format!("{{f,{}}}", f.to_bits()),
        V::Str(s) => erl_bin(s.as_bytes()),
        V::Sym(s) => format!("{{a,{}}}", erl_bin(s.as_bytes())),
        V::List(xs) => format!("{{l,[{}]}}", join(xs)),
        V::Tuple(xs) => format!("{{t,[{}]}}", join(xs)),
        V::Dict(ps) => {
            let ps: Vec<String> = ps
                .iter()
                .map(|(k, x)| format!("{{{},{}}}", spec(k), spec(x)))
                .collect();
            format!("{{m,[{}]}}", ps.join(","))
        }
        V::Bin(b) => erl_bin(b),
        V::Point(x, y) => format!("{{p,{},{}}}", spec(x), spec(y)),
        V::BtOnly(_) => unreachable!(),
    }
}

/// Point (as in the reference tests) and the data as `Data batches`: a List of Lists.
fn data_source(values: &[V]) -> String {
    let mut s = String::from(
        "Value subclass: Point\n  field: x = 0\n  field: y = 0\n\nObject subclass: Data\n  class batches => #(",
    );
    let batches: Vec<String> = values
        .chunks(BATCH)
        .map(|chunk| {
            let items: Vec<String> = chunk.iter().map(bt).collect();
            format!("#({})", items.join(", "))
        })
        .collect();
    // A line ending in a comma continues the expression.
    let _ = writeln!(s, "{})\n", batches.join(",\n    "));
    s
}

/// The bt node: `echo` checks what Erlang sends against its own values; the script then
/// sends every batch to Erlang's `mirror` and checks what comes back.
const BT_SIDE: &str = r#"Object subclass: Same
  class check: x against: y => (x =:= y) and: [x printString == y printString]

Actor subclass: Echo
  state: all = #[]
  state: bad = 0
  check: batch at: idx =>
    b := Array withAll: batch
    ix := Array withAll: idx
    1 to: b size do: [:j |
      want := self.all at: (ix at: j)
      (Same check: (b at: j) against: want) ifFalse: [
        self.bad := self.bad + 1
        Transcript showCr: "erl->bt {ix at: j}: {(b at: j) printString} expected {want printString}"]]
    batch
  bad => self.bad

all := Array withAll: Data batches flatten
e := Echo spawnWith: #{#all => all}
e registerAs: #echo
m := (Actor named: #mirror on: (Node named: #'e@127.0.0.1') unwrap) unwrap
bad := 0
checked := 0
start := 1
Data batches do: [:batch |
  back := Array withAll: (m check: batch from: start)
  b := Array withAll: batch
  1 to: b size do: [:j |
    checked := checked + 1
    (Same check: (back at: j) against: (b at: j)) ifFalse: [
      bad := bad + 1
      Transcript showCr: "bt->erl->bt {start + j - 1}: {(back at: j) printString} expected {(b at: j) printString}"]]
  start := start + b size]
Transcript showCr: "bt->erl->bt: checked {checked} bad {bad}"
m go
Transcript showCr: "served"
"#;

/// bt's encoding of every value (computed in this process with the same codec the node
/// uses), as `golden.bin` records: canonical flag, 32-bit length, bytes.
fn golden(data: &str, values: &[V]) -> Vec<u8> {
    use bt::interp::{Interpreter, InterpreterOptions};
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.set_output(Box::new(|_| {}));
    let rep = vm.load_unit(&[("data.bt".to_string(), data.to_string())]);
    assert!(
        rep.error.is_none() && rep.warnings.is_empty(),
        "{:?} {:?}",
        rep.warnings,
        rep.error.map(|e| e.message())
    );
    let all = vm
        .eval("golden", "Data batches flatten")
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let encoded: Vec<Vec<u8>> = vm.run(move |ctx, _| {
        let bt::Value::List(l) = &all else {
            panic!("not a List")
        };
        l.iter()
            .map(|v| {
                let t = bt::codec::etf::to_term(ctx, v, "v").unwrap();
                bt::codec::etf::term_bytes(&t)
            })
            .collect()
    });
    assert_eq!(encoded.len(), values.len());
    let mut out = Vec::new();
    for (v, b) in values.iter().zip(encoded) {
        out.push(canonical(v) as u8);
        out.extend_from_slice(&(b.len() as u32).to_be_bytes());
        out.extend_from_slice(&b);
    }
    out
}

#[test]
fn every_value_kind_crosses_exactly_both_ways() {
    if !crate::tools::have_erl() {
        return;
    }
    let mut r = Rng(SEED);
    let values: Vec<V> = (0..VALUES).map(|_| gen(&mut r, 0)).collect();
    let canonical_count = values.iter().filter(|v| canonical(v)).count();
    let data = data_source(&values);

    let epmd = Epmd::erlang();
    let env = Env::new("wireprop", epmd.port);
    let specs: String = values.iter().map(|v| format!("{}.\n", spec(v))).collect();
    env.script("specs.terms", &specs);
    std::fs::write(env.dir.join("golden.bin"), golden(&data, &values)).unwrap();
    let module = env.script("wire_property.erl", include_str!("wire_property.erl"));
    let dir = env.dir.display().to_string();
    let code = format!(
        "{{ok, M, Bin}} = compile:file(\"{module}\", [binary, report]), \
         {{module, M}} = code:load_binary(M, \"{module}\", Bin), \
         wire_property:main(\"{dir}\", 'bt@127.0.0.1')."
    );
    let mut erl = env.erl("e@127.0.0.1", COOKIE, &[], &code);
    erl.expect("ready");

    let script = env.script("serve.bt", &format!("{data}{BT_SIDE}"));
    let mut bt = env.spawn(COOKIE, &["--name", "bt@127.0.0.1", "--serve", &script]);
    let mut bt_lines = Vec::new();
    loop {
        let l = bt.line();
        if l == "served" {
            break;
        }
        bt_lines.push(l);
    }
    let mut erl_lines = Vec::new();
    loop {
        let l = erl.line();
        if l == "done" {
            break;
        }
        erl_lines.push(l);
    }
    assert_eq!(erl.finish().0, 0);
    let (rest, _) = bt.drain();
    bt_lines.extend(rest);
    // Summaries are asserted; the lines before them name each value that differed.
    let summary = |ls: &[String]| -> Vec<String> {
        ls.iter()
            .filter(|l| l.contains(": checked ") || l.starts_with("golden: "))
            .cloned()
            .collect()
    };
    let details: Vec<&String> = bt_lines
        .iter()
        .chain(&erl_lines)
        .filter(|l| !summary(std::slice::from_ref(l)).contains(l))
        .take(20)
        .collect();
    let n = VALUES;
    assert_eq!(
        summary(&bt_lines),
        [format!("bt->erl->bt: checked {n} bad 0")],
        "{details:#?}"
    );
    assert_eq!(
        summary(&erl_lines),
        [
            format!("bt->erl: checked {n} bad 0"),
            format!("erl->bt->erl: checked {n} bad 0"),
            format!("erl->bt: checked {n} bad 0"),
            format!(
                "golden: bytes {canonical_count} decoded {} bad 0",
                n - canonical_count
            ),
        ],
        "{details:#?}"
    );
}
