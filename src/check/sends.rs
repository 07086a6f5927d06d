//! Message sends: the inlined control-flow selectors (with narrowing), the DNU ladder (4.4),
//! argument checks (4.5), `spawnWith:` maps, return-type inference, and the process-boundary
//! and known-remote checks (4.7, 4.8).

use super::classtable::{arity, Kind, Side};
use super::did_you_mean;
use super::infer::{block_single_expr, read_names, Walker};
use super::sendability::{tier, Tier};
use super::types::{may_conform, Hierarchy, Ty};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Block, Expr, ExprKind, Span};

/// One send as the checker sees it (receiver and arguments already walked).
pub struct SendSite<'e> {
    pub recv: &'e Expr,
    pub recv_ty: Ty,
    pub selector: &'e str,
    pub sel_span: Span,
    pub args: &'e [Expr],
    pub arg_tys: Vec<Ty>,
    pub span: Span,
}

fn lit_block(e: &Expr) -> Option<&Block> {
    match &e.kind {
        ExprKind::Block(b) => Some(b),
        _ => None,
    }
}

fn lit_block0(e: &Expr) -> Option<&Block> {
    lit_block(e).filter(|b| b.params.is_empty())
}

const ARITH: &[&str] = &[
    "+", "-", "*", "%", "//", "\\\\", "rem:", "div:", "quo:", "gcd:", "lcm:",
];

impl<'a> Walker<'a> {
    /// A send expression: control flow first, then the generic path.
    pub fn send_expr(
        &mut self,
        e: &Expr,
        receiver: &Expr,
        selector: &str,
        sel_span: Span,
        args: &[Expr],
    ) -> Ty {
        match (selector, args) {
            ("ifTrue:" | "ifFalse:", [b]) if lit_block0(b).is_some() => {
                let b = lit_block0(b).unwrap_or_else(|| unreachable_block());
                self.expr(receiver);
                let facts = self.facts(receiver);
                let (inside, after) = if selector == "ifTrue:" {
                    (facts.when_true, facts.when_false)
                } else {
                    (facts.when_false, facts.when_true)
                };
                self.scopes.begin_branch();
                self.apply(&inside);
                let t = self.inline_block(b, &[]);
                self.scopes.end_branch();
                if t == Ty::Never {
                    self.apply(&after);
                }
                Ty::Dynamic
            }
            ("ifTrue:ifFalse:" | "ifFalse:ifTrue:", [b1, b2])
                if lit_block0(b1).is_some() && lit_block0(b2).is_some() =>
            {
                let (b1, b2) = (
                    lit_block0(b1).unwrap_or_else(|| unreachable_block()),
                    lit_block0(b2).unwrap_or_else(|| unreachable_block()),
                );
                self.expr(receiver);
                let facts = self.facts(receiver);
                let (f1, f2) = if selector == "ifTrue:ifFalse:" {
                    (facts.when_true, facts.when_false)
                } else {
                    (facts.when_false, facts.when_true)
                };
                self.scopes.begin_branch();
                self.apply(&f1);
                let t1 = self.inline_block(b1, &[]);
                self.scopes.end_branch();
                self.scopes.begin_branch();
                self.apply(&f2);
                let t2 = self.inline_block(b2, &[]);
                self.scopes.end_branch();
                if t1 == Ty::Never && t2 != Ty::Never {
                    self.apply(&f2);
                } else if t2 == Ty::Never && t1 != Ty::Never {
                    self.apply(&f1);
                }
                Ty::union(vec![t1, t2])
            }
            ("and:" | "or:", [b]) if lit_block0(b).is_some() => {
                let b = lit_block0(b).unwrap_or_else(|| unreachable_block());
                let rt = self.expr(receiver);
                let facts = self.facts(receiver);
                let inside = if selector == "and:" {
                    facts.when_true
                } else {
                    facts.when_false
                };
                self.scopes.begin_branch();
                self.apply(&inside);
                self.inline_block(b, &[]);
                self.scopes.end_branch();
                if is_boolean(&rt) {
                    Ty::inst("Boolean")
                } else {
                    Ty::Dynamic
                }
            }
            ("ifNil:" | "ifNotNil:" | "ifNil:ifNotNil:" | "ifNotNil:ifNil:", _)
                if !args.is_empty() && args.iter().all(|a| lit_block(a).is_some()) =>
            {
                let rt = self.expr(receiver);
                let var = match &receiver.kind {
                    ExprKind::Var(n) => self.scopes.lookup(n),
                    _ => None,
                };
                let non_nil = rt.without_nil();
                let parts: Vec<&str> = selector.split_inclusive(':').collect();
                let mut tys = Vec::new();
                let mut nil_branch_diverges = false;
                for (p, a) in parts.iter().zip(args) {
                    let b = lit_block(a).unwrap_or_else(|| unreachable_block());
                    self.scopes.begin_branch();
                    let t = if *p == "ifNotNil:" {
                        if let Some(idx) = var {
                            self.apply(&[(idx, non_nil.clone())]);
                        }
                        self.inline_block(b, std::slice::from_ref(&non_nil))
                    } else {
                        if let Some(idx) = var {
                            self.apply(&[(idx, Ty::Nil)]);
                        }
                        let t = self.inline_block(b, &[]);
                        nil_branch_diverges = t == Ty::Never;
                        t
                    };
                    self.scopes.end_branch();
                    tys.push(t);
                }
                if nil_branch_diverges {
                    if let Some(idx) = var {
                        self.apply(&[(idx, non_nil.clone())]);
                    }
                }
                match selector {
                    "ifNil:" => Ty::union(vec![non_nil, tys.pop().unwrap_or(Ty::Dynamic)]),
                    "ifNotNil:" => Ty::union(vec![tys.pop().unwrap_or(Ty::Dynamic), Ty::Nil]),
                    _ => Ty::union(tys),
                }
            }
            ("whileTrue:" | "whileFalse:" | "whileTrue" | "whileFalse", _)
                if lit_block0(receiver).is_some() =>
            {
                let rb = lit_block0(receiver).unwrap_or_else(|| unreachable_block());
                self.forget_assigned(&rb.body);
                let body = args.first().and_then(lit_block0);
                if let Some(b) = body {
                    self.forget_assigned(&b.body);
                }
                self.scopes.begin_branch();
                self.inline_block(rb, &[]);
                let facts = block_single_expr(receiver)
                    .map(|c| self.facts(c))
                    .unwrap_or_default();
                match (body, args.first()) {
                    (Some(b), _) => {
                        self.scopes.begin_branch();
                        self.apply(if selector == "whileTrue:" {
                            &facts.when_true
                        } else {
                            &facts.when_false
                        });
                        self.inline_block(b, &[]);
                        self.scopes.end_branch();
                    }
                    (None, Some(a)) => {
                        self.expr(a);
                    }
                    _ => {}
                }
                self.scopes.end_branch();
                Ty::Nil
            }
            ("timesRepeat:", [b]) if lit_block0(b).is_some() => {
                let b = lit_block0(b).unwrap_or_else(|| unreachable_block());
                let rt = self.expr(receiver);
                self.forget_assigned(&b.body);
                self.scopes.begin_branch();
                self.inline_block(b, &[]);
                self.scopes.end_branch();
                self.dnu_only(receiver, &rt, selector, sel_span);
                Ty::Nil
            }
            ("to:do:" | "to:by:do:", _) if args.last().and_then(lit_block).is_some() => {
                let b = args
                    .last()
                    .and_then(lit_block)
                    .unwrap_or_else(|| unreachable_block());
                let rt = self.expr(receiver);
                let mut idx_ty = if is_integer(&rt) {
                    Ty::inst("Integer")
                } else {
                    Ty::Dynamic
                };
                for a in &args[..args.len() - 1] {
                    let t = self.expr(a);
                    if !is_integer(&t) {
                        idx_ty = Ty::Dynamic;
                    }
                }
                self.forget_assigned(&b.body);
                self.scopes.begin_branch();
                self.inline_block(b, &[idx_ty]);
                self.scopes.end_branch();
                self.dnu_only(receiver, &rt, selector, sel_span);
                Ty::Nil
            }
            ("ifOk:ifError:", [ok, err]) => {
                let rt = self.expr(receiver);
                let remote = self.is_remote_expr(receiver);
                let (tv, te) = match &rt {
                    Ty::Inst(n, a) if n == "Result" && a.len() == 2 => (a[0].clone(), a[1].clone()),
                    _ => (Ty::Dynamic, Ty::Dynamic),
                };
                let mut arg_tys = Vec::new();
                for (a, (t, r)) in [(ok, (tv, remote)), (err, (te, false))] {
                    if let Some(b) = lit_block(a) {
                        self.closure(b, &[(t, r)], r);
                        arg_tys.push(Ty::inst("Block"));
                    } else {
                        arg_tys.push(self.expr(a));
                    }
                }
                self.check_send(&SendSite {
                    recv: receiver,
                    recv_ty: rt,
                    selector,
                    sel_span,
                    args,
                    arg_tys,
                    span: e.span,
                })
            }
            _ => {
                // Code that deliberately provokes an error is not graded for DNU.
                let protect_recv = matches!(selector, "on:do:" | "ensure:" | "ifCurtailed:")
                    && lit_block(receiver).is_some();
                let protect_arg0 = matches!(
                    selector,
                    "should:raise:" | "should:raise:description:" | "shouldnt:raise:" | "tryDo:"
                ) && args.first().and_then(lit_block).is_some();
                self.protected += usize::from(protect_recv);
                let recv_ty = self.expr(receiver);
                self.protected -= usize::from(protect_recv);
                let mut arg_tys: Vec<Ty> = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    let protect = protect_arg0 && i == 0;
                    self.protected += usize::from(protect);
                    arg_tys.push(self.expr(a));
                    self.protected -= usize::from(protect);
                }
                self.check_send(&SendSite {
                    recv: receiver,
                    recv_ty,
                    selector,
                    sel_span,
                    args,
                    arg_tys,
                    span: e.span,
                })
            }
        }
    }

    /// Grades only whether the receiver understands the selector (for the inlined loops).
    fn dnu_only(&mut self, recv: &Expr, rt: &Ty, selector: &str, sel_span: Span) {
        let site = SendSite {
            recv,
            recv_ty: rt.clone(),
            selector,
            sel_span,
            args: &[],
            arg_tys: Vec::new(),
            span: sel_span,
        };
        if let Some((class, side)) = target(rt) {
            if self.table.is_class(&class) && self.table.lookup(&class, side, selector).is_none() {
                self.dnu(&site, &class, side);
            }
        }
    }

    /// The generic send: boundary checks, lookup, DNU ladder, argument checks, return type.
    pub fn check_send(&mut self, s: &SendSite) -> Ty {
        self.boundary_checks(s);
        let is_super = matches!(s.recv.kind, ExprKind::Super);
        if is_super
            && s.selector == "initialize"
            && self.ctx.selector.as_deref() == Some("initialize")
            && !self.ctx.class_side
            && !self.is_library()
        {
            self.push(
                Diagnostic::warning(
                    "W0401",
                    "inheritance",
                    "`super initialize` inside `initialize`",
                    s.span,
                )
                .with_label("the superclass's initialize already runs")
                .with_hint(
                    "spawn runs `initialize` for every class in the chain, parent first; remove this send so it does not run twice",
                ),
            );
        }
        let recv_ty = s.recv_ty.clone();
        if let Ty::Union(ms) = &recv_ty {
            return self.union_send(s, ms);
        }
        let Some((class, side)) = target(&recv_ty) else {
            return Ty::Dynamic;
        };
        if !self.table.is_class(&class) {
            return Ty::Dynamic;
        }
        let lookup_class = if is_super {
            match self.table.get(&class).and_then(|c| c.superclass.clone()) {
                Some(sc) => sc,
                None => return Ty::Dynamic,
            }
        } else {
            class.clone()
        };
        let self_inst = match &recv_ty {
            Ty::Meta(c) => Ty::inst(c),
            Ty::Nil => Ty::Nil,
            Ty::Sym(_) => Ty::inst("Symbol"),
            other => other.clone(),
        };
        let found = self
            .table
            .lookup(&lookup_class, side, s.selector)
            .map(|(m, owner)| (m.clone(), owner.to_string()));
        match found {
            Some((m, owner)) => {
                if m.internal && m.origin.is_library() && !self.is_library() {
                    self.push(
                        Diagnostic::error(
                            "E0501",
                            format!("'{}' of {owner} is internal to its package", s.selector),
                            s.sel_span,
                        )
                        .with_hint(
                            "internal methods may be sent only from code of the same package",
                        ),
                    );
                }
                self.check_args(s, &class, side, &m, &owner, &self_inst);
                self.return_type(s, &class, side, m.ret.as_ref(), &self_inst)
            }
            None => {
                if !is_super {
                    self.dnu(s, &class, side);
                }
                self.return_type(s, &class, side, None, &self_inst)
            }
        }
    }

    fn check_args(
        &mut self,
        s: &SendSite,
        class: &str,
        side: Side,
        m: &super::classtable::MethodInfo,
        owner: &str,
        self_inst: &Ty,
    ) {
        let (params, library) = (&m.params, m.origin.is_library());
        if self.is_library() {
            return;
        }
        for (i, (pt, at)) in params.iter().zip(&s.arg_tys).enumerate() {
            if matches!(pt, Ty::SelfTy | Ty::Dynamic) {
                continue;
            }
            let pt = pt.subst_self(self_inst);
            if let Ty::Protocol(proto) = &pt {
                self.check_protocol_arg(s, i, (class, side), proto, at);
                continue;
            }
            if may_conform(at, &pt, self.table) {
                continue;
            }
            // The built-in library's text primitives take a Character wherever they take a
            // String.
            let string = Ty::inst("String");
            if library
                && pt.members().contains(&&string)
                && may_conform(at, &Ty::inst("Character"), self.table)
            {
                continue;
            }
            let arg = &s.args[i];
            let recv = match side {
                Side::Class => format!("{class} class"),
                Side::Instance => class.to_string(),
            };
            let msg = format!(
                "Argument {} of '{}' on {recv} expects {pt}, got {}",
                i + 1,
                s.selector,
                self.shown_type(at, arg)
            );
            let hint = if class == "ProcessNavigation" && s.selector.starts_with("from:") && i == 0
            {
                "pass a live supervisor handle (e.g. `(App supervise) unwrap`) or a Pid (`handle pid`); anything else answers `Result error:` with kind type_error".to_string()
            } else {
                format!(
                    "'{}' is declared in {owner} with this parameter of type {pt}",
                    s.selector
                )
            };
            self.push(
                Diagnostic::warning("W0101", "type", msg, arg.span)
                    .with_label(format!("expected {pt}"))
                    .with_hint(hint),
            );
        }
        if side == Side::Class && s.selector.starts_with("spawnWith:") {
            self.check_spawn_map(s, class);
        }
    }

    /// An argument for a protocol-typed parameter: its class must understand every selector
    /// the protocol requires (conformance is structural, 3.4).
    fn check_protocol_arg(
        &mut self,
        s: &SendSite,
        i: usize,
        recv: (&str, Side),
        proto: &str,
        at: &Ty,
    ) {
        let Some((arg_class, Side::Instance)) = target(at) else {
            return;
        };
        let Some(missing) = self.table.protocol_missing(&arg_class, proto) else {
            return;
        };
        let arg = &s.args[i];
        let recv = match recv.1 {
            Side::Class => format!("{} class", recv.0),
            Side::Instance => recv.0.to_string(),
        };
        let msg = format!(
            "Argument {} of '{}' on {recv} expects {proto}, got {}",
            i + 1,
            s.selector,
            self.shown_type(at, arg)
        );
        self.push(
            Diagnostic::warning("W0101", "type", msg, arg.span)
                .with_label(format!("expected {proto}"))
                .with_hint(format!(
                    "{arg_class} does not understand `{missing}`, which {proto} requires"
                )),
        );
    }

    /// `spawnWith:` given a Dictionary literal: keys against `state:` slots, values against
    /// typed slots (4.4).
    fn check_spawn_map(&mut self, s: &SendSite, class: &str) {
        let Some(ExprKind::Dict(pairs)) = s.args.first().map(|a| &a.kind) else {
            return;
        };
        if self.table.kind_of(class) != Some(Kind::Actor) || !self.table.chain_known(class) {
            return;
        }
        let slots: Vec<(String, Option<Ty>)> = self
            .table
            .all_slots(class)
            .into_iter()
            .map(|sl| (sl.name.clone(), sl.ty.clone()))
            .collect();
        for (k, v) in pairs {
            let key = match &k.kind {
                ExprKind::Symbol(x) | ExprKind::Str(x) => x.clone(),
                _ => continue,
            };
            match slots.iter().find(|(n, _)| *n == key) {
                None => {
                    let hint = match did_you_mean(&key, slots.iter().map(|(n, _)| n.as_str())) {
                        Some(sug) => format!("did you mean #{sug}?"),
                        None if slots.is_empty() => format!("{class} declares no state slots"),
                        None => format!(
                            "state slots of {class}: {}",
                            slots
                                .iter()
                                .map(|(n, _)| format!("#{n}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    self.push(
                        Diagnostic::warning(
                            "W0103",
                            "type",
                            format!("`spawnWith:` key #{key} names no state slot of {class}"),
                            k.span,
                        )
                        .with_label("ignored at run time")
                        .with_hint(hint),
                    );
                }
                Some((_, Some(st))) => {
                    let vt = self.literal_or_known_type(v);
                    if !may_conform(&vt, st, self.table) {
                        let shown = self.shown_type(&vt, v);
                        self.push(
                            Diagnostic::warning(
                                "W0102",
                                "type",
                                format!(
                                    "`spawnWith:` value for #{key} conflicts with `state: {key} :: {st}` of {class}: got {shown}"
                                ),
                                v.span,
                            )
                            .with_label(format!("expected {st}"))
                            .with_hint(format!("pass {} for #{key}", super::infer::a_an(&st.to_string()))),
                        );
                    }
                }
                Some((_, None)) => {}
            }
        }
    }

    /// The type of an already-walked expression, recomputed without side effects for the cases
    /// that matter (literals, variables, self); Dynamic otherwise.
    pub fn literal_or_known_type(&self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Nil => Ty::Nil,
            ExprKind::True => Ty::inst("True"),
            ExprKind::False => Ty::inst("False"),
            ExprKind::Int(_) | ExprKind::BigInt(_) => Ty::inst("Integer"),
            ExprKind::Float(_) => Ty::inst("Float"),
            ExprKind::Str(_) | ExprKind::Interp(_) => Ty::inst("String"),
            ExprKind::Char(_) => Ty::inst("Character"),
            ExprKind::Symbol(s) => Ty::Sym(s.clone()),
            ExprKind::Block(_) => Ty::inst("Block"),
            ExprKind::Var(n) => match self.scopes.lookup(n) {
                Some(i) => self.scopes.vars[i].ty.clone(),
                None if self.table.is_class(n) => Ty::Meta(n.clone()),
                None => Ty::Dynamic,
            },
            ExprKind::SelfRef => self.self_type(),
            ExprKind::List(xs) if xs.is_empty() => Ty::inst("List"),
            ExprKind::List(xs) => Ty::Inst(
                "List".into(),
                vec![Ty::union(
                    xs.iter().map(|x| self.literal_or_known_type(x)).collect(),
                )],
            ),
            _ => Ty::Dynamic,
        }
    }

    /// The DNU ladder for a single class receiver.
    fn dnu(&mut self, s: &SendSite, class: &str, side: Side) {
        if self.is_library()
            || self.protected > 0
            || self.table.understands(class, side, s.selector) != Some(false)
        {
            return;
        }
        // `self foo` in a class whose subclasses implement `foo` (template methods).
        if matches!(s.recv.kind, ExprKind::SelfRef) {
            let descendants: Vec<String> = self
                .table
                .descendants(class)
                .iter()
                .map(|c| c.name.clone())
                .collect();
            if descendants
                .iter()
                .any(|d| self.table.understands(d, side, s.selector) != Some(false))
            {
                return;
            }
        }
        let shown = match side {
            Side::Class => format!("{class} class"),
            Side::Instance => class.to_string(),
        };
        let candidates = self.table.all_selectors(class, side);
        let n = arity(s.selector);
        let suggestion = did_you_mean(
            s.selector,
            candidates
                .iter()
                .map(String::as_str)
                .filter(|c| arity(c) == n),
        );
        let hint = match suggestion {
            Some(sug) => format!("did you mean `{sug}`?"),
            None => format!("{shown} and its superclasses define no `{}`", s.selector),
        };
        self.push(
            Diagnostic::hint_diag(
                "H0201",
                "dnu",
                format!("`{shown}` does not understand `{}`", s.selector),
                s.sel_span,
            )
            .with_label("unknown selector")
            .with_hint(hint),
        );
    }

    fn union_send(&mut self, s: &SendSite, ms: &[Ty]) -> Ty {
        let mut rets = Vec::new();
        let mut all_no = true;
        for m in ms {
            let Some((class, side)) = target(m) else {
                return Ty::Dynamic;
            };
            if !self.table.is_class(&class) {
                return Ty::Dynamic;
            }
            if self.table.understands(&class, side, s.selector) != Some(false) {
                all_no = false;
            }
            let ret = self
                .table
                .lookup(&class, side, s.selector)
                .and_then(|(mi, _)| mi.ret.clone())
                .map(|r| r.subst_self(m));
            rets.push(ret);
        }
        if all_no && !self.is_library() && self.protected == 0 {
            let shown = Ty::Union(ms.to_vec());
            self.push(
                Diagnostic::warning(
                    "W0201",
                    "dnu",
                    format!("No member of `{shown}` understands `{}`", s.selector),
                    s.sel_span,
                )
                .with_label("unknown selector for every member")
                .with_hint("narrow the value first (e.g. `isKindOf:` or a nil test), or check the selector"),
            );
            return Ty::Dynamic;
        }
        if rets.iter().all(Option::is_some) {
            Ty::union(rets.into_iter().flatten().collect())
        } else {
            Ty::Dynamic
        }
    }

    fn return_type(
        &mut self,
        s: &SendSite,
        class: &str,
        side: Side,
        ret: Option<&Ty>,
        self_inst: &Ty,
    ) -> Ty {
        match (side, s.selector) {
            (Side::Instance, "class") => return Ty::Meta(class.to_string()),
            (Side::Instance, "yourself") => return s.recv_ty.clone(),
            (Side::Class, "new" | "new:") if ret.is_none() => return Ty::inst(class),
            _ => {}
        }
        if side == Side::Instance && class == "Result" {
            if let Ty::Inst(_, a) = &s.recv_ty {
                if a.len() == 2 && matches!(s.selector, "unwrap" | "value") {
                    return a[0].clone();
                }
            }
        }
        if side == Side::Instance && ARITH.contains(&s.selector) && s.arg_tys.len() == 1 {
            let (r, a) = (&s.recv_ty, &s.arg_tys[0]);
            if is_integer(r) && is_integer(a) {
                return Ty::inst("Integer");
            }
            if matches!(s.selector, "+" | "-" | "*")
                && (is_float(r) && (is_float(a) || is_integer(a)) || is_integer(r) && is_float(a))
            {
                return Ty::inst("Float");
            }
            return Ty::Dynamic;
        }
        match ret {
            Some(t) => t.subst_self(self_inst),
            None => Ty::Dynamic,
        }
    }

    // ---- process boundaries -----------------------------------------------------------------

    fn boundary_checks(&mut self, s: &SendSite) {
        if self.is_library() {
            return;
        }
        let remote_recv = match &s.recv.kind {
            ExprKind::Var(n) => self
                .scopes
                .lookup(n)
                .is_some_and(|i| self.scopes.vars[i].remote),
            _ => false,
        };
        if remote_recv {
            for (a, t) in s.args.iter().zip(&s.arg_tys) {
                self.remote_arg(a, t);
            }
            return;
        }
        match &s.recv_ty {
            Ty::Meta(c) if s.selector.starts_with("spawnWith:") => {
                let global = s.selector.contains("scope:")
                    && s.args
                        .last()
                        .is_some_and(|a| matches!(&a.kind, ExprKind::Symbol(x) if x == "global"));
                let remote = s.selector.ends_with("on:") || global;
                if let Some(ExprKind::Dict(pairs)) = s.args.first().map(|a| &a.kind) {
                    for (_, v) in pairs {
                        let t = self.literal_or_known_type(v);
                        if remote {
                            self.remote_arg(v, &t);
                        } else {
                            self.local_crossing(v, &t);
                        }
                    }
                }
                let _ = c;
            }
            Ty::Meta(c) if c == "Timer" && matches!(s.selector, "after:do:" | "every:do:") => {
                if let (Some(a), Some(t)) = (s.args.get(1), s.arg_tys.get(1)) {
                    self.local_crossing(a, t);
                }
            }
            Ty::Meta(c) if c == "Parallel" => {
                if let Some(ExprKind::List(xs)) = s.args.first().map(|a| &a.kind) {
                    for x in xs {
                        let t = self.literal_or_known_type(x);
                        self.local_crossing(x, &t);
                    }
                }
            }
            Ty::Inst(c, _) => {
                let is_self = matches!(s.recv.kind, ExprKind::SelfRef | ExprKind::Super);
                let actor = self.table.kind_of(c) == Some(Kind::Actor);
                let announcer = self.table.inherits(c, "Announcer") == Some(true)
                    && matches!(
                        s.selector,
                        "announce:" | "announceAndWait:" | "announceAndWait:timeout:"
                    );
                if actor && !is_self {
                    for (a, t) in s.args.iter().zip(&s.arg_tys) {
                        self.local_crossing(a, t);
                    }
                } else if announcer {
                    if let (Some(a), Some(t)) = (s.args.first(), s.arg_tys.first()) {
                        self.local_crossing(a, t);
                    }
                }
            }
            _ => {}
        }
    }

    /// W0501 for a process-bound value (or a block capturing one) crossing to another process.
    fn local_crossing(&mut self, arg: &Expr, t: &Ty) {
        if let ExprKind::Block(b) = &arg.kind {
            for (name, span, ct) in self.captured(b) {
                if tier(self.table, &ct) == Tier::Process {
                    self.push(process_bound(&name, &ct, span));
                }
            }
            return;
        }
        if tier(self.table, t) == Tier::Process {
            let text = self.text(arg.span).trim().to_string();
            self.push(process_bound(&text, t, arg.span));
        }
    }

    /// The checks of 4.8 for an argument sent to a known-remote receiver.
    fn remote_arg(&mut self, arg: &Expr, t: &Ty) {
        let is_block =
            matches!(arg.kind, ExprKind::Block(_)) || matches!(t, Ty::Inst(n, _) if n == "Block");
        if is_block {
            self.push(
                Diagnostic::hint_diag(
                    "H0501",
                    "sendability",
                    "block sent to a remote actor; it fails with remote_code_mismatch if the receiving node runs different code",
                    arg.span,
                )
                .with_label("this block crosses to another node")
                .with_hint("send data and let the remote actor run its own code, or load the same code on both nodes"),
            );
            return;
        }
        let text = self.text(arg.span).trim().to_string();
        match tier(self.table, t) {
            Tier::Node => self.push(
                Diagnostic::warning(
                    "W0502",
                    "sendability",
                    format!(
                        "`{text}` ({t} — node-bound handle) sent to a remote actor; it will be rejected at run time (not_serialisable)"
                    ),
                    arg.span,
                )
                .with_label("node-bound")
                .with_hint("node-bound handles cannot leave their node; send the data they hold instead"),
            ),
            Tier::Process => self.push(process_bound(&text, t, arg.span)),
            _ => {}
        }
    }

    /// Variables (and `self`) a block literal captures, with their current types.
    fn captured(&self, b: &Block) -> Vec<(String, Span, Ty)> {
        let mut reads = Vec::new();
        for st in &b.body {
            if let crate::syntax::ast::StmtKind::Expr(x) | crate::syntax::ast::StmtKind::Cast(x) =
                &st.kind
            {
                read_names(x, &mut reads);
            }
        }
        let own: Vec<&str> = b.params.iter().map(|p| p.name.name.as_str()).collect();
        let mut out: Vec<(String, Span, Ty)> = Vec::new();
        for (name, span) in reads {
            if own.contains(&name.as_str()) || out.iter().any(|(n, _, _)| *n == name) {
                continue;
            }
            let ty = if name == "self" {
                self.self_type()
            } else {
                match self.scopes.lookup(&name) {
                    Some(i) => self.scopes.vars[i].ty.clone(),
                    None => continue,
                }
            };
            out.push((name, span, ty));
        }
        out
    }
}

fn process_bound(text: &str, t: &Ty, span: Span) -> Diagnostic {
    Diagnostic::warning(
        "W0501",
        "sendability",
        format!("`{text}` ({t} — process-bound handle) crosses a process boundary"),
        span,
    )
    .with_label("process-bound")
    .with_hint("a `handleScope: #process` value is valid only in the process that created it; pass the data it holds instead")
}

/// The class and side a receiver type sends to.
pub fn target(t: &Ty) -> Option<(String, Side)> {
    match t {
        Ty::Inst(c, _) => Some((c.clone(), Side::Instance)),
        Ty::Nil => Some(("UndefinedObject".into(), Side::Instance)),
        Ty::Sym(_) => Some(("Symbol".into(), Side::Instance)),
        Ty::Meta(c) => Some((c.clone(), Side::Class)),
        _ => None,
    }
}

fn is_integer(t: &Ty) -> bool {
    matches!(t, Ty::Inst(n, _) if n == "Integer" || n == "Character")
}

fn is_float(t: &Ty) -> bool {
    matches!(t, Ty::Inst(n, _) if n == "Float")
}

fn is_boolean(t: &Ty) -> bool {
    t.members()
        .iter()
        .all(|m| matches!(m, Ty::Inst(n, _) if n == "Boolean" || n == "True" || n == "False"))
}

/// Never called: the guards above established that the argument is a literal block.
fn unreachable_block() -> &'static Block {
    static EMPTY: std::sync::OnceLock<Block> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Block {
        params: Vec::new(),
        body: Vec::new(),
    })
}
