//! Argument checks: declared parameter types, protocol conformance, and
//! `spawnWith:` maps against the actor's `state:` slots.

use super::classtable::{Kind, MethodInfo, Side};
use super::infer::SendSite;
use super::infer::Walker;
use super::sends::target;
use super::types::{may_conform, Ty};
use super::wording::{a_an, did_you_mean};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Expr, ExprKind};

impl<'a> Walker<'a> {
    pub(crate) fn check_args(
        &mut self,
        s: &SendSite,
        class: &str,
        side: Side,
        m: &MethodInfo,
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
    /// the protocol requires (conformance is structural).
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
    /// typed slots.
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
                            .with_hint(format!("pass {} for #{key}", a_an(&st.to_string()))),
                        );
                    }
                }
                Some((_, None)) => {}
            }
        }
    }

    /// The type of an already-walked expression, recomputed without side effects for the cases
    /// that matter (literals, variables, self); Dynamic otherwise.
    pub(crate) fn literal_or_known_type(&self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Nil => Ty::Nil,
            ExprKind::True => Ty::inst("True"),
            ExprKind::False => Ty::inst("False"),
            ExprKind::Int(_) | ExprKind::BigInt(_) => Ty::inst("Integer"),
            ExprKind::Float(_) => Ty::inst("Float"),
            ExprKind::Str(_) | ExprKind::Interp(_) => Ty::inst("String"),
            ExprKind::Char(_) => Ty::inst("Character"),
            ExprKind::Symbol(s) => Ty::Sym(s.to_string()),
            ExprKind::Block(_) => Ty::inst("Block"),
            ExprKind::Var(n) => match self.scopes.lookup(n) {
                Some(i) => self.scopes.vars[i].ty.clone(),
                None if self.table.is_class(n) => Ty::Meta(n.to_string()),
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
}
