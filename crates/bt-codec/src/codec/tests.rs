//! Tests of the walker and the wire format: round trips of every value kind, rejection
//! paths, version errors and migration, block identity, references, and a deterministic
//! fuzz loop over damaged encodings.

use super::error::kind;
use super::walk::NO_NODE;
use super::wire::{encode_with, EncodeOpts};
use super::*;
use crate::interp::error::{exc_field, F_HINT, F_KIND};
use crate::interp::eval::Unwind;
use crate::interp::{Interpreter, InterpreterOptions};
use crate::value::order::strict_eq;
use crate::value::{Sym, Value};

const FIXTURE: &str = r#"
Value subclass: Point
  field: x = 0
  field: y = 0
  sum => self.x + self.y

Value subclass: Cfg
  field: cache = nil
  field: name = "c"

Object subclass: Bucket
  size => 3

Object subclass: Secret
  handleScope: #process
  k => 1

Actor subclass: Counter
  state: n = 0
  n => self.n

Object subclass: Maker
  adder: n => [:x | x + n]
  curry: n => [:x | [:y | x + y + n]]
  class twice => [:x | x * 2]
"#;

/// An interpreter with `src` loaded (no warnings, no errors) and its output dropped.
pub(super) fn vm_with(src: &str) -> Interpreter {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.set_output(Box::new(|_| {}));
    let rep = vm.load_unit(&[("fixture.bt".to_string(), src.to_string())]);
    assert!(
        rep.warnings.is_empty() && rep.error.is_none(),
        "fixture: {:?} {:?}",
        rep.warnings,
        rep.error.map(|e| e.message())
    );
    vm
}

fn vm() -> Interpreter {
    vm_with(FIXTURE)
}

fn eval(vm: &Interpreter, src: &str) -> Value {
    match vm.eval("test", src) {
        Ok(v) => v,
        Err(e) => panic!("{src}: {}", e.message()),
    }
}

/// Encodes (as arg1) and decodes `v` in `vm`'s main process.
fn round_trip(vm: &Interpreter, v: Value) -> Result<Value, CodecError> {
    vm.run(move |ctx, _| {
        let bytes = encode_in(ctx, &v, "arg1")?;
        decode_in(ctx, &bytes)
    })
}

fn decode_in(ctx: &mut crate::interp::eval::Ctx, bytes: &[u8]) -> Result<Value, CodecError> {
    let r = LocalResolver::new(ctx);
    let v = decode(
        bytes,
        &mut DecodeCtx {
            ctx,
            resolver: &r,
            root: "arg1",
        },
    );
    // The convenience entry point agrees (errors included).
    let w = decode_local(ctx, bytes, "arg1");
    assert_eq!(v.is_ok(), w.is_ok());
    v
}

fn same(vm: &Interpreter, src: &str) {
    let v = eval(vm, src);
    let back = round_trip(vm, v.clone()).unwrap_or_else(|e| panic!("{src}: {e}"));
    assert!(
        strict_eq(&v, &back),
        "{src}: {} vs {}",
        vm.display(&v),
        vm.display(&back)
    );
    assert_eq!(vm.display(&v), vm.display(&back), "{src}");
}

#[test]
fn scalars_round_trip() {
    let vm = vm();
    for src in [
        "nil",
        "true",
        "false",
        "0",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "2 raisedTo: 100",
        "(2 raisedTo: 200) negated",
        "1.5",
        "-0.25e-300",
        "$a",
        "#foo:bar:",
        "\"héllo 😀\"",
        "\"\"",
        "Duration milliseconds: 1500",
    ] {
        same(&vm, src);
    }
}

#[test]
fn float_bits_survive() {
    let vm = vm();
    for x in [
        f64::NAN,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
    ] {
        let back = round_trip(&vm, Value::float(x)).expect("float");
        match back {
            Value::Float(y) => assert_eq!(y.get().to_bits(), x.to_bits()),
            _ => panic!("not a Float"),
        }
    }
    let big = Value::from_bigint(num_bigint::BigInt::from(i64::MIN) * 3);
    let back = round_trip(&vm, big.clone()).expect("big");
    assert!(strict_eq(&big, &back));
    let ch = Value::ch('\u{10FFFF}');
    assert!(strict_eq(&ch, &round_trip(&vm, ch.clone()).expect("char")));
    let bin = Value::Binary(std::sync::Arc::new(vec![0, 255, 7]));
    assert!(strict_eq(&bin, &round_trip(&vm, bin.clone()).expect("bin")));
}

#[test]
fn collections_round_trip() {
    let vm = vm();
    for src in [
        "#(1, \"a\", #b, $c, nil)",
        "#()",
        "#[1, 2, 3, nil, true]",
        "#[1, \"wide\", 3.5]",
        "Tuple withAll: #(1, #(2, (Tuple withAll: #(3, 4))), \"x\")",
        "#{#b => 1, #a => 2, \"z\" => #(1, 2), 3 => #{#n => nil}}",
        "#(3, 1, 2) asSet",
        "((Bag new) add: #x withCount: 3) add: #y",
        "((Queue new) enqueue: 1) enqueue: #(2)",
        "1 to: 10 by: 2",
        "1 to: 5",
        "0.5 to: 2.5 by: 0.5",
        "#(#(#(#(#(1)))), #{#k => #[#(1)]})",
    ] {
        same(&vm, src);
    }
}

#[test]
fn arrays_keep_their_representation() {
    let vm = vm();
    for (src, compact) in [("#[1, 2, 252, nil]", true), ("#[1, 253]", false)] {
        let v = eval(&vm, src);
        let Value::Array(ref a) = round_trip(&vm, v).expect("array") else {
            panic!("not an Array");
        };
        assert_eq!(a.is_compact(), compact, "{src}");
    }
}

#[test]
fn dictionary_term_order_is_kept() {
    let vm = vm();
    let v = eval(&vm, "#{#z => 1, 10 => 2, \"a\" => 3, #a => 4, 2 => 5}");
    let back = round_trip(&vm, v.clone()).expect("dict");
    let (Value::Dict(a), Value::Dict(b)) = (&v, &back) else {
        panic!("not Dictionaries");
    };
    let ka: Vec<String> = a.keys().map(|k| vm.display(&k)).collect();
    let kb: Vec<String> = b.keys().map(|k| vm.display(&k)).collect();
    assert_eq!(ka, kb);
}

#[test]
fn value_instances_results_exceptions_nodes() {
    let vm = vm();
    for src in [
        "Point x: 3 y: 4",
        "Cfg new",
        "#(1, (Point x: 1 y: 2), #{#p => Point new})",
        "Result ok: (Point x: 1 y: 1)",
        "Result error: #bad",
        "[1 / 0] on: Error do: [:e | e]",
        "[nil foo] on: Error do: [:e | e]",
        "Node current",
    ] {
        same(&vm, src);
    }
    let p = round_trip(&vm, eval(&vm, "Point x: 3 y: 4")).expect("point");
    let sum = vm.run(move |ctx, _| ctx.send(&p, Sym::new("sum"), &[]).map_err(|_| ()));
    assert!(matches!(sum, Ok(Value::Int(7))));
}

#[test]
fn classes_and_object_instances_go_by_name() {
    let vm = vm();
    same(&vm, "Point");
    same(&vm, "Point class");
    same(&vm, "Integer");
    let b = eval(&vm, "(Bucket new) size");
    assert!(matches!(b, Value::Int(3)));
    let back = round_trip(&vm, eval(&vm, "Bucket new")).expect("bucket");
    let Value::Object(i) = &back else {
        panic!("not an instance")
    };
    assert_eq!(i.class.name.as_str(), "Bucket");
    let n = vm.run(move |ctx, _| ctx.send(&back, Sym::new("size"), &[]).map_err(|_| ()));
    assert!(
        matches!(n, Ok(Value::Int(3))),
        "a fresh instance of the class here"
    );
}

#[test]
fn rejection_names_the_path() {
    let vm = vm();
    let cases = [
        (
            "Cfg new withCache: (AtomicCounter new: #hits)",
            "AtomicCounter value at arg1.cache cannot cross a node boundary",
        ),
        (
            "#(1, 2, (Cfg new withCache: #{#k => #(0, (AtomicCounter new: #h2))}))",
            "AtomicCounter value at arg1[3].cache{#k}[2] cannot cross a node boundary",
        ),
        (
            "Tuple withAll: #(1, Secret new)",
            "Secret value at arg1[2] cannot cross a node boundary",
        ),
        (
            "#{#t => (Timer after: (Duration seconds: 60) do: [nil])}",
            "Timer value at arg1{#t} cannot cross a node boundary",
        ),
    ];
    for (src, want) in cases {
        let v = eval(&vm, src);
        let e = round_trip(&vm, v).expect_err(src);
        assert_eq!(e.kind, kind::NOT_SERIALISABLE, "{src}");
        assert_eq!(e.message, want);
        // Raised as a language exception with the kind's class.
        let (k, class) = vm.run(move |ctx, _| match e.to_unwind(ctx) {
            Unwind::Error(x) => (
                exc_field(&x, F_KIND).as_sym().map(|s| s.as_str()),
                ctx.class_name_of(&x),
            ),
            _ => (None, String::new()),
        });
        assert_eq!(k, Some("not_serialisable"));
        assert_eq!(class, "RuntimeError");
    }
}

/// A value nested too deeply is named by the ends of its path, the levels between counted.
#[test]
fn a_too_deep_value_is_named_by_the_ends_of_its_path() {
    let vm = vm();
    let v = eval(&vm, "x := #(). 1 to: 2000 do: [:i | x := #() add: x]. x");
    let e = round_trip(&vm, v).expect_err("too deep");
    assert_eq!(e.kind, kind::NOT_SERIALISABLE);
    assert!(
        e.message.starts_with("value at arg1[1][1][1][1][1][1]…(") && e.message.len() < 200,
        "{}",
        e.message
    );
}

#[test]
fn references_resolve_to_the_live_process() {
    let vm = vm();
    eval(&vm, "c := Counter spawn");
    same(&vm, "c");
    same(&vm, "c pid");
    same(&vm, "#(1, c, (Tuple withAll: #(c)))");
    // A TimeoutProxy's own process stays on its node: on the wire it is a proxy of its
    // target with its timeout, and it arrives as one, forwarding to the same actor.
    let proxy = round_trip(&vm, eval(&vm, "c withTimeout: 100")).expect("proxy");
    assert!(
        vm.display(&proxy).starts_with("Actor(TimeoutProxy, "),
        "{}",
        vm.display(&proxy)
    );
    let n = vm.run(move |ctx, _| ctx.send(&proxy, Sym::new("n"), &[]).map_err(|_| ()));
    assert!(
        matches!(n, Ok(Value::Int(0))),
        "the proxy forwards to the original actor"
    );
    let back = round_trip(&vm, eval(&vm, "c")).expect("actor");
    let n = vm.run(move |ctx, _| ctx.send(&back, Sym::new("n"), &[]).map_err(|_| ()));
    assert!(
        matches!(n, Ok(Value::Int(0))),
        "sends reach the original actor"
    );
    // A reference naming another node: node_down from the local resolver.
    let v = eval(&vm, "c");
    let other = EncodeOpts {
        node: Sym::new("other@host"),
        prog: None,
    };
    let bytes = encode_with(&v, "arg1", &other).expect("encode");
    let e = vm
        .run(move |ctx, _| decode_in(ctx, &bytes))
        .expect_err("node_down");
    assert_eq!(e.kind, kind::NODE_DOWN);
    assert_eq!(e.path, "arg1");
}

#[test]
fn method_blocks_resolve_and_run() {
    let vm = vm();
    let r = vm.run({
        let b = eval(&vm, "Maker new adder: 5");
        let c = eval(&vm, "Maker twice");
        let d = eval(&vm, "(Maker new curry: 100) value: 20");
        move |ctx, _| {
            let b2 = decode_in(ctx, &encode_in(ctx, &b, "arg1").expect("enc")).expect("dec");
            let c2 = decode_in(ctx, &encode_in(ctx, &c, "arg1").expect("enc")).expect("dec");
            let d2 = decode_in(ctx, &encode_in(ctx, &d, "arg1").expect("enc")).expect("dec");
            let x = ctx.call_block(&b2, &[Value::Int(2)]).map_err(|_| "b")?;
            let y = ctx.call_block(&c2, &[Value::Int(21)]).map_err(|_| "c")?;
            let z = ctx.call_block(&d2, &[Value::Int(3)]).map_err(|_| "d")?;
            Ok::<_, &str>((x.as_int(), y.as_int(), z.as_int()))
        }
    });
    assert_eq!(r, Ok((Some(7), Some(42), Some(123))), "nested blocks too");
}

/// Invokes a decoded block and answers the (kind, hint) it raises.
fn raised_by(vm: &Interpreter, bytes: Vec<u8>, arg: Value) -> (Option<&'static str>, Value) {
    vm.run(move |ctx, _| {
        let b = decode_in(ctx, &bytes).expect("a mismatch decodes to a block");
        match ctx.call_block(&b, &[arg]) {
            Err(Unwind::Error(x)) => (
                exc_field(&x, F_KIND).as_sym().map(|s| s.as_str()),
                exc_field(&x, F_HINT),
            ),
            _ => (None, Value::Nil),
        }
    })
}

#[test]
fn mismatched_blocks_raise_remote_code_mismatch() {
    let a = vm();
    // Same class and selector, different source: a mismatch on the other node.
    let b = vm_with(&FIXTURE.replace("[:x | x + n]", "[:x | x - n]"));
    let blk = eval(&a, "Maker new adder: 5");
    let bytes = a.run(move |ctx, _| encode_in(ctx, &blk, "arg1").expect("enc"));
    let (k, hint) = raised_by(&b, bytes.clone(), Value::Int(1));
    assert_eq!(k, Some("remote_code_mismatch"));
    assert_eq!(hint.as_str(), Some(error::MISMATCH_HINT));
    // The same bytes on the same code resolve.
    let (k, _) = raised_by(&a, bytes, Value::Int(1));
    assert_eq!(k, None);
    // A top-level block of this session resolves here.
    let top = eval(&a, "[:x | x + 1]");
    let bytes = a.run(move |ctx, _| encode_in(ctx, &top, "arg1").expect("enc"));
    let (k, _) = raised_by(&a, bytes, Value::Int(1));
    assert_eq!(k, None);
}

#[test]
fn top_level_blocks_resolve_by_unit() {
    let app = "k := 10\ntimesK := [:x | x * k]\n";
    let load = |src: &str| {
        let vm = vm();
        let rep = vm.load_unit(&[("app.bt".to_string(), src.to_string())]);
        assert!(rep.error.is_none() && rep.warnings.is_empty());
        vm
    };
    let (a, b, c) = (load(app), load(app), load(&app.replace("x * k", "x + k")));
    let blk = eval(&a, "timesK");
    let bytes = a.run(move |ctx, _| encode_in(ctx, &blk, "arg1").expect("enc"));
    // Same unit (path and source) on the other node: a live block with its captured k.
    let r = b.run({
        let bytes = bytes.clone();
        move |ctx, _| {
            let blk = decode_in(ctx, &bytes).expect("dec");
            ctx.call_block(&blk, &[Value::Int(4)])
                .map_err(|_| ())
                .map(|v| v.as_int())
        }
    });
    assert_eq!(r, Ok(Some(40)));
    // A different source under the same path: remote_code_mismatch when invoked.
    let (k, _) = raised_by(&c, bytes, Value::Int(4));
    assert_eq!(k, Some("remote_code_mismatch"));
}

const V1: &str = "Value subclass: Shape\n  field: w = 1\n  field: old = 0\n";
const V2: &str =
    "Value subclass: Shape\n  class shapeVersion => 2\n  field: w = 1\n  field: h = 7\n";
const V3: &str =
    "Value subclass: Shape\n  class shapeVersion => 3\n  field: w = 1\n  field: d :: Integer\n";

fn encoded(vm: &Interpreter, src: &str) -> Vec<u8> {
    let v = eval(vm, src);
    vm.run(move |ctx, _| encode_in(ctx, &v, "arg1").expect("encode"))
}

#[test]
fn shape_versions_migrate_forward_only() {
    let (v1, v2, v3) = (vm_with(V1), vm_with(V2), vm_with(V3));
    let old = encoded(&v1, "Shape new withW: 5");
    // Older envelope: w kept, h takes its default, old dropped.
    let m = v2.run(move |ctx, _| decode_in(ctx, &old)).expect("migrate");
    assert_eq!(
        v2.display(&m),
        v2.display(&eval(&v2, "(Shape new withW: 5) withH: 7"))
    );
    // Newer envelope: shape_version_ahead.
    let new = encoded(&v2, "Shape new");
    let e = v1
        .run(move |ctx, _| decode_in(ctx, &new))
        .expect_err("ahead");
    assert_eq!(e.kind, kind::SHAPE_VERSION_AHEAD);
    assert!(e.message.contains("version 2"), "{}", e.message);
    // A missing typed field without a default: shape_migration_failed.
    let old = encoded(&v1, "#(1, Shape new)");
    let e = v3
        .run(move |ctx, _| decode_in(ctx, &old))
        .expect_err("fails");
    assert_eq!(e.kind, kind::SHAPE_MIGRATION_FAILED);
    assert_eq!(e.path, "arg1[2]");
    // A class this node lacks.
    let p = encoded(&vm(), "Point new");
    let e = v1
        .run(move |ctx, _| decode_in(ctx, &p))
        .expect_err("missing");
    assert_eq!(e.kind, kind::CLASS_NOT_FOUND);
}

#[test]
fn wire_version_and_framing() {
    let bytes = encode(&Value::Int(1), "arg1").expect("encode");
    assert_eq!(bytes, vec![0xB7, 1, 0x03, 2]);
    let vm = vm();
    let mut future = bytes.clone();
    future[1] = 2;
    let e = vm
        .run(move |ctx, _| decode_in(ctx, &future))
        .expect_err("v2");
    assert_eq!(e.kind, kind::WIRE_VERSION_UNSUPPORTED);
    let mut trailing = bytes;
    trailing.push(0);
    let e = vm
        .run(move |ctx, _| decode_in(ctx, &trailing))
        .expect_err("trailing");
    assert_eq!(e.kind, kind::MALFORMED_MESSAGE);
    // Names are interned per message: a repeated Symbol costs one byte.
    let once = encode(&Value::list([Value::sym("abcdef")]), "a")
        .expect("e")
        .len();
    let twice = encode(
        &Value::list([Value::sym("abcdef"), Value::sym("abcdef")]),
        "a",
    )
    .expect("e")
    .len();
    assert_eq!(twice, once + 2);
    let _ = NO_NODE;
}

/// Hand-made messages naming classes that are not field records are refused.
#[test]
fn envelopes_of_builtin_natives_are_refused() {
    let vm = vm();
    let msg = |t: u8, name: &str, tail: &[u8]| {
        let mut m = vec![0xB7, 1, t, 0, name.len() as u8];
        m.extend_from_slice(name.as_bytes());
        m.extend_from_slice(tail);
        m
    };
    for m in [
        msg(0x13, "Duration", &[2, 0]),
        msg(0x13, "Integer", &[2, 0]),
        msg(0x14, "AtomicCounter", &[]),
        msg(0x14, "Secret", &[]),
        msg(0x14, "Counter", &[]),
        msg(0x13, "Collection", &[2, 0]),
    ] {
        let e = vm
            .run(move |ctx, _| decode_in(ctx, &m))
            .expect_err("refused");
        assert!(
            e.kind == kind::NOT_SERIALISABLE || e.kind == kind::CLASS_NOT_FOUND,
            "{e}"
        );
    }
    // A Node is a field record of a built-in class: accepted.
    let n = vm.run(move |ctx, _| {
        decode_in(
            ctx,
            &msg(
                0x13,
                "Node",
                &[2, 1, 0, 4, b'n', b'a', b'm', b'e', 7, 0, 1, b'x'],
            ),
        )
    });
    let n = n.expect("a Node envelope");
    assert_eq!(vm.display(&n), "Node(x)");
}

/// xorshift64*: deterministic, no dependency (the codec fuzz loops share it).
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn damaged_input_never_panics() {
    let vm = vm();
    eval(&vm, "c := Counter spawn");
    let src = "#(1, -5, 2 raisedTo: 70, 1.5, $x, #sym, \"str\", #[1, 2], #[\"w\"], (Tuple withAll: #(1, 2)), \
               #{#a => (Point x: 1 y: 2)}, #(1) asSet, (Bag new) add: 3, 1 to: 9 by: 2, \
               Point, Bucket new, (Maker new adder: 1), [:x | x], c, Node current, \
               Result ok: 1, (Duration seconds: 2), #(1, 2, 3) stream)";
    let v = eval(&vm, src);
    let base = vm.run(move |ctx, _| encode_in(ctx, &v, "arg1").expect("encode"));
    let outcome = vm.try_run(move |ctx, _| {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut ok, mut err) = (0, 0);
        for len in 0..base.len() {
            match decode_in(ctx, &base[..len]) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
        }
        for _ in 0..3000 {
            let mut m = base.clone();
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() as usize) % m.len();
                match rng.next() % 3 {
                    0 => m[i] ^= 1 << (rng.next() % 8),
                    1 => m[i] = rng.next() as u8,
                    _ => m.insert(i, rng.next() as u8),
                }
            }
            match decode_in(ctx, &m) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
        }
        for _ in 0..500 {
            let n = (rng.next() % 64) as usize;
            let mut g: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            if rng.next().is_multiple_of(2) && g.len() > 2 {
                g[0] = 0xB7;
                g[1] = 1;
            }
            match decode_in(ctx, &g) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
        }
        (ok, err)
    });
    let (ok, err) = outcome.expect("no panic while decoding damaged input");
    assert!(err > 0 && ok + err > 3000, "ok {ok} err {err}");
}

#[test]
fn streams_round_trip_with_their_blocks() {
    let vm = vm();
    let v = eval(
        &vm,
        "(#(1, 2, 3, 4) stream select: [:x | x > 1]) collect: [:x | x * 10]",
    );
    let back = round_trip(&vm, v).expect("stream");
    let l = vm.run(move |ctx, _| ctx.send(&back, Sym::new("asList"), &[]).map_err(|_| ()));
    let l = l.expect("the stream's blocks resolve");
    assert!(strict_eq(&l, &eval(&vm, "#(20, 30, 40)")));
    same(&vm, "(Stream from: 1) take: 3");
}

#[test]
fn nesting_is_bounded_both_ways() {
    let nest = |n: usize| {
        let mut v = Value::Int(1);
        for _ in 0..n {
            v = Value::list([v]);
        }
        v
    };
    // On an ordinary (test) thread: the walker's frames fit well within its stack.
    let ok = nest(walk::MAX_DEPTH - 1);
    let bytes = encode(&ok, "arg1").expect("within the limit");
    let e = encode(&nest(walk::MAX_DEPTH + 5), "arg1").expect_err("too deep");
    assert_eq!(e.kind, kind::NOT_SERIALISABLE);
    let vm = vm();
    let back = vm.run(move |ctx, _| decode_in(ctx, &bytes).map(|v| strict_eq(&v, &ok)));
    assert_eq!(back, Ok(true));
    // A hostile message nesting far deeper is refused, not a stack overflow.
    let mut evil = vec![0xB7, 1];
    for _ in 0..100_000 {
        evil.extend_from_slice(&[0x0A, 1]);
    }
    evil.push(0);
    let e = vm
        .run(move |ctx, _| decode_in(ctx, &evil))
        .expect_err("too deep");
    assert_eq!(e.kind, kind::MALFORMED_MESSAGE);
    // Dropping the deep values is the interpreter's business; keep them shallow here.
}
