//! Reductions for bulk work inside primitives.
//!
//! The evaluator counts one reduction per send or loop iteration ([`Ctx::tick`]), but one
//! primitive call can do work proportional to its input (`(1 to: n) asList`, `Array new: n
//! withAll: x`, `s ++ t` of huge Strings, printing a huge collection …). Such primitives pay
//! for that work with [`Ctx::charge`], so the preemption point (other actors on the same
//! scheduler thread run) and the embedder's hook (reduction limit, deadline) come within a
//! bounded amount of work, as they do for interpreted loops.
//!
//! **Rate.** Work is measured in *units*; one reduction is [`UNITS_PER_REDUCTION`] (64)
//! units. A byte copied, scanned or produced is one unit; a `Value` element copied or built
//! is [`ELEM`] (16) units — four elements per reduction — (its size in bytes; measured on
//! the release build a reduction, one interpreted loop iteration, costs about 6 ns and
//! building a List/Array 15–45 ns an element, so this still undercharges by a small factor
//! and never punishes bulk primitives against the loops they replace); an element inserted
//! into a hashed/ordered collection (Set, Bag, Dictionary) or put through a comparison-heavy
//! step is [`KEYED`] (64) units, one reduction. Work under 64 units is free.
//!
//! **Up front or in chunks.** A primitive whose size is known and whose work is a copy
//! (concatenation, `copyFrom:to:`, `new:withAll:` of a String) charges it once before
//! copying. A primitive that builds element by element charges as it goes, every [`CHUNK`]
//! units ([`Meter`], [`Ctx::collect_charged`]), so a limit or a preemption lands within
//! about 64 reductions of work. When the charge fails (a limit), the primitive returns the
//! `Unwind` at once: the half-built value is dropped, never seen (values are immutable).

use super::{Ctx, Unwind};
use crate::interp::registry::big_units::any_big;
use crate::interp::registry::Cost;
use crate::value::Value;

pub use super::units::{
    append_units, BUILT_EVERY, CHARGE_SHIFT, CHUNK, ELEM, KEYED, PART_BYTES, RESERVE_FREE,
    UNITS_PER_REDUCTION,
};

/// The send path's charge for a primitive call (`registry::Cost`, declared at registration).
impl Cost {
    /// Charges the units of a call (nothing for [`Cost::Free`]), after reserving the bytes
    /// of its result when the cost knows them.
    #[inline]
    pub fn charge(self, ctx: &mut Ctx, r: &Value, a: &[Value]) -> Result<(), Unwind> {
        match self {
            Cost::Free => Ok(()),
            Cost::BigLinear | Cost::BigProduct if !any_big(r, a) => Ok(()),
            _ => {
                let units = self.units(r, a);
                if let Some(bytes) = self.result_bytes(units) {
                    ctx.reserve(bytes)?;
                }
                ctx.charge(units)
            }
        }
    }
}

impl Ctx {
    /// Charges the reductions for `units` of work (see the module doc for the rate): deducts
    /// `units / 64` reductions and, when that crosses the budget, runs the cold path of
    /// [`Ctx::tick`] once per budget crossed (preemption, then the embedder's hook, which may
    /// end the evaluation with a limit `Unwind`). The common small case is one comparison and
    /// one subtraction; `tick` itself is unchanged.
    #[inline]
    pub fn charge(&mut self, units: usize) -> Result<(), Unwind> {
        let r = units >> CHARGE_SHIFT;
        if r < self.reductions as usize {
            self.reductions -= r as u32;
            return Ok(());
        }
        self.charge_slow(r)
    }

    #[cold]
    fn charge_slow(&mut self, mut r: usize) -> Result<(), Unwind> {
        if let Some(kind) = self.limit_met() {
            return Err(self.limit_hit(kind));
        }
        // An embedder's memory limit refuses a big step before it allocates.
        if r >= PRECHECK_REDUCTIONS && crate::memory::would_exceed(r << CHARGE_SHIFT) {
            return Err(self.limit_hit("memory_limit"));
        }
        loop {
            let left = self.reductions as usize;
            if r < left {
                self.reductions -= r as u32;
                return Ok(());
            }
            r -= left;
            // `reductions` reaches zero: the same cold path as `tick` (refills the budget).
            self.reductions = 0;
            self.tick_slow()?;
        }
    }

    /// Collects `items` into `C`, charging `units_each` units per item after every chunk of
    /// about [`CHUNK`] units (each chunk goes in with one `extend`). On a limit the partial
    /// collection is dropped and the `Unwind` answered. `units_each` also stands for the
    /// bytes an item takes in the result: the items the iterator promises
    /// (`size_hint`) are reserved up front ([`Ctx::reserve`]), the rest reported as built.
    pub fn collect_charged<T, C: Default + Extend<T>>(
        &mut self,
        mut items: impl Iterator<Item = T>,
        units_each: usize,
    ) -> Result<C, Unwind> {
        self.reserve(items.size_hint().0.saturating_mul(units_each))?;
        let per_chunk = (CHUNK / units_each.max(1)).max(1);
        let mut out = C::default();
        let mut total = 0usize;
        loop {
            let mut n = 0usize;
            out.extend(items.by_ref().take(per_chunk).inspect(|_| n += 1));
            self.charge(n.saturating_mul(units_each))?;
            total = total.saturating_add(n);
            self.built(total.saturating_mul(units_each))?;
            if n < per_chunk {
                return Ok(out);
            }
        }
    }

    /// [`Ctx::collect_charged`] into a `Vec`, reserving capacity from the size hint (at
    /// most [`HINT_MAX`]) so the chunks extend in place.
    pub fn collect_vec_charged<T>(
        &mut self,
        mut items: impl Iterator<Item = T>,
        units_each: usize,
    ) -> Result<Vec<T>, Unwind> {
        self.reserve(items.size_hint().0.saturating_mul(units_each))?;
        let per_chunk = (CHUNK / units_each.max(1)).max(1);
        let mut out = Vec::with_capacity(items.size_hint().0.min(HINT_MAX));
        loop {
            let before = out.len();
            out.extend(items.by_ref().take(per_chunk));
            let n = out.len() - before;
            self.charge(n.saturating_mul(units_each))?;
            self.built(out.len().saturating_mul(units_each))?;
            if n < per_chunk {
                return Ok(out);
            }
        }
    }
}

impl Ctx {
    /// The shared pre-charge of every primitive that allocates in proportion to an argument
    /// (a collection from an Interval, `new:withAll:`, `repeat:`, `join:`, printing, the
    /// encoders, huge Integers): called with the bytes it is about to allocate, *before* it
    /// allocates. Refuses with the uncatchable `memory_limit` when they would take the
    /// running engine's or actor's memory account past its limit (`memory::would_exceed`) or
    /// pass the engine's largest single step (`EngineBuilder::max_allocation`), so one step
    /// never reaches the allocator past a limit, with or without the counting allocator. A
    /// step larger than the machine's memory is refused the same way, with no limit set
    /// (`bt run`: `"x" repeat: 2 ** 50` used to pay its reductions for days first).
    /// Steps under [`RESERVE_FREE`] bytes are not checked (the hook sees their growth). A
    /// result whose size is not known up front reports its growth to [`Ctx::built`].
    #[inline]
    pub fn reserve(&mut self, bytes: usize) -> Result<(), Unwind> {
        if bytes < RESERVE_FREE {
            return Ok(());
        }
        self.reserve_slow(bytes)
    }

    #[cold]
    fn reserve_slow(&mut self, bytes: usize) -> Result<(), Unwind> {
        if let Some(kind) = self.limit_met() {
            return Err(self.limit_hit(kind));
        }
        if bytes > self.prog.max_allocation()
            || bytes > crate::memory::machine_memory()
            || crate::memory::would_exceed(bytes)
        {
            return Err(self.limit_hit("memory_limit"));
        }
        Ok(())
    }

    /// Before a step the allocator counts but the preemption hook may not reach for a while
    /// (a spawn: many short messages that each spawn never meet the hook): refuses with
    /// `memory_limit` once the running engine's or actor's account is over its limit.
    #[inline]
    pub fn memory_check(&mut self) -> Result<(), Unwind> {
        if let Some(kind) = self.limit_met() {
            return Err(self.limit_hit(kind));
        }
        // A process told to exit (killed at the engine's memory limit, say) whose run has not
        // reached a check yet starts nothing more: its exit goes on from here.
        if let Some(r) = crate::interp::process::cx_of(self).and_then(|cx| cx.exiting()) {
            return Err(Unwind::Exit(r.to_value()));
        }
        if crate::memory::current_over() {
            // The embedder's hook sees it too (an engine over its limit stops every process
            // its scripts started), then this run ends.
            if let Some(h) = self.preempt.as_mut() {
                let _ = h();
            }
            return Err(self.limit_hit("memory_limit"));
        }
        Ok(())
    }

    /// A result built piece by piece (printing, encoding, filtering, a stream collected)
    /// has reached `bytes`: refuses with `memory_limit` once that passes the largest single
    /// step (`EngineBuilder::max_allocation`, or `max_memory`). The account itself is the
    /// hook's to check (the counting allocator sees the growth). One load and a compare.
    #[inline]
    pub fn built(&mut self, bytes: usize) -> Result<(), Unwind> {
        if bytes > self.prog.max_allocation() {
            return Err(self.limit_hit("memory_limit"));
        }
        Ok(())
    }
}

/// Charges of at least this many reductions (1 MiB of units) are checked against an
/// embedder's memory limit before the primitive allocates (`memory::would_exceed`).
const PRECHECK_REDUCTIONS: usize = (1 << 20) >> CHARGE_SHIFT;

impl Ctx {
    /// Pays for appending `args` (Strings) to `acc` in place (`x := x ++ y`): reserves the
    /// bytes it allocates ([`append_units`]) and reports the String's new size as built.
    pub fn charge_append(
        &mut self,
        acc: &crate::value::Value,
        args: &[crate::value::Value],
    ) -> Result<(), Unwind> {
        let len = match acc {
            crate::value::Value::Str(s) => s.len(),
            _ => 0,
        };
        self.charge_append_units(append_units(acc, args), len)
    }

    /// [`Ctx::charge_append`] with the units ([`append_units`]) and the String's length
    /// measured by the caller, which keeps the String where it is.
    #[inline]
    pub fn charge_append_units(&mut self, units: usize, len: usize) -> Result<(), Unwind> {
        self.reserve(units)?;
        self.built(len.saturating_add(units))?;
        self.charge(units)
    }
}

/// Accumulates units inside a loop and charges them every [`CHUNK`] units.
#[derive(Default, Debug)]
pub struct Meter {
    pending: usize,
}

impl Meter {
    /// Records `units` of work; charges when a chunk is full.
    #[inline]
    pub fn step(&mut self, ctx: &mut Ctx, units: usize) -> Result<(), Unwind> {
        self.pending = self.pending.saturating_add(units);
        if self.pending >= CHUNK {
            let p = std::mem::take(&mut self.pending);
            return ctx.charge(p);
        }
        Ok(())
    }

    /// Charges what is left (a loop that ended before a full chunk).
    pub fn finish(self, ctx: &mut Ctx) -> Result<(), Unwind> {
        ctx.charge(self.pending)
    }
}

/// Largest capacity [`Ctx::collect_vec_charged`] reserves from a size hint (an Interval may
/// claim an enormous size; the charge stops it long before): 4M elements, 64 MB of Values, a
/// virtual reservation committed as it fills.
const HINT_MAX: usize = 1 << 22;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn ctx() -> Ctx {
        let prog = crate::interp::program::Program::bootstrap(
            Default::default(),
            crate::interp::prims::shared(),
        );
        Ctx::new(Arc::new(prog))
    }

    /// A context whose hook counts its calls and fails from the `fail_at`-th call on.
    fn hooked(budget: u32, fail_at: usize) -> (Ctx, Arc<AtomicUsize>) {
        let mut c = ctx();
        let calls = Arc::new(AtomicUsize::new(0));
        let n = calls.clone();
        c.preempt = Some(Box::new(move || {
            let k = n.fetch_add(1, Ordering::Relaxed) + 1;
            if k >= fail_at {
                Err(Unwind::limit("reduction_limit"))
            } else {
                Ok(())
            }
        }));
        c.restart_budget(budget);
        (c, calls)
    }

    #[test]
    fn small_charges_are_one_subtraction_and_free_below_a_reduction() {
        let (mut c, calls) = hooked(1000, usize::MAX);
        c.charge(63).ok().unwrap();
        assert_eq!(c.reductions, 1000);
        c.charge(64 * 10).ok().unwrap();
        assert_eq!(c.reductions, 990);
        assert_eq!(c.reduction_count, 0);
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_charge_crossing_budgets_calls_the_hook_once_per_budget() {
        let (mut c, calls) = hooked(100, usize::MAX);
        // 350 reductions from a full budget of 100: three crossings, 50 left to pay.
        c.charge(350 * UNITS_PER_REDUCTION).ok().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert_eq!(c.reduction_count, 300);
        assert_eq!(c.reductions, 50);
        // Exactly the rest of the budget is a crossing, like `tick` reaching zero.
        c.charge(50 * UNITS_PER_REDUCTION).ok().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        assert_eq!(c.reductions, 100);
        // tick still works from there.
        for _ in 0..99 {
            c.tick().ok().unwrap();
        }
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        c.tick().ok().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_failing_hook_stops_the_charge() {
        let (mut c, calls) = hooked(10, 2);
        let r = c.charge(1_000_000 * UNITS_PER_REDUCTION);
        assert_eq!(
            r.err().and_then(|u| u.limit_kind()).map(|k| k.as_str()),
            Some("reduction_limit")
        );
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        // The context is consistent afterwards: a full budget, tick works.
        assert_eq!(c.reductions, 10);
        assert!(c.tick().is_ok());
    }

    #[test]
    fn meter_charges_in_chunks_and_the_rest_at_finish() {
        let (mut c, _) = hooked(4000, usize::MAX);
        let mut m = Meter::default();
        for _ in 0..(CHUNK / ELEM - 1) {
            m.step(&mut c, ELEM).ok().unwrap();
        }
        assert_eq!(c.reductions, 4000, "nothing charged before a full chunk");
        m.step(&mut c, ELEM).ok().unwrap();
        assert_eq!(c.reductions, 4000 - 64);
        m.step(&mut c, 640).ok().unwrap();
        m.finish(&mut c).ok().unwrap();
        assert_eq!(c.reductions, 4000 - 64 - 10);
    }

    #[test]
    fn collect_charged_collects_or_drops_on_a_limit() {
        let (mut c, _) = hooked(4000, usize::MAX);
        let v: Vec<u32> = c.collect_charged(0..10_000u32, ELEM).ok().unwrap();
        assert_eq!(v.len(), 10_000);
        assert_eq!(c.reductions, 4000 - 2500);
        let (mut c, _) = hooked(4000, usize::MAX);
        let v = c.collect_vec_charged(0..10_000u32, ELEM).ok().unwrap();
        assert_eq!(v.len(), 10_000);
        assert_eq!(c.reductions, 4000 - 2500);

        // An endless source that promises nothing (no size hint): stopped by the hook.
        let (mut c, calls) = hooked(100, 3);
        let built = Arc::new(AtomicUsize::new(0));
        let b = built.clone();
        let mut k = 0u64;
        let r: Result<Vec<u64>, _> = c.collect_charged(
            std::iter::from_fn(move || {
                b.fetch_add(1, Ordering::Relaxed);
                k += 1;
                Some(k)
            }),
            ELEM,
        );
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        // Stopped within a chunk of the third budget (300 reductions = 1200 elements).
        let n = built.load(Ordering::Relaxed);
        assert!((1100..=1300).contains(&n), "built {n}");

        // A source promising more than any machine holds is refused before it starts.
        let (mut c, calls) = hooked(100, usize::MAX);
        let r: Result<Vec<u64>, _> = c.collect_charged(0..u64::MAX, ELEM);
        let kind = r.err().and_then(|u| u.limit_kind()).map(|k| k.as_str());
        assert_eq!(kind, Some("memory_limit"));
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }
}
