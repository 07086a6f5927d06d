//! The lowerer's bookkeeping of functions, variables and scopes during phase 1: which
//! function is being lowered, declaring a variable at its first assignment (in the right
//! scope: a real block's own, or the enclosing one for inlined control-flow blocks), looking
//! names up through the enclosing functions and noting captures for phase 2 (`resolve`).

use super::*;

impl Lowerer {
    pub(super) fn cur_fn(&self) -> u32 {
        *self.fn_stack.last().unwrap_or(&0)
    }

    pub(super) fn begin_fn(&mut self, params: &[ast::Param]) -> u32 {
        let fid = self.fns.len() as u32;
        let (owned, free) = (self.pool.u32s(), self.pool.u32s());
        self.fns.push(FnInfo {
            nparams: params.len() as u32,
            owned,
            free,
        });
        self.fn_stack.push(fid);
        let base = self.pool.base_scope();
        self.scopes.push(base);
        for (i, p) in params.iter().enumerate() {
            let id = self.new_var(fid, Some(i as u32), None);
            self.scopes.last_mut().unwrap()[0]
                .names
                .push((p.name.name.clone(), id));
        }
        fid
    }

    pub(super) fn end_fn(&mut self) {
        self.fn_stack.pop();
        if let Some(s) = self.scopes.pop() {
            self.pool.put_scopes(s);
        }
    }

    pub(super) fn new_var(&mut self, owner: u32, param: Option<u32>, binding: Option<Sym>) -> u32 {
        let id = self.vars.len() as u32;
        self.vars.push(VarInfo {
            owner,
            captured: false,
            param,
            binding,
        });
        self.fns[owner as usize].owned.push(id);
        id
    }

    /// Finds a visible variable; marks it captured when it belongs to an enclosing function.
    pub(super) fn lookup(&mut self, name: &str) -> Option<u32> {
        let nfn = self.scopes.len();
        for fi in (0..nfn).rev() {
            for sc in self.scopes[fi].iter().rev() {
                if let Some((_, id)) = sc.names.iter().rev().find(|(n, _)| n.as_str() == name) {
                    let id = *id;
                    self.note_use(id);
                    return Some(id);
                }
            }
        }
        None
    }

    /// Records that the current function uses `id` (capture bookkeeping).
    pub(super) fn note_use(&mut self, id: u32) {
        let owner = self.vars[id as usize].owner;
        let cur = self.cur_fn();
        if owner != cur {
            self.vars[id as usize].captured = true;
            for k in (0..self.fn_stack.len()).rev() {
                let f = self.fn_stack[k];
                if f == owner {
                    break;
                }
                if !self.fns[f as usize].free.contains(&id) {
                    self.fns[f as usize].free.push(id);
                }
            }
        }
    }

    /// Declares `name` in the current function's base scope.
    pub(super) fn declare(&mut self, name: &str) -> u32 {
        let fid = self.cur_fn();
        let binding = if self.toplevel && fid == 0 {
            Some(Sym::new(name))
        } else {
            None
        };
        let id = self.new_var(fid, None, binding);
        let scopes = self.scopes.last_mut().unwrap();
        let base = scopes.iter_mut().rev().find(|s| s.base).unwrap();
        base.names.push((Name::new(name), id));
        id
    }

    /// Declares `name` in the innermost scope (inlined-block parameters, pattern variables).
    pub(super) fn declare_inner(&mut self, name: &str) -> u32 {
        let fid = self.cur_fn();
        let id = self.new_var(fid, None, None);
        self.scopes
            .last_mut()
            .unwrap()
            .last_mut()
            .unwrap()
            .names
            .push((Name::new(name), id));
        id
    }

    pub(super) fn push_scope(&mut self) {
        let names = self.pool.names();
        self.scopes
            .last_mut()
            .unwrap()
            .push(Scope { base: false, names });
    }

    pub(super) fn pop_scope(&mut self) {
        if let Some(s) = self.scopes.last_mut().unwrap().pop() {
            self.pool.put_names(s.names);
        }
    }

    pub(super) fn in_block(&self) -> bool {
        self.fn_stack.len() > 1
    }
}
