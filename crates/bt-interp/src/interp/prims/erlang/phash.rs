//! `erlang:phash2/1,2`: Erlang's portable hash of a term, value for value as `erl` answers
//! it. The term is the one the value is on the Erlang wire (docs/erlang-interop.md's
//! mapping, through the installed [`TermCodec`](crate::interp::distribution::TermCodec));
//! the hash is the
//! emulator's `make_hash2`: Bob Jenkins' 96-bit mix over 32-bit pieces of the term, one
//! constant per kind of term (small integers, bignum digits, floats' IEEE words, binaries in
//! 12-byte blocks, atoms by their table hash, strings four bytes at a time, tuples by
//! arity, maps as the exclusive or of their pairs' hashes). Pids, ports, references and
//! funs hash by fields that only the node that made them knows (or the code of their
//! module); phash2 of a term holding one raises `badarg` with a message saying so.

use eetf::Term;

/// Why a term cannot be hashed here.
pub(crate) struct Unhashable(pub &'static str);

pub(super) const HCONST: u32 = 0x9e37_79b9;
const HCONST_2: u32 = 0x3c6e_f372;
const HCONST_3: u32 = 0xdaa6_6d2b;
pub(super) const HCONST_4: u32 = 0x78dd_e6e4;
const HCONST_5: u32 = 0x1715_609d;
const HCONST_6: u32 = 0xb54c_da56;
const HCONST_7: u32 = 0x5384_540f;
pub(super) const HCONST_9: u32 = 0x8ff3_4781;
pub(super) const HCONST_10: u32 = 0x2e2a_c13a;
pub(super) const HCONST_11: u32 = 0xcc62_3af3;
pub(super) const HCONST_12: u32 = 0x6a99_b4ac;
pub(super) const HCONST_13: u32 = 0x08d1_2e65;
pub(super) const HCONST_15: u32 = 0x4540_21d7;
const HCONST_16: u32 = 0xe377_9b90;
const HCONST_19: u32 = 0xbe1e_08bb;
/// The hash of `[]` alone.
const NIL_HASH: u32 = 3_468_870_702;
/// What `[]` contributes when it is part of a larger term (with `HCONST_2`).
const NIL_WORD: u32 = 2;

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    macro_rules! step {
        ($x:ident, $y:ident, $z:ident, $s:expr, $left:expr) => {
            *$x = $x.wrapping_sub(*$y).wrapping_sub(*$z);
            *$x ^= if $left { *$z << $s } else { *$z >> $s };
        };
    }
    step!(a, b, c, 13, false);
    step!(b, c, a, 8, true);
    step!(c, a, b, 13, false);
    step!(a, b, c, 12, false);
    step!(b, c, a, 16, true);
    step!(c, a, b, 5, false);
    step!(a, b, c, 3, false);
    step!(b, c, a, 10, true);
    step!(c, a, b, 15, false);
}

pub(super) fn hash2(hash: &mut u32, x: u32, y: u32, k: u32) {
    let (mut a, mut b) = (k.wrapping_add(x), k.wrapping_add(y));
    mix(&mut a, &mut b, hash);
}

fn hash1(hash: &mut u32, x: u32, k: u32) {
    hash2(hash, x, 0, k)
}

fn sint(hash: &mut u32, x: i32, k: u32) {
    if x < 0 {
        hash1(hash, x.wrapping_neg() as u32, k);
    }
    hash1(hash, x as u32, k);
}

/// Bob Jenkins' `hash()` over bytes, 12 at a time, seeded with `init`.
pub(super) fn block_hash(k: &[u8], init: u32) -> u32 {
    let (mut a, mut b, mut c) = (HCONST, HCONST, init);
    let word = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    let mut chunks = k.chunks_exact(12);
    for ch in &mut chunks {
        a = a.wrapping_add(word(&ch[0..4]));
        b = b.wrapping_add(word(&ch[4..8]));
        c = c.wrapping_add(word(&ch[8..12]));
        mix(&mut a, &mut b, &mut c);
    }
    let r = chunks.remainder();
    c = c.wrapping_add(k.len() as u32);
    let mut last = [0u8; 12];
    last[..r.len()].copy_from_slice(r);
    // The first byte of `c` holds the length: the rest of the tail starts at its second.
    a = a.wrapping_add(word(&last[0..4]));
    b = b.wrapping_add(word(&last[4..8]));
    c = c.wrapping_add(u32::from_le_bytes([0, last[8], last[9], last[10]]));
    mix(&mut a, &mut b, &mut c);
    c
}

/// The atom table's hash of an atom (hashpjw over its UTF-8 bytes, two-byte Latin-1
/// characters taken as one).
fn atom_hash(name: &str) -> u32 {
    let p = name.as_bytes();
    let mut h: u64 = 0;
    let mut i = 0;
    while i < p.len() {
        let mut v = p[i] as u64;
        i += 1;
        if i < p.len() && (v & 0xfe) == 0xc2 && (p[i] & 0xc0) == 0x80 {
            v = ((v << 6) | (p[i] & 0x3f) as u64) & 0xff;
            i += 1;
        }
        h = (h << 4) + v;
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
            h ^= g;
        }
    }
    h as u32
}

enum Job<'a> {
    Term(&'a Term),
    /// A list's rest from element `.1` on, then its tail.
    Rest(&'a [Term], &'a Term),
    Pair,
    MapTail {
        saved: u32,
        xor: u32,
    },
    Nil,
}

fn big_digits(hash: &mut u32, n: &num_bigint::BigInt) {
    let k = if n.sign() == num_bigint::Sign::Minus {
        HCONST_10
    } else {
        HCONST_11
    };
    let digits = n.magnitude().to_u64_digits();
    for d in digits {
        hash2(hash, d as u32, (d >> 32) as u32, k);
    }
}

fn int(hash: &mut u32, i: i64) {
    if (-(1 << 27)..(1 << 27)).contains(&i) {
        sint(hash, i as i32, HCONST);
    } else {
        big_digits(hash, &num_bigint::BigInt::from(i));
    }
}

fn byte_of(t: &Term) -> Option<u8> {
    match t {
        Term::FixInteger(i) => u8::try_from(i.value).ok(),
        _ => None,
    }
}

/// `make_hash2` of a term.
pub(crate) fn make_hash2(t: &Term) -> Result<u32, Unhashable> {
    let mut hash: u32 = 0;
    let mut xor: u32 = 0;
    let mut stack: Vec<Job> = vec![Job::Term(t)];
    while let Some(job) = stack.pop() {
        let term = match job {
            Job::Pair => {
                xor ^= hash;
                hash = 0;
                continue;
            }
            Job::MapTail { saved, xor: outer } => {
                hash = saved;
                hash1(&mut hash, xor, HCONST_19);
                xor = outer;
                continue;
            }
            Job::Nil => {
                if hash == 0 {
                    hash = NIL_HASH;
                } else {
                    hash1(&mut hash, NIL_WORD, HCONST_2);
                }
                continue;
            }
            Job::Rest(elements, tail) => {
                list(&mut hash, &mut stack, elements, tail);
                continue;
            }
            Job::Term(t) => t,
        };
        match term {
            Term::Atom(a) => {
                let h = atom_hash(&a.name);
                if hash == 0 {
                    hash = h;
                } else {
                    hash1(&mut hash, h, HCONST_3);
                }
            }
            Term::FixInteger(i) => int(&mut hash, i.value as i64),
            Term::BigInteger(b) => match i64::try_from(&b.value) {
                Ok(i) => int(&mut hash, i),
                Err(_) => big_digits(&mut hash, &b.value),
            },
            Term::Float(f) => {
                let x = if f.value == 0.0 { 0.0 } else { f.value };
                let bits = x.to_bits();
                hash2(&mut hash, (bits >> 32) as u32, bits as u32, HCONST_12);
            }
            Term::Binary(b) => {
                let con = HCONST_13.wrapping_add(hash);
                hash = if b.bytes.is_empty() {
                    con
                } else {
                    block_hash(&b.bytes, con)
                };
            }
            Term::BitBinary(b) => {
                let bits = b.tail_bits_size;
                if bits == 0 || bits == 8 {
                    let con = HCONST_13.wrapping_add(hash);
                    hash = if b.bytes.is_empty() {
                        con
                    } else {
                        block_hash(&b.bytes, con)
                    };
                } else {
                    let whole = &b.bytes[..b.bytes.len() - 1];
                    let last = b.bytes[b.bytes.len() - 1];
                    let con = HCONST_13.wrapping_add(hash);
                    hash = block_hash(whole, con);
                    hash2(
                        &mut hash,
                        bits as u32,
                        (last >> (8 - bits)) as u32,
                        HCONST_15,
                    );
                }
            }
            Term::List(l) if l.elements.is_empty() => stack.push(Job::Nil),
            Term::List(l) => list(&mut hash, &mut stack, &l.elements, &NIL),
            Term::ByteList(b) if b.bytes.is_empty() => stack.push(Job::Nil),
            Term::ByteList(b) => {
                string_bytes(&mut hash, &b.bytes);
                stack.push(Job::Nil);
            }
            Term::ImproperList(l) if l.elements.is_empty() => stack.push(Job::Term(&l.last)),
            Term::ImproperList(l) => list(&mut hash, &mut stack, &l.elements, &l.last),
            Term::Tuple(x) => {
                hash1(&mut hash, x.elements.len() as u32, HCONST_9);
                stack.extend(x.elements.iter().rev().map(Job::Term));
            }
            Term::Map(m) => {
                hash1(&mut hash, m.map.len() as u32, HCONST_16);
                if m.map.is_empty() {
                    continue;
                }
                stack.push(Job::MapTail { saved: hash, xor });
                hash = 0;
                xor = 0;
                for (k, v) in m.map.iter() {
                    stack.push(Job::Pair);
                    stack.push(Job::Term(v));
                    stack.push(Job::Term(k));
                }
            }
            // A pid, port or reference hashes its (first) number alone: its node, serial and
            // creation do not count (found against `erl`, internal and external ones alike).
            Term::Pid(p) => hash1(&mut hash, p.id, HCONST_5),
            Term::Port(p) => hash1(&mut hash, p.id as u32, HCONST_6),
            Term::Reference(r) => hash1(&mut hash, r.id.first().copied().unwrap_or(0), HCONST_7),
            Term::ExternalFun(_) | Term::InternalFun(_) => return Err(Unhashable("a fun")),
        }
    }
    Ok(hash)
}

static NIL: Term = Term::List(eetf::List {
    elements: Vec::new(),
});

/// Bytes of a string, four at a time (`make_hash2`'s string run).
fn string_bytes(hash: &mut u32, bytes: &[u8]) {
    let mut sh: u32 = 0;
    let mut c = 0;
    for &b in bytes {
        sh = (sh << 8).wrapping_add(b as u32);
        if c == 3 {
            hash1(hash, sh, HCONST_4);
            c = 0;
            sh = 0;
        } else {
            c += 1;
        }
    }
    if c > 0 {
        hash1(hash, sh, HCONST_4);
    }
}

/// A non-empty list: its leading run of bytes as a string, then the first other element
/// with the rest after it.
fn list<'a>(hash: &mut u32, stack: &mut Vec<Job<'a>>, elements: &'a [Term], tail: &'a Term) {
    let run = elements.iter().take_while(|e| byte_of(e).is_some()).count();
    if run > 0 {
        let bytes: Vec<u8> = elements[..run].iter().filter_map(byte_of).collect();
        string_bytes(hash, &bytes);
    }
    if run < elements.len() {
        stack.push(Job::Rest(&elements[run + 1..], tail));
        stack.push(Job::Term(&elements[run]));
    } else {
        match tail {
            Term::List(l) if l.elements.is_empty() => stack.push(Job::Nil),
            Term::ByteList(b) if b.bytes.is_empty() => stack.push(Job::Nil),
            _ => stack.push(Job::Term(tail)),
        }
    }
}

/// `phash2(Term)`: the hash's low 27 bits.
pub(crate) fn phash2(t: &Term) -> Result<u32, Unhashable> {
    Ok(make_hash2(t)? & ((1 << 27) - 1))
}

/// `phash2(Term, Range)` for a range in 1..2^32.
pub(crate) fn phash2_range(t: &Term, range: u64) -> Result<u32, Unhashable> {
    let h = make_hash2(t)?;
    Ok(if range >= 1 << 32 {
        h
    } else {
        (h as u64 % range) as u32
    })
}
