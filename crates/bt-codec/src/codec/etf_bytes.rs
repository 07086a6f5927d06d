//! `term_to_binary` and `binary_to_term` as `erl` (OTP 25) answers them, for the `Erlang`
//! class ([`TERM_CODEC`], installed as the interpreter's
//! [`TermCodec`](crate::interp::distribution::TermCodec)).
//!
//! [`encode`] writes a term byte for byte as `term_to_binary(T, [{minor_version, M}])` does:
//! integers as SMALL_INTEGER (0..255), INTEGER (32 bits) or SMALL/LARGE_BIG; floats as
//! NEW_FLOAT (FLOAT_EXT's 31 characters for minor version 0); atoms in Latin-1 as ATOM_EXT
//! when every character is Latin-1 and the minor version is below 2, else in UTF-8
//! (SMALL_ATOM_UTF8 up to 255 bytes); a proper list of at most 65,535 integers in 0..255 as
//! STRING_EXT; map pairs in Erlang's key order (integers before floats, then term order) up
//! to 32 pairs, past that in the order of `erl`'s hash trie ([`hamt::order`]). A big map
//! with a key that holds an atom, pid, port, reference, fun or map has no such order that
//! is the same on every node (`erl` hashes an atom by its index in the node's atom table):
//! bt writes it in key order (the same term when decoded).
//!
//! [`decode`] reads one term after the version byte through [`super::etf_check`] (bounded:
//! lengths, decoded size, nesting) and `eetf`; what is left after it is not looked at (as
//! `binary_to_term/1`). Compressed terms (tag 80) are inflated first when their stated size
//! is within the checker's bound.

use std::cmp::Ordering;

use eetf::Term;

use super::etf_check;
use crate::interp::distribution::TermCodec;
use crate::interp::eval::{Ctx, Unwind};
use crate::interp::prims::erlang::hamt;
use crate::value::Value;

/// The codec the `Erlang` class uses.
pub struct Codec;

/// The one instance, installed by the command line and the embedding engine.
pub static TERM_CODEC: Codec = Codec;

impl TermCodec for Codec {
    fn to_term(&self, ctx: &Ctx, v: &Value) -> Result<Term, Unwind> {
        super::etf::to_term(ctx, v, "argument").map_err(|e| e.to_unwind(ctx))
    }
    fn value_of(&self, ctx: &mut Ctx, t: &Term) -> Result<Value, Unwind> {
        super::etf::from_term(ctx, t, "result").map_err(|e| e.to_unwind(ctx))
    }
    fn encode(&self, t: &Term, minor: u8) -> Vec<u8> {
        encode(t, minor)
    }
    fn compress(&self, bytes: Vec<u8>, level: u8) -> Vec<u8> {
        compress(bytes, level)
    }
    fn decode(
        &self,
        bytes: &[u8],
        charge: &mut dyn FnMut(usize) -> Result<(), Unwind>,
    ) -> Result<Option<(Term, usize)>, Unwind> {
        decode(bytes, charge)
    }
}

/// `term_to_binary(T, [{compressed, level}])` of `bytes` (a term after its version byte):
/// `131, 80`, the term's length and a zlib stream of it, when that is not longer than
/// `bytes` (as `erl` decides); level 0 leaves the bytes alone. The stream is zlib's own
/// (`deflateInit` at `level`, as erts calls it), so the bytes are those `erl` makes.
pub fn compress(bytes: Vec<u8>, level: u8) -> Vec<u8> {
    use std::io::Write;
    let Some(term) = bytes.get(1..).filter(|_| level > 0) else {
        return bytes;
    };
    let mut out = vec![131, 80];
    out.extend((term.len() as u32).to_be_bytes());
    let mut enc =
        flate2::write::ZlibEncoder::new(out, flate2::Compression::new(u32::from(level.min(9))));
    if enc.write_all(term).is_err() {
        return bytes;
    }
    let Ok(out) = enc.finish() else {
        return bytes;
    };
    if out.len() <= bytes.len() {
        out
    } else {
        bytes
    }
}

/// `term_to_binary(T, [{minor_version, minor}])`.
pub fn encode(t: &Term, minor: u8) -> Vec<u8> {
    let mut out = vec![131u8];
    let mut todo: Vec<&Term> = vec![t];
    while let Some(t) = todo.pop() {
        write(t, minor, &mut out, &mut todo);
    }
    out
}

/// Writes `t`'s header (or all of it) and pushes its subterms, last first.
fn write<'a>(t: &'a Term, minor: u8, out: &mut Vec<u8>, todo: &mut Vec<&'a Term>) {
    match t {
        Term::Atom(a) => atom(&a.name, minor, out),
        Term::FixInteger(i) => int(i.value as i64, out),
        Term::BigInteger(b) => match i64::try_from(&b.value) {
            Ok(i) => int(i, out),
            Err(_) => big(&b.value, out),
        },
        Term::Float(f) => float(f.value, minor, out),
        Term::Binary(b) => {
            out.push(109);
            out.extend((b.bytes.len() as u32).to_be_bytes());
            out.extend(&b.bytes);
        }
        Term::BitBinary(b) => {
            if b.tail_bits_size == 0 || b.tail_bits_size == 8 {
                out.push(109);
                out.extend((b.bytes.len() as u32).to_be_bytes());
                out.extend(&b.bytes);
            } else {
                out.push(77);
                out.extend((b.bytes.len() as u32).to_be_bytes());
                out.push(b.tail_bits_size);
                out.extend(&b.bytes);
            }
        }
        Term::ByteList(b) if b.bytes.is_empty() => out.push(106),
        Term::ByteList(b) if b.bytes.len() <= 0xffff => {
            out.push(107);
            out.extend((b.bytes.len() as u16).to_be_bytes());
            out.extend(&b.bytes);
        }
        Term::ByteList(b) => {
            out.push(108);
            out.extend((b.bytes.len() as u32).to_be_bytes());
            for &x in &b.bytes {
                int(x as i64, out);
            }
            out.push(106);
        }
        Term::List(l) if l.elements.is_empty() => out.push(106),
        Term::List(l) => list(&l.elements, &NIL, true, out, todo),
        Term::ImproperList(l) if l.elements.is_empty() => todo.push(&l.last),
        Term::ImproperList(l) => {
            // A proper list built as improper (`etf::list`): its tail is `[]`.
            let tail_nil = match &*l.last {
                Term::List(x) => x.elements.is_empty(),
                Term::ByteList(x) => x.bytes.is_empty(),
                _ => false,
            };
            list(&l.elements, &l.last, tail_nil, out, todo);
        }
        Term::Tuple(x) => {
            if x.elements.len() <= 255 {
                out.push(104);
                out.push(x.elements.len() as u8);
            } else {
                out.push(105);
                out.extend((x.elements.len() as u32).to_be_bytes());
            }
            todo.extend(x.elements.iter().rev());
        }
        Term::Map(m) => {
            out.push(116);
            out.extend((m.map.len() as u32).to_be_bytes());
            let mut pairs: Vec<(&Term, &Term)> = m.map.iter().collect();
            pairs.sort_by(|a, b| cmp_exact(a.0, b.0));
            if pairs.len() > 32 {
                let keys: Vec<&Term> = pairs.iter().map(|p| p.0).collect();
                if let Some(order) = hamt::order(&keys) {
                    pairs = order.into_iter().map(|i| pairs[i]).collect();
                }
            }
            for (k, v) in pairs.into_iter().rev() {
                todo.push(v);
                todo.push(k);
            }
        }
        Term::Pid(p) => {
            out.push(88);
            atom(&p.node.name, minor, out);
            out.extend(p.id.to_be_bytes());
            out.extend(p.serial.to_be_bytes());
            out.extend(p.creation.to_be_bytes());
        }
        Term::Port(p) => {
            if p.id <= u32::MAX as u64 {
                out.push(89);
                atom(&p.node.name, minor, out);
                out.extend((p.id as u32).to_be_bytes());
            } else {
                out.push(120);
                atom(&p.node.name, minor, out);
                out.extend(p.id.to_be_bytes());
            }
            out.extend(p.creation.to_be_bytes());
        }
        Term::Reference(r) => {
            out.push(90);
            out.extend((r.id.len() as u16).to_be_bytes());
            atom(&r.node.name, minor, out);
            out.extend(r.creation.to_be_bytes());
            for n in &r.id {
                out.extend(n.to_be_bytes());
            }
        }
        Term::ExternalFun(f) => {
            out.push(113);
            atom(&f.module.name, minor, out);
            atom(&f.function.name, minor, out);
            int(f.arity as i64, out);
        }
        // A local fun of a peer: as `eetf` writes it (`erl` would need its code to say more).
        Term::InternalFun(_) => {
            let mut b = Vec::new();
            let _ = t.encode(&mut b);
            out.extend(&b[1..]);
        }
    }
}

static NIL: Term = Term::List(eetf::List {
    elements: Vec::new(),
});

/// A non-empty list with `tail`: a byte string (STRING_EXT) when the tail is `[]` and every
/// element is an Integer 0–255 (at most 65,535 of them), else a list header with the
/// elements and the tail queued in order.
fn list<'a>(
    elements: &'a [Term],
    tail: &'a Term,
    tail_nil: bool,
    out: &mut Vec<u8>,
    todo: &mut Vec<&'a Term>,
) {
    let bytes = tail_nil
        && elements.len() <= 0xffff
        && elements
            .iter()
            .all(|e| matches!(e, Term::FixInteger(i) if (0..256).contains(&i.value)));
    if bytes {
        out.push(107);
        out.extend((elements.len() as u16).to_be_bytes());
        out.extend(elements.iter().map(|e| match e {
            Term::FixInteger(i) => i.value as u8,
            _ => 0,
        }));
    } else {
        out.push(108);
        out.extend((elements.len() as u32).to_be_bytes());
        todo.push(tail);
        todo.extend(elements.iter().rev());
    }
}

fn atom(name: &str, minor: u8, out: &mut Vec<u8>) {
    if minor < 2 && name.chars().all(|c| (c as u32) < 256) {
        let n = name.chars().count();
        out.push(100);
        out.extend((n as u16).to_be_bytes());
        out.extend(name.chars().map(|c| c as u8));
    } else if name.len() <= 255 {
        out.push(119);
        out.push(name.len() as u8);
        out.extend(name.as_bytes());
    } else {
        out.push(118);
        out.extend((name.len() as u16).to_be_bytes());
        out.extend(name.as_bytes());
    }
}

fn int(i: i64, out: &mut Vec<u8>) {
    if (0..256).contains(&i) {
        out.push(97);
        out.push(i as u8);
    } else if let Ok(x) = i32::try_from(i) {
        out.push(98);
        out.extend(x.to_be_bytes());
    } else {
        big(&num_bigint::BigInt::from(i), out);
    }
}

fn big(b: &num_bigint::BigInt, out: &mut Vec<u8>) {
    let (sign, digits) = b.to_bytes_le();
    if digits.len() <= 255 {
        out.push(110);
        out.push(digits.len() as u8);
    } else {
        out.push(111);
        out.extend((digits.len() as u32).to_be_bytes());
    }
    out.push(u8::from(sign == num_bigint::Sign::Minus));
    out.extend(digits);
}

fn float(x: f64, minor: u8, out: &mut Vec<u8>) {
    if minor >= 1 {
        out.push(70);
        out.extend(x.to_bits().to_be_bytes());
        return;
    }
    // FLOAT_EXT: C's "%.20e", NUL-padded to 31 bytes.
    let s = format!("{x:.20e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let text = format!(
        "{mantissa}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    );
    out.push(99);
    let mut bytes = text.into_bytes();
    bytes.resize(31, 0);
    out.extend(bytes);
}

/// The rank of a term's type in Erlang's term order.
fn rank(t: &Term) -> u8 {
    match t {
        Term::FixInteger(_) | Term::BigInteger(_) | Term::Float(_) => 0,
        Term::Atom(_) => 1,
        Term::Reference(_) => 2,
        Term::ExternalFun(_) | Term::InternalFun(_) => 3,
        Term::Port(_) => 4,
        Term::Pid(_) => 5,
        Term::Tuple(_) => 6,
        Term::Map(_) => 7,
        Term::List(l) if l.elements.is_empty() => 8,
        Term::ByteList(l) if l.bytes.is_empty() => 8,
        Term::List(_) | Term::ByteList(_) | Term::ImproperList(_) => 9,
        Term::Binary(_) | Term::BitBinary(_) => 10,
    }
}

/// The elements and tail of a non-empty list term.
fn list_parts(t: &Term) -> (Vec<Term>, Term) {
    match t {
        Term::List(l) => (l.elements.clone(), NIL.clone()),
        Term::ByteList(b) => (
            b.bytes
                .iter()
                .map(|&x| Term::from(eetf::FixInteger::from(x as i32)))
                .collect(),
            NIL.clone(),
        ),
        Term::ImproperList(l) => (l.elements.clone(), (*l.last).clone()),
        other => (Vec::new(), other.clone()),
    }
}

/// Erlang's exact term order (`=:=`-based: all integers before all floats), the order of
/// map keys.
pub fn cmp_exact(a: &Term, b: &Term) -> Ordering {
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Term::Float(x), Term::Float(y)) => x.value.total_cmp(&y.value),
        (Term::Float(_), _) => Ordering::Greater,
        (_, Term::Float(_)) => Ordering::Less,
        (Term::FixInteger(_) | Term::BigInteger(_), _) => big_of(a).cmp(&big_of(b)),
        (Term::Atom(x), Term::Atom(y)) => x.name.cmp(&y.name),
        (Term::Tuple(x), Term::Tuple(y)) => x
            .elements
            .len()
            .cmp(&y.elements.len())
            .then_with(|| seq_cmp(&x.elements, &y.elements)),
        (Term::Map(x), Term::Map(y)) => {
            let sorted = |m: &eetf::Map| {
                let mut p: Vec<(Term, Term)> =
                    m.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                p.sort_by(|a, b| cmp_exact(&a.0, &b.0));
                p
            };
            let (px, py) = (sorted(x), sorted(y));
            px.len()
                .cmp(&py.len())
                .then_with(|| {
                    let kx: Vec<Term> = px.iter().map(|p| p.0.clone()).collect();
                    let ky: Vec<Term> = py.iter().map(|p| p.0.clone()).collect();
                    seq_cmp(&kx, &ky)
                })
                .then_with(|| {
                    let vx: Vec<Term> = px.iter().map(|p| p.1.clone()).collect();
                    let vy: Vec<Term> = py.iter().map(|p| p.1.clone()).collect();
                    seq_cmp(&vx, &vy)
                })
        }
        (Term::Binary(x), Term::Binary(y)) => x.bytes.cmp(&y.bytes),
        _ if ra == 9 => {
            let (ex, tx) = list_parts(a);
            let (ey, ty) = list_parts(b);
            for (p, q) in ex.iter().zip(ey.iter()) {
                match cmp_exact(p, q) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            match ex.len().cmp(&ey.len()) {
                Ordering::Equal => cmp_exact(&tx, &ty),
                // The shorter one goes on with its tail against the other's next element.
                Ordering::Less => cmp_exact(&tx, &rest(&ey[ex.len()..], &ty)),
                Ordering::Greater => cmp_exact(&rest(&ex[ey.len()..], &tx), &ty),
            }
        }
        _ => a.to_string().cmp(&b.to_string()),
    }
}

fn rest(elements: &[Term], tail: &Term) -> Term {
    Term::from(eetf::ImproperList::from((elements.to_vec(), tail.clone())))
}

fn seq_cmp(x: &[Term], y: &[Term]) -> Ordering {
    for (p, q) in x.iter().zip(y.iter()) {
        match cmp_exact(p, q) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    x.len().cmp(&y.len())
}

fn big_of(t: &Term) -> num_bigint::BigInt {
    match t {
        Term::FixInteger(i) => num_bigint::BigInt::from(i.value),
        Term::BigInteger(b) => b.value.clone(),
        _ => num_bigint::BigInt::from(0),
    }
}

/// `binary_to_term`: the term after the version byte and the bytes it took, `Ok(None)` for
/// bytes that are not one. `charge` is told what decoding will allocate (the inflated size
/// of a compressed term, then the decoded term's estimated size) before it is allocated.
pub fn decode(
    bytes: &[u8],
    charge: &mut dyn FnMut(usize) -> Result<(), Unwind>,
) -> Result<Option<(Term, usize)>, Unwind> {
    if let [131, 80, a, b, c, d, rest @ ..] = bytes {
        let size = u32::from_be_bytes([*a, *b, *c, *d]) as usize;
        if size > etf_check::MAX_DECODED {
            return Ok(None);
        }
        charge(size)?;
        let Some(inflated) = inflate(rest, size) else {
            return Ok(None);
        };
        let mut framed = Vec::with_capacity(size + 1);
        framed.push(131);
        framed.extend(inflated);
        // All of the inflated bytes form the one term; the compressed stream's length is
        // not stated, so the whole binary counts as used.
        return Ok(match checked(&framed, charge)? {
            Some((t, used)) if used == framed.len() => Some((t, bytes.len())),
            _ => None,
        });
    }
    checked(bytes, charge)
}

fn checked(
    bytes: &[u8],
    charge: &mut dyn FnMut(usize) -> Result<(), Unwind>,
) -> Result<Option<(Term, usize)>, Unwind> {
    let Ok(scan) = etf_check::scan(bytes) else {
        return Ok(None);
    };
    if !scan.cuts.is_empty() {
        return Ok(None);
    }
    charge(scan.cost)?;
    Ok(eetf::Term::decode(&bytes[..scan.len])
        .ok()
        .map(|t| (t, scan.len)))
}

/// Inflates a zlib stream to exactly `size` bytes.
fn inflate(bytes: &[u8], size: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut d = libflate::zlib::Decoder::new(bytes).ok()?;
    let mut out = Vec::with_capacity(size.min(1 << 20));
    let n = (&mut d).take(size as u64 + 1).read_to_end(&mut out).ok()?;
    (n == size).then_some(out)
}
