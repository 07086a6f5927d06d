//! Process boundaries and known-remote receivers: which arguments
//! cross to another process or node, and what their sendability tier says about it.

use super::classtable::Kind;
use super::infer::SendSite;
use super::infer::Walker;
use super::sendability::{tier, Tier};
use super::syntactic::read_names;
use super::types::{Hierarchy, Ty};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Block, Expr, ExprKind, Span};

impl<'a> Walker<'a> {
    // ---- process boundaries -----------------------------------------------------------------

    pub(crate) fn boundary_checks(&mut self, s: &SendSite) {
        if self.is_library() {
            return;
        }
        // A known-remote variable that still holds the spawn's or lookup's Result is not a
        // remote actor: `r ifOk: [...] ifError: [...]`, `r unwrapOr: x` are Result sends.
        let remote_recv = match &s.recv.kind {
            ExprKind::Var(n) => self.scopes.lookup(n).is_some_and(|i| {
                let v = &self.scopes.vars[i];
                v.remote && !is_result(&v.ty)
            }),
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
                // The state goes to another node only with `on:`; a `scope: #global` spawn
                // creates its actor here, so its state crosses a process boundary only.
                let remote = s.selector.ends_with("on:");
                match s.args.first().map(|a| &a.kind) {
                    Some(ExprKind::Dict(pairs)) => {
                        for (_, v) in pairs {
                            let t = self.literal_or_known_type(v);
                            if remote {
                                self.remote_arg(v, &t);
                            } else {
                                self.local_crossing(v, &t);
                            }
                        }
                    }
                    // A state Dictionary held in a variable: what its type says it holds.
                    Some(_) => {
                        if let (Some(a), Some(t)) = (s.args.first(), s.arg_tys.first()) {
                            if remote {
                                self.remote_arg(a, t);
                            } else {
                                self.local_crossing(a, t);
                            }
                        }
                    }
                    None => {}
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

/// Is `t` a Result type (what a remote spawn or lookup answers before `unwrap`)?
fn is_result(t: &Ty) -> bool {
    matches!(t, Ty::Inst(c, _) if c == "Result")
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
