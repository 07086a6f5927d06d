//! A bounded pre-check of Erlang external term format bytes.
//!
//! The term decoder of `eetf` trusts its input: it reserves `Vec`s of the length a header
//! claims, recurses once per nesting level, panics on a distribution header or an atom-cache
//! reference, and inflates compressed terms without limit. [`scan`] walks the bytes first,
//! iteratively, and accepts only input on which that decoder is safe: every length fits in
//! the bytes that remain, the decoded size (estimated from the number of terms and bytes)
//! stays under [`MAX_DECODED`], compressed terms, atom-cache references and distribution
//! headers are refused, and bit binaries have 1–8 tail bits. Nesting is not an error: the
//! subterms deeper than [`MAX_DEPTH`] are reported, and [`scan_frame`] replaces each with the
//! atom [`CUT_ATOM`], so a frame holding a too-deep message still decodes (its control part
//! intact) and the message alone can be refused. [`check`] refuses such terms outright.
//! Time is linear in the input.

use std::ops::Range;

/// Deepest nesting decoded: a value as deep as a bt node sends ([`super::walk::MAX_DEPTH`]
/// levels) inside the deepest message envelope (a call's tuple, request tuple, argument
/// list …), with room to spare. The decoder recurses once per level.
pub const MAX_DEPTH: usize = super::walk::MAX_DEPTH + 16;
/// Largest decoded size accepted, in bytes (terms × the size of a decoded term + payload bytes).
pub(crate) const MAX_DECODED: usize = 512 << 20;
/// What [`scan_frame`] puts in place of a subterm nested deeper than [`MAX_DEPTH`].
pub const CUT_ATOM: &str = "$bt_nested_too_deeply";

const TERM_COST: usize = std::mem::size_of::<eetf::Term>();

/// Why bytes were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError(pub String);

struct Cur<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cur<'_> {
    fn left(&self) -> usize {
        self.b.len() - self.at
    }
    fn take(&mut self, n: usize) -> Result<&[u8], CheckError> {
        if n > self.left() {
            return Err(CheckError(format!("truncated term at byte {}", self.at)));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, CheckError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<usize, CheckError> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]) as usize)
    }
    fn u32(&mut self) -> Result<usize, CheckError> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize)
    }
    /// An atom in a node position (pids, ports, references).
    fn atom(&mut self) -> Result<(), CheckError> {
        match self.u8()? {
            100 | 118 => {
                let n = self.u16()?;
                self.take(n)?;
            }
            115 | 119 => {
                let n = self.u8()? as usize;
                self.take(n)?;
            }
            t => return Err(CheckError(format!("expected an atom, found tag {t}"))),
        }
        Ok(())
    }
}

/// Checks one complete term (starting with the version byte 131) at the front of `bytes`;
/// answers how many bytes it took. A term nested deeper than [`MAX_DEPTH`] is an error.
pub fn check(bytes: &[u8]) -> Result<usize, CheckError> {
    let s = scan(bytes)?;
    if !s.cuts.is_empty() {
        return Err(CheckError("term nested too deeply".into()));
    }
    Ok(s.len)
}

/// What [`scan`] found in a term.
pub struct Scan {
    /// The bytes the term took.
    pub len: usize,
    /// The containers at depth `MAX_DEPTH` that hold anything (their elements would be too
    /// deep to decode), as byte ranges, in order.
    pub cuts: Vec<Range<usize>>,
    /// The estimated size of the decoded term, in bytes.
    pub cost: usize,
}

/// Checks one complete term (starting with the version byte 131) at the front of `bytes`,
/// at any depth; answers its length and where it nests deeper than [`MAX_DEPTH`].
pub fn scan(bytes: &[u8]) -> Result<Scan, CheckError> {
    let mut c = Cur { b: bytes, at: 0 };
    if c.u8()? != 131 {
        return Err(CheckError(
            "not an external term (version byte 131 expected)".into(),
        ));
    }
    // Terms still to read, per open container.
    let mut stack: Vec<usize> = vec![1];
    let mut cost: usize = 0;
    let mut cuts = Vec::new();
    // The too-deep container being skipped: its first byte and the stack height at it. What
    // it holds is checked but never decoded, so it costs only its place on `stack`.
    let mut cutting: Option<(usize, usize)> = None;
    while let Some(top) = stack.last_mut() {
        if *top == 0 {
            stack.pop();
            if let Some((start, height)) = cutting {
                if stack.len() == height {
                    cuts.push(start..c.at);
                    cutting = None;
                }
            }
            continue;
        }
        *top -= 1;
        let depth = stack.len();
        let start = c.at;
        if cutting.is_none() {
            cost = cost.saturating_add(TERM_COST);
        }
        if cost > MAX_DECODED {
            return Err(CheckError("term too large once decoded".into()));
        }
        let children = match c.u8()? {
            70 => fixed(&mut c, 8)?,
            77 => {
                let n = c.u32()?;
                let bits = c.u8()?;
                if n == 0 || !(1..=8).contains(&bits) {
                    return Err(CheckError("malformed bit binary".into()));
                }
                cost = cost.saturating_add(n);
                fixed(&mut c, n)?
            }
            97 => fixed(&mut c, 1)?,
            98 => fixed(&mut c, 4)?,
            99 => fixed(&mut c, 31)?,
            100 | 118 => {
                let n = c.u16()?;
                fixed(&mut c, n)?
            }
            115 | 119 => {
                let n = c.u8()? as usize;
                fixed(&mut c, n)?
            }
            101 => {
                c.atom()?;
                fixed(&mut c, 5)?
            }
            102 => {
                c.atom()?;
                fixed(&mut c, 5)?
            }
            89 => {
                c.atom()?;
                fixed(&mut c, 8)?
            }
            120 => {
                c.atom()?;
                fixed(&mut c, 12)?
            }
            103 => {
                c.atom()?;
                fixed(&mut c, 9)?
            }
            88 => {
                c.atom()?;
                fixed(&mut c, 12)?
            }
            114 | 90 => {
                let tag = c.b[c.at - 1];
                let n = c.u16()?;
                c.atom()?;
                let creation = if tag == 114 { 1 } else { 4 };
                cost = cost.saturating_add(4 * n);
                fixed(&mut c, creation + 4 * n)?
            }
            104 => c.u8()? as usize,
            105 => c.u32()?,
            106 => 0,
            107 => {
                let n = c.u16()?;
                cost = cost.saturating_add(n);
                fixed(&mut c, n)?
            }
            108 => c.u32()?.saturating_add(1),
            109 => {
                let n = c.u32()?;
                cost = cost.saturating_add(n);
                fixed(&mut c, n)?
            }
            110 => {
                let n = c.u8()? as usize;
                fixed(&mut c, 1 + n)?
            }
            111 => {
                let n = c.u32()?;
                cost = cost.saturating_add(n);
                fixed(&mut c, 1 + n)?
            }
            112 => {
                c.take(4 + 1 + 16 + 4)?;
                let free = c.u32()?;
                free.saturating_add(4)
            }
            113 => 3,
            116 => c.u32()?.saturating_mul(2),
            117 => c.u32()?.saturating_add(4),
            t => return Err(CheckError(format!("unsupported term tag {t}"))),
        };
        // A container at the deepest decoded level whose elements would be deeper.
        let cut_here = cutting.is_none() && depth >= MAX_DEPTH && children > 0;
        if children > 0 {
            // Every term takes at least one byte.
            if children > c.left() {
                return Err(CheckError("a length runs past the end of the term".into()));
            }
            if cutting.is_none() && !cut_here {
                cost = cost.saturating_add(children.saturating_mul(TERM_COST));
            } else {
                cost = cost.saturating_add(std::mem::size_of::<usize>());
            }
            if cut_here {
                cutting = Some((start, depth));
            }
            stack.push(children);
        }
    }
    Ok(Scan {
        len: c.at,
        cuts,
        cost,
    })
}

fn fixed(c: &mut Cur<'_>, n: usize) -> Result<usize, CheckError> {
    c.take(n)?;
    Ok(0)
}

/// Checks and decodes one term from the front of `bytes`; answers it and the bytes it took.
pub fn decode(bytes: &[u8]) -> Result<(eetf::Term, usize), CheckError> {
    let n = check(bytes)?;
    let t = eetf::Term::decode(&bytes[..n]).map_err(|e| CheckError(e.to_string()))?;
    Ok((t, n))
}

/// Checks a distribution frame body after its pass-through byte: a control term, optionally
/// followed by a message term, and nothing else. `Some(bytes)` when a term nests deeper than
/// [`MAX_DEPTH`]: the body with each too-deep subterm replaced by the atom [`CUT_ATOM`].
pub fn scan_frame(bytes: &[u8]) -> Result<Option<Vec<u8>>, CheckError> {
    let control = scan(bytes)?;
    let mut cuts = control.cuts;
    let n = control.len;
    if n < bytes.len() {
        let m = scan(&bytes[n..])?;
        if n + m.len != bytes.len() {
            return Err(CheckError("trailing bytes after the message".into()));
        }
        cuts.extend(m.cuts.into_iter().map(|r| r.start + n..r.end + n));
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(bytes.len().min(1 << 20));
    let mut at = 0;
    for r in cuts {
        out.extend_from_slice(&bytes[at..r.start]);
        out.extend_from_slice(&[119, CUT_ATOM.len() as u8]);
        out.extend_from_slice(CUT_ATOM.as_bytes());
        at = r.end;
    }
    out.extend_from_slice(&bytes[at..]);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(t: eetf::Term) -> Vec<u8> {
        let mut v = Vec::new();
        t.encode(&mut v).unwrap();
        v
    }

    #[test]
    fn accepts_what_eetf_encodes() {
        use eetf::*;
        let t = Term::from(Tuple::from(vec![
            Term::from(Atom::from("a")),
            Term::from(FixInteger::from(-7)),
            Term::from(List::from(vec![Term::from(Binary::from(vec![1, 2, 3]))])),
            Term::from(Float::try_from(1.5).unwrap()),
            Term::from(Pid::new("n@h", 1, 2, 3)),
        ]));
        let b = enc(t.clone());
        assert_eq!(check(&b), Ok(b.len()));
        assert_eq!(decode(&b).unwrap().0, t);
    }

    #[test]
    fn refuses_lies_and_bombs() {
        // A list claiming 2^32-1 elements in 10 bytes.
        assert!(check(&[131, 108, 255, 255, 255, 255, 106]).is_err());
        // A binary longer than the input.
        assert!(check(&[131, 109, 0, 0, 1, 0, 1]).is_err());
        // Compressed terms, atom cache references, distribution headers.
        assert!(check(&[131, 80, 0, 0, 0, 1, 0]).is_err());
        assert!(check(&[131, 82, 0]).is_err());
        assert!(check(&[131, 68, 0]).is_err());
        // Bit binary with 0 tail bits.
        assert!(check(&[131, 77, 0, 0, 0, 1, 0, 9]).is_err());
        // Deep nesting.
        let mut deep = vec![131];
        for _ in 0..5000 {
            deep.extend_from_slice(&[104, 1]);
        }
        deep.push(106);
        assert!(check(&deep).is_err());
    }

    /// A frame whose message nests 100,000 levels deep: the control term stays, the deep
    /// part becomes the cut atom at depth `MAX_DEPTH`, the rest of the message stays.
    #[test]
    fn deep_messages_are_cut_not_refused() {
        use eetf::*;
        let control = enc(Term::from(Tuple::from(vec![
            Term::from(FixInteger::from(2)),
            Term::from(Atom::from("")),
            Term::from(Pid::new("n@h", 1, 0, 3)),
        ])));
        let mut msg = vec![131, 104, 2];
        for _ in 0..100_000 {
            msg.extend_from_slice(&[108, 0, 0, 0, 1]);
        }
        msg.push(106);
        msg.extend(std::iter::repeat_n(106, 100_000));
        msg.extend_from_slice(&[97, 7]);
        let body = [control.clone(), msg].concat();
        let cut = scan_frame(&body).unwrap().expect("cut");
        assert!(cut.starts_with(&control));
        let (m, n) = {
            let n = check(&cut[control.len()..]).unwrap();
            (Term::decode(&cut[control.len()..]).unwrap(), n)
        };
        assert_eq!(control.len() + n, cut.len());
        let Term::Tuple(t) = m else { panic!() };
        assert_eq!(t.elements[1], Term::from(FixInteger::from(7)));
        let mut depth = 1;
        let mut x = &t.elements[0];
        while let Term::List(l) = x {
            depth += 1;
            x = &l.elements[0];
        }
        assert_eq!(x, &Term::from(Atom::from(CUT_ATOM)));
        assert_eq!(depth + 1, MAX_DEPTH);
        // Shallow frames are left alone.
        assert_eq!(scan_frame(&control), Ok(None));
    }
}
