//! A slice decoder and encoder for the small Erlang terms of a distribution frame's hot
//! path (control tuples, `gen_server` calls and replies): the same `eetf::Term`s as the
//! general codec, without its reader plumbing, per-byte writes and regrowing buffers.
//!
//! Both answer `None`/`false` for anything outside their subset — compressed terms, atom
//! caches, big integers, maps, funs, ports, terms nested deeper than [`DEPTH`] or inputs
//! longer than [`MAX_INPUT`] — and the caller then takes the general path (`eetf` behind
//! [`super::etf_check`]). On what they accept they agree with that path exactly: [`decode`]
//! yields the term `eetf` decodes from the same bytes (and refuses every byte string the
//! general path refuses), [`encode`] writes the bytes `eetf` writes — except for a list of
//! integers below 256 with a negative one, which `eetf` writes as a byte string (-1 arrives
//! as 255) and [`encode`] as a list. They never panic, and
//! the decoder allocates no more than the input's length justifies (a length field is
//! believed only when the bytes left can hold that many elements).

use eetf::{Atom, Binary, ByteList, FixInteger, Float, ImproperList, List, Pid, Reference};
use eetf::{Term, Tuple};

/// Deepest nesting either side handles (the general path takes deeper terms).
pub const DEPTH: usize = 48;
/// Longest input the decoder takes (bounds what a frame decoded here can cost: the general
/// path's size estimate is not needed below it).
pub const MAX_INPUT: usize = 64 << 10;

const VERSION: u8 = 131;
const NEW_FLOAT: u8 = 70;
const NEW_PID: u8 = 88;
const NEWER_REF: u8 = 90;
const SMALL_INT: u8 = 97;
const INT: u8 = 98;
const ATOM_LATIN1: u8 = 100;
const PID: u8 = 103;
const SMALL_TUPLE: u8 = 104;
const NIL: u8 = 106;
const STRING: u8 = 107;
const LIST: u8 = 108;
const BINARY: u8 = 109;
const NEW_REF: u8 = 114;
const SMALL_ATOM_LATIN1: u8 = 115;
const ATOM_UTF8: u8 = 118;
const SMALL_ATOM_UTF8: u8 = 119;

struct Cur<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }
    fn u16(&mut self) -> Option<usize> {
        let s = self.take(2)?;
        Some(u16::from_be_bytes([s[0], s[1]]) as usize)
    }
    fn u32(&mut self) -> Option<u32> {
        let s = self.take(4)?;
        Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn left(&self) -> usize {
        self.b.len() - self.at
    }
    /// An atom's name of `n` bytes (UTF-8, as `eetf` reads Latin-1 atoms too).
    fn name(&mut self, n: usize) -> Option<Atom> {
        let s = std::str::from_utf8(self.take(n)?).ok()?;
        Some(Atom::from(s))
    }
    fn atom(&mut self) -> Option<Atom> {
        match self.u8()? {
            ATOM_LATIN1 | ATOM_UTF8 => {
                let n = self.u16()?;
                self.name(n)
            }
            SMALL_ATOM_LATIN1 | SMALL_ATOM_UTF8 => {
                let n = self.u8()? as usize;
                self.name(n)
            }
            _ => None,
        }
    }
    /// `count` elements: believed only if the bytes left can hold them (one byte each).
    fn elements(&mut self, count: usize, depth: usize) -> Option<Vec<Term>> {
        if count > self.left() {
            return None;
        }
        let mut v = Vec::with_capacity(count);
        for _ in 0..count {
            v.push(self.term(depth)?);
        }
        Some(v)
    }
    fn term(&mut self, depth: usize) -> Option<Term> {
        if depth == 0 {
            return None;
        }
        let depth = depth - 1;
        Some(match self.u8()? {
            SMALL_INT => Term::from(FixInteger::from(self.u8()? as i32)),
            INT => Term::from(FixInteger::from(self.u32()? as i32)),
            ATOM_LATIN1 | ATOM_UTF8 => {
                let n = self.u16()?;
                Term::from(self.name(n)?)
            }
            SMALL_ATOM_LATIN1 | SMALL_ATOM_UTF8 => {
                let n = self.u8()? as usize;
                Term::from(self.name(n)?)
            }
            NEW_PID => {
                let node = self.atom()?;
                let (id, serial, creation) = (self.u32()?, self.u32()?, self.u32()?);
                Term::from(Pid {
                    node,
                    id,
                    serial,
                    creation,
                })
            }
            PID => {
                let node = self.atom()?;
                let (id, serial, creation) = (self.u32()?, self.u32()?, self.u8()? as u32);
                Term::from(Pid {
                    node,
                    id,
                    serial,
                    creation,
                })
            }
            tag @ (NEWER_REF | NEW_REF) => {
                let n = self.u16()?;
                let node = self.atom()?;
                let creation = if tag == NEWER_REF {
                    self.u32()?
                } else {
                    self.u8()? as u32
                };
                let words = self.take(n.checked_mul(4)?)?;
                let id = words
                    .chunks_exact(4)
                    .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
                    .collect();
                Term::from(Reference { node, id, creation })
            }
            SMALL_TUPLE => {
                let n = self.u8()? as usize;
                Term::from(Tuple::from(self.elements(n, depth)?))
            }
            NIL => Term::from(List::nil()),
            STRING => {
                let n = self.u16()?;
                Term::from(ByteList::from(self.take(n)?.to_vec()))
            }
            LIST => {
                let n = self.u32()? as usize;
                let elements = self.elements(n, depth)?;
                match self.term(depth)? {
                    Term::List(l) if l.is_nil() => Term::from(List::from(elements)),
                    last => Term::from(ImproperList::from((elements, last))),
                }
            }
            BINARY => {
                let n = self.u32()? as usize;
                Term::from(Binary::from(self.take(n)?.to_vec()))
            }
            NEW_FLOAT => {
                let s = self.take(8)?;
                let v = f64::from_bits(u64::from_be_bytes(s.try_into().ok()?));
                // `eetf` refuses infinities and NaNs (leave them to it).
                Term::from(Float::try_from(v).ok()?)
            }
            _ => return None,
        })
    }
}

/// Decodes the term (version byte first) at `bytes[*at..]`, advancing `at` past it; `None`
/// (with `at` unchanged) when the bytes are malformed or outside this decoder's subset.
pub fn decode(bytes: &[u8], at: &mut usize) -> Option<Term> {
    if bytes.len() > MAX_INPUT {
        return None;
    }
    let mut c = Cur { b: bytes, at: *at };
    if c.u8()? != VERSION {
        return None;
    }
    let t = c.term(DEPTH)?;
    *at = c.at;
    Some(t)
}

/// Appends `t` (version byte first) as `eetf` encodes it; false (with `out` as it was)
/// when `t` is outside this encoder's subset.
pub fn encode(t: &Term, out: &mut Vec<u8>) -> bool {
    let mark = out.len();
    out.push(VERSION);
    if term_into(t, out, DEPTH) {
        true
    } else {
        out.truncate(mark);
        false
    }
}

/// An atom as `eetf` writes it.
pub fn atom_into(a: &str, out: &mut Vec<u8>) -> bool {
    if let Ok(n) = u8::try_from(a.len()) {
        out.extend_from_slice(&[SMALL_ATOM_UTF8, n]);
    } else if let Ok(n) = u16::try_from(a.len()) {
        out.push(ATOM_UTF8);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        return false;
    }
    out.extend_from_slice(a.as_bytes());
    true
}

/// A pid as `eetf` writes it.
pub fn pid_into(p: &Pid, out: &mut Vec<u8>) -> bool {
    out.push(NEW_PID);
    if !atom_into(&p.node.name, out) {
        return false;
    }
    for w in [p.id, p.serial, p.creation] {
        out.extend_from_slice(&w.to_be_bytes());
    }
    true
}

/// A reference as `eetf` writes it.
pub fn reference_into(r: &Reference, out: &mut Vec<u8>) -> bool {
    let Ok(n) = u16::try_from(r.id.len()) else {
        return false;
    };
    out.push(NEWER_REF);
    out.extend_from_slice(&n.to_be_bytes());
    if !atom_into(&r.node.name, out) {
        return false;
    }
    out.extend_from_slice(&r.creation.to_be_bytes());
    for w in &r.id {
        out.extend_from_slice(&w.to_be_bytes());
    }
    true
}

/// A small integer as `eetf` writes it.
pub fn int_into(v: i32, out: &mut Vec<u8>) {
    if (0..=255).contains(&v) {
        out.extend_from_slice(&[SMALL_INT, v as u8]);
    } else {
        out.push(INT);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// The header of a tuple of `n` elements (under 256).
pub fn tuple_header(n: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[SMALL_TUPLE, n]);
}

fn term_into(t: &Term, out: &mut Vec<u8>, depth: usize) -> bool {
    if depth == 0 {
        return false;
    }
    let depth = depth - 1;
    match t {
        Term::Atom(a) => atom_into(&a.name, out),
        Term::FixInteger(i) => {
            int_into(i.value, out);
            true
        }
        Term::Pid(p) => pid_into(p, out),
        Term::Reference(r) => reference_into(r, out),
        Term::Tuple(t) => {
            let Ok(n) = u8::try_from(t.elements.len()) else {
                return false;
            };
            tuple_header(n, out);
            t.elements.iter().all(|e| term_into(e, out, depth))
        }
        Term::List(l) => {
            let byte = |e: &Term| match e {
                // Unlike `eetf`, which takes any integer below 256 (negative ones too).
                Term::FixInteger(i) if (0..=255).contains(&i.value) => Some(i.value as u8),
                _ => None,
            };
            let n = l.elements.len();
            if n > 0 && n <= u16::MAX as usize && l.elements.iter().all(|e| byte(e).is_some()) {
                out.push(STRING);
                out.extend_from_slice(&(n as u16).to_be_bytes());
                out.extend(l.elements.iter().filter_map(byte));
                return true;
            }
            if n > 0 {
                let Ok(n) = u32::try_from(n) else {
                    return false;
                };
                out.push(LIST);
                out.extend_from_slice(&n.to_be_bytes());
                if !l.elements.iter().all(|e| term_into(e, out, depth)) {
                    return false;
                }
            }
            out.push(NIL);
            true
        }
        Term::ImproperList(l) => {
            let Ok(n) = u32::try_from(l.elements.len()) else {
                return false;
            };
            out.push(LIST);
            out.extend_from_slice(&n.to_be_bytes());
            l.elements.iter().all(|e| term_into(e, out, depth)) && term_into(&l.last, out, depth)
        }
        Term::Binary(b) => {
            let Ok(n) = u32::try_from(b.bytes.len()) else {
                return false;
            };
            out.push(BINARY);
            out.extend_from_slice(&n.to_be_bytes());
            out.extend_from_slice(&b.bytes);
            true
        }
        Term::ByteList(b) => {
            let Ok(n) = u16::try_from(b.bytes.len()) else {
                return false;
            };
            out.push(STRING);
            out.extend_from_slice(&n.to_be_bytes());
            out.extend_from_slice(&b.bytes);
            true
        }
        Term::Float(f) => {
            out.push(NEW_FLOAT);
            out.extend_from_slice(&f.value.to_bits().to_be_bytes());
            true
        }
        _ => false,
    }
}
