//! The order in which `erl` (OTP 25) holds the pairs of a map of more than 32 pairs: the
//! order `term_to_binary` writes them in. Such a map is a hash trie (HAMT) over the keys'
//! *internal* hash (the emulator's `make_internal_hash`, which is not `phash2`): each level
//! takes the next four bits of the hash, lowest first, and a walk of the trie visits the
//! slots from 15 down to 0. Keys whose 32-bit hashes are equal go on at level 8 with a hash
//! salted by the depth.
//!
//! The internal hash mixes the machine word of an immediate term. For small integers that
//! word is the integer shifted and tagged, the same on every 64-bit node; for atoms it holds
//! the index of the atom in the node's atom table, which depends on the order the node met
//! its atoms in (the same atom-keyed map is written in different orders by two `erl` runs
//! that made their atoms in different orders), and pids, ports, references and funs hash
//! node-local fields or addresses. So [`order`] answers only for maps whose keys are built
//! from numbers, binaries, lists and tuples, checked against `erl`'s
//! `erts_debug:get_internal_state({internal_hash, T})` and its `maps:keys/1`.

use eetf::Term;

use super::phash::{
    block_hash, hash2, HCONST, HCONST_10, HCONST_11, HCONST_12, HCONST_13, HCONST_15, HCONST_4,
    HCONST_9,
};

const HCONST_17: u32 = 0x81af_1549;
const HCONST_18: u32 = 0x1fe6_8f02;
const HCONST_22: u32 = 0x98c4_75e6;
/// The hash an internal hash starts from, xor-ed with the salt.
const SEED: u32 = 0xcc9e_2d51;
/// The machine word of `[]`.
const NIL_WORD: u64 = 0x3b;

/// A list element: a byte of a byte string (STRING_EXT) or a term.
#[derive(Clone, Copy)]
enum Elem<'a> {
    Byte(u8),
    Term(&'a Term),
}

impl Elem<'_> {
    fn byte(self) -> Option<u8> {
        match self {
            Elem::Byte(b) => Some(b),
            Elem::Term(Term::FixInteger(i)) => u8::try_from(i.value).ok(),
            Elem::Term(Term::BigInteger(i)) => u8::try_from(&i.value).ok(),
            Elem::Term(_) => None,
        }
    }
}

enum Job<'a> {
    Term(&'a Term),
    /// The elements of a list's rest, then its tail.
    Rest(Vec<Elem<'a>>, &'a Term),
    /// The tail of a cons cell whose tail is not a list.
    Cdr,
}

fn hash_const(hash: &mut u32, k: u32) {
    *hash ^= k;
    *hash = hash.rotate_left(17);
}

fn word(hash: &mut u32, w: u64) {
    hash2(hash, w as u32, (w >> 32) as u32, HCONST);
}

fn int(hash: &mut u32, n: &num_bigint::BigInt) {
    const SMALL: i64 = 1 << 59;
    match i64::try_from(n) {
        Ok(i) if (-SMALL..SMALL).contains(&i) => word(hash, ((i as u64) << 4) | 0xf),
        _ => {
            let k = if n.sign() == num_bigint::Sign::Minus {
                HCONST_10
            } else {
                HCONST_11
            };
            for d in n.magnitude().to_u64_digits() {
                hash2(hash, d as u32, (d >> 32) as u32, k);
            }
        }
    }
}

fn binary(hash: &mut u32, bytes: &[u8], tail_bits: u8) {
    let con = HCONST_13.wrapping_add(*hash);
    if tail_bits == 0 || tail_bits == 8 || bytes.is_empty() {
        *hash = if bytes.is_empty() {
            con
        } else {
            block_hash(bytes, con)
        };
    } else {
        let (last, whole) = bytes.split_last().unwrap_or((&0, &[]));
        *hash = block_hash(whole, con);
        hash2(
            hash,
            tail_bits as u32,
            (last >> (8 - tail_bits)) as u32,
            HCONST_15,
        );
    }
}

/// The elements of the list `t` up to its tail (a term that is not a non-empty list).
fn elements<'a>(mut t: &'a Term, out: &mut Vec<Elem<'a>>) -> &'a Term {
    loop {
        match t {
            Term::List(l) if !l.elements.is_empty() => {
                out.extend(l.elements.iter().map(Elem::Term));
                return &NIL;
            }
            Term::ByteList(b) if !b.bytes.is_empty() => {
                out.extend(b.bytes.iter().map(|&x| Elem::Byte(x)));
                return &NIL;
            }
            Term::ImproperList(l) => {
                out.extend(l.elements.iter().map(Elem::Term));
                t = &l.last;
            }
            _ => return t,
        }
    }
}

/// A non-empty list: its leading bytes four at a time, then the first other element with
/// the rest queued after it.
fn list<'a>(hash: &mut u32, todo: &mut Vec<Job<'a>>, elems: &[Elem<'a>], tail: &'a Term) {
    let run = elems.iter().take_while(|e| e.byte().is_some()).count();
    let (mut sh, mut c) = (0u32, 0u32);
    for b in elems[..run].iter().filter_map(|e| e.byte()) {
        sh = (sh << 8).wrapping_add(b as u32);
        if c == 3 {
            hash2(hash, sh, 0, HCONST_4);
            (sh, c) = (0, 0);
        } else {
            c += 1;
        }
    }
    if c > 0 {
        hash2(hash, sh, c, HCONST_22);
    }
    let Some(&first) = elems.get(run) else {
        todo.push(Job::Term(tail));
        return;
    };
    hash_const(hash, HCONST_17);
    let rest = &elems[run + 1..];
    if rest.is_empty() {
        todo.push(Job::Term(tail));
        todo.push(Job::Cdr);
    } else {
        todo.push(Job::Rest(rest.to_vec(), tail));
    }
    match first {
        Elem::Term(t) => todo.push(Job::Term(t)),
        Elem::Byte(_) => {}
    }
}

/// `make_internal_hash(T, Salt)` as a 64-bit `erl` computes it, or `None` when it depends
/// on the node (an atom, pid, port, reference, fun or map inside).
pub(crate) fn internal_hash(t: &Term, salt: u32) -> Option<u32> {
    let mut hash = SEED ^ salt;
    let mut todo = vec![Job::Term(t)];
    while let Some(job) = todo.pop() {
        let t = match job {
            Job::Cdr => {
                hash_const(&mut hash, HCONST_18);
                continue;
            }
            Job::Rest(elems, tail) => {
                list(&mut hash, &mut todo, &elems, tail);
                continue;
            }
            Job::Term(t) => t,
        };
        match t {
            Term::FixInteger(i) => int(&mut hash, &i.value.into()),
            Term::BigInteger(b) => int(&mut hash, &b.value),
            Term::Float(f) => {
                let x = if f.value == 0.0 { 0.0 } else { f.value };
                let bits = x.to_bits();
                hash2(&mut hash, bits as u32, (bits >> 32) as u32, HCONST_12);
            }
            Term::Binary(b) => binary(&mut hash, &b.bytes, 8),
            Term::BitBinary(b) => binary(&mut hash, &b.bytes, b.tail_bits_size),
            Term::List(l) if l.elements.is_empty() => word(&mut hash, NIL_WORD),
            Term::ByteList(b) if b.bytes.is_empty() => word(&mut hash, NIL_WORD),
            Term::List(_) | Term::ByteList(_) | Term::ImproperList(_) => {
                let mut elems = Vec::new();
                let tail = elements(t, &mut elems);
                if elems.is_empty() {
                    todo.push(Job::Term(tail));
                } else {
                    list(&mut hash, &mut todo, &elems, tail);
                }
            }
            Term::Tuple(x) => {
                hash2(&mut hash, x.elements.len() as u32, 0, HCONST_9);
                todo.extend(x.elements.iter().rev().map(Job::Term));
            }
            Term::Atom(_)
            | Term::Pid(_)
            | Term::Port(_)
            | Term::Reference(_)
            | Term::ExternalFun(_)
            | Term::InternalFun(_)
            | Term::Map(_) => return None,
        }
    }
    Some(hash)
}

static NIL: Term = Term::List(eetf::List {
    elements: Vec::new(),
});

/// The salt of the hash that places keys at levels `8 * depth` and below.
fn salt(depth: u32) -> u32 {
    let mut h = 0;
    if depth > 0 {
        hash2(&mut h, depth, 1, HCONST_22);
    }
    h
}

/// A hash with its four-bit groups reversed: the trie's slot order as a number.
fn slots(h: u32) -> u32 {
    let b = h.swap_bytes();
    ((b & 0x0f0f_0f0f) << 4) | ((b >> 4) & 0x0f0f_0f0f)
}

/// The indices of `keys` in the order `erl` walks a hash-trie map holding them
/// (`term_to_binary`, `maps:keys/1`, `maps:to_list/1`), or `None` when a key's internal hash
/// depends on the node. Keys must be distinct.
pub fn order(keys: &[&Term]) -> Option<Vec<usize>> {
    let mut first: Vec<(u32, usize)> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        first.push((slots(internal_hash(k, salt(0))?), i));
    }
    first.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
    // Keys whose 32-bit hashes are equal: by the hash of the next depth (two levels of
    // collisions would need 64 equal bits).
    let mut out = Vec::with_capacity(keys.len());
    for run in first.chunk_by(|a, b| a.0 == b.0) {
        if run.len() == 1 {
            out.push(run[0].1);
            continue;
        }
        let mut deeper: Vec<(u32, usize)> = run
            .iter()
            .map(|&(_, i)| Some((slots(internal_hash(keys[i], salt(1))?), i)))
            .collect::<Option<_>>()?;
        deeper.sort_by_key(|e| std::cmp::Reverse(e.0));
        out.extend(deeper.into_iter().map(|(_, i)| i));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Term {
        Term::from(eetf::BigInteger::from(i))
    }

    /// `erts_debug:get_internal_state({internal_hash, T})` of a 64-bit OTP 25 `erl`.
    #[test]
    fn internal_hashes_are_erls() {
        let nil = Term::from(eetf::List::nil());
        let cases: Vec<(Term, u32)> = vec![
            (int(1), 2_441_450_838),
            (int(12), 2_461_861_535),
            (int(33), 1_976_546_303),
            (int(-3), 291_454_886),
            (nil.clone(), 2_464_209_347),
            (Term::from(eetf::Tuple::from(vec![])), 904_478_834),
            (Term::from(eetf::Binary::from(vec![])), 3_580_844_982),
            (Term::from(eetf::Binary::from(vec![1])), 1_985_782_986),
            (
                Term::from(eetf::Float::try_from(1.0).unwrap()),
                1_476_340_101,
            ),
            (Term::from(eetf::List::from(vec![int(1)])), 1_762_143_407),
            (Term::from(eetf::Tuple::from(vec![int(1)])), 3_083_022_094),
            (
                Term::from(eetf::Tuple::from(vec![int(1), int(2)])),
                240_741_374,
            ),
            (
                Term::from(eetf::ImproperList::from((vec![int(1)], int(2)))),
                813_403_020,
            ),
            (int(-(1 << 59)), 767_231_620),
            (int((1 << 59) - 1), 2_748_343_757),
            (int(1 << 59), 2_160_620_466),
        ];
        for (t, h) in cases {
            assert_eq!(internal_hash(&t, salt(0)), Some(h), "{t}");
        }
        assert_eq!(internal_hash(&Term::from(eetf::Atom::from("a")), 0), None);
    }

    /// `maps:keys/1` of `maps:from_list([{I, I} || I <- lists:seq(1, 40)])`, and keys whose
    /// 32-bit hashes are equal placed by the salted hash, as `erl` places them.
    #[test]
    fn trie_order_is_erls() {
        let keys: Vec<Term> = (1..=40).map(int).collect();
        let refs: Vec<&Term> = keys.iter().collect();
        let got: Vec<usize> = order(&refs).unwrap().into_iter().map(|i| i + 1).collect();
        assert_eq!(&got[..12], &[33, 12, 23, 29, 30, 39, 26, 31, 11, 37, 9, 32]);
        for (a, b) in [(40_660, 59_671), (119_693, 22_575), (167_527, 121_236)] {
            let pair = [int(b), int(a)];
            let refs: Vec<&Term> = pair.iter().collect();
            assert_eq!(order(&refs), Some(vec![1, 0]), "{a} before {b}");
        }
    }
}
