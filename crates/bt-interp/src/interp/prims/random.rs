//! `Random`: pseudo-random generators. `Random new` is seeded from the
//! operating system; `Random seed: anInteger` gives the same sequence on every platform and
//! every run: xoshiro256++ (`rand_xoshiro`) seeded through SplitMix64
//! (`SeedableRng::seed_from_u64`), floats from the top 53 bits of a draw, ranges by `rand`'s
//! unbiased uniform sampler. A Random is a process-bound handle (`handleScope: #process`): it
//! holds state that `next` advances.
//!
//! Also `atRandom` for the collections the sequence primitives do not cover (Set, Bag,
//! Interval, String): a uniformly chosen element from the thread's OS-seeded generator.

use std::any::Any;

use parking_lot::Mutex;
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::interp::actor::handle::{downcast, native};
use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims, Unwind};
use crate::interp::prims::fault::article_class;
use crate::value::{ClassRef, NativeObj, Value};

/// A draw from the deterministic scheduler's PRNG (`bt test --seed`), None otherwise.
fn sim_draw(ctx: &Ctx) -> Option<u64> {
    crate::interp::prims::timer::virtual_clock(ctx).and_then(|rt| rt.sim_random())
}

pub fn register(p: &mut Prims) {
    let r = "Random";
    p.add_class(r, "new", |ctx, _, _| {
        // Under the deterministic scheduler the seed comes from its PRNG.
        if let Some(seed) = sim_draw(ctx) {
            return Ok(make(ctx, Xoshiro256PlusPlus::seed_from_u64(seed), None));
        }
        let rng = Xoshiro256PlusPlus::from_rng(rand::rngs::OsRng).map_err(|e| {
            ctx.err(
                ErrorKind::IoError,
                format!("Random new: no OS entropy: {e}"),
            )
        })?;
        Ok(make(ctx, rng, None))
    });
    p.add_class(r, "seed:", |ctx, _, a| {
        let seed = match &a[0] {
            Value::Int(i) => *i as u64,
            Value::BigInt(b) => fold_big_seed(b),
            other => {
                let n = article_class(other);
                return Err(ctx.type_err(format!("Random seed: expects an Integer, got {n}")));
            }
        };
        Ok(make(
            ctx,
            Xoshiro256PlusPlus::seed_from_u64(seed),
            Some(a[0].clone()),
        ))
    });
    p.add(r, "next", |ctx, rv, _| {
        let g = get(ctx, rv)?;
        let x = g.rng.lock().next_u64();
        Ok(Value::float((x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)))
    });
    p.add(r, "between:and:", |ctx, rv, a| {
        let (lo, hi) = (
            int(ctx, "between:and:", &a[0])?,
            int(ctx, "between:and:", &a[1])?,
        );
        if lo > hi {
            return Err(ctx.type_err(format!(
                "between: {lo} and: {hi}: the lower bound is above the upper bound"
            )));
        }
        let g = get(ctx, rv)?;
        let x = g.rng.lock().gen_range(lo..=hi);
        Ok(Value::Int(x))
    });
    p.add(r, "nextInt:", |ctx, rv, a| {
        let n = int(ctx, "nextInt:", &a[0])?;
        if n < 1 {
            return Err(ctx.type_err(format!("nextInt: expects a positive Integer, got {n}")));
        }
        let g = get(ctx, rv)?;
        let x = g.rng.lock().gen_range(1..=n);
        Ok(Value::Int(x))
    });
    p.add(r, "seed", |ctx, rv, _| {
        Ok(get(ctx, rv)?.seed.clone().unwrap_or(Value::Nil))
    });
    for c in ["Set", "Bag", "Interval", "String"] {
        p.add(c, "atRandom", collection_at_random);
    }
}

/// A generator.
pub struct RandomVal {
    class: ClassRef,
    rng: Mutex<Xoshiro256PlusPlus>,
    /// The Integer given to `seed:` (any size), or None for an OS-seeded generator.
    seed: Option<Value>,
}

/// The 64-bit seed of an Integer beyond i64 (`Random seed: (2 ** 100)` raised
/// "expects an Integer, got an Integer"): its magnitude's 64-bit digits folded with a
/// multiply-xor, the sign mixed in first, so every platform draws the same sequence.
fn fold_big_seed(b: &num_bigint::BigInt) -> u64 {
    let (sign, digits) = b.to_u64_digits();
    let start = if sign == num_bigint::Sign::Minus {
        !0u64
    } else {
        0
    };
    digits
        .iter()
        .fold(start, |h, d| h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ d)
}

impl NativeObj for RandomVal {
    fn class(&self) -> ClassRef {
        self.class.clone()
    }
    fn print_string(&self) -> String {
        match &self.seed {
            Some(Value::Int(s)) => format!("Random(seed: {s})"),
            Some(Value::BigInt(s)) => format!("Random(seed: {s})"),
            Some(_) => "Random".to_string(),
            None => "Random".to_string(),
        }
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<RandomVal>()
            .is_some_and(|o| std::ptr::eq(o, self))
    }
    fn hash_code(&self) -> u64 {
        self as *const RandomVal as usize as u64
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        (9, vec![self.hash_code()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn make(ctx: &Ctx, rng: Xoshiro256PlusPlus, seed: Option<Value>) -> Value {
    let class = ctx
        .class_named("Random")
        .unwrap_or_else(|| ctx.prog.core.object.clone());
    native(RandomVal {
        class,
        rng: Mutex::new(rng),
        seed,
    })
}

fn get<'a>(ctx: &Ctx, v: &'a Value) -> Result<&'a RandomVal, Unwind> {
    downcast::<RandomVal>(v).ok_or_else(|| {
        let n = article_class(v);
        ctx.type_err(format!("expected a Random, got {n}"))
    })
}

fn int(ctx: &Ctx, what: &str, v: &Value) -> Result<i64, Unwind> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::BigInt(b) => Err(ctx.type_err(format!(
            "{what}: {b} is out of range (bounds are 64-bit Integers)"
        ))),
        other => {
            let n = article_class(other);
            Err(ctx.type_err(format!("{what} expects Integers, got {n}")))
        }
    }
}

/// `atRandom` of a Set, Bag, Interval or String (a grapheme): `empty_collection` when empty.
fn collection_at_random(ctx: &mut Ctx, r: &Value, _: &[Value]) -> EvalResult {
    let items: Vec<Value> = match r {
        Value::Str(s) => {
            use unicode_segmentation::UnicodeSegmentation;
            s.graphemes(true).map(Value::str).collect()
        }
        other => match crate::interp::prims::collections::common::elems(other) {
            Some(it) => it.collect(),
            None => {
                let n = article_class(other);
                return Err(ctx.type_err(format!("atRandom: {n} is not a collection")));
            }
        },
    };
    ctx.charge(items.len() * crate::interp::eval::charge::ELEM)?;
    if items.is_empty() {
        let n = crate::interp::prims::fault::class_name(r);
        return Err(ctx.err(ErrorKind::EmptyCollection, format!("{n} is empty")));
    }
    let i = match sim_draw(ctx) {
        Some(d) => ((d as u128 * items.len() as u128) >> 64) as usize,
        None => rand::thread_rng().gen_range(0..items.len()),
    };
    Ok(items[i].clone())
}
