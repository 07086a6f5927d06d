//! Tests of the hot-path term codec (`codec::etf_fast`) against the general one: on the same
//! terms it writes the same bytes, on the same bytes — valid, damaged or random — it decodes
//! the same term or declines (never a different answer, never a panic).

use eetf::{Atom, BigInteger, Binary, ByteList, FixInteger, Float, ImproperList, List, Map};
use eetf::{Pid, Reference, Term, Tuple};

use super::etf::term_bytes;
use super::etf_check;
use super::etf_fast::{self, DEPTH, MAX_INPUT};
use super::tests::Rng;

fn atom(rng: &mut Rng) -> Atom {
    let names = ["", "ok", "$gen_call", "add:", "alias", "été", "n@127.0.0.1"];
    match rng.next() % 8 {
        7 => Atom::from("x".repeat(200 + (rng.next() % 100) as usize)),
        k => Atom::from(names[k as usize % names.len()]),
    }
}

/// A random term; `wide`: also kinds the fast codec leaves to the general one.
fn term(rng: &mut Rng, depth: u32, wide: bool) -> Term {
    let k = rng.next() % if depth == 0 { 8 } else { 13 };
    match k {
        0 => Term::from(FixInteger::from((rng.next() % 300) as i32)),
        1 => Term::from(FixInteger::from(rng.next() as i32)),
        2 => Term::from(atom(rng)),
        3 => Term::from(Pid::new(
            atom(rng).name,
            rng.next() as u32,
            0,
            rng.next() as u32,
        )),
        4 => Term::from(Reference {
            node: atom(rng),
            id: (0..rng.next() % 6).map(|_| rng.next() as u32).collect(),
            creation: rng.next() as u32,
        }),
        5 => Term::from(Binary::from(vec![7u8; (rng.next() % 5) as usize])),
        6 => Term::from(Float::try_from((rng.next() % 1000) as f64 / 7.0 - 50.0).unwrap()),
        7 if wide => Term::from(BigInteger::from(-(1i64 << 40) - rng.next() as i64 % 99)),
        7 => Term::from(List::nil()),
        8 | 9 => {
            let n = rng.next() % 4;
            Term::from(Tuple::from(
                (0..n)
                    .map(|_| term(rng, depth - 1, wide))
                    .collect::<Vec<_>>(),
            ))
        }
        10 => {
            let n = rng.next() % 4;
            Term::from(List::from(
                (0..n)
                    .map(|_| term(rng, depth - 1, wide))
                    .collect::<Vec<_>>(),
            ))
        }
        11 => {
            let n = 1 + rng.next() % 3;
            let elements = (0..n)
                .map(|_| term(rng, depth - 1, wide))
                .collect::<Vec<_>>();
            match term(rng, depth - 1, wide) {
                Term::List(l) if l.is_nil() => Term::from(ByteList::from(vec![1u8, 2])),
                last => Term::from(ImproperList::from((elements, last))),
            }
        }
        _ if wide => {
            let mut m = std::collections::HashMap::new();
            m.insert(term(rng, 0, wide), term(rng, 0, wide));
            Term::from(Map::from(m))
        }
        _ => Term::from(ByteList::from(vec![0u8, 200])),
    }
}

/// The fast decoder on `b` agrees with the checked general decoder: what it decodes, the
/// general path decodes too, to the same term and length.
fn agrees(b: &[u8]) -> bool {
    let mut at = 0;
    match etf_fast::decode(b, &mut at) {
        None => {
            assert_eq!(at, 0);
            false
        }
        Some(t) => {
            let (g, n) = etf_check::decode(b).unwrap_or_else(|e| {
                panic!("fast decoded {t} from {b:?}, the general path refused: {e:?}")
            });
            assert_eq!((&t, at), (&g, n), "bytes {b:?}");
            true
        }
    }
}

#[test]
fn writes_the_bytes_the_general_encoder_writes() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut fast, mut declined, mut lossy) = (0, 0, 0);
    for i in 0..5_000 {
        let wide = i % 2 == 0;
        let t = term(&mut rng, 4, wide);
        let mut out = vec![9u8];
        if etf_fast::encode(&t, &mut out) {
            let general = term_bytes(&t);
            if out[1..] != general[..] {
                // `eetf` writes a list of integers below 256 as a byte string, negative ones
                // included (-1 arrives as 255); the fast encoder keeps them integers.
                let (back, _) = etf_check::decode(&out[1..]).unwrap();
                assert_eq!(back, t);
                assert_ne!(etf_check::decode(&general).unwrap().0, t, "{t}");
                lossy += 1;
            }
            fast += 1;
        } else {
            assert_eq!(out, [9u8], "a declined term leaves the buffer as it was");
            assert!(wide, "{t} is in the fast subset");
            declined += 1;
        }
    }
    assert!(
        fast > 2_000 && declined > 100 && lossy > 0,
        "{fast} {declined} {lossy}"
    );
}

#[test]
fn decodes_what_the_general_decoder_decodes() {
    let mut rng = Rng(0x0f0f_1234_abcd_0001);
    for i in 0..5_000 {
        let wide = i % 2 == 0;
        let t = term(&mut rng, 4, wide);
        let b = term_bytes(&t);
        let mut at = 0;
        match etf_fast::decode(&b, &mut at) {
            Some(back) => {
                assert_eq!(Ok((back, at)), etf_check::decode(&b));
                assert_eq!(at, b.len());
            }
            None => assert!(wide, "{t} is in the fast subset"),
        }
    }
}

#[test]
fn the_forms_erl_sends_decode_like_the_general_path() {
    // Atoms as ATOM_EXT / SMALL_ATOM_EXT, PID_EXT with a one-byte creation, NEW_REFERENCE_EXT,
    // negative INTEGER_EXT, and a term followed by another (a control term, then a message).
    let pid_ext = [131, 103, 115, 1, b'n', 0, 0, 0, 5, 0, 0, 0, 0, 2];
    let new_ref = [131, 114, 0, 2, 100, 0, 1, b'n', 3, 0, 0, 0, 1, 0, 0, 0, 2];
    let neg = [131, 98, 255, 255, 255, 254];
    let two = [131, 97, 1, 131, 97, 2];
    for b in [&pid_ext[..], &new_ref, &neg, &two] {
        assert!(agrees(b), "{b:?}");
    }
    let mut at = 3;
    assert_eq!(
        etf_fast::decode(&two, &mut at),
        Some(Term::from(FixInteger::from(2)))
    );
    assert_eq!(at, 6);
}

#[test]
fn declines_deep_long_huge_and_non_finite_input() {
    let mut deep = vec![131u8];
    deep.extend(std::iter::repeat_n([104u8, 1], DEPTH + 1).flatten());
    deep.extend([97, 1]);
    assert!(!agrees(&deep));
    let mut long = vec![131u8, 109];
    long.extend((MAX_INPUT as u32).to_be_bytes());
    long.resize(MAX_INPUT + 6, 0);
    assert!(!agrees(&long));
    // Lengths far beyond the bytes: declined before anything is reserved.
    for b in [
        &[131u8, 108, 255, 255, 255, 255, 106][..],
        &[131, 109, 255, 255, 255, 0, 1],
        &[131, 90, 255, 255, 119, 1, b'n', 0, 0, 0, 0],
        &[131, 104, 200, 97, 1],
    ] {
        assert!(!agrees(b), "{b:?}");
    }
    let nan = [131, 70, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0];
    assert!(!agrees(&nan));
    let bad_utf8 = [131, 119, 1, 0xff];
    assert!(!agrees(&bad_utf8));
    let mut deep_ok = vec![131u8];
    deep_ok.extend(std::iter::repeat_n([104u8, 1], DEPTH - 1).flatten());
    deep_ok.extend([97, 1]);
    assert!(agrees(&deep_ok));
}

/// Random bytes and damaged valid terms: the fast decoder declines or agrees with the
/// general path, never panics.
#[test]
fn fuzzed_bytes_decode_as_the_general_path_or_not_at_all() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let tags = [
        70u8, 88, 90, 97, 98, 100, 103, 104, 106, 107, 108, 109, 114, 115, 118, 119,
    ];
    let mut decoded = 0;
    for i in 0..30_000 {
        let mut b = if i % 3 == 0 {
            let n = (rng.next() % 48) as usize;
            let mut b = vec![131u8];
            b.extend((0..n).map(|_| {
                let r = rng.next();
                if r.is_multiple_of(3) {
                    tags[(r >> 8) as usize % tags.len()]
                } else {
                    (r >> 16) as u8 % 8
                }
            }));
            b
        } else {
            term_bytes(&term(&mut rng, 3, false))
        };
        if i % 3 != 0 && i % 5 != 0 {
            for _ in 0..1 + rng.next() % 3 {
                let at = (rng.next() as usize) % b.len();
                match rng.next() % 3 {
                    0 => b[at] = rng.next() as u8,
                    1 => b.truncate(at.max(1)),
                    _ => b.insert(at, rng.next() as u8),
                }
            }
        }
        decoded += agrees(&b) as usize;
    }
    assert!(decoded > 5_000, "{decoded}");
}
