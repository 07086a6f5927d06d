//! The arithmetic of an Interval (`a to: b by: s`): how many elements it has and which, for
//! Integer, Float and big-Integer bounds, without materialising it. Pure functions of a
//! `value::Interval`; the Interval primitives (`interval.rs`) and the element access shared
//! by every collection (`common.rs`) use them.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::value::{Interval, Value};

/// How an Interval's elements are computed.
pub(super) enum Prog {
    Int {
        from: i64,
        step: i64,
        n: usize,
    },
    Float {
        from: f64,
        step: f64,
        n: usize,
    },
    Big {
        from: BigInt,
        step: BigInt,
        n: usize,
        /// The exact number of steps from the first element to the last (`n` saturates).
        steps: BigInt,
    },
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => f.get(),
        Value::Char(c) => c.get() as u32 as f64,
        Value::BigInt(b) => b.to_f64().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn as_big(v: &Value) -> Option<BigInt> {
    match v {
        Value::Int(i) => Some(BigInt::from(*i)),
        Value::Char(c) => Some(BigInt::from(c.get() as u32)),
        Value::BigInt(b) => Some((**b).clone()),
        _ => None,
    }
}

/// Element count of the integer progression from..=to by step (0 when empty).
fn int_count(from: i128, to: i128, step: i128) -> usize {
    if step == 0 || (step > 0 && to < from) || (step < 0 && to > from) {
        return 0;
    }
    let n = (to - from) / step + 1;
    usize::try_from(n).unwrap_or(usize::MAX)
}

pub(super) fn prog(iv: &Interval) -> Prog {
    let float = |v: &Value| matches!(v, Value::Float(_));
    if float(&iv.from) || float(&iv.step) {
        let (from, to, step) = (as_f64(&iv.from), as_f64(&iv.to), as_f64(&iv.step));
        let q = ((to - from) / step).floor();
        let n = if step == 0.0 || !q.is_finite() || q < 0.0 {
            0
        } else {
            (q as usize).saturating_add(1)
        };
        return Prog::Float { from, step, n };
    }
    // Integer from and step; `to` may be a Float (rounded towards from) or an Integer.
    let (Some(from), Some(step)) = (as_big(&iv.from), as_big(&iv.step)) else {
        return Prog::Int {
            from: 0,
            step: 1,
            n: 0,
        };
    };
    let to = match &iv.to {
        Value::Float(f) => {
            let f = f.get();
            let r = if step.is_positive() {
                f.floor()
            } else {
                f.ceil()
            };
            num_traits::FromPrimitive::from_f64(r).unwrap_or_else(BigInt::zero)
        }
        other => as_big(other).unwrap_or_else(BigInt::zero),
    };
    match (from.to_i64(), to.to_i64(), step.to_i64()) {
        (Some(f), Some(t), Some(s)) => Prog::Int {
            from: f,
            step: s,
            n: int_count(f as i128, t as i128, s as i128),
        },
        _ => {
            let (n, steps) = if step.is_zero()
                || (step.is_positive() && to < from)
                || (step.is_negative() && to > from)
            {
                (0, BigInt::zero())
            } else {
                let steps = (&to - &from) / &step;
                let n = (&steps + 1u32).to_usize().unwrap_or(usize::MAX);
                (n, steps)
            };
            Prog::Big {
                from,
                step,
                n,
                steps,
            }
        }
    }
}

impl Prog {
    pub(super) fn len(&self) -> usize {
        match self {
            Prog::Int { n, .. } | Prog::Float { n, .. } | Prog::Big { n, .. } => *n,
        }
    }
    /// The last element (exact also when the count exceeds the machine range); `len() > 0`.
    pub(super) fn last(&self) -> Value {
        match self {
            Prog::Big {
                from, step, steps, ..
            } => Value::from_bigint(from + step * steps),
            _ => self.nth(self.len() - 1),
        }
    }
    /// The element at 0-based position `k` (< len).
    pub(super) fn nth(&self, k: usize) -> Value {
        match self {
            Prog::Int { from, step, .. } => {
                let v = *from as i128 + k as i128 * *step as i128;
                i64::try_from(v)
                    .map(Value::Int)
                    .unwrap_or_else(|_| Value::from_bigint(v.into()))
            }
            Prog::Float { from, step, .. } => Value::float(from + k as f64 * step),
            Prog::Big { from, step, .. } => Value::from_bigint(from + step * BigInt::from(k)),
        }
    }
}

/// Number of elements.
pub(crate) fn len(iv: &Interval) -> usize {
    prog(iv).len()
}

/// The exact number of elements as an Integer (beyond the machine range too).
pub(crate) fn size_value(iv: &Interval) -> Value {
    let n = len(iv);
    if n < usize::MAX {
        return Value::Int(n as i64);
    }
    let float = |v: &Value| matches!(v, Value::Float(_));
    let exact = if float(&iv.from) || float(&iv.step) {
        let q = ((as_f64(&iv.to) - as_f64(&iv.from)) / as_f64(&iv.step)).floor();
        num_traits::FromPrimitive::from_f64(q).map(|b: BigInt| b + 1u32)
    } else {
        match (as_big(&iv.from), as_big(&iv.step)) {
            (Some(f), Some(s)) if !s.is_zero() => {
                let t = match &iv.to {
                    Value::Float(x) => {
                        let r = if s.is_positive() {
                            x.get().floor()
                        } else {
                            x.get().ceil()
                        };
                        num_traits::FromPrimitive::from_f64(r)
                    }
                    other => as_big(other),
                };
                t.map(|t: BigInt| (t - f) / s + 1u32)
            }
            _ => None,
        }
    };
    exact
        .map(Value::from_bigint)
        .unwrap_or(Value::Int(i64::MAX))
}

/// The elements, in order.
pub(crate) fn iter(iv: &Interval) -> impl Iterator<Item = Value> {
    let p = prog(iv);
    (0..p.len()).map(move |k| p.nth(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(from: Value, to: Value, step: Value) -> Interval {
        Interval {
            from,
            to,
            step,
            explicit_step: true,
        }
    }
    fn ints(i: &Interval) -> Vec<String> {
        iter(i).map(|v| format!("{v:?}")).collect()
    }

    #[test]
    fn integer_intervals() {
        assert_eq!(
            ints(&iv(Value::Int(1), Value::Int(5), Value::Int(1))),
            ["1", "2", "3", "4", "5"]
        );
        assert_eq!(
            ints(&iv(Value::Int(1), Value::Int(10), Value::Int(4))),
            ["1", "5", "9"]
        );
        assert_eq!(
            ints(&iv(Value::Int(5), Value::Int(1), Value::Int(-2))),
            ["5", "3", "1"]
        );
        assert_eq!(len(&iv(Value::Int(5), Value::Int(1), Value::Int(1))), 0);
        assert_eq!(
            ints(&iv(Value::Int(1), Value::float(2.5), Value::Int(1))),
            ["1", "2"]
        );
        assert_eq!(
            len(&iv(
                Value::Int(1),
                Value::Int(1_000_000_000_000),
                Value::Int(1)
            )),
            1_000_000_000_000
        );
    }

    #[test]
    fn float_intervals() {
        assert_eq!(
            ints(&iv(Value::float(1.0), Value::float(2.0), Value::float(0.5))),
            ["1.0", "1.5", "2.0"]
        );
        assert_eq!(
            ints(&iv(Value::Int(0), Value::Int(1), Value::float(0.25))).len(),
            5
        );
        assert_eq!(
            len(&iv(
                Value::float(0.0),
                Value::float(-1.0),
                Value::float(0.5)
            )),
            0
        );
    }

    #[test]
    fn big_intervals() {
        let b = Value::from_bigint(BigInt::from(i64::MAX) + 1);
        let e = Value::from_bigint(BigInt::from(i64::MAX) + 3);
        assert_eq!(len(&iv(b, e, Value::Int(1))), 3);
    }
}
