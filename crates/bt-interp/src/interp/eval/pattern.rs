//! Pattern matching (`match:`) and destructuring assignment.

use crate::interp::error::result_parts;
use crate::interp::error::ErrorKind;
use crate::interp::eval::code::{BinSeg, BinSegKind, Loc, MatchNode, Node, Pat, TypeTest, VarRef};
use crate::interp::eval::{Ctx, Flow, Frame, Unwind};
use crate::value::{Ref, Value};

/// Why a pattern did not match in destructuring mode.
enum Miss {
    No,
    MissingKey(Value),
}

impl Ctx {
    pub(crate) fn exec_match(&mut self, m: &MatchNode, f: &Frame) -> Flow {
        let v = self.exec(&m.recv, f)?;
        for arm in &m.arms {
            if !self.pat_matches(&arm.pat, &v, f)? {
                continue;
            }
            if let Some(g) = &arm.guard {
                if !Ctx::guard_passed(self.exec(g, f))? {
                    continue;
                }
            }
            return self.exec(&arm.body, f);
        }
        self.no_arm_matched(&v, m.loc)
    }

    /// Whether an arm's guard, which answered `r`, lets it through: `true` only; an
    /// exception raised by the guard counts as a refusal, a non-local return or an exit
    /// travels on.
    #[inline]
    pub(crate) fn guard_passed(r: Flow) -> Result<bool, Box<Unwind>> {
        match r {
            Ok(Value::True) => Ok(true),
            Ok(_) => Ok(false),
            Err(b) if matches!(*b, Unwind::Error(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Does `v` match `p` (binding its variables)? The error is an exception raised while
    /// matching (an unknown class in a type pattern).
    #[inline]
    pub(crate) fn pat_matches(&mut self, p: &Pat, v: &Value, f: &Frame) -> Result<bool, Unwind> {
        Ok(self.match_pat(p, v, f, false)?.is_ok())
    }

    /// The error of a `match:` none of whose arms took `v`.
    #[cold]
    pub(crate) fn no_arm_matched(&mut self, v: &Value, loc: Loc) -> Flow {
        self.set_loc(loc);
        let p = self.print_string(v)?;
        Err(self
            .err(ErrorKind::RuntimeError, format!("no arm matched {p}"))
            .into())
    }

    pub(crate) fn exec_destructure(
        &mut self,
        pat: &Pat,
        value: &Node,
        loc: Loc,
        f: &Frame,
    ) -> Flow {
        let v = self.exec(value, f)?;
        self.destructure(pat, v, loc, f)
    }

    /// A destructuring assignment of the evaluated `v` to `pat`: binds its variables and
    /// answers `v`, or raises (a missing key, a shape that does not match).
    pub(crate) fn destructure(&mut self, pat: &Pat, v: Value, loc: Loc, f: &Frame) -> Flow {
        match self.match_pat(pat, &v, f, true)? {
            Ok(()) => Ok(v),
            Err(Miss::MissingKey(k)) => {
                self.set_loc(loc);
                let p = self.print_string(&k)?;
                Err(self
                    .err(ErrorKind::KeyError, format!("key not found: {p}"))
                    .into())
            }
            Err(Miss::No) => {
                self.set_loc(loc);
                let p = self.print_string(&v)?;
                Err(self
                    .err(
                        ErrorKind::RuntimeError,
                        format!("badmatch: value does not match the destructuring pattern: {p}"),
                    )
                    .into())
            }
        }
    }

    fn bind_or_check(&mut self, f: &Frame, r: VarRef, first: bool, v: &Value) -> bool {
        if first {
            self.set_var(f, r, v.clone());
            true
        } else {
            let old = self.get_var(f, r);
            self.strict_eq(&old, v)
        }
    }

    /// Matches `v` against `p`, binding variables. The outer `Result` carries exceptions
    /// (e.g. an unknown class in a type pattern); the inner one says whether it matched.
    fn match_pat(
        &mut self,
        p: &Pat,
        v: &Value,
        f: &Frame,
        destructure: bool,
    ) -> Result<Result<(), Miss>, Unwind> {
        let ok = |b: bool| if b { Ok(()) } else { Err(Miss::No) };
        Ok(match p {
            Pat::Wild => Ok(()),
            Pat::Nil => ok(v.is_nil()),
            Pat::Lit(l) => ok(self.strict_eq(l, v)),
            Pat::Bind(r, first) => ok(self.bind_or_check(f, *r, *first, v)),
            Pat::Typed(b, t) => {
                if !self.type_test(t, v)? {
                    return Ok(Err(Miss::No));
                }
                match b {
                    Some((r, first)) => ok(self.bind_or_check(f, *r, *first, v)),
                    None => Ok(()),
                }
            }
            Pat::Tuple(ps) => match v {
                Value::Tuple(items) if items.len() == ps.len() => {
                    let items: Vec<Value> = items.iter().cloned().collect();
                    self.match_seq(ps, &items, f, destructure)?
                }
                _ => Err(Miss::No),
            },
            Pat::Array(ps, rest) | Pat::List(ps, rest) => {
                // A List pattern also matches an Array; in a destructuring assignment an
                // Array pattern without `...rest` binds a prefix of a longer Array.
                let (items, is_array): (Vec<Value>, bool) = match (p, v) {
                    (_, Value::Array(a)) => (a.iter().cloned().collect(), true),
                    (Pat::List(..), Value::List(a)) => (a.iter().cloned().collect(), false),
                    _ => return Ok(Err(Miss::No)),
                };
                let fits = match rest {
                    Some(_) => items.len() >= ps.len(),
                    None if destructure && matches!(p, Pat::Array(..)) => items.len() >= ps.len(),
                    None => items.len() == ps.len(),
                };
                if !fits {
                    return Ok(Err(Miss::No));
                }
                if let Err(m) = self.match_seq(ps, &items[..ps.len()], f, destructure)? {
                    return Ok(Err(m));
                }
                match rest {
                    Some(Some((r, first))) => {
                        let tail = &items[ps.len()..];
                        let tv = if is_array {
                            Value::Array(Ref::new(tail.to_vec().into()))
                        } else {
                            Value::List(Ref::new(tail.iter().cloned().collect()))
                        };
                        ok(self.bind_or_check(f, *r, *first, &tv))
                    }
                    _ => Ok(()),
                }
            }
            Pat::Dict(entries) => match v {
                Value::Dict(d) => {
                    let d = d.clone();
                    for (k, sub) in entries {
                        match d.get(k) {
                            Some(x) => {
                                let x = x.clone();
                                if let Err(m) = self.match_pat(sub, &x, f, destructure)? {
                                    return Ok(Err(m));
                                }
                            }
                            None => {
                                return Ok(Err(if destructure {
                                    Miss::MissingKey(k.clone())
                                } else {
                                    Miss::No
                                }));
                            }
                        }
                    }
                    Ok(())
                }
                _ => Err(Miss::No),
            },
            Pat::ResultOk(sub) | Pat::ResultErr(sub) => match result_parts(&self.prog, v) {
                Some((is_ok, payload)) if is_ok == matches!(p, Pat::ResultOk(_)) => {
                    self.match_pat(sub, &payload, f, destructure)?
                }
                _ => Err(Miss::No),
            },
            Pat::Binary(segs) => {
                let bytes: Vec<u8> = match v {
                    Value::Str(s) => s.as_bytes().to_vec(),
                    Value::Binary(b) => b.as_ref().clone(),
                    _ => return Ok(Err(Miss::No)),
                };
                ok(self.match_binary(segs, &bytes, f))
            }
        })
    }

    fn match_seq(
        &mut self,
        ps: &[Pat],
        items: &[Value],
        f: &Frame,
        d: bool,
    ) -> Result<Result<(), Miss>, Unwind> {
        for (p, x) in ps.iter().zip(items) {
            if let Err(m) = self.match_pat(p, x, f, d)? {
                return Ok(Err(m));
            }
        }
        Ok(Ok(()))
    }

    fn type_test(&mut self, t: &TypeTest, v: &Value) -> Result<bool, Unwind> {
        Ok(match t {
            TypeTest::Any => true,
            TypeTest::Nil => v.is_nil(),
            TypeTest::Class(name) => match self.prog.class_by_sym(*name) {
                Some(c) => self.is_kind_of(v, &c),
                None => {
                    // Not a class: maybe a protocol name.
                    if self.prog.protocol_table().read().contains_key(name) {
                        let cls = self.class_of(v);
                        (self.prog.prims.prims.hooks.conforms)(self, &cls, *name)
                    } else {
                        return Err(self.err(
                            ErrorKind::ClassNotFound,
                            format!("Class '{name}' not found"),
                        ));
                    }
                }
            },
            TypeTest::Union(ts) => {
                for t in ts {
                    if self.type_test(t, v)? {
                        return Ok(true);
                    }
                }
                false
            }
        })
    }

    fn match_binary(&mut self, segs: &[BinSeg], bytes: &[u8], f: &Frame) -> bool {
        let mut pos = 0usize; // in bits
        let total = bytes.len() * 8;
        for seg in segs {
            match &seg.kind {
                BinSegKind::Rest(b) => {
                    if !pos.is_multiple_of(8) {
                        return false;
                    }
                    let rest = &bytes[pos / 8..];
                    pos = total;
                    if let Some((r, first)) = b {
                        let v = match std::str::from_utf8(rest) {
                            Ok(s) => Value::str(s),
                            Err(_) => Value::Binary(Ref::new(rest.to_vec())),
                        };
                        if !self.bind_or_check(f, *r, *first, &v) {
                            return false;
                        }
                    }
                }
                BinSegKind::Utf8(b) => {
                    if !pos.is_multiple_of(8) {
                        return false;
                    }
                    let rest = &bytes[pos / 8..];
                    let len = match rest.first() {
                        Some(&c) if c < 0x80 => 1,
                        Some(&c) if c >= 0xF0 => 4,
                        Some(&c) if c >= 0xE0 => 3,
                        Some(&c) if c >= 0xC0 => 2,
                        _ => return false,
                    };
                    let Some(chunk) = rest.get(..len) else {
                        return false;
                    };
                    let Ok(s) = std::str::from_utf8(chunk) else {
                        return false;
                    };
                    let cp = s.chars().next().map(|c| c as i64).unwrap_or(0);
                    pos += len * 8;
                    if let Some((r, first)) = b {
                        if !self.bind_or_check(f, *r, *first, &Value::Int(cp)) {
                            return false;
                        }
                    }
                }
                BinSegKind::Int(_) | BinSegKind::Lit(_) if seg.bits > 0 => {
                    let bits = seg.bits as usize;
                    if pos + bits > total || bits > 64 {
                        return false;
                    }
                    let mut raw: u64 = 0;
                    for i in 0..bits {
                        let bit = pos + i;
                        let byte = bytes[bit / 8];
                        let b = (byte >> (7 - bit % 8)) & 1;
                        raw = (raw << 1) | b as u64;
                    }
                    pos += bits;
                    if seg.little && bits.is_multiple_of(8) {
                        let n = bits / 8;
                        let be = raw.to_be_bytes();
                        let mut le = [0u8; 8];
                        for i in 0..n {
                            le[8 - n + i] = be[7 - i];
                        }
                        raw = u64::from_be_bytes(le);
                    }
                    let val: i64 = if seg.signed && bits < 64 && (raw >> (bits - 1)) & 1 == 1 {
                        (raw as i64) - (1i64 << bits)
                    } else {
                        raw as i64
                    };
                    let ok = match &seg.kind {
                        BinSegKind::Lit(l) => *l == val,
                        BinSegKind::Int(Some((r, first))) => {
                            self.bind_or_check(f, *r, *first, &Value::Int(val))
                        }
                        _ => true,
                    };
                    if !ok {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        pos == total
    }

    /// `=:=` (delegates to the term-order module).
    pub fn strict_eq(&self, a: &Value, b: &Value) -> bool {
        crate::value::order::strict_eq(a, b)
    }
}
