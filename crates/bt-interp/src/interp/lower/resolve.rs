//! Lowering phase 2: once a whole function is seen, every pending variable reference becomes
//! a stack slot, an owned cell or an upvalue, and each function gets its slot/cell counts and
//! upvalue sources.

use super::*;

impl Lowerer {
    /// Per variable: (slot or cell index).
    pub(super) fn layout(&self) -> Vec<u32> {
        let mut pos = vec![0u32; self.vars.len()];
        for (fid, f) in self.fns.iter().enumerate() {
            let mut slot = f.nparams;
            let mut cell = 0u32;
            // Captured bindings of a top-level unit take the first cells, in declaration
            // order (the others are slots like any local).
            let cell_binding = |info: &VarInfo| info.binding.is_some() && info.captured;
            if self.toplevel && fid == 0 {
                for &v in &f.owned {
                    if cell_binding(&self.vars[v as usize]) {
                        pos[v as usize] = cell;
                        cell += 1;
                    }
                }
            }
            for &v in &f.owned {
                let info = &self.vars[v as usize];
                if cell_binding(info) && self.toplevel && fid == 0 {
                    continue;
                }
                if info.captured {
                    pos[v as usize] = cell;
                    cell += 1;
                } else if let Some(p) = info.param {
                    pos[v as usize] = p;
                } else {
                    pos[v as usize] = slot;
                    slot += 1;
                }
            }
        }
        pos
    }

    pub(super) fn resolve(&self, id: u32, fid: u32, layout: &[u32]) -> VarRef {
        let v = &self.vars[id as usize];
        if v.owner == fid {
            if v.captured {
                VarRef::Cell(layout[id as usize])
            } else {
                VarRef::Local(layout[id as usize])
            }
        } else {
            let i = self.fns[fid as usize]
                .free
                .iter()
                .position(|x| *x == id)
                .unwrap_or(0);
            VarRef::Upval(i as u32)
        }
    }

    pub(super) fn fill(&self, code: &mut FnCode, fid: u32, layout: &[u32]) {
        let f = &self.fns[fid as usize];
        code.fid = fid;
        code.file = self.file;
        code.nparams = f.nparams;
        let mut nslots = f.nparams;
        let mut ncells = 0;
        let mut names = Vec::new();
        let mut slot_names = Vec::new();
        for &v in &f.owned {
            let info = &self.vars[v as usize];
            if let (true, Some(b), false) = (self.toplevel && fid == 0, info.binding, info.captured)
            {
                slot_names.push((layout[v as usize], b));
            }
            if info.captured {
                ncells = ncells.max(layout[v as usize] + 1);
                if let Some(p) = info.param {
                    code.param_cells.push((p, layout[v as usize]));
                }
                if let (true, Some(b)) = (self.toplevel && fid == 0, info.binding) {
                    names.push((layout[v as usize], b));
                }
            } else if info.param.is_none() {
                nslots = nslots.max(layout[v as usize] + 1);
            }
        }
        names.sort_by_key(|(i, _)| *i);
        code.toplevel_names = names.into_iter().map(|(_, b)| b).collect();
        code.toplevel_slots = slot_names;
        code.nslots = nslots;
        code.ncells = ncells;
        let mut body = std::mem::take(&mut code.body);
        self.fix(&mut body, fid, layout);
        code.body = body;
        code.is_toplevel = self.toplevel && fid == 0;
        crate::interp::eval::compile::compile_body(code);
    }

    pub(super) fn fix_ref(&self, r: &mut VarRef, fid: u32, layout: &[u32]) {
        if let VarRef::Pending(id) = *r {
            *r = self.resolve(id, fid, layout);
        }
    }

    pub(super) fn fix_opt(&self, b: &mut Option<(VarRef, bool)>, fid: u32, layout: &[u32]) {
        if let Some((r, _)) = b {
            self.fix_ref(r, fid, layout);
        }
    }

    pub(super) fn fix_pat(&self, p: &mut Pat, fid: u32, layout: &[u32]) {
        match p {
            Pat::Bind(r, _) => self.fix_ref(r, fid, layout),
            Pat::Typed(b, _) => self.fix_opt(b, fid, layout),
            Pat::Tuple(ps) => ps.iter_mut().for_each(|p| self.fix_pat(p, fid, layout)),
            Pat::Array(ps, rest) | Pat::List(ps, rest) => {
                ps.iter_mut().for_each(|p| self.fix_pat(p, fid, layout));
                if let Some(rest) = rest {
                    self.fix_opt(rest, fid, layout);
                }
            }
            Pat::Dict(es) => es
                .iter_mut()
                .for_each(|(_, p)| self.fix_pat(p, fid, layout)),
            Pat::ResultOk(p) | Pat::ResultErr(p) => self.fix_pat(p, fid, layout),
            Pat::Binary(segs) => {
                for s in segs {
                    match &mut s.kind {
                        BinSegKind::Int(b) | BinSegKind::Rest(b) | BinSegKind::Utf8(b) => {
                            self.fix_opt(b, fid, layout)
                        }
                        BinSegKind::Lit(_) => {}
                    }
                }
            }
            Pat::Wild | Pat::Lit(_) | Pat::Nil => {}
        }
    }

    pub(super) fn fix(&self, n: &mut Node, fid: u32, layout: &[u32]) {
        match n {
            Node::Nil | Node::Const(_) | Node::SelfRef | Node::Global(..) => {}
            Node::Var(r) => self.fix_ref(r, fid, layout),
            Node::SetVar(r, e) => {
                self.fix_ref(r, fid, layout);
                self.fix(e, fid, layout);
            }
            Node::Field(fd) => {
                self.fix(&mut fd.recv, fid, layout);
                if let Some(v) = &mut fd.value {
                    self.fix(v, fid, layout);
                }
            }
            Node::Send(s) | Node::Super(s) | Node::Cast(s) => {
                self.fix(&mut s.recv, fid, layout);
                s.args.iter_mut().for_each(|a| self.fix(a, fid, layout));
            }
            Node::Bin(b) => {
                self.fix(&mut b.lhs, fid, layout);
                self.fix(&mut b.rhs, fid, layout);
            }
            Node::Cascade(c) => {
                self.fix(&mut c.recv, fid, layout);
                for (_, args, _) in &mut c.parts {
                    args.iter_mut().for_each(|a| self.fix(a, fid, layout));
                }
            }
            Node::Block(code) => {
                if let Some(code) = Arc::get_mut(code) {
                    let inner = code.fid;
                    self.fill(code, inner, layout);
                    code.upvals = self.fns[inner as usize]
                        .free
                        .iter()
                        .map(|&v| {
                            if self.vars[v as usize].owner == fid {
                                UpvalSrc::Cell(layout[v as usize])
                            } else {
                                let i = self.fns[fid as usize]
                                    .free
                                    .iter()
                                    .position(|x| *x == v)
                                    .unwrap_or(0);
                                UpvalSrc::Upval(i as u32)
                            }
                        })
                        .collect();
                }
                // Filled and compiled: the root lists it (block identity on the wire).
                self.blocks.borrow_mut().push(code.clone());
            }
            Node::List(v) | Node::Array(v) | Node::Seq(v) => {
                v.iter_mut().for_each(|x| self.fix(x, fid, layout))
            }
            Node::Dict(v) => v.iter_mut().for_each(|(k, x)| {
                self.fix(k, fid, layout);
                self.fix(x, fid, layout);
            }),
            Node::Cons(c) => {
                self.fix(&mut c.0, fid, layout);
                self.fix(&mut c.1, fid, layout);
            }
            Node::Interp(parts) => {
                for p in parts {
                    if let InterpPart::Expr(e) = p {
                        self.fix(e, fid, layout);
                    }
                }
            }
            Node::If(i) => {
                self.fix(&mut i.recv, fid, layout);
                self.fix(&mut i.a, fid, layout);
                self.fix(&mut i.b, fid, layout);
            }
            Node::IfNil(i) => {
                self.fix(&mut i.recv, fid, layout);
                if let Some(b) = &mut i.if_nil {
                    self.fix(b, fid, layout);
                }
                if let Some((p, b)) = &mut i.if_not_nil {
                    if let Some(p) = p {
                        self.fix_ref(p, fid, layout);
                    }
                    self.fix(b, fid, layout);
                }
            }
            Node::While(w) => {
                self.fix(&mut w.cond, fid, layout);
                self.fix(&mut w.body, fid, layout);
            }
            Node::Repeat(b) | Node::Return(b) | Node::NlReturn(b) => self.fix(b, fid, layout),
            Node::ToDo(t) => {
                self.fix(&mut t.from, fid, layout);
                self.fix(&mut t.to, fid, layout);
                if let Some(b) = &mut t.by {
                    self.fix(b, fid, layout);
                }
                if let Some(v) = &mut t.var {
                    self.fix_ref(v, fid, layout);
                }
                self.fix(&mut t.body, fid, layout);
            }
            Node::Times(t) => {
                self.fix(&mut t.count, fid, layout);
                self.fix(&mut t.body, fid, layout);
            }
            Node::Match(m) => {
                self.fix(&mut m.recv, fid, layout);
                for a in &mut m.arms {
                    self.fix_pat(&mut a.pat, fid, layout);
                    if let Some(g) = &mut a.guard {
                        self.fix(g, fid, layout);
                    }
                    self.fix(&mut a.body, fid, layout);
                }
            }
            Node::Destructure(d) => {
                self.fix_pat(&mut d.0, fid, layout);
                self.fix(&mut d.1, fid, layout);
            }
            Node::InPlace(p) => {
                self.fix_ref(&mut p.var, fid, layout);
                p.args.iter_mut().for_each(|a| self.fix(a, fid, layout));
            }
        }
    }
}
