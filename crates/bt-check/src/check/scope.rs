//! Variables and scopes: locals are declared by their first assignment, in
//! the method or block activation where that happens; the literal blocks of the control-flow
//! selectors are *inline* scopes (their parameters are theirs, their assignments belong to the
//! enclosing activation).
//!
//! Each variable carries its current static type and the known-remote flow fact. Changes
//! made inside a conditional branch or a loop are journaled so that, when the branch ends, the
//! variable's type becomes the union of what it was before and after (and the remote fact
//! holds only if it held on every path). The journal makes this cost proportional to the
//! assignments in the branch, not to the number of variables.

use std::collections::HashMap;

use super::types::Ty;
use crate::syntax::ast::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// A file's (or REPL input's) top level: its locals are program bindings.
    TopLevel,
    Method,
    Block,
    /// The literal block of a control-flow selector, or a match arm.
    Inline,
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    /// Current (flow-sensitive) type.
    pub ty: Ty,
    /// `x :: T := …`: the declared type.
    pub declared: Option<Ty>,
    pub read: bool,
    pub span: Span,
    /// Reported as W0301 when never read.
    pub report_unused: bool,
    /// Known-remote flow fact.
    pub remote: bool,
}

pub struct Scope {
    pub kind: ScopeKind,
    pub names: HashMap<String, usize>,
}

/// The scope stack plus the variable arena.
#[derive(Default)]
pub struct Scopes {
    pub stack: Vec<Scope>,
    pub vars: Vec<Var>,
    /// One journal per open conditional branch / loop: (variable, type before, remote before).
    journals: Vec<Vec<(usize, Ty, bool)>>,
}

impl Scopes {
    pub fn push(&mut self, kind: ScopeKind) {
        self.stack.push(Scope {
            kind,
            names: HashMap::new(),
        });
    }

    /// Pops a scope and answers the variables it declared.
    pub fn pop(&mut self) -> Vec<usize> {
        match self.stack.pop() {
            Some(s) => {
                let mut v: Vec<usize> = s.names.into_values().collect();
                v.sort_unstable();
                v
            }
            None => Vec::new(),
        }
    }

    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.stack
            .iter()
            .rev()
            .find_map(|s| s.names.get(name).copied())
    }

    /// Declares a variable in the innermost scope of the given kind set: parameters and pattern
    /// bindings go in the innermost scope, first assignments in the innermost activation.
    pub fn declare(&mut self, var: Var, in_activation: bool) -> usize {
        let idx = self.vars.len();
        let name = var.name.clone();
        self.vars.push(var);
        let scope = if in_activation {
            self.stack
                .iter_mut()
                .rev()
                .find(|s| s.kind != ScopeKind::Inline)
        } else {
            self.stack.last_mut()
        };
        if let Some(s) = scope {
            s.names.insert(name, idx);
        }
        idx
    }

    /// Whether the innermost activation is the top level.
    pub(crate) fn at_top_level(&self) -> bool {
        self.stack
            .iter()
            .rev()
            .find(|s| s.kind != ScopeKind::Inline)
            .is_some_and(|s| s.kind == ScopeKind::TopLevel)
    }

    /// Sets a variable's type (and remote fact), journaling the old values.
    pub fn set(&mut self, idx: usize, ty: Ty, remote: bool) {
        let Some(v) = self.vars.get_mut(idx) else {
            return;
        };
        if let Some(j) = self.journals.last_mut() {
            j.push((idx, v.ty.clone(), v.remote));
        }
        v.ty = ty;
        v.remote = remote;
    }

    /// Opens a branch: changes until [`Scopes::end_branch`] are merged with the values before.
    pub(crate) fn begin_branch(&mut self) {
        self.journals.push(Vec::new());
    }

    /// Closes a branch: each variable changed in it gets the union of its type before and
    /// after; the remote fact survives only if it held on both paths.
    pub(crate) fn end_branch(&mut self) {
        let Some(j) = self.journals.pop() else { return };
        let mut seen: Vec<usize> = Vec::new();
        for (idx, before, remote_before) in j {
            if seen.contains(&idx) {
                continue;
            }
            seen.push(idx);
            let Some(v) = self.vars.get(idx) else {
                continue;
            };
            let merged = if v.ty == before {
                before.clone()
            } else {
                Ty::union(vec![before.clone(), v.ty.clone()])
            };
            let remote = remote_before && v.remote;
            if let Some(parent) = self.journals.last_mut() {
                parent.push((idx, before, remote_before));
            }
            if let Some(v) = self.vars.get_mut(idx) {
                v.ty = merged;
                v.remote = remote;
            }
        }
    }

    pub fn mark_read(&mut self, idx: usize) {
        if let Some(v) = self.vars.get_mut(idx) {
            v.read = true;
        }
    }
}
