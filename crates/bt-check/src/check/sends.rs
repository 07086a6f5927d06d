//! Message sends: the inlined control-flow selectors (with narrowing), the DNU ladder,
//! argument checks, `spawnWith:` maps, return-type inference, and the process-boundary
//! and known-remote checks.

use super::classtable::{arity, Side};
use super::infer::{SendSite, Walker};
use super::syntactic::block_single_expr;
use super::types::Ty;
use super::wording::{did_you_mean, habit};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Block, Expr, ExprKind, Span};

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
    pub(crate) fn send_expr(
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
    pub(crate) fn check_send(&mut self, s: &SendSite) -> Ty {
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

    /// The DNU ladder for a single class receiver.
    fn dnu(&mut self, s: &SendSite, class: &str, side: Side) {
        // A message to the literal `nil` is written only to provoke the error on purpose.
        if self.is_library()
            || self.protected > 0
            || matches!(s.recv.kind, ExprKind::Nil)
            || self.table.understands(class, side, s.selector) != Some(false)
        {
            return;
        }
        // `self foo` (or `self class foo`) in a class whose subclasses implement `foo`
        // (template methods): the receiver may be an instance of any subclass.
        let self_like = match &s.recv.kind {
            ExprKind::SelfRef => true,
            ExprKind::Send {
                receiver, selector, ..
            } => selector == "class" && matches!(receiver.kind, ExprKind::SelfRef),
            _ => false,
        };
        if self_like {
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
        let hint = selector_hint(s.selector, &candidates, &shown)
            .unwrap_or_else(|| format!("{shown} and its superclasses define no `{}`", s.selector));
        // A literal receiver's class is certain: the send fails whenever it runs, which
        // `bt check` reports as an error (H0202; `bt run` still runs up to it).
        let literal = matches!(
            s.recv.kind,
            ExprKind::True
                | ExprKind::False
                | ExprKind::Int(_)
                | ExprKind::BigInt(_)
                | ExprKind::Float(_)
                | ExprKind::Str(_)
                | ExprKind::Interp(_)
                | ExprKind::Char(_)
                | ExprKind::Symbol(_)
                | ExprKind::List(_)
                | ExprKind::Array(_)
                | ExprKind::Dict(_)
        );
        self.push(
            Diagnostic::hint_diag(
                if literal { KNOWN_DNU } else { "H0201" },
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

/// Selectors and class names of other Smalltalks (Pharo, Squeak, GNU Smalltalk) that bt
/// spells differently: what to write in bt (the hint of an unknown selector or class name).
/// What to suggest for `sel`, which `shown` (a class, or `Foo class`) does not understand,
/// given the selectors it does: bt's spelling of another Smalltalk's habit, a selector of the
/// same arity within a small edit distance (`factorail` → `factorial`), or a keyword selector
/// with the same first keyword and another number of arguments (`bar:` → `bar:baz:`). The
/// checker's unknown-selector hint and the run-time report of `does_not_understand` both use it.
pub fn selector_hint(sel: &str, candidates: &[String], shown: &str) -> Option<String> {
    if let Some(h) = habit(sel) {
        return Some(format!("in bt: {h}"));
    }
    let n = arity(sel);
    // Binary selectors are one or two operator characters, so every other operator is
    // within edit distance 1: suggest only one that extends or shortens the selector
    // (`+` → `++`), never an unrelated one (`<` → `,`).
    let binary = !sel.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    // Nor a comparison for an arithmetic operator (`/` → `/=`) or the other way round.
    let comparison = |c: &str| matches!(c, "==" | "/=" | "=:=" | "=/=" | "<" | ">" | "<=" | ">=");
    let related = |c: &str| {
        !binary || ((c.starts_with(sel) || sel.starts_with(c)) && comparison(c) == comparison(sel))
    };
    let same_arity = did_you_mean(
        sel,
        candidates
            .iter()
            .map(String::as_str)
            .filter(|c| arity(c) == n && related(c)),
    );
    if let Some(sug) = same_arity {
        return Some(format!("did you mean `{sug}`?"));
    }
    // A keyword send with the wrong number of arguments: the selector that starts with (or
    // is started by) the same keywords.
    if !sel.ends_with(':') {
        return None;
    }
    let first = sel.split_inclusive(':').next().unwrap_or(sel);
    let mut found: Vec<&String> = candidates
        .iter()
        .filter(|c| arity(c) != n && c.ends_with(':') && c.starts_with(first))
        .collect();
    found.sort_by_key(|c| (c.len().abs_diff(sel.len()), c.as_str()));
    let c = found.first()?;
    let k = arity(c);
    Some(format!(
        "{shown} has `{c}`, which takes {k} argument{}; this send gives {n}",
        if k == 1 { "" } else { "s" }
    ))
}

/// The code of an unknown selector sent to a literal (its class is certain, so the send
/// fails whenever it runs): a hint where the program runs, an error for `bt check`.
pub const KNOWN_DNU: &str = "H0202";
