//! The lowering's working vectors, kept per thread between [`Lowerer`]s.
//!
//! A [`Lowerer`] needs a handful of small vectors (variables, functions, the function stack,
//! scopes and their names); a short `Engine::eval` input allocated and freed about ten of
//! them, a sixth of its lowering. The vectors a finished `Lowerer` leaves behind are kept,
//! emptied, for the next one on the same thread; a nested lowering (one started while another
//! runs on this thread) simply starts with fresh ones.

use std::cell::Cell;

use super::{FnInfo, Lowerer, Scope, VarInfo};
use crate::syntax::ast::Name;

/// Vectors above this capacity are freed rather than kept (after a huge method).
const KEEP_CAP: usize = 1024;
/// At most this many spare inner vectors of each kind are kept.
const KEEP_SPARES: usize = 32;

/// Spare inner vectors handed out by [`Pool::u32s`] & co.
#[derive(Default)]
pub(super) struct Pool {
    u32s: Vec<Vec<u32>>,
    scope_vecs: Vec<Vec<Scope>>,
    names: Vec<Vec<(Name, u32)>>,
}

/// What a finished `Lowerer` hands back.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) vars: Vec<VarInfo>,
    pub(super) fns: Vec<FnInfo>,
    pub(super) fn_stack: Vec<u32>,
    pub(super) scopes: Vec<Vec<Scope>>,
    pub(super) pool: Pool,
}

thread_local! {
    static SPARE: Cell<Scratch> = Cell::new(Scratch::default());
}

/// The thread's spare vectors (empty ones when another `Lowerer` holds them).
pub(super) fn take() -> Scratch {
    SPARE.try_with(Cell::take).unwrap_or_default()
}

impl Pool {
    pub(super) fn u32s(&mut self) -> Vec<u32> {
        self.u32s.pop().unwrap_or_default()
    }

    pub(super) fn names(&mut self) -> Vec<(Name, u32)> {
        self.names.pop().unwrap_or_default()
    }

    /// A function's scope list holding its base scope.
    pub(super) fn base_scope(&mut self) -> Vec<Scope> {
        let mut v = self.scope_vecs.pop().unwrap_or_default();
        v.push(Scope {
            base: true,
            names: self.names(),
        });
        v
    }

    pub(super) fn put_names(&mut self, mut v: Vec<(Name, u32)>) {
        if v.capacity() > 0 && v.capacity() <= KEEP_CAP && self.names.len() < KEEP_SPARES {
            v.clear();
            self.names.push(v);
        }
    }

    pub(super) fn put_scopes(&mut self, mut v: Vec<Scope>) {
        for s in v.drain(..) {
            self.put_names(s.names);
        }
        if v.capacity() > 0 && v.capacity() <= KEEP_CAP && self.scope_vecs.len() < KEEP_SPARES {
            self.scope_vecs.push(v);
        }
    }

    fn put_u32s(&mut self, mut v: Vec<u32>) {
        if v.capacity() > 0 && v.capacity() <= KEEP_CAP && self.u32s.len() < KEEP_SPARES {
            v.clear();
            self.u32s.push(v);
        }
    }
}

fn kept<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    if v.capacity() > KEEP_CAP {
        Vec::new()
    } else {
        v
    }
}

impl Drop for Lowerer {
    fn drop(&mut self) {
        let mut pool = std::mem::take(&mut self.pool);
        for f in self.fns.drain(..) {
            pool.put_u32s(f.owned);
            pool.put_u32s(f.free);
        }
        for s in self.scopes.drain(..) {
            pool.put_scopes(s);
        }
        let scratch = Scratch {
            vars: kept(std::mem::take(&mut self.vars)),
            fns: kept(std::mem::take(&mut self.fns)),
            fn_stack: kept(std::mem::take(&mut self.fn_stack)),
            scopes: kept(std::mem::take(&mut self.scopes)),
            pool,
        };
        let _ = SPARE.try_with(|s| s.set(scratch));
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::lower::{Lowerer, Owner};

    /// Lowerers one after another on a thread reuse the vectors; a nested one gets fresh
    /// ones; the results are the same either way.
    #[test]
    fn reused_vectors_lower_the_same_code() {
        let (m, d) = crate::syntax::parse("a := 1. b := [:x | x + a]. c := a + 2. b value: c");
        assert!(d.is_empty());
        let stmts: Vec<&crate::syntax::ast::Stmt> = m
            .items
            .iter()
            .filter_map(|i| match i {
                crate::syntax::ast::Item::Stmt(s) => Some(s),
                _ => None,
            })
            .collect();
        let shape = |code: &std::sync::Arc<crate::interp::eval::FnCode>| {
            (
                code.ncells,
                code.nslots,
                code.blocks.len(),
                code.toplevel_slots.len(),
            )
        };
        let first = Lowerer::new(0, Owner::toplevel())
            .toplevel(&stmts, &[])
            .unwrap();
        for _ in 0..3 {
            let outer = Lowerer::new(0, Owner::toplevel());
            let inner = Lowerer::new(0, Owner::toplevel())
                .toplevel(&stmts, &[])
                .unwrap();
            let again = outer.toplevel(&stmts, &[]).unwrap();
            assert_eq!(shape(&inner), shape(&first));
            assert_eq!(shape(&again), shape(&first));
        }
    }
}
