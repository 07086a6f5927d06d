//! Tests of values ↔ Erlang terms (`codec::etf`): round trips through term bytes, the pinned
//! form of tagged and native terms, the peer-atom budget, and a bounded-time fuzz loop over
//! random and damaged term bytes (never a panic, never an unbounded allocation).

use eetf::Term;

use super::etf::{self, from_term, term_bytes, to_term, MAX_PEER_ATOMS};
use super::etf_check;
use super::tests::{vm_with, Rng};
use crate::interp::Interpreter;
use crate::value::order::strict_eq;
use crate::value::{Sym, Value};

fn vm() -> Interpreter {
    vm_with("Value subclass: Point\n  field: x = 0\n  field: y = 0\n")
}

/// `v` → term → bytes → checked decode → value, in the main process.
fn round_trip(vm: &Interpreter, src: &str) -> (Value, Value) {
    let v = vm
        .eval("t", src)
        .unwrap_or_else(|e| panic!("{src}: {}", e.message()));
    vm.run(move |ctx, _| {
        let t = to_term(ctx, &v, "arg1").unwrap();
        let bytes = term_bytes(&t);
        let (back, n) = etf_check::decode(&bytes).unwrap();
        assert_eq!(n, bytes.len());
        let w = from_term(ctx, &back, "arg1").unwrap();
        (v, w)
    })
}

#[test]
fn every_kind_round_trips_exactly() {
    let vm = vm();
    for src in [
        "nil",
        "true",
        "false",
        "42",
        "-7",
        "4611686018427387904",
        "100 factorial",
        "2.5",
        "\"text\"",
        "\"\"",
        "#sym",
        "#'at:put:'",
        "#nil",
        "#true",
        "#false",
        "#(1, #(2, 3), \"x\")",
        "#(1, -1)",
        "#(-7)",
        "#(0, 255, -2147483648)",
        "Binary withAll: #(255, 0)",
        "Binary withAll: #(104, 105)",
        "#[1, 2, 3]",
        "Tuple withAll: #(1, #a)",
        "Tuple withAll: #(#'$bt', 1)",
        "#{#a => 1, \"b\" => #(2)}",
        "#{#'$beamtalk_class' => 1}",
        "Set withAll: #(1, 2)",
        "Bag withAll: #(1, 1, 2)",
        "$a",
        "1 to: 10 by: 2",
        "Point new: #{#x => 1, #y => #(2)}",
        "Result ok: 3",
        "Result error: #bad",
        "(Node named: #'a@b') unwrap",
        "Point",
        "Duration seconds: 1",
    ] {
        let (v, w) = round_trip(&vm, src);
        assert!(
            strict_eq(&v, &w),
            "{src}: {} vs {}",
            vm.display(&v),
            vm.display(&w)
        );
    }
}

#[test]
fn native_terms_are_what_erlang_expects() {
    let vm = vm();
    let term = |src: &str| {
        let v = vm.eval("t", src).unwrap();
        vm.run(move |ctx, _| to_term(ctx, &v, "arg1").unwrap().to_string())
    };
    assert_eq!(
        term("#(1, 2.5, \"s\", #a, nil, true)"),
        "[1,2.5,<<115>>,'a','nil','true']"
    );
    assert_eq!(term("#{#k => #(1)}"), "#{'k'=>[1]}");
    let p = term("Point new: #{#x => 1, #y => 2}");
    for part in [
        "'$beamtalk_class'=>'Point'",
        "'$beamtalk_version'=>1",
        "'x'=>1",
        "'y'=>2",
    ] {
        assert!(p.contains(part), "{p}");
    }
}

/// `v` as external term format bytes.
fn bytes_of(vm: &Interpreter, src: &str) -> Vec<u8> {
    let v = vm.eval("t", src).unwrap();
    vm.run(move |ctx, _| term_bytes(&to_term(ctx, &v, "arg1").unwrap()))
}

/// Erlang's STRING_EXT holds bytes 0..255 only: a list of small integers with a negative
/// one is a LIST_EXT. The bytes are what `term_to_binary` answers in `erl`.
#[test]
fn lists_with_negative_small_integers_are_list_ext() {
    let vm = vm();
    assert_eq!(
        bytes_of(&vm, "#(1, -1)"),
        [131, 108, 0, 0, 0, 2, 97, 1, 98, 255, 255, 255, 255, 106]
    );
    assert_eq!(
        bytes_of(&vm, "#(-7)"),
        [131, 108, 0, 0, 0, 1, 98, 255, 255, 255, 249, 106]
    );
    // term_to_binary([1,2]) and term_to_binary([256]): unchanged.
    assert_eq!(bytes_of(&vm, "#(1, 2)"), [131, 107, 0, 2, 1, 2]);
    assert_eq!(
        bytes_of(&vm, "#(256)"),
        [131, 108, 0, 0, 0, 1, 98, 0, 0, 1, 0, 106]
    );
    // Lists the dist layer builds (an argument list) take the same path.
    let args = etf::list(vec![Term::from(eetf::FixInteger::from(-7))]);
    assert_eq!(
        term_bytes(&args),
        [131, 108, 0, 0, 0, 1, 98, 255, 255, 255, 249, 106]
    );
}

/// An opaque term from a peer holding a list of small integers with a negative one goes
/// back as the same bytes.
#[test]
fn opaque_terms_with_negative_lists_go_back_exactly() {
    let vm = vm();
    // [[1,-1]|x]: an improper list (opaque in bt) holding a proper one.
    let sent: Vec<u8> = vec![
        131, 108, 0, 0, 0, 1, 108, 0, 0, 0, 2, 97, 1, 98, 255, 255, 255, 255, 106, 119, 1, 120,
    ];
    let back = vm.run(move |ctx, _| {
        let (t, _) = etf_check::decode(&sent).unwrap();
        let v = from_term(ctx, &t, "arg1").unwrap();
        assert_eq!(ctx.print_string(&v).unwrap_or_default(), "[[1,-1]|x]");
        (term_bytes(&to_term(ctx, &v, "arg1").unwrap()), sent)
    });
    assert_eq!(back.0, back.1);
}

/// A Binary that is not UTF-8 is an Erlang binary (it comes back a Binary); one that is
/// UTF-8 would come back a String, so it travels tagged.
#[test]
fn binaries_are_erlang_binaries_unless_they_read_as_strings() {
    let vm = vm();
    assert_eq!(
        bytes_of(&vm, "Binary withAll: #(255, 0)"),
        [131, 109, 0, 0, 0, 2, 255, 0]
    );
    assert!(bytes_of(&vm, "Binary withAll: #(104, 105)").starts_with(&[131, 104, 3, 119, 3]));
}

/// The Symbols `#nil`, `#true` and `#false` are not the constants: they travel tagged.
#[test]
fn constant_named_symbols_travel_tagged() {
    let vm = vm();
    assert_eq!(bytes_of(&vm, "nil"), [131, 119, 3, b'n', b'i', b'l']);
    for s in ["#nil", "#true", "#false"] {
        assert!(bytes_of(&vm, s).starts_with(&[131, 104, 3, 119, 3]), "{s}");
    }
}

/// The tagged form is `{'$bt', 1, WireBytes}`; pinned for a Character.
#[test]
fn tagged_terms_are_pinned() {
    let vm = vm();
    let v = vm.eval("t", "$a").unwrap();
    let bytes = vm.run(move |ctx, _| term_bytes(&to_term(ctx, &v, "arg1").unwrap()));
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // 131 (version), 104 3 (3-tuple), 119 3 "$bt", 97 1 (version 1), 109 LEN wire bytes.
    assert!(hex.starts_with("836803770324627461016d"), "{hex}");
    assert_eq!(hex, "836803770324627461016d00000004b7010661", "{hex}");
}

/// 10,000 distinct atoms from a peer grow the symbol table by at most `MAX_PEER_ATOMS`;
/// the rest stay opaque values that print as the atom (bare, as Erlang writes it).
#[test]
fn peer_atoms_are_capped() {
    let vm = vm();
    let last = vm.run(move |ctx, _| {
        let mut last = String::new();
        for i in 0..10_000 {
            let t = Term::from(eetf::Atom::from(format!("peer_atom_{i}_zq")));
            let v = from_term(ctx, &t, "arg1").unwrap();
            last = match &v {
                Value::Symbol(s) => format!("#{}", s.as_str()),
                other => ctx.print_string(other).unwrap_or_default(),
            };
        }
        last
    });
    // Count this test's own atoms (other tests intern Symbols concurrently, so the global
    // count would move under it).
    let grown = (0..10_000)
        .filter(|i| Sym::lookup(&format!("peer_atom_{i}_zq")).is_some())
        .count();
    assert!(grown <= MAX_PEER_ATOMS, "{grown}");
    assert_eq!(last, "peer_atom_9999_zq");
}

/// Random bytes and damaged valid terms: the checked decoder answers Ok or Err, never
/// panics; whatever decodes converts to a value without panicking.
#[test]
fn fuzzed_term_bytes_never_panic() {
    let vm = vm();
    let seeds: Vec<Vec<u8>> = [
        "#(1, \"two\", #three, 4.5)",
        "#{#a => #[1, 2]}",
        "Point new",
        "100 factorial",
        "Set withAll: #(1, 2)",
    ]
    .iter()
    .map(|src| {
        let v = vm.eval("t", src).unwrap();
        vm.run(move |ctx, _| term_bytes(&to_term(ctx, &v, "arg1").unwrap()))
    })
    .collect();
    vm.run(move |ctx, _| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let tags = [
            70u8, 77, 88, 90, 97, 98, 100, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 116,
            117, 118, 119,
        ];
        for i in 0..20_000 {
            let mut b = if i % 3 == 0 {
                let n = (rng.next() % 64) as usize;
                let mut b = vec![131u8];
                b.extend((0..n).map(|_| {
                    let r = rng.next();
                    if r.is_multiple_of(4) {
                        tags[(r >> 8) as usize % tags.len()]
                    } else {
                        (r >> 16) as u8
                    }
                }));
                b
            } else {
                seeds[i % seeds.len()].clone()
            };
            if i % 3 != 0 {
                for _ in 0..1 + rng.next() % 4 {
                    let at = (rng.next() as usize) % b.len();
                    match rng.next() % 3 {
                        0 => b[at] = rng.next() as u8,
                        1 => b.truncate(at.max(1)),
                        _ => b.insert(at, rng.next() as u8),
                    }
                }
            }
            if let Ok((t, _)) = etf_check::decode(&b) {
                let _ = from_term(ctx, &t, "arg1");
            }
        }
    });
}

#[test]
fn opaque_terms_print_in_erlang_syntax_and_go_back_unchanged() {
    let vm = vm();
    vm.run(move |ctx, _| {
        let port = Term::from(eetf::Port {
            node: eetf::Atom::from("x@y"),
            id: 7,
            creation: 1,
        });
        let v = from_term(ctx, &port, "arg1").unwrap();
        assert_eq!(ctx.print_string(&v).unwrap_or_default(), port.to_string());
        assert_eq!(to_term(ctx, &v, "arg1").unwrap(), port);
        let _ = etf::BT_TAG;
    });
}

#[test]
fn compressed_terms_read_back_and_stay_plain_when_not_shorter() {
    use super::etf_bytes::{compress, decode, encode};
    let t = Term::from(eetf::List::from(vec![etf::atom("a"); 30]));
    let plain = encode(&t, 1);
    let z = compress(plain.clone(), 6);
    // Tag, length and zlib header as `erl` writes them for level 6 (1: 120,1; 9: 120,218).
    assert_eq!(&z[..8], &[131, 80, 0, 0, 0, 126, 120, 156]);
    assert_eq!(&compress(plain.clone(), 1)[6..8], &[120, 1]);
    assert_eq!(&compress(plain.clone(), 9)[6..8], &[120, 218]);
    let (back, used) = decode(&z, &mut |_| Ok(())).ok().flatten().expect("a term");
    assert_eq!(back, t);
    assert_eq!(used, z.len());
    let one = encode(&Term::from(eetf::FixInteger::from(1)), 1);
    assert_eq!(compress(one.clone(), 6), one);
    assert_eq!(compress(plain.clone(), 0), plain);
}
