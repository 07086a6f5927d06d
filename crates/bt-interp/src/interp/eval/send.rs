//! Message dispatch: the per-process method cache, method and block activations, `super`,
//! does-not-understand and value-class accessors. Class-state atomicity and instantiation are
//! in `class_side`.

use crate::interp::block_code::ClosureExt;
use crate::interp::class::ClassExt;
use std::sync::Arc;

use crate::interp::class::Class;
use crate::interp::error::ErrorKind;
use crate::interp::eval::code::sel_arity;
use crate::interp::eval::code::{CompiledMethod, FnCode};
use crate::interp::eval::compile::Decided;
use crate::interp::eval::hit::{Hit, HitKind};
use crate::interp::eval::{
    Activation, CacheEntry, Closure, Ctx, Flow, Frame, Method, Unwind, VarCell,
};
use crate::value::{ClassRef, Instance, Sym, Value};

#[inline]
fn cache_index(key: usize, sel: Sym) -> usize {
    let h = (key >> 4) ^ sel.index().wrapping_mul(0x9E37_79B9);
    (h ^ (h >> 11)) & (super::CACHE_SIZE - 1)
}

/// Homes of blocks that arrived in a remote sync call (`REMOTE_HOME | call`): a `^` in them
/// unwinds to the call's handler, which relays it to the caller's node (`crate::dist::peer`).
pub(crate) const REMOTE_HOME: u64 = 1 << 62;

impl Ctx {
    /// The dispatch key of a receiver: class pointer, low bit set for class-side receivers.
    #[inline]
    fn dispatch_class<'v>(
        &'v self,
        v: &'v Value,
        tmp: &'v mut Option<ClassRef>,
    ) -> (&'v ClassRef, bool) {
        let c = &self.prog.core;
        match v {
            Value::Nil => (&c.undefined, false),
            Value::True => (&c.true_, false),
            Value::False => (&c.false_, false),
            Value::Int(_) | Value::BigInt(_) => (&c.integer, false),
            Value::Float(_) => (&c.float, false),
            Value::Char(_) => (&c.character, false),
            Value::Symbol(_) => (&c.symbol, false),
            Value::Str(_) => (&c.string, false),
            Value::Binary(_) => (&c.binary, false),
            Value::List(_) => (&c.list, false),
            Value::Array(_) => (&c.array, false),
            Value::Tuple(_) => (&c.tuple, false),
            Value::Dict(_) => (&c.dictionary, false),
            Value::Set(_) => (&c.set, false),
            Value::Bag(_) => (&c.bag, false),
            Value::Queue(_) => (&c.queue, false),
            Value::Interval(_) => (&c.interval, false),
            Value::Object(i) => (&i.class, false),
            Value::Class(k) => (k, true),
            Value::Meta(_) => (&c.metaclass, false),
            Value::Block(_) => (&c.block, false),
            Value::Native(n) => match n.0.class_ref() {
                Some(k) => (k, false),
                None => {
                    *tmp = Some(n.0.class());
                    (tmp.as_ref().unwrap_or(&c.object), false)
                }
            },
        }
    }

    /// Uncached lookup for a class (and side).
    pub(crate) fn lookup_in(
        &self,
        cls: &ClassRef,
        class_side: bool,
        sel: Sym,
    ) -> Option<(Method, ClassRef)> {
        if class_side {
            cls.lookup_class_side(sel)
                .or_else(|| self.prog.core.class.lookup(sel))
        } else {
            cls.lookup(sel)
        }
    }

    /// Cached lookup of `sel` for `recv`.
    #[inline(always)]
    pub(crate) fn lookup(&mut self, recv: &Value, sel: Sym) -> Option<Hit> {
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        if epoch != self.cache_epoch {
            for e in self.cache.iter_mut() {
                *e = CacheEntry {
                    key: 0,
                    sel: Sym::NONE,
                    cls: None,
                    hit: None,
                };
            }
            self.cache_epoch = epoch;
        }
        let mut tmp = None;
        let (cls, side) = self.dispatch_class(recv, &mut tmp);
        let key = Arc::as_ptr(cls) as usize | side as usize;
        let mut idx = cache_index(key, sel) & (self.cache.len() - 1);
        let e = &self.cache[idx];
        if e.key == key && e.sel == sel {
            return e.hit;
        }
        let cls = cls.clone();
        let hit = self.lookup_in(&cls, side, sel).map(|(m, d)| m.hit(&d, sel));
        if (self.cache.len() as u32) < self.cache_cap {
            // As many misses as entries: twice the entries (the old ones are dropped).
            self.cache_misses += 1;
            if self.cache_misses as usize >= self.cache.len() {
                self.cache = super::empty_cache(self.cache.len() * 2);
                self.cache_misses = 0;
                idx = cache_index(key, sel) & (self.cache.len() - 1);
            }
        }
        self.cache[idx] = CacheEntry {
            key,
            sel,
            cls: Some(cls),
            hit,
        };
        hit
    }

    pub(crate) fn send_impl(&mut self, recv: &Value, sel: Sym, args: &[Value]) -> Flow {
        self.tick()?;
        if let Value::Native(n) = recv {
            // Actor handles: a send from another process goes through the runtime.
            if let Some(r) = crate::interp::actor::intercept(self, n, recv, sel, args) {
                return r.map_err(Box::new);
            }
        }
        match self.lookup(recv, sel) {
            Some(hit) => self.call_hit(hit, recv, sel, args),
            None => self.dnu(recv, sel, args),
        }
    }

    /// Runs a method found by an uncached lookup.
    pub(crate) fn call_method(
        &mut self,
        m: &Method,
        defc: &ClassRef,
        recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Flow {
        self.call_hit(m.hit(defc, sel), recv, sel, args)
    }

    /// Runs a looked-up method.
    #[inline]
    pub(crate) fn call_hit(&mut self, hit: Hit, recv: &Value, sel: Sym, args: &[Value]) -> Flow {
        match hit.kind {
            HitKind::Compiled(_) => {
                let Some(cm) = hit.compiled() else {
                    return Ok(Value::Nil);
                };
                if args.len() != cm.code.nparams as usize {
                    return Err(self.arity_error(sel, args.len()).into());
                }
                self.invoke(cm, hit.class(), recv, args)
            }
            HitKind::Prim(p) => {
                if args.len() != hit.nargs as usize {
                    return Err(self.arity_error(sel, args.len()).into());
                }
                // A primitive that sends (a block, `printString` of a key) and raises
                // afterwards names itself: the outer pair is put back when it returns.
                let outer = (self.cur_sel, self.cur_cls);
                self.cur_sel = sel;
                self.cur_cls = hit.class().name;
                let r = match p.cost.charge(self, recv, args) {
                    Ok(()) => (p.f)(self, recv, args),
                    Err(e) => Err(e),
                };
                (self.cur_sel, self.cur_cls) = outer;
                r.map_err(Box::new)
            }
            HitKind::Getter(i) => match recv {
                Value::Object(inst) => {
                    Ok(inst.fields.get(i as usize).cloned().unwrap_or(Value::Nil))
                }
                _ => Ok(Value::Nil),
            },
            HitKind::Setter(i) => {
                let Some(a) = args.first() else {
                    return Err(self.arity_error(sel, 0).into());
                };
                match recv {
                    Value::Object(inst) => {
                        let mut fields = inst.fields.to_vec();
                        if let Some(f) = fields.get_mut(i as usize) {
                            *f = a.clone();
                        }
                        Ok(Value::Object(Arc::new(Instance {
                            class: inst.class.clone(),
                            fields: fields.into(),
                        })))
                    }
                    _ => Ok(recv.clone()),
                }
            }
            HitKind::Constructor => match recv {
                Value::Class(c) => {
                    let c = c.clone();
                    self.construct(&c, sel, args)
                }
                _ => Err(self
                    .err(ErrorKind::RuntimeError, "constructor sent to a non-class")
                    .into()),
            },
        }
    }

    fn arity_error(&self, sel: Sym, got: usize) -> Unwind {
        self.err(
            ErrorKind::ArityMismatch,
            format!(
                "Wrong number of arguments: {} expects {} but was called with {}",
                sel,
                sel_arity(sel.as_str()),
                got
            ),
        )
    }

    /// Enters one activation (depth and native stack checks). Always inlined: out of line
    /// it cost a call and an `Unwind`-sized result in memory on every activation.
    #[inline(always)]
    pub(crate) fn enter(&mut self) -> Result<(), Unwind> {
        let marker = 0u8;
        if self.depth >= self.max_depth || (&marker as *const u8 as usize) < self.stack_limit {
            return Err(self.enter_failed());
        }
        self.depth += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn enter_failed(&self) -> Unwind {
        self.stack_overflow()
    }

    /// Sets up slots and cells for a function body; answers (slot base, cell base).
    #[inline]
    pub(super) fn push_frame(&mut self, code: &FnCode, args: &[Value]) -> (usize, usize) {
        let base = self.stack.len();
        self.stack.extend_from_slice(args);
        let cbase = self.frame_at(code, base);
        (base, cbase)
    }

    /// Completes a frame whose arguments are already at `stack[base..]`: the other slots and
    /// the cells. Answers the cell base.
    #[inline(always)]
    pub(crate) fn frame_at(&mut self, code: &FnCode, base: usize) -> usize {
        let want = base + code.nslots as usize;
        if self.stack.len() < want {
            self.stack.resize(want, Value::Nil);
        }
        let cbase = self.cells.len();
        if code.ncells > 0 {
            self.make_cells(code, base, cbase);
        }
        cbase
    }

    /// The cells of a new frame (out of line: most methods have none, and the frame set-up
    /// of those stays small). Owned by this process: used without a lock until another one
    /// meets them (`VarCell`).
    #[inline(never)]
    fn make_cells(&mut self, code: &FnCode, base: usize, cbase: usize) {
        let me = self.owner;
        for _ in 0..code.ncells {
            self.cells.push(Arc::new(VarCell::owned(Value::Nil, me)));
        }
        for &(p, c) in &code.param_cells {
            let v = self.stack[base + p as usize].clone();
            drop(self.cells[cbase + c as usize].replace(me, v));
        }
    }

    #[inline(always)]
    pub(crate) fn pop_frame(&mut self, base: usize, cbase: usize) {
        while self.stack.len() > base {
            if let Some(v) = self.stack.pop() {
                crate::interp::eval::exec::drop_fast(v);
            }
        }
        if self.cells.len() > cbase {
            self.pop_cells(cbase);
        }
    }

    /// Drops the arguments a send pushed at `stack[base..]` (a call answered without an
    /// activation).
    #[inline(always)]
    fn pop_args(&mut self, base: usize) {
        while self.stack.len() > base {
            if let Some(v) = self.stack.pop() {
                crate::interp::eval::exec::drop_fast(v);
            }
        }
    }

    #[inline(never)]
    fn pop_cells(&mut self, cbase: usize) {
        self.cells.truncate(cbase);
    }

    /// A send whose arguments the caller pushed on the slot stack at `base`: a compiled
    /// method takes them in place as its parameters.
    #[inline]
    pub(crate) fn send_at(&mut self, recv: &Value, sel: Sym, base: usize) -> Flow {
        if let Value::Native(n) = recv {
            // A sync call to an actor moves the arguments from the stack into its message.
            if let Some(r) = self.intercept_send_at(n, recv, sel, base) {
                return r.map_err(Box::new);
            }
            // Other handles and proxies: `send_impl` routes them through the runtime.
            let args: smallvec::SmallVec<[Value; 4]> = self.stack.drain(base..).collect();
            return self.send_impl(recv, sel, &args);
        }
        if let Err(e) = self.tick() {
            self.stack.truncate(base);
            return Err(e.into());
        }
        let hit = self.lookup(recv, sel);
        self.dispatch_at(hit, recv, sel, base)
    }

    /// A send from a site with an inline cache (`recv` is not a runtime object).
    #[inline(always)]
    pub(crate) fn send_cached(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        sel: Sym,
        base: usize,
    ) -> Flow {
        let key = match self.cached_send_start(recv, sel, base) {
            Ok(key) => key,
            Err(done) => return done,
        };
        let (hit, _) = self.cached_lookup(ic, recv, key, sel);
        self.dispatch_at(hit, recv, sel, base)
    }

    /// [`Ctx::send_cached`] for a site whose usual target is a plain compiled method (the
    /// self-send of a recursive method, `self fib: n - 1`). The caller pushed exactly the
    /// selector's arguments at `base` (a self-send site always does). The activation is inlined here,
    /// so the call skips `invoke_at`'s own call and the hit's second dispatch. Anything else
    /// (a primitive, an accessor, a method that rebinds `self` or touches class state, an
    /// arity mismatch) takes the general `dispatch_at`.
    #[inline(always)]
    pub(crate) fn send_cached_compiled(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        sel: Sym,
        base: usize,
    ) -> Flow {
        // `self` in a method is an instance or a class: their dispatch keys without the
        // general match.
        let key = match recv {
            Value::Object(i) => Arc::as_ptr(&i.class) as usize,
            Value::Class(k) => Arc::as_ptr(k) as usize | 1,
            _ => return self.send_cached(ic, recv, sel, base),
        };
        if let Err(e) = self.tick() {
            self.stack.truncate(base);
            return Err(e.into());
        }
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        // Every caller pushed exactly the selector's arguments, and a plain entry's method
        // takes that many: no arity test here. One read of the cache entry serves all three
        // outcomes.
        let hit = match ic.entry(key, epoch) {
            Some(e) => {
                if let Some((cm, defc)) = e.plain() {
                    debug_assert_eq!(self.stack.len() - base, cm.code.nparams as usize);
                    let code = &cm.code;
                    // A guard body decided from the pushed arguments: a leaf arm (`[n]`,
                    // `[0]`) answers without an activation — unless the depth limit would
                    // end the call, which the activation then raises.
                    let arm = match &code.guard {
                        Some(g) => match g.decide(self, base) {
                            Decided::Leaf(v) if self.depth < self.max_depth => {
                                self.pop_args(base);
                                return Ok(v);
                            }
                            Decided::Arm(t) => Some(t),
                            _ => None,
                        },
                        None => None,
                    };
                    let r =
                        self.activation(cm, defc, recv, base, |c, f| plain_body(code, arm, c, f))?;
                    return Ok(r.unwrap_or_else(|answer| answer));
                }
                Some(e.hit())
            }
            None => self.cache_miss(ic, recv, key, epoch, sel),
        };
        self.dispatch_at(hit, recv, sel, base)
    }

    /// `self sel: local + k` (a one-argument self-send whose argument is an Integer local
    /// plus a literal) when the site's entry is a plain compiled method valid at the current
    /// epoch with Integer arithmetic not overridden: the argument is computed, the callee's
    /// guard decided from it in a register, and a leaf arm answers without the argument ever
    /// being pushed; otherwise the argument becomes the activation's parameter. `None`: not
    /// this case (nothing was evaluated or counted; the caller takes the general send).
    /// Computing the argument first or after the entry check is the same: with arithmetic not
    /// overridden it sends nothing.
    #[inline(always)]
    pub(crate) fn self_send_add(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        sel: Sym,
        slot: usize,
        k: i64,
    ) -> Option<Flow> {
        let key = match recv {
            Value::Object(i) => Arc::as_ptr(&i.class) as usize,
            Value::Class(c) => Arc::as_ptr(c) as usize | 1,
            _ => return None,
        };
        let Some(Value::Int(i)) = self.stack.get(slot) else {
            return None;
        };
        let i = *i;
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        let (cm, defc) = ic.entry(key, epoch)?.plain_int()?;
        let x = i.checked_add(k)?;
        // The send's reduction. A preemption (the slow tick) may change the program: the
        // send then goes the general way with the argument it computed.
        self.reductions -= 1;
        if self.reductions == 0 {
            return Some(self.self_send_slow_tick(ic, recv, sel, x));
        }
        debug_assert_eq!(cm.code.nparams, 1);
        let code = &cm.code;
        let mut arm = None;
        if let Some(g) = &code.guard {
            if g.on_only_param() {
                let t = g.test_int(x);
                // A leaf arm answers with no activation — unless the depth limit would end
                // the call, which the activation then raises.
                if self.depth < self.max_depth {
                    if let Some(v) = g.leaf_int(t, x) {
                        return Some(Ok(v));
                    }
                }
                arm = Some(t);
            }
        }
        let base = self.stack.len();
        self.stack.push(Value::Int(x));
        Some(
            self.activation(cm, defc, recv, base, |c, f| plain_body(code, arm, c, f))
                .map(|r| r.unwrap_or_else(|answer| answer)),
        )
    }

    /// [`Ctx::self_send_add`] when its reduction ran the slow tick: the argument pushed and
    /// the cached send made in general.
    #[inline(never)]
    fn self_send_slow_tick(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        sel: Sym,
        x: i64,
    ) -> Flow {
        self.tick_slow()?;
        let base = self.stack.len();
        self.stack.push(Value::Int(x));
        let Some(key) = self.dispatch_key(recv) else {
            return self.send_at(recv, sel, base);
        };
        let (hit, _) = self.cached_lookup(ic, recv, key, sel);
        self.dispatch_at(hit, recv, sel, base)
    }

    /// Integer arithmetic is the built-in one (no arithmetic method installed on Integer).
    #[inline(always)]
    pub(crate) fn int_arith_plain(&self) -> bool {
        !self
            .prog
            .arith_overridden
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The start of a send from a site with an inline cache: the receiver's dispatch key and
    /// the reduction. `Err` holds the whole send's outcome when it ended here (a runtime
    /// object, routed by `send_at`, or a preemption error).
    #[inline(always)]
    pub(crate) fn cached_send_start(
        &mut self,
        recv: &Value,
        sel: Sym,
        base: usize,
    ) -> Result<usize, Flow> {
        let Some(key) = self.dispatch_key(recv) else {
            return Err(self.send_at(recv, sel, base));
        };
        if let Err(e) = self.tick() {
            self.stack.truncate(base);
            return Err(Err(e.into()));
        }
        Ok(key)
    }

    /// The method `sel` finds on `recv` (dispatch key `key`) through the site's inline cache,
    /// with the program epoch it is valid for.
    #[inline(always)]
    pub(crate) fn cached_lookup(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        key: usize,
        sel: Sym,
    ) -> (Option<Hit>, u64) {
        let epoch = self.prog.epoch.load(std::sync::atomic::Ordering::Acquire);
        if let Some(h) = ic.get(key, epoch) {
            return (Some(h), epoch);
        }
        (self.cache_miss(ic, recv, key, epoch, sel), epoch)
    }

    /// A send site's cache missed: the full lookup, recorded in the site's cache.
    #[inline(never)]
    pub(super) fn cache_miss(
        &mut self,
        ic: &crate::interp::eval::hit::InlineCache,
        recv: &Value,
        key: usize,
        epoch: u64,
        sel: Sym,
    ) -> Option<Hit> {
        let hit = self.lookup(recv, sel);
        if let Some(h) = hit {
            ic.fill(&*self.prog, key, epoch, h, self.int_arith_plain());
        }
        hit
    }

    /// The dispatch key of a receiver (None for runtime objects, which the actor runtime routes).
    #[inline(always)]
    pub(crate) fn dispatch_key(&self, v: &Value) -> Option<usize> {
        let c = &self.prog.core;
        let cls: &ClassRef = match v {
            Value::Object(i) => &i.class,
            Value::Class(k) => return Some(Arc::as_ptr(k) as usize | 1),
            Value::Int(_) | Value::BigInt(_) => &c.integer,
            Value::Native(_) => return None,
            other => {
                let mut tmp = None;
                let (k, side) = self.dispatch_class(other, &mut tmp);
                return Some(Arc::as_ptr(k) as usize | side as usize);
            }
        };
        Some(Arc::as_ptr(cls) as usize)
    }

    /// Runs a looked-up method with its arguments at `stack[base..]`.
    #[inline(always)]
    pub(crate) fn dispatch_at(
        &mut self,
        hit: Option<Hit>,
        recv: &Value,
        sel: Sym,
        base: usize,
    ) -> Flow {
        if let Some(h) = hit {
            let n = self.stack.len() - base;
            match h.kind {
                HitKind::Compiled(_) => {
                    if let Some(cm) = h.compiled() {
                        if n == cm.code.nparams as usize {
                            return self.invoke_at(cm, h.class(), recv, base);
                        }
                    }
                }
                // Value-class accessors without the generic argument shuffle.
                HitKind::Getter(i) if n == 0 => {
                    if let Value::Object(inst) = recv {
                        return Ok(crate::interp::eval::field::field_clone(
                            &inst.fields,
                            i as usize,
                        ));
                    }
                }
                // `Point x: 1 y: 2`: the arguments become the fields (no copies).
                HitKind::Constructor => {
                    if let Value::Class(c) = recv {
                        if sel == c.ctor_sel && n == c.field_names.len() && !c.is_abstract {
                            let fields: crate::value::Fields = self.stack.drain(base..).collect();
                            return Ok(Value::Object(Arc::new(Instance {
                                class: c.clone(),
                                fields,
                            })));
                        }
                    }
                }
                HitKind::Setter(i) if n == 1 => {
                    if let Value::Object(inst) = recv {
                        let a = self.stack.pop().unwrap_or(Value::Nil);
                        let mut fields = crate::value::clone_fields(&inst.fields);
                        if let Some(slot) = fields.get_mut(i as usize) {
                            *slot = a;
                        }
                        return Ok(Value::Object(Arc::new(Instance {
                            class: inst.class.clone(),
                            fields,
                        })));
                    }
                }
                _ => {}
            }
        }
        match self.stack.len() - base {
            0 => self.finish_send(hit, recv, sel, &[]),
            1 => {
                let a = self.stack.pop().unwrap_or(Value::Nil);
                self.finish_send(hit, recv, sel, std::slice::from_ref(&a))
            }
            2 => {
                let b = self.stack.pop().unwrap_or(Value::Nil);
                let a = self.stack.pop().unwrap_or(Value::Nil);
                self.finish_send(hit, recv, sel, &[a, b])
            }
            _ => {
                let args: Vec<Value> = self.stack.drain(base..).collect();
                self.finish_send(hit, recv, sel, &args)
            }
        }
    }

    #[inline]
    fn finish_send(&mut self, hit: Option<Hit>, recv: &Value, sel: Sym, args: &[Value]) -> Flow {
        match hit {
            Some(h) => self.call_hit(h, recv, sel, args),
            None => self.dnu(recv, sel, args),
        }
    }

    pub(crate) fn new_home(&mut self) -> u64 {
        let h = self.next_home;
        self.next_home += 1;
        h
    }

    /// Runs a compiled method on `recv`.
    pub(crate) fn invoke(
        &mut self,
        cm: &CompiledMethod,
        defc: &Class,
        recv: &Value,
        args: &[Value],
    ) -> Flow {
        let base = self.stack.len();
        self.stack.extend_from_slice(args);
        self.invoke_at(cm, defc, recv, base)
    }

    /// Runs a compiled method whose arguments are at `stack[base..]`.
    pub(crate) fn invoke_at(
        &mut self,
        cm: &CompiledMethod,
        defc: &Class,
        recv: &Value,
        base: usize,
    ) -> Flow {
        let code = &cm.code;
        if code.special {
            return self.invoke_special(cm, defc, recv, base);
        }
        let r = self.activation(cm, defc, recv, base, |c, f| code.op.run(c, f))?;
        Ok(r.unwrap_or_else(|answer| answer))
    }

    /// [`Ctx::invoke_at`] for a method that rebinds `self` or touches class state (kept out
    /// of line so the common activation stays small).
    #[inline(never)]
    fn invoke_special(
        &mut self,
        cm: &CompiledMethod,
        defc: &Class,
        recv: &Value,
        base: usize,
    ) -> Flow {
        let code = &cm.code;
        let r = self.activation(cm, defc, recv, base, |c, f| {
            if let Some(sv) = code.self_var {
                c.set_var(f, sv, recv.clone());
            }
            if cm.class_side && code.touches_class_state {
                c.run_class_state_method(code, defc, recv, base, f.cbase, f.home, cm.class_side)
            } else if cm.class_side && code.class_state_scope {
                c.run_class_state_scope(code, defc, recv, f)
            } else {
                code.op.run(c, f)
            }
        })?;
        Ok(r.unwrap_or_else(|answer| answer))
    }

    /// Runs `body` in a new activation of `cm` on `recv` with the arguments at
    /// `stack[base..]`: depth check, slots and cells, the activation record, all undone
    /// afterwards. Answers `Ok(v)` for the body's value and `Err(v)` for a `^ v` that returned
    /// from this activation.
    #[inline(always)]
    pub(crate) fn activation(
        &mut self,
        cm: &CompiledMethod,
        defc: &Class,
        recv: &Value,
        base: usize,
        body: impl FnOnce(&mut Ctx, &Frame) -> Flow,
    ) -> Result<Result<Value, Value>, Box<Unwind>> {
        if let Err(e) = self.enter() {
            self.stack.truncate(base);
            return Err(e.into());
        }
        let cbase = self.frame_at(&cm.code, base);
        let home = self.new_home();
        self.acts.push(Activation {
            home,
            class: defc.name,
            sel: cm.selector,
            class_side: cm.class_side,
            call_loc: self.cur_loc,
        });
        let f = Frame {
            recv,
            base,
            cbase,
            upvals: &[],
            home,
            mclass: Some(defc),
            mside: cm.class_side,
        };
        let r = body(self, &f);
        self.acts.pop();
        self.pop_frame(base, cbase);
        self.depth -= 1;
        match r {
            Ok(v) => Ok(Ok(v)),
            Err(b) if matches!(&*b, Unwind::Return { home: h, .. } if *h == home) => match *b {
                Unwind::Return { value, .. } => Ok(Err(value)),
                other => Err(Box::new(other)),
            },
            Err(e) => Err(e),
        }
    }

    /// Runs a block closure.
    pub fn invoke_block(&mut self, c: &Arc<Closure>, args: &[Value]) -> Flow {
        self.invoke_block_by(c, args.len(), |stack| {
            stack.extend(args.iter().map(clone_arg))
        })
    }

    /// Runs a block closure with arguments moved into its frame (each left `nil`): a
    /// collection handed over this way is held by the block's parameter alone, so the
    /// block may update it in place (`inject:into:`'s accumulator).
    pub fn invoke_block_moving(&mut self, c: &Arc<Closure>, args: &mut [Value]) -> Flow {
        self.invoke_block_by(c, args.len(), |stack| {
            stack.extend(args.iter_mut().map(|a| std::mem::replace(a, Value::Nil)))
        })
    }

    /// Runs a block closure whose `n` arguments `push` puts on the stack.
    #[inline(always)]
    fn invoke_block_by(
        &mut self,
        c: &Arc<Closure>,
        n: usize,
        push: impl FnOnce(&mut Vec<Value>),
    ) -> Flow {
        let code = c.fn_code();
        if n != code.nparams as usize {
            return Err(self
                .err(
                    ErrorKind::ArityMismatch,
                    format!(
                        "Wrong number of arguments: block expects {} but was called with {}",
                        code.nparams, n
                    ),
                )
                .into());
        }
        self.enter()?;
        let base = self.stack.len();
        push(&mut self.stack);
        let cbase = self.frame_at(code, base);
        let f = Frame {
            recv: &c.recv,
            base,
            cbase,
            upvals: &c.upvals,
            home: c.home,
            mclass: c.mclass.as_deref(),
            mside: c.mside,
        };
        let r = code.op.run(self, &f);
        self.pop_frame(base, cbase);
        self.depth -= 1;
        r
    }

    /// Is the method activation `home` still running in this process? A relay home
    /// ([`REMOTE_HOME`], `crate::interp::actor::relay`) is live while the call that brought
    /// its block is being handled here: that call relays the `^` to its caller.
    pub fn home_live(&self, home: u64) -> bool {
        if home >> 62 == 1 {
            return self.proc.relays.contains(&home);
        }
        self.acts.binary_search_by_key(&home, |a| a.home).is_ok()
    }

    /// `super sel args` from a method defined in `mclass` on side `mside`.
    pub(crate) fn super_send(
        &mut self,
        mclass: Option<&Class>,
        mside: bool,
        recv: &Value,
        sel: Sym,
        args: &[Value],
    ) -> Flow {
        self.tick()?;
        let found = match mclass {
            None => None,
            Some(mc) => {
                if mside {
                    match &mc.superclass {
                        Some(s) => self.lookup_in(s, true, sel),
                        None => self.prog.core.class.lookup(sel),
                    }
                } else {
                    mc.superclass.as_ref().and_then(|s| s.lookup(sel))
                }
            }
        };
        match found {
            Some((m, d)) => self.call_method(&m, &d, recv, sel, args),
            None => self.dnu(recv, sel, args),
        }
    }

    /// Does-not-understand: sends `doesNotUnderstand:args:` unless it is the default, in which
    /// case the `does_not_understand` error is raised directly.
    pub(crate) fn dnu(&mut self, recv: &Value, sel: Sym, args: &[Value]) -> Flow {
        let dsel = self.prog.syms.dnu;
        if let Some(hit) = self.lookup(recv, dsel) {
            if !hit.is_prim() {
                let list = Value::list(args.iter().cloned());
                return self.call_hit(hit, recv, dsel, &[Value::Symbol(sel), list]);
            }
        }
        Err(self.dnu_error(recv, sel).into())
    }

    pub fn dnu_error(&self, recv: &Value, sel: Sym) -> Unwind {
        let name = self.class_name_of(recv);
        let cls = Sym::new(&name);
        self.err_full(
            ErrorKind::DoesNotUnderstand,
            format!("{name} does not understand '{sel}'"),
            Some(DNU_HINT.to_string()),
            Some(sel),
            Some(cls),
        )
    }

    /// Does `recv` understand `sel` (ignoring doesNotUnderstand: overrides)?
    pub fn responds_to(&mut self, recv: &Value, sel: Sym) -> bool {
        self.lookup(recv, sel).is_some()
    }
}

/// A copy of a block argument: an immediate's bits copied in line, not a call of
/// `Value::clone` (the arguments of most block calls are numbers, characters or symbols).
#[inline(always)]
fn clone_arg(v: &Value) -> Value {
    match v {
        Value::Nil => Value::Nil,
        Value::True => Value::True,
        Value::False => Value::False,
        Value::Int(i) => Value::Int(*i),
        Value::Float(x) => Value::Float(*x),
        Value::Char(ch) => Value::Char(*ch),
        Value::Symbol(s) => Value::Symbol(*s),
        _ => v.clone(),
    }
}

/// The body of a plain method's activation from a self-send: the arm its guard already
/// chose, the guard body (no call into its closure), or the method's closure. Inlined into
/// the activation (a call of its own would cost ~27 instructions a recursion entry).
#[inline(always)]
fn plain_body(code: &FnCode, arm: Option<bool>, c: &mut Ctx, f: &Frame) -> Flow {
    match (&code.guard, arm) {
        (Some(g), Some(t)) => g.run_arm(t, c, f),
        (Some(g), None) => g.run(c, f),
        (None, _) => code.op.run(c, f),
    }
}

/// The hint of a `does_not_understand` error.
pub(crate) const DNU_HINT: &str = "Check spelling or use 'respondsTo:' to verify method exists";
